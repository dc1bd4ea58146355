/* SPDX-License-Identifier: GPL-2.0 */
/*
 * `oomctl policy explain`: a policy object's SEC("syscall") program
 * "explain", run with BPF_PROG_TEST_RUN, calls the same selection function
 * as its OOM hook for a pretended OOM, kills nothing and changes no state
 * of the policy. Context: struct oom_explain_args. Every unit the selection
 * looked at goes into the ring buffer explain_records as one struct
 * oom_explain_record, in walk order, with the figures that ranked it.
 */
#ifndef __OOM_EXPLAIN_H
#define __OOM_EXPLAIN_H

#include "oom_shared.h"

/* The program's name and its ring's size (user space may resize it) */
#define OOM_EXPLAIN_PROG	"explain"
#define OOM_EXPLAIN_RING_SIZE	(64U << 10)

/* struct oom_explain_record .flags */
enum oom_explain_flags {
	OOM_EXPLAIN_PROTECTED	= 1,	/* a task with oom_score_adj -1000: skipped */
	OOM_EXPLAIN_OMIT	= 2,	/* user.oomd_omit: skipped */
	OOM_EXPLAIN_AVOID	= 4,	/* user.oomd_avoid: only if nothing else */
	OOM_EXPLAIN_GROUP	= 8,	/* a memory.oom.group unit, killed whole */
	OOM_EXPLAIN_PGSCAN	= 16,	/* pgscan figures are set (oomd) */
	OOM_EXPLAIN_CACHE	= 32,	/* cache is set (largest-leaf) */
	OOM_EXPLAIN_EMPTY	= 64,	/* no task to kill: skipped */
};

struct oom_explain_record {
	u64 cgroup_id;
	u64 usage;		/* bytes, as the policy compares them (it
				 * compares pages) */
	u64 cache;		/* bytes of page cache left out of usage */
	u64 pgscan;		/* reclaim's pages scanned, in total */
	u64 pgscan_delta;	/* ... in the policy's window */
	u64 last_ns;		/* boot-time ns the window starts at; 0: no
				 * sample, so the delta is since boot */
	u32 flags;		/* enum oom_explain_flags */
	u32 __pad;		/* 0; oomctl keeps the walk order here */
};

/* struct oom_explain_args .verdict: what the hook would return */
enum oom_explain_verdict {
	OOM_EXPLAIN_KILL = 1,		/* it would kill victim_pid */
	OOM_EXPLAIN_NO_VICTIM,		/* no candidate: returns 0 */
	OOM_EXPLAIN_OUT_OF_SCOPE,	/* the OOM is outside its scope */
	OOM_EXPLAIN_DEFERS,		/* a deeper policy is asked first */
};

struct oom_explain_args {
	u64 oom_cgroup_id;	/* the pretended OOM's memcg; 0: system-wide */
	u64 scope_id;		/* the policy's scope; 0: system-wide */
	u64 now_ns;		/* out: boot-time ns of the run */
	u64 victim_cgroup_id;	/* out: the chosen unit */
	u64 victim_rss;		/* out: bytes */
	u32 victim_pid;		/* out: the process it would kill */
	u32 nr_records;		/* out: records written */
	u32 nr_lost;		/* out: records the ring had no room for */
	s32 verdict;		/* out: enum oom_explain_verdict */
	s32 err;		/* out: -ENOENT no such cgroup, -ENODEV no memcg */
	u32 deeper;		/* in: an attached policy below scope_id holds
				 * the OOM, and the kernel asks it first */
	char victim_comm[16];	/* out */
};

#endif /* __OOM_EXPLAIN_H */
