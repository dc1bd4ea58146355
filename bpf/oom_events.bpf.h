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

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, OOM_COUNTS_MAX);
	__uint(map_flags, BPF_F_NO_PREALLOC);	/* memory only for keys seen */
	__type(key, struct oom_count_key);
	__type(value, struct oom_count);
} oom_counts SEC(".maps");

/* By enum oom_event_type: records that found no room in oom_counts */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 8);
	__type(key, u32);
	__type(value, u64);
} oom_counts_other SEC(".maps");

/*
 * Scratch space of oom_event_cgroup_path(): the name being copied, and the
 * path, built backwards from the end of the first half of @path (the rest
 * is room for a masked offset plus a name, which the verifier asks for).
 * Not per-CPU, as a preempted writer would share it: the writer of record
 * seq uses entry (seq - 1) % OOM_PATH_SCRATCH_MAX, its own unless as many
 * writers are in flight at once.
 */
#define OOM_PATH_SCRATCH_MAX	256	/* a power of two */

struct oom_path_scratch {
	char name[NAME_MAX + 1];
	char path[2 * OOM_CGROUP_PATH_LEN];
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, OOM_PATH_SCRATCH_MAX);
	__type(key, u32);
	__type(value, struct oom_path_scratch);
} oom_path_scratch SEC(".maps");

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

/* oom_event_count()'s new entry, off the stack (a policy's frame and this
 * one share 512 bytes): the one of record seq, as for oom_path_scratch */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, OOM_PATH_SCRATCH_MAX);
	__type(key, u32);
	__type(value, struct oom_count);
} oom_count_scratch SEC(".maps");

/*
 * Count the finished record @e, of seq @seq, by its key in oom_counts
 * (oom_shared.h). Global, so the verifier checks it once, not in every
 * writer. Returns 0.
 */
__noinline int oom_event_count(struct oom_event *e, u64 seq)
{
	u32 slot = (seq - 1) & (OOM_PATH_SCRATCH_MAX - 1);
	struct oom_count_key key = {};
	struct oom_count *c, *first;
	u64 *other;

	if (!e)
		return 0;
	key.type = e->type;
	key.cgroup_id = e->cgroup_id;
	if (e->type == OOM_EVENT_KILL || e->type == OOM_EVENT_DRY_RUN)
		key.policy_cookie = e->policy_cookie;
	else
		key.trigger = e->trigger;
	c = bpf_map_lookup_elem(&oom_counts, &key);
	first = c ? NULL : bpf_map_lookup_elem(&oom_count_scratch, &slot);
	if (first) {
		first->count = 1;
		__builtin_memcpy(first->cgroup_path, e->cgroup_path,
				 sizeof(first->cgroup_path));
		if (!bpf_map_update_elem(&oom_counts, &key, first, BPF_NOEXIST))
			return 0;
		/* another writer added it first (-EEXIST), or it is full */
		c = bpf_map_lookup_elem(&oom_counts, &key);
	}
	if (c) {
		__sync_fetch_and_add(&c->count, 1);
		return 0;
	}
	other = bpf_map_lookup_elem(&oom_counts_other, &key.type);
	if (other)
		__sync_fetch_and_add(other, 1);
	return 0;
}

static __always_inline void oom_event_commit(struct oom_event *e, u64 seq)
{
	oom_event_count(e, seq);
	__sync_lock_test_and_set(&e->seq, seq);
}

static __always_inline u64 task_memcg_id(struct task_struct *task)
{
	return BPF_CORE_READ(task, cgroups, subsys[memory_cgrp_id], cgroup, kn, id);
}

/* The kernfs node of @task's memcg, as a number for oom_event_cgroup_path() */
static __always_inline u64 task_memcg_kn(struct task_struct *task)
{
	return (u64)BPF_CORE_READ(task, cgroups, subsys[memory_cgrp_id], cgroup, kn);
}

/*
 * Set @e->cgroup_path, of record @seq, to the path of the cgroup whose
 * kernfs node is at @kn (0: none, the path stays empty), in the form and
 * with the cut of oom_shared.h: the names from the leaf up to the root,
 * each put in front of the ones before. Global, so the verifier checks the
 * walk once, not in every caller; hence @kn a number, as a global function
 * takes no kernel pointer, and read with probes. Returns 0.
 */
