// SPDX-License-Identifier: GPL-2.0
/*
 * oomd: choose the victim the way systemd-oomd does, but at OOM time and
 * inside the kernel.
 *
 * Candidates are units: leaf memory cgroups (no online child: removed
 * cgroups that linger count for nothing), and cgroups with
 * memory.oom.group set, which are killed whole (their descendants are not
 * candidates of their own); a unit with no task is skipped. Among the OOM
 * scope's units, prefer the one with the most reclaim activity (pgscan)
 * over the last one to two seconds: the one thrashing now, not the one
 * with the longest history. Break ties by memory usage. A unit whose
 * cgroup carries the xattr user.oomd_omit is never chosen, one with
 * user.oomd_avoid only when nothing else is left (systemd's
 * ManagedOOMPreference=; the values and whose cgroups may carry them as
 * systemd-oomd reads them). Units holding a task with oom_score_adj -1000
 * are skipped. In a leaf unit the process with the most resident memory is
 * killed (the kernel allows one kill per OOM), or with kill_unit (oomctl's
 * "kill-unit") the whole unit, as systemd-oomd kills; for an oom.group
 * unit the kernel kills the group with its first task.
 *
 * It is a struct bpf_oom_ops: oomctl attaches it to its scope's cgroup (the
 * root without one), and the kernel asks the deepest attached policy first.
 *
 * The window: a BPF timer samples every unit's pgscan once a second, from
 * attach to detach (oomctl runs policy_start once and pins policy_timers,
 * whose timer lives as long as a user reference to that map), keeping the
 * last two samples; the OOM counts pgscan since the older one. A unit the
 * sampler has not seen yet (younger than a tick, or with no sampler
 * running) counts its whole pgscan. The hook and `oomctl policy explain`
 * (oom_explain.bpf.h, the same choice) only read the samples. The kernel
 * folds memcg counters every two seconds, or sooner under reclaim, so a
 * window is one to a few seconds.
 */
#include "oom.bpf.h"
#include "oom_events.bpf.h"
#include "oom_explain.bpf.h"

char LICENSE[] SEC("license") = "GPL";

const volatile __u64 scope_cgroup_id;
const volatile bool dry_run;
const volatile bool kill_unit;	/* kill the whole unit, as systemd-oomd does */

__u64 nr_runs;
__u64 nr_kills;
/* The unit the hook chose; OOMs are serialized by oom_lock */
__u64 chosen_unit_id;

/* Units whose samples are kept; beyond it the LRU forgets the least
 * recently sampled, which then count their whole pgscan */
#define OOMD_UNITS_MAX		16384
#define OOMD_TICK_NS		(1000ULL * 1000 * 1000)
#ifndef CLOCK_BOOTTIME
#define CLOCK_BOOTTIME		7
#endif

/* A unit's pgscan and when it was read (boot-time ns) */
struct pgscan_sample {
	u64 pgscan;
	u64 time_ns;
};

/* The last two ticks' samples: the window starts at the older, one to two
 * ticks back, never at a tick that happened a moment ago */
struct unit_samples {
	struct pgscan_sample older;
	struct pgscan_sample newer;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, OOMD_UNITS_MAX);
	__type(key, u64);
	__type(value, struct unit_samples);
} pgscan_samples SEC(".maps");

struct sampler {
	struct bpf_timer timer;
};

/* Pinned by oomctl with the policy: the timer dies with the last user
 * reference to this map, at detach */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, struct sampler);
} policy_timers SEC(".maps");

struct rank {
	u64 pgscan_delta;
	u64 usage;
	bool avoid;
	bool group;	/* a memory.oom.group unit, not a leaf */
};

/* A dynptr must point to map memory; OOMs are serialized by oom_lock */
char xattr_value[8];

/* Up to 8 bytes of a string, lower-cased, in one word, for comparing */
#define WORD2(a, b)		((u64)(a) | (u64)(b) << 8)
#define WORD4(a, b, c, d)	(WORD2(a, b) | (u64)(c) << 16 | (u64)(d) << 24)

