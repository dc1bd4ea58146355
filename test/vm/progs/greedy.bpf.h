/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The test policies' choice: the process of the OOM's memcg with the most
 * resident memory that is not an OOM victim yet (memcg_largest_task()). A
 * policy that kills it on every call, without waiting for a victim that is
 * still exiting, is the greediest the kernel must keep to one kill per OOM
 * episode.
 */
#ifndef __GREEDY_BPF_H
#define __GREEDY_BPF_H

#include "oom.bpf.h"

/* Kill memcg_largest_task() of the OOM's memcg; 0 or the kfunc's error */
static __always_inline int greedy_kill(struct oom_control *oc, const char *why)
{
	struct mem_cgroup *memcg = oc->memcg;
	struct task_struct *victim;
	int ret;

	if (!memcg)
		return -ENOENT;
	memcg = bpf_get_mem_cgroup(&memcg->css);
	if (!memcg)
		return -ENOENT;
	victim = memcg_largest_task(memcg);
	bpf_put_mem_cgroup(memcg);
	if (!victim)
		return -ESRCH;
	ret = bpf_oom_kill_process(oc, victim, why);
	bpf_task_release(victim);
	return ret;
}

#endif /* __GREEDY_BPF_H */
