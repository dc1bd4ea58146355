/*
 * event export --prometheus [FILE]: the counters that the event log and
 * the attached policies hold, in the Prometheus text format 0.0.4 that
 * node_exporter's textfile collector reads.
 *
 * The whole text is built in memory before anything is written, so a
 * failure prints nothing and leaves no file; FILE is written as a hidden
 * temporary file in its own folder and renamed over FILE, so the
 * collector never reads half of it.
 */
#include <errno.h>
#include <libgen.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include <bpf/bpf.h>

#include "backend.h"
#include "bpffs.h"
#include "events.h"


/* What the recorder's counts say of themselves, in every HELP */
#define FROM_LOG " counted by the event recorder in the kernel since the " \
	"log began (they never fall; a removed cgroup keeps its path); one " \
	"series per label set seen, at most " __stringify(OOM_COUNTS_MAX) \
	" in the four families together, then \"(other)\" labels"

enum family {
	F_KILLS,
	F_DRY_RUN_KILLS,
	F_OOMS,
	F_PSI_EVENTS,
	F_POLICY_KILLS,
	F_POLICY_RUNS,
	F_PSI_TRIGGER_EVENTS,
	F_LOG_RECORDS,
	F_LOG_WINDOW,
	F_NR,
};

static const struct {
	const char *name, *type, *help;
} families[F_NR] = {
	[F_KILLS] = { "oomctl_kills_total", "counter",
		"OOM kills by the victim's cgroup and the policy that chose it "
		"((kernel): the kernel's OOM killer)," FROM_LOG },
	[F_DRY_RUN_KILLS] = { "oomctl_dry_run_kills_total", "counter",
		"Kills a dry-run policy would have made, by the victim's cgroup "
		"and the policy," FROM_LOG },
	[F_OOMS] = { "oomctl_ooms_total", "counter",
		"OOMs by memcg ((system): system-wide) and trigger (allocation: "
		"an allocation failed; declared: bpf_out_of_memory() from a "
		"program; psi: from a PSI handler)," FROM_LOG },
	[F_PSI_EVENTS] = { "oomctl_psi_events_total", "counter",
		"PSI events handed to BPF, by cgroup, resource and kind," FROM_LOG },
	[F_POLICY_KILLS] = { "oomctl_policy_kills_total", "counter",
		"OOM kills chosen by each policy, counted by the event recorder "
		"since it was attached, detached policies included (policy list's "
		"KILLS)" },
	[F_POLICY_RUNS] = { "oomctl_policy_runs_total", "counter",
		"Runs of each attached policy, as it counts them itself (nr_runs), "
		"or as the kernel does while kernel.bpf_stats_enabled is 1; none "
		"for a policy that counts none (policy list's RUNS)" },
	[F_PSI_TRIGGER_EVENTS] = { "oomctl_psi_trigger_events_total", "counter",
		"Events of each kernel-owned PSI trigger, by trigger id, cgroup, "
		"resource and kind (psi list's EVENTS)" },
	[F_LOG_RECORDS] = { "oomctl_event_log_records_total", "counter",
		"Records ever written to the event log" },
	[F_LOG_WINDOW] = { "oomctl_event_log_window_records", "gauge",
		"Records the event log holds now, the newest " \
		__stringify(OOM_EVENTS_MAX) " at most (event list shows them)" },
};

struct sample {
	enum family fam;
	char *labels;		/* {name="value",...} escaped, or "" */
	uint64_t value;
};

static struct sample *samples;
static size_t nr_samples, cap_samples;

/*
 * A label value as the format wants it: \ " and newline escaped, and any
 * byte that is not UTF-8 (a cgroup name may hold one) as U+FFFD, since the
 * collector rejects the whole file over a single bad label.
 */
