// SPDX-License-Identifier: GPL-2.0
/*
 * A test policy whose kills the kernel refuses: in a memory cgroup OOM it
 * names the processes of the OOM's memcg that have oom_score_adj -1000,
 * which bpf_oom_kill_process() refuses with -EPERM, and then claims it freed
 * memory anyway. The kernel must not believe it (its killer runs) and must
 * not credit the kill its killer makes to this policy.
 */
#include "oom.bpf.h"

char LICENSE[] SEC("license") = "GPL";

u32 nr_tries;
s32 last_ret;

SEC("fmod_ret.s/bpf_handle_out_of_memory")
int BPF_PROG(refused_kill, struct oom_control *oc)
{
	struct mem_cgroup *memcg = oc->memcg;
	struct task_struct *task;

	if (!memcg)
		return 0;
	bpf_for_each(css_task, task, &memcg->css, CSS_TASK_ITER_PROCS) {
		if (task->signal->oom_score_adj != OOM_SCORE_ADJ_MIN)
			continue;
		nr_tries++;
		last_ret = bpf_oom_kill_process(oc, task, "refused-kill");
	}
	return 1;	/* a lie: nothing was freed */
}
