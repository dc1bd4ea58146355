/*
 * oomctl policy's output: the listing, one policy's page, what attach and
 * detach did, and explain's verdicts and candidate tables, from what the
 * backends (policy_backend.c, policy_explain.c) return.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "main.h"

static const char *hooks_str(uint32_t hooks)
{
	switch (hooks) {
	case HOOK_OOM: return "oom";
	case HOOK_PSI: return "psi";
	default: return "oom+psi";
	}
}

/* policy list's columns: the one model of its text and JSON output */
enum {
	POL_COL_NAME, POL_COL_HOOK, POL_COL_PROG, POL_COL_ATTACHED,
	POL_COL_SCOPE, POL_COL_MODE, POL_COL_RUNS, POL_COL_KILLS, POL_NR_COLS
};

static const struct col list_cols[POL_NR_COLS] = {
	[POL_COL_NAME] = { "name", "NAME", COL_STR, 0, "the policy's name" },
	[POL_COL_HOOK] = { "hook", "HOOK", COL_STR, 0, "oom, psi or oom+psi" },
	[POL_COL_PROG] = { "prog_id", "PROG", COL_U64, 0, "the BPF program id" },
	[POL_COL_ATTACHED] =
		{ "attached", "ATTACHED", COL_STR, 0, "when it was attached" },
	[POL_COL_SCOPE] =
		{ "scope", "SCOPE", COL_STR, 0, "its cgroup, or system" },
	[POL_COL_MODE] = { "mode", "MODE", COL_STR, 0,
		"kill, dry-run, incomplete (its attach was interrupted: detach it), or orphaned (its scope was removed: it applies nowhere)" },
	[POL_COL_RUNS] = { "runs", "RUNS", COL_U64, 0, "times the kernel ran it" },
	[POL_COL_KILLS] = { "kills", "KILLS", COL_U64, 0, "processes it killed" },
};

const struct listing policy_listing = { list_cols, POL_NR_COLS };

/* Said on every listing of an orphaned policy: it protects nothing */
static void orphan_warn(const struct policy_meta *meta, const char *path)
{
	char now[PATH_MAX];
	struct cgroup_ref cg;

	if (path[0] != '/') {
		p_info("warning: policy %s applies nowhere: its scope, cgroup #%llu, was removed; detach it",
		       meta->name, (unsigned long long)meta->scope_id);
		return;
	}
	now[0] = '\0';
	if (!cgroup_parse(path, &cg) && !cgroup_id_from_path(cg.fspath, &cg.id))
		snprintf(now, sizeof(now), " (%s now is another cgroup: attach it there again, or run oomctl apply)",
			 path);
	p_info("warning: policy %s applies nowhere: its scope %s (cgroup #%llu) was removed%s; detach it",
	       meta->name, path, (unsigned long long)meta->scope_id, now);
}

static const char *policy_mode(const struct policy_info *info)
{
	if (info->meta.flags & POLICY_ATTACHING)
		return "incomplete";
	if (info->orphaned)
		return "orphaned";
	if (info->meta.flags & POLICY_DRY_RUN)
		return "dry-run";
	return info->meta.flags & POLICY_KILL_UNIT ? "kill-unit" : "kill";
}

int policy_list_print(void)
{
	struct policy_info *infos;
	struct table *t;
	int n;

	n = policy_list(&infos);
	if (n < 0)
		return n;
	t = table_open("policies", list_cols, POL_NR_COLS);
	for (int i = 0; i < n; i++) {
		const struct policy_info *p = &infos[i];

		table_row(t);
		table_str(t, POL_COL_NAME, p->meta.name);
		table_str(t, POL_COL_HOOK, hooks_str(p->meta.hooks));
		table_u64(t, POL_COL_PROG, p->st.prog_id);
		table_time(t, POL_COL_ATTACHED, p->meta.attach_time_ns);
		table_str(t, POL_COL_SCOPE, p->scope);
		table_str(t, POL_COL_MODE, policy_mode(p));
		if (p->st.runs_known)
			table_u64(t, POL_COL_RUNS, p->st.runs);
		else
			table_str(t, POL_COL_RUNS, NULL);
		table_u64(t, POL_COL_KILLS, p->st.kills);
	}
	table_close(t);
	/* After the table, which a pager or a script reads first */
	for (int i = 0; i < n; i++)
		if (infos[i].orphaned)
			orphan_warn(&infos[i].meta, infos[i].scope);
	free(infos);
	return 0;
}

