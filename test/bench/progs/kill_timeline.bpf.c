// SPDX-License-Identifier: GPL-2.0
/*
 * Timestamps, in the kernel, of one OOM kill from pressure onset to the
 * victim's exit, for test/bench/kill_latency: the first memory stall of a
 * watched task, the PSI event (our kernel queues the handler's work item),
 * the handler's start, the declared OOM, the OOM killer's entry, the fatal
 * signals sent to watched tasks (and by whom), and the first watched exit.
 * User space fills `watched` with the workload's pids before it releases
 * them; nothing is recorded until it sets `armed`. Everything else in the
 * system is ignored but for signals: a fatal signal to an unwatched task
 * while armed is collateral damage and counted as such.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#include "kill_timeline.h"

char LICENSE[] SEC("license") = "GPL";

#define SIGKILL	9
#define SIGTERM	15

/* pid -> index in the workload (0 = the intended victim) */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, MAX_WATCHED);
	__type(key, __u32);
	__type(value, __u32);
} watched SEC(".maps");

/* Set by user space */
bool armed;
bool stall_anywhere;		/* W2: the whole system's first stall */
__u64 psi_workfn;		/* our kernel's psi_bpf_event_workfn, or 0 */

/* Results; 0 = did not happen */
__u64 first_stall_ns;
__u64 psi_event_ns;
__u64 handler_ns;
__u64 declare_ns;
__u64 oom_ns;
__u64 exit_ns;
__u32 exit_pid;
bool lost_signals;

/* The fatal signals sent while armed, in order; user space pops them */
struct {
	__uint(type, BPF_MAP_TYPE_QUEUE);
	__uint(max_entries, MAX_SIGNALS);
	__type(value, struct fatal_signal);
} signals SEC(".maps");

static __always_inline void once(__u64 *when)
{
	if (armed && !*when)
		*when = bpf_ktime_get_ns();
}

SEC("fentry/psi_memstall_enter")
int BPF_PROG(stall, unsigned long *flags)
{
	__u32 pid = bpf_get_current_pid_tgid() >> 32;

	if (stall_anywhere || bpf_map_lookup_elem(&watched, &pid))
		once(&first_stall_ns);
	return 0;
}

/* Our kernel: the trigger fired and queued the handler's work */
SEC("tp_btf/workqueue_queue_work")
int BPF_PROG(psi_queued, int req_cpu, struct pool_workqueue *pwq,
	     struct work_struct *work)
{
	if (psi_workfn && (__u64)BPF_CORE_READ(work, func) == psi_workfn)
		once(&psi_event_ns);
	return 0;
}

/* Both kernels; the RFC calls it straight from the trigger's poll */
SEC("fentry/bpf_handle_psi_event")
int BPF_PROG(handler, struct psi_trigger *t)
{
	once(&handler_ns);
	if (!psi_workfn)
		once(&psi_event_ns);
	return 0;
}

SEC("fentry/bpf_out_of_memory")
int BPF_PROG(declare)
{
	once(&declare_ns);
	return 0;
}

SEC("fentry/out_of_memory")
int BPF_PROG(oom, struct oom_control *oc)
{
	once(&oom_ns);
	return 0;
}

SEC("tp_btf/signal_generate")
int BPF_PROG(fatal, int sig, struct kernel_siginfo *info,
	     struct task_struct *task, int group, int result)
{
	struct fatal_signal s = {};
	__u32 pid, *idx;

	if (!armed || (sig != SIGKILL && sig != SIGTERM))
		return 0;
	pid = BPF_CORE_READ(task, tgid);
	idx = bpf_map_lookup_elem(&watched, &pid);
	s.ns = bpf_ktime_get_ns();
	s.pid = pid;
	s.watched = idx ? *idx : -1;
	s.sig = sig;
	bpf_get_current_comm(s.sender, sizeof(s.sender));
	BPF_CORE_READ_STR_INTO(&s.receiver, task, comm);
	/* full: the rest of a burst is lost, and the run says so */
	if (bpf_map_push_elem(&signals, &s, 0))
		lost_signals = true;
	return 0;
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(exited, struct task_struct *task)
{
	__u32 pid = BPF_CORE_READ(task, tgid);

	if (!armed || exit_ns || pid != BPF_CORE_READ(task, pid) ||
	    !bpf_map_lookup_elem(&watched, &pid))
		return 0;
	exit_ns = bpf_ktime_get_ns();
	exit_pid = pid;
	return 0;
}
