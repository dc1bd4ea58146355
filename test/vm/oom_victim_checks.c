// SPDX-License-Identifier: GPL-2.0
/*
 * bpf_oom_kill_process() must refuse the victims the kernel's own selection
 * never picks (issue 9, item e), and a kill the kernel makes after a policy
 * tried must not be credited to that policy (item j). The test policy
 * (progs/named_victim.bpf.c) kills the pid this scenario names.
 *
 * A policy that names the same victim in two consecutive OOMs: hogs V, W and
 * X share victimtest/v. V is pinned to CPU 0 at a low SCHED_FIFO priority
 * and this scenario spins on CPU 0 above it, so once killed V cannot run,
 * and so cannot exit, until we let it.
 *  - OOM #1: the policy kills V. The OOM reaper takes V's memory (after its
 *    2 s delay) and sets MMF_OOM_SKIP; V lives on as a husk.
 *  - OOM #2: the policy names V again. The kfunc must refuse (-EALREADY,
 *    or -EINVAL for MMF_OOM_SKIP) and record no progress, so the kernel's
 *    killer kills W. A kfunc that "kills" V again reports progress while
 *    freeing nothing, and W survives: the livelock of the issue.
 *  - OOM #3: the same, but the policy returns 0 whatever happens, so the
 *    kernel's killer acts after the policy's attempt in the same OOM. A
 *    tracer reads oc->bpf_policy_cookie at that kill: it must be 0. On a
 *    kernel that sets the cookie on the policy's kill and never clears it,
 *    the kernel's kill inherits the policy's cookie.
 * A vfork child: the policy names the child C of a vfork() in victimtest/vf
 * (it shares its parent's mm). The kfunc must refuse it with -EINVAL; the
 * kernel's killer then kills the oom_score_adj 1000 hog beside them.
 *
 * bpf_oom_kill_memcg(), a unit killed whole: U1 and U2 share victimtest/u
 * with S3 (oom_score_adj 500), sacrificial oom_score_adj 1000 hogs S1 and
 * S2 sit in victimtest/s. The policy names
 * U1 with, as the unit, the root memcg in a system-wide OOM
 * (mem_cgroup_scan_tasks() BUG()s on it), then victimtest/s (U1's memory is not charged there), then, for an
 * OOM in victimtest/u, victimtest/s again (outside the OOM): -EINVAL each
 * time, U1 and U2 live, and the kernel's killer takes a sacrificial hog
 * (S1, S2, then S3).
 * Then victimtest/u: U1 and U2 both die.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <bpf/libbpf.h>

#include "scenario.h"
#include "policy_util.h"

#define TOP "victimtest"
#define COOKIE 0xc00c1e

static struct named_victim_bpf *skel;

static const char *errname(int ret)
{
	static char buf[32];

	switch (ret) {
	case 0: return "0";
	case -EPERM: return "-EPERM";
	case -ESRCH: return "-ESRCH";
	case -EINVAL: return "-EINVAL";
	case -EBUSY: return "-EBUSY";
	case -EALREADY_: return "-EALREADY";
	}
	snprintf(buf, sizeof(buf), "%d", ret);
	return buf;
}

/* The policy's run record @i, or NULL if it did not run that often */
static struct run_record *run(unsigned int i)
{
	return i < skel->bss->nr_runs && i < NAMED_MAX_RECORDS ? &skel->bss->runs[i] : NULL;
}

/* Wait without sleeping (we may be starving someone) for a hog to die */
static bool spin_for_death(struct hog *h, int ms)
{
	for (int waited = 0; waited < ms; waited += 10) {
		if (!hog_alive(h))
			return true;
		spin_ms(10);
	}
	return !hog_alive(h);
}

/* Kills traced in [from, to): the first one not of @except, or NULL */
static struct kill_record *kill_other_than(unsigned int from, unsigned int to,
					   pid_t except)
{
	for (unsigned int i = from; i < to && i < NAMED_MAX_RECORDS; i++)
		if (skel->bss->kills[i].pid != except)
			return &skel->bss->kills[i];
	return NULL;
}