/*
 * systemd's parse_boolean() of the value: true for 1, y, yes, t, true and
 * on in any case; anything else (0, no, false, garbage) is not set.
 */
static bool xattr_value_true(int len)
{
	u64 word = 0;
	u8 c;

	if (len <= 0 || len > sizeof(xattr_value))
		return false;
	for (int i = 0; i < sizeof(xattr_value) && i < len; i++) {
		c = xattr_value[i];
		if (!c)
			break;
		if (c >= 'A' && c <= 'Z')
			c += 'a' - 'A';
		word |= (u64)c << (8 * i);
	}
	return word == '1' || word == 'y' || word == 't' ||
	       word == WORD2('o', 'n') || word == WORD4('y', 'e', 's', 0) ||
	       word == WORD4('t', 'r', 'u', 'e');
}

/* The owner of the cgroup's directory: root's unless someone chowned it
 * (delegation); kernfs allocates iattr only then */
static u32 cgroup_owner(struct cgroup *cg)
{
	struct kernfs_iattrs *attrs = cg->kn->iattr;

	return attrs ? attrs->ia_uid.val : 0;
}

/*
 * Whether the cgroup carries user.oomd_avoid (@avoid) or user.oomd_omit,
 * under systemd-oomd's rule: its owner may set them on a cgroup it does
 * not own only when it owns the whole scope. So they count if the cgroup
 * is owned by root or by the owner of @scope_owner, the OOM's scope: a
 * delegated cgroup (a user's session, a rootless container) cannot make
 * itself unkillable in an OOM outside its own subtree.
 *
 * By id: a css's cgroup pointer is not one the kfunc trusts in 6.12. A
 * global function, so the verifier checks it once rather than on every path
 * through the walk that calls it.
 */
__noinline int cgroup_marked(u64 cgid, int avoid, u32 scope_owner)
{
	const char *name = avoid ? "user.oomd_avoid" : "user.oomd_omit";
	struct bpf_dynptr value;
	struct cgroup *cg;
	u32 owner;
	bool set;

	cg = bpf_cgroup_from_id(cgid);
	if (!cg)
		return false;
	owner = cgroup_owner(cg);
	if (owner && owner != scope_owner) {
		bpf_cgroup_release(cg);
		return false;
	}
	__builtin_memset(xattr_value, 0, sizeof(xattr_value));
	bpf_dynptr_from_mem(xattr_value, sizeof(xattr_value), 0, &value);
	set = xattr_value_true(bpf_cgroup_read_xattr(cg, name, &value));
	bpf_cgroup_release(cg);
	return set;
}

static u64 memcg_pgscan(struct mem_cgroup *memcg)
{
	int items[] = { PGSCAN_KSWAPD, PGSCAN_DIRECT, PGSCAN_KHUGEPAGED };
	u64 sum = 0, v;

	for (int i = 0; i < 3; i++) {
		v = bpf_mem_cgroup_events(memcg, items[i]);
		if (v != (u64)-1)
			sum += v;
	}
	return sum;
}

static bool better(const struct rank *a, const struct rank *b)
{
	if (a->avoid != b->avoid)
		return !a->avoid;
	if (a->pgscan_delta != b->pgscan_delta)
		return a->pgscan_delta > b->pgscan_delta;
	return a->usage > b->usage;
}

/* A task of @memcg or of a descendant, referenced, or NULL if none */
static __always_inline struct task_struct *
subtree_first_task(struct mem_cgroup *memcg)
{
	struct task_struct *task, *first = NULL;
	struct cgroup_subsys_state *pos;
	struct mem_cgroup *pos_memcg;

	bpf_rcu_read_lock();
	bpf_for_each(css, pos, &memcg->css, BPF_CGROUP_ITER_DESCENDANTS_PRE) {
		pos_memcg = bpf_get_mem_cgroup(pos);
		if (!pos_memcg)
			continue;
		bpf_for_each(css_task, task, &pos_memcg->css, CSS_TASK_ITER_PROCS) {
			first = bpf_task_acquire(task);
			break;
		}
		bpf_put_mem_cgroup(pos_memcg);
		if (first)
			break;
	}
	bpf_rcu_read_unlock();
	return first;
}

