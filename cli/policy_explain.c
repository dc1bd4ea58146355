/*
 * policy explain [NAME] [CGROUP]: what a policy would choose for an OOM now,
 * killing nothing. The policy's object carries a SEC("syscall") program
 * "explain" (bpf/oom_explain.bpf.h) that calls the very selection function
 * of its OOM hook, reporting every unit it looked at into a ring buffer;
 * we run that program once with BPF_PROG_TEST_RUN and
 * rank the records for display. Rank 1 is always the kernel-side choice;
 * the order of the others follows the policy's documented key.
 *
 * State: an attached policy's explain program was loaded and pinned with it
 * (policy_backend.c), so it is the code that is attached and it reads the
 * policy's own maps (oomd's pgscan_samples): explain sees the window the
 * hook would use; the program only reads them. A policy that is not
 * attached is loaded here with fresh maps and no sampler: oomd's window is
 * then "since boot" for every unit. Nothing here counts as a run or a kill.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "backend.h"
#include "bpffs.h"
#include "kernel.h"
#include "oom_explain.h"
#include "largest_leaf.skel.h"
#include "oomd.skel.h"

/* Built-in policies that can be explained: their object files */
static const struct {
	const char *name;
	const void *(*elf)(size_t *size);
} explainable[] = {
	{ "largest-leaf", largest_leaf_bpf__elf_bytes },
	{ "oomd", oomd_bpf__elf_bytes },
};

/* Room for this many units in one run; more are counted as lost */
#define EXPLAIN_RING_SIZE	(4U << 20)

/* The event log's maps: explain writes none, so they are made small */
static const char *const log_maps[] = {
	"oom_events", "oom_events_head", "oom_path_scratch", NULL,
};

static bool name_in(const char *name, const char *const *names)
{
	for (; *names; names++)
		if (!strcmp(name, *names))
			return true;
	return false;
}


static int on_record(void *ctx, void *data, size_t size)
{
	struct policy_explained *e = ctx;
	void *p;

	if (size < sizeof(*e->recs))
		return 0;
	if (e->nr == e->cap) {
		e->cap = e->cap ? 2 * e->cap : 256;
		p = realloc(e->recs, e->cap * sizeof(*e->recs));
		if (!p) {
			e->oom = true;
			return -ENOMEM;
		}
		e->recs = p;
	}
	memcpy(&e->recs[e->nr], data, sizeof(*e->recs));
	e->recs[e->nr].__pad = e->nr;	/* the walk order, for ties */
	e->nr++;
	return 0;
}

/* Open @e's object: built-in by name, or the file it was attached from */
static int explain_open(struct policy_explained *e, struct bpf_object **objp)
{
	LIBBPF_OPTS(bpf_object_open_opts, opts, .object_name = e->name);
	const char *builtin = policy_source_builtin(e->source, e->name);
	struct bpf_object *obj = NULL;
	size_t size;
	int err;

	open_opts_debug(&opts);
	if (builtin) {
		bool found = false;

		for (size_t i = 0; i < sizeof(explainable) / sizeof(*explainable); i++)
			if (!strcmp(explainable[i].name, builtin)) {
				const void *elf = explainable[i].elf(&size);

				found = true;
				obj = bpf_object__open_mem(elf, size, &opts);
				break;
			}
		if (!found) {
			snprintf(e->why, sizeof(e->why),
				 "policy %s has no explain program", e->name);
			return -EINVAL;
		}
	} else {
		obj = bpf_object__open_file(e->source, &opts);
	}
	if (!obj) {
		err = -errno;
		snprintf(e->why, sizeof(e->why), "cannot open policy %s (%s): %s",
			 e->name, e->source, strerror(-err));
		return err;
	}
	*objp = obj;
	return 0;
}

/* Run the explain program @prog_fd once, its records from @ring_fd into @e:
 * 0, or -errno with e->why */
