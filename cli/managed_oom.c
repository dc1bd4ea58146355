// SPDX-License-Identifier: GPL-2.0
/*
 * oomctl units: the units' own ManagedOOMMemoryPressure=kill, enforced
 * by the kernel.
 *
 * PID 1 tells one subscriber which of its active units ask for kills on
 * memory pressure, over its varlink interface io.systemd.ManagedOOM, and
 * tells it again each time such a unit starts or stops. That subscriber must
 * be a process of systemd-oomd.service: this command runs there in
 * systemd-oomd's place (packaging/managed-oom.conf). User managers tell
 * their units to the same service, on the socket systemd-oomd.socket passes
 * it (io.systemd.oom); a user's unit counts only where its cgroup is that
 * user's. For each unit with
 * ManagedOOMMemoryPressure=kill this writes two lines of oomctl.conf(5) into
 * MANAGED_DROPIN and applies the whole configuration:
 *
 *   policy attach oomd scope CGROUP name oomd-HASH
 *   psi add CGROUP full STALL WINDOW pause 15s
 *
 * The trigger's handler declares an OOM in the unit's cgroup when its tasks
 * stall, and the oomd policy attached there kills the unit below it that
 * thrashes. Both run in the kernel: this process only follows the units as
 * they come and go, and no kill waits for it.
 *
 * systemd-oomd's rule is "full avg10 above LIMIT for DURATION". A PSI
 * trigger fires on full stall of at least STALL within a moving WINDOW, so
 * WINDOW = DURATION (the kernel allows 500ms to 10s, clamped) and
 * STALL = LIMIT x WINDOW. LIMIT and DURATION come from the unit, or from
 * oomd.conf's DefaultMemoryPressureLimit= and
 * DefaultMemoryPressureDurationSec=, read as systemd-oomd reads them.
 * After a kill systemd-oomd waits 15 s before it acts on pressure again
 * (POST_ACTION_DELAY); the trigger's handler pauses as long.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <json-c/json.h>

#include "config.h"
#include "kernel.h"
#include "main.h"

#define MANAGED_OOM_SOCKET	"/run/systemd/io.system.ManagedOOM"
#define MANAGED_DROPIN_DIR	"/run/oomctl/oomctl.conf.d"
#define MANAGED_DROPIN		MANAGED_DROPIN_DIR "/50-managed-oom.conf"
#define OOMD_CONF		"/etc/systemd/oomd.conf"
#define OOMD_CONF_DROPINS	"systemd/oomd.conf.d"

/* systemd-oomd's compiled-in defaults (oomd.conf(5)) */
#define OOMD_DEFAULT_LIMIT_PERMYRIAD	6000
#define OOMD_DEFAULT_DURATION_US	(30ULL * 1000000)
/* The kernel's bounds on a trigger's window */
#define WINDOW_MIN_US			500000ULL
#define WINDOW_MAX_US			10000000ULL
/* A varlink message: far more than PID 1's list of units needs */
#define MESSAGE_MAX			(1 << 20)

/*
 * A user's units beyond user_units_max (`units user-units N`, default
 * USER_UNITS_DEFAULT) are refused, and all users' beyond USERS_UNITS_MAX:
 * each costs a BPF object, and apply takes at most CONF_POLICIES_MAX
 * policies, PID 1's among them
 */
#define USER_UNITS_DEFAULT		16
#define USERS_UNITS_MAX			128
static unsigned int user_units_max = USER_UNITS_DEFAULT;

/* Who said an entry: PID 1, or the user manager of uid REPORTER - 1 */
#define REPORTER_PID1			0ULL
#define REPORTER_OF(uid)		((uint64_t)(uid) + 1)
#define REPORTER_ANY_USER		UINT64_MAX

/*
 * What one manager said of one cgroup. PID 1 and the user owning the
 * cgroup keep an entry each, so that neither undoes the other's: a user
 * cannot take away a kill that PID 1 asked for on a cgroup the user owns
 * (user@.service's), by saying "auto" for it.
 */