static void put_label_value(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	while (*p) {
		int len = *p < 0x80 ? 1 : (*p & 0xe0) == 0xc0 ? 2 :
			  (*p & 0xf0) == 0xe0 ? 3 : (*p & 0xf8) == 0xf0 ? 4 : 0;
		int i;

		for (i = 1; i < len && (p[i] & 0xc0) == 0x80; i++)
			;
		if (!len || i < len) {
			fputs("\xef\xbf\xbd", f);
			p++;
			continue;
		}
		if (*p == '\\' || *p == '"')
			fprintf(f, "\\%c", *p);
		else if (*p == '\n')
			fputs("\\n", f);
		else
			fwrite(p, 1, len, f);
		p += len;
	}
}

/* Add @value to @fam's sample of the labels given as name, value pairs
 * ending with NULL; equal label sets are summed when printed. */
static int add(enum family fam, uint64_t value, ...)
{
	const char *name, *sep = "";
	size_t size;
	va_list ap;
	FILE *f;

	if (nr_samples == cap_samples) {
		size_t cap = cap_samples ? 2 * cap_samples : 256;
		struct sample *p = realloc(samples, cap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		samples = p;
		cap_samples = cap;
	}
	samples[nr_samples] = (struct sample){ .fam = fam, .value = value };
	f = open_memstream(&samples[nr_samples].labels, &size);
	if (!f)
		return -ENOMEM;
	va_start(ap, value);
	while ((name = va_arg(ap, const char *))) {
		fprintf(f, "%s%s=\"", *sep ? sep : "{", name);
		put_label_value(f, va_arg(ap, const char *));
		fputc('"', f);
		sep = ",";
	}
	va_end(ap);
	if (*sep)
		fputc('}', f);
	if (fclose(f))
		return -ENOMEM;
	nr_samples++;
	return 0;
}

static int by_family_labels(const void *a, const void *b)
{
	const struct sample *x = a, *y = b;

	return x->fam != y->fam ? (int)x->fam - (int)y->fam :
	       strcmp(x->labels, y->labels);
}

/* Every family, each with its HELP and TYPE even when it has no sample */
static void print_families(FILE *f)
{
	size_t i = 0;

	qsort(samples, nr_samples, sizeof(*samples), by_family_labels);
	for (int fam = 0; fam < F_NR; fam++) {
		fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", families[fam].name,
			families[fam].help, families[fam].name,
			families[fam].type);
		while (i < nr_samples && samples[i].fam == (enum family)fam) {
			uint64_t sum = samples[i].value;
			size_t j = i + 1;

			for (; j < nr_samples && !by_family_labels(&samples[i],
								   &samples[j]); j++)
				sum += samples[j].value;
			fprintf(f, "%s%s %llu\n", families[fam].name,
				samples[i].labels, (unsigned long long)sum);
			i = j;
		}
	}
}

static const char *trigger_label(uint32_t trigger)
{
	switch (trigger) {
	case OOM_TRIGGER_ALLOCATION: return "allocation";
	case OOM_TRIGGER_DECLARED: return "declared";
	case OOM_TRIGGER_PSI: return "psi";
	default: return "unknown";
	}
}

/*
 * The label of a count's cgroup: its path now, or for a removed one the path
 * its first record kept (a cut path is the leaf's end), as event list names
 * it
 */
static const char *count_cgroup(const struct oom_count_key *key,
				const struct oom_count *c, char *buf,
				size_t size)
{
	cgroup_path_of_id(key->cgroup_id, buf, size);
	if (buf[0] == '(' && key->cgroup_id && c->cgroup_path[0])
		snprintf(buf, size, "%.*s", (int)sizeof(c->cgroup_path),
			 c->cgroup_path);
	return buf;
}

