// SPDX-License-Identifier: GPL-2.0
/*
 * memcg_walk: every memory cgroup of a subtree as the kernel sees it, for
 * `oomctl memcg list` and `oomctl memcg show`. A syscall program run with
 * BPF_PROG_TEST_RUN, its context a struct memcg_walk_args (oom_shared.h).
 *
 * It walks the memcgs below the root in pre-order with the open-coded css
 * iterator and writes one struct memcg_record per memcg into the ring buffer
 * `records`: usage and stats from the memcg kfuncs, limits from the page
 * counters, memory.events, PSI from the cgroup's psi_group (psi_system for
 * the root cgroup) and the number of processes from the css_task iterator.
 *
 * Why not iter/cgroup: a cgroup iterator cannot resume across read()
 * sessions, one walk gives at most one seq buffer (32 KiB) and then
 * EOPNOTSUPP. Here a full ring ends the run instead: the caller drains the
 * ring and runs the program again with skip = pos, and the walk skips that
 * many positions. Positions count every css the iterator visits, dying ones
 * included, so a resumed walk lines up with the previous one as long as the
 * hierarchy did not change in between. A cgroup created or removed between
 * two runs (before the resume point) shifts the positions: one memcg may be
 * missed or reported twice. The caller passes the id it saw at position
 * skip - 1 (skip_id); if another css is there now, the run fails with
 * -EAGAIN and the caller may restart from scratch. A shift that a creation
 * and a removal cancel out goes unnoticed.
 *
 * The walk iterates the memory controller's css tree (from the root's
 * memcg css), so cgroups without their own memcg (memory not in their
 * parent's cgroup.subtree_control) are not visited at all; their tasks are
 * charged to, and counted in, the nearest ancestor that has one.
 */
#include "oom.bpf.h"
#include "oom_shared.h"

char LICENSE[] SEC("license") = "GPL";

/* kernel/sched/psi.c: the system-wide psi_group, for the root cgroup. Not
 * in this kernel's BTF (pahole emits no global variables), so untyped: its
 * address from kallsyms, read with bpf_probe_read_kernel(). */
extern const void psi_system __ksym __weak;

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, MEMCG_WALK_RING_SIZE);	/* user space may resize */
} records SEC(".maps");

/* The walk's root, referenced; NULL with *err set if there is none. */
static struct mem_cgroup *walk_root(u64 root_id, int *err)
{
	struct mem_cgroup *memcg;
	struct cgroup *cg;

	if (!root_id) {
		memcg = bpf_get_root_mem_cgroup();
		if (!memcg)
			*err = -ENODEV;	/* the memory controller is disabled */
		return memcg;
	}
	cg = bpf_cgroup_from_id(root_id);
	if (!cg) {
		*err = -ENOENT;
		return NULL;
	}
	memcg = bpf_get_mem_cgroup(&cg->self);
	bpf_cgroup_release(cg);
	if (!memcg)
		*err = -ENODEV;
	return memcg;
}

static u64 clamp_stat(unsigned long val)
{
	/* (unsigned long)-1: an item this kernel's memcgs do not track */
	return val == (unsigned long)-1 ? 0 : val;
}

static void read_psi(struct memcg_record *rec, struct cgroup *cg, u32 level)
{
	unsigned long avg[2][3];
	u64 total[2];
	const void *psi;
	int i;

	psi = BPF_CORE_READ(cg, psi);
	if (!psi && !level)
		psi = &psi_system;	/* as cgroup_psi() does */
	if (!psi)
		return;		/* psi disabled for cgroups */
	/* psi_group.avg[NR_PSI_STATES - 1][3], .total[NR_PSI_AGGREGATORS]
	 * [NR_PSI_STATES - 1]; the memory rows are PSI_MEM_SOME, PSI_MEM_FULL */
	if (bpf_probe_read_kernel(avg, sizeof(avg), psi +
				  bpf_core_field_offset(struct psi_group, avg) +
				  PSI_MEM_SOME * 3 * sizeof(unsigned long)))
		return;
	if (bpf_probe_read_kernel(total, sizeof(total), psi +
				  bpf_core_field_offset(struct psi_group, total) +
				  (PSI_AVGS * (NR_PSI_STATES - 1) + PSI_MEM_SOME) *
				  sizeof(u64)))
		return;
	for (i = 0; i < 3; i++) {
		rec->psi_avg[0][i] = avg[0][i];
		rec->psi_avg[1][i] = avg[1][i];
	}
	rec->psi_total[0] = total[0];
	rec->psi_total[1] = total[1];
	rec->flags |= MEMCG_REC_PSI;
}

