// SPDX-License-Identifier: GPL-2.0
/*
 * kill_latency KILLER WORKLOAD ROOT RUNS LIMIT_S [FIRST_RUN]: one cell of the
 * kill-latency table. Whatever killer is meant (a daemon, the kernel alone)
 * is already running, or is armed per cell by the command in $KL_ARM; this
 * program starts the workload RUNS times in cgroups under ROOT (a path below
 * /sys/fs/cgroup that it may fill) and times, in the kernel
 * (progs/kill_timeline.bpf.c), what happens from the first memory stall to
 * the first exit of a workload task. One CSV row per run on stdout (header:
 * --header), progress on stderr.
 *
 * $KL_ARM and $KL_DISARM, when set, are shell commands run once before the
 * first run and once after the last, with the workload's watched cgroups
 * (absolute paths; ROOT itself for the global squeeze) as their
 * arguments: test/bench/kill_latency.sh adds a PSI trigger there, or starts
 * a process that holds one.
 *
 * Workloads (pid index 0 is the task that should die):
 *   W1  thrash: 500 MiB touched in a cgroup with memory.high 40M, no swap
 *       (the RFC selftest's)
 *   W2  global squeeze: memory filled past RAM by one task (all the free
 *       memory but 128 MiB before the release) while two others keep both
 *       CPUs busy;
 *       stalls anywhere count as onset
 *   W3  slow leak: 2 MiB every 50 ms in a cgroup with memory.high 64M
 *   W4  two cgroups: W1's thrash in one, a quiet 100 MiB task in the other
 *
 * The caller's own oom_score_adj should be -1000 (test/bench/kill_latency.sh
 * sets it); the workload's tasks set theirs to 0.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <bpf/libbpf.h>

#include "scenario.h"
#include "kill_timeline.h"
#include "kill_timeline.skel.h"

#define MAX_TASKS	4

enum task_kind { THRASH, LEAK, SQUEEZE, BURN, QUIET };

struct task_spec {
	const char *cg;		/* below ROOT */
	enum task_kind kind;
	long mib;
};

struct workload {
	const char *name;
	bool stall_anywhere;
	const char *limits[3][3];	/* cgroup, file, value */
	const char *watch[2];		/* where a PSI trigger goes ("" = ROOT) */
	struct task_spec tasks[MAX_TASKS];
	int nr_tasks;
};

static const struct workload workloads[] = {
	{ "W1", false, { { "w1", "memory.high", "40M" },
			 { "w1", "memory.swap.max", "0" } }, { "w1" },
	  { { "w1", THRASH, 500 } }, 1 },
	{ "W2", true, { { NULL } }, { "" },	/* the workload's whole scope */
	  { { "w2", SQUEEZE, 0 }, { "w2cpu", BURN, 0 }, { "w2cpu", BURN, 0 } }, 3 },
	{ "W3", false, { { "w3", "memory.high", "64M" },
			 { "w3", "memory.swap.max", "0" } }, { "w3" },
	  { { "w3", LEAK, 2 } }, 1 },
	{ "W4", false, { { "w4a", "memory.high", "40M" },
			 { "w4a", "memory.swap.max", "0" } }, { "w4a", "w4b" },
	  { { "w4a", THRASH, 500 }, { "w4b", QUIET, 100 } }, 2 },
};

static char root[256];
static pid_t pids[MAX_TASKS];
static int go_fds[MAX_TASKS];

static __u64 now_ns(void)
{
	struct timespec ts;

	/* bpf_ktime_get_ns() is CLOCK_MONOTONIC */
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* A field of /proc/meminfo in MiB, or 0 */
static long meminfo_mib(const char *field)
{
	char line[128], name[64];
	long kib = 0, v;
	FILE *f = fopen("/proc/meminfo", "r");

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "%63[^:]: %ld kB", name, &v) == 2 &&
		    !strcmp(name, field)) {
			kib = v;
			break;
		}
	if (f)
		fclose(f);
	return kib / 1024;
}

static void touch(char *mem, size_t bytes)
{
	for (size_t i = 0; i < bytes; i += 4096)
		((volatile char *)mem)[i] = 1;
}

