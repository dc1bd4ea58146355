/*
 * memcg list / memcg show: the records of the memcg walk (memcg_walk.c)
 * rendered as a table, a tree or one cgroup's details, sizes in bytes and
 * PSI in percent.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "main.h"
#include "memcg_walk.h"

static uint64_t page_size(void)
{
	static uint64_t size;

	if (!size)
		size = sysconf(_SC_PAGESIZE);
	return size;
}

static uint64_t pages_bytes(uint64_t pages)
{
	return pages * page_size();
}

/* A page counter's limit in bytes, OUT_BYTES_MAX for "max" */
static uint64_t limit_bytes(uint64_t pages)
{
	/* PAGE_COUNTER_MAX of 64-bit kernels: LONG_MAX / PAGE_SIZE */
	if (pages >= (uint64_t)LONG_MAX / page_size())
		return OUT_BYTES_MAX;
	return pages_bytes(pages);
}

/* PSI's fixed point (FIXED_1 = 1 << 11) as hundredths of a percent, the
 * precision of /proc/pressure (LOAD_INT, LOAD_FRAC) */
static uint64_t psi_centipct(uint64_t avg)
{
	return (avg >> 11) * 100 + (((avg & 2047) * 100) >> 11);
}

static char *fmt_centipct(uint64_t v, char *buf, size_t size)
{
	snprintf(buf, size, "%" PRIu64 ".%02" PRIu64, v / 100, v % 100);
	return buf;
}

/* memcg list's columns: the one model of its text and JSON output */
enum {
	MEM_COL_PATH, MEM_COL_CURRENT, MEM_COL_ANON, MEM_COL_FILE,
	MEM_COL_SWAP, MEM_COL_MAX, MEM_COL_HIGH, MEM_COL_OOM, MEM_COL_KILLS,
	MEM_COL_SOME10, MEM_COL_FULL10, MEM_COL_PROCS, MEM_COL_ID,
	MEM_COL_LEVEL, MEM_NR_COLS
};

static const struct col list_cols[MEM_NR_COLS] = {
	[MEM_COL_PATH] = { "path", "PATH", COL_STR, 0,
		"the cgroup (in a tree: its name)" },
	[MEM_COL_CURRENT] =
		{ "current_bytes", "CURRENT", COL_BYTES, 0, "memory.current" },
	[MEM_COL_ANON] = { "anon_bytes", "ANON", COL_BYTES, 0, "anonymous memory" },
	[MEM_COL_FILE] = { "file_bytes", "FILE", COL_BYTES, 0, "page cache" },
	[MEM_COL_SWAP] =
		{ "swap_bytes", "SWAP", COL_BYTES, 0, "memory.swap.current" },
	[MEM_COL_MAX] =
		{ "max_bytes", "MAX", COL_BYTES, 0, "memory.max (null: max)" },
	[MEM_COL_HIGH] =
		{ "high_bytes", "HIGH", COL_BYTES, 0, "memory.high (null: max)" },
	[MEM_COL_OOM] = { "oom", "OOM", COL_U64, 0, "memory.events oom" },
	[MEM_COL_KILLS] =
		{ "oom_kill", "KILLS", COL_U64, 0, "memory.events oom_kill" },
	/* plain: a percentage; JSON: hundredths of a percent */
	[MEM_COL_SOME10] = { "psi_some_avg10_centipct", "SOME10", COL_U64, 0,
		"memory pressure, some avg10 (%)" },
	[MEM_COL_FULL10] = { "psi_full_avg10_centipct", "FULL10", COL_U64, 0,
		"memory pressure, full avg10 (%)" },
	[MEM_COL_PROCS] =
		{ "procs", "PROCS", COL_U64, 0, "processes in the cgroup" },
	[MEM_COL_ID] = { "id", "ID", COL_U64, COL_EXTRA, "the cgroup id" },
	[MEM_COL_LEVEL] =
		{ "level", "LEVEL", COL_U64, COL_EXTRA, "depth below the root" },
};

const struct listing memcg_listing = { list_cols, MEM_NR_COLS };

/*
 * Where column @col of list_cols is in the table: in a tree the path
 * column comes last (memcg_list()).
 */
static unsigned int col_at(bool tree, unsigned int col)
{
	if (!tree)
		return col;
	return col == MEM_COL_PATH ? MEM_NR_COLS - 1 : col - 1;
}

