/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The BPF half of `oomctl policy explain` (oom_explain.h). A policy puts
 * its choice in one __always_inline function that takes the search root
 * and a struct oom_explain_args pointer: its OOM hook passes NULL, so the
 * compiler drops every explain branch there and the hook is as before; its
 * SEC("syscall") program "explain" passes the run's context, and the same
 * code then reports each unit it looked at and writes no state of its own
 * (oomd's pgscan_samples are only read). OOM_POLICY() below defines both
 * programs. choose() sets args->victim_cgroup_id to the unit it chose.
 */
#ifndef __OOM_EXPLAIN_BPF_H
#define __OOM_EXPLAIN_BPF_H

#include "oom.bpf.h"
#include "oom_explain.h"
#include "oom_events.bpf.h"

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, OOM_EXPLAIN_RING_SIZE);
} explain_records SEC(".maps");

/* One unit the selection looked at; a full ring is counted, not fatal */
static __always_inline void oom_explain_emit(struct oom_explain_args *ex,
					     struct oom_explain_record *rec)
{
	if (bpf_ringbuf_output(&explain_records, rec, sizeof(*rec),
			       BPF_RB_NO_WAKEUP))
		ex->nr_lost++;
	else
		ex->nr_records++;
}

/*
 * The policy's first step (oom_search_root()) for the pretended OOM of @ex,
 * counting nothing: where the policy would look, referenced, or NULL with
 * the verdict or error set. A policy that would defer is still explained:
 * the verdict says it defers.
 */
static __always_inline struct mem_cgroup *
oom_explain_enter(struct oom_explain_args *ex)
{
	u64 oom_id = ex->oom_cgroup_id, scope_id = ex->scope_id;
	struct mem_cgroup *memcg;
	struct cgroup *cg;

	ex->now_ns = bpf_ktime_get_boot_ns();
	ex->nr_records = ex->nr_lost = 0;
	ex->victim_pid = 0;
	ex->victim_cgroup_id = 0;
	ex->err = 0;
	ex->verdict = OOM_EXPLAIN_NO_VICTIM;
	if (!cgroup_in_scope(oom_id, scope_id)) {
		ex->verdict = OOM_EXPLAIN_OUT_OF_SCOPE;
		return NULL;
	}
	if (ex->deeper)
		ex->verdict = OOM_EXPLAIN_DEFERS;
	if (!oom_id) {
		memcg = bpf_get_root_mem_cgroup();
		if (!memcg)
			ex->err = -ENODEV;
		return memcg;
	}
	cg = bpf_cgroup_from_id(oom_id);
	if (!cg) {
		ex->err = -ENOENT;
		return NULL;
	}
	memcg = bpf_get_mem_cgroup(&cg->self);
	bpf_cgroup_release(cg);
	if (!memcg)
		ex->err = -ENODEV;
	return memcg;
}

/* Report the process the hook would kill, @task (referenced, or NULL),
 * and drop it */
static __always_inline void oom_explain_victim(struct oom_explain_args *ex,
					       struct task_struct *task)
{
	char comm[sizeof(ex->victim_comm)];

	if (!task)
		return;
	ex->victim_pid = task->tgid;
	ex->victim_rss = task_rss_bytes(task);
	bpf_probe_read_kernel_str(comm, sizeof(comm), task->comm);
	__builtin_memcpy(ex->victim_comm, comm, sizeof(comm));
	if (ex->verdict != OOM_EXPLAIN_DEFERS)
		ex->verdict = OOM_EXPLAIN_KILL;
	bpf_task_release(task);
}

/*
 * A built-in OOM policy around its choice CHOOSE(root, args): the
 * struct_ops program NAME, which kills the choice (logs it in dry-run), its
 * struct bpf_oom_ops NAME_ops, registered as MESSAGE, which also starts the
 * kernel's kill report, and the explain program, which reports the choice
 * and kills nothing. The policy file defines the globals scope_cgroup_id,
 * dry_run, kill_unit, nr_runs, nr_kills and chosen_unit_id that NAME uses:
 * CHOOSE sets chosen_unit_id to the unit it chose, for the hook only, and
 * with kill_unit set the whole unit is killed. The kernel asks the policy
 * only for OOMs below the cgroup it is attached to (oomctl's scope), the
 * deepest policy first; the kill kfunc's success, not the return value,
 * tells it that the policy freed memory.
 */
#define OOM_POLICY(NAME, MESSAGE, CHOOSE)					\
SEC("struct_ops.s/handle_out_of_memory")					\
int BPF_PROG(NAME, struct oom_control *oc)					\
{										\
	struct task_struct *task;						\
	struct mem_cgroup *root;						\
										\
	__sync_fetch_and_add(&nr_runs, 1);					\
	root = oom_search_root(oc, scope_cgroup_id);				\
	if (!root)								\
		return 0;							\
	chosen_unit_id = 0;							\
	task = CHOOSE(root, NULL);						\
	bpf_put_mem_cgroup(root);						\
	if (task)								\
		oom_kill_or_log(oc, task, kill_unit ? chosen_unit_id : 0,	\
				MESSAGE, dry_run, &nr_kills);			\
	return 0;								\
}										\
										\
SEC(".struct_ops.link")								\
struct bpf_oom_ops NAME##_ops = {						\
	.handle_out_of_memory = (void *)NAME,					\
	.name = MESSAGE,							\
};										\
										\
SEC("syscall")									\
int explain(struct oom_explain_args *args)					\
{										\
	struct task_struct *task;						\
	struct mem_cgroup *root;						\
										\
	root = oom_explain_enter(args);						\
	if (!root)								\
		return 0;							\
	task = CHOOSE(root, args);						\
	bpf_put_mem_cgroup(root);						\
	oom_explain_victim(args, task);						\
	return 0;								\
}

#endif /* __OOM_EXPLAIN_BPF_H */
