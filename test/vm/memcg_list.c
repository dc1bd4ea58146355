// SPDX-License-Identifier: GPL-2.0
/*
 * `oomctl memcg list` and `oomctl memcg show`, whose numbers are read in the
 * kernel by BPF (bpf/memcg_walk.bpf.c), checked against what cgroupfs says.
 *
 *   memcg_list OOMCTL                    functional checks (below)
 *   memcg_list OOMCTL --scale P C        P parents x C children: all listed
 *
 * Functional: memcgtest/{a,b/{y,x},c} plus a/nomem, a cgroup without a
 * memcg of its own (memory is not in a's subtree_control). Hogs charge
 * known amounts: a 64M, a/nomem 8M (charged to a), b/x 2 x 16M; a file of
 * 16M written from b/y stays there as page cache; c is limited to 32M and
 * its 64M hog is OOM-killed. Then usage, anon, file and swap must match
 * memory.current/memory.stat within a tolerance, limits and memory.events
 * exactly, process counts exactly; PSI of a memcg throttled over its
 * memory.high, and of the root (psi_system), must match memory.pressure
 * and /proc/pressure/memory; then paths, order (pre-order, siblings by
 * name), subtree listings, the tree drawing, the whole hierarchy against
 * cgroupfs, walks resumed through a 4 KiB ring buffer, the walker pinned
 * once and reused (replaced when the pins are another object's), and the
 * errors for bad cgroups.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <json-c/json.h>
#include <linux/bpf.h>

#include "scenario.h"

#define CGROOT	"/sys/fs/cgroup"
#define TOP	"memcgtest"
/* oomctl's test knob: the walker's ring buffer size (cli/memcg_bpf.c) */
#define OOMCTL_RING_ENV	"OOMCTL_MEMCG_RING_SIZE"

/* where oomctl pins the walker (cli/memcg_walk.c) */
#define WALKER_PINS	"/sys/fs/bpf/oomctl/walker"

static const char *oomctl;

struct run {
	int status;		/* exit status, or 128 + signal */
	char *out, *err;
	double ms;		/* wall time */
	long maxrss_kb;		/* peak RSS of oomctl */
};

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static char *slurp(int fd)
{
	size_t len = 0, cap = 1 << 16;
	char *buf = malloc(cap);
	ssize_t n;

	lseek(fd, 0, SEEK_SET);
	while (buf && (n = read(fd, buf + len, cap - len - 1)) > 0) {
		len += n;
		if (len + 1 == cap)
			buf = realloc(buf, cap *= 2);
	}
	if (!buf)
		bail("out of memory");
	buf[len] = '\0';
	close(fd);
	return buf;
}

static int tmpfile_fd(void)
{
	char path[] = "/tmp/memcg_list.XXXXXX";
	int fd = mkstemp(path);

	if (fd < 0)
		bail("mkstemp: %s", strerror(errno));
	unlink(path);
	return fd;
}

/* oomctl ARGS... with the environment entries of @env ("K=V", NULL-ended) */
static void run(struct run *r, const char *const *env, const char *const *args)
{
	const char *argv[32] = { oomctl };
	int out = tmpfile_fd(), err = tmpfile_fd(), i, st;
	struct rusage ru;
	double start;
	pid_t pid;

	for (i = 0; args[i] && i < 30; i++)
		argv[i + 1] = args[i];
	start = now_ms();
	pid = fork();
	if (pid < 0)
		bail("fork: %s", strerror(errno));
	if (!pid) {
		for (i = 0; env && env[i]; i++)
			putenv((char *)env[i]);
		dup2(out, 1);
		dup2(err, 2);
		execv(oomctl, (char **)argv);
		_exit(127);
	}
	if (wait4(pid, &st, 0, &ru) != pid)
		bail("wait4: %s", strerror(errno));
	r->ms = now_ms() - start;
	r->maxrss_kb = ru.ru_maxrss;
	r->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	r->out = slurp(out);
	r->err = slurp(err);
}

static void run_free(struct run *r)
{
	free(r->out);
	free(r->err);
}

static int lines(const char *s)
{
	int n = 0;

	for (; *s; s++)
		n += *s == '\n';
	return n;
}

static void diag(const struct run *r)
{
	printf("#   exit %d\n#   stderr: %.2000s\n#   stdout: %.2000s\n",
	       r->status, r->err, r->out);
}

/* -j memcg list ARGS: the "memcgs" array (a reference into *root) */
static struct json_object *list_json(struct run *r, const char *const *env,
				     const char *const *args,
				     struct json_object **root)
{
	struct json_object *arr;

	run(r, env, args);
	*root = json_tokener_parse(r->out);
	if (r->status || !*root ||
	    !json_object_object_get_ex(*root, "memcgs", &arr) ||
	    !json_object_is_type(arr, json_type_array)) {
		diag(r);
		return NULL;
	}
	return arr;
}

static struct json_object *get(struct json_object *obj, const char *key)
{
	struct json_object *v = NULL;

	json_object_object_get_ex(obj, key, &v);
	return v;
}

static const char *get_str(struct json_object *obj, const char *key)
{
	return json_object_get_string(get(obj, key)) ?: "(none)";
}

