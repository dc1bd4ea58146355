// SPDX-License-Identifier: GPL-2.0
/*
 * The benchmark's "rfc" killer: a PSI handler in the style of the BPF OOM
 * RFC's selftest (April 2025), for the RFC kernel (kernel/build.sh --rfc).
 * When the memory pressure trigger on the watched cgroup fires, declare an
 * OOM in that cgroup with the RFC's bpf_out_of_memory(); the kernel's OOM
 * killer then picks and kills the victim.
 *
 * The RFC's interfaces (seeds 009, 010):
 *   int bpf_handle_psi_event(struct psi_trigger *t)   hook, fmod_ret, sleepable
 *   int bpf_out_of_memory(struct mem_cgroup *memcg__nullable, int order)
 * The RFC has no per-trigger attachment: the hook runs for every trigger in
 * the system, so we pick out our cgroup's memory trigger ourselves.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

char LICENSE[] SEC("license") = "GPL";

/* This vmlinux.h (pahole 1.24) declares no kfuncs. */
struct mem_cgroup *bpf_get_mem_cgroup(struct cgroup_subsys_state *css) __ksym;
void bpf_put_mem_cgroup(struct mem_cgroup *memcg) __ksym;
int bpf_out_of_memory(struct mem_cgroup *memcg, int order) __ksym;
struct cgroup *bpf_cgroup_from_id(u64 cgid) __ksym;
void bpf_cgroup_release(struct cgroup *cgrp) __ksym;

#include "declare_oom.bpf.h"

/* bpf-next, which the RFC was written for, calls kernfs_node.parent __parent */
struct kernfs_node___rcu {
	struct kernfs_node *__parent;
} __attribute__((preserve_access_index));

const volatile __u64 watched_cgroup_id;	/* set by the loader */

/* Read by the loader when it exits */
__u64 nr_events;		/* our trigger fired */
__u64 nr_declared;	/* bpf_out_of_memory() returned true */
__u64 nr_busy;		/* another OOM was being handled: -EBUSY */
__s64 last_ret;

/* The cgroup whose pressure file the trigger was written to; 0 for /proc/pressure */
static u64 trigger_cgroup_id(struct psi_trigger *t)
{
	struct kernfs_node *kn, *dir;

	if (!t->of)
		return 0;
	kn = t->of->kn;
	if (!kn)
		return 0;
	if (bpf_core_field_exists(struct kernfs_node___rcu, __parent))
		dir = BPF_CORE_READ((struct kernfs_node___rcu *)kn, __parent);
	else
		dir = BPF_CORE_READ(kn, parent);
	return dir ? BPF_CORE_READ(dir, id) : 0;
}

SEC("fmod_ret.s/bpf_handle_psi_event")
int BPF_PROG(rfc_psi_handler, struct psi_trigger *t)
{
	struct cgroup *cg;
	int ret;

	if (t->state != PSI_MEM_SOME && t->state != PSI_MEM_FULL)
		return 0;
	if (!watched_cgroup_id || trigger_cgroup_id(t) != watched_cgroup_id)
		return 0;
	__sync_fetch_and_add(&nr_events, 1);

	cg = bpf_cgroup_from_id(watched_cgroup_id);
	if (!cg)
		return 0;	/* removed since */
	/*
	 * The root cgroup (/proc/pressure/memory) gets NULL, as the RFC's
	 * selftest passes for system-wide triggers: the root memcg would hit
	 * the BUG_ON in mem_cgroup_scan_tasks().
	 */
	ret = declare_oom_in(cg);
	last_ret = ret;
	if (ret > 0)
		__sync_fetch_and_add(&nr_declared, 1);
	else if (ret == -16)	/* -EBUSY */
		__sync_fetch_and_add(&nr_busy, 1);
	/* The hook's value is ignored by its caller; 1 as in the RFC's selftest */
	return 1;
}