/*
 * PSI cells: plain "1.25" (percent, right-aligned), JSON hundredths of a
 * percent as an integer (output.h has no fractional numbers), null if the
 * kernel keeps no PSI for the cgroup.
 */
static void table_psi(struct table *t, unsigned int col,
		      const struct memcg_record *r, int full)
{
	char buf[32];
	uint64_t v = psi_centipct(r->psi_avg[full][0]);

	if (!(r->flags & MEMCG_REC_PSI))
		table_str(t, col, NULL);
	else
		table_u64_as(t, col, v, fmt_centipct(v, buf, sizeof(buf)));
}

/* The cells of one row but its path */
static void table_memcg(struct table *t, bool tree, const struct memcg_record *r)
{
	table_bytes(t, col_at(tree, MEM_COL_CURRENT), pages_bytes(r->usage));
	table_bytes(t, col_at(tree, MEM_COL_ANON), pages_bytes(r->anon));
	table_bytes(t, col_at(tree, MEM_COL_FILE), pages_bytes(r->file));
	table_bytes(t, col_at(tree, MEM_COL_SWAP), pages_bytes(r->swap));
	table_bytes(t, col_at(tree, MEM_COL_MAX), limit_bytes(r->max));
	table_bytes(t, col_at(tree, MEM_COL_HIGH), limit_bytes(r->high));
	table_u64(t, col_at(tree, MEM_COL_OOM), r->events[MEMCG_EV_OOM]);
	table_u64(t, col_at(tree, MEM_COL_KILLS), r->events[MEMCG_EV_OOM_KILL]);
	table_psi(t, col_at(tree, MEM_COL_SOME10), r, 0);
	table_psi(t, col_at(tree, MEM_COL_FULL10), r, 1);
	table_u64(t, col_at(tree, MEM_COL_PROCS), r->nr_procs);
	table_u64(t, col_at(tree, MEM_COL_ID), r->id);
	table_u64(t, col_at(tree, MEM_COL_LEVEL), r->level);
}

/*
 * Plain: the path first; with `tree`, libsmartcols draws the branches in
 * the path column, which then comes last by default (as `ps f` draws them)
 * under the header CGROUP: the root row has its path, the others their
 * name. JSON: the same rows either way, with full paths (no tree).
 */
int memcg_list(const struct memcg_list_opts *opts)
{
	bool tree = opts->tree && out_draws_trees();
	struct col cols[MEM_NR_COLS];
	struct walk w = {};
	struct node *nodes;
	struct table *t;
	size_t i, n;
	int err;

	err = walk_run(opts->root, 0, &w);
	if (err)
		goto out;
	nodes = xcalloc(w.nr, sizeof(*nodes));
	n = walk_order(&w, opts->root ? opts->root->path : "/", nodes);
	if (!n) {
		/* the root went offline: removed a moment ago */
		p_err("cgroup '%s' not found", opts->root ? opts->root->arg :
		      "/");
		free(nodes);
		err = -ENOENT;
		goto out;
	}

	for (i = 0; i < MEM_NR_COLS; i++)
		cols[col_at(tree, i)] = list_cols[i];
	if (tree) {
		cols[col_at(tree, MEM_COL_PATH)].header = "CGROUP";
		cols[col_at(tree, MEM_COL_PATH)].flags |= COL_TREE;
	}
	t = table_open("memcgs", cols, MEM_NR_COLS);
	for (i = 0; i < n; i++) {
		const char *path = nodes[i].path;

		table_row_at(t, nodes[i].depth);
		if (tree && nodes[i].depth)
			path = strrchr(path, '/') + 1;
		table_str(t, col_at(tree, MEM_COL_PATH), path);
		table_memcg(t, tree, nodes[i].rec);
		free(nodes[i].path);
	}
	table_close(t);
	free(nodes);
out:
	free(w.recs);
	return err;
}

/* "label:" padded, then the value */
static const char *kv(const char *label, char *buf, size_t size)
{
	char l[32];

	snprintf(l, sizeof(l), "%s:", label);
	snprintf(buf, size, "%-17s%%s\n", l);
	return buf;
}

