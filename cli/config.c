/* Reading and checking oomctl's configuration (config.h). */
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "main.h"
#include "bpffs.h"
#include "config.h"

#define CONF_WORDS_MAX	16
#define CONF_POLICIES_MAX	256	/* the registry's size (bpffs.h) */
#define CONF_TRIGGERS_MAX	1024	/* the kernel's limit */

/* One line being read: its place and words */
struct line {
	const char *where;
	char *w[CONF_WORDS_MAX];
	int n;
};

static int __attribute__((format(printf, 2, 3)))
bad(const struct line *l, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	p_err("%s: %s", l->where, msg);
	return OOMCTL_EXIT_USAGE;
}

/* A cgroup of a line: syntax, then the cgroup itself, with our messages */
static int conf_cgroup(const struct line *l, const char *arg, char *path,
		       uint64_t *id)
{
	const char *fs = strcmp(cgroupfs_dir, "/") ? cgroupfs_dir : "";
	char fspath[PATH_MAX * 2];
	int err;

	if (*arg == '-')
		return bad(l, "invalid cgroup '%s'", arg);
	err = cgroup_path_norm(cgroupfs_dir, arg, path, PATH_MAX);
	if (err == -ENAMETOOLONG)
		return bad(l, "cgroup path too long: '%s'", arg);
	if (err)
		return bad(l, "invalid cgroup '%s': '..' is not allowed", arg);
	snprintf(fspath, sizeof(fspath), "%s%s", fs,
		 strcmp(path, "/") ? path : *fs ? "" : "/");
	switch (cgroup_id_from_path(fspath, id)) {
	case 0:
		return 0;
	case -ENOENT:
		return bad(l, "cgroup '%s' not found: no %s", arg, fspath);
	case -ENOTDIR:
		return bad(l, "'%s' is not a cgroup: %s is not a directory",
			   arg, fspath);
	case -EMEDIUMTYPE:
		return bad(l, "'%s' is not a cgroup: %s is not on cgroup2",
			   arg, fspath);
	default:
		return bad(l, "cannot resolve cgroup '%s' (%s): %s", arg,
			   fspath, strerror(errno));
	}
}

static bool builtin_known(const char *name)
{
	char names[256], *tok, *save;

	policy_builtin_names(" ", names, sizeof(names));
	for (tok = strtok_r(names, " ", &save); tok;
	     tok = strtok_r(NULL, " ", &save))
		if (!strcmp(tok, name))
			return true;
	return false;
}

/* policy attach { NAME | /PATH.bpf.o } [scope CGROUP] [dry-run] [kill-unit] */
static int conf_policy(struct config *conf, const struct line *l)
{
	struct conf_policy p = {}, *grown;
	const char *what = l->w[2];
	bool scoped = false, named = false;
	struct stat st;
	int i, err;

	if (l->n < 3)
		return bad(l, "missing NAME or FILE.bpf.o after 'policy attach'");
	snprintf(p.where, sizeof(p.where), "%s", l->where);
	/* As policy.c tells names from files */
	if (strchr(what, '/') || (strlen(what) > 2 &&
				  !strcmp(what + strlen(what) - 2, ".o"))) {
		char base[PATH_MAX], *slash, *dot;

		/* the unit runs in /: a relative path would mean nothing */
		if (*what != '/')
			return bad(l, "'%s': an object file needs an absolute path", what);
		if (stat(what, &st))
			return bad(l, "cannot open '%s': %s", what, strerror(errno));
		if (!S_ISREG(st.st_mode))
			return bad(l, "'%s' is not a BPF object file", what);
		if (!realpath(what, p.file))
			return bad(l, "cannot open '%s': %s", what, strerror(errno));
		err = file_digest(p.file, &p.file_size, &p.file_crc32);
		if (err)
			return bad(l, "cannot read '%s': %s", what, strerror(-err));
		/* the name policy_attach() will give it: apply passes p.file */
		snprintf(base, sizeof(base), "%s", p.file);
		slash = strrchr(base, '/');
		snprintf(p.name, sizeof(p.name), "%.31s", slash + 1);
		dot = strstr(p.name, ".bpf.o") ?: strrchr(p.name, '.');
		if (dot)
			*dot = '\0';
		if (policy_name_check(p.name))
			return bad(l, "cannot name a policy after '%s': rename the file to 1-15 of [a-z0-9_-] + .bpf.o",
				   what);
	} else {
		if (policy_name_check(what) || !builtin_known(what)) {
			char names[256];

			return bad(l, "no built-in policy '%s' (%s)", what,
				   policy_builtin_names(", ", names, sizeof(names)));
		}
		snprintf(p.name, sizeof(p.name), "%s", what);
		snprintf(p.kind, sizeof(p.kind), "%s", what);
		p.builtin = true;
	}
	for (i = 3; i < l->n; i++) {
		if (!strcmp(l->w[i], "scope") && !scoped) {
			if (++i == l->n)
				return bad(l, "missing CGROUP after 'scope'");
			err = conf_cgroup(l, l->w[i], p.scope, &p.scope_id);
			if (err)
				return err;
			scoped = true;
		} else if (!strcmp(l->w[i], "dry-run") && !p.dry_run) {
			p.dry_run = true;
		} else if (!strcmp(l->w[i], "kill-unit") && !p.kill_unit) {
			p.kill_unit = true;
		} else if (!strcmp(l->w[i], "name") && !named) {
			if (++i == l->n)
				return bad(l, "missing POLICY after 'name'");
			if (policy_name_check(l->w[i]))
				return bad(l, "invalid policy name '%s': %s", l->w[i],
					   POLICY_NAME_RULE);
			snprintf(p.name, sizeof(p.name), "%s", l->w[i]);
			named = true;
		} else {
			return bad(l, "unexpected '%s' (policy attach { NAME | FILE.bpf.o } [scope CGROUP] [dry-run] [kill-unit] [name POLICY])",
				   l->w[i]);
		}
	}
	for (i = 0; i < conf->npolicies; i++)
		if (!strcmp(conf->policies[i].name, p.name))
			return bad(l, "policy '%s' is configured already at %s",
				   p.name, conf->policies[i].where);
	if (conf->npolicies == CONF_POLICIES_MAX)
		return bad(l, "more than %d policies", CONF_POLICIES_MAX);
	grown = realloc(conf->policies, (conf->npolicies + 1) * sizeof(p));
	if (!grown)
		return bad(l, "out of memory");
	conf->policies = grown;
	conf->policies[conf->npolicies++] = p;
	return 0;
}