struct unit_cgroup {
	char path[PATH_MAX];
	uint64_t reporter;		/* REPORTER_PID1 or REPORTER_OF(uid) */
	bool pressure_kill;		/* ManagedOOMMemoryPressure=kill */
	uint32_t limit;			/* its limit, 2^32-1 = 100%; 0: default */
	uint64_t duration_us;		/* 0: default */
	bool swap_kill;			/* ManagedOOMSwap=kill: refused */
	bool swap_told;
	bool name_told;			/* its policy name clashed, said so */
};

static struct unit_cgroup *units;
static int nunits;
static int messages_taken;
static uint32_t default_limit_permyriad = OOMD_DEFAULT_LIMIT_PERMYRIAD;
static uint64_t default_duration_us = OOMD_DEFAULT_DURATION_US;

static int do_help(void)
{
	FILE *f = json_output ? stderr : stdout;

	fprintf(f,
		"Usage: %1$s units [user-units N]\n"
		"       %1$s units help\n"
		"\n"
		"       Follow PID 1's units with ManagedOOMMemoryPressure=kill, in\n"
		"       systemd-oomd's place (as systemd-oomd.service), through\n"
		"       " MANAGED_DROPIN "\n"
		"       and users' units, N a user (default %2$d, at most %3$d)\n"
		"       " HELP_SPEC_OPTIONS "\n", bin_name, USER_UNITS_DEFAULT,
		USERS_UNITS_MAX);
	return OOMCTL_EXIT_OK;
}

/* "60%", "12.5%", "0.01%": permyriad, as systemd's parse_permyriad() */
static int parse_percent(const char *s, uint32_t *permyriad)
{
	unsigned int whole = 0, frac = 0, digits = 0;
	const char *p = s;

	if (*p < '0' || *p > '9')
		return -EINVAL;
	for (; *p >= '0' && *p <= '9' && whole <= 100; p++)
		whole = whole * 10 + (*p - '0');
	if (*p == '.')
		for (p++; *p >= '0' && *p <= '9' && digits < 2; p++, digits++)
			frac = frac * 10 + (*p - '0');
	if (digits == 1)
		frac *= 10;
	if (strcmp(p, "%") || whole * 100 + frac > 10000)
		return -EINVAL;
	*permyriad = whole * 100 + frac;
	return 0;
}

/* A systemd time span: a bare number is seconds, or a number with a unit */
static int parse_sec(const char *s, uint64_t *usec)
{
	uint64_t v;

	if (!parse_u64(s, 0, UINT64_MAX / 1000000, &v)) {
		*usec = v * 1000000;
		return 0;
	}
	return parse_duration(s, usec);
}

static char *trim(char *s)
{
	char *end;

	while (*s == ' ' || *s == '\t')
		s++;
	end = s + strlen(s);
	while (end > s && strchr(" \t\r\n", end[-1]))
		*--end = '\0';
	return s;
}

/* One oomd.conf file: its [OOM] section's two defaults we use */
static void oomd_conf_file(const char *path)
{
	char line[512], *key, *val;
	bool in_oom = false;
	FILE *f = fopen(path, "re");
	int n = 0;

	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		n++;
		key = trim(line);
		if (*key == '[') {
			in_oom = !strcmp(key, "[OOM]");
			continue;
		}
		if (!in_oom || !*key || *key == '#' || *key == ';' ||
		    !(val = strchr(key, '=')))
			continue;
		*val++ = '\0';
		key = trim(key);
		val = trim(val);
		if (!strcmp(key, "DefaultMemoryPressureLimit")) {
			if (parse_percent(val, &default_limit_permyriad))
				p_info("%s:%d: ignoring DefaultMemoryPressureLimit=%s, not a percentage",
				       path, n, val);
		} else if (!strcmp(key, "DefaultMemoryPressureDurationSec")) {
			if (parse_sec(val, &default_duration_us))
				p_info("%s:%d: ignoring DefaultMemoryPressureDurationSec=%s, not a time span",
				       path, n, val);
		}
	}
	fclose(f);
}

