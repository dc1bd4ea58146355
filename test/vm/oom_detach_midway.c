// SPDX-License-Identifier: GPL-2.0
/*
 * A policy detached while it decides (issue 19, defect c). The policy of
 * progs/slow_policy.bpf.c spins for a while in an OOM before it kills; as
 * soon as it starts, the scenario destroys its link and closes the object,
 * dropping the program's last reference while it runs. The kill report
 * then names a policy whose program is being freed: it used to read the
 * name from the program's BTF, which is freed after a plain RCU grace
 * period while a sleepable program still runs, a use-after-free that KASAN
 * reports on the debug kernel (test/vm/run fails on it). The report must
 * name it, from memory that lives as long as the running policy.
 *
 * What it takes, for the hook: the hog is forked before the policy's fds
 * exist (else it holds them), the policy's maps have no BTF (a map holds
 * its BTF until the program is freed), and another program stays on the
 * hook (progs/hook_bystander.bpf.c: detaching the last one waits for
 * running programs). Seen failing on KASAN with the BTF lookup back.
 *
 *   oom_detach_midway --hook   the policy on the RFC's OOM hook
 *   oom_detach_midway --ops    the policy as a bpf_oom_ops on the root:
 *                              the detach waits for it (SRCU), and its
 *                              registered name lives until then
 */
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "scenario.h"
#include "slow_policy.h"

#define CG "midway"

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * Give @obj's map @m a map of ours, made without BTF: with the contents of
 * its section if it is a read-only one (frozen, as libbpf's .rodata), empty
 * otherwise. Its fd, which outlives the object.
 */
static int map_without_btf(struct bpf_map *m)
{
	LIBBPF_OPTS(bpf_map_create_opts, opts);
	bool rodata = strstr(bpf_map__name(m), ".rodata");
	const void *init;
	size_t size;
	int fd, zero = 0;

	opts.map_flags = rodata ? BPF_F_RDONLY_PROG : 0;
	init = bpf_map__initial_value(m, &size);
	fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, NULL, sizeof(int),
			    bpf_map__value_size(m), 1, &opts);
	if (fd < 0)
		bail("cannot create a map for %s", bpf_map__name(m));
	if (rodata && (!init || bpf_map_update_elem(fd, &zero, init, 0) ||
		       bpf_map_freeze(fd)))
		bail("cannot fill %s", bpf_map__name(m));
	if (bpf_map__reuse_fd(m, fd))
		bail("cannot give %s a map without BTF", bpf_map__name(m));
	return fd;
}

static void state_read(int fd, struct slow_state *st)
{
	int zero = 0;

	if (bpf_map_lookup_elem(fd, &zero, st))
		bail("cannot read the policy's state");
}

