// SPDX-License-Identifier: GPL-2.0
/*
 * Declare an OOM on request from user space: a syscall program run with
 * BPF_PROG_TEST_RUN, its context a struct oom_declare_args.
 */
#include "oom.bpf.h"
#include "oom_shared.h"

char LICENSE[] SEC("license") = "GPL";

SEC("syscall")
int oom_declare(struct oom_declare_args *args)
{
	struct mem_cgroup *memcg = NULL;
	struct cgroup *cg;

	if (args->cgroup_id) {
		cg = bpf_cgroup_from_id(args->cgroup_id);
		if (!cg) {
			args->ret = -ENOENT;
			return 0;
		}
		memcg = bpf_get_mem_cgroup(&cg->self);
		bpf_cgroup_release(cg);
		if (!memcg) {
			/* the memory controller is not enabled there */
			args->ret = -EOPNOTSUPP;
			return 0;
		}
	}

	args->ret = bpf_out_of_memory(memcg, args->order);
	if (memcg)
		bpf_put_mem_cgroup(memcg);
	return 0;
}