/* oomd.conf, then its drop-ins in systemd's order: the last word wins */
static void oomd_conf_read(void)
{
	struct dropin *dropins;
	int n;

	default_limit_permyriad = OOMD_DEFAULT_LIMIT_PERMYRIAD;
	default_duration_us = OOMD_DEFAULT_DURATION_US;
	oomd_conf_file(OOMD_CONF);
	n = dropins_list(OOMD_CONF_DROPINS, &dropins);
	for (int i = 0; i < n; i++)
		oomd_conf_file(dropins[i].path);
	if (n > 0)
		free(dropins);
}

static struct unit_cgroup *unit_of(const char *path, uint64_t reporter,
				    bool create)
{
	struct unit_cgroup *grown;

	for (int i = 0; i < nunits; i++)
		if (units[i].reporter == reporter && !strcmp(units[i].path, path))
			return &units[i];
	if (!create)
		return NULL;
	grown = realloc(units, (nunits + 1) * sizeof(*units));
	if (!grown)
		return NULL;
	units = grown;
	memset(&units[nunits], 0, sizeof(*units));
	snprintf(units[nunits].path, sizeof(units[nunits].path), "%s", path);
	units[nunits].reporter = reporter;
	return &units[nunits++];
}

static bool unit_asks(const struct unit_cgroup *u)
{
	return u->pressure_kill || u->swap_kill;
}

/* Forget the entries that ask for nothing any more */
static void units_forget(void)
{
	int kept = 0;

	for (int i = 0; i < nunits; i++)
		if (unit_asks(&units[i]))
			units[kept++] = units[i];
	nunits = kept;
}

/*
 * A cgroup path as systemd makes them: unit names escape everything but
 * [A-Za-z0-9:_.\\@-] (systemd.unit(5)). Nothing else may reach a line of
 * the drop-in, where a blank or a '#' would start another word or a
 * comment.
 */
static bool path_ok(const char *path)
{
	if (*path != '/' || strstr(path, "/..") || strlen(path) >= PATH_MAX)
		return false;
	for (const char *p = path; *p; p++)
		if (!(*p >= 'a' && *p <= 'z') && !(*p >= 'A' && *p <= 'Z') &&
		    !(*p >= '0' && *p <= '9') && !strchr("/:_.\\@-", *p))
			return false;
	return true;
}

/* The units a user (any: REPORTER_ANY_USER) asked for whose cgroup is
 * there */
static int units_of(uint64_t reporter)
{
	char cg[PATH_MAX + 32];
	int n = 0;

	for (int i = 0; i < nunits; i++) {
		if (!unit_asks(&units[i]) || units[i].reporter == REPORTER_PID1 ||
		    (reporter != REPORTER_ANY_USER && units[i].reporter != reporter))
			continue;
		snprintf(cg, sizeof(cg), "%s%s", cgroupfs_dir, units[i].path);
		n += !access(cg, F_OK);
	}
	return n;
}

/*
 * The entries of a ManagedOOM message: [{"mode", "path", "property",
 * "limit"?, "duration"?}, ...] (an inactive unit comes with mode "auto").
 * PID 1 said them, or the user manager of @uid: a user's entry counts on
 * a cgroup of that user's only, root's user manager too.
 */
