/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Scope precedence among OOM policies. fmod_ret programs on the OOM hook run
 * newest first, and the first that returns non-zero ends the chain, so
 * without help a system-wide policy attached after a scoped one would handle
 * the scoped one's OOMs. Policies that include this header share
 * oom_policy_scopes, which oomctl fills with the scope of every attached,
 * killing, scoped policy (struct oom_policy_scope, oom_shared.h), and call
 * oom_defer_to_deeper() once they know an OOM is in their scope: it says
 * whether another policy's scope is strictly deeper than theirs and still
 * contains the OOM's memcg. Then they return 0 without choosing, and the
 * deepest policy decides whatever the attach order; if it frees nothing,
 * the kernel's killer acts.
 */
#ifndef __OOM_SCOPE_BPF_H
#define __OOM_SCOPE_BPF_H

#include "oom.bpf.h"
#include "oom_shared.h"

int bpf_iter_num_new(struct bpf_iter_num *it, int start, int end) __ksym;
int *bpf_iter_num_next(struct bpf_iter_num *it) __ksym;
void bpf_iter_num_destroy(struct bpf_iter_num *it) __ksym;

/* oomctl makes this the pinned map (bpffs_dir/policy_scopes) */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, OOM_POLICY_SCOPES_MAX);
	__type(key, u32);
	__type(value, struct oom_policy_scope);
} oom_policy_scopes SEC(".maps");

/*
 * Whether an attached policy with a scope strictly below @scope_id (0 or 1:
 * system-wide) contains the OOM's memcg, the cgroup @oom_id (0: a
 * system-wide OOM, which is in no scoped policy's scope). Call it only for
 * an OOM inside @scope_id. By id, so that policy explain (oom_explain.bpf.h)
 * asks the same question for a pretended OOM.
 */
static __always_inline bool oom_id_defers_to_deeper(u64 oom_id, u64 scope_id)
{
	struct cgroup *cg, *scope, *ancestor;
	struct oom_policy_scope *slot;
	bool deeper = false;
	int level = 0, *i;
	u32 key;

	if (!oom_id)
		return false;
	cg = bpf_cgroup_from_id(oom_id);
	if (!cg)
		return false;
	if (scope_id > 1) {
		scope = bpf_cgroup_from_id(scope_id);
		if (!scope) {
			bpf_cgroup_release(cg);
			return false;
		}
		level = scope->level;
		bpf_cgroup_release(scope);
	}

	bpf_for_each(num, i, 0, OOM_POLICY_SCOPES_MAX) {
		key = *i;
		slot = bpf_map_lookup_elem(&oom_policy_scopes, &key);
		if (!slot || !slot->cookie || slot->scope_id <= 1 ||
		    slot->scope_id == scope_id)
			continue;
		scope = bpf_cgroup_from_id(slot->scope_id);
		if (!scope)
			continue;	/* removed since */
		/* Both scopes contain the OOM: the deeper is below the other */
		if (scope->level > level) {
			ancestor = bpf_cgroup_ancestor(cg, scope->level);
			if (ancestor) {
				deeper = ancestor->kn->id == slot->scope_id;
				bpf_cgroup_release(ancestor);
			}
		}
		bpf_cgroup_release(scope);
		if (deeper)
			break;
	}
	bpf_cgroup_release(cg);
	return deeper;
}

/* oom_id_defers_to_deeper() for the OOM @oc */
static __always_inline bool oom_defer_to_deeper(struct oom_control *oc,
						u64 scope_id)
{
	struct mem_cgroup *memcg = oc->memcg;

	return memcg && oom_id_defers_to_deeper(memcg_cgroup_id(memcg), scope_id);
}

/*
 * A policy's first step on an OOM: count the run (*@nr_runs), and return
 * where it looks for a victim (oom_search_root(), referenced), or NULL when
 * the OOM is outside @scope_id or left to a deeper policy (counted in
 * *@nr_deferred). A NULL return is the policy's "return 0".
 */
static __always_inline struct mem_cgroup *
oom_policy_enter(struct oom_control *oc, u64 scope_id, u64 *nr_runs,
		 u64 *nr_deferred)
{
	struct mem_cgroup *root;

	__sync_fetch_and_add(nr_runs, 1);
	root = oom_search_root(oc, scope_id);
	if (root && oom_defer_to_deeper(oc, scope_id)) {
		__sync_fetch_and_add(nr_deferred, 1);
		bpf_put_mem_cgroup(root);
		return NULL;
	}
	return root;
}

#endif /* __OOM_SCOPE_BPF_H */