/*
 * The unit at @pos of a pre-order walk below @root, referenced, or NULL:
 * an online leaf, or a cgroup with memory.oom.group set (not @root), whose
 * subtree the walk then skips (*@skip_below, -1 to start). A removed
 * cgroup that lingers is no unit, nor is anything below it.
 */
static __always_inline struct mem_cgroup *
unit_at(struct cgroup_subsys_state *pos, struct mem_cgroup *root,
	int *skip_below)
{
	struct cgroup *cg = pos->cgroup;
	struct mem_cgroup *memcg;
	int level = cg->level;

	/* Pre-order: a unit's subtree ends at the next shallower node */
	if (*skip_below >= 0 && level > *skip_below)
		return NULL;
	*skip_below = -1;
	if (!css_unit_online(pos))
		return NULL;
	memcg = bpf_get_mem_cgroup(pos);
	if (!memcg)
		return NULL;
	if (memcg->oom_group && memcg != root) {
		*skip_below = level;
	} else if (cg->nr_descendants) {
		bpf_put_mem_cgroup(memcg);
		return NULL;
	}
	return memcg;
}

/*
 * The choice, shared by the OOM hook (@ex NULL) and policy explain: the
 * process to kill below @root, referenced, or NULL. Both read the samples
 * only; explain also measures the units it skips, to show them.
 */
static __always_inline struct task_struct *
oomd_choose(struct mem_cgroup *root, struct oom_explain_args *ex)
{
	struct oom_explain_record rec;
	struct mem_cgroup *memcg, *victim;
	struct rank best = {}, cur;
	struct cgroup_subsys_state *pos;
	int skip_below = -1;
	struct unit_samples *samples;
	u64 pgscan;
	u64 id, victim_id = 0;
	struct cgroup *victim_cg;
	struct task_struct *task;
	u32 skip, scope_owner;

	scope_owner = cgroup_owner(root->css.cgroup);
	bpf_rcu_read_lock();
	bpf_for_each(css, pos, &root->css, BPF_CGROUP_ITER_DESCENDANTS_PRE) {
		struct cgroup *cg = pos->cgroup;
		bool leaf = !cg->nr_descendants;

		memcg = unit_at(pos, root, &skip_below);
		if (!memcg)
			continue;
		id = cg->kn->id;
		if (!ex) {
			if (!cgroup_populated(cg) ||
			    cgroup_marked(id, false, scope_owner) ||
			    !memcg_killable(memcg))
				goto next;
			skip = 0;
		} else {
			/* explain measures the skipped units too, to show them */
			/* arithmetic, not branches: fewer states to verify */
			skip = (u32)!cgroup_populated(cg) * OOM_EXPLAIN_EMPTY |
			       (u32)cgroup_marked(id, false, scope_owner) * OOM_EXPLAIN_OMIT |
			       (u32)!memcg_killable(memcg) * OOM_EXPLAIN_PROTECTED;
		}

		pgscan = memcg_pgscan(memcg);
		samples = bpf_map_lookup_elem(&pgscan_samples, &id);
		cur.pgscan_delta = samples && samples->older.pgscan <= pgscan ?
				   pgscan - samples->older.pgscan : pgscan;
		if (ex) {
			rec = (struct oom_explain_record){
				.cgroup_id = id,
				.pgscan = pgscan,
				.pgscan_delta = cur.pgscan_delta,
				.last_ns = samples ? samples->older.time_ns : 0,
			};
		}
		cur.usage = bpf_mem_cgroup_usage(memcg, false);
		cur.avoid = cgroup_marked(id, true, scope_owner);
		cur.group = !leaf;
		if (ex) {
			rec.usage = cur.usage * kernel_page_size();
			rec.flags = skip | OOM_EXPLAIN_PGSCAN |
				    (u32)cur.avoid * OOM_EXPLAIN_AVOID |
				    (u32)cur.group * OOM_EXPLAIN_GROUP;
			oom_explain_emit(ex, &rec);
			if (skip)
				goto next;
		}

		/*
		 * The best unit so far by id, not by reference: a reference
		 * that may or may not be held multiplies the states the
		 * verifier walks, and an attach took seconds.
		 */
		if (!victim_id || better(&cur, &best)) {
			best = cur;
			victim_id = id;
		}
next:
		bpf_put_mem_cgroup(memcg);
	}
	bpf_rcu_read_unlock();

	/* The unit may be removed meanwhile: then there is nothing to kill */
	victim_cg = victim_id ? bpf_cgroup_from_id(victim_id) : NULL;
	if (!victim_cg)
		return NULL;
	victim = bpf_get_mem_cgroup(&victim_cg->self);
	bpf_cgroup_release(victim_cg);
	if (!victim)
		return NULL;
	if (ex)
		ex->victim_cgroup_id = victim_id;
	else
		chosen_unit_id = victim_id;

	/* A leaf loses its biggest process; killing any task of an
	 * oom.group unit kills the whole unit */
	task = best.group ? subtree_first_task(victim) : memcg_largest_task(victim);
	bpf_put_mem_cgroup(victim);
	return task;
}