int policy_show_print(const char *name)
{
	struct policy_info info;
	const struct policy_meta *meta = &info.meta;
	const struct policy_stats *st = &info.st;
	int err = policy_show(name, &info);

	if (err)
		return err;
	out_str("name", "name:      %s\n", meta->name);
	out_str("source", "source:    %s\n", meta->source);
	out_str("hook", "hook:      %s\n", hooks_str(meta->hooks));
	out_u64("prog_id", "prog id:   %s\n", st->prog_id);
	out_u64("link_id", "link id:   %s\n", st->link_id);
	out_u64("cookie", "cookie:    %s\n", meta->cookie);
	out_time("attached", "attached:  %s\n", meta->attach_time_ns);
	out_str("scope", "scope:     %s\n", info.scope);
	out_bool("dry_run", "dry-run:   %s\n", meta->flags & POLICY_DRY_RUN);
	out_bool("kill_unit", "kill-unit: %s\n", meta->flags & POLICY_KILL_UNIT);
	out_bool("incomplete", "incomplete: %s\n", meta->flags & POLICY_ATTACHING);
	out_bool("orphaned", "orphaned:  %s\n", info.orphaned);
	if (st->runs_known)
		out_u64("runs", "runs:      %s\n", st->runs);
	else
		out_str("runs", "runs:      %s\n", NULL);
	out_u64("missed", "missed:    %s\n", st->missed);
	out_u64("kills", "kills:     %s\n", st->kills);
	if (info.orphaned)
		orphan_warn(meta, info.scope);
	return 0;
}

void policy_attached_print(const struct policy_attached *res, bool dry_run)
{
	out_str("name", "attached policy %s", res->name);
	out_u64("prog_id", " (prog id %s", res->prog_id);
	out_u64("link_id", ", link id %s)", res->link_id);
	out_bool("dry_run", NULL, dry_run);
	if (dry_run)
		out_text(", dry-run: it logs victims and kills nothing");
	out_newline();
}

void policy_detached_print(const char *name)
{
	out_str("detached", "detached policy %s", name);
	out_newline();
}

/* explain's candidates */
enum {
	EX_COL_RANK, EX_COL_CGROUP, EX_COL_USAGE, EX_COL_CACHE, EX_COL_PGSCAN,
	EX_COL_WINDOW, EX_COL_MARKS, EX_COL_PID, EX_COL_COMM, EX_NR_COLS
};

static const struct col cols[EX_NR_COLS] = {
	[EX_COL_RANK] = { "rank", "RANK", COL_U64, 0,
		"order of preference; - if skipped" },
	[EX_COL_CGROUP] = { "cgroup", "CGROUP", COL_STR, 0,
		"the unit (leaf or oom.group cgroup)" },
	[EX_COL_USAGE] = { "usage", "USAGE", COL_BYTES, 0,
		"memory as the policy compares it" },
	[EX_COL_CACHE] = { "cache", "CACHE", COL_BYTES, 0,
		"page cache left out (largest-leaf)" },
	[EX_COL_PGSCAN] = { "pgscan", "PGSCAN", COL_U64, 0,
		"pages reclaim scanned in the window (oomd)" },
	[EX_COL_WINDOW] = { "window_us", "WINDOW", COL_USEC, 0,
		"how far back the window goes (oomd)" },
	[EX_COL_MARKS] = { "marks", "MARKS", COL_STR, 0,
		"empty (no task), protected (-1000), omit, avoid, group" },
	[EX_COL_PID] = { "pid", "PID", COL_U64, 0, "the process it would kill" },
	[EX_COL_COMM] = { "comm", "COMM", COL_STR, 0, "its command" },
};

static const char *verdict_str(const struct policy_explained *e)
{
	switch (e->args.verdict) {
	case OOM_EXPLAIN_KILL:
		return e->dry_run ? "dry-run" : "kill";
	case OOM_EXPLAIN_NO_VICTIM:
		return "no-victim";
	case OOM_EXPLAIN_OUT_OF_SCOPE:
		return "out-of-scope";
	case OOM_EXPLAIN_DEFERS:
		return "defers";
	}
	return "unknown";
}

static void print_marks(struct table *t, uint32_t flags)
{
	char buf[64] = "";

	if (flags & OOM_EXPLAIN_EMPTY)
		strcat(buf, ",empty");
	if (flags & OOM_EXPLAIN_PROTECTED)
		strcat(buf, ",protected");
	if (flags & OOM_EXPLAIN_OMIT)
		strcat(buf, ",omit");
	if (flags & OOM_EXPLAIN_AVOID)
		strcat(buf, ",avoid");
	if (flags & OOM_EXPLAIN_GROUP)
		strcat(buf, ",group");
	table_str(t, EX_COL_MARKS, buf[0] ? buf + 1 : NULL);
}