static int conf_duration(const struct line *l, const char *what,
			 const char *arg, uint64_t *usec)
{
	int err = parse_duration(arg, usec);

	if (err)
		return bad(l, "invalid %s '%s': %s", what, arg, err == -ERANGE ?
			   "too large" : "expected a duration like 150ms or 2s");
	return 0;
}

/* psi add CGROUP { some | full } STALL WINDOW [pause PAUSE] */
static int conf_trigger(struct config *conf, const struct line *l)
{
	struct conf_trigger t = {}, *grown;
	int err;

	if (l->n < 6 || (l->n == 7 && !strcmp(l->w[6], "pause")))
		return bad(l, "missing argument (psi add CGROUP { some | full } STALL WINDOW [pause PAUSE])");
	if (l->n > 6 && (l->n != 8 || strcmp(l->w[6], "pause")))
		return bad(l, "too many arguments (psi add CGROUP { some | full } STALL WINDOW [pause PAUSE])");
	snprintf(t.where, sizeof(t.where), "%s", l->where);
	if (parse_psi_stall(l->w[3], &t.type))
		return bad(l, "invalid stall type '%s': expected 'some' or 'full'",
			   l->w[3]);
	err = conf_duration(l, "STALL", l->w[4], &t.stall_us) ?:
	      conf_duration(l, "WINDOW", l->w[5], &t.window_us);
	if (err)
		return err;
	switch (psi_trigger_check(t.stall_us, t.window_us)) {
	case -ERANGE:
		return bad(l, "WINDOW must be within 500ms..10s");
	case -EINVAL:
		return bad(l, "STALL must be more than 0 and at most WINDOW");
	}
	t.pause_us = PSI_PAUSE_DEFAULT(t.window_us);
	if (l->n == 8) {
		err = conf_duration(l, "PAUSE", l->w[7], &t.pause_us);
		if (err)
			return err;
	}
	if (psi_pause_check(t.pause_us))
		return bad(l, "PAUSE must be at most 10min");
	err = conf_cgroup(l, l->w[2], t.cgroup, &t.cgroup_id);
	if (err)
		return err;
	for (int i = 0; i < conf->ntriggers; i++) {
		const struct conf_trigger *o = &conf->triggers[i];

		if (o->cgroup_id == t.cgroup_id && o->type == t.type &&
		    o->stall_us == t.stall_us && o->window_us == t.window_us)
			return bad(l, "the same trigger is configured already at %s",
				   o->where);
	}
	if (conf->ntriggers == CONF_TRIGGERS_MAX)
		return bad(l, "more than %d triggers", CONF_TRIGGERS_MAX);
	grown = realloc(conf->triggers, (conf->ntriggers + 1) * sizeof(t));
	if (!grown)
		return bad(l, "out of memory");
	conf->triggers = grown;
	conf->triggers[conf->ntriggers++] = t;
	return 0;
}

static int conf_line(struct config *conf, struct line *l, char *text)
{
	char *save, *tok;

	l->n = 0;
	for (tok = strtok_r(text, " \t\r\n", &save); tok && *tok != '#';
	     tok = strtok_r(NULL, " \t\r\n", &save)) {
		if (l->n == CONF_WORDS_MAX)
			return bad(l, "too many words");
		l->w[l->n++] = tok;
	}
	if (!l->n)
		return 0;
	if (l->n >= 2 && !strcmp(l->w[0], "policy") && !strcmp(l->w[1], "attach"))
		return conf_policy(conf, l);
	if (l->n >= 2 && !strcmp(l->w[0], "psi") && !strcmp(l->w[1], "add"))
		return conf_trigger(conf, l);
	return bad(l, "unknown command '%s%s%s': expected 'policy attach' or 'psi add'",
		   l->w[0], l->n > 1 ? " " : "", l->n > 1 ? l->w[1] : "");
}