/* 2 MiB more, touched; false when the kernel refuses it */
static bool grow(void)
{
	char *mem = mmap(NULL, 2 * MiB, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (mem == MAP_FAILED)
		return false;
	touch(mem, 2 * MiB);
	return true;
}

/*
 * Before the release: the squeeze takes all but SQUEEZE_HEADROOM_MIB of the
 * free memory, so that the pressure it is timed for starts soon after the
 * release, not after seconds of filling free memory under TCG. Free, not
 * available: taking page cache would stall, and an armed killer would act
 * before the run began.
 */
#define SQUEEZE_HEADROOM_MIB	128
static long task_prepare(const struct task_spec *t)
{
	long done = 0, want;

	if (t->kind != SQUEEZE)
		return 0;
	want = meminfo_mib("MemFree") - SQUEEZE_HEADROOM_MIB;
	for (; done < want; done += 2)
		if (!grow())
			_exit(3);
	return done;
}

/* The task's life once released; never returns. */
static void task_run(const struct task_spec *t, long prepared_mib)
{
	char *mem;

	switch (t->kind) {
	case THRASH:
	case QUIET:
		mem = mmap(NULL, t->mib * MiB, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (mem == MAP_FAILED)
			_exit(3);
		touch(mem, t->mib * MiB);
		break;
	case SQUEEZE:
		/* past RAM, in steps, so that the kernel sees it grow */
		for (long done = prepared_mib, end = meminfo_mib("MemTotal") + 512;
		     done < end; done += 2)
			if (!grow())
				_exit(3);
		break;
	case LEAK:
		for (;;) {
			mem = mmap(NULL, t->mib * MiB, PROT_READ | PROT_WRITE,
				   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
			if (mem == MAP_FAILED)
				_exit(3);
			touch(mem, t->mib * MiB);
			usleep(50 * 1000);
		}
	case BURN:
		for (;;)
			;
	}
	for (;;)
		pause();
}

/*
 * Fork a task into its cgroup; it says it is ready on *ready_fd, then waits
 * for a byte on *go_fd to start.
 */
static pid_t task_spawn(const struct task_spec *t, int *go_fd, int *ready_fd)
{
	char cg[512], c = 0;
	int go[2], ready[2];
	long prepared;
	pid_t pid;

	if (pipe(go))
		return -1;
	if (pipe(ready)) {
		close(go[0]);
		close(go[1]);
		return -1;
	}
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid) {
		close(go[0]);
		close(ready[1]);
		*go_fd = go[1];
		*ready_fd = ready[0];
		return pid;
	}
	close(go[1]);
	close(ready[0]);
	snprintf(cg, sizeof(cg), "%s/%s", root, t->cg);
	if (hog_set_adj("0") || cg_write(cg, "cgroup.procs", "0"))
		_exit(2);
	prepared = task_prepare(t);
	if (write(ready[1], &c, 1) != 1 || read(go[0], &c, 1) != 1)
		_exit(0);
	task_run(t, prepared);
	_exit(0);
}

static void tasks_kill(int n)
{
	for (int i = 0; i < n; i++) {
		if (pids[i] <= 0)
			continue;
		kill(pids[i], SIGKILL);
		waitpid(pids[i], NULL, 0);
		close(go_fds[i]);
		pids[i] = 0;
	}
}

static void setup_cgroups(const struct workload *w)
{
	char cg[512];

	if (cg_write(root, "cgroup.subtree_control", "+memory"))
		bail("cannot enable the memory controller in %s: %s", root,
		     strerror(errno));
	for (int i = 0; i < w->nr_tasks; i++) {
		snprintf(cg, sizeof(cg), "%s/%s", root, w->tasks[i].cg);
		if (cg_create(cg))
			bail("cannot create cgroup %s", cg);
	}
	for (int i = 0; i < 3 && w->limits[i][0]; i++) {
		snprintf(cg, sizeof(cg), "%s/%s", root, w->limits[i][0]);
		/* no swap controller file without swap: nothing to limit */
		if (cg_write(cg, w->limits[i][1], w->limits[i][2]) &&
		    strcmp(w->limits[i][1], "memory.swap.max"))
			bail("cannot set %s %s of %s", w->limits[i][1],
			     w->limits[i][2], cg);
	}
}

static __u64 kallsyms_addr(const char *name)
{
	char line[512], sym[256], type;
	unsigned long long addr;
	__u64 found = 0;
	FILE *f = fopen("/proc/kallsyms", "r");

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "%llx %c %255s", &addr, &type, sym) == 3 &&
		    !strcmp(sym, name)) {
			found = addr;
			break;
		}
	if (f)
		fclose(f);
	return found;
}