static uint64_t get_u64(struct json_object *obj, const char *key)
{
	return json_object_get_uint64(get(obj, key));
}

/* A key present with a null value */
static bool is_null(struct json_object *obj, const char *key)
{
	return json_object_object_get_ex(obj, key, NULL) && !get(obj, key);
}

static struct json_object *row(struct json_object *arr, const char *path)
{
	size_t i;

	for (i = 0; arr && i < json_object_array_length(arr); i++) {
		struct json_object *r = json_object_array_get_idx(arr, i);

		if (!strcmp(get_str(r, "path"), path))
			return r;
	}
	return NULL;
}

static uint64_t cg_u64(const char *cg, const char *file)
{
	char buf[64];

	if (cg_read(cg, file, buf, sizeof(buf)))
		return UINT64_MAX;
	return strtoull(buf, NULL, 10);
}

/* memory.stat and memory.events values; UINT64_MAX if missing */
static uint64_t cg_key(const char *cg, const char *file, const char *key)
{
	char buf[8192], *p;
	size_t len = strlen(key);

	if (cg_read(cg, file, buf, sizeof(buf)))
		return UINT64_MAX;
	for (p = buf; p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (!strncmp(p, key, len) && p[len] == ' ')
			return strtoull(p + len + 1, NULL, 10);
	return UINT64_MAX;
}

static int cg_nr_procs(const char *cg)
{
	char buf[4096];

	return cg_read(cg, "cgroup.procs", buf, sizeof(buf)) ? -1 : lines(buf);
}

/* Counters that move with the hogs idle: allow the stats' per-CPU lag */
static bool near(uint64_t got, uint64_t want)
{
	uint64_t d = got > want ? got - want : want - got;

	return want != UINT64_MAX && d <= MiB + want / 50;
}

static void check_sizes(struct json_object *r, const char *cg)
{
	static const struct { const char *key, *file, *stat; } f[] = {
		{ "current_bytes", "memory.current", NULL },
		{ "anon_bytes", "memory.stat", "anon" },
		{ "file_bytes", "memory.stat", "file" },
		{ "swap_bytes", "memory.swap.current", NULL },
	};
	size_t i;

	for (i = 0; i < sizeof(f) / sizeof(*f); i++) {
		uint64_t want = f[i].stat ? cg_key(cg, f[i].file, f[i].stat) :
					    cg_u64(cg, f[i].file);
		uint64_t got = get_u64(r, f[i].key);

		check(near(got, want), "%s: %s %" PRIu64 " ~ %s%s%s %" PRIu64,
		      cg, f[i].key, got, f[i].file, f[i].stat ? " " : "",
		      f[i].stat ?: "", want);
	}
}

static void check_events(struct json_object *r, const char *cg)
{
	uint64_t oom = cg_key(cg, "memory.events", "oom");
	uint64_t kill = cg_key(cg, "memory.events", "oom_kill");

	check(get_u64(r, "oom") == oom && get_u64(r, "oom_kill") == kill,
	      "%s: oom %" PRIu64 " oom_kill %" PRIu64 " as memory.events "
	      "(%" PRIu64 ", %" PRIu64 ")", cg, get_u64(r, "oom"),
	      get_u64(r, "oom_kill"), oom, kill);
}

static bool psi_sane(struct json_object *r)
{
	struct json_object *s = get(r, "psi_some_avg10_centipct");
	struct json_object *f = get(r, "psi_full_avg10_centipct");

	return json_object_is_type(s, json_type_int) &&
	       json_object_is_type(f, json_type_int) &&
	       json_object_get_uint64(s) <= 10000 &&
	       json_object_get_uint64(f) <= json_object_get_uint64(s);
}

/*
 * Plain output, line by line: each line starts with want[i] and a blank
 * (the PATH column), or with @last ends with "  " want[i] (the tree).
 */
static bool plain_column(const char *out, bool last, const char *const *want)
{
	char *copy = strdup(out), *line, *save;
	int i = 0;
	bool ok = true;

	for (line = strtok_r(copy, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save), i++) {
		size_t len, wl;

		if (!want[i]) {
			ok = false;
			break;
		}
		len = strlen(line);
		wl = strlen(want[i]);
		if (last ? len < wl + 2 || strcmp(line + len - wl, want[i]) ||
			   strncmp(line + len - wl - 2, "  ", 2) :
			   strncmp(line, want[i], wl) || line[wl] != ' ') {
			printf("#   line %d: '%s', want '%s'\n", i, line,
			       want[i]);
			ok = false;
		}
	}
	free(copy);
	return ok && !want[i];
}

/* Cgroups with a memcg of their own: the root, and any cgroup whose
 * parent has memory in cgroup.subtree_control */
static int nr_memcgs;

static int count_memcg(const char *path, const struct stat *st, int type,
		       struct FTW *ftw)
{
	char parent[4096], buf[256];
	int fd;
	ssize_t n;

	(void)st;
	if (type != FTW_D)
		return 0;
	if (!ftw->level) {
		nr_memcgs++;
		return 0;
	}
	snprintf(parent, sizeof(parent), "%.*s/cgroup.subtree_control",
		 ftw->base - 1, path);
	fd = open(parent, O_RDONLY);
	n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);
	if (fd >= 0)
		close(fd);
	if (n > 0) {
		buf[n] = '\0';
		nr_memcgs += strstr(buf, "memory") != NULL;
	}
	return 0;
}

