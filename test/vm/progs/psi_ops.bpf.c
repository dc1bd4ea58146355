// SPDX-License-Identifier: GPL-2.0
/*
 * bpf_psi_ops handlers for test/vm/psi_ops.c (issue 19 f): which handler
 * gets which trigger's events, the cgroups each is told about, and what
 * their triggers may watch. Every count is in .bss, read by the scenario.
 */
#include "oom.bpf.h"

char LICENSE[] SEC("license") = "GPL";

#define THRESHOLD_US	100000
#define WINDOW_US	1000000

#include "psi_ops.h"

/* Read and set by the scenario through the mmap of .bss */
struct psi_ops_state st = { .declare_ret = 1, .online_trigger_ret = 1 };

SEC("struct_ops.s/init")
int BPF_PROG(owner_init, struct bpf_psi *psi)
{
	st.init_ret[0] = bpf_psi_ops_create_trigger(psi, st.owner_cgid, PSI_MEM_SOME,
						 THRESHOLD_US, WINDOW_US);
	return st.init_ret[0] > 0 ? 0 : st.init_ret[0];
}

SEC("struct_ops.s/handle_psi_event")
void BPF_PROG(owner_event, struct bpf_psi *psi, struct psi_trigger *t)
{
	struct cgroup *cgrp;
	struct mem_cgroup *memcg;

	st.events[0]++;
	st.last_event_cgid[0] = t->cgroup_id;
	if (!st.declare)
		return;
	cgrp = bpf_cgroup_from_id(t->cgroup_id);
	if (!cgrp)
		return;
	memcg = bpf_get_mem_cgroup(&cgrp->self);
	bpf_cgroup_release(cgrp);
	if (!memcg)
		return;
	st.declare_ret = bpf_out_of_memory(memcg, 0);
	bpf_put_mem_cgroup(memcg);
	if (!st.declare_ret)
		st.declare = 0;
}

/* Asks for a trigger outside its cgroup: the kernel says -EPERM */
SEC("struct_ops.s/init")
int BPF_PROG(other_init, struct bpf_psi *psi)
{
	st.init_ret[1] = bpf_psi_ops_create_trigger(psi, st.stranger_cgid,
						 PSI_MEM_SOME, THRESHOLD_US,
						 WINDOW_US);
	return 0;
}

SEC("struct_ops.s/handle_psi_event")
void BPF_PROG(other_event, struct bpf_psi *psi, struct psi_trigger *t)
{
	st.events[1]++;
	st.last_event_cgid[1] = t->cgroup_id;
}

/* Arms a trigger for each cgroup created below its own */
SEC("struct_ops.s/handle_cgroup_online")
void BPF_PROG(other_online, struct bpf_psi *psi, u64 cgroup_id)
{
	st.online++;
	st.last_online = cgroup_id;
	st.online_trigger_ret = bpf_psi_ops_create_trigger(psi, cgroup_id,
							PSI_MEM_SOME,
							THRESHOLD_US,
							WINDOW_US);
}

SEC("struct_ops.s/handle_cgroup_offline")
void BPF_PROG(other_offline, struct bpf_psi *psi, u64 cgroup_id)
{
	st.offline++;
	st.last_offline = cgroup_id;
}

/* Arms a trigger, then fails: the attach fails, and the trigger goes */
SEC("struct_ops.s/init")
int BPF_PROG(failing_init, struct bpf_psi *psi)
{
	st.init_ret[2] = bpf_psi_ops_create_trigger(psi, 0, PSI_MEM_SOME,
						 THRESHOLD_US, WINDOW_US);
	return -EINVAL;
}

SEC("struct_ops.s/handle_psi_event")
void BPF_PROG(failing_event, struct bpf_psi *psi, struct psi_trigger *t)
{
	st.events[2]++;
}

/* The PSI hook: the tools' triggers only, never a handler's */
SEC("fmod_ret.s/bpf_handle_psi_event")
int BPF_PROG(hook_event, struct psi_trigger *t)
{
	st.hook_events++;
	return 0;
}

SEC(".struct_ops.link")
struct bpf_psi_ops owner = {
	.init = (void *)owner_init,
	.handle_psi_event = (void *)owner_event,
	.name = "test-owner",
};

SEC(".struct_ops.link")
struct bpf_psi_ops other = {
	.init = (void *)other_init,
	.handle_psi_event = (void *)other_event,
	.handle_cgroup_online = (void *)other_online,
	.handle_cgroup_offline = (void *)other_offline,
	.name = "test-other",
};

SEC(".struct_ops.link")
struct bpf_psi_ops failing = {
	.init = (void *)failing_init,
	.handle_psi_event = (void *)failing_event,
	.name = "test-failing",
};
