// SPDX-License-Identifier: GPL-2.0
/*
 * Watches the PSI hook's work item (issue 9 h): how often it ran, and the
 * name of the workqueue whose worker ran it and that worker's nice level.
 * The hook must run on its own WQ_MEM_RECLAIM workqueue, psi_bpf, in a
 * high-priority worker (nice -20, WQ_HIGHPRI) that the tasks causing the
 * pressure cannot delay, and not at all while no handler is attached.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

char LICENSE[] SEC("license") = "GPL";

__u64 nr_works;
char wq_name[32];	/* WQ_NAME_LEN */
int worker_nice = 1;	/* no nice level is positive in a WQ_HIGHPRI worker */

SEC("fentry/psi_bpf_event_workfn")
int BPF_PROG(psi_work_ran, struct work_struct *work)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct kthread *kthread;
	struct worker *worker;
	struct workqueue_struct *wq;

	__sync_fetch_and_add(&nr_works, 1);
	/* a workqueue worker's kthread data is its struct worker */
	kthread = (struct kthread *)BPF_CORE_READ(task, worker_private);
	worker = (struct worker *)BPF_CORE_READ(kthread, data);
	wq = BPF_CORE_READ(worker, current_pwq, wq);
	bpf_probe_read_kernel_str(wq_name, sizeof(wq_name), &wq->name);
	/* static_prio is 120 + nice (MAX_RT_PRIO + NICE_WIDTH / 2) */
	worker_nice = task->static_prio - 120;
	return 0;
}