/* A file on tmpfs (/tmp), written from @cg: page cache charged there
 * that outlives the writer */
#define CACHE_FILE	"/tmp/memcg_list.cache"

static void write_file_in(const char *cg, const char *path, size_t bytes)
{
	static char buf[1 << 16];
	int st, fd;
	pid_t pid;

	unlink(path);
	pid = fork();
	if (pid < 0)
		bail("fork: %s", strerror(errno));
	if (!pid) {
		if (cg_write(cg, "cgroup.procs", "0"))
			_exit(1);
		fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		memset(buf, 'x', sizeof(buf));
		for (size_t done = 0; fd >= 0 && done < bytes; done += sizeof(buf))
			if (write(fd, buf, sizeof(buf)) != sizeof(buf))
				_exit(2);
		_exit(fd < 0 ? 3 : 0);
	}
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st))
		bail("cannot write %s from %s", path, cg);
}

static void setup(struct hog *hogs)
{
	cg_destroy(TOP);
	if (cg_write("", "cgroup.subtree_control", "+memory") ||
	    cg_create(TOP) || cg_write(TOP, "cgroup.subtree_control", "+memory") ||
	    cg_create(TOP "/a") || cg_write(TOP "/a", "memory.max", "256M") ||
	    cg_create(TOP "/a/nomem") ||
	    cg_create(TOP "/b") || cg_write(TOP "/b", "cgroup.subtree_control",
					    "+memory") ||
	    /* y first: the kernel's order is not the listing's */
	    cg_create(TOP "/b/y") || cg_create(TOP "/b/x") ||
	    cg_write(TOP "/b/x", "memory.high", "128M") ||
	    cg_create(TOP "/c") || cg_write(TOP "/c", "memory.max", "32M") ||
	    cg_write(TOP "/c", "memory.swap.max", "0"))
		bail("cannot set up the cgroups under " CGROOT "/" TOP);

	if (hog_spawn(&hogs[0], "a", TOP "/a", 64 * MiB, 0) ||
	    hog_spawn(&hogs[1], "nomem", TOP "/a/nomem", 8 * MiB, 0) ||
	    hog_spawn(&hogs[2], "x1", TOP "/b/x", 16 * MiB, 0) ||
	    hog_spawn(&hogs[3], "x2", TOP "/b/x", 16 * MiB, 0) ||
	    hog_spawn(&hogs[4], "c", TOP "/c", 64 * MiB, 0))
		bail("cannot start the hogs");
	for (int i = 0; i < 4; i++)
		if (hog_release(&hogs[i]) || !hog_wait_ready(&hogs[i], 60000))
			bail("hog %s did not get its memory", hogs[i].name);
	write_file_in(TOP "/b/y", CACHE_FILE, 16 * MiB);
	/* c's hog cannot fit in 32M: the kernel's OOM killer takes it */
	if (hog_release(&hogs[4]) ||
	    hogs_wait_first_death(&hogs[4], 1, 60000) != 0)
		bail("the hog in " TOP "/c was not OOM-killed");
	check(hog_killed_by_sigkill(&hogs[4]), "the hog in c died of SIGKILL");
}

