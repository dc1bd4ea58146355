// SPDX-License-Identifier: GPL-2.0
/*
 * The OOM event log's recorder: every OOM invocation, every kill (by a
 * policy or by the kernel's own killer) and every PSI event handed to bpf,
 * appended to the ring in oom_events.bpf.h, and the time of the last kill
 * below each cgroup (oom_kill_times.bpf.h). Kept attached (pinned links) by
 * oomctl, so the log covers OOMs while no tool runs.
 *
 * A kill is seen at the mark_victim tracepoint, which both the kernel's
 * killer and bpf_oom_kill_process() reach. A kill inside a
 * bpf_oom_kill_process() call of the same thread is the policy's: its
 * message and its cookie name it. The cookie of a policy on the OOM hook is
 * its attach cookie (oc->bpf_policy_cookie); a cgroup's policy (struct
 * bpf_oom_ops) has none, and the kernel names its cgroup instead
 * (oc->bpf_policy_cgroup_id), which policy_cgroups maps to the cookie
 * oomctl gave it.
 *
 * Each record names its cgroup by id and by path (oom_event_cgroup_path()),
 * the path kept for after the cgroup is removed.
 */
#include "oom.bpf.h"
#include "oom_events.bpf.h"
#include "oom_kill_times.bpf.h"

char LICENSE[] SEC("license") = "GPL";

/* Threads inside bpf_oom_kill_process() or a PSI handler at one time: few,
 * as OOMs are serialized by oom_lock */
#define RECORDER_THREADS_MAX	256
/* Policy cookies whose kills are counted; the LRU forgets the least
 * recently counted (most likely detached) beyond that, never the newest */
#define POLICY_KILLS_MAX	1024

struct policy_call {
	struct oom_control *oc;
	const char *message;
};

/* Threads inside bpf_oom_kill_process() */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, RECORDER_THREADS_MAX);
	__type(key, u32);
	__type(value, struct policy_call);
} policy_calls SEC(".maps");

/* Threads inside a PSI handler (whose OOMs are PSI-triggered) */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, RECORDER_THREADS_MAX);
	__type(key, u32);
	__type(value, u8);
} psi_handlers SEC(".maps");

/* The cookie of the policy attached to each cgroup id (one a cgroup), kept
 * by oomctl */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, POLICY_KILLS_MAX);
	__type(key, u64);
	__type(value, u64);
} policy_cgroups SEC(".maps");

/* Kills per policy cookie, for `oomctl policy list` */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, POLICY_KILLS_MAX);
	__type(key, u64);
	__type(value, u64);
} policy_kills SEC(".maps");

static __always_inline u32 current_tid(void)
{
	return (u32)bpf_get_current_pid_tgid();
}

SEC("fentry/out_of_memory")
int BPF_PROG(record_oom, struct oom_control *oc)
{
	u32 tid = current_tid();
	struct oom_event *e;
	u64 seq;

	e = oom_event_begin(OOM_EVENT_INVOKE, &seq);
	if (!e)
		return 0;
	e->pid = bpf_get_current_pid_tgid() >> 32;
	bpf_get_current_comm(e->comm, sizeof(e->comm));
	e->cgroup_id = oom_cgroup_id(oc);
	if (e->cgroup_id)
		oom_event_cgroup_path(e, seq, (u64)BPF_CORE_READ(oc, memcg,
							       css.cgroup, kn));
	if (!oc->bpf_declared)
		e->trigger = OOM_TRIGGER_ALLOCATION;
	else if (bpf_map_lookup_elem(&psi_handlers, &tid))
		e->trigger = OOM_TRIGGER_PSI;
	else
		e->trigger = OOM_TRIGGER_DECLARED;
	oom_event_commit(e, seq);
	return 0;
}

SEC("fentry/bpf_oom_kill_process")
int BPF_PROG(enter_policy_kill, struct oom_control *oc, struct task_struct *task,
	     const char *message)
{
	struct policy_call call = { .oc = oc, .message = message };
	u32 tid = current_tid();

	bpf_map_update_elem(&policy_calls, &tid, &call, BPF_ANY);
	return 0;
}

SEC("fexit/bpf_oom_kill_process")
int BPF_PROG(exit_policy_kill, struct oom_control *oc, struct task_struct *task,
	     const char *message, int ret)
{
	u32 tid = current_tid();

	bpf_map_delete_elem(&policy_calls, &tid);
	return 0;
}

