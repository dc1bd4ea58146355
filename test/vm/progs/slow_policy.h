/* SPDX-License-Identifier: GPL-2.0 */
/* The .bss of progs/slow_policy.bpf.c, shared with oom_detach_midway.c */
#ifndef __SLOW_POLICY_H
#define __SLOW_POLICY_H

struct slow_state {
	unsigned long long spin_ns;	/* set by the scenario: time before the kill */
	unsigned int started;		/* the policy runs */
	unsigned int detached;		/* set by the scenario once it detached */
	unsigned int detached_before_kill; /* what the policy saw when it killed */
	int kill_ret;			/* greedy_kill()'s */
};

#endif /* __SLOW_POLICY_H */
