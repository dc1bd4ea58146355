// SPDX-License-Identifier: GPL-2.0
/*
 * A policy that takes its time before it kills, on the RFC's OOM hook and
 * as a bpf_oom_ops, for test/vm/oom_detach_midway.c (issue 19 c): the
 * scenario detaches it, and drops its last reference, while it runs.
 *
 * It keeps nothing that holds its BTF (a .bss, say: a map of the object
 * references the object's BTF until the program is freed): its state is in
 * a map the scenario creates without BTF, so that dropping the program's
 * last reference drops the BTF's too.
 */
#include "greedy.bpf.h"
#include "slow_policy.h"

char LICENSE[] SEC("license") = "GPL";

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct slow_state);
} state SEC(".maps");

static long spin_until(__u64 i, void *deadline)
{
	return bpf_ktime_get_ns() >= *(__u64 *)deadline;
}

static __always_inline void slow_kill(struct oom_control *oc, const char *why)
{
	struct slow_state *st;
	__u32 zero = 0;
	__u64 deadline;

	st = bpf_map_lookup_elem(&state, &zero);
	if (!st)
		return;
	st->started = 1;
	deadline = bpf_ktime_get_ns() + st->spin_ns;
	bpf_loop(1 << 23, spin_until, &deadline, 0);
	st->detached_before_kill = st->detached;
	st->kill_ret = greedy_kill(oc, why);
}

SEC("fmod_ret.s/bpf_handle_out_of_memory")
int BPF_PROG(slow_hook, struct oom_control *oc)
{
	slow_kill(oc, "slow-hook");
	return 0;
}

SEC("struct_ops.s/handle_out_of_memory")
int BPF_PROG(slow_ops_handler, struct oom_control *oc)
{
	slow_kill(oc, "slow-ops");
	return 0;
}

SEC(".struct_ops.link")
struct bpf_oom_ops slow_ops = {
	.handle_out_of_memory = (void *)slow_ops_handler,
	.name = "slow-ops",
};