static void same_victim_twice(void)
{
	struct hog hogs[3], *v = &hogs[0], *w = &hogs[1], *x = &hogs[2];
	unsigned int k0, k1, k2, k3, r0;
	struct kill_record *kr;
	struct run_record *r;
	long rss_before, rss_after = -1;
	int ret1, ret2, ret3;
	bool w_died_2, other_died_3, v_alive;
	uint64_t cgid = cg_id(TOP "/v");

	if (hog_spawn(v, "V", TOP "/v", 32 * MiB, 0) ||
	    hog_spawn(w, "W", TOP "/v", 24 * MiB, 500) ||
	    hog_spawn(x, "X", TOP "/v", 16 * MiB, 0))
		bail("cannot start the hogs");
	for (int i = 0; i < 3; i++)
		if (hog_release(&hogs[i]) || !hog_wait_ready(&hogs[i], 30000))
			bail("hog %s did not get its memory", hogs[i].name);
	make_starvable(v->pid);
	rss_before = rss_kib(v->pid);

	/* From here until starve_end(): no sleeping, no output */
	starve_begin();
	skel->bss->victim_pid = v->pid;
	skel->bss->claim = 1;
	r0 = skel->bss->nr_runs;
	k0 = skel->bss->nr_kills;
	ret1 = declare(cgid);
	k1 = skel->bss->nr_kills;

	/*
	 * The reaper waits 2 s for V to exit by itself, then takes its
	 * memory and sets MMF_OOM_SKIP: wait until V's RSS is down and has
	 * stayed put for 200 ms, then a little more.
	 */
	for (int waited = 0, still = 0; waited < 10000 && still < 200; waited += 10) {
		long rss = rss_kib(v->pid);

		still = rss == rss_after && rss >= 0 && rss < rss_before / 4 ?
			still + 10 : 0;
		rss_after = rss;
		spin_ms(10);
	}
	spin_ms(300);

	ret2 = declare(cgid);
	w_died_2 = spin_for_death(w, 5000);
	k2 = skel->bss->nr_kills;

	skel->bss->claim = 0;
	ret3 = declare(cgid);
	k3 = skel->bss->nr_kills;
	other_died_3 = w_died_2 ? spin_for_death(x, 5000) :
		       spin_for_death(w, 5000) || spin_for_death(x, 1000);
	v_alive = hog_alive(v);
	starve_end();

	printf("# V %d, W %d, X %d; V's rss %ld KiB, %ld KiB after the reaper\n",
	       v->pid, w->pid, x->pid, rss_before, rss_after);

	/* OOM #1 */
	r = run(r0);
	check(ret1 == 1, "OOM #1 was declared and handled (ret %d)", ret1);
	check(r && r->pid == v->pid && r->ret == 0,
	      "OOM #1: the policy killed V (kfunc returned %s)",
	      r ? errname(r->ret) : "nothing: the policy did not run");
	check(k1 - k0 == 1 && skel->bss->kills[k0].pid == v->pid &&
	      skel->bss->kills[k0].cookie == COOKIE,
	      "OOM #1: the tracer saw V's kill with the policy's cookie (%u kills, cookie %#llx)",
	      k1 - k0, k1 > k0 ? (unsigned long long)skel->bss->kills[k0].cookie : 0ULL);
	check(rss_after >= 0 && rss_after < rss_before / 4 && v_alive,
	      "the OOM reaper took V's memory while V could not run (%ld -> %ld KiB, %s)",
	      rss_before, rss_after, v_alive ? "alive" : "exited");

	/* OOM #2 */
	r = run(r0 + 1);
	check(r && r->pid == v->pid &&
	      (r->flags & (NAMED_VICTIM | NAMED_OOM_SKIP)) == (NAMED_VICTIM | NAMED_OOM_SKIP),
	      "OOM #2: the policy named V, an OOM victim with MMF_OOM_SKIP (flags %#x)",
	      r ? r->flags : 0);
	check(r && (r->ret == -EALREADY_ || r->ret == -EINVAL),
	      "OOM #2: bpf_oom_kill_process() refused V (-EALREADY or -EINVAL, got %s)",
	      r ? errname(r->ret) : "nothing");
	check(ret2 == 1, "OOM #2 was handled (ret %d)", ret2);
	check(w_died_2 && hog_killed_by_sigkill(w),
	      "OOM #2: the kernel's killer fell back and killed W");
	kr = kill_other_than(k1, k2, v->pid);
	check(kr && kr->pid == w->pid && kr->cookie == 0,
	      "OOM #2: W's kill is credited to no policy (%s %#llx)",
	      kr ? "oc->bpf_policy_cookie" : "no kill but V's, cookie",
	      kr ? (unsigned long long)kr->cookie : 0ULL);

	/* OOM #3 */
	r = run(r0 + 2);
	check(ret3 == 1, "OOM #3 was handled (ret %d)", ret3);
	check(r && r->pid == v->pid && r->ret < 0,
	      "OOM #3: bpf_oom_kill_process() refused V again (got %s)",
	      r ? errname(r->ret) : "nothing");
	kr = kill_other_than(k2, k3, v->pid);
	check(kr && other_died_3,
	      "OOM #3: the kernel's killer killed after the policy's attempt (pid %d)",
	      kr ? kr->pid : 0);
	check(kr && kr->in_oom && kr->cookie == 0,
	      "OOM #3: the kernel's kill has oc->bpf_policy_cookie 0, not the policy's (%s%#llx)",
	      kr ? "" : "no kill, ", kr ? (unsigned long long)kr->cookie : 0ULL);

	check(hogs_wait_first_death(v, 1, 10000) == 0 && hog_killed_by_sigkill(v),
	      "V died of its SIGKILL once it could run");
	hogs_kill(hogs, 3);
}

