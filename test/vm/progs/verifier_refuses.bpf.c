// SPDX-License-Identifier: GPL-2.0
/*
 * Programs that break the BPF OOM rules. verifier_refuses.c loads each one
 * alone and checks that the verifier says no, with the expected message.
 */
#include "oom.bpf.h"

char LICENSE[] SEC("license") = "GPL";

/* Killing is for OOM policies: not from a syscall program */
SEC("syscall")
int kill_from_syscall(void *ctx)
{
	bpf_oom_kill_process(NULL, NULL, "no");
	return 0;
}

/* ...nor from a plain fentry program on the OOM hook */
SEC("fentry.s/bpf_handle_out_of_memory")
int BPF_PROG(kill_from_fentry, struct oom_control *oc)
{
	bpf_oom_kill_process(oc, bpf_get_current_task_btf(), "no");
	return 0;
}

/* Declaring an OOM from inside the OOM handling is refused */
SEC("fmod_ret.s/bpf_handle_out_of_memory")
int BPF_PROG(declare_from_oom_hook, struct oom_control *oc)
{
	return bpf_out_of_memory(NULL, 0);
}

/* Triggers are managed by tools (syscall programs), not by handlers */
SEC("fmod_ret.s/bpf_handle_psi_event")
int BPF_PROG(trigger_from_psi_hook, struct psi_trigger *t)
{
	return bpf_psi_create_trigger(0, PSI_MEM_SOME, 100000, 1000000);
}

/* oc->memcg is NULL for a system-wide OOM: check it first */
SEC("fmod_ret.s/bpf_handle_out_of_memory")
int BPF_PROG(unchecked_oom_memcg, struct oom_control *oc)
{
	return bpf_mem_cgroup_usage(oc->memcg, false) > 0;
}

/* A memcg reference must be put */
SEC("fmod_ret.s/bpf_handle_out_of_memory")
int BPF_PROG(leaked_memcg, struct oom_control *oc)
{
	struct mem_cgroup *root = bpf_get_root_mem_cgroup();

	return root != NULL;
}

/* Flushing stats sleeps: not from a non-sleepable program */
SEC("fmod_ret/bpf_handle_out_of_memory")
int BPF_PROG(flush_while_atomic, struct oom_control *oc)
{
	struct mem_cgroup *root = bpf_get_root_mem_cgroup();

	if (root) {
		bpf_mem_cgroup_flush_stats(root);
		bpf_put_mem_cgroup(root);
	}
	return 0;
}
