/* SPDX-License-Identifier: GPL-2.0 */
/*
 * When the last OOM kill below each cgroup happened: the recorder
 * (recorder.bpf.c) writes it at mark_victim, which every OOM kill reaches
 * (the kernel's killer, a policy's kfunc, a memcg's own OOM), for the
 * victim's memcg and each of its ancestors, while they all exist; a PSI
 * handler (psi_declare.bpf.c) looks up its own cgroup. oomctl pins it
 * beside the event log as kill_times and makes both programs share it.
 */
#ifndef __OOM_KILL_TIMES_BPF_H
#define __OOM_KILL_TIMES_BPF_H

/* Cgroups remembered; beyond, the least recently killed below go first */
#define OOM_KILL_TIMES_MAX	4096
/* Levels marked from the root down: deeper cgroups see no kill times */
#define OOM_KILL_TIMES_DEPTH	32

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, OOM_KILL_TIMES_MAX);
	__type(key, u64);		/* cgroup id */
	__type(value, u64);		/* CLOCK_BOOTTIME ns of the last kill */
} oom_kill_times SEC(".maps");

#endif