__noinline int oom_event_cgroup_path(struct oom_event *e, u64 seq, u64 kn)
{
	u32 slot = (seq - 1) & (OOM_PATH_SCRATCH_MAX - 1);
	/* the path so far is s->path[pos, OOM_CGROUP_PATH_LEN) */
	u64 pos = OOM_CGROUP_PATH_LEN - 1;
	struct oom_path_scratch *s;
	struct kernfs_node *node = (void *)kn, *parent;
	long n, keep;
	int level;

	if (!e || !kn)
		return 0;
	s = bpf_map_lookup_elem(&oom_path_scratch, &slot);
	if (!s)
		return 0;
	s->path[OOM_CGROUP_PATH_LEN - 1] = '\0';
	for (level = 0; level < OOM_CGROUP_PATH_DEPTH; level++) {
		parent = BPF_CORE_READ(node, parent);
		if (!parent)		/* the root, whose name is no part of it */
			break;
		n = bpf_probe_read_kernel_str(s->name, sizeof(s->name),
					      BPF_CORE_READ(node, name));
		if (n < 2)		/* unreadable: better no path than a wrong one */
			return 0;
		n = (n - 1) & NAME_MAX;	/* without the NUL; the mask is for the verifier */
		if (n + 1 > (long)pos - OOM_CGROUP_PATH_CUT_LEN)
			goto cut;
		pos = (pos - n) & (OOM_CGROUP_PATH_LEN - 1);
		bpf_probe_read_kernel(s->path + pos, n, s->name);
		pos = (pos - 1) & (OOM_CGROUP_PATH_LEN - 1);
		s->path[pos] = '/';
		node = parent;
	}
	if (level == OOM_CGROUP_PATH_DEPTH) {	/* deeper still (cannot fit) */
		n = 0;
		goto cut;
	}
	if (pos == OOM_CGROUP_PATH_LEN - 1) {	/* the root cgroup itself */
		pos--;
		s->path[pos] = '/';
	}
	goto copy;
cut:
	/* as much of the name's end as fits, then the marker */
	keep = (long)pos - OOM_CGROUP_PATH_CUT_LEN;
	if (keep > n)
		keep = n;
	if (keep < 0)
		keep = 0;
	keep &= OOM_CGROUP_PATH_LEN - 1;
	pos = (pos - keep) & (OOM_CGROUP_PATH_LEN - 1);
	bpf_probe_read_kernel(s->path + pos, keep, s->name + (n - keep));
	pos = (pos - OOM_CGROUP_PATH_CUT_LEN) & (OOM_CGROUP_PATH_LEN - 1);
	for (level = 0; level < OOM_CGROUP_PATH_CUT_LEN; level++)
		s->path[pos + level] = OOM_CGROUP_PATH_CUT[level];
copy:
	pos &= OOM_CGROUP_PATH_LEN - 1;
	bpf_probe_read_kernel(e->cgroup_path, OOM_CGROUP_PATH_LEN - pos,
			      s->path + pos);
	return 0;
}

/*
 * The policy's cookie, set by oomctl before load: what its kills and dry-run
 * records are logged under (a struct_ops program has no attach cookie).
 */
const volatile __u64 policy_cookie;

/* A dry-run policy's "would kill" record */
static __always_inline void oom_event_dry_run(struct task_struct *task,
					      const char *message)
{
	struct oom_event *e;
	u64 seq;

	e = oom_event_begin(OOM_EVENT_DRY_RUN, &seq);
	if (!e)
		return;
	e->pid = task->tgid;
	e->cgroup_id = task_memcg_id(task);
	oom_event_cgroup_path(e, seq, task_memcg_kn(task));
	e->policy_cookie = policy_cookie;
	e->rss_bytes = task_rss_bytes(task);
	bpf_probe_read_kernel_str(e->comm, sizeof(e->comm), task->comm);
	bpf_probe_read_kernel_str(e->message, sizeof(e->message), message);
	oom_event_commit(e, seq);
}

/* @task's kill, with the rest of the memcg of cgroup id @unit_id if it
 * is not 0 and still there */
static __always_inline int oom_kill(struct oom_control *oc,
				    struct task_struct *task, u64 unit_id,
				    const char *name)
{
	struct mem_cgroup *unit = NULL;
	struct cgroup *cg;
	int err;

	cg = unit_id ? bpf_cgroup_from_id(unit_id) : NULL;
	if (cg) {
		/* the root is no unit (the kfunc refuses it): the task alone */
		if (cg->level)
			unit = bpf_get_mem_cgroup(&cg->self);
		bpf_cgroup_release(cg);
	}
	if (!unit)
		return bpf_oom_kill_process(oc, task, name);
	err = bpf_oom_kill_memcg(oc, task, unit, name);
	bpf_put_mem_cgroup(unit);
	return err;
}

/*
 * What a policy does with the victim it chose: kill @task for the OOM @oc,
 * with the rest of its unit (cgroup id @unit_id) unless that is 0, or in
 * dry-run mode only log that it would (the OOM is then left to the next
 * policy or the kernel's killer). @name, a string literal, is the kill's
 * message. Drops the reference on @task. Returns whether it killed, the
 * policy's return value; *@nr_kills counts the kills.
 */
static __always_inline bool oom_kill_or_log(struct oom_control *oc,
					    struct task_struct *task,
					    u64 unit_id, const char *name,
					    bool dry_run, u64 *nr_kills)
{
	bool killed = false;

	if (dry_run) {
		oom_event_dry_run(task, name);
	} else if (!oom_kill(oc, task, unit_id, name)) {
		killed = true;
		__sync_fetch_and_add(nr_kills, 1);
	}
	bpf_task_release(task);
	return killed;
}

#endif /* __OOM_EVENTS_BPF_H */
