// SPDX-License-Identifier: GPL-2.0
/*
 * The RFC's PSI selftest as a scenario. psitest/cg2 has memory.high 40M and
 * no swap; its hog wants 500 MiB, so it is throttled and the cgroup's memory
 * pressure rises. A "some 100ms per 1s" trigger on cg2 fires, the
 * psi-declare handler declares an OOM in cg2, and cg2's hog must die while
 * cg1's hog (100 MiB, no limit) survives.
 *
 *   (default)         the trigger is a memory.pressure fd this test holds
 *   --kernel-trigger  the trigger is kernel-owned (bpf_psi_create_trigger),
 *                     and no fd is held at all
 *   --no-handler      fd trigger, no handler: nothing may be killed in 15 s
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "scenario.h"
#include "oom_shared.h"
#include "psi_declare.skel.h"
#include "psi_trigger.skel.h"

#define TOP "psitest"
#define PSI_MEM_SOME 2		/* enum psi_states */

static int kernel_trigger(int prog_fd, uint64_t cgid, int *id)
{
	struct psi_trigger_args args = {
		.cgroup_id = cgid, .state = PSI_MEM_SOME,
		.threshold_us = 100000, .window_us = 1000000,
	};
	LIBBPF_OPTS(bpf_test_run_opts, opts, .ctx_in = &args,
		    .ctx_size_in = sizeof(args));
	int err = bpf_prog_test_run_opts(prog_fd, &opts);

	*id = args.ret;
	return err ?: args.ret < 0 ? args.ret : 0;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	bool with_handler = strcmp(mode, "--no-handler");
	bool in_kernel = !strcmp(mode, "--kernel-trigger");
	struct psi_declare_bpf *skel = NULL;
	struct psi_trigger_bpf *trig = NULL;
	const char *trigger = "some 100000 1000000";
	struct hog hogs[2];
	int fd = -1, id = 0, victim;

	setvbuf(stdout, NULL, _IOLBF, 0);
	cg_destroy(TOP);
	if (cg_write("", "cgroup.subtree_control", "+memory") ||
	    cg_create(TOP) || cg_write(TOP, "cgroup.subtree_control", "+memory") ||
	    cg_create(TOP "/cg1") || cg_create(TOP "/cg2") ||
	    cg_write(TOP "/cg2", "memory.high", "40M"))
		bail("cannot set up the cgroups under /sys/fs/cgroup/" TOP);
	cg_write(TOP "/cg2", "memory.swap.max", "0");

	if (with_handler) {
		skel = psi_declare_bpf__open_and_load();
		if (!skel || psi_declare_bpf__attach(skel))
			bail("cannot load and attach the psi-declare handler");
	}
	if (in_kernel) {
		trig = psi_trigger_bpf__open_and_load();
		if (!trig)
			bail("cannot load the trigger programs");
		int err = kernel_trigger(bpf_program__fd(trig->progs.psi_trigger_create),
					 cg_id(TOP "/cg2"), &id);

		check(!err && id > 0, "a kernel-owned trigger was created (id %d)", id);
		psi_trigger_bpf__destroy(trig);	/* nothing of ours holds it */
	} else {
		fd = open("/sys/fs/cgroup/" TOP "/cg2/memory.pressure", O_RDWR);
		if (fd < 0 || write(fd, trigger, strlen(trigger) + 1) < 0)
			bail("cannot create the PSI trigger on cg2");
	}

	if (hog_spawn(&hogs[0], "cg1", TOP "/cg1", 100 * MiB, 0) ||
	    hog_spawn(&hogs[1], "cg2", TOP "/cg2", 500 * MiB, 0))
		bail("cannot start the hogs");
	if (hog_release(&hogs[0]) || !hog_wait_ready(&hogs[0], 30000))
		bail("cg1's hog did not get its memory");
	hog_release(&hogs[1]);

	victim = hogs_wait_first_death(hogs, 2, with_handler ? 60000 : 15000);
	if (!with_handler) {
		check(victim < 0, "without a handler no hog is killed in 15 s");
		check(cg_read_key(TOP "/cg2", "memory.events", "high") > 0,
		      "cg2 was throttled at memory.high meanwhile");
		goto out;
	}
	check(victim == 1, "cg2's hog was killed (first death: %s)",
	      victim < 0 ? "none" : hogs[victim].name);
	check(victim == 1 && hog_killed_by_sigkill(&hogs[1]),
	      "it died of SIGKILL");
	check(hog_alive(&hogs[0]), "cg1's hog survived");
	check(cg_read_key(TOP "/cg2", "memory.events", "oom_kill") == 1,
	      "cg2 memory.events says oom_kill 1");
	check(skel->bss->nr_declared >= 1,
	      "the handler declared the OOM (runs %llu, declared %llu)",
	      (unsigned long long)skel->bss->nr_runs,
	      (unsigned long long)skel->bss->nr_declared);
out:
	hogs_kill(hogs, 2);
	if (fd >= 0)
		close(fd);
	psi_declare_bpf__destroy(skel);
	cg_destroy(TOP);
	if (in_kernel) {
		char line[256];
		FILE *f = fopen("/proc/pressure/bpf_triggers", "r");
		int n = 0;

		while (f && fgets(line, sizeof(line), f))
			n++;
		if (f)
			fclose(f);
		check(f && n == 1, "removing the cgroup removed its trigger");
	}
	return checks_done();
}
