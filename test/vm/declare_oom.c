// SPDX-License-Identifier: GPL-2.0
/*
 * OOMs declared from user space through the oom_declare syscall program
 * (bpf_out_of_memory()), with no policy attached:
 *  - system-wide: the kernel's killer must kill the hog with oom_score_adj
 *    1000 (the RFC's kfunc killed nothing here: gfp_mask 0);
 *  - in a memcg: only that memcg's hog dies, its neighbour survives;
 *  - bad requests (order out of range, unknown cgroup) kill nothing.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "scenario.h"
#include "oom_shared.h"
#include "oom_declare.skel.h"

#define TOP "declaretest"

static int prog_fd;

static int declare(uint64_t cgid, int order)
{
	struct oom_declare_args args = { .cgroup_id = cgid, .order = order };
	LIBBPF_OPTS(bpf_test_run_opts, opts, .ctx_in = &args,
		    .ctx_size_in = sizeof(args));

	if (bpf_prog_test_run_opts(prog_fd, &opts))
		bail("BPF_PROG_TEST_RUN of oom_declare failed");
	return args.ret;
}

int main(void)
{
	struct oom_declare_bpf *skel;
	struct hog hogs[3];
	long kills;
	int ret;

	setvbuf(stdout, NULL, _IOLBF, 0);
	cg_destroy(TOP);
	if (cg_write("", "cgroup.subtree_control", "+memory") ||
	    cg_create(TOP) || cg_write(TOP, "cgroup.subtree_control", "+memory") ||
	    cg_create(TOP "/a") || cg_create(TOP "/b") || cg_create(TOP "/c"))
		bail("cannot set up the cgroups under /sys/fs/cgroup/" TOP);

	skel = oom_declare_bpf__open_and_load();
	if (!skel)
		bail("cannot load the oom_declare syscall program");
	prog_fd = bpf_program__fd(skel->progs.oom_declare);

	if (hog_spawn(&hogs[0], "a", TOP "/a", 64 * MiB, 1000) ||
	    hog_spawn(&hogs[1], "b", TOP "/b", 32 * MiB, 0) ||
	    hog_spawn(&hogs[2], "c", TOP "/c", 32 * MiB, 0))
		bail("cannot start the hogs");
	for (int i = 0; i < 3; i++)
		if (hog_release(&hogs[i]) || !hog_wait_ready(&hogs[i], 30000))
			bail("hog %s did not get its memory", hogs[i].name);

	kills = vmstat_oom_kill();
	ret = declare(0, 12);
	check(ret == -22, "order 12 is refused with -EINVAL (got %d)", ret);
	ret = declare(cg_id(TOP "/a") + 1000000, 0);
	check(ret == -2, "an unknown cgroup is refused with -ENOENT (got %d)", ret);
	check(vmstat_oom_kill() == kills, "bad requests killed nothing");

	ret = declare(0, 0);
	check(ret == 1, "a system-wide OOM was declared and handled (ret %d)", ret);
	check(hogs_wait_first_death(hogs, 3, 10000) == 0 &&
	      hog_killed_by_sigkill(&hogs[0]),
	      "the kernel killed the oom_score_adj 1000 hog");
	check(vmstat_oom_kill() == kills + 1, "/proc/vmstat counts one oom_kill");

	ret = declare(cg_id(TOP "/b"), 0);
	check(ret == 1, "an OOM in %s/b was declared and handled (ret %d)", TOP, ret);
	check(hogs_wait_first_death(hogs, 3, 10000) == 1 &&
	      hog_killed_by_sigkill(&hogs[1]), "b's hog was killed");
	/* The declare handled the OOM before it returned */
	check(hog_unkilled(&hogs[2]), "c's hog survived");
	check(cg_read_key(TOP "/b", "memory.events", "oom_kill") == 1,
	      "b memory.events says oom_kill 1");

	hogs_kill(hogs, 3);
	oom_declare_bpf__destroy(skel);
	cg_destroy(TOP);
	return checks_done();
}
