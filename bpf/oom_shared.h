/* SPDX-License-Identifier: GPL-2.0 */
/* Structures shared by the BPF programs and their user-space callers. */
#ifndef __OOM_SHARED_H
#define __OOM_SHARED_H

#include <linux/limits.h>	/* NAME_MAX, macros only: fine beside vmlinux.h */

#ifndef __VMLINUX_H__
#include <linux/types.h>
typedef __u64 u64;
typedef __s32 s32;
typedef __u32 u32;
#endif

/* Context of oom_declare.bpf.c, run with BPF_PROG_TEST_RUN */
struct oom_declare_args {
	u64 cgroup_id;		/* 0: system-wide */
	s32 order;
	s32 ret;		/* out: bpf_out_of_memory()'s result or -errno */
};

/* Context of psi_trigger.bpf.c's programs */
struct psi_trigger_args {
	u64 cgroup_id;		/* 0: system-wide */
	s32 state;		/* enum psi_states, e.g. PSI_MEM_SOME */
	u32 threshold_us;
	u32 window_us;
	s32 id;			/* in for destroy */
	s32 ret;		/* out: trigger id or 0, or -errno */
};

/*
 * The OOM event log: a ring of OOM_EVENTS_MAX records in a pinned array map,
 * written by recorder.bpf.c (and by policies in dry-run mode), read without
 * consuming it. oom_events_head counts the records ever written; record seq
 * (1-based) lives in slot (seq - 1) % OOM_EVENTS_MAX, so readers order
 * records by seq and drop stale ones (seq <= head - OOM_EVENTS_MAX).
 *
 * Writers and readers never lock each other out; each record's seq works
 * as a seqlock (oom_events.bpf.h, cli/event_bpf.c):
 * - the writer claims seq S by incrementing head, stores seq 0, fills the
 *   record, and stores seq S last, with full barriers between the steps;
 * - the reader of record S reads its seq (before), copies the record, and
 *   reads its seq again (after), each a separate read in that order. The
 *   copy is whole only if seq is S before, in the copy and after
 *   (oom_event_intact()): 0 means a writer is inside, and any other value
 *   that the slot was reused for a newer record, whose writer may have
 *   changed the record while it was copied.
 * Seq values never repeat, so "S before and after" means no writer touched
 * the slot in between (barring OOM_EVENTS_MAX writers in flight at once).
 */
#define OOM_EVENTS_MAX		4096	/* a power of two */
#define OOM_MESSAGE_LEN		64
#define OOM_COMM_LEN		16

/*
 * Each record keeps its cgroup's path as it was at the event, relative to
 * the cgroup2 root ("/a/b", "/" for the root, "" for none), so that the log
 * names a cgroup removed since. A path of more than OOM_CGROUP_PATH_KEEP
 * bytes keeps its last OOM_CGROUP_PATH_KEEP bytes (the leaf end, cut
 * anywhere, even inside a name) behind OOM_CGROUP_PATH_CUT: a whole path
 * begins with '/', a cut one with "...". For example, with 10 bytes
 * kept, /a/bcdef/ghij is ...bcdef/ghij. A system-wide event (cgroup_id 0)
 * has "", and so has a record whose walk failed.
 */
#define OOM_CGROUP_PATH_LEN	256	/* a power of two; with the NUL */
#define OOM_CGROUP_PATH_CUT	"..."
#define OOM_CGROUP_PATH_CUT_LEN	3
#define OOM_CGROUP_PATH_KEEP	(OOM_CGROUP_PATH_LEN - 1 - OOM_CGROUP_PATH_CUT_LEN)
/* Levels walked at most: each takes 2 bytes or more ("/x"), so a deeper
 * cgroup's path is cut before the walk ends */
#define OOM_CGROUP_PATH_DEPTH	(OOM_CGROUP_PATH_KEEP / 2 + 1)

enum oom_event_type {
	OOM_EVENT_INVOKE = 1,	/* out_of_memory() ran */
	OOM_EVENT_KILL,		/* a task was killed (marked OOM victim) */
	OOM_EVENT_PSI,		/* a PSI trigger handed an event to bpf */
	OOM_EVENT_DRY_RUN,	/* a dry-run policy would have killed */
};

enum oom_trigger {
	OOM_TRIGGER_ALLOCATION,	/* an allocation failed */
	OOM_TRIGGER_DECLARED,	/* bpf_out_of_memory() from a syscall program */
	OOM_TRIGGER_PSI,	/* bpf_out_of_memory() from a PSI handler */
};

struct oom_event {
	u64 seq;
	u64 time_ns;		/* CLOCK_BOOTTIME */
	u32 type;		/* enum oom_event_type */
	u32 pid;		/* kill/dry-run: the victim; invoke: the caller */
	u64 cgroup_id;		/* kill: the victim's memcg; invoke: the OOM's
				 * memcg (0: system-wide); psi: the trigger's */
	u64 policy_cookie;	/* kill/dry-run: the policy (0: kernel killer) */
	u64 rss_bytes;		/* kill/dry-run: resident memory at the kill */
	u32 trigger;		/* invoke: enum oom_trigger; psi: psi state */
	s32 result;		/* invoke: handled (1) or not (0) */
	char comm[OOM_COMM_LEN];
	char message[OOM_MESSAGE_LEN];	/* the policy's message */
	char cgroup_path[OOM_CGROUP_PATH_LEN];	/* cgroup_id's, see above */
};