/* "12.3" ms after @from, or an empty field when @ns did not happen */
static void field(__u64 ns, __u64 from)
{
	if (ns && from && ns >= from)
		printf(",%.1f", (ns - from) / 1e6);
	else
		printf(",");
}

static void reset(struct kill_timeline_bpf__bss *b)
{
	b->armed = false;
	b->first_stall_ns = b->psi_event_ns = b->handler_ns = 0;
	b->declare_ns = b->oom_ns = b->exit_ns = 0;
	b->exit_pid = 0;
	b->lost_signals = false;
}

/* Run $KL_ARM or $KL_DISARM with the watched cgroups as "$@" */
static void run_hook(const char *var, const struct workload *w)
{
	const char *cmd = getenv(var);
	char *argv[8] = { "sh", "-c", (char *)cmd, "kill_latency" };
	char paths[2][512];
	int argc = 4, status;
	pid_t pid;

	if (!cmd || !*cmd)
		return;
	for (int i = 0; i < 2 && w->watch[i]; i++) {
		snprintf(paths[i], sizeof(paths[i]), "/sys/fs/cgroup/%s%s%s", root,
			 *w->watch[i] ? "/" : "", w->watch[i]);
		argv[argc++] = paths[i];
	}
	pid = fork();
	if (pid == 0) {
		execv("/bin/sh", argv);
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) ||
	    WEXITSTATUS(status))
		bail("$%s failed: %s", var, cmd);
}

static void one_run(struct kill_timeline_bpf *skel, const char *killer,
		    const struct workload *w, int run, int limit_s)
{
	struct kill_timeline_bpf__bss *b = skel->bss;
	__u64 start, kill_ns = 0, deadline;
	struct fatal_signal s;
	bool seen_exited = false, before_onset;
	int collateral = 0;
	char sender[16] = "";
	char zero = 0;

	reset(b);
	for (int i = 0; i < w->nr_tasks; i++) {
		__u32 pid, idx = i;
		int ready_fd, tries = 0;
		char c;

		/*
		 * A task killed before the release (a killer acting on an
		 * event left from the last run) is made again, twice at most:
		 * nothing is timed yet.
		 */
		for (;;) {
			pids[i] = task_spawn(&w->tasks[i], &go_fds[i], &ready_fd);
			if (pids[i] < 0)
				bail("fork: %s", strerror(errno));
			/* in its cgroup, and done with what precedes the release */
			if (read(ready_fd, &c, 1) == 1)
				break;
			close(ready_fd);
			close(go_fds[i]);
			waitpid(pids[i], NULL, 0);
			if (++tries == 3)
				bail("task %d died before the release, 3 times", pids[i]);
			fprintf(stderr, "kill_latency: %s %s run %d: task %d died before the release; again\n",
				killer, w->name, run, pids[i]);
		}
		close(ready_fd);
		pid = pids[i];
		if (bpf_map__update_elem(skel->maps.watched, &pid, sizeof(pid),
					 &idx, sizeof(idx), BPF_ANY))
			bail("cannot watch pid %d", pid);
	}
	start = now_ns();
	b->armed = true;
	for (int i = 0; i < w->nr_tasks; i++)
		if (write(go_fds[i], &zero, 1) != 1)
			bail("task %d did not start", pids[i]);
	deadline = start + limit_s * 1000000000ULL;
	while (!b->exit_ns && now_ns() < deadline)
		usleep(10 * 1000);
	/* a second victim or a kill outside the workload comes at once */
	if (b->exit_ns)
		usleep(300 * 1000);
	b->armed = false;

	/*
	 * The kill time is the first fatal signal to the intended victim, or,
	 * when another task died first, the first one to that task.
	 */
	while (!bpf_map__lookup_and_delete_elem(skel->maps.signals, NULL, 0,
						&s, sizeof(s), 0)) {
		bool first_to_exited = b->exit_ns && s.pid == b->exit_pid &&
				       !seen_exited;

		if (first_to_exited)
			seen_exited = true;
		if (s.watched == 0) {
			if (!kill_ns) {
				kill_ns = s.ns;
				memcpy(sender, s.sender, sizeof(sender));
			}
			continue;
		}
		/* any other task: a wrong victim or a bystander */
		collateral++;
		fprintf(stderr, "kill_latency: %s %s run %d: signal %u from %.16s to %.16s (pid %u)\n",
			killer, w->name, run, s.sig, s.sender, s.receiver, s.pid);
		if (first_to_exited && b->exit_pid != (__u32)pids[0] && !kill_ns) {
			kill_ns = s.ns;
			memcpy(sender, s.sender, sizeof(sender));
		}
	}
	if (b->lost_signals)
		fprintf(stderr, "kill_latency: %s %s run %d: more than %d fatal signals; the rest were not seen\n",
			killer, w->name, run, MAX_SIGNALS);
	/*
	 * killer,workload,run,killed,victim_ok,collateral,onset_ms,latency_ms:
	 * a killer that acts before anything stalled (on free memory, say)
	 * has no onset to count from: its latency is 0, and before_onset says
	 * so.
	 */
	before_onset = b->exit_ns &&
		       (!b->first_stall_ns || b->first_stall_ns > b->exit_ns);
	printf("%s,%s,%d,%d,%d,%d", killer, w->name, run, b->exit_ns != 0,
	       b->exit_ns && b->exit_pid == (__u32)pids[0], collateral);
	field(b->first_stall_ns, start);
	if (before_onset)
		printf(",0.0");
	else
		field(b->exit_ns, b->first_stall_ns);
	/* the path, each from onset */
	field(b->psi_event_ns, b->first_stall_ns);
	field(b->handler_ns, b->first_stall_ns);
	field(b->declare_ns, b->first_stall_ns);
	field(b->oom_ns, b->first_stall_ns);
	field(kill_ns, b->first_stall_ns);
	field(b->exit_ns, start);
	printf(",%.16s,%d\n", sender, before_onset);
	fflush(stdout);
	fprintf(stderr, "kill_latency: %s %s run %d: %s\n", killer, w->name,
		run, b->exit_ns ? "killed" : "nothing died");

	tasks_kill(w->nr_tasks);
	for (int i = 0; i < w->nr_tasks; i++) {
		__u32 pid = pids[i];

		bpf_map__delete_elem(skel->maps.watched, &pid, sizeof(pid), 0);
	}
}

