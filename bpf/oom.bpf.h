/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What every OOM policy and helper program here shares: the kfuncs of the
 * BPF OOM series (declared once), the open-coded iterator macro libbpf 1.1
 * lacks, and small helpers for the policies' scope and victims.
 */
#ifndef __OOM_BPF_H
#define __OOM_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
/* UAPI headers of macros only, safe beside vmlinux.h: errno values and
 * OOM_SCORE_ADJ_MIN */
#include <asm-generic/errno.h>
#include <linux/oom.h>

#ifndef READ_ONCE
/* One load the compiler may neither repeat nor merge */
#define READ_ONCE(x)	(*(volatile typeof(x) *)&(x))
#endif

/* The BPF OOM series (kernel/patches/) */
int bpf_oom_kill_process(struct oom_control *oc, struct task_struct *task,
			 const char *message__str) __ksym;
int bpf_oom_kill_memcg(struct oom_control *oc, struct task_struct *task,
		       struct mem_cgroup *unit, const char *message__str) __ksym;
int bpf_out_of_memory(struct mem_cgroup *memcg__nullable, int order) __ksym;
struct mem_cgroup *bpf_get_root_mem_cgroup(void) __ksym;
struct mem_cgroup *bpf_get_mem_cgroup(struct cgroup_subsys_state *css) __ksym;
void bpf_put_mem_cgroup(struct mem_cgroup *memcg) __ksym;
unsigned long bpf_mem_cgroup_usage(struct mem_cgroup *memcg, bool swap) __ksym;
unsigned long bpf_mem_cgroup_events(struct mem_cgroup *memcg, int event) __ksym;
unsigned long bpf_mem_cgroup_memory_events(struct mem_cgroup *memcg,
					   int event) __ksym;
unsigned long bpf_mem_cgroup_page_state(struct mem_cgroup *memcg, int idx) __ksym;
void bpf_mem_cgroup_flush_stats(struct mem_cgroup *memcg) __ksym;
int bpf_psi_create_trigger(u64 cgroup_id, int state, u32 threshold_us,
			   u32 window_us) __ksym;
int bpf_psi_destroy_trigger(int id) __ksym;
int bpf_psi_ops_create_trigger(struct bpf_psi *psi, u64 cgroup_id, int state,
			       u32 threshold_us, u32 window_us) __ksym;

/* Generic kfuncs of 6.12 */
void bpf_rcu_read_lock(void) __ksym;
void bpf_rcu_read_unlock(void) __ksym;
struct task_struct *bpf_task_acquire(struct task_struct *p) __ksym;
void bpf_task_release(struct task_struct *p) __ksym;
struct cgroup *bpf_cgroup_from_id(u64 cgid) __ksym;
struct cgroup *bpf_cgroup_ancestor(struct cgroup *cgrp, int level) __ksym;
void bpf_cgroup_release(struct cgroup *cgrp) __ksym;
int bpf_cgroup_read_xattr(struct cgroup *cgroup, const char *name__str,
			  struct bpf_dynptr *value_p) __ksym;

int bpf_iter_css_new(struct bpf_iter_css *it, struct cgroup_subsys_state *start,
		     unsigned int flags) __ksym;
struct cgroup_subsys_state *bpf_iter_css_next(struct bpf_iter_css *it) __ksym;
void bpf_iter_css_destroy(struct bpf_iter_css *it) __ksym;
int bpf_iter_css_task_new(struct bpf_iter_css_task *it,
			  struct cgroup_subsys_state *css,
			  unsigned int flags) __ksym;
struct task_struct *bpf_iter_css_task_next(struct bpf_iter_css_task *it) __ksym;
void bpf_iter_css_task_destroy(struct bpf_iter_css_task *it) __ksym;

#ifndef bpf_for_each
/*
 * for (cur in iterator type(args)): the open-coded iterator loop of newer
 * libbpf; the cleanup attribute destroys the iterator on every exit path.
 */
