// SPDX-License-Identifier: GPL-2.0
/*
 * A policy that allocates while it handles an OOM (issue 19, defect a):
 * progs/storage_policy.bpf.c creates a task storage for every task of the
 * OOM's memcg. Its maps are created from inside that memcg, allocpol/
 * (memory.max 48M), so their memory is charged there. 400 sleeping tasks
 * and a 64M hog fill it; on the OOM the policy allocates for each task.
 *
 * Without PF_MEMALLOC around the handlers, the first allocation the
 * storage's cache cannot serve charges the full memcg, which reclaims and
 * OOMs again, and mem_cgroup_out_of_memory() waits for the oom_lock this
 * task holds: lockdep reports recursive locking, and the guest hangs. With
 * it, the charges are forced: every task gets its storage, and the
 * kernel's killer, behind the policy (which kills nothing), kills the hog.
 */
#include <signal.h>
#include <stdio.h>
#include <unistd.h>
#include <sys/wait.h>
#include <bpf/libbpf.h>

#include "scenario.h"
#include "storage_policy.skel.h"

#define CG "allocpol"
#define NR_SLEEPERS 400

static void move_self(const char *cg)
{
	char pid[32];

	snprintf(pid, sizeof(pid), "%d", getpid());
	if (cg_write(cg, "cgroup.procs", pid))
		bail("cannot move into /sys/fs/cgroup/%s", cg);
}

int main(void)
{
	static pid_t sleepers[NR_SLEEPERS];
	struct storage_policy_bpf *skel;
	struct bpf_link *link;
	struct hog hog;
	int i;

	setvbuf(stdout, NULL, _IOLBF, 0);
	cg_destroy(CG);
	if (cg_write("", "cgroup.subtree_control", "+memory") || cg_create(CG) ||
	    cg_write(CG, "memory.max", "48M"))
		bail("cannot set up /sys/fs/cgroup/" CG);
	cg_write(CG, "memory.swap.max", "0");

	/* The maps' memory is charged to the memcg that creates them */
	move_self(CG);
	skel = storage_policy_bpf__open_and_load();
	move_self("");
	if (!skel)
		bail("cannot load progs/storage_policy.bpf.c");

	for (i = 0; i < NR_SLEEPERS; i++) {
		sleepers[i] = fork();
		if (sleepers[i] < 0)
			bail("fork");
		if (!sleepers[i]) {
			char pid[32];

			snprintf(pid, sizeof(pid), "%d", getpid());
			if (cg_write(CG, "cgroup.procs", pid))
				_exit(1);
			pause();
			_exit(0);
		}
	}
	link = bpf_program__attach(skel->progs.storage_policy);
	if (!link)
		bail("cannot attach the policy");

	if (hog_spawn(&hog, "hog", CG, 64 * MiB, 0) || hog_release(&hog))
		bail("cannot start the hog");
	check(!hog_wait_ready(&hog, 60000) && hog_killed_by_sigkill(&hog),
	      "the kernel's killer, behind the policy, killed the hog");
	check(skel->bss->runs >= 1, "the policy ran (%u times)", skel->bss->runs);
	check(skel->bss->created >= NR_SLEEPERS && !skel->bss->failed,
	      "it gave every task a storage, charged to the full memcg (%u created, %u failed)",
	      skel->bss->created, skel->bss->failed);

	bpf_link__destroy(link);
	for (i = 0; i < NR_SLEEPERS; i++)
		kill(sleepers[i], SIGKILL);
	while (wait(NULL) > 0)
		;
	storage_policy_bpf__destroy(skel);
	cg_destroy(CG);
	return checks_done();
}
