// SPDX-License-Identifier: GPL-2.0
/* A policy the verifier must refuse: it leaks the root memcg reference. */
#include "oom.bpf.h"

char LICENSE[] SEC("license") = "GPL";

SEC("fmod_ret.s/bpf_handle_out_of_memory")
int BPF_PROG(leaky, struct oom_control *oc)
{
	struct mem_cgroup *root = bpf_get_root_mem_cgroup();

	return root ? 0 : 1;
}
