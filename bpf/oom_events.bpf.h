/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Writing the OOM event log (struct oom_event, oom_shared.h) from BPF. The
 * recorder and the built-in policies include this; oomctl makes them share
 * the pinned maps (bpf_map__reuse_fd) so all write one log. The policies'
 * kill-or-log step is here too, as a dry run writes to the log; it is not
 * in oom.bpf.h, whose includers (syscall programs) must not get these maps.
 */
#ifndef __OOM_EVENTS_BPF_H
#define __OOM_EVENTS_BPF_H

#include "oom.bpf.h"
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

/*
 * Claim the next record, cleared, with seq 0 until oom_event_commit(): the
 * writer's half of the seqlock protocol in oom_shared.h. The atomic
 * exchanges are full barriers (BPF atomics with a fetch are fully ordered):
 * seq 0 is visible before any field changes, and every field before the
 * final seq.
 */
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
	__sync_lock_test_and_set(&e->seq, 0);
	__builtin_memset((char *)e + sizeof(e->seq), 0,
			 sizeof(*e) - sizeof(e->seq));
	e->type = type;
	e->time_ns = bpf_ktime_get_boot_ns();
	return e;
}

static __always_inline void oom_event_commit(struct oom_event *e, u64 seq)
{
	__sync_lock_test_and_set(&e->seq, seq);
}

static __always_inline u64 task_memcg_id(struct task_struct *task)
{
	return BPF_CORE_READ(task, cgroups, subsys[memory_cgrp_id], cgroup, kn, id);
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

/*
 * What a policy does with the victim it chose: kill @task for the OOM @oc,
 * or in dry-run mode only log that it would (the OOM is then left to the
 * next policy or the kernel's killer). @name, a string literal, is the
 * kill's message. Drops the reference on @task. Returns whether it killed,
 * the policy's return value; *@nr_kills counts the kills.
 */
static __always_inline bool oom_kill_or_log(void *ctx, struct oom_control *oc,
					    struct task_struct *task,
					    const char *name, bool dry_run,
					    u64 *nr_kills)
{
	bool killed = false;

	if (dry_run) {
		oom_event_dry_run(ctx, task, name);
	} else if (!bpf_oom_kill_process(oc, task, name)) {
		killed = true;
		__sync_fetch_and_add(nr_kills, 1);
	}
	bpf_task_release(task);
	return killed;
}

#endif /* __OOM_EVENTS_BPF_H */