static void show_psi(const struct memcg_record *r, int full)
{
	const char *what = full ? "full" : "some";
	static const char *const avg_keys[] = {
		"avg10_centipct", "avg60_centipct", "avg300_centipct",
	};
	static const char *const avg_fmts[] = {
		"avg10=%s ", "avg60=%s ", "avg300=%s ",
	};
	char label[32], buf[32];
	int i;

	snprintf(label, sizeof(label), "psi %s:", what);
	out_text("%-17s", label);
	out_open_object(what);
	for (i = 0; i < 3; i++) {
		uint64_t v = psi_centipct(r->psi_avg[full][i]);

		out_u64_as(avg_keys[i], avg_fmts[i], v,
			   fmt_centipct(v, buf, sizeof(buf)));
	}
	out_u64("total_usec", "total=%s\n", r->psi_total[full] / 1000);
	out_close();
}

int memcg_show(const struct cgroup_ref *cg)
{
	static const char *const events[MEMCG_EV_NR] = {
		"low", "high", "max", "oom", "oom_kill", "oom_group_kill",
	};
	const struct memcg_record *r;
	struct walk w = {};
	char fmt[64];
	int err, i;

	err = walk_run(cg, MEMCG_WALK_ROOT_ONLY, &w);
	if (err)
		goto out;
	if (!w.nr) {
		p_err("cgroup '%s' not found", cg->arg);	/* just removed */
		err = -ENOENT;
		goto out;
	}
	r = &w.recs[0];

	out_str("path", kv("path", fmt, sizeof(fmt)), cg->path);
	out_u64("id", kv("id", fmt, sizeof(fmt)), r->id);
	out_u64("parent_id", NULL, r->parent_id);
	out_u64("level", kv("level", fmt, sizeof(fmt)), r->level);
	out_u64("procs", kv("procs", fmt, sizeof(fmt)), r->nr_procs);
	out_bytes("current_bytes", kv("current", fmt, sizeof(fmt)),
		  pages_bytes(r->usage));
	out_bytes("anon_bytes", kv("anon", fmt, sizeof(fmt)),
		  pages_bytes(r->anon));
	out_bytes("file_bytes", kv("file", fmt, sizeof(fmt)),
		  pages_bytes(r->file));
	out_bytes("swap_bytes", kv("swap", fmt, sizeof(fmt)),
		  pages_bytes(r->swap));
	out_bytes("min_bytes", kv("min", fmt, sizeof(fmt)), limit_bytes(r->min));
	out_bytes("low_bytes", kv("low", fmt, sizeof(fmt)), limit_bytes(r->low));
	out_bytes("high_bytes", kv("high", fmt, sizeof(fmt)),
		  limit_bytes(r->high));
	out_bytes("max_bytes", kv("max", fmt, sizeof(fmt)), limit_bytes(r->max));
	out_bytes("swap_max_bytes", kv("swap.max", fmt, sizeof(fmt)),
		  limit_bytes(r->swap_max));

	/* memory.events: one line, a JSON object; oom and oom_kill also at
	 * the top as in `memcg list` */
	out_text("%-17s", "events:");
	out_open_object("events");
	for (i = 0; i < MEMCG_EV_NR; i++) {
		snprintf(fmt, sizeof(fmt), "%s%s %%s", i ? " " : "", events[i]);
		out_u64(events[i], fmt, r->events[i]);
	}
	out_close();
	out_newline();
	out_u64("oom", NULL, r->events[MEMCG_EV_OOM]);
	out_u64("oom_kill", NULL, r->events[MEMCG_EV_OOM_KILL]);
	out_u64("pgscan", kv("pgscan", fmt, sizeof(fmt)), r->pgscan);
	out_u64("pgsteal", kv("pgsteal", fmt, sizeof(fmt)), r->pgsteal);

	if (r->flags & MEMCG_REC_PSI) {
		out_u64("psi_some_avg10_centipct", NULL,
			psi_centipct(r->psi_avg[0][0]));
		out_u64("psi_full_avg10_centipct", NULL,
			psi_centipct(r->psi_avg[1][0]));
		out_open_object("psi");
		show_psi(r, 0);
		show_psi(r, 1);
		out_close();
	} else {
		out_str("psi_some_avg10_centipct", NULL, NULL);
		out_str("psi_full_avg10_centipct", NULL, NULL);
		out_str("psi", kv("psi", fmt, sizeof(fmt)), NULL);
	}
out:
	free(w.recs);
	return err;
}