static void test_list(void)
{
	static const char *const order[] = {
		"/" TOP, "/" TOP "/a", "/" TOP "/b", "/" TOP "/b/x",
		"/" TOP "/b/y", "/" TOP "/c",
	};
	static const char *const cgs[] = {
		TOP, TOP "/a", TOP "/b", TOP "/b/x", TOP "/b/y", TOP "/c",
	};
	/* a counts its own hog and a/nomem's: both are charged to it */
	static const int procs[] = { 0, 2, 0, 2, 0, 0 };
	static const unsigned int level[] = { 1, 2, 2, 3, 3, 2 };
	struct json_object *root, *arr, *r;
	struct run run_;
	size_t i, n;
	bool ok;

	arr = list_json(&run_, NULL, (const char *[]){ "-j", "memcg", "list",
				      "/" TOP, NULL }, &root);
	n = arr ? json_object_array_length(arr) : 0;
	ok = n == 6;
	for (i = 0; ok && i < n; i++)
		ok = !strcmp(get_str(json_object_array_get_idx(arr, i), "path"),
			     order[i]);
	if (!check(ok, "list " TOP ": its 6 memcgs in pre-order, siblings by "
		   "name, a/nomem left out (got %zu)", n))
		diag(&run_);
	check(run_.status == 0 && !*run_.err, "list: exit 0, stderr empty");

	for (i = 0; arr && i < 6; i++) {
		r = row(arr, order[i]);
		if (!check(r != NULL, "%s is listed", order[i]))
			continue;
		check_sizes(r, cgs[i]);
		check_events(r, cgs[i]);
		check(get_u64(r, "procs") == (uint64_t)procs[i],
		      "%s: %" PRIu64 " processes, want %d", cgs[i],
		      get_u64(r, "procs"), procs[i]);
		check(get_u64(r, "id") == cg_id(cgs[i]) &&
		      get_u64(r, "level") == level[i],
		      "%s: id %" PRIu64 " level %" PRIu64, cgs[i],
		      get_u64(r, "id"), get_u64(r, "level"));
		check(psi_sane(r), "%s: PSI avg10 are numbers, 0 <= full <= "
		      "some <= 100%%", cgs[i]);
	}
	if (arr) {
		/* leaves and a/nomem agree with cgroup.procs */
		check(get_u64(row(arr, "/" TOP "/b/x"), "procs") ==
		      (uint64_t)cg_nr_procs(TOP "/b/x") &&
		      get_u64(row(arr, "/" TOP "/a"), "procs") ==
		      (uint64_t)(cg_nr_procs(TOP "/a") +
				 cg_nr_procs(TOP "/a/nomem")),
		      "process counts agree with cgroup.procs");
		r = row(arr, "/" TOP "/a");
		check(get_u64(r, "max_bytes") == 256 * MiB &&
		      is_null(r, "high_bytes"), "a: max 256M exactly, high null");
		check(get_u64(r, "current_bytes") >= 72 * MiB &&
		      get_u64(r, "anon_bytes") >= 72 * MiB,
		      "a: its hog's and a/nomem's 72M are charged to it");
		r = row(arr, "/" TOP "/b/x");
		check(get_u64(r, "high_bytes") == 128 * MiB &&
		      is_null(r, "max_bytes"), "b/x: high 128M exactly, max null");
		check(get_u64(r, "anon_bytes") >= 32 * MiB,
		      "b/x: its hogs' 32M are anon");
		r = row(arr, "/" TOP "/b/y");
		check(get_u64(r, "file_bytes") >= 16 * MiB &&
		      get_u64(row(arr, "/" TOP "/b"), "file_bytes") >= 16 * MiB,
		      "b/y: the 16M file written from it is page cache (file), "
		      "counted in b too");
		r = row(arr, "/" TOP "/c");
		check(get_u64(r, "max_bytes") == 32 * MiB &&
		      get_u64(r, "oom_kill") >= 1 && get_u64(r, "oom") >= 1,
		      "c: max 32M, OOM-killed (oom %" PRIu64 ", oom_kill %"
		      PRIu64 ")", get_u64(r, "oom"), get_u64(r, "oom_kill"));
		check(get_u64(row(arr, "/" TOP), "oom_kill") >=
		      get_u64(r, "oom_kill") &&
		      get_u64(row(arr, "/" TOP "/a"), "oom_kill") == 0,
		      "oom_kill is hierarchical: " TOP " counts c's, a has none");
	}
	json_object_put(root);
	run_free(&run_);
}

/* memory.pressure's (or /proc/pressure/memory's) some avg10, hundredths */
static long psi_centi(const char *path)
{
	char buf[512];
	unsigned int i, f;
	FILE *fp = fopen(path, "r");
	int n = fp && fgets(buf, sizeof(buf), fp) ?
		sscanf(buf, "some avg10=%u.%u", &i, &f) : 0;

	if (fp)
		fclose(fp);
	return n == 2 ? (long)(i * 100 + f) : -1;
}

/*
 * @got, read by oomctl between two reads of the file (@before, @after),
 * which update the averages too: a value of the averages' trajectory in
 * between, give or take a point, as PSI averages move smoothly.
 */
static bool psi_between(uint64_t got, long before, long after)
{
	long lo = before < after ? before : after;
	long hi = before < after ? after : before;

	return lo >= 0 && (long)got >= lo - 100 && (long)got <= hi + 100;
}

/*
 * Pressure for real: a hog over memory.high with no swap is throttled
 * (a memory stall) on every charge.
 */
static void test_psi(void)
{
	const char *file = CGROOT "/memcgpsi/memory.pressure";
	struct json_object *root, *arr, *r, *obj;
	long before, after;
	struct hog hog;
	struct run run_;
	uint64_t got;
	int i;

	cg_destroy("memcgpsi");
	if (cg_create("memcgpsi") || cg_write("memcgpsi", "memory.high", "8M") ||
	    cg_write("memcgpsi", "memory.swap.max", "0") ||
	    hog_spawn(&hog, "psi", "memcgpsi", 64 * MiB, 0) || hog_release(&hog))
		bail("cannot set up memcgpsi");
	for (i = 0; i < 30 && psi_centi(file) < 2000; i++)
		sleep(1);

	before = psi_centi(file);
	arr = list_json(&run_, NULL, (const char *[]){ "-j", "memcg", "list",
				      "/memcgpsi", NULL }, &root);
	after = psi_centi(file);
	r = row(arr, "/memcgpsi");
	got = r ? get_u64(r, "psi_some_avg10_centipct") : 0;
	check(r && before >= 2000 && psi_between(got, before, after),
	      "throttled memcg: PSI some avg10 %.2f%%, memory.pressure %.2f%% "
	      "before, %.2f%% after", got / 100.0, before / 100.0,
	      after / 100.0);
	check(r && get_u64(r, "psi_full_avg10_centipct") > 0 &&
	      get_u64(r, "procs") == 1, "throttled memcg: full avg10 %.2f%%, "
	      "1 process", r ? get_u64(r, "psi_full_avg10_centipct") / 100.0 : 0);
	json_object_put(root);
	run_free(&run_);

	/* the root's PSI is the system's (psi_system) */
	before = psi_centi("/proc/pressure/memory");
	run(&run_, NULL, (const char *[]){ "-j", "memcg", "show", "/", NULL });
	after = psi_centi("/proc/pressure/memory");
	obj = json_tokener_parse(run_.out);
	got = get_u64(obj, "psi_some_avg10_centipct");
	check(obj && before > 0 && psi_between(got, before, after),
	      "show /: PSI some avg10 %.2f%%, /proc/pressure/memory %.2f%% "
	      "before, %.2f%% after", got / 100.0, before / 100.0,
	      after / 100.0);
	json_object_put(obj);
	run_free(&run_);

	hogs_kill(&hog, 1);
	cg_destroy("memcgpsi");
}

