/* SPDX-License-Identifier: GPL-2.0 */
/* What progs/psi_ops.bpf.c and test/vm/psi_ops.c share, in its .bss */
#ifndef __PSI_OPS_H
#define __PSI_OPS_H

/* [0] test-owner, [1] test-other, [2] test-failing */
struct psi_ops_state {
	/* set by the scenario before attaching */
	unsigned long long owner_cgid;		/* test-owner's trigger watches it */
	unsigned long long stranger_cgid;	/* outside test-other's cgroup */
	unsigned int declare;		/* test-owner declares an OOM once */
	int declare_ret;		/* bpf_out_of_memory()'s, 1 before */
	int init_ret[3];		/* what init's trigger creation returned */
	int online_trigger_ret;		/* the same in test-other's online */
	unsigned long long events[3];
	unsigned long long last_event_cgid[3];
	unsigned long long hook_events;	/* the PSI hook's program's */
	unsigned long long online, offline, last_online, last_offline;
};

#endif /* __PSI_OPS_H */