/* A kill at @now below @task's memcg and each of its ancestors, for the
 * PSI handlers' pause after a kill */
static __always_inline void kill_times_mark(struct task_struct *task, u64 now)
{
	struct cgroup *cg = BPF_CORE_READ(task, cgroups, subsys[memory_cgrp_id],
					  cgroup);
	int level = BPF_CORE_READ(cg, level);
	u64 id;

	for (int i = 0; i <= level && i < OOM_KILL_TIMES_DEPTH; i++) {
		id = BPF_CORE_READ(cg, ancestors[i], kn, id);
		if (id)
			bpf_map_update_elem(&oom_kill_times, &id, &now, BPF_ANY);
	}
}

SEC("tp_btf/mark_victim")
int BPF_PROG(record_kill, struct task_struct *task, uid_t uid)
{
	u32 tid = current_tid();
	struct policy_call *call;
	struct oom_event *e;
	u64 seq, one = 1, *kills;

	kill_times_mark(task, bpf_ktime_get_boot_ns());
	e = oom_event_begin(OOM_EVENT_KILL, &seq);
	if (!e)
		return 0;
	e->pid = task->tgid;
	e->cgroup_id = task_memcg_id(task);
	oom_event_cgroup_path(e, seq, task_memcg_kn(task));
	e->rss_bytes = task_rss_bytes(task);
	bpf_probe_read_kernel_str(e->comm, sizeof(e->comm), task->comm);

	call = bpf_map_lookup_elem(&policy_calls, &tid);
	if (call) {
		/* Outside BPF_CORE_READ: struct policy_call is ours, not the kernel's */
		struct oom_control *oc = call->oc;

		e->policy_cookie = BPF_CORE_READ(oc, bpf_policy_cookie);
		if (!e->policy_cookie) {
			u64 cgid = BPF_CORE_READ(oc, bpf_policy_cgroup_id);
			u64 *cookie = bpf_map_lookup_elem(&policy_cgroups, &cgid);

			if (cookie)
				e->policy_cookie = *cookie;
		}
		bpf_probe_read_kernel_str(e->message, sizeof(e->message),
					  call->message);
		kills = bpf_map_lookup_elem(&policy_kills, &e->policy_cookie);
		if (kills)
			__sync_fetch_and_add(kills, 1);
		else
			bpf_map_update_elem(&policy_kills, &e->policy_cookie,
					    &one, BPF_NOEXIST);
	}
	oom_event_commit(e, seq);
	return 0;
}

/*
 * Every PSI event handed to bpf passes this work function: the PSI hook's
 * (the tools' triggers) and each bpf_psi_ops handler's own. The trigger is
 * the work's container; read through probes, as the verifier cannot follow
 * container_of() from a trusted pointer.
 */
SEC("fentry/psi_bpf_event_workfn")
int BPF_PROG(record_psi_event, struct work_struct *work)
{
	struct psi_trigger *t = (void *)work -
				bpf_core_field_offset(struct psi_trigger, bpf_work);
	u32 tid = current_tid();
	struct oom_event *e;
	u8 one = 1;
	u64 seq;

	bpf_map_update_elem(&psi_handlers, &tid, &one, BPF_ANY);
	e = oom_event_begin(OOM_EVENT_PSI, &seq);
	if (!e)
		return 0;
	e->cgroup_id = BPF_CORE_READ(t, cgroup_id);
	if (e->cgroup_id) {
		/* referenced: the trigger names its cgroup by id only */
		struct cgroup *cg = bpf_cgroup_from_id(e->cgroup_id);

		if (cg) {
			oom_event_cgroup_path(e, seq, (u64)BPF_CORE_READ(cg, kn));
			bpf_cgroup_release(cg);
		}
	}
	e->trigger = BPF_CORE_READ(t, state);
	e->pid = bpf_get_current_pid_tgid() >> 32;
	bpf_get_current_comm(e->comm, sizeof(e->comm));
	oom_event_commit(e, seq);
	return 0;
}

SEC("fexit/psi_bpf_event_workfn")
int BPF_PROG(end_psi_event, struct work_struct *work)
{
	u32 tid = current_tid();

	bpf_map_delete_elem(&psi_handlers, &tid);
	return 0;
}
