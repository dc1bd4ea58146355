// SPDX-License-Identifier: GPL-2.0
/*
 * Time spent in out_of_memory(), for test/bench/oom_path: per call on the
 * memory cgroup under test (target_cgid; 0 = system-wide OOMs), the whole
 * call, and inside it the parts that tell the selection from the rest: the
 * BPF policies' hook (bpf_handle_out_of_memory: a policy's choice and its
 * kill), the kernel's task scan (mem_cgroup_scan_tasks: its own selection of
 * a memcg OOM), the OOM report (dump_header) and the victim (mark_victim).
 *
 * Every caller of out_of_memory() holds oom_lock, so one call is in flight
 * at a time: plain globals hold it, and the nested probes count only the
 * thread that entered (a sleepable policy may move to another CPU).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#include "oom_path_shared.h"

char LICENSE[] SEC("license") = "GPL";


const volatile __u64 target_cgid;

/* Results, read by the loader once the command is done */
__u32 nr_calls;
__u32 nr_other;		/* calls on other cgroups, ignored */
struct oom_call calls[OOM_PATH_MAX_CALLS];

/* The call in flight */
static __u32 active_tid;
static __u64 start_ns;
static __u64 part_start[OOM_PATH_NR_PARTS];
static struct oom_call cur;

static __always_inline __u32 tid(void)
{
	return (__u32)bpf_get_current_pid_tgid();
}

SEC("fentry/out_of_memory")
int BPF_PROG(oom_enter, struct oom_control *oc)
{
	__u64 cgid = 0;

	if (oc->memcg)
		cgid = BPF_CORE_READ(oc, memcg, css.cgroup, kn, id);
	if (cgid != target_cgid) {
		__sync_fetch_and_add(&nr_other, 1);
		return 0;
	}
	__builtin_memset(&cur, 0, sizeof(cur));
	__builtin_memset(part_start, 0, sizeof(part_start));
	active_tid = tid();
	start_ns = bpf_ktime_get_ns();
	return 0;
}

SEC("fexit/out_of_memory")
int BPF_PROG(oom_exit, struct oom_control *oc, bool handled)
{
	__u32 i = nr_calls;

	if (!active_tid || active_tid != tid())
		return 0;
	active_tid = 0;
	cur.total_ns = bpf_ktime_get_ns() - start_ns;
	cur.handled = handled;
	if (i >= OOM_PATH_MAX_CALLS)
		return 0;
	calls[i] = cur;
	nr_calls = i + 1;
	return 0;
}

static __always_inline void part_enter(enum oom_path_part p)
{
	if (active_tid && active_tid == tid())
		part_start[p] = bpf_ktime_get_ns();
}

static __always_inline void part_exit(enum oom_path_part p)
{
	if (active_tid && active_tid == tid() && part_start[p]) {
		cur.part_ns[p] += bpf_ktime_get_ns() - part_start[p];
		part_start[p] = 0;
	}
}

SEC("fentry/bpf_handle_out_of_memory")
int BPF_PROG(policy_enter, struct oom_control *oc)
{
	part_enter(OOM_PATH_POLICY);
	return 0;
}

SEC("fexit/bpf_handle_out_of_memory")
int BPF_PROG(policy_exit, struct oom_control *oc, int ret)
{
	part_exit(OOM_PATH_POLICY);
	return 0;
}

SEC("fentry/mem_cgroup_scan_tasks")
int BPF_PROG(scan_enter)
{
	part_enter(OOM_PATH_SCAN);
	return 0;
}

SEC("fexit/mem_cgroup_scan_tasks")
int BPF_PROG(scan_exit)
{
	part_exit(OOM_PATH_SCAN);
	return 0;
}

SEC("fentry/dump_header")
int BPF_PROG(report_enter, struct oom_control *oc)
{
	part_enter(OOM_PATH_REPORT);
	return 0;
}

SEC("fexit/dump_header")
int BPF_PROG(report_exit, struct oom_control *oc)
{
	part_exit(OOM_PATH_REPORT);
	return 0;
}

SEC("tp_btf/mark_victim")
int BPF_PROG(victim, struct task_struct *task, uid_t uid)
{
	if (!active_tid || active_tid != tid())
		return 0;
	if (!cur.nr_victims++)
		cur.victim_pid = task->tgid;
	return 0;
}
