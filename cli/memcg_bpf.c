/*
 * memcg list / memcg show: the memory cgroups as the kernel sees them, read
 * in the kernel by bpf/memcg_walk.bpf.c (memcg kfuncs, page counters, PSI,
 * the css_task iterator), never from cgroupfs files.
 *
 * The walker is a syscall program run with BPF_PROG_TEST_RUN. Each run
 * writes fixed-size records into a BPF ring buffer until the walk ends or
 * the ring is full; then we drain the ring and run it again from where it
 * stopped (skip = positions done), so a hierarchy of any size is listed in
 * a few runs with bounded memory on both sides. A cgroup created or removed
 * between two runs may be missed or seen twice (see memcg_walk.bpf.c): the
 * walker notices most such shifts (-EAGAIN) and we restart the walk a few
 * times, then finish best effort, dropping duplicates and any memcg whose
 * parent went missing (its path is unknown).
 *
 * Paths are built here from the records' names and parent ids; the walk
 * is pre-order, so a parent always comes before its children, and the
 * walk's root has the path the user gave.
 */
#include <errno.h>
#include <inttypes.h>
#include <langinfo.h>
#include <limits.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "backend.h"
#include "oom_shared.h"
#include "memcg_walk.skel.h"

/* Full restarts after the hierarchy changed under a resumed walk */
#define WALK_RESTARTS_MAX	3

/* Test and benchmark knob: the ring's size in bytes (a power of two, at
 * least a page), to exercise resumes on small hierarchies. */
#define RING_SIZE_ENV		"OOMCTL_MEMCG_RING_SIZE"

/* What the walker needs from the BPF OOM series (kernel/patches/) */
static const char *const walk_kfuncs[] = {
	"bpf_get_root_mem_cgroup",
	"bpf_get_mem_cgroup",
	"bpf_put_mem_cgroup",
	"bpf_mem_cgroup_usage",
	"bpf_mem_cgroup_page_state",
	"bpf_mem_cgroup_events",
	"bpf_mem_cgroup_memory_events",
	"bpf_mem_cgroup_flush_stats",
};

struct walk {
	struct memcg_record *recs;
	size_t nr, cap;
	unsigned int runs;	/* BPF_PROG_TEST_RUNs */
	unsigned int restarts;	/* after -EAGAIN */
	bool oom;		/* out of memory in on_record() */
};

/* A memcg of the result, in output order */
struct node {
	const struct memcg_record *rec;
	char *path;
	unsigned int depth;	/* below the walk's root */
	bool last;		/* the last of its siblings */
};

static void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ?: 1, size);

	if (!p) {
		fputs("Error: out of memory\n", stderr);
		exit(EXIT_FAILURE);
	}
	return p;
}

/*
 * Does the running kernel have the kfuncs? Answered from its BTF without
 * any bpf() call, so a kernel without the series is never asked to load
 * anything.
 */
static int check_kernel(void)
{
	struct btf *btf = btf__load_vmlinux_btf();
	const char *missing = NULL;
	size_t i;

	if (!btf) {
		p_err("this kernel lacks BPF OOM support: no BTF "
		      "(/sys/kernel/btf/vmlinux)");
		return -EOPNOTSUPP;
	}
	for (i = 0; i < sizeof(walk_kfuncs) / sizeof(*walk_kfuncs); i++)
		if (btf__find_by_name_kind(btf, walk_kfuncs[i],
					   BTF_KIND_FUNC) < 0) {
			missing = walk_kfuncs[i];
			break;
		}
	btf__free(btf);
	if (missing) {
		p_err("this kernel lacks BPF OOM support: no kfunc %s", missing);
		return -EOPNOTSUPP;
	}
	return 0;
}

static int ring_size(uint32_t *size)
{
	const char *env = getenv(RING_SIZE_ENV);
	long page = sysconf(_SC_PAGESIZE);
	uint64_t val;

	*size = MEMCG_WALK_RING_SIZE;
	if (!env || !*env)
		return 0;
	if (parse_size(env, &val) || val < (uint64_t)page || val > 1U << 30 ||
	    (val & (val - 1))) {
		p_err("%s=%s: expected a power of two from %ld to 1G",
		      RING_SIZE_ENV, env, page);
		return -EINVAL;
	}
	*size = val;
	return 0;
}

