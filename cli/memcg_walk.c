/*
 * The memcg walk behind memcg list / memcg show: the memory cgroups as the
 * kernel sees them, read in the kernel by bpf/memcg_walk.bpf.c (memcg
 * kfuncs, page counters, PSI, the css_task iterator), never from cgroupfs
 * files. Rendering is memcg_render.c's.
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
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "backend.h"
#include "kernel.h"
#include "memcg_walk.h"
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
	NULL
};

void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ?: 1, size);

	if (!p) {
		fputs("Error: out of memory\n", stderr);
		exit(EXIT_FAILURE);
	}
	return p;
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

	err = kernel_check(walk_kfuncs) ?: ring_size(&size);
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
int walk_run(const struct cgroup_ref *cg, uint32_t flags, struct walk *w)
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
size_t walk_order(const struct walk *w, const char *root_path,
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