#define bpf_for_each(type, cur, args...)					\
	for (struct bpf_iter_##type ___it					\
		__attribute__((aligned(8), cleanup(bpf_iter_##type##_destroy))), \
	     *___p __attribute__((unused)) =					\
		(bpf_iter_##type##_new(&___it, ##args),				\
		 (void)bpf_iter_##type##_destroy, (void *)0);			\
	     ((cur) = bpf_iter_##type##_next(&___it));)
#endif

/* Direct loads: BPF_CORE_READ's address arithmetic upsets the verifier on
 * a trusted pointer that was NULL-checked in the caller. */
static __always_inline u64 memcg_cgroup_id(struct mem_cgroup *memcg)
{
	return memcg->css.cgroup->kn->id;
}

/* The cgroup id of an OOM's scope, 0 for a system-wide OOM */
static __always_inline u64 oom_cgroup_id(struct oom_control *oc)
{
	struct mem_cgroup *memcg = oc->memcg;

	return memcg ? memcg_cgroup_id(memcg) : 0;
}

/*
 * Whether the cgroup @cgid is @scope_id or below it. A scope of 0 or of the
 * root cgroup (id 1) contains everything, system-wide OOMs included.
 */
static __always_inline bool cgroup_in_scope(u64 cgid, u64 scope_id)
{
	struct cgroup *cg, *scope, *ancestor;
	bool inside = false;

	if (scope_id <= 1)
		return true;
	if (!cgid)
		return false;

	cg = bpf_cgroup_from_id(cgid);
	if (!cg)
		return false;
	scope = bpf_cgroup_from_id(scope_id);
	if (scope) {
		ancestor = bpf_cgroup_ancestor(cg, scope->level);
		if (ancestor) {
			inside = ancestor->kn->id == scope_id;
			bpf_cgroup_release(ancestor);
		}
		bpf_cgroup_release(scope);
	}
	bpf_cgroup_release(cg);
	return inside;
}

/*
 * Where a policy looks for its victim: the OOM'ing memcg, or the root for a
 * system-wide OOM; NULL when the OOM is outside the policy's scope. The
 * result is referenced: bpf_put_mem_cgroup() it.
 */
static __always_inline struct mem_cgroup *
oom_search_root(struct oom_control *oc, u64 scope_id)
{
	/* One load of oc->memcg: the verifier tracks the NULL check on it */
	struct mem_cgroup *memcg = oc->memcg;

	if (!cgroup_in_scope(memcg ? memcg_cgroup_id(memcg) : 0, scope_id))
		return NULL;
	return memcg ? bpf_get_mem_cgroup(&memcg->css) : bpf_get_root_mem_cgroup();
}

/*
 * Whether a unit is a candidate at all. A removed cgroup lingers, offline,
 * while pages are still charged to it: it has no task, and it does not
 * make its parent any less a leaf, so the walks skip it and count only
 * online descendants (nr_descendants; nr_dying_descendants are the rest).
 * A unit with no task in its subtree has nothing to kill either: choosing
 * it would leave the OOM to the kernel's killer.
 */
static __always_inline bool css_unit_online(struct cgroup_subsys_state *css)
{
	return css->flags & CSS_ONLINE;
}

static __always_inline bool cgroup_populated(struct cgroup *cg)
{
	return cg->nr_populated_csets + cg->nr_populated_domain_children +
	       cg->nr_populated_threaded_children;
}

/*
 * Whether every task of @memcg may be killed: one with oom_score_adj -1000
 * is protected by the admin, and killing its neighbours alone would not
 * empty the cgroup.
 */
static __always_inline bool memcg_killable(struct mem_cgroup *memcg)
{
	struct task_struct *task;

	bpf_for_each(css_task, task, &memcg->css, CSS_TASK_ITER_PROCS)
		if (task->signal->oom_score_adj == OOM_SCORE_ADJ_MIN)
			return false;
	return true;
}

/*
 * The running kernel's page size. kernel/bpf/core.c exports PAGE_SIZE in
 * BTF as enum page_size_enum for this purpose; the CO-RE relocation
 * resolves it at load time, so the value is the booted kernel's (4, 16 or
 * 64 KiB), not the build host's.
 */
static __always_inline u64 kernel_page_size(void)
{
	return bpf_core_enum_value(enum page_size_enum, __PAGE_SIZE);
}

/* Resident memory of @task: file, anon and shmem pages, as the OOM killer
 * counts them (its badness adds page tables and swap). */
static __always_inline u64 task_rss_bytes(struct task_struct *task)
{
	struct mm_struct *mm = BPF_CORE_READ(task, mm);
	s64 pages = 0;

	if (!mm)
		return 0;
	pages += BPF_CORE_READ(mm, rss_stat[MM_FILEPAGES].count);
	pages += BPF_CORE_READ(mm, rss_stat[MM_ANONPAGES].count);
	pages += BPF_CORE_READ(mm, rss_stat[MM_SHMEMPAGES].count);
	return pages > 0 ? pages * kernel_page_size() : 0;
}

/*
 * The process of @memcg (not of its descendants) with the most resident
 * memory that is not an OOM victim already (the kill kfunc refuses those),
 * referenced (bpf_task_release() it), or NULL if it has none. Where a leaf
 * memcg is the victim, the kernel allows one kill per OOM: the biggest one
 * frees the most.
 */
static __always_inline struct task_struct *
memcg_largest_task(struct mem_cgroup *memcg)
{
	struct task_struct *task, *biggest = NULL;
	u64 rss, max_rss = 0;

	bpf_for_each(css_task, task, &memcg->css, CSS_TASK_ITER_PROCS) {
		if (task->signal->oom_mm)
			continue;
		rss = task_rss_bytes(task);
		if (biggest && rss <= max_rss)
			continue;
		if (biggest)
			bpf_task_release(biggest);
		biggest = bpf_task_acquire(task);
		max_rss = rss;
	}
	return biggest;
}

#endif /* __OOM_BPF_H */