static int cgroups_take(struct json_object *cgroups, bool from_pid1, uid_t uid)
{
	uint64_t reporter = from_pid1 ? REPORTER_PID1 : REPORTER_OF(uid);
	char cg[PATH_MAX + 32];
	struct json_object *e, *v;
	struct stat st;

	for (size_t i = 0; i < json_object_array_length(cgroups); i++) {
		const char *mode = NULL, *path = NULL, *prop = NULL;
		struct unit_cgroup *u;
		bool kill;

		e = json_object_array_get_idx(cgroups, i);
		if (json_object_object_get_ex(e, "mode", &v))
			mode = json_object_get_string(v);
		if (json_object_object_get_ex(e, "path", &v))
			path = json_object_get_string(v);
		if (json_object_object_get_ex(e, "property", &v))
			prop = json_object_get_string(v);
		/* PID 1 names its root cgroup (-.slice's) "" */
		if (path && !*path)
			path = "/";
		if (!mode || !path || !prop)
			continue;
		if (!path_ok(path)) {
			p_info("%s %u sent a cgroup path systemd would not make: ignored",
			       from_pid1 ? "PID" : "user", from_pid1 ? 1 : uid);
			continue;
		}
		snprintf(cg, sizeof(cg), "%s%s", cgroupfs_dir, path);
		if (!from_pid1 && (stat(cg, &st) || st.st_uid != uid)) {
			p_info("user %u may not manage %s: not its cgroup", uid, path);
			continue;
		}
		kill = !strcmp(mode, "kill");
		u = unit_of(path, reporter, false);
		if (!from_pid1 && kill && !(u && unit_asks(u))) {
			if (units_of(reporter) >= (int)user_units_max) {
				p_info("user %u may not manage %s: it has %u units already",
				       uid, path, user_units_max);
				continue;
			}
			if (units_of(REPORTER_ANY_USER) >= USERS_UNITS_MAX) {
				p_info("user %u may not manage %s: users have %d units already",
				       uid, path, USERS_UNITS_MAX);
				continue;
			}
		}
		u = unit_of(path, reporter, kill);
		if (!u) {
			if (!kill)
				continue;
			p_err("out of memory");
			return -ENOMEM;
		}
		if (!strcmp(prop, "ManagedOOMMemoryPressure")) {
			u->pressure_kill = kill;
			u->limit = json_object_object_get_ex(e, "limit", &v) ?
				   (uint32_t)json_object_get_int64(v) : 0;
			u->duration_us = json_object_object_get_ex(e, "duration", &v) ?
					 (uint64_t)json_object_get_int64(v) : 0;
		} else if (!strcmp(prop, "ManagedOOMSwap")) {
			u->swap_kill = kill;
			u->swap_told &= kill;
		}
	}
	units_forget();
	return 0;
}

/*
 * One message of PID 1: {"parameters": {"cgroups": [...]}}, or {"error":
 * NAME}; or of a user manager (@uid): {"method":
 * "io.systemd.oom.ReportManagedOOMCGroups", "parameters": {"cgroups": [...]}}.
 * 0, or -errno after one error line.
 */
static int message_take(const char *text, uid_t uid, bool from_pid1)
{
	struct json_object *msg, *err, *params, *cgroups, *method;
	int ret;

	msg = json_tokener_parse(text);
	if (!msg) {
		p_err("%s sent a message that is not JSON",
		      from_pid1 ? "PID 1" : "a user manager");
		return -EPROTO;
	}
	if (from_pid1 && json_object_object_get_ex(msg, "error", &err)) {
		const char *name = json_object_get_string(err);

		if (name && strstr(name, "SubscriptionTaken"))
			p_err("PID 1's ManagedOOM subscriber is there already: another process of systemd-oomd.service");
		else if (name && strstr(name, "PermissionDenied"))
			p_err("PID 1 tells ManagedOOM units to systemd-oomd.service only: run this there (oomctl-units(8))");
		else
			p_err("PID 1 refused the ManagedOOM subscription: %s",
			      name ?: "(no error name)");
		json_object_put(msg);
		return -EPERM;
	}
	if (!from_pid1 && (!json_object_object_get_ex(msg, "method", &method) ||
			   !json_object_is_type(method, json_type_string) ||
			   strcmp(json_object_get_string(method),
				  "io.systemd.oom.ReportManagedOOMCGroups"))) {
		json_object_put(msg);
		return -EPROTO;
	}
	if (!json_object_object_get_ex(msg, "parameters", &params) ||
	    !json_object_object_get_ex(params, "cgroups", &cgroups) ||
	    !json_object_is_type(cgroups, json_type_array)) {
		p_err("%s sent a message with no cgroups",
		      from_pid1 ? "PID 1" : "a user manager");
		json_object_put(msg);
		return -EPROTO;
	}
	ret = cgroups_take(cgroups, from_pid1, uid);
	json_object_put(msg);
	messages_taken += !ret;
	return ret;
}