static void test_subtree_and_tree(void)
{
	static const char *const sub[] = {
		"/" TOP "/b", "/" TOP "/b/x", "/" TOP "/b/y",
	};
	static const char *const tree_utf8[] = {
		"CGROUP", "/" TOP, "├─a", "├─b", "│ ├─x", "│ └─y", "└─c", NULL,
	};
	static const char *const tree_ascii[] = {
		"CGROUP", "/" TOP, "|-a", "|-b", "| |-x", "| `-y", "`-c", NULL,
	};
	static const char *const flat[] = {
		"PATH", "/" TOP, "/" TOP "/a", "/" TOP "/b", "/" TOP "/b/x",
		"/" TOP "/b/y", "/" TOP "/c", NULL,
	};
	static const char *const utf8_env[] = { "LC_ALL=C.UTF-8", NULL };
	static const char *const c_env[] = { "LC_ALL=C", NULL };
	struct json_object *root, *arr;
	struct run r;
	size_t i, n;
	bool ok;

	arr = list_json(&r, NULL, (const char *[]){ "-j", "memcg", "list",
				  TOP "/b", "tree", NULL }, &root);
	n = arr ? json_object_array_length(arr) : 0;
	ok = n == 3;
	for (i = 0; ok && i < n; i++)
		ok = !strcmp(get_str(json_object_array_get_idx(arr, i), "path"),
			     sub[i]);
	if (!check(ok, "list " TOP "/b tree: only b, b/x, b/y (got %zu)", n))
		diag(&r);
	json_object_put(root);
	run_free(&r);

	run(&r, utf8_env, (const char *[]){ "memcg", "list", TOP, "tree",
		NULL });
	if (!check(r.status == 0 && plain_column(r.out, true, tree_utf8),
		   "plain tree: box-drawing branches, last column"))
		diag(&r);
	run_free(&r);
	run(&r, c_env, (const char *[]){ "memcg", "list", TOP, "tree", NULL });
	if (!check(r.status == 0 && plain_column(r.out, true, tree_ascii),
		   "plain tree in the C locale: ASCII branches"))
		diag(&r);
	run_free(&r);

	run(&r, NULL, (const char *[]){ "memcg", "list", TOP, NULL });
	if (!check(r.status == 0 && plain_column(r.out, false, flat),
		   "plain list: one line per memcg, paths first"))
		diag(&r);
	check(strstr(r.out, "256M") && strstr(r.out, "128M") &&
	      strstr(r.out, " max "), "plain list: human sizes, 'max'");
	run_free(&r);
}

static void test_show(void)
{
	struct json_object *obj, *ev;
	struct run r;

	run(&r, NULL, (const char *[]){ "-j", "memcg", "show", TOP "/c", NULL });
	obj = json_tokener_parse(r.out);
	ev = get(obj, "events");
	if (!check(r.status == 0 && obj && ev &&
		   !strcmp(get_str(obj, "path"), "/" TOP "/c") &&
		   get_u64(obj, "max_bytes") == 32 * MiB &&
		   get_u64(obj, "swap_max_bytes") == 0 &&
		   get_u64(ev, "oom_kill") ==
		   cg_key(TOP "/c", "memory.events", "oom_kill") &&
		   get_u64(ev, "oom") == cg_key(TOP "/c", "memory.events", "oom") &&
		   get_u64(ev, "max") == cg_key(TOP "/c", "memory.events", "max") &&
		   get_u64(obj, "oom_kill") == get_u64(ev, "oom_kill") &&
		   get_u64(obj, "procs") == 0 &&
		   get_u64(obj, "id") == cg_id(TOP "/c") &&
		   get_u64(obj, "parent_id") == cg_id(TOP),
		   "show c: limits, memory.events, ids, no process left"))
		diag(&r);
	if (obj) {
		check(get_u64(obj, "pgscan") ==
		      cg_key(TOP "/c", "memory.stat", "pgscan") &&
		      get_u64(obj, "pgsteal") ==
		      cg_key(TOP "/c", "memory.stat", "pgsteal"),
		      "show c: pgscan %" PRIu64 " pgsteal %" PRIu64
		      " as memory.stat", get_u64(obj, "pgscan"),
		      get_u64(obj, "pgsteal"));
		check(get(get(get(obj, "psi"), "some"), "avg10_centipct") &&
		      get(get(get(obj, "psi"), "full"), "total_usec"),
		      "show c: PSI some/full averages and totals");
	}
	json_object_put(obj);
	run_free(&r);

	run(&r, NULL, (const char *[]){ "-j", "memcg", "show", "/" TOP "/a",
		NULL });
	obj = json_tokener_parse(r.out);
	if (check(r.status == 0 && obj, "show a: JSON")) {
		check_sizes(obj, TOP "/a");
		check(get_u64(obj, "procs") == 2 &&
		      get_u64(obj, "max_bytes") == 256 * MiB &&
		      is_null(obj, "high_bytes") && get_u64(obj, "min_bytes") == 0,
		      "show a: 2 processes, max 256M, high null, min 0");
	}
	json_object_put(obj);
	run_free(&r);

	run(&r, NULL, (const char *[]){ "memcg", "show", TOP "/b/x", NULL });
	if (!check(r.status == 0 && strstr(r.out, "path:") &&
		   strstr(r.out, "/" TOP "/b/x\n") && strstr(r.out, "128M") &&
		   strstr(r.out, "oom_kill 0") && strstr(r.out, "avg10="),
		   "show b/x: key: value lines"))
		diag(&r);
	run_free(&r);

	/* the root: no memory.current, PSI from psi_system */
	run(&r, NULL, (const char *[]){ "-j", "memcg", "show", "/", NULL });
	obj = json_tokener_parse(r.out);
	if (!check(r.status == 0 && obj && get_u64(obj, "level") == 0 &&
		   get_u64(obj, "id") == cg_id("") &&
		   get_u64(obj, "current_bytes") > 0 &&
		   is_null(obj, "max_bytes") && get(obj, "psi") &&
		   get_u64(obj, "procs") > 1,
		   "show /: the root memcg, with system-wide PSI"))
		diag(&r);
	json_object_put(obj);
	run_free(&r);
}