static int vfork_child(void *arg)
{
	int *fds = arg;
	pid_t pid = syscall(SYS_getpid);
	char c;

	/* Only raw syscalls: we run on our parent's memory */
	syscall(SYS_write, fds[0], &pid, sizeof(pid));
	syscall(SYS_read, fds[1], &c, 1);
	return 0;
}

/* A process in @cg that vfork()s a child and waits for it */
static pid_t vfork_pair(const char *cg, pid_t *child, int *release_fd)
{
	int go[2], report[2], block[2];
	struct pollfd pfd;
	char pidbuf[32];
	pid_t parent;

	if (pipe(go) || pipe(report) || pipe(block))
		bail("pipe: %s", strerror(errno));
	parent = fork();
	if (parent < 0)
		bail("fork: %s", strerror(errno));
	if (!parent) {
		size_t size = 64 * 1024, mem = 8 * MiB;
		char *stack = malloc(size), *buf = malloc(mem), c;
		int fds[2] = { report[1], block[0] };
		pid_t pid;

		if (!stack || !buf || read(go[0], &c, 1) != 1)
			_exit(3);
		memset(buf, 1, mem);	/* memory of its own, shared with C */
		pid = clone(vfork_child, stack + size,
			    CLONE_VM | CLONE_VFORK | SIGCHLD, fds);
		if (pid < 0)
			_exit(4);
		_exit(waitpid(pid, NULL, 0) == pid ? 0 : 5);
	}
	close(go[0]);
	close(report[1]);
	close(block[0]);
	snprintf(pidbuf, sizeof(pidbuf), "%d", parent);
	if (cg_write(cg, "cgroup.procs", pidbuf) || write(go[1], "g", 1) != 1)
		bail("cannot start the vfork parent in %s", cg);
	pfd = (struct pollfd){ .fd = report[0], .events = POLLIN };
	if (poll(&pfd, 1, 10000) != 1 ||
	    read(report[0], child, sizeof(*child)) != sizeof(*child))
		bail("the vfork child did not report");
	close(report[0]);
	close(go[1]);
	*release_fd = block[1];
	return parent;
}

static void vfork_victim(void)
{
	struct hog w2;
	struct run_record *r;
	pid_t parent, child;
	int release, status, ret, died;
	unsigned int r0;

	if (hog_spawn(&w2, "W2", TOP "/vf", 16 * MiB, 1000) ||
	    hog_release(&w2) || !hog_wait_ready(&w2, 30000))
		bail("cannot start hog W2");
	parent = vfork_pair(TOP "/vf", &child, &release);
	printf("# vfork parent %d, child %d, W2 %d\n", parent, child, w2.pid);

	skel->bss->victim_pid = child;
	skel->bss->claim = 1;
	r0 = skel->bss->nr_runs;
	ret = declare(cg_id(TOP "/vf"));
	r = run(r0);
	check(r && r->pid == child && (r->flags & NAMED_VFORK),
	      "the policy named a vfork child (flags %#x)", r ? r->flags : 0);
	check(r && r->ret == -EINVAL,
	      "bpf_oom_kill_process() refused the vfork child with -EINVAL (got %s)",
	      r ? errname(r->ret) : "nothing");
	check(ret == 1, "the OOM was handled (ret %d)", ret);
	died = hogs_wait_first_death(&w2, 1, 5000);
	check(died == 0 && hog_killed_by_sigkill(&w2),
	      "the kernel's killer fell back and killed W2 (oom_score_adj 1000)");
	/* The declare handled the OOM before it returned */
	check(task_unkilled(child) && task_unkilled(parent),
	      "the vfork child and its parent were not killed");

	if (write(release, "x", 1) != 1)
		kill(parent, SIGKILL);
	close(release);
	check(waitpid(parent, &status, 0) == parent && WIFEXITED(status) &&
	      WEXITSTATUS(status) == 0,
	      "the vfork parent saw its child exit and exited normally");
	hogs_kill(&w2, 1);
}

