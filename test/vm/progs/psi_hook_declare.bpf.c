// SPDX-License-Identifier: GPL-2.0
/*
 * A handler on the RFC's PSI hook for test/vm/psi_declare.c: when a
 * kernel-owned memory pressure trigger of a tool fires, declare an OOM in
 * the cgroup it watches (system-wide for a trigger on the root cgroup).
 * oomctl's psi-declare is a struct bpf_psi_ops now (bpf/psi_declare.bpf.c);
 * this one shows which triggers still reach the hook.
 *
 * Triggers on other resources (cpu, io) are ignored. -EBUSY from
 * bpf_out_of_memory() means an OOM is being handled already: nothing to do.
 */
#include "oom.bpf.h"
#include "declare_oom.bpf.h"

char LICENSE[] SEC("license") = "GPL";

const volatile __u64 scope_cgroup_id;	/* handle triggers in this subtree only */

__u64 nr_runs;
__u64 nr_declared;

SEC("fmod_ret.s/bpf_handle_psi_event")
int BPF_PROG(psi_declare, struct psi_trigger *t)
{
	struct cgroup *cg;
	u64 cgid = t->cgroup_id;
	int ret;

	__sync_fetch_and_add(&nr_runs, 1);
	if (t->state != PSI_MEM_SOME && t->state != PSI_MEM_FULL)
		return 0;
	if (!cgroup_in_scope(cgid, scope_cgroup_id))
		return 0;

	/*
	 * A trigger names the cgroup it watches; system-wide triggers name
	 * the root cgroup. Id 0 names none (an event raced the trigger's
	 * setup on older kernels), and an id that does not resolve is a
	 * removed cgroup: neither may become a system-wide OOM.
	 */
	if (!cgid)
		return 0;
	cg = bpf_cgroup_from_id(cgid);
	if (!cg)
		return 0;
	ret = declare_oom_in(cg);
	if (ret > 0)
		__sync_fetch_and_add(&nr_declared, 1);
	return ret > 0;
}