static int add_count(const struct oom_count_key *key, const struct oom_count *c)
{
	char cg[PATH_MAX], policy[64];
	const char *res, *kind;

	count_cgroup(key, c, cg, sizeof(cg));
	switch (key->type) {
	case OOM_EVENT_KILL:
	case OOM_EVENT_DRY_RUN:
		if (key->policy_cookie)
			policy_name_of_cookie(key->policy_cookie, policy,
					      sizeof(policy));
		else
			snprintf(policy, sizeof(policy), "(kernel)");
		return add(key->type == OOM_EVENT_KILL ? F_KILLS :
			   F_DRY_RUN_KILLS, c->count, "cgroup", cg,
			   "policy", policy, NULL);
	case OOM_EVENT_INVOKE:
		return add(F_OOMS, c->count, "cgroup", cg, "trigger",
			   trigger_label(key->trigger), NULL);
	case OOM_EVENT_PSI:
		psi_state_names(key->trigger, &res, &kind);
		return add(F_PSI_EVENTS, c->count, "cgroup", cg, "resource",
			   res, "kind", kind, NULL);
	}
	return 0;
}

/* Records that found no room for a key of their own, by type */
static int add_counts_other(void)
{
	static const struct {
		uint32_t type;
		enum family fam;
		const char *labels[4];
	} other[] = {
		{ OOM_EVENT_KILL, F_KILLS, { "cgroup", "policy" } },
		{ OOM_EVENT_DRY_RUN, F_DRY_RUN_KILLS, { "cgroup", "policy" } },
		{ OOM_EVENT_INVOKE, F_OOMS, { "cgroup", "trigger" } },
		{ OOM_EVENT_PSI, F_PSI_EVENTS, { "cgroup", "resource", "kind" } },
	};
	int fd = state_map_fd("counts_other"), err = 0;
	uint64_t n;

	if (fd < 0)
		return 0;
	for (size_t i = 0; i < sizeof(other) / sizeof(*other) && !err; i++) {
		const char *const *l = other[i].labels;

		if (bpf_map_lookup_elem(fd, &other[i].type, &n) || !n)
			continue;
		err = l[2] ? add(other[i].fam, n, l[0], "(other)", l[1], "(other)",
				 l[2], "(other)", NULL) :
			     add(other[i].fam, n, l[0], "(other)", l[1], "(other)",
				 NULL);
	}
	close(fd);
	return err;
}

/*
 * The recorder's counts (oom_counts, oom_shared.h), which only grow; and
 * the log's size
 */
static int add_log(void)
{
	struct oom_count_key key, next;
	struct oom_count c;
	void *prev = NULL;
	uint32_t zero = 0;
	uint64_t head;
	int fd, err = 0;

	fd = state_map_fd("counts");
	if (fd < 0) {
		p_err("cannot open the event log's counts under %s: %s",
		      bpffs_dir, strerror(-fd));
		return fd;
	}
	while (!err && !bpf_map_get_next_key(fd, prev, &next)) {
		key = next;
		prev = &key;
		if (!bpf_map_lookup_elem(fd, &key, &c))
			err = add_count(&key, &c);
	}
	close(fd);
	err = err ?: add_counts_other();
	if (err)
		return err;
	fd = state_map_fd("events_head");
	if (fd < 0 || bpf_map_lookup_elem(fd, &zero, &head)) {
		err = fd < 0 ? fd : -errno;
		p_err("cannot read the event log's head under %s: %s",
		      bpffs_dir, strerror(-err));
		if (fd >= 0)
			close(fd);
		return err;
	}
	close(fd);
	return add(F_LOG_RECORDS, head, NULL) ?:
	       add(F_LOG_WINDOW, head < OOM_EVENTS_MAX ? head : OOM_EVENTS_MAX,
		   NULL);
}

/* Kills by policy cookie, summed by name: a policy attached again under
 * its old name has a new cookie, and its count goes on from the old one */
static int add_policy_kills(void)
{
	uint64_t key, next, kills;
	char name[64];
	void *prev = NULL;
	int fd, err = 0;

	fd = state_map_fd("policy_kills");
	if (fd < 0)
		return 0;	/* the recorder has counted nothing yet */
	while (!err && !bpf_map_get_next_key(fd, prev, &next)) {
		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(fd, &key, &kills))
			continue;	/* forgotten by the LRU meanwhile */
		err = add(F_POLICY_KILLS, kills, "policy",
			  policy_name_of_cookie(key, name, sizeof(name)), NULL);
	}
	close(fd);
	return err;
}