static double make_tree(const char *top, int parents, int children);

static void test_whole(void)
{
	const char *const small[] = { OOMCTL_RING_ENV "=4096", NULL };
	const char *const *envs[] = { NULL, small };
	struct json_object *root[2], *arr[2];
	struct run r[2];
	size_t i, n[2];
	bool same;
	int k;

	/* more memcgs than a 4 KiB ring holds (8): resumed walks */
	make_tree("memcgmany", 6, 5);
	nr_memcgs = 0;
	nftw(CGROOT, count_memcg, 32, FTW_PHYS);
	for (k = 0; k < 2; k++) {
		arr[k] = list_json(&r[k], envs[k], (const char *[]){ "-j",
				   "memcg", "list", NULL }, &root[k]);
		n[k] = arr[k] ? json_object_array_length(arr[k]) : 0;
	}
	check(arr[0] && n[0] == (size_t)nr_memcgs &&
	      !strcmp(get_str(json_object_array_get_idx(arr[0], 0), "path"),
		      "/") && row(arr[0], "/" TOP "/b/x") &&
	      !row(arr[0], "/" TOP "/a/nomem"),
	      "list: / first, %zu memcgs as cgroupfs has (%d)", n[0],
	      nr_memcgs);
	same = n[0] == n[1];
	for (i = 0; same && i < n[0]; i++)
		same = get_u64(json_object_array_get_idx(arr[0], i), "id") ==
		       get_u64(json_object_array_get_idx(arr[1], i), "id") &&
		       !strcmp(get_str(json_object_array_get_idx(arr[0], i),
				       "path"),
			       get_str(json_object_array_get_idx(arr[1], i),
				       "path"));
	check(same, "a 4 KiB ring (8 records a run) gives the same list");
	for (k = 0; k < 2; k++) {
		json_object_put(root[k]);
		run_free(&r[k]);
	}

	run(&r[0], small, (const char *[]){ "-d", "memcg", "list", NULL });
	{
		const char *s = strstr(r[0].err, "memcg walk: ");
		unsigned int recs = 0, runs = 0;

		if (s)
			sscanf(s, "memcg walk: %u records in %u runs", &recs,
			       &runs);
		check(r[0].status == 0 && recs == n[0] && runs > recs / 8 &&
		      runs > 1, "-d: %u records in %u runs of the walker",
		      recs, runs);
	}
	run_free(&r[0]);
	cg_destroy("memcgmany");
}

static int sys_bpf(int cmd, union bpf_attr *attr)
{
	return syscall(__NR_bpf, cmd, attr, sizeof(*attr));
}

static int pin_fd(const char *name)
{
	char path[128];
	union bpf_attr a = {};

	snprintf(path, sizeof(path), WALKER_PINS "/%s", name);
	a.pathname = (uintptr_t)path;
	return sys_bpf(BPF_OBJ_GET, &a);
}

/* id of the pinned walker program, 0 if none */
static uint32_t walker_prog_id(void)
{
	struct bpf_prog_info info = {};
	union bpf_attr a = {};
	int fd = pin_fd("memcg_walk");

	if (fd < 0)
		return 0;
	a.info.bpf_fd = fd;
	a.info.info_len = sizeof(info);
	a.info.info = (uintptr_t)&info;
	if (sys_bpf(BPF_OBJ_GET_INFO_BY_FD, &a))
		info.id = 0;
	close(fd);
	return info.id;
}

