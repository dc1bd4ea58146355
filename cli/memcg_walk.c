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
 *
 * Loading and verifying the walker costs more than a walk of thousands of
 * memcgs, so the first caller that may write bpffs pins it under
 * bpffs_dir/walker/ (see walker_pinned()) and later calls reuse the pins.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>
#include <linux/magic.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "backend.h"
#include "bpffs.h"
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

static int walker_load(uint32_t size, struct memcg_walk_bpf **skelp)
{
	/* without -d: for the verifier's words if the load fails */
	static char log[64 * 1024];
	LIBBPF_OPTS(bpf_object_open_opts, opts,
		    .kernel_log_level = debug ? 1 : 0,
		    .kernel_log_buf = debug ? NULL : log,
		    .kernel_log_size = debug ? 0 : sizeof(log));
	struct memcg_walk_bpf *skel;
	int err;

	err = kernel_check(walk_kfuncs);
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

/*
 * The walker in use: a private load (skel), or the pinned set, whose folder
 * we hold flock()ed while we run it, because its ring buffer is shared.
 */
struct walker {
	struct memcg_walk_bpf *skel;
	int prog_fd, ring_fd;
	int dir_fd;		/* the locked pin folder, or -1 */
	uint32_t ring_size;
	const char *how;	/* for -d */
};

/* What memcg_walk.c pins under bpffs_dir/WALKER_DIR */
#define WALKER_DIR	"walker"
#define WALKER_PROG	"memcg_walk"
#define WALKER_RING	"records"
#define WALKER_OBJECT	"object"	/* array map: the hash of our object */

/* FNV-1a of the embedded BPF object: another oomctl has another walker */
static uint64_t walker_hash(void)
{
	const unsigned char *p;
	uint64_t h = 0xcbf29ce484222325ULL;
	size_t n;

	p = memcg_walk_bpf__elf_bytes(&n);
	while (n--)
		h = (h ^ *p++) * 0x100000001b3ULL;
	return h;
}

/* A pin of the folder open at @dir_fd, through /proc: not a newer folder
 * renamed to the same name meanwhile */
static int pin_get(int dir_fd, const char *name)
{
	char path[64];
	int fd;

	snprintf(path, sizeof(path), "/proc/self/fd/%d/%s", dir_fd, name);
	fd = bpf_obj_get(path);
	return fd < 0 ? -errno : fd;
}

/*
 * Take the pinned walker of @dir if it is there, whole and ours: 0, -ENOENT
 * (none, or another object's), -EAGAIN (replaced as we looked) or -errno.
 * Silent: the caller loads one instead.
 */
static int walker_open(const char *dir, uint64_t hash, struct walker *wk)
{
	struct bpf_map_info info = {};
	uint32_t len = sizeof(info), key = 0;
	struct stat a, b;
	uint64_t val = 0;
	int fd, obj, err;

	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (flock(fd, LOCK_EX)) {
		err = -errno;
		goto fail;
	}
	/* a reload renames a new folder over this one: try that one then */
	if (fstat(fd, &a) || stat(dir, &b) || a.st_ino != b.st_ino) {
		err = -EAGAIN;
		goto fail;
	}
	obj = pin_get(fd, WALKER_OBJECT);
	if (obj < 0) {
		err = obj;
		goto fail;
	}
	err = bpf_map_lookup_elem(obj, &key, &val) ? -errno : 0;
	close(obj);
	if (!err && val != hash)
		err = -ENOENT;
	if (err)
		goto fail;
	wk->prog_fd = pin_get(fd, WALKER_PROG);
	wk->ring_fd = pin_get(fd, WALKER_RING);
	if (wk->prog_fd < 0 || wk->ring_fd < 0 ||
	    bpf_obj_get_info_by_fd(wk->ring_fd, &info, &len) ||
	    info.max_entries != wk->ring_size) {
		err = -ENOENT;
		goto fail;
	}
	wk->dir_fd = fd;
	wk->how = "pinned";
	return 0;
fail:
	if (wk->prog_fd >= 0)
		close(wk->prog_fd);
	if (wk->ring_fd >= 0)
		close(wk->ring_fd);
	wk->prog_fd = wk->ring_fd = -1;
	close(fd);	/* and its lock */
	return err;
}

/* May we pin here? bpffs mounted, our folder there or made, writable */
static bool state_writable(void)
{
	char parent[PATH_MAX], *slash;
	struct statfs st;

	snprintf(parent, sizeof(parent), "%s", bpffs_dir);
	slash = strrchr(parent, '/');
	if (slash && slash != parent)
		*slash = '\0';
	if (statfs(parent, &st) || st.f_type != BPF_FS_MAGIC)
		return false;
	if (mkdir(bpffs_dir, 0700) && errno != EEXIST)
		return false;
	return !access(bpffs_dir, W_OK);
}

/*
 * Pin the loaded walker of @wk as @dir: pinned in a scratch folder that
 * we lock, then swapped in whole with rename(), so a concurrent caller
 * finds the old set or the new one, never a part. We keep the new folder
 * locked: its ring is ours until we are done.
 */
static int walker_pin(const char *dir, uint64_t hash, struct walker *wk)
{
	char tmp[PATH_MAX + 8], path[PATH_MAX + 64];
	uint32_t key = 0;
	struct stat st;
	int fd, obj = -1, err = 0;

	snprintf(tmp, sizeof(tmp), "%s-new", dir);	/* no dots in bpffs */
	state_unpin_dir(tmp);
	if (mkdir(tmp, 0700))
		return -errno;
	fd = open(tmp, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 || flock(fd, LOCK_EX)) {
		err = -errno;
		goto out;
	}
	obj = bpf_map_create(BPF_MAP_TYPE_ARRAY, "oomctl_walker", sizeof(key),
			     sizeof(hash), 1, NULL);
	if (obj < 0 || bpf_map_update_elem(obj, &key, &hash, BPF_ANY)) {
		err = -errno;
		goto out;
	}
	snprintf(path, sizeof(path), "%s/%s", tmp, WALKER_PROG);
	err = bpf_obj_pin(wk->prog_fd, path);
	snprintf(path, sizeof(path), "%s/%s", tmp, WALKER_RING);
	err = err ?: bpf_obj_pin(wk->ring_fd, path);
	/* the object's hash last: a folder without it is never used */
	snprintf(path, sizeof(path), "%s/%s", tmp, WALKER_OBJECT);
	err = err ?: bpf_obj_pin(obj, path);
	if (err) {
		err = -errno;
		goto out;
	}
	if (stat(dir, &st)) {
		err = rename(tmp, dir) ? -errno : 0;
	} else if (renameat2(AT_FDCWD, tmp, AT_FDCWD, dir, RENAME_EXCHANGE)) {
		/* no exchange here: a caller that finds no folder waits
		 * for our state lock, then sees the new one */
		snprintf(path, sizeof(path), "%s-old", dir);
		state_unpin_dir(path);
		err = rename(dir, path) || rename(tmp, dir) ? -errno : 0;
		state_unpin_dir(path);
	}
out:
	if (obj >= 0)
		close(obj);
	state_unpin_dir(tmp);	/* the old set after an exchange */
	if (err) {
		if (fd >= 0)
			close(fd);
		return err;
	}
	wk->dir_fd = fd;
	return 0;
}

/*
 * The walker for a ring of @size bytes: the pinned one when it is ours and
 * of that size; else one loaded now, and pinned if we may write bpffs (the
 * test knob's other sizes stay private). Errors are reported.
 */
static int walker_get(uint32_t size, struct walker *wk)
{
	uint64_t hash = walker_hash();
	char dir[PATH_MAX];
	int err, tries;
	bool pin;

	*wk = (struct walker){ .prog_fd = -1, .ring_fd = -1, .dir_fd = -1,
			       .ring_size = size };
	pin = size == MEMCG_WALK_RING_SIZE &&
	      !state_path(dir, sizeof(dir), WALKER_DIR);
	for (tries = 0; pin && tries < 3; tries++) {
		err = walker_open(dir, hash, wk);
		if (!err)
			return 0;
		if (err != -EAGAIN)
			break;
	}
	/* under the state lock: one caller replaces the pins, the others
	 * wait for it and then find them */
	pin = pin && state_writable() && !state_lock();
	if (pin && !walker_open(dir, hash, wk))
		return 0;

	err = walker_load(size, &wk->skel);
	if (err)
		return err;
	wk->prog_fd = bpf_program__fd(wk->skel->progs.memcg_walk);
	wk->ring_fd = bpf_map__fd(wk->skel->maps.records);
	wk->how = "private";
	if (pin) {
		err = walker_pin(dir, hash, wk);
		if (err)
			p_info("cannot pin the memcg walker under %s: %s",
			       dir, strerror(-err));
		else
			wk->how = "loaded and pinned";
	}
	return 0;
}

static void walker_put(struct walker *wk)
{
	if (wk->skel) {
		memcg_walk_bpf__destroy(wk->skel);
	} else {
		if (wk->prog_fd >= 0)
			close(wk->prog_fd);
		if (wk->ring_fd >= 0)
			close(wk->ring_fd);
	}
	if (wk->dir_fd >= 0)
		close(wk->dir_fd);	/* and its lock */
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
	struct walker wk;
	struct ring_buffer *rb = NULL;
	uint64_t pos = 0, last_id = 0;
	bool check = true;
	double start = now_ms(), loaded;
	uint32_t size;
	int err, n, fd;

	err = ring_size(&size) ?: walker_get(size, &wk);
	if (err)
		return err;
	loaded = now_ms();
	rb = ring_buffer__new(wk.ring_fd, on_record, w, NULL);
	if (!rb) {
		err = -errno;
		p_err("cannot map the memcg walker's ring buffer: %s",
		      strerror(-err));
		goto out;
	}
	fd = wk.prog_fd;
	/* a pinned ring may hold what a killed caller left there */
	ring_buffer__consume(rb);
	w->nr = 0;
	w->oom = false;

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
			"restarts), ring %u KiB; walker %s in %.1f ms, walk "
			"%.1f ms\n", w->nr, w->runs, w->restarts,
			wk.ring_size / 1024, wk.how, loaded - start,
			now_ms() - loaded);
out:
	ring_buffer__free(rb);
	walker_put(&wk);
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
	nodes[n++] = (struct node){ .rec = &w->recs[0], .path = paths[0] };
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