/*
 * A unit's trigger: WINDOW its duration within the kernel's bounds, STALL
 * its limit of that window, at least 1us.
 */
static void unit_trigger(const struct unit_cgroup *u, uint64_t *stall_us,
			 uint64_t *window_us)
{
	uint64_t w = u->duration_us ?: default_duration_us;
	/* PID 1 scales the limit to 2^32-1; 0 means oomd.conf's */
	uint64_t permyriad = u->limit ?
		((uint64_t)u->limit * 10000 + UINT32_MAX / 2) / UINT32_MAX :
		default_limit_permyriad;

	w = w < WINDOW_MIN_US ? WINDOW_MIN_US : w > WINDOW_MAX_US ? WINDOW_MAX_US : w;
	*window_us = w;
	*stall_us = w * permyriad / 10000 ?: 1;
}

/* A name for a unit's policy, from its cgroup's path: "oomd-" + 10 hex */
static void unit_policy_name(const char *path, char *buf, size_t size)
{
	uint64_t h = 0xcbf29ce484222325ULL;	/* FNV-1a */

	for (const char *p = path; *p; p++)
		h = (h ^ (unsigned char)*p) * 0x100000001b3ULL;
	snprintf(buf, size, "oomd-%010llx",
		 (unsigned long long)(h & 0xffffffffffULL));
}

/*
 * Whether a kill of units[@i]'s cgroup is asked for by an entry that comes
 * first: PID 1's, then the lowest uid's. One policy and trigger a cgroup,
 * with the settings of the first manager that asks.
 */
static bool entry_shadowed(int i)
{
	for (int j = 0; j < nunits; j++)
		if (j != i && units[j].pressure_kill &&
		    !strcmp(units[j].path, units[i].path) &&
		    (units[j].reporter < units[i].reporter ||
		     (units[j].reporter == units[i].reporter && j < i)))
			return true;
	return false;
}