/*
 * Counts of the records ever written, by what they name, kept beside the
 * ring (oom_counts, oom_events.bpf.h) for the Prometheus export: counting
 * the ring's records instead would make a count fall as its records drop
 * out. One entry per key seen since the log began, at most OOM_COUNTS_MAX;
 * a record whose key finds no room is counted in oom_counts_other, by type.
 * Each entry keeps the path of the key's cgroup from its first record, so
 * that a removed cgroup is still named.
 */
#define OOM_COUNTS_MAX		4096

struct oom_count_key {
	u32 type;		/* enum oom_event_type */
	u32 trigger;		/* invoke: enum oom_trigger; psi: psi state;
				 * kill, dry-run: 0 */
	u64 cgroup_id;		/* the record's */
	u64 policy_cookie;	/* kill, dry-run: the record's; else 0 */
};

struct oom_count {
	u64 count;
	char cgroup_path[OOM_CGROUP_PATH_LEN];	/* as in struct oom_event */
};

/* The seqlock check above: whether @copy, read between @seq_before and
 * @seq_after, is the whole record @want (seq > 0). */
static inline int oom_event_intact(u64 want, u64 seq_before,
				   const struct oom_event *copy, u64 seq_after)
{
	return want && seq_before == want && copy->seq == want &&
	       seq_after == want;
}

/*
 * memcg_walk.bpf.c: the memory cgroups of a subtree, read in the kernel.
 * A syscall program run with BPF_PROG_TEST_RUN, its context a struct
 * memcg_walk_args, walks the memcgs below a root in pre-order and writes
 * one struct memcg_record per memcg into a BPF ring buffer. When the ring
 * is full it stops; the caller drains the ring and runs it again with
 * skip = pos, skip_id = last_id, until done.
 */
#define MEMCG_NAME_LEN		(NAME_MAX + 1)
#define MEMCG_WALK_RING_SIZE	(4U << 20)

enum memcg_walk_flags {
	MEMCG_WALK_ROOT_ONLY	= 1,	/* the root's record only (show) */
};

struct memcg_walk_args {
	u64 root_id;		/* cgroup id of the walk's root; 0: the root */
	u64 skip;		/* walk positions already done (a previous pos) */
	u64 skip_id;		/* id at position skip - 1 then (last_id); 0:
				 * do not check */
	u32 flags;		/* enum memcg_walk_flags */
	u32 nr_records;		/* out: records written by this run */
	u64 pos;		/* out: walk positions done, skipped included */
	u64 last_id;		/* out: cgroup id at position pos - 1 */
	s32 done;		/* out: 1 if the walk reached its end */
	s32 err;		/* out: 0 or -errno: -ENOENT no such cgroup,
				 * -ENODEV no memcg there, -EAGAIN the node at
				 * skip - 1 is not skip_id any more */
};

/* memory.events, in the kernel's order (enum memcg_memory_event) */
enum memcg_event {
	MEMCG_EV_LOW,
	MEMCG_EV_HIGH,
	MEMCG_EV_MAX,
	MEMCG_EV_OOM,
	MEMCG_EV_OOM_KILL,
	MEMCG_EV_OOM_GROUP_KILL,
	MEMCG_EV_NR,
};

enum memcg_record_flags {
	MEMCG_REC_PSI		= 1,	/* psi_avg and psi_total are valid */
};

/* Sizes are in pages; limits of PAGE_COUNTER_MAX are "max" (unlimited). */
struct memcg_record {
	u64 id;			/* cgroup id (its kernfs node id) */
	u64 parent_id;		/* 0 for the root cgroup */
	u32 level;		/* depth below the root cgroup */
	u32 nr_procs;		/* processes charged here (css_task_iter) */
	u32 flags;		/* enum memcg_record_flags */
	u32 __pad;
	u64 usage;		/* memory.current */
	u64 swap;		/* memory.swap.current */
	u64 anon;		/* memory.stat anon (NR_ANON_MAPPED) */
	u64 file;		/* memory.stat file (NR_FILE_PAGES) */
	u64 min, low, high, max, swap_max;
	u64 events[MEMCG_EV_NR];	/* memory.events, hierarchical */
	u64 pgscan, pgsteal;	/* memory.stat */
	u64 psi_avg[2][3];	/* memory some/full avg10/60/300, fixed point
				 * with 11 bits of fraction (FIXED_1) */
	u64 psi_total[2];	/* memory some/full stall time, ns */
	char name[MEMCG_NAME_LEN];	/* cgroup directory name */
};

#endif /* __OOM_SHARED_H */
