// SPDX-License-Identifier: GPL-2.0
/*
 * A PSI handler as a user writes one (test/vm/oomctl_psi.sh): `oomctl policy
 * attach FILE scope CGROUP` attaches it to CGROUP, where its init arms
 * "some 100ms per 1s"; it only counts its events.
 */
#include "oom.bpf.h"

char LICENSE[] SEC("license") = "GPL";

__u64 nr_runs;

SEC("struct_ops.s/init")
int BPF_PROG(own_init, struct bpf_psi *psi)
{
	int id = bpf_psi_ops_create_trigger(psi, 0, PSI_MEM_SOME, 100000,
					    1000000);

	return id < 0 ? id : 0;
}

SEC("struct_ops.s/handle_psi_event")
void BPF_PROG(own_event, struct bpf_psi *psi, struct psi_trigger *t)
{
	__sync_fetch_and_add(&nr_runs, 1);
}

SEC(".struct_ops.link")
struct bpf_psi_ops own = {
	.init = (void *)own_init,
	.handle_psi_event = (void *)own_event,
	.name = "own-handler",
};
