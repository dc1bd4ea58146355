// SPDX-License-Identifier: GPL-2.0
/*
 * largest-leaf: kill in the leaf memory cgroup that uses the most memory,
 * not counting its page cache (which reclaim can drop anyway).
 *
 * On an OOM, walk the memcgs below the OOM's scope (the OOM'ing memcg, or the
 * root for a system-wide OOM), consider only leaves (cgroups with no online
 * child; removed cgroups that linger count for nothing), skip a leaf with no
 * task, and skip a leaf holding a task with oom_score_adj -1000: the admin
 * said never to kill it, and
 * killing its neighbours only would not empty the leaf. Kill the winner's
 * process with the most resident memory: the kernel allows one kill per
 * OOM, and if the leaf is still too big the next OOM takes the next one
 * (with memory.oom.group set the kernel kills the whole leaf at once, and
 * so it does with kill_unit, oomctl's "kill-unit"). If
 * there is no candidate, return 0 and the kernel's killer runs.
 *
 * It is a struct bpf_oom_ops: oomctl attaches it to its scope's cgroup (the
 * root without one), and the kernel asks the deepest attached policy first.
 *
 * `oomctl policy explain` runs the same choice from the syscall program
 * explain (oom_explain.bpf.h).
 *
 * The algorithm of the BPF OOM RFC's selftest, which killed every process
 * of the leaf.
 */
#include "oom.bpf.h"
#include "oom_events.bpf.h"
#include "oom_explain.bpf.h"

char LICENSE[] SEC("license") = "GPL";

/* Set by the loader before load */
const volatile __u64 scope_cgroup_id;	/* handle OOMs in this subtree only */
const volatile bool dry_run;		/* choose, report, but kill nothing */
const volatile bool kill_unit;		/* kill the whole leaf */

__u64 nr_runs;
__u64 nr_kills;
/* The leaf the hook chose; OOMs are serialized by oom_lock */
__u64 chosen_unit_id;

/*
 * The choice, shared by the OOM hook (@ex NULL) and policy explain: the
 * process to kill below @root, referenced, or NULL. Explain checks every
 * leaf for -1000 holders, so that it can show the skipped ones; the hook
 * checks only a leaf that would win, which chooses the same.
 */
static __always_inline struct task_struct *
largest_leaf_choose(struct mem_cgroup *root, struct oom_explain_args *ex)
{
	struct mem_cgroup *memcg, *victim = NULL;
	unsigned long usage, cache, max_usage = 0;
	struct cgroup_subsys_state *pos;
	struct oom_explain_record rec;
	struct task_struct *biggest;
	bool populated, killable;
	u32 skip;

	bpf_rcu_read_lock();
	bpf_for_each(css, pos, &root->css, BPF_CGROUP_ITER_DESCENDANTS_POST) {
		/* Leaves: no online descendants; removed cgroups are no units */
		if (!css_unit_online(pos) || pos->cgroup->nr_descendants)
			continue;
		memcg = bpf_get_mem_cgroup(pos);
		if (!memcg)
			continue;

		usage = bpf_mem_cgroup_usage(memcg, false);
		cache = bpf_mem_cgroup_page_state(memcg, NR_FILE_PAGES);
		usage = usage > cache ? usage - cache : 0;
		populated = cgroup_populated(pos->cgroup);
		killable = populated && (ex || usage > max_usage) &&
			   memcg_killable(memcg);
		if (ex) {
			skip = !populated ? OOM_EXPLAIN_EMPTY :
			       !killable ? OOM_EXPLAIN_PROTECTED : 0;
			rec = (struct oom_explain_record){
				.cgroup_id = pos->cgroup->kn->id,
				.usage = usage * kernel_page_size(),
				.cache = cache * kernel_page_size(),
				.flags = OOM_EXPLAIN_CACHE | skip,
			};
			oom_explain_emit(ex, &rec);
		}
		if (usage > max_usage && killable) {
			max_usage = usage;
			if (victim)
				bpf_put_mem_cgroup(victim);
			victim = bpf_get_mem_cgroup(&memcg->css);
		}
		bpf_put_mem_cgroup(memcg);
	}
	bpf_rcu_read_unlock();

	if (!victim)
		return NULL;
	if (ex)
		ex->victim_cgroup_id = memcg_cgroup_id(victim);
	else
		chosen_unit_id = memcg_cgroup_id(victim);
	biggest = memcg_largest_task(victim);
	bpf_put_mem_cgroup(victim);
	return biggest;
}

/* The OOM hook largest_leaf and its explain program */
OOM_POLICY(largest_leaf, "largest-leaf", largest_leaf_choose)
