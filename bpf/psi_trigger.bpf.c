// SPDX-License-Identifier: GPL-2.0
/*
 * Create and destroy kernel-owned PSI triggers on request from user space:
 * syscall programs run with BPF_PROG_TEST_RUN, context struct
 * psi_trigger_args. The triggers outlive the caller; see
 * /proc/pressure/bpf_triggers.
 */
#include "oom.bpf.h"
#include "oom_shared.h"

char LICENSE[] SEC("license") = "GPL";

SEC("syscall")
int psi_trigger_create(struct psi_trigger_args *args)
{
	args->ret = bpf_psi_create_trigger(args->cgroup_id, args->state,
					   args->threshold_us, args->window_us);
	return 0;
}

SEC("syscall")
int psi_trigger_destroy(struct psi_trigger_args *args)
{
	args->ret = bpf_psi_destroy_trigger(args->id);
	return 0;
}
