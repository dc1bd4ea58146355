// SPDX-License-Identifier: GPL-2.0
/*
 * A test policy that kills whatever task user space names, so a scenario can
 * put bpf_oom_kill_process() before exactly the victim it wants to test: one
 * the OOM reaper already reaped, a vfork child, a second victim in the same
 * OOM. Each run is recorded with the kfunc's return code and what the named
 * task looked like at that moment, and a sequence number from a map that
 * several instances share, which shows the order the trampoline ran them in.
 *
 * A tracer in the same object records every OOM kill (the mark_victim
 * tracepoint) with the oc->bpf_policy_cookie of the OOM being handled, so a
 * scenario can see which policy the kernel credits with a kill.
 */
#include "oom.bpf.h"
#include "named_victim.h"

char LICENSE[] SEC("license") = "GPL";

#define MMF_OOM_SKIP	21	/* include/linux/sched/coredump.h */

struct task_struct *bpf_task_from_pid(s32 pid) __ksym;

/* Set by the scenario between OOMs */
s32 victim_pid;		/* 0: name nobody, just record the run */
s32 claim;		/* return 1 after a successful kill (else always 0) */
u64 unit_cgroup_id;	/* not 0: kill with this cgroup's memcg as the unit
			 * (bpf_oom_kill_memcg()) */

u32 nr_runs;
struct run_record runs[NAMED_MAX_RECORDS];
u32 nr_kills;
struct kill_record kills[NAMED_MAX_RECORDS];

/* The OOM being handled, for the tracer; OOMs are serialized by oom_lock */
u64 cur_oc;

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, u64);
} run_seq SEC(".maps");

static u32 named_flags(struct task_struct *task)
{
	struct mm_struct *mm = BPF_CORE_READ(task, mm);
	u32 flags = 0;

	if (BPF_CORE_READ(task, signal, oom_mm))
		flags |= NAMED_VICTIM;
	if (!mm)
		flags |= NAMED_NO_MM;
	else if (BPF_CORE_READ(mm, flags) & (1UL << MMF_OOM_SKIP))
		flags |= NAMED_OOM_SKIP;
	if (BPF_CORE_READ(task, vfork_done))
		flags |= NAMED_VFORK;
	return flags;
}

/* bpf_oom_kill_memcg() with cgroup @cgid's memcg, the root's too */
static int kill_with_unit(struct oom_control *oc, struct task_struct *task,
			  u64 cgid)
{
	struct mem_cgroup *unit;
	struct cgroup *cg;
	int ret;

	cg = bpf_cgroup_from_id(cgid);
	if (!cg)
		return -ENOENT;
	unit = bpf_get_mem_cgroup(&cg->self);
	bpf_cgroup_release(cg);
	if (!unit)
		return -ENOENT;
	ret = bpf_oom_kill_memcg(oc, task, unit, "named-unit");
	bpf_put_mem_cgroup(unit);
	return ret;
}

SEC("fmod_ret.s/bpf_handle_out_of_memory")
int BPF_PROG(named_victim, struct oom_control *oc)
{
	struct run_record rec = {};
	struct task_struct *task;
	u32 zero = 0, i;
	u64 *seq;

	seq = bpf_map_lookup_elem(&run_seq, &zero);
	if (seq)
		rec.seq = __sync_fetch_and_add(seq, 1) + 1;
	rec.pid = victim_pid;
	if (rec.pid) {
		task = bpf_task_from_pid(rec.pid);
		if (task) {
			rec.flags = named_flags(task);
			rec.ret = unit_cgroup_id ?
				  kill_with_unit(oc, task, unit_cgroup_id) :
				  bpf_oom_kill_process(oc, task, "named-victim");
			bpf_task_release(task);
		} else {
			rec.ret = -ESRCH;
		}
		rec.returned = claim && !rec.ret;
	}

	i = nr_runs++;
	if (i < NAMED_MAX_RECORDS)
		runs[i] = rec;
	return rec.returned;
}

SEC("fentry/out_of_memory")
int BPF_PROG(trace_oom_enter, struct oom_control *oc)
{
	cur_oc = (u64)oc;
	return 0;
}

SEC("fexit/out_of_memory")
int BPF_PROG(trace_oom_exit, struct oom_control *oc, bool ret)
{
	cur_oc = 0;
	return 0;
}

SEC("tp_btf/mark_victim")
int BPF_PROG(trace_kill, struct task_struct *task, uid_t uid)
{
	struct oom_control *oc = (struct oom_control *)cur_oc;
	struct kill_record rec = { .pid = task->tgid };
	u32 i;

	if (oc) {
		rec.in_oom = 1;
		rec.cookie = BPF_CORE_READ(oc, bpf_policy_cookie);
	}
	i = nr_kills++;
	if (i < NAMED_MAX_RECORDS)
		kills[i] = rec;
	return 0;
}