static int walker_load(struct memcg_walk_bpf **skelp)
{
	/* without -d: for the verifier's words if the load fails */
	static char log[64 * 1024];
	LIBBPF_OPTS(bpf_object_open_opts, opts,
		    .kernel_log_level = debug ? 1 : 0,
		    .kernel_log_buf = debug ? NULL : log,
		    .kernel_log_size = debug ? 0 : sizeof(log));
	struct memcg_walk_bpf *skel;
	uint32_t size;
	int err;

	err = check_kernel() ?: ring_size(&size);
	if (err)
		return err;

	skel = memcg_walk_bpf__open_opts(&opts);
	if (!skel) {
		err = -errno;
		p_err("cannot open the memcg walker (BPF): %s", strerror(-err));
		return err;
	}
	err = bpf_map__set_max_entries(skel->maps.records, size);
	if (!err)
		err = memcg_walk_bpf__load(skel);
	if (err) {
		if (err == -ESRCH || strstr(log, "calling kernel function")) {
			/* a kfunc missing, or not allowed in syscall programs */
			p_err("this kernel lacks BPF OOM support: it refused the "
			      "memcg kfuncs%s", debug ? "" : " (-d for details)");
			err = -EOPNOTSUPP;
		} else {
			p_err("cannot load the memcg walker (BPF): %s%s",
			      strerror(-err),
			      debug ? "" : " (-d shows the verifier log)");
		}
		memcg_walk_bpf__destroy(skel);
		return err;
	}
	*skelp = skel;
	return 0;
}