/* The drop-in for the units whose cgroup is there (free() it), or NULL */
static char *dropin_text(void)
{
	char *text = NULL, cg[PATH_MAX + 32], (*names)[32];
	int nnames = 0;
	size_t len = 0;
	FILE *f;
	struct stat st;

	names = calloc(nunits + 1, sizeof(*names));
	f = names ? open_memstream(&text, &len) : NULL;
	if (!f) {
		free(names);
		return NULL;
	}
	fprintf(f, "# Written by oomctl units from PID 1's ManagedOOM units; do not edit\n");
	/* PID 1's entries first: where two paths make one policy name (it
	 * keeps 40 bits of their hash), PID 1's keeps it */
	for (int pass = 0; pass < 2; pass++) {
		for (int i = 0; i < nunits; i++) {
			struct unit_cgroup *u = &units[i];
			uint64_t stall, window;
			bool taken = false;

			if ((u->reporter == REPORTER_PID1) != (pass == 0))
				continue;
			/* a user's is not enforced either, and not told:
			 * a user could fill root's journal with it */
			if (u->swap_kill && !u->swap_told && !pass) {
				p_info("%s: ManagedOOMSwap=kill is not enforced: no kernel event marks swap use crossing a limit (oomctl-units(8))",
				       u->path);
				u->swap_told = true;
			}
			snprintf(cg, sizeof(cg), "%s%s", cgroupfs_dir, u->path);
			/* a unit gone before its manager said so is no
			 * line (apply needs every cgroup it names), and is
			 * forgotten: it counts no more against its user's */
			if (stat(cg, &st) || !S_ISDIR(st.st_mode))
				u->pressure_kill = u->swap_kill = false;
			if (!u->pressure_kill || entry_shadowed(i))
				continue;
			unit_policy_name(u->path, names[nnames], sizeof(*names));
			for (int j = 0; j < nnames; j++)
				taken |= !strcmp(names[j], names[nnames]);
			if (taken) {
				if (!u->name_told)
					p_info("%s: its policy name %s is another cgroup's already: not followed",
					       u->path, names[nnames]);
				u->name_told = true;
				continue;
			}
			u->name_told = false;
			unit_trigger(u, &stall, &window);
			fprintf(f, "# %s: limit %llu.%02llu%%%s, %llums%s\n", u->path,
				(unsigned long long)(stall * 10000 / window / 100),
				(unsigned long long)(stall * 10000 / window % 100),
				u->limit ? "" : " (oomd.conf)",
				(unsigned long long)(window / 1000),
				u->duration_us ? "" : " (oomd.conf)");
			fprintf(f, "policy attach oomd scope %s name %s\n", u->path,
				names[nnames]);
			fprintf(f, "psi add %s full %lluus %lluus pause 15s\n", u->path,
				(unsigned long long)stall, (unsigned long long)window);
			nnames++;
		}
	}
	free(names);
	units_forget();
	if (fclose(f)) {
		free(text);
		return NULL;
	}
	return text;
}

/* Write @text as the drop-in, whole or not at all */
static int dropin_write(const char *text)
{
	char tmp[] = MANAGED_DROPIN_DIR "/.50-managed-oom.XXXXXX";
	size_t len = strlen(text);
	int fd, err;

	if (mkdir("/run/oomctl", 0755) && errno != EEXIST)
		goto fail;
	if (mkdir(MANAGED_DROPIN_DIR, 0755) && errno != EEXIST)
		goto fail;
	fd = mkstemp(tmp);
	if (fd < 0)
		goto fail;
	if (fchmod(fd, 0644) || write(fd, text, len) != (ssize_t)len ||
	    fsync(fd)) {
		close(fd);
		unlink(tmp);
		goto fail;
	}
	close(fd);
	if (rename(tmp, MANAGED_DROPIN)) {
		unlink(tmp);
		goto fail;
	}
	return 0;
fail:
	err = -errno;
	p_err("cannot write %s: %s", MANAGED_DROPIN, strerror(-err));
	return err;
}

/* Make the drop-in what the units say and apply, if it changed */
static int reconcile(char **last)
{
	char *text = dropin_text();
	int err;

	if (!text) {
		p_err("out of memory");
		return -ENOMEM;
	}
	if (*last && !strcmp(*last, text)) {
		free(text);
		return 0;
	}
	err = dropin_write(text);
	if (!err) {
		err = apply_configured() ? -EIO : 0;
		out_flush();
	}
	free(*last);
	/* a failed apply is tried again on PID 1's next word */
	*last = err ? NULL : text;
	if (err)
		free(text);
	return err;
}

/* Ask PID 1 for its units and their changes: the connection's fd, or -errno */
static int subscribe(void)
{
	/* varlink: each message ends with a NUL, which sizeof counts */
	static const char call[] =
		"{\"method\":\"io.systemd.ManagedOOM.SubscribeManagedOOMCGroups\",\"more\":true}";
	struct sockaddr_un sa = { .sun_family = AF_UNIX,
				  .sun_path = MANAGED_OOM_SOCKET };
	int fd, err;

	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		err = -errno;
		p_err("cannot connect to PID 1's %s: %s", MANAGED_OOM_SOCKET,
		      strerror(-err));
		if (fd >= 0)
			close(fd);
		return err;
	}
	if (write(fd, call, sizeof(call)) != sizeof(call)) {
		p_err("cannot write to %s: %s", MANAGED_OOM_SOCKET, strerror(errno));
		close(fd);
		return -EIO;
	}
	return fd;
}

