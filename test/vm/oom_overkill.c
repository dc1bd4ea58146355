// SPDX-License-Identifier: GPL-2.0
/*
 * One OOM episode, one kill, whatever the policy (issue 19, defect d).
 * Three hogs of 130M fill overkill/ (memory.max 300M) at once: one kill
 * makes room for the other two. While the victim exits, the two others'
 * charges keep failing and come back to out_of_memory(); the kernel's own
 * selection meets the exiting victim and waits. A bpf policy used to be
 * asked first on each of those retries, and one that picks the largest task
 * not yet a victim (progs/greedy_hook.bpf.c) killed again each time.
 *
 * The episode runs with no policy, then with that policy on the OOM hook,
 * then with the same policy spinning 300 ms before it kills, then with one
 * that kills and returns 0 (progs/kill_return0.bpf.c, issue 19 i): each
 * must count one oom_kill in memory.events and leave two hogs alive with
 * all their memory, and the kernel must not look for a victim of its own
 * after that policy killed.
 *
 * The slow policy: a retry that finds the victim exiting must not ask the
 * policies at all. Asked, the policy took its time, the victim was gone by
 * the time it chose, and it (or, had it declined, the kernel's own
 * selection) killed a second hog though the first one's memory was free.
 */
#include <stdio.h>
#include <bpf/libbpf.h>

#include "scenario.h"
#include "greedy_hook.skel.h"
#include "kill_return0.skel.h"

#define CG "overkill"
#define NR_HOGS 3

/* Run the episode; the kills it took */
static long episode(const char *what)
{
	struct hog hogs[NR_HOGS];
	long before, kills;
	int i, first, alive = 0;

	before = cg_read_key(CG, "memory.events", "oom_kill");
	for (i = 0; i < NR_HOGS; i++)
		if (hog_spawn(&hogs[i], "hog", CG, 130 * MiB, 0))
			bail("cannot start the hogs");
	for (i = 0; i < NR_HOGS; i++)
		hog_release(&hogs[i]);

	first = hogs_wait_first_death(hogs, NR_HOGS, 60000);
	check(first >= 0, "%s: one of the hogs was killed", what);
	for (i = 0; i < NR_HOGS; i++)
		if (i != first && hog_wait_ready(&hogs[i], 60000))
			alive++;
	kills = cg_read_key(CG, "memory.events", "oom_kill") - before;
	check(alive == NR_HOGS - 1,
	      "%s: the two others filled their 130M and live (%d did)", what,
	      alive);
	check(kills == 1, "%s: memory.events counts one oom_kill (%ld)", what,
	      kills);
	hogs_kill(hogs, NR_HOGS);
	return kills;
}

int main(void)
{
	struct greedy_hook_bpf *skel;
	struct kill_return0_bpf *r0;
	struct bpf_link *link;

	setvbuf(stdout, NULL, _IOLBF, 0);
	cg_destroy(CG);
	if (cg_write("", "cgroup.subtree_control", "+memory") || cg_create(CG) ||
	    cg_write(CG, "memory.max", "300M"))
		bail("cannot set up /sys/fs/cgroup/" CG);
	cg_write(CG, "memory.swap.max", "0");

	episode("no policy");

	skel = greedy_hook_bpf__open_and_load();
	if (!skel)
		bail("cannot load progs/greedy_hook.bpf.c");
	link = bpf_program__attach(skel->progs.greedy_hook);
	if (!link)
		bail("cannot attach the greedy policy");
	episode("greedy policy on the OOM hook");
	check(skel->bss->kills >= 1,
	      "the policy killed (%u of its %u runs did)", skel->bss->kills,
	      skel->bss->runs);

	skel->bss->spin_ns = 300 * 1000 * 1000ULL;
	skel->bss->runs = skel->bss->kills = 0;
	episode("greedy policy spinning 300 ms on the OOM hook");
	check(skel->bss->kills == 1,
	      "the slow policy killed once (%u of its %u runs did)",
	      skel->bss->kills, skel->bss->runs);

	bpf_link__destroy(link);
	greedy_hook_bpf__destroy(skel);

	/* The kernel goes by the kill, whatever the policy returned */
	r0 = kill_return0_bpf__open_and_load();
	if (!r0 || kill_return0_bpf__attach(r0))
		bail("cannot load and attach progs/kill_return0.bpf.c");
	episode("a policy that kills and returns 0");
	check(r0->bss->kills >= 1, "the policy killed (%u of its %u runs did)",
	      r0->bss->kills, r0->bss->runs);
	check(r0->bss->kills >= 1 && !r0->bss->evaluated_after_kill,
	      "the kernel selected no victim after its kill (it looked at %u tasks)",
	      r0->bss->evaluated_after_kill);
	kill_return0_bpf__destroy(r0);
	cg_destroy(CG);
	return checks_done();
}