static void kill_unit(void)
{
	struct hog u[2], s[3];
	struct run_record *r;
	unsigned int r0;
	int ret;
	static const struct {
		const char *what, *oom_in;
		uint64_t unit;	/* 0: victimtest/s, 1: the root */
	} refused[] = {
		/* system-wide: the root is within every OOM */
		{ "the root memcg", NULL, 1 },
		{ "a memcg U1's memory is not charged to", TOP, 0 },
		{ "a memcg outside the OOM'ing one", TOP "/u", 0 },
	};

	if (hog_spawn(&u[0], "U1", TOP "/u", 16 * MiB, 0) ||
	    hog_spawn(&u[1], "U2", TOP "/u", 16 * MiB, 0) ||
	    hog_spawn(&s[0], "S1", TOP "/s", 8 * MiB, 1000) ||
	    hog_spawn(&s[1], "S2", TOP "/s", 8 * MiB, 1000) ||
	    hog_spawn(&s[2], "S3", TOP "/u", 8 * MiB, 500))
		bail("cannot start the hogs");
	for (int i = 0; i < 3; i++)
		if ((i < 2 && (hog_release(&u[i]) || !hog_wait_ready(&u[i], 30000))) ||
		    hog_release(&s[i]) || !hog_wait_ready(&s[i], 30000))
			bail("a hog did not get its memory");

	skel->bss->victim_pid = u[0].pid;
	skel->bss->claim = 1;
	for (unsigned int i = 0; i < 3; i++) {
		skel->bss->unit_cgroup_id = refused[i].unit == 1 ? 1 :
					    cg_id(TOP "/s");
		r0 = skel->bss->nr_runs;
		ret = declare(refused[i].oom_in ? cg_id(refused[i].oom_in) : 0);
		r = run(r0);
		check(r && r->ret == -EINVAL,
		      "bpf_oom_kill_memcg() refused %s as U1's unit with -EINVAL (got %s)",
		      refused[i].what, r ? errname(r->ret) : "nothing");
		check(ret == 1 && hog_unkilled(&u[0]) && hog_unkilled(&u[1]),
		      "...the OOM was handled (ret %d), U1 and U2 live", ret);
		check(hogs_wait_first_death(s, 3, 5000) >= 0,
		      "...the kernel's killer took a sacrificial hog");
	}

	skel->bss->unit_cgroup_id = cg_id(TOP "/u");
	r0 = skel->bss->nr_runs;
	ret = declare(cg_id(TOP));
	r = run(r0);
	check(r && r->ret == 0 && ret == 1,
	      "bpf_oom_kill_memcg() with U1's own memcg killed (got %s)",
	      r ? errname(r->ret) : "nothing");
	check(hogs_wait_first_death(&u[0], 1, 5000) == 0 &&
	      hogs_wait_first_death(&u[1], 1, 5000) == 0,
	      "...U1 and U2 both died");
	check(cg_read_key(TOP "/u", "memory.events", "oom_group_kill") == 1,
	      "...victimtest/u's memory.events counts one oom_group_kill");
	skel->bss->unit_cgroup_id = 0;
	hogs_kill(u, 2);
	hogs_kill(s, 3);
}

int main(void)
{
	struct bpf_link *link;

	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGPIPE, SIG_IGN);	/* releasing a vfork child that was killed */
	cg_destroy(TOP);
	if (cg_write("", "cgroup.subtree_control", "+memory") ||
	    cg_create(TOP) || cg_write(TOP, "cgroup.subtree_control", "+memory") ||
	    cg_create(TOP "/v") || cg_create(TOP "/vf") ||
	    cg_create(TOP "/u") || cg_create(TOP "/s"))
		bail("cannot set up the cgroups under /sys/fs/cgroup/" TOP);

	skel = policy_load(-1, true);
	tracer_attach(skel);
	link = policy_attach(skel, COOKIE);
	declare_init();
	starve_setup();

	same_victim_twice();
	vfork_victim();
	kill_unit();

	bpf_link__destroy(link);
	named_victim_bpf__destroy(skel);
	cg_destroy(TOP);
	return checks_done();
}
