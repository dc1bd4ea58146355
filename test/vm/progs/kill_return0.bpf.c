// SPDX-License-Identifier: GPL-2.0
/*
 * A policy on the RFC's OOM hook that kills, then returns 0 (issue 19 i):
 * the kernel must go by the kill, not by the return value, and not select
 * a victim of its own in the same OOM (test/vm/oom_overkill.c).
 */
#include "greedy.bpf.h"

char LICENSE[] SEC("license") = "GPL";

__u32 runs, kills;
/* Tasks the kernel's selection looked at after the policy killed */
__u32 evaluated_after_kill;
/* Set from the kill to the end of that out_of_memory() (under oom_lock) */
static bool killed;

SEC("fmod_ret.s/bpf_handle_out_of_memory")
int BPF_PROG(kill_return0, struct oom_control *oc)
{
	runs++;
	if (!greedy_kill(oc, "kill-return0")) {
		kills++;
		killed = true;
	}
	return 0;
}

SEC("fentry/oom_evaluate_task")
int BPF_PROG(evaluate, struct task_struct *task, void *arg)
{
	if (killed)
		evaluated_after_kill++;
	return 0;
}

SEC("fexit/out_of_memory")
int BPF_PROG(oom_done, struct oom_control *oc, bool ret)
{
	killed = false;
	return 0;
}