static int explain_collect(struct policy_explained *e, int prog_fd, int ring_fd)
{
	struct ring_buffer *rb;
	int err;

	rb = ring_buffer__new(ring_fd, on_record, e, NULL);
	if (!rb) {
		err = -errno;
		snprintf(e->why, sizeof(e->why),
			 "cannot map the explain ring buffer: %s", strerror(-err));
		return err;
	}
	err = syscall_prog_run(prog_fd, &e->args, sizeof(e->args));
	if (err) {
		snprintf(e->why, sizeof(e->why),
			 "cannot run the explain program of %s: %s", e->name,
			 strerror(-err));
		ring_buffer__free(rb);
		return err;
	}
	err = ring_buffer__consume(rb);
	ring_buffer__free(rb);
	err = e->oom ? -ENOMEM : err < 0 ? err : e->args.err;
	if (err == -ENODEV)
		snprintf(e->why, sizeof(e->why),
			 "the OOM's cgroup has no memory controller: memory is not in its parent's cgroup.subtree_control");
	else if (err)
		snprintf(e->why, sizeof(e->why), "explain of %s failed: %s",
			 e->name, strerror(-err));
	return err;
}

/*
 * An attached policy's explain program, pinned with its ring when it was
 * attached (policy_backend.c): the code that is attached, whatever has
 * become of its file since, with its maps.
 */
static int explain_run_pinned(struct policy_explained *e)
{
	char path[PATH_MAX];
	int prog_fd, ring_fd, err;

	state_path(path, sizeof(path), "policy/%s/explain", e->name);
	prog_fd = bpf_obj_get(path);
	state_path(path, sizeof(path), "policy/%s/explain_records", e->name);
	ring_fd = prog_fd < 0 ? -1 : bpf_obj_get(path);
	if (prog_fd < 0 || ring_fd < 0) {
		snprintf(e->why, sizeof(e->why),
			 "policy %s (%s) was attached without an explain program (its object lacks the SEC(\"syscall\") program %s of oom_explain.bpf.h, or an older oomctl attached it)",
			 e->name, e->source, OOM_EXPLAIN_PROG);
		err = -ENOENT;
	} else {
		e->state = true;
		err = explain_collect(e, prog_fd, ring_fd);
	}
	if (prog_fd >= 0)
		close(prog_fd);
	if (ring_fd >= 0)
		close(ring_fd);
	return err;
}

/* Load @e's explain program and run it once: 0, or -errno reported */
static int explain_run(struct policy_explained *e)
{
	struct bpf_program *prog, *explain = NULL;
	struct bpf_object *obj = NULL;
	struct bpf_map *map;
	int err;

	if (e->attached)
		return explain_run_pinned(e);
	err = explain_open(e, &obj);
	if (err)
		return err;
	bpf_object__for_each_program(prog, obj) {
		bool it = !strcmp(bpf_program__name(prog), OOM_EXPLAIN_PROG) &&
			  !strcmp(bpf_program__section_name(prog), "syscall");

		bpf_program__set_autoload(prog, it);
		if (it)
			explain = prog;
	}
	map = bpf_object__find_map_by_name(obj, "explain_records");
	if (!explain || !map || bpf_map__type(map) != BPF_MAP_TYPE_RINGBUF) {
		snprintf(e->why, sizeof(e->why),
			 "policy %s (%s) has no explain program: its object lacks the SEC(\"syscall\") program %s of oom_explain.bpf.h",
			 e->name, e->source, OOM_EXPLAIN_PROG);
		err = -EINVAL;
		goto out;
	}
	bpf_map__set_max_entries(map, EXPLAIN_RING_SIZE);
	bpf_object__for_each_map(map, obj)
		if (name_in(bpf_map__name(map), log_maps) &&
		    bpf_map__type(map) == BPF_MAP_TYPE_ARRAY)
			bpf_map__set_max_entries(map, 1);	/* unused: small */
	/* Explain runs alone: no struct_ops map is registered */
	bpf_object__for_each_map(map, obj)
		if (bpf_map__type(map) == BPF_MAP_TYPE_STRUCT_OPS)
			bpf_map__set_autocreate(map, false);

	err = bpf_object__load(obj);
	if (err) {
		snprintf(e->why, sizeof(e->why),
			 "the kernel refused the explain program of %s: %s%s",
			 e->name, strerror(-err),
			 debug ? "" : " (-d shows the verifier log)");
		goto out;
	}
	err = explain_collect(e, bpf_program__fd(explain),
			      bpf_map__fd(bpf_object__find_map_by_name(obj,
					"explain_records")));
out:
	bpf_object__close(obj);
	return err;
}

/* Display order: eligible units by the policy's key, then the skipped */
static uint64_t victim_unit;