static const char header[] =
	"killer,workload,run,killed,victim_ok,collateral,onset_ms,latency_ms,"
	"psi_event_ms,handler_ms,declare_ms,oom_ms,kill_ms,start_to_exit_ms,"
	"sender,before_onset";

int main(int argc, char **argv)
{
	const struct workload *w = NULL;
	struct kill_timeline_bpf *skel;
	int runs, limit_s, first_run = 1, err;

	if (argc == 2 && !strcmp(argv[1], "--header")) {
		puts(header);
		return 0;
	}
	if (argc != 6 && argc != 7) {
		fprintf(stderr, "usage: kill_latency KILLER WORKLOAD ROOT RUNS LIMIT_S [FIRST_RUN] | --header\n");
		return 2;
	}
	if (argc == 7)
		first_run = atoi(argv[6]);
	for (size_t i = 0; i < sizeof(workloads) / sizeof(*workloads); i++)
		if (!strcmp(argv[2], workloads[i].name))
			w = &workloads[i];
	runs = atoi(argv[4]);
	limit_s = atoi(argv[5]);
	if (!w || runs <= 0 || limit_s <= 0 || first_run <= 0) {
		fprintf(stderr, "kill_latency: bad workload \"%s\" (W1..W4), runs or limit\n",
			argv[2]);
		return 2;
	}
	snprintf(root, sizeof(root), "%s", argv[3]);
	setvbuf(stderr, NULL, _IOLBF, 0);

	skel = kill_timeline_bpf__open();
	if (!skel)
		bail("cannot open the timeline probe");
	skel->bss->psi_workfn = kallsyms_addr("psi_bpf_event_workfn");
	skel->bss->stall_anywhere = w->stall_anywhere;
	/* the kernel alone or the RFC's: attach what exists */
	if (!kallsyms_addr("bpf_out_of_memory"))
		bpf_program__set_autoload(skel->progs.declare, false);
	if (!kallsyms_addr("bpf_handle_psi_event"))
		bpf_program__set_autoload(skel->progs.handler, false);
	err = kill_timeline_bpf__load(skel);
	if (!err)
		err = kill_timeline_bpf__attach(skel);
	if (err)
		bail("cannot load the timeline probe: %s", strerror(-err));

	setup_cgroups(w);
	run_hook("KL_ARM", w);
	for (int run = first_run; run < first_run + runs; run++) {
		one_run(skel, argv[1], w, run, limit_s);
		/* quiet again: no stall left over in the next run's window */
		usleep(600 * 1000);
	}
	run_hook("KL_DISARM", w);
	kill_timeline_bpf__destroy(skel);
	return 0;
}
