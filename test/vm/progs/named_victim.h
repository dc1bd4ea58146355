/* SPDX-License-Identifier: GPL-2.0 */
/* What named_victim.bpf.c records, for the scenarios that read its .bss */
#ifndef __NAMED_VICTIM_H
#define __NAMED_VICTIM_H

#include "oom_shared.h"		/* u32, s32, u64 outside BPF */

/* What the named task was when the policy named it */
enum {
	NAMED_VICTIM	= 1 << 0,	/* already an OOM victim (signal->oom_mm) */
	NAMED_OOM_SKIP	= 1 << 1,	/* its mm has MMF_OOM_SKIP: reaped */
	NAMED_VFORK	= 1 << 2,	/* a vfork child (vfork_done set) */
	NAMED_NO_MM	= 1 << 3,	/* no mm: exited or a kernel thread */
};

#define NAMED_MAX_RECORDS	16

struct run_record {
	u64 seq;	/* from run_seq, shared by all instances; 1-based */
	s32 pid;	/* the named task, 0 if none */
	s32 ret;	/* the kill kfunc's return; -ESRCH: no such pid */
	u32 flags;	/* NAMED_* */
	s32 returned;	/* what the program returned */
};

struct kill_record {
	s32 pid;
	u32 in_oom;	/* inside an out_of_memory() the tracer saw enter */
	u64 cookie;	/* oc->bpf_policy_cookie at the kill */
};

#endif /* __NAMED_VICTIM_H */
