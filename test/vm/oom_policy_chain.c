// SPDX-License-Identifier: GPL-2.0
/*
 * Several OOM policies on the one hook (issue 9, item k), with two instances
 * A and B of the test policy (progs/named_victim.bpf.c), which number their
 * runs in one shared sequence:
 *  - the order: fmod_ret programs run newest first (the trampoline keeps
 *    its programs in an hlist and adds at the head), whatever the order of
 *    the attach cookies; re-attaching the older one makes it the newest;
 *  - the chain stops at the first program that returns non-zero;
 *  - one OOM kills once: the newer policy kills X and returns 0, the older
 *    one then names Y. Its bpf_oom_kill_process() must return -EBUSY, Y
 *    must live, and /proc/vmstat must count one oom_kill. X is kept from
 *    exiting during the OOM (see starve_begin()), so the kernel's own
 *    selection, which runs after policies that return 0, meets X as an OOM
 *    victim still alive and waits instead of killing.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <bpf/libbpf.h>

#include "scenario.h"
#include "policy_util.h"

#define TOP "chaintest"

static struct named_victim_bpf *a, *b;

/* The last run of @skel, or NULL if it has none after @since runs */
static struct run_record *last_run(struct named_victim_bpf *skel, unsigned int since)
{
	unsigned int n = skel->bss->nr_runs;

	return n > since && n <= NAMED_MAX_RECORDS ? &skel->bss->runs[n - 1] : NULL;
}

/* Declare an OOM in the empty memcg; both policies run and kill nothing */
static void check_order(const char *newer_name, struct named_victim_bpf *newer,
			struct named_victim_bpf *older)
{
	unsigned int rn = newer->bss->nr_runs, ro = older->bss->nr_runs;
	struct run_record *n, *o;
	int ret;

	newer->bss->victim_pid = older->bss->victim_pid = 0;
	ret = declare(cg_id(TOP "/empty"));
	n = last_run(newer, rn);
	o = last_run(older, ro);
	check(ret == 0, "an OOM in an empty memcg frees nothing (ret %d)", ret);
	check(n && o && n->seq < o->seq,
	      "the newest policy, %s, ran first (runs #%llu and #%llu)", newer_name,
	      n ? (unsigned long long)n->seq : 0ULL,
	      o ? (unsigned long long)o->seq : 0ULL);
}

int main(void)
{
	struct bpf_link *link_a, *link_b;
	struct hog hogs[3], *x = &hogs[0], *x2 = &hogs[1], *y = &hogs[2];
	struct run_record *ra, *rb;
	unsigned int runs_a, runs_b;
	long kills;
	int ret;

	setvbuf(stdout, NULL, _IOLBF, 0);
	cg_destroy(TOP);
	if (cg_write("", "cgroup.subtree_control", "+memory") ||
	    cg_create(TOP) || cg_write(TOP, "cgroup.subtree_control", "+memory") ||
	    cg_create(TOP "/empty") || cg_create(TOP "/m"))
		bail("cannot set up the cgroups under /sys/fs/cgroup/" TOP);

	a = policy_load(-1, false);
	b = policy_load(bpf_map__fd(a->maps.run_seq), false);
	declare_init();
	starve_setup();

	/* Cookies against attach order: the order must not come from them */
	link_a = policy_attach(a, 2);
	link_b = policy_attach(b, 1);
	check_order("B", b, a);
	bpf_link__destroy(link_a);
	link_a = policy_attach(a, 2);
	check_order("A attached again", a, b);

	/* A (newest) kills and returns 1: B does not run */
	if (hog_spawn(x, "X", TOP "/m", 16 * MiB, 0) ||
	    hog_spawn(x2, "X2", TOP "/m", 16 * MiB, 0) ||
	    hog_spawn(y, "Y", TOP "/m", 16 * MiB, 0))
		bail("cannot start the hogs");
	for (int i = 0; i < 3; i++)
		if (hog_release(&hogs[i]) || !hog_wait_ready(&hogs[i], 30000))
			bail("hog %s did not get its memory", hogs[i].name);

	a->bss->victim_pid = x->pid;
	a->bss->claim = 1;
	b->bss->victim_pid = y->pid;
	b->bss->claim = 1;
	runs_a = a->bss->nr_runs;
	runs_b = b->bss->nr_runs;
	kills = vmstat_oom_kill();
	ret = declare(cg_id(TOP "/m"));
	ra = last_run(a, runs_a);
	check(ret == 1 && ra && ra->ret == 0 && ra->returned == 1,
	      "A killed X and returned 1 (declare %d, kfunc %d)", ret,
	      ra ? ra->ret : 1);
	check(b->bss->nr_runs == runs_b,
	      "B, older, did not run after A returned non-zero (%u runs)",
	      b->bss->nr_runs - runs_b);
	check(hogs_wait_first_death(x, 1, 5000) == 0 && hog_killed_by_sigkill(x),
	      "X was killed");
	check(vmstat_oom_kill() == kills + 1, "/proc/vmstat counts one oom_kill");

	/* A kills X2 and returns 0; B then names Y in the same OOM */
	make_starvable(x2->pid);
	a->bss->victim_pid = x2->pid;
	a->bss->claim = 0;
	runs_a = a->bss->nr_runs;
	runs_b = b->bss->nr_runs;
	kills = vmstat_oom_kill();
	starve_begin();
	ret = declare(cg_id(TOP "/m"));
	starve_end();
	ra = last_run(a, runs_a);
	rb = last_run(b, runs_b);
	printf("# X2 %d, Y %d\n", x2->pid, y->pid);
	check(ret == 1, "the OOM was handled (ret %d)", ret);
	check(ra && ra->pid == x2->pid && ra->ret == 0 && ra->returned == 0,
	      "A killed X2 and returned 0 (kfunc %d)", ra ? ra->ret : 1);
	check(rb && rb->pid == y->pid && rb->ret == -EBUSY,
	      "B's kill of Y in the same OOM returned -EBUSY (got %d)",
	      rb ? rb->ret : 1);
	check(hogs_wait_first_death(x2, 1, 5000) == 0 && hog_killed_by_sigkill(x2),
	      "X2 was killed");
	check(hog_unkilled(y), "Y survived");
	check(vmstat_oom_kill() == kills + 1,
	      "/proc/vmstat counts one oom_kill for the OOM (counted %ld)",
	      vmstat_oom_kill() - kills);

	hogs_kill(hogs, 3);
	bpf_link__destroy(link_a);
	bpf_link__destroy(link_b);
	named_victim_bpf__destroy(b);
	named_victim_bpf__destroy(a);
	cg_destroy(TOP);
	return checks_done();
}