static int rec_cmp(const void *a, const void *b)
{
	const struct oom_explain_record *x = a, *y = b;
	const uint32_t skip = OOM_EXPLAIN_PROTECTED | OOM_EXPLAIN_OMIT |
			      OOM_EXPLAIN_EMPTY;
	bool xs = x->flags & skip, ys = y->flags & skip;

	if (xs != ys)
		return xs ? 1 : -1;
	if ((x->cgroup_id == victim_unit) != (y->cgroup_id == victim_unit))
		return x->cgroup_id == victim_unit ? -1 : 1;
	if ((x->flags & OOM_EXPLAIN_AVOID) != (y->flags & OOM_EXPLAIN_AVOID))
		return x->flags & OOM_EXPLAIN_AVOID ? 1 : -1;
	if (x->pgscan_delta != y->pgscan_delta)
		return x->pgscan_delta > y->pgscan_delta ? -1 : 1;
	if (x->usage != y->usage)
		return x->usage > y->usage ? -1 : 1;
	/* walk order (kept in __pad): the earlier wins ties */
	return x->__pad < y->__pad ? -1 : x->__pad > y->__pad;
}

bool policy_explained_kills(const struct policy_explained *e)
{
	return e->args.verdict == OOM_EXPLAIN_KILL && !e->dry_run;
}

/* Run @e and rank its records for display: 0, or -errno with e->why */
static int explain_rank(struct policy_explained *e)
{
	const struct oom_explain_args *a = &e->args;
	int err = explain_run(e);

	if (err) {
		e->failed = true;
		return err;
	}
	victim_unit = a->verdict == OOM_EXPLAIN_KILL ||
		      a->verdict == OOM_EXPLAIN_DEFERS ? a->victim_cgroup_id : 0;
	qsort(e->recs, e->nr, sizeof(*e->recs), rec_cmp);
	return 0;
}

void policy_explanation_free(struct policy_explanation *x)
{
	for (int i = 0; i < x->n; i++)
		free(x->policies[i].recs);
	free(x->policies);
	memset(x, 0, sizeof(*x));
}

/* Whether the cgroup @inner is @outer or below it (0 and 1: the root) */
static bool cgroup_holds(uint64_t outer, uint64_t inner)
{
	char po[PATH_MAX], pi[PATH_MAX];
	size_t n;

	if (outer <= 1)
		return true;
	if (inner <= 1)
		return false;
	cgroup_path_of_id(outer, po, sizeof(po));
	cgroup_path_of_id(inner, pi, sizeof(pi));
	n = strlen(po);
	return !strncmp(po, pi, n) && (pi[n] == '\0' || pi[n] == '/');
}

/*
 * Whether the kernel asks another attached policy that kills before @p, for
 * an OOM in @oom_id: a cgroup policy on the OOM's path deeper than @p's (any
 * cgroup policy on it, if @p is on the OOM hook).
 */
static bool asked_before(const struct policy_meta *metas, int n,
			 const struct policy_meta *p, uint64_t oom_id)
{
	for (int i = 0; i < n; i++) {
		const struct policy_meta *q = &metas[i];

		if (!strcmp(q->name, p->name) || !(q->hooks & HOOK_OOM) ||
		    q->flags & POLICY_DRY_RUN || !(q->flags & POLICY_CGROUP_OPS) ||
		    !cgroup_holds(q->scope_id ?: 1, oom_id ?: 1))
			continue;
		if (!(p->flags & POLICY_CGROUP_OPS))
			return true;
		if ((q->scope_id ?: 1) != (p->scope_id ?: 1) &&
		    cgroup_holds(p->scope_id, q->scope_id ?: 1))
			return true;
	}
	return false;
}

static int cgroup_depth(uint64_t id)
{
	char path[PATH_MAX];
	int depth = 0;

	if (id <= 1)
		return 0;
	for (const char *c = cgroup_path_of_id(id, path, sizeof(path)); *c; c++)
		depth += *c == '/';
	return depth;
}

/* The kernel's order: cgroup policies deepest first, then the OOM hook's
 * programs, newest first */
static int kernel_order(const void *a, const void *b)
{
	const struct policy_meta *x = a, *y = b;
	int ox = !!(x->flags & POLICY_CGROUP_OPS), oy = !!(y->flags & POLICY_CGROUP_OPS);

	if (ox != oy)
		return oy - ox;
	if (ox && cgroup_depth(x->scope_id) != cgroup_depth(y->scope_id))
		return cgroup_depth(y->scope_id) - cgroup_depth(x->scope_id);
	return x->attach_time_ns < y->attach_time_ns ? 1 :
	       x->attach_time_ns > y->attach_time_ns ? -1 : 0;
}

