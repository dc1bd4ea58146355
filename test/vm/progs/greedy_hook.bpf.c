// SPDX-License-Identifier: GPL-2.0
/*
 * greedy_kill() on the RFC's OOM hook (fmod_ret): for the test that one OOM
 * episode kills once, whatever the policy (test/vm/oom_overkill.c). With
 * spin_ns set it first spins that long, as a policy that takes its time to
 * decide: long enough for an exiting victim to finish meanwhile.
 */
#include "greedy.bpf.h"

char LICENSE[] SEC("license") = "GPL";

__u32 runs, kills;
__u64 spin_ns;

static long spin_until(__u64 i, void *deadline)
{
	return bpf_ktime_get_ns() >= *(__u64 *)deadline;
}

SEC("fmod_ret.s/bpf_handle_out_of_memory")
int BPF_PROG(greedy_hook, struct oom_control *oc)
{
	__u64 deadline = bpf_ktime_get_ns() + spin_ns;

	runs++;
	if (spin_ns)
		bpf_loop(1 << 23, spin_until, &deadline, 0);
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