/* Where the sampler looks: the policy's scope, or the whole machine */
static __always_inline struct mem_cgroup *scope_root(void)
{
	struct mem_cgroup *memcg;
	struct cgroup *cg;

	if (scope_cgroup_id <= 1)
		return bpf_get_root_mem_cgroup();
	cg = bpf_cgroup_from_id(scope_cgroup_id);
	if (!cg)
		return NULL;
	memcg = bpf_get_mem_cgroup(&cg->self);
	bpf_cgroup_release(cg);
	return memcg;
}

/* One tick: the units below @root, as oomd_choose() finds them, sampled */
static __always_inline void sample_units(struct mem_cgroup *root)
{
	struct unit_samples *samples, fresh;
	struct cgroup_subsys_state *pos;
	struct mem_cgroup *memcg;
	int skip_below = -1;
	u64 id, now = bpf_ktime_get_boot_ns();

	bpf_rcu_read_lock();
	bpf_for_each(css, pos, &root->css, BPF_CGROUP_ITER_DESCENDANTS_PRE) {
		memcg = unit_at(pos, root, &skip_below);
		if (!memcg)
			continue;
		id = pos->cgroup->kn->id;
		fresh.newer.pgscan = memcg_pgscan(memcg);
		fresh.newer.time_ns = now;
		samples = bpf_map_lookup_elem(&pgscan_samples, &id);
		if (samples) {
			samples->older = samples->newer;
			samples->newer = fresh.newer;
		} else {
			fresh.older = fresh.newer;
			bpf_map_update_elem(&pgscan_samples, &id, &fresh, BPF_NOEXIST);
		}
		bpf_put_mem_cgroup(memcg);
	}
	bpf_rcu_read_unlock();
}

/* The timer's callback, in softirq context: nothing here may sleep */
static int sample_tick(void *map, int *key, struct sampler *sampler)
{
	struct mem_cgroup *root = scope_root();

	if (root) {
		sample_units(root);
		bpf_put_mem_cgroup(root);
	}
	bpf_timer_start(&sampler->timer, OOMD_TICK_NS, 0);
	return 0;
}

/* Run once by oomctl when it attaches the policy: the first tick now */
SEC("syscall")
int policy_start(void *ctx)
{
	struct sampler *sampler;
	u32 key = 0;
	int err;

	sampler = bpf_map_lookup_elem(&policy_timers, &key);
	if (!sampler)
		return -ENOENT;
	err = bpf_timer_init(&sampler->timer, &policy_timers, CLOCK_BOOTTIME);
	if (err)
		return err;
	err = bpf_timer_set_callback(&sampler->timer, sample_tick);
	if (err)
		return err;
	return bpf_timer_start(&sampler->timer, 0, 0);
}

/* The OOM hook oomd and its explain program */
OOM_POLICY(oomd, "oomd", oomd_choose)