static int explain_one(const struct policy_explain_opts *opts,
		       struct policy_explanation *x)
{
	struct policy_explained *e = x->policies;
	struct policy_meta *metas, meta;
	int n, err;

	snprintf(e->name, sizeof(e->name), "%s", opts->name);
	snprintf(e->source, sizeof(e->source), "built-in");
	if (!registry_get(opts->name, &meta)) {
		if (!(meta.hooks & HOOK_OOM)) {
			p_err("policy %s has no OOM hook: there is nothing to explain",
			      opts->name);
			return -EINVAL;
		}
		e->attached = true;
		e->dry_run = meta.flags & POLICY_DRY_RUN;
		e->kill_unit = meta.flags & POLICY_KILL_UNIT;
		e->scope_id = meta.scope_id;
		snprintf(e->source, sizeof(e->source), "%s", meta.source);
	} else {
		bool builtin = false;

		for (size_t i = 0; i < sizeof(explainable) / sizeof(*explainable); i++)
			builtin |= !strcmp(explainable[i].name, opts->name);
		if (!builtin) {
			char names[256];

			if (strstr(policy_builtin_names(",", names, sizeof(names)),
				   opts->name))
				p_err("policy %s chooses no OOM victim: there is nothing to explain",
				      opts->name);
			else
				p_err("no policy named '%s' is attached, and it is no built-in one (%s)",
				      opts->name,
				      policy_builtin_names(", ", names, sizeof(names)));
			return -ENOENT;
		}
	}
	e->args.oom_cgroup_id = x->oom_id;
	e->args.scope_id = e->scope_id;
	if (e->attached) {
		n = registry_list(&metas);
		e->args.deeper = n > 0 && asked_before(metas, n, &meta, x->oom_id);
		if (n >= 0)
			free(metas);
	}
	x->n = 1;
	err = explain_rank(e);
	if (err)
		p_err("%s", e->why);
	return err;
}

/* Every attached OOM policy, in the order the kernel would ask them */
static int explain_all(struct policy_explanation *x)
{
	struct policy_meta *metas;
	int n;

	n = registry_list(&metas);
	if (n < 0)
		return n;
	x->policies = calloc(n ?: 1, sizeof(*x->policies));
	if (!x->policies) {
		free(metas);
		p_err("out of memory");
		return -ENOMEM;
	}
	qsort(metas, n, sizeof(*metas), kernel_order);
	for (int i = 0; i < n; i++) {
		struct policy_explained *e = &x->policies[x->n];

		if (!(metas[i].hooks & HOOK_OOM))
			continue;
		x->n++;
		snprintf(e->name, sizeof(e->name), "%s", metas[i].name);
		snprintf(e->source, sizeof(e->source), "%s", metas[i].source);
		e->attached = true;
		e->dry_run = metas[i].flags & POLICY_DRY_RUN;
		e->kill_unit = metas[i].flags & POLICY_KILL_UNIT;
		e->scope_id = metas[i].scope_id;
		e->args.oom_cgroup_id = x->oom_id;
		e->args.scope_id = e->scope_id;
		e->args.deeper = asked_before(metas, n, &metas[i], x->oom_id);
		if (x->actor || x->unknown)
			e->status = "not reached";
		if (explain_rank(e)) {
			/* the others are still explained; what acts is unknown
			 * if the kernel would reach this one */
			if (!x->actor && !x->unknown)
				x->unknown = e->name;
			continue;
		}
		if (!x->actor && !x->unknown && policy_explained_kills(e)) {
			x->actor = e->name;
			e->status = "acts";
		}
	}
	free(metas);
	return 0;
}

int policy_explain(const struct policy_explain_opts *opts,
		   struct policy_explanation *x)
{
	int err;

	memset(x, 0, sizeof(*x));
	x->oom_id = opts->oom && opts->oom->id > 1 ? opts->oom->id : 0;
	if (!opts->name)
		return explain_all(x);
	x->single = true;
	x->policies = calloc(1, sizeof(*x->policies));
	if (!x->policies) {
		p_err("out of memory");
		return -ENOMEM;
	}
	err = explain_one(opts, x);
	if (err)
		policy_explanation_free(x);
	return err;
}
