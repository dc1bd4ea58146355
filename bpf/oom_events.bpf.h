/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Writing the OOM event log (struct oom_event, oom_shared.h) from BPF. The
 * recorder and the built-in policies include this; oomctl makes them share
 * the pinned maps (bpf_map__reuse_fd) so all write one log.
 */
#ifndef __OOM_EVENTS_BPF_H
#define __OOM_EVENTS_BPF_H

#include "oom_shared.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, OOM_EVENTS_MAX);
	__type(key, u32);
	__type(value, struct oom_event);
} oom_events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, u64);		/* records ever written */
} oom_events_head SEC(".maps");

/* Claim the next record, cleared, with seq 0 until oom_event_commit(). */
static __always_inline struct oom_event *oom_event_begin(u32 type, u64 *seq)
{
	struct oom_event *e;
	u32 zero = 0, idx;
	u64 *head;

	head = bpf_map_lookup_elem(&oom_events_head, &zero);
	if (!head)
		return NULL;
	*seq = __sync_fetch_and_add(head, 1) + 1;
	idx = (*seq - 1) & (OOM_EVENTS_MAX - 1);
	e = bpf_map_lookup_elem(&oom_events, &idx);
	if (!e)
		return NULL;
	__builtin_memset(e, 0, sizeof(*e));
	e->type = type;
	e->time_ns = bpf_ktime_get_boot_ns();
	return e;
}

static __always_inline void oom_event_commit(struct oom_event *e, u64 seq)
{
	asm volatile("" ::: "memory");
	e->seq = seq;
}

static __always_inline u64 task_memcg_id(struct task_struct *task)
{
	return BPF_CORE_READ(task, cgroups, subsys[memory_cgrp_id], cgroup, kn, id);
}

static __always_inline u64 task_rss_bytes(struct task_struct *task)
{
	struct mm_struct *mm = BPF_CORE_READ(task, mm);
	s64 pages = 0;

	if (!mm)
		return 0;
	pages += BPF_CORE_READ(mm, rss_stat[MM_FILEPAGES].count);
	pages += BPF_CORE_READ(mm, rss_stat[MM_ANONPAGES].count);
	pages += BPF_CORE_READ(mm, rss_stat[MM_SHMEMPAGES].count);
	return pages > 0 ? pages * 4096 : 0;
}

/* A dry-run policy's "would kill" record; the policy's cookie is its own. */
static __always_inline void oom_event_dry_run(void *ctx,
					      struct task_struct *task,
					      const char *message)
{
	struct oom_event *e;
	u64 seq;

	e = oom_event_begin(OOM_EVENT_DRY_RUN, &seq);
	if (!e)
		return;
	e->pid = task->tgid;
	e->cgroup_id = task_memcg_id(task);
	e->policy_cookie = bpf_get_attach_cookie(ctx);
	e->rss_bytes = task_rss_bytes(task);
	bpf_probe_read_kernel_str(e->comm, sizeof(e->comm), task->comm);
	bpf_probe_read_kernel_str(e->message, sizeof(e->message), message);
	oom_event_commit(e, seq);
}

#endif /* __OOM_EVENTS_BPF_H */