/* The object hash stored with the pins: read (@set NULL) or written */
static bool walker_hash(uint64_t *val, bool set)
{
	union bpf_attr a = {};
	uint32_t key = 0;
	int fd = pin_fd("object"), err;

	if (fd < 0)
		return false;
	a.map_fd = fd;
	a.key = (uintptr_t)&key;
	a.value = (uintptr_t)val;
	err = sys_bpf(set ? BPF_MAP_UPDATE_ELEM : BPF_MAP_LOOKUP_ELEM, &a);
	close(fd);
	return !err;
}

/* Load and drop a trivial program: its id. Ids are allocated in turn, so
 * two probes one apart mean nobody loaded a program in between. */
static uint32_t probe_prog_id(void)
{
	struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	struct bpf_prog_info info = {};
	union bpf_attr a = {};
	int fd;

	a.prog_type = BPF_PROG_TYPE_SOCKET_FILTER;
	a.insns = (uintptr_t)insns;
	a.insn_cnt = 2;
	a.license = (uintptr_t)"GPL";
	fd = sys_bpf(BPF_PROG_LOAD, &a);
	if (fd < 0)
		bail("cannot load a probe program: %s", strerror(errno));
	memset(&a, 0, sizeof(a));
	a.info.bpf_fd = fd;
	a.info.info_len = sizeof(info);
	a.info.info = (uintptr_t)&info;
	if (sys_bpf(BPF_OBJ_GET_INFO_BY_FD, &a))
		bail("BPF_OBJ_GET_INFO_BY_FD: %s", strerror(errno));
	close(fd);
	return info.id;
}

/* the same rows (paths, ids) in two listings */
static bool same_rows(struct json_object *x, struct json_object *y)
{
	size_t i, n = x ? json_object_array_length(x) : 0;

	if (!x || !y || n != json_object_array_length(y) || n < 2)
		return false;
	for (i = 0; i < n; i++) {
		struct json_object *a = json_object_array_get_idx(x, i);
		struct json_object *b = json_object_array_get_idx(y, i);

		if (get_u64(a, "id") != get_u64(b, "id") ||
		    strcmp(get_str(a, "path"), get_str(b, "path")))
			return false;
	}
	return true;
}

static void test_pins(void)
{
	const char *const args[] = { "-j", "memcg", "list", "/" TOP, NULL };
	struct json_object *root[3], *arr[3];
	uint32_t id[3], probe[2];
	uint64_t hash = 0, bad, now = 0;
	struct run r[3];
	int k;

	if (system("rm -rf " WALKER_PINS))
		bail("cannot remove " WALKER_PINS);
	arr[0] = list_json(&r[0], NULL, args, &root[0]);
	id[0] = walker_prog_id();
	check(arr[0] && id[0] && walker_hash(&hash, false) && hash,
	      "the first list pins the walker (prog id %u) and its object's "
	      "hash under " WALKER_PINS, id[0]);

	probe[0] = probe_prog_id();
	arr[1] = list_json(&r[1], NULL, args, &root[1]);
	probe[1] = probe_prog_id();
	id[1] = walker_prog_id();
	check(arr[1] && id[1] == id[0] && probe[1] == probe[0] + 1,
	      "the second list reuses it: prog id %u, no program loaded "
	      "(probe ids %u, %u)", id[1], probe[0], probe[1]);
	check(same_rows(arr[0], arr[1]), "the same rows either way");

	/* pins of another oomctl's walker: replaced, then used */
	bad = ~hash;
	if (!walker_hash(&bad, true))
		bail("cannot write the walker's object hash");
	arr[2] = list_json(&r[2], NULL, args, &root[2]);
	id[2] = walker_prog_id();
	check(arr[2] && id[2] && id[2] != id[0] && walker_hash(&now, false) &&
	      now == hash, "pins of another object are replaced: prog id %u "
	      "(was %u), the hash ours again", id[2], id[0]);
	check(same_rows(arr[0], arr[2]), "and the list is the same");
	for (k = 0; k < 3; k++) {
		json_object_put(root[k]);
		run_free(&r[k]);
	}
}

static void test_errors(void)
{
	static const struct {
		const char *args[6];
		const char *what;
	} bad[] = {
		{ { "memcg", "show", "/nonexistent" }, "show /nonexistent" },
		{ { "memcg", "list", "/nonexistent" }, "list /nonexistent" },
		{ { "memcg", "show", TOP "/a/nomem" }, "show of a cgroup without memcg" },
		{ { "memcg", "list", TOP "/a/nomem", "tree" }, "list of a cgroup without memcg" },
	};
	const char *const bad_ring[] = { OOMCTL_RING_ENV "=1000", NULL };
	struct json_object *obj;
	struct run r;
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		run(&r, NULL, bad[i].args);
		if (!check(r.status == 1 && lines(r.err) == 1 &&
			   !strncmp(r.err, "Error: ", 7) && !*r.out,
			   "%s: exit 1, one Error: line", bad[i].what))
			diag(&r);
		run_free(&r);
	}
	run(&r, NULL, (const char *[]){ "-j", "memcg", "show", "nonexistent",
		NULL });
	obj = json_tokener_parse(r.out);
	check(r.status == 1 && obj && get(obj, "error") && !*r.err,
	      "-j: the error as JSON, exit 1");
	json_object_put(obj);
	run_free(&r);
	run(&r, bad_ring, (const char *[]){ "memcg", "list", NULL });
	check(r.status == 1 && lines(r.err) == 1, "a ring size not a power "
	      "of two is refused");
	run_free(&r);
}

