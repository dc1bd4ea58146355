/* SPDX-License-Identifier: GPL-2.0 */
/*
 * declare_oom_in(): the PSI handlers' one action, shared by psi-declare and
 * the benchmark's handler for the RFC kernel (test/bench/rfc), whose kfuncs
 * have the same names and types. The includer declares the kfuncs.
 */
#ifndef __DECLARE_OOM_BPF_H
#define __DECLARE_OOM_BPF_H

/*
 * Declare an OOM in @cg's memory cgroup, or system-wide for the root cgroup,
 * whose pressure is the system's (memcg NULL). Consumes the reference on
 * @cg. Returns what bpf_out_of_memory() returned, or 0 when @cg has no
 * memory cgroup of its own.
 */
static __always_inline int declare_oom_in(struct cgroup *cg)
{
	struct mem_cgroup *memcg = NULL;
	bool is_root = !cg->level;
	int ret;

	if (!is_root)
		memcg = bpf_get_mem_cgroup(&cg->self);
	bpf_cgroup_release(cg);
	if (!is_root && !memcg)
		return 0;

	ret = bpf_out_of_memory(memcg, 0);
	if (memcg)
		bpf_put_mem_cgroup(memcg);
	return ret;
}

#endif
