// SPDX-License-Identifier: GPL-2.0
/*
 * A handle_psi_event that arms a trigger: the verifier must refuse it, as
 * trigger destruction waits for that handler under the locks creating a
 * trigger takes (test/vm/psi_ops.c).
 */
#include "oom.bpf.h"

char LICENSE[] SEC("license") = "GPL";

SEC("struct_ops.s/handle_psi_event")
void BPF_PROG(rearm_event, struct bpf_psi *psi, struct psi_trigger *t)
{
	bpf_psi_ops_create_trigger(psi, 0, PSI_MEM_SOME, 100000, 1000000);
}

SEC(".struct_ops.link")
struct bpf_psi_ops rearm = {
	.handle_psi_event = (void *)rearm_event,
	.name = "test-rearm",
};