static int on_record(void *ctx, void *data, size_t size)
{
	struct walk *w = ctx;
	size_t cap;
	void *p;

	if (size < sizeof(*w->recs))
		return 0;	/* not ours: cannot happen */
	if (w->nr == w->cap) {
		cap = w->cap ? 2 * w->cap : 1024;
		p = realloc(w->recs, cap * sizeof(*w->recs));
		if (!p) {
			w->oom = true;
			return -ENOMEM;
		}
		w->recs = p;
		w->cap = cap;
	}
	memcpy(&w->recs[w->nr++], data, sizeof(*w->recs));
	return 0;
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/*
 * Run the walker until the walk is done: every memcg below @cg (NULL: the
 * root) in pre-order, into @w. Errors are reported.
 */
static int walk_run(const struct cgroup_ref *cg, uint32_t flags, struct walk *w)
{
	struct memcg_walk_args args = {};
	LIBBPF_OPTS(bpf_test_run_opts, opts, .ctx_in = &args,
		    .ctx_size_in = sizeof(args));
	struct memcg_walk_bpf *skel = NULL;
	struct ring_buffer *rb = NULL;
	uint64_t pos = 0, last_id = 0;
	bool check = true;
	double start = now_ms(), loaded;
	int err, n, fd;

	err = walker_load(&skel);
	if (err)
		return err;
	loaded = now_ms();
	rb = ring_buffer__new(bpf_map__fd(skel->maps.records), on_record, w,
			      NULL);
	if (!rb) {
		err = -errno;
		p_err("cannot map the memcg walker's ring buffer: %s",
		      strerror(-err));
		goto out;
	}
	fd = bpf_program__fd(skel->progs.memcg_walk);

	for (;;) {
		args = (struct memcg_walk_args){
			.root_id = cg ? cg->id : 0,
			.skip = pos,
			.skip_id = check ? last_id : 0,
			.flags = flags,
		};
		if (bpf_prog_test_run_opts(fd, &opts)) {
			err = -errno;
			p_err("cannot run the memcg walker (BPF): %s",
			      strerror(-err));
			goto out;
		}
		w->runs++;
		n = ring_buffer__consume(rb);
		if (w->oom) {
			p_err("out of memory");
			err = -ENOMEM;
			goto out;
		}
		if (n < 0 || (unsigned int)n != args.nr_records) {
			p_err("memcg walker: %u records written, %d read",
			      args.nr_records, n);
			err = n < 0 ? n : -EIO;
			goto out;
		}
		if (args.err == -EAGAIN) {
			/* the hierarchy changed before the resume point */
			if (w->restarts++ < WALK_RESTARTS_MAX) {
				w->nr = 0;
				pos = last_id = 0;
			} else {
				check = false;	/* best effort from here */
			}
			continue;
		}
		if (args.err == -ENOENT) {
			p_err("cgroup '%s' not found", cg ? cg->arg : "/");
			err = -ENOENT;
			goto out;
		}
		if (args.err == -ENODEV) {
			if (cg && cg->id != 1)
				p_err("cgroup '%s' has no memory controller: "
				      "memory is not in its parent's "
				      "cgroup.subtree_control", cg->arg);
			else
				p_err("the memory controller is disabled");
			err = -ENODEV;
			goto out;
		}
		if (args.err) {
			p_err("memcg walker failed: %s", strerror(-args.err));
			err = args.err;
			goto out;
		}
		pos = args.pos;
		last_id = args.last_id;
		if (args.done)
			break;
		if (!args.nr_records) {
			p_err("memcg walker: the ring buffer holds no record");
			err = -ENOSPC;
			goto out;
		}
	}
	if (debug)
		fprintf(stderr, "memcg walk: %zu records in %u runs (%u "
			"restarts), ring %u KiB; load %.1f ms, walk %.1f ms\n",
			w->nr, w->runs, w->restarts,
			bpf_map__max_entries(skel->maps.records) / 1024,
			loaded - start, now_ms() - loaded);
out:
	ring_buffer__free(rb);
	memcg_walk_bpf__destroy(skel);
	return err;
}

/* id -> index + 1 of the record with that id, open addressing */
struct id_map {
	uint64_t *ids;
	size_t *idx;
	size_t mask;
};

static void id_map_init(struct id_map *m, size_t n)
{
	size_t cap = 16;

	while (cap < 2 * n)
		cap *= 2;
	m->ids = xcalloc(cap, sizeof(*m->ids));
	m->idx = xcalloc(cap, sizeof(*m->idx));
	m->mask = cap - 1;
}

static size_t *id_map_slot(struct id_map *m, uint64_t id)
{
	size_t h = (id * 0x9E3779B97F4A7C15ULL) >> 20;

	for (;; h++) {
		h &= m->mask;
		if (!m->idx[h] || m->ids[h] == id) {
			m->ids[h] = id;
			return &m->idx[h];
		}
	}
}

static void id_map_free(struct id_map *m)
{
	free(m->ids);
	free(m->idx);
}

struct child {
	size_t parent;		/* index in the records */
	size_t rec;
	const char *name;
};

static int child_cmp(const void *a, const void *b)
{
	const struct child *x = a, *y = b;

	if (x->parent != y->parent)
		return x->parent < y->parent ? -1 : 1;
	return strcmp(x->name, y->name);
}

static char *path_join(const char *parent, const char *name)
{
	char *p;

	if (asprintf(&p, "%s%s%s", parent, strcmp(parent, "/") ? "/" : "",
		     name) < 0) {
		fputs("Error: out of memory\n", stderr);
		exit(EXIT_FAILURE);
	}
	return p;
}

/*
 * The records of @w as a pre-order walk from the root record, children
 * sorted by name, with paths: @nodes gets up to w->nr entries. Returns
 * their number; duplicates and orphans (parent not seen) are left out.
 */
static size_t walk_order(const struct walk *w, const char *root_path,
			 struct node *nodes)
{
	size_t i, n = 0, nr_child = 0, top = 0, *first, *count, *next, *stack;
	struct child *children;
	struct id_map map;
	char **paths;

	if (!w->nr)
		return 0;
	id_map_init(&map, w->nr);
	children = xcalloc(w->nr, sizeof(*children));
	paths = xcalloc(w->nr, sizeof(*paths));
	first = xcalloc(w->nr, sizeof(*first));
	count = xcalloc(w->nr, sizeof(*count));

	/* the first record is the walk's root; the others find a parent */
	*id_map_slot(&map, w->recs[0].id) = 1;
	for (i = 1; i < w->nr; i++) {
		size_t *slot = id_map_slot(&map, w->recs[i].id), parent;

		if (*slot)
			continue;		/* seen already */
		parent = *id_map_slot(&map, w->recs[i].parent_id);
		if (!parent)
			continue;		/* an orphan: no path */
		*slot = i + 1;
		children[nr_child++] = (struct child){
			.parent = parent - 1, .rec = i, .name = w->recs[i].name,
		};
	}
	qsort(children, nr_child, sizeof(*children), child_cmp);
	for (i = nr_child; i-- > 0;) {
		first[children[i].parent] = i;
		count[children[i].parent]++;
	}

	/* iterative pre-order: stack of records, next[] their next child */
	stack = xcalloc(w->nr, sizeof(*stack));
	next = xcalloc(w->nr, sizeof(*next));
	paths[0] = strdup(root_path);
	nodes[n++] = (struct node){ .rec = &w->recs[0], .path = paths[0],
				    .last = true };
	stack[top++] = 0;
	while (top) {
		size_t r = stack[top - 1], c;
		struct child *ch;

		if (next[r] == count[r]) {
			top--;
			continue;
		}
		ch = &children[first[r] + next[r]++];
		c = ch->rec;
		paths[c] = path_join(paths[r], ch->name);
		nodes[n++] = (struct node){
			.rec = &w->recs[c], .path = paths[c], .depth = top,
			.last = next[r] == count[r],
		};
		stack[top++] = c;
	}

	free(stack);
	free(next);
	free(first);
	free(count);
	free(paths);		/* the strings belong to the nodes now */
	free(children);
	id_map_free(&map);
	return n;
}

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

/*
 * PSI cells: plain "1.25" (percent, right-aligned), JSON hundredths of a
 * percent as an integer (output.h has no fractional numbers), null if the
 * kernel keeps no PSI for the cgroup.
 */
static void table_psi(struct table *t, const struct memcg_record *r, int full)
{
	char buf[32];
	uint64_t v = psi_centipct(r->psi_avg[full][0]);

	if (!(r->flags & MEMCG_REC_PSI))
		table_str(t, NULL);
	else if (json_output)
		table_u64(t, v);
	else
		table_str(t, fmt_centipct(v, buf, sizeof(buf)));
}

/* Box-drawing branches where the locale can show them, else ASCII */
static bool utf8_locale(void)
{
	char old[64];
	const char *cur = setlocale(LC_CTYPE, NULL);
	bool utf8;

	snprintf(old, sizeof(old), "%s", cur ?: "C");
	if (!setlocale(LC_CTYPE, ""))
		return false;
	utf8 = !strcmp(nl_langinfo(CODESET), "UTF-8");
	setlocale(LC_CTYPE, old);
	return utf8;
}

/* "│ ├─name": the tree's branches down to @n, into @buf */
static const char *tree_name(const struct node *nodes, size_t i, bool *open,
			     bool utf8, char *buf, size_t size)
{
	const struct node *n = &nodes[i];
	size_t len = 0;
	unsigned int d;

	if (!n->depth)
		return n->path;
	/* open[d]: the ancestor at depth d has siblings still to come */
	open[n->depth] = !n->last;
	for (d = 1; d < n->depth && len < size; d++)
		len += snprintf(buf + len, size - len, "%s",
				open[d] ? utf8 ? "│ " : "| " : "  ");
	if (len < size)
		snprintf(buf + len, size - len, "%s%s",
			 n->last ? utf8 ? "└─" : "`-" : utf8 ? "├─" : "|-",
			 strrchr(n->path, '/') + 1);
	return buf;
}

static const struct col list_cols[] = {
	{ "path",			"PATH",		COL_STR },
	{ "current_bytes",		"CURRENT",	COL_BYTES },
	{ "anon_bytes",			"ANON",		COL_BYTES },
	{ "file_bytes",			"FILE",		COL_BYTES },
	{ "swap_bytes",			"SWAP",		COL_BYTES },
	{ "max_bytes",			"MAX",		COL_BYTES },
	{ "high_bytes",			"HIGH",		COL_BYTES },
	{ "oom",			"OOM",		COL_U64 },
	{ "oom_kill",			"KILLS",	COL_U64 },
	/* plain: a percentage, right-aligned like the numbers */
	{ "psi_some_avg10_centipct",	"SOME10",	COL_U64 },
	{ "psi_full_avg10_centipct",	"FULL10",	COL_U64 },
	{ "procs",			"PROCS",	COL_U64 },
};
#define NR_COLS	(sizeof(list_cols) / sizeof(*list_cols))

static void table_memcg(struct table *t, const struct memcg_record *r)
{
	table_bytes(t, pages_bytes(r->usage));
	table_bytes(t, pages_bytes(r->anon));
	table_bytes(t, pages_bytes(r->file));
	table_bytes(t, pages_bytes(r->swap));
	table_bytes(t, limit_bytes(r->max));
	table_bytes(t, limit_bytes(r->high));
	table_u64(t, r->events[MEMCG_EV_OOM]);
	table_u64(t, r->events[MEMCG_EV_OOM_KILL]);
	table_psi(t, r, 0);
	table_psi(t, r, 1);
	table_u64(t, r->nr_procs);
}

/*
 * Plain: the path first; with `tree`, the branches last, as `ps f` draws
 * them: the table pads by bytes, and box-drawing characters are three
 * bytes wide for one column. JSON: the same rows either way.
 */
int memcg_list(const struct memcg_list_opts *opts)
{
	bool tree = opts->tree && !json_output, utf8 = tree && utf8_locale();
	struct col cols[NR_COLS];
	struct walk w = {};
	struct node *nodes;
	struct table *t;
	char name[PATH_MAX];
	size_t i, n;
	bool *open;
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
	open = xcalloc(n + 1, sizeof(*open));

	if (tree) {
		memcpy(cols, list_cols + 1, sizeof(cols) - sizeof(*cols));
		cols[NR_COLS - 1] = (struct col){ "path", "CGROUP", COL_STR };
	} else {
		memcpy(cols, list_cols, sizeof(cols));
	}
	t = table_open("memcgs", cols, NR_COLS);
	for (i = 0; i < n; i++) {
		const struct memcg_record *r = nodes[i].rec;

		table_row(t);
		if (!tree)
			table_str(t, nodes[i].path);
		table_memcg(t, r);
		if (tree)
			table_str(t, tree_name(nodes, i, open, utf8, name,
					       sizeof(name)));
		/* JSON only: where the row sits in the hierarchy */
		out_u64("id", NULL, r->id);
		out_u64("level", NULL, r->level);
		free(nodes[i].path);
	}
	table_close(t);
	free(open);
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

		if (json_output)
			out_u64(avg_keys[i], NULL, v);
		else
			out_str(NULL, avg_fmts[i],
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