static void print_explained(const struct policy_explained *e)
{
	const uint32_t skip = OOM_EXPLAIN_PROTECTED | OOM_EXPLAIN_OMIT |
			      OOM_EXPLAIN_EMPTY;
	const struct oom_explain_args *a = &e->args;
	char buf[PATH_MAX], txt[64];
	bool pgscan = false;
	uint64_t rank = 0;
	struct table *t;

	uint64_t victim_unit = a->verdict == OOM_EXPLAIN_KILL ||
			       a->verdict == OOM_EXPLAIN_DEFERS ?
			       a->victim_cgroup_id : 0;

	for (size_t i = 0; i < e->nr; i++)
		pgscan |= e->recs[i].flags & OOM_EXPLAIN_PGSCAN;

	out_open_object(NULL);
	out_str("name", "%s", e->name);
	out_str("source", NULL, e->source);
	out_bool("attached", NULL, e->attached);
	out_text(e->attached ? " (attached" : " (not attached");
	out_str("scope", ", scope %s", e->scope_id ?
		cgroup_path_of_id(e->scope_id, buf, sizeof(buf)) : "system");
	out_str("mode", ", %s)", !e->attached ? "kill" : e->dry_run ? "dry-run" :
		e->kill_unit ? "kill-unit" : "kill");
	out_str("verdict", ": %s", verdict_str(e));
	out_str("status", NULL, e->status);
	if (a->verdict == OOM_EXPLAIN_KILL || (a->verdict == OOM_EXPLAIN_DEFERS &&
					       a->victim_pid)) {
		out_open_object("victim");
		out_u64("pid", ", would kill pid %s", a->victim_pid);
		out_str("comm", " (%s)", a->victim_comm);
		out_str("cgroup", " of %s", cgroup_path_of_id(a->victim_cgroup_id,
							     buf, sizeof(buf)));
		out_bytes("rss", ", rss %s", a->victim_rss);
		out_bool("unit", NULL, e->kill_unit);
		if (e->kill_unit)
			out_text(", and the rest of its unit");
		out_close();
	}
	if (e->status)
		out_text(" [%s]", e->status);
	out_newline();
	if (pgscan) {
		/* the window is per unit; say where it comes from */
		out_str("window", "  reclaim window: pgscan since the sampler's tick before last, per unit (%s)\n",
			e->state ? "the attached policy's samples" : "since boot: no samples of an attached oomd");
	}
	if (a->nr_lost) {
		out_u64("lost", "  %s units not shown: the ring was full\n", a->nr_lost);
	}
	if (a->verdict == OOM_EXPLAIN_OUT_OF_SCOPE) {
		out_close();
		return;
	}

	t = table_open("candidates", cols, EX_NR_COLS);
	for (size_t i = 0; i < e->nr; i++) {
		const struct oom_explain_record *r = &e->recs[i];
		bool is_victim = victim_unit && r->cgroup_id == victim_unit &&
				 !(r->flags & skip);

		table_row(t);
		if (r->flags & skip)
			table_str(t, EX_COL_RANK, NULL);
		else
			table_u64(t, EX_COL_RANK, ++rank);
		table_str(t, EX_COL_CGROUP,
			  cgroup_path_of_id(r->cgroup_id, buf, sizeof(buf)));
		table_bytes(t, EX_COL_USAGE, r->usage);
		if (r->flags & OOM_EXPLAIN_CACHE)
			table_bytes(t, EX_COL_CACHE, r->cache);
		else
			table_str(t, EX_COL_CACHE, NULL);
		if (r->flags & OOM_EXPLAIN_PGSCAN) {
			uint64_t since = r->last_ns ? a->now_ns - r->last_ns : a->now_ns;

			table_u64(t, EX_COL_PGSCAN, r->pgscan_delta);
			if (r->last_ns)
				snprintf(txt, sizeof(txt), "%.1fs", since / 1e9);
			else
				snprintf(txt, sizeof(txt), "boot");
			table_u64_as(t, EX_COL_WINDOW, since / 1000, txt);
		} else {
			table_str(t, EX_COL_PGSCAN, NULL);
			table_str(t, EX_COL_WINDOW, NULL);
		}
		print_marks(t, r->flags);
		if (is_victim && a->victim_pid) {
			table_u64(t, EX_COL_PID, a->victim_pid);
			table_str(t, EX_COL_COMM, a->victim_comm);
		} else {
			table_str(t, EX_COL_PID, NULL);
			table_str(t, EX_COL_COMM, NULL);
		}
	}
	table_close(t);
	out_close();
}

int policy_explain_print(const struct policy_explain_opts *opts)
{
	struct policy_explanation x;
	const char *oom;
	char buf[PATH_MAX];
	int err;

	err = policy_explain(opts, &x);
	if (err)
		return err;
	oom = x.oom_id ? opts->oom->path : "system-wide";
	out_str("oom", "OOM: %s\n", oom);
	out_open_array("policies");
	for (int i = 0; i < x.n; i++) {
		const struct policy_explained *e = &x.policies[i];

		if (!e->failed) {
			print_explained(e);
			continue;
		}
		out_open_object(NULL);
		out_str("name", "%s", e->name);
		out_str("source", NULL, e->source);
		out_str("verdict", ": %s", "unknown");
		out_str("error", " (%s)\n", e->why);
		out_close();
	}
	out_close();
	if (x.single) {
		const struct policy_explained *e = &x.policies[0];

		if (!policy_explained_kills(e))
			snprintf(buf, sizeof(buf), "not %s (%s)", e->name,
				 verdict_str(e));
		out_str("would_act", "would act: %s\n",
			policy_explained_kills(e) ? e->name : buf);
	} else {
		if (!x.n)
			out_text("no OOM policy is attached\n");
		if (x.unknown) {
			snprintf(buf, sizeof(buf), "unknown (%s cannot be explained)",
				 x.unknown);
			out_str("would_act", "would act: %s\n", buf);
		} else {
			out_str("would_act", "would act: %s\n",
				x.actor ?: "the kernel's OOM killer");
		}
	}
	policy_explanation_free(&x);
	return 0;
}