/* One file; @must: a missing file is an error */
static int conf_file(struct config *conf, const char *path, bool must)
{
	char where[CONF_WHERE_LEN], *text = NULL;
	struct line l = { .where = where };
	size_t size = 0;
	ssize_t len;
	unsigned int lineno = 0;
	int err = 0;
	FILE *f;

	f = fopen(path, "re");
	if (!f) {
		if (errno == ENOENT && !must)
			return 0;
		err = errno;
		p_err("%s: cannot read: %s", path, strerror(err));
		return OOMCTL_EXIT_FAIL;
	}
	conf->nfiles++;
	/* every bad line is told, each in its line: an admin mends them all
	 * at once; the first one's status is kept */
	while ((len = getline(&text, &size, f)) >= 0) {
		int line_err;

		snprintf(where, sizeof(where), "%s:%u", path, ++lineno);
		/* the words would end there: say so rather than ignore the rest */
		line_err = strlen(text) != (size_t)len ?
			   bad(&l, "a NUL byte in the line") :
			   conf_line(conf, &l, text);
		err = err ?: line_err;
	}
	if (!err && ferror(f)) {
		p_err("%s: cannot read: %s", path, strerror(errno));
		err = OOMCTL_EXIT_FAIL;
	}
	free(text);
	fclose(f);
	return err;
}

static int conf_dropin(const struct dirent *de)
{
	size_t len = strlen(de->d_name);

	return de->d_name[0] != '.' && len > 5 &&
	       !strcmp(de->d_name + len - 5, ".conf");
}

/* The folders of the drop-ins, the first one's overriding the others' */
static const char *const dropin_roots[] = {
	"/etc", "/run", "/usr/local/lib", "/usr/lib",
};

static int dropin_by_name(const void *a, const void *b)
{
	return strcmp(((const struct dropin *)a)->name,
		      ((const struct dropin *)b)->name);
}

/* Add folder @dir's drop-ins to @ds whose name no earlier folder had */
static int dropins_add(struct dropin **ds, int *n, const char *dir)
{
	struct dirent **des;
	struct dropin *grown;
	int m, i, j, err = 0;

	m = scandir(dir, &des, conf_dropin, NULL);
	if (m < 0) {
		if (errno == ENOENT || errno == ENOTDIR)
			return 0;
		p_err("%s: cannot read: %s", dir, strerror(errno));
		return OOMCTL_EXIT_FAIL;
	}
	for (i = 0; i < m; i++) {
		for (j = 0; j < *n && strcmp((*ds)[j].name, des[i]->d_name); j++)
			;
		if (j < *n || err)
			continue;
		grown = realloc(*ds, (*n + 1) * sizeof(**ds));
		if (!grown) {
			p_err("out of memory");
			err = OOMCTL_EXIT_FAIL;
			continue;
		}
		*ds = grown;
		snprintf(grown[*n].name, sizeof(grown[*n].name), "%s", des[i]->d_name);
		snprintf(grown[*n].path, sizeof(grown[*n].path), "%s/%s", dir,
			 des[i]->d_name);
		(*n)++;
	}
	for (i = 0; i < m; i++)
		free(des[i]);
	free(des);
	return err;
}

int dropins_list(const char *sub, struct dropin **dropins)
{
	char dir[PATH_MAX];
	int n = 0, err = 0;

	*dropins = NULL;
	for (size_t r = 0; !err && r < sizeof(dropin_roots) / sizeof(*dropin_roots); r++) {
		snprintf(dir, sizeof(dir), "%s/%s", dropin_roots[r], sub);
		err = dropins_add(dropins, &n, dir);
	}
	if (err) {
		free(*dropins);
		*dropins = NULL;
		return -err;
	}
	if (n)
		qsort(*dropins, n, sizeof(**dropins), dropin_by_name);
	return n;
}

int config_read(const char *file, struct config *conf)
{
	struct dropin *dropins;
	int n, err;

	memset(conf, 0, sizeof(*conf));
	if (file)
		return conf_file(conf, file, true);
	err = conf_file(conf, OOMCTL_CONF_FILE, false);
	n = err == OOMCTL_EXIT_FAIL ? 0 : dropins_list(OOMCTL_CONF_DROPINS, &dropins);
	if (n < 0)
		return -n;
	/* past a file with bad lines, to tell the others' too */
	for (int i = 0; i < n && err != OOMCTL_EXIT_FAIL; i++)
		err = conf_file(conf, dropins[i].path, true) ?: err;
	if (n)
		free(dropins);
	return err;
}

void config_free(struct config *conf)
{
	free(conf->policies);
	free(conf->triggers);
	memset(conf, 0, sizeof(*conf));
}
