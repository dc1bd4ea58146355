// SPDX-License-Identifier: GPL-2.0
/*
 * bpf_oom_ops policies for test/vm/oom_cgroup_policies.c: each kills with
 * greedy_kill() in the OOM's memcg and counts its runs and kills, so the
 * scenario sees which policy decided which OOM.
 */
#include "greedy.bpf.h"

char LICENSE[] SEC("license") = "GPL";

struct policy_stats {
	__u32 runs;
	__u32 kills;
	__u64 last_cgroup;	/* the OOM's memcg's cgroup id at the last run */
	__s32 last_ret;		/* greedy_kill()'s at the last run */
};

/* Read by the scenario through the mmap of .bss: [0] test-a, [1] test-root */
struct policy_stats stats[3];

static __always_inline void run(struct policy_stats *st, struct oom_control *oc,
				const char *why)
{
	st->runs++;
	st->last_cgroup = oom_cgroup_id(oc);
	st->last_ret = greedy_kill(oc, why);
	if (!st->last_ret)
		st->kills++;
}

SEC("struct_ops.s/handle_out_of_memory")
int BPF_PROG(handle_a, struct oom_control *oc)
{
	run(&stats[0], oc, "test-a");
	return 0;
}

SEC("struct_ops.s/handle_out_of_memory")
int BPF_PROG(handle_root, struct oom_control *oc)
{
	run(&stats[1], oc, "test-root");
	return 0;
}

SEC("struct_ops.s/handle_out_of_memory")
int BPF_PROG(handle_spare, struct oom_control *oc)
{
	run(&stats[2], oc, "test-spare");
	return 0;
}

SEC(".struct_ops.link")
struct bpf_oom_ops policy_a = {
	.handle_out_of_memory = (void *)handle_a,
	.name = "test-a",
};

SEC(".struct_ops.link")
struct bpf_oom_ops policy_root = {
	.handle_out_of_memory = (void *)handle_root,
	.name = "test-root",
};

/* Attached only where the kernel must refuse it */
SEC(".struct_ops.link")
struct bpf_oom_ops policy_spare = {
	.handle_out_of_memory = (void *)handle_spare,
	.name = "test-spare",
};
