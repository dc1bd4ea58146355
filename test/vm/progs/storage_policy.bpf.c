// SPDX-License-Identifier: GPL-2.0
/*
 * A policy on the OOM hook that allocates: it gives every task of the OOM's
 * memcg a task storage of its own (F_CREATE, GFP_KERNEL in a sleepable
 * program) and kills nothing. Its maps are charged to the memcg that is out
 * of memory (test/vm/oom_alloc_in_policy.c loads it from there), so without
 * PF_MEMALLOC each allocation would charge a full memcg and OOM again,
 * inside the OOM, under the oom_lock it holds (issue 19, defect a).
 */
#include "oom.bpf.h"

char LICENSE[] SEC("license") = "GPL";

struct seen {
	char pad[256];
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct seen);
} seen_tasks SEC(".maps");

__u32 runs, created, failed;

SEC("fmod_ret.s/bpf_handle_out_of_memory")
int BPF_PROG(storage_policy, struct oom_control *oc)
{
	struct mem_cgroup *memcg = oc->memcg;
	struct task_struct *task;

	runs++;
	if (!memcg)
		return 0;
	memcg = bpf_get_mem_cgroup(&memcg->css);
	if (!memcg)
		return 0;
	bpf_for_each(css_task, task, &memcg->css, CSS_TASK_ITER_PROCS) {
		if (bpf_task_storage_get(&seen_tasks, task, 0,
					 BPF_LOCAL_STORAGE_GET_F_CREATE))
			created++;
		else
			failed++;
	}
	bpf_put_mem_cgroup(memcg);
	return 0;
}