static int add_policy_runs(void)
{
	struct policy_meta *metas;
	int n, err = 0;

	n = registry_list(&metas);
	if (n < 0)
		return n;
	for (int i = 0; i < n && !err; i++) {
		struct policy_stats st;

		policy_stats(&metas[i], &st);
		if (st.runs_known)
			err = add(F_POLICY_RUNS, st.runs, "policy",
				  metas[i].name, NULL);
	}
	free(metas);
	return err;
}

/* The kernel's own count per trigger */
static int add_psi_triggers(void)
{
	struct kernel_trigger *trs;
	char cg[PATH_MAX], id[16];
	int n, err = 0;

	if (access(BPF_TRIGGERS, F_OK))
		return 0;	/* PSI is off (psi=0): no triggers */
	n = kernel_triggers_read(&trs);
	if (n < 0)
		return n;
	for (int i = 0; i < n && !err; i++) {
		snprintf(id, sizeof(id), "%d", trs[i].id);
		err = add(F_PSI_TRIGGER_EVENTS, trs[i].events, "id", id, "cgroup",
			  cgroup_path_of_id(trs[i].cgroup_id, cg, sizeof(cg)),
			  "resource", trs[i].resource, "kind", trs[i].kind, NULL);
	}
	free(trs);
	return err;
}

/* @text to @file through a temporary file in its folder and rename() */
static int write_atomically(const char *file, const char *text, size_t len)
{
	char *copy1 = strdup(file), *copy2 = strdup(file), *tmp = NULL;
	int fd = -1, err = 0;

	/* Hidden and not *.prom: the collector skips it until renamed */
	if (!copy1 || !copy2 || asprintf(&tmp, "%s/.%s.XXXXXX", dirname(copy1),
					 basename(copy2)) < 0) {
		tmp = NULL;
		err = -ENOMEM;
		p_err("out of memory");
		goto out;
	}
	fd = mkstemp(tmp);
	if (fd < 0) {
		err = -errno;
		p_err("cannot write %s: %s", file, strerror(-err));
		goto out;
	}
	/* Readable by the collector, which seldom runs as root */
	errno = 0;
	if (fchmod(fd, 0644) || write(fd, text, len) != (ssize_t)len ||
	    fsync(fd)) {
		err = errno ? -errno : -EIO;
		p_err("cannot write %s: %s", tmp, strerror(-err));
	}
	if (close(fd) && !err) {
		err = -errno;
		p_err("cannot write %s: %s", tmp, strerror(-err));
	}
	if (!err && rename(tmp, file)) {
		err = -errno;
		p_err("cannot replace %s: %s", file, strerror(-err));
	}
	if (err)
		unlink(tmp);
out:
	free(tmp);
	free(copy1);
	free(copy2);
	return err;
}

int event_export(const struct event_export_opts *opts, char **textp, size_t *lenp)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f;
	int err;

	/* As event list: the log exists once the recorder is attached */
	err = state_init() ?: recorder_ensure();
	if (err)
		return err;
	err = add_log() ?: add_policy_kills() ?: add_policy_runs() ?:
	      add_psi_triggers();
	f = err ? NULL : open_memstream(&text, &len);
	if (f) {
		print_families(f);
		if (fclose(f))
			err = -ENOMEM;
	} else if (!err) {
		err = -ENOMEM;
	}
	if (err == -ENOMEM && !p_err_reported())
		p_err("out of memory");
	if (!err && opts->file) {
		err = write_atomically(opts->file, text, len);
	} else if (!err) {
		*textp = text;
		*lenp = len;
		text = NULL;
	}
	for (size_t i = 0; i < nr_samples; i++)
		free(samples[i].labels);
	free(samples);
	free(text);
	return err;
}