/* P parents x C children below @top, memory enabled everywhere */
static double make_tree(const char *top, int parents, int children)
{
	char path[256];
	double start = now_ms();
	int p, c;

	cg_destroy(top);
	if (cg_create(top) || cg_write(top, "cgroup.subtree_control", "+memory"))
		bail("cannot create %s", top);
	for (p = 0; p < parents; p++) {
		snprintf(path, sizeof(path), "%s/p%03d", top, p);
		if (cg_create(path) || (children && cg_write(path,
				"cgroup.subtree_control", "+memory")))
			bail("cannot create %s: %s", path, strerror(errno));
		for (c = 0; c < children; c++) {
			snprintf(path, sizeof(path), "%s/p%03d/c%03d", top, p, c);
			if (cg_create(path))
				bail("cannot create %s: %s", path,
				     strerror(errno));
		}
	}
	return now_ms() - start;
}

/* Every path of the tree exactly once, in order */
static bool tree_listed(struct json_object *arr, const char *top, int parents,
			int children)
{
	size_t i = 0, n = json_object_array_length(arr);
	char want[256];
	int p, c;

	if (n != (size_t)(1 + parents + parents * children))
		return false;
	for (p = -1; p < parents; p++) {
		for (c = p < 0 ? 0 : -1; c < (p < 0 ? 1 : children); c++) {
			if (p < 0)
				snprintf(want, sizeof(want), "/%s", top);
			else if (c < 0)
				snprintf(want, sizeof(want), "/%s/p%03d", top, p);
			else
				snprintf(want, sizeof(want), "/%s/p%03d/c%03d",
					 top, p, c);
			if (strcmp(get_str(json_object_array_get_idx(arr, i++),
					   "path"), want)) {
				printf("#   row %zu: %s, want %s\n", i - 1,
				       get_str(json_object_array_get_idx(arr,
						i - 1), "path"), want);
				return false;
			}
		}
	}
	return true;
}

static unsigned int walk_runs(const char *err)
{
	const char *s = strstr(err, "memcg walk: ");
	unsigned int recs, runs = 0;

	if (s)
		sscanf(s, "memcg walk: %u records in %u runs", &recs, &runs);
	return runs;
}

static int scale(int parents, int children)
{
	const char *const small[] = { OOMCTL_RING_ENV "=64K", NULL };
	struct json_object *root, *arr;
	char arg[64];
	struct run r;
	double ms;
	int total = 1 + parents + parents * children;

	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("# creating %d cgroups (%d x %d)\n", total, parents, children);
	ms = make_tree("memscale", parents, children);
	printf("# mkdir of %d cgroups: %.1f s\n", total, ms / 1000);

	snprintf(arg, sizeof(arg), "/memscale");
	arr = list_json(&r, NULL, (const char *[]){ "-j", "memcg", "list",
				  arg, NULL }, &root);
	if (!check(arr && tree_listed(arr, "memscale", parents, children),
		   "-j list /memscale: all %d memcgs, each once, in order "
		   "(%.1f s, peak RSS %ld KiB)", total, r.ms / 1000,
		   r.maxrss_kb))
		diag(&r);
	json_object_put(root);
	run_free(&r);

	arr = list_json(&r, NULL, (const char *[]){ "-j", "memcg", "list",
				  NULL }, &root);
	check(arr && row(arr, "/memscale/p000/c000") &&
	      json_object_array_length(arr) > (size_t)total,
	      "-j list: the whole hierarchy, %zu memcgs (%.1f s)",
	      arr ? json_object_array_length(arr) : 0, r.ms / 1000);
	json_object_put(root);
	run_free(&r);

	run(&r, NULL, (const char *[]){ "-d", "memcg", "list", arg, "tree",
		NULL });
	check(r.status == 0 && lines(r.out) == total + 1 &&
	      walk_runs(r.err) >= 2,
	      "plain tree: %d lines, %u walker runs through the 4 MiB ring "
	      "(%.1f s)", lines(r.out), walk_runs(r.err), r.ms / 1000);
	run_free(&r);

	arr = list_json(&r, small, (const char *[]){ "-j", "memcg", "list",
				  arg, NULL }, &root);
	check(arr && tree_listed(arr, "memscale", parents, children),
	      "a 64 KiB ring: the same %d memcgs (%.1f s)", total,
	      r.ms / 1000);
	json_object_put(root);
	run_free(&r);
	return checks_done();
}

int main(int argc, char **argv)
{
	struct hog hogs[5];

	if (argc < 2)
		bail("usage: memcg_list OOMCTL [--scale P C]");
	oomctl = argv[1];
	if (argc == 5 && !strcmp(argv[2], "--scale"))
		return scale(atoi(argv[3]), atoi(argv[4]));

	setvbuf(stdout, NULL, _IOLBF, 0);
	setup(hogs);
	test_list();
	test_psi();
	test_subtree_and_tree();
	test_show();
	test_whole();
	test_pins();
	test_errors();
	hogs_kill(hogs, 5);
	cg_destroy(TOP);
	unlink(CACHE_FILE);
	return checks_done();
}