/* A varlink connection: PID 1's, or a user manager's */
struct conn {
	int fd;
	uid_t uid;		/* of a user manager */
	bool pid1;
	size_t have, size;
	char *buf;
};

/*
 * Read from @c; take each whole message (a user manager's bad one is
 * dropped, not fatal). 0 at EOF, 1 read, -errno.
 */
static int messages_read(struct conn *c)
{
	ssize_t n;
	char *end;
	int err;

	/* a user manager's buffer lives while it holds part of a message */
	if (!c->buf && !(c->buf = malloc(c->size)))
		return -ENOMEM;
	n = read(c->fd, c->buf + c->have, c->size - c->have);
	if (n < 0)
		return errno == EINTR || errno == EAGAIN ? 1 : -errno;
	if (n == 0)
		return 0;
	c->have += n;
	while ((end = memchr(c->buf, '\0', c->have))) {
		err = message_take(c->buf, c->uid, c->pid1);
		if (err && c->pid1)
			return err;
		c->have -= end + 1 - c->buf;
		memmove(c->buf, end + 1, c->have);
	}
	if (c->have == c->size) {
		if (c->pid1)
			p_err("PID 1 sent a message of more than %zu bytes", c->size);
		return -EMSGSIZE;
	}
	if (!c->pid1 && !c->have) {
		free(c->buf);
		c->buf = NULL;
	}
	return 1;
}

/* Tell the service manager we are up (sd_notify(3)'s protocol) */
static void notify_ready(void)
{
	const char *path = getenv("NOTIFY_SOCKET");
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd;

	if (!path || (*path != '/' && *path != '@') ||
	    strlen(path) >= sizeof(sa.sun_path))
		return;
	memcpy(sa.sun_path, path, strlen(path));
	if (*path == '@')
		sa.sun_path[0] = '\0';
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return;
	sendto(fd, "READY=1", 7, 0, (struct sockaddr *)&sa,
	       offsetof(struct sockaddr_un, sun_path) + strlen(path));
	close(fd);
}

/* The socket systemd-oomd.socket passes (sd_listen_fds(3)), or -1 */
static int user_socket(void)
{
	const char *pid = getenv("LISTEN_PID"), *fds = getenv("LISTEN_FDS");

	if (!pid || !fds || strtol(pid, NULL, 10) != getpid() || strcmp(fds, "1"))
		return -1;
	fcntl(3, F_SETFD, FD_CLOEXEC);
	/* accepted until none waits: systemd passes it blocking */
	fcntl(3, F_SETFL, fcntl(3, F_GETFL) | O_NONBLOCK);
	return 3;
}

/*
 * User managers connect and stay: up to USERS_MAX at once, the rest wait;
 * a user's connections beyond USER_CONNS_MAX are closed, so that one user
 * holding idle ones cannot make the others wait. A user manager keeps one.
 * An idle connection holds no buffer.
 */
#define USERS_MAX	256
#define USER_CONNS_MAX	4
#define USER_MESSAGE_MAX	(64 << 10)

/* Take one waiting connection: false when none waits */
static bool user_accept(int lfd, struct conn *users, int *nusers)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);
	int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
	struct conn *c = &users[*nusers];
	int held = 0;

	if (fd < 0)
		return errno == ECONNABORTED || errno == EINTR;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len)) {
		close(fd);
		return true;
	}
	for (int i = 0; i < *nusers; i++)
		held += users[i].uid == cred.uid;
	/* closed unsaid: a line each would let a user fill root's journal */
	if (held >= USER_CONNS_MAX) {
		close(fd);
		return true;
	}
	c->buf = NULL;
	c->fd = fd;
	c->uid = cred.uid;
	c->pid1 = false;
	c->have = 0;
	c->size = USER_MESSAGE_MAX;
	(*nusers)++;
	return true;
}