static void fill_record(struct memcg_record *rec, struct mem_cgroup *memcg)
{
	struct cgroup *cg = memcg->css.cgroup;
	struct task_struct *task;
	unsigned long all;
	u32 nr_procs = 0;
	int i;

	rec->id = cg->kn->id;
	rec->level = cg->level;
	rec->parent_id = rec->level ? cg->kn->parent->id : 0;
	rec->flags = 0;
	rec->__pad = 0;
	if (bpf_probe_read_kernel_str(rec->name, sizeof(rec->name),
				      cg->kn->name) < 0)
		rec->name[0] = '\0';

	rec->usage = bpf_mem_cgroup_usage(memcg, false);
	all = bpf_mem_cgroup_usage(memcg, true);	/* memory + swap on v2 */
	rec->swap = all > rec->usage ? all - rec->usage : 0;
	rec->anon = clamp_stat(bpf_mem_cgroup_page_state(memcg, NR_ANON_MAPPED));
	rec->file = clamp_stat(bpf_mem_cgroup_page_state(memcg, NR_FILE_PAGES));

	rec->min = memcg->memory.min;
	rec->low = memcg->memory.low;
	rec->high = memcg->memory.high;
	rec->max = memcg->memory.max;
	rec->swap_max = memcg->swap.max;

	for (i = 0; i < MEMCG_EV_NR; i++)
		rec->events[i] = clamp_stat(bpf_mem_cgroup_memory_events(memcg,
									 i));
	rec->pgscan = clamp_stat(bpf_mem_cgroup_events(memcg, PGSCAN_KSWAPD)) +
		      clamp_stat(bpf_mem_cgroup_events(memcg, PGSCAN_DIRECT)) +
		      clamp_stat(bpf_mem_cgroup_events(memcg, PGSCAN_KHUGEPAGED));
	rec->pgsteal = clamp_stat(bpf_mem_cgroup_events(memcg, PGSTEAL_KSWAPD)) +
		       clamp_stat(bpf_mem_cgroup_events(memcg, PGSTEAL_DIRECT)) +
		       clamp_stat(bpf_mem_cgroup_events(memcg, PGSTEAL_KHUGEPAGED));

	for (i = 0; i < 2; i++) {
		rec->psi_avg[i][0] = rec->psi_avg[i][1] = rec->psi_avg[i][2] = 0;
		rec->psi_total[i] = 0;
	}
	read_psi(rec, cg, rec->level);

	/* Tasks of the memcg's css: of this cgroup and of any descendant
	 * without a memcg of its own, i.e. every process charged here. */
	bpf_for_each(css_task, task, &memcg->css, CSS_TASK_ITER_PROCS)
		nr_procs++;
	rec->nr_procs = nr_procs;
}

SEC("syscall")
int memcg_walk(struct memcg_walk_args *args)
{
	bool root_only = args->flags & MEMCG_WALK_ROOT_ONLY;
	struct cgroup_subsys_state *pos;
	struct mem_cgroup *root, *memcg;
	struct memcg_record *rec;
	u64 idx = 0, last_id = 0, id;
	u32 nr = 0;
	int err = 0;
	bool done = true;

	root = walk_root(args->root_id, &err);
	if (!root)
		goto out;

	/* sleepable: before the RCU section; flushes the whole subtree */
	bpf_mem_cgroup_flush_stats(root);

	bpf_rcu_read_lock();
	bpf_for_each(css, pos, &root->css, BPF_CGROUP_ITER_DESCENDANTS_PRE) {
		id = pos->cgroup->kn->id;
		/*
		 * skip is read afresh each time: a copy in a register would
		 * become a known constant on the path where idx + 1 == skip,
		 * and comparing idx with a constant makes idx precise, so the
		 * verifier would walk the loop one idx value at a time
		 * ("The sequence of 8193 jumps is too complex").
		 */
		if (idx < READ_ONCE(args->skip)) {
			if (idx + 1 == READ_ONCE(args->skip) &&
			    args->skip_id && id != args->skip_id) {
				err = -EAGAIN;
				done = false;
				break;
			}
			idx++;
			last_id = id;
			continue;
		}
		/* removed (rmdir'd) but still pinned, e.g. by page cache: it
		 * has no directory any more, so no path to show */
		if (!(pos->flags & CSS_ONLINE)) {
			idx++;
			last_id = id;
			if (root_only)
				break;
			continue;
		}
		memcg = bpf_get_mem_cgroup(pos);
		if (!memcg) {
			/* being released: nothing to report */
			idx++;
			last_id = id;
			if (root_only)
				break;
			continue;
		}
		rec = bpf_ringbuf_reserve(&records, sizeof(*rec), 0);
		if (!rec) {
			/* full: the caller drains it and resumes here */
			bpf_put_mem_cgroup(memcg);
			done = false;
			break;
		}
		fill_record(rec, memcg);
		bpf_put_mem_cgroup(memcg);
		bpf_ringbuf_submit(rec, BPF_RB_NO_WAKEUP);
		nr++;
		idx++;
		last_id = id;
		if (root_only)
			break;
	}
	bpf_rcu_read_unlock();
	bpf_put_mem_cgroup(root);

	args->pos = idx;
	args->last_id = last_id;
out:
	args->nr_records = nr;
	args->done = done && !err;
	args->err = err;
	return 0;
}
