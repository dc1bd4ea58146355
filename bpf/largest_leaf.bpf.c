// SPDX-License-Identifier: GPL-2.0
/*
 * largest-leaf: kill every task of the leaf memory cgroup that uses the most
 * memory, not counting its page cache (which reclaim can drop anyway).
 *
 * On an OOM, walk the memcgs below the OOM's scope (the OOM'ing memcg, or the
 * root for a system-wide OOM), consider only leaves, and skip a leaf holding
 * a task with oom_score_adj -1000: the admin said never to kill it, and
 * killing its neighbours only would not empty the leaf. Kill all tasks of the
 * winner. If there is no candidate, return 0 and the kernel's killer runs.
 *
 * The algorithm of the BPF OOM RFC's selftest.
 */
#include "oom.bpf.h"
#include "oom_events.bpf.h"

char LICENSE[] SEC("license") = "GPL";

/* Set by the loader before load */
const volatile __u64 scope_cgroup_id;	/* handle OOMs in this subtree only */
const volatile bool dry_run;		/* choose, report, but kill nothing */

__u64 nr_runs;
__u64 nr_kills;

SEC("fmod_ret.s/bpf_handle_out_of_memory")
int BPF_PROG(largest_leaf, struct oom_control *oc)
{
	struct mem_cgroup *root, *memcg, *victim = NULL;
	unsigned long usage, cache, max_usage = 0;
	struct cgroup_subsys_state *pos;
	struct task_struct *task;
	bool killed = false;

	__sync_fetch_and_add(&nr_runs, 1);
	root = oom_search_root(oc, scope_cgroup_id);
	if (!root)
		return 0;

	bpf_rcu_read_lock();
	bpf_for_each(css, pos, &root->css, BPF_CGROUP_ITER_DESCENDANTS_POST) {
		if (pos->cgroup->nr_descendants + pos->cgroup->nr_dying_descendants)
			continue;
		memcg = bpf_get_mem_cgroup(pos);
		if (!memcg)
			continue;

		usage = bpf_mem_cgroup_usage(memcg, false);
		cache = bpf_mem_cgroup_page_state(memcg, NR_FILE_PAGES);
		usage = usage > cache ? usage - cache : 0;
		if (usage > max_usage && memcg_killable(memcg)) {
			max_usage = usage;
			if (victim)
				bpf_put_mem_cgroup(victim);
			victim = bpf_get_mem_cgroup(&memcg->css);
		}
		bpf_put_mem_cgroup(memcg);
	}
	bpf_rcu_read_unlock();

	if (!victim)
		goto out;

	bpf_for_each(css_task, task, &victim->css, CSS_TASK_ITER_PROCS) {
		if (dry_run) {
			oom_event_dry_run(ctx, task, "largest-leaf");
			continue;
		}
		/* A flag, not a count: the loop's states must converge */
		if (!bpf_oom_kill_process(oc, task, "largest-leaf")) {
			killed = true;
			__sync_fetch_and_add(&nr_kills, 1);
		}
	}
	bpf_put_mem_cgroup(victim);
out:
	bpf_put_mem_cgroup(root);
	return killed;
}
