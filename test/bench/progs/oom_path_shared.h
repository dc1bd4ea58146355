/* SPDX-License-Identifier: GPL-2.0 */
/* One out_of_memory() call as progs/oom_path.bpf.c records it, for its
 * loader test/bench/oom_path.c too (the skeleton does not define it). The
 * includer provides __u32 and __u64 (vmlinux.h, or linux/types.h). */
#ifndef __OOM_PATH_SHARED_H
#define __OOM_PATH_SHARED_H

#define OOM_PATH_MAX_CALLS	64

enum oom_path_part {
	OOM_PATH_POLICY,	/* bpf_handle_out_of_memory: the BPF policies */
	OOM_PATH_SCAN,		/* mem_cgroup_scan_tasks: the kernel's selection */
	OOM_PATH_REPORT,	/* dump_header: the OOM report */
	OOM_PATH_NR_PARTS,
};

struct oom_call {
	__u64 total_ns;
	__u64 part_ns[OOM_PATH_NR_PARTS];
	__u32 victim_pid;	/* the first task marked as victim, or 0 */
	__u32 nr_victims;
	__u32 handled;		/* out_of_memory()'s return value */
};

#endif /* __OOM_PATH_SHARED_H */
