// SPDX-License-Identifier: GPL-2.0
/*
 * Declare an OOM in a cgroup v1 memcg (test/vm/declare_v1.c): found by its
 * directory's inode number among the memory controller's css, which a v1
 * hierarchy holds when the controller is bound there.
 */
#include "oom.bpf.h"

char LICENSE[] SEC("license") = "GPL";

__u64 target_ino;	/* set by the scenario */
__s32 ret = 1;		/* bpf_out_of_memory()'s, or -ENOENT if not found */

SEC("syscall")
int declare_v1(void *ctx)
{
	struct mem_cgroup *root, *memcg = NULL;
	struct cgroup_subsys_state *pos;

	root = bpf_get_root_mem_cgroup();
	if (!root) {
		ret = -ENODEV;
		return 0;
	}
	bpf_rcu_read_lock();
	bpf_for_each(css, pos, &root->css, BPF_CGROUP_ITER_DESCENDANTS_PRE) {
		if (pos->cgroup->kn->id == target_ino) {
			memcg = bpf_get_mem_cgroup(pos);
			break;
		}
	}
	bpf_rcu_read_unlock();
	bpf_put_mem_cgroup(root);
	if (!memcg) {
		ret = -ENOENT;
		return 0;
	}
	ret = bpf_out_of_memory(memcg, 0);
	bpf_put_mem_cgroup(memcg);
	return 0;
}