int do_units(int argc, char **argv)
{
	struct conn pid1 = { .pid1 = true, .size = MESSAGE_MAX };
	struct conn users[USERS_MAX];
	struct pollfd fds[3 + USERS_MAX];
	char *last = NULL;
	int nusers = 0, lfd, r;
	sigset_t mask;
	bool ready = false;

	if (argc == 1 && !strcmp(*argv, "help"))
		return do_help();
	if (argc > 0) {
		static const char *const kws[] = { "user-units", NULL };
		int kw = arg_keyword(kws, *argv);
		uint64_t n;

		if (kw == KW_AMBIGUOUS)
			return OOMCTL_EXIT_USAGE;
		if (kw == 0) {
			NEXT_ARG();
			if (!REQ_ARGS(1))
				return OOMCTL_EXIT_USAGE;
			if (arg_number("user-units", GET_ARG(), 1,
				       USERS_UNITS_MAX, &n))
				return OOMCTL_EXIT_USAGE;
			user_units_max = n;
		}
	}
	if (!NO_MORE_ARGS())
		return OOMCTL_EXIT_USAGE;
	oomd_conf_read();
	if (kernel_check(NULL))
		return OOMCTL_EXIT_NOSUPP;

	pid1.buf = malloc(MESSAGE_MAX);
	if (!pid1.buf) {
		p_err("out of memory");
		return OOMCTL_EXIT_FAIL;
	}
	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	lfd = user_socket();
	fds[0].fd = pid1.fd = subscribe();
	fds[1].fd = signalfd(-1, &mask, SFD_CLOEXEC);
	fds[2].fd = lfd;
	r = fds[0].fd < 0 || fds[1].fd < 0 ? -EIO : 1;
	while (r > 0) {
		int n = 3;

		for (int i = 0; i < n; i++)
			fds[i].events = POLLIN;
		/* a full table of user managers waits in the backlog */
		if (nusers == USERS_MAX)
			fds[2].fd = -1;
		for (int i = 0; i < nusers; i++, n++) {
			fds[n].fd = users[i].fd;
			fds[n].events = POLLIN;
		}
		if (poll(fds, n, -1) < 0) {
			if (errno == EINTR)
				continue;
			r = -errno;
			break;
		}
		if (fds[1].revents)
			break;		/* stopped: take our units away */
		if (fds[0].revents) {
			r = messages_read(&pid1);
			if (r == 0)
				p_err("PID 1 closed the ManagedOOM subscription");
			if (r <= 0)
				break;
		}
		for (int i = nusers - 1; i >= 0; i--) {
			if (!fds[3 + i].revents || messages_read(&users[i]) > 0)
				continue;
			close(users[i].fd);
			free(users[i].buf);
			users[i] = users[--nusers];
		}
		/* all that wait: one a round would let a flood of
		 * connections fill the backlog ahead of the others */
		while (lfd >= 0 && fds[2].revents && nusers < USERS_MAX &&
		       user_accept(lfd, users, &nusers))
			;
		fds[2].fd = lfd;
		/* PID 1's first answer is the list of every running unit */
		if (messages_taken)
			reconcile(&last);
		if (messages_taken && !ready) {
			notify_ready();
			ready = true;
		}
	}
	/* On a stop, and on PID 1's goodbye (it re-executes, we come back):
	 * no policy stays for a unit nobody follows any more */
	if (!unlink(MANAGED_DROPIN) || errno != ENOENT)
		apply_configured();
	if (pid1.fd >= 0)
		close(pid1.fd);
	for (int i = 0; i < nusers; i++) {
		close(users[i].fd);
		free(users[i].buf);
	}
	free(last);
	free(pid1.buf);
	free(units);
	/* only a stop is a success: anything else, the unit restarts us */
	return r > 0 ? OOMCTL_EXIT_OK : OOMCTL_EXIT_FAIL;
}
