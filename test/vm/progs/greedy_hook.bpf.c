// SPDX-License-Identifier: GPL-2.0
/*
 * greedy_kill() on the RFC's OOM hook (fmod_ret): for the test that one OOM
 * episode kills once, whatever the policy (test/vm/oom_overkill.c).
 */
#include "greedy.bpf.h"

char LICENSE[] SEC("license") = "GPL";

__u32 runs, kills;

SEC("fmod_ret.s/bpf_handle_out_of_memory")
int BPF_PROG(greedy_hook, struct oom_control *oc)
{
	runs++;
	if (greedy_kill(oc, "greedy-hook"))
		return 0;
	kills++;
	return 1;
}

/*
 * Returning 1 stops the fmod_ret programs after it, without freeing
 * anything: what a program that may not kill could still do to every
 * policy on the hook, had it the right to attach (test/vm/hook_caps.c).
 */
SEC("fmod_ret/bpf_handle_out_of_memory")
int BPF_PROG(silencer, struct oom_control *oc)
{
	return 1;
}
