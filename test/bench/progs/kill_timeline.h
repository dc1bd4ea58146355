/* SPDX-License-Identifier: GPL-2.0 */
/* What progs/kill_timeline.bpf.c hands test/bench/kill_latency.c */
#ifndef __KILL_TIMELINE_H
#define __KILL_TIMELINE_H

#define MAX_WATCHED	64
#define MAX_SIGNALS	32

/* One SIGKILL or SIGTERM sent while armed */
struct fatal_signal {
	__u64 ns;
	__u32 pid;		/* receiver (thread group) */
	__s32 watched;		/* its index in the workload, or -1 */
	__u32 sig;
	char sender[16];
	char receiver[16];
};

#endif
