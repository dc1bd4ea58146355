// SPDX-License-Identifier: GPL-2.0
/*
 * psi-declare: a PSI handler (struct bpf_psi_ops) that owns one memory
 * pressure trigger on the cgroup it is attached to, and declares an OOM in
 * that cgroup (system-wide on the root cgroup) when the trigger fires: the
 * cgroup's policy or the kernel's killer frees memory now, instead of the
 * workload thrashing until an allocation finally fails.
 *
 * `oomctl psi add` attaches one per trigger. The kernel sends the trigger's
 * events to this handler alone and destroys the trigger when it detaches.
 * -EBUSY from bpf_out_of_memory() means an OOM is being handled already:
 * nothing to do.
 *
 * A kill answers pressure: for pause_ns after any kill in the cgroup's
 * subtree (by this handler's OOM, a policy, the kernel's killer, a memcg's
 * own OOM), events declare nothing. The stall of a window that began before
 * the kill is no reason to kill again, and one event queued while a policy
 * killed in a child cgroup would otherwise declare a system-wide OOM on
 * the root. The recorder notes each kill's time on the victim's cgroup and
 * its ancestors (oom_kill_times.bpf.h): one lookup of the trigger's cgroup.
 * A kill is an OOM kill, one that reaches mark_victim; a signal a user
 * space killer sends is not.
 */
#include "oom.bpf.h"
#include "oom_kill_times.bpf.h"
#include "declare_oom.bpf.h"

char LICENSE[] SEC("license") = "GPL";

/* The trigger, set by oomctl before load: enum psi_states, microseconds */
const volatile int trigger_state = PSI_MEM_SOME;
const volatile __u32 trigger_stall_us;
const volatile __u32 trigger_window_us;
/* No OOM is declared this long after a kill in the cgroup's subtree */
const volatile __u64 pause_ns;

/* Read by oomctl after the attach: the kernel's id of the trigger */
int trigger_id;

__u64 nr_runs;
__u64 nr_declared;
__u64 nr_paused;

SEC("struct_ops.s/init")
int BPF_PROG(psi_declare_init, struct bpf_psi *psi)
{
	/* Cgroup 0: the one this handler is attached to */
	int id = bpf_psi_ops_create_trigger(psi, 0, trigger_state,
					    trigger_stall_us,
					    trigger_window_us);

	if (id < 0)
		return id;
	trigger_id = id;
	return 0;
}

SEC("struct_ops.s/handle_psi_event")
void BPF_PROG(psi_declare_event, struct bpf_psi *psi, struct psi_trigger *t)
{
	struct cgroup *cg;

	__sync_fetch_and_add(&nr_runs, 1);
	if (pause_ns) {
		u64 cgid = t->cgroup_id;
		u64 *killed = bpf_map_lookup_elem(&oom_kill_times, &cgid);

		/* Not now - *killed: the kill may be a moment newer than now */
		if (killed && *killed + pause_ns > bpf_ktime_get_boot_ns()) {
			__sync_fetch_and_add(&nr_paused, 1);
			return;
		}
	}
	/* An id that does not resolve is a cgroup being removed: no OOM */
	cg = bpf_cgroup_from_id(t->cgroup_id);
	if (!cg)
		return;
	if (declare_oom_in(cg) > 0)
		__sync_fetch_and_add(&nr_declared, 1);
}

SEC(".struct_ops.link")
struct bpf_psi_ops psi_declare = {
	.init = (void *)psi_declare_init,
	.handle_psi_event = (void *)psi_declare_event,
	.name = "psi-declare",
};
