// SPDX-License-Identifier: GPL-2.0
/*
 * The least a syscall program can read of the host's memory cgroups: the
 * root memcg's usage, through the memcg kfuncs alone (no pointer loads,
 * which need CAP_PERFMON by themselves). test/vm/bpf_caps.c loads it with
 * CAP_BPF only, which the kfuncs' filter must refuse.
 */
#include "oom.bpf.h"

char LICENSE[] SEC("license") = "GPL";

__u64 root_usage;

SEC("syscall")
int peek(void *ctx)
{
	struct mem_cgroup *root = bpf_get_root_mem_cgroup();

	if (!root)
		return 0;
	root_usage = bpf_mem_cgroup_usage(root, false);
	bpf_put_mem_cgroup(root);
	return 0;
}