int main(int argc, char **argv)
{
	bool ops = argc > 1 && !strcmp(argv[1], "--ops");
	const char *name = ops ? "slow-ops" : "slow-hook";
	struct slow_state st = { .spin_ns = 2000000000ULL };	/* 2 s */
	struct bpf_object *obj, *bystander = NULL;
	struct bpf_link *link, *bystander_link = NULL;
	struct bpf_map *m;
	struct hog h;
	double t0, detach_s;
	char report[128];
	int state_fd = -1, zero = 0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc < 2 || (!ops && strcmp(argv[1], "--hook")))
		bail("usage: oom_detach_midway --hook | --ops");
	cg_destroy(CG);
	if (cg_write("", "cgroup.subtree_control", "+memory") || cg_create(CG) ||
	    cg_write(CG, "memory.max", "100M"))
		bail("cannot set up /sys/fs/cgroup/" CG);
	cg_write(CG, "memory.swap.max", "0");

	/* Forked before any fd of the policy exists, so it holds none */
	if (hog_spawn(&h, "hog", CG, 150 * MiB, 0))
		bail("cannot fork the hog");
	obj = bpf_object__open_file(SLOW_POLICY_OBJ, NULL);
	if (!obj)
		bail("cannot open %s", SLOW_POLICY_OBJ);
	bpf_program__set_autoload(bpf_object__find_program_by_name(obj,
		ops ? "slow_hook" : "slow_ops_handler"), false);
	if (!ops)
		bpf_map__set_autocreate(bpf_object__find_map_by_name(obj, "slow_ops"),
					false);
	bpf_object__for_each_map(m, obj) {
		bool is_state = !strcmp(bpf_map__name(m), "state");
		int fd;

		if (bpf_map__type(m) == BPF_MAP_TYPE_STRUCT_OPS)
			continue;
		fd = map_without_btf(m);	/* renames @m as the kernel does */
		if (is_state)
			state_fd = fd;
		else
			close(fd);	/* the object holds it */
	}
	if (state_fd < 0)
		bail("no map 'state' in %s", SLOW_POLICY_OBJ);
	if (bpf_map_update_elem(state_fd, &zero, &st, 0))
		bail("cannot set the policy's state");
	if (bpf_object__load(obj))
		bail("cannot load %s", SLOW_POLICY_OBJ);
	link = ops ? bpf_map__attach_struct_ops(bpf_object__find_map_by_name(obj, "slow_ops")) :
		     bpf_program__attach(bpf_object__find_program_by_name(obj, "slow_hook"));
	if (!link)
		bail("cannot attach %s", name);

	if (!ops) {
		/* Another program stays on the hook (progs/hook_bystander.bpf.c) */
		bystander = bpf_object__open_file(HOOK_BYSTANDER_OBJ, NULL);
		if (!bystander || bpf_object__load(bystander))
			bail("cannot load %s", HOOK_BYSTANDER_OBJ);
		bystander_link = bpf_program__attach(
			bpf_object__find_program_by_name(bystander, "hook_bystander"));
		if (!bystander_link)
			bail("cannot attach the bystander");
	}
	if (hog_release(&h))
		bail("cannot start the hog");
	for (t0 = now_s(); !st.started && now_s() - t0 < 60;)
		state_read(state_fd, &st);
	if (!st.started)
		bail("the policy did not run in 60 s");
	/* The last references: the link's, then the object's fds */
	t0 = now_s();
	bpf_link__destroy(link);
	bpf_object__close(obj);
	detach_s = now_s() - t0;
	printf("# detached and closed in %.3f s\n", detach_s);
	/* Tell the policy, through the map the object no longer holds */
	state_read(state_fd, &st);
	st.detached = 1;
	if (bpf_map_update_elem(state_fd, &zero, &st, 0))
		bail("cannot tell the policy it was detached");

	check(!hog_wait_ready(&h, 60000) && hog_killed_by_sigkill(&h),
	      "%s, detached while it ran, still killed the hog", name);
	state_read(state_fd, &st);
	if (ops)
		/* unreg() waits for the OOM's handlers (SRCU) */
		check(detach_s > 1 && !st.detached_before_kill && !st.kill_ret,
		      "the detach waited for it to kill (%.3f s; kill %d)", detach_s,
		      st.kill_ret);
	else
		/*
		 * With another program left on the hook, the trampoline is
		 * modified, not taken down: nothing waits for the running one
		 */
		check(st.detached_before_kill && !st.kill_ret,
		      "it killed after its last reference was gone (kill %d)",
		      st.kill_ret);
	/* An ops is named by its registered name, a program by its own */
	snprintf(report, sizeof(report), "%s (bpf policy %s %s", name,
		 ops ? "slow-ops" : "slow_hook", ops ? "cgroup" : "id");
	check(kmsg_has(report), "the kill report names it: \"%s...\"", report);
	hogs_kill(&h, 1);
	bpf_link__destroy(bystander_link);
	bpf_object__close(bystander);
	close(state_fd);
	cg_destroy(CG);
	return checks_done();
}
