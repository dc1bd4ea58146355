/*
 * psi add/list/del: kernel-owned memory pressure triggers, made and removed
 * by syscall programs (bpf_psi_create_trigger()), listed by the kernel in
 * /proc/pressure/bpf_triggers. They need no process to stay armed.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "backend.h"
#include "bpffs.h"
#include "kernel.h"
#include "psi_trigger.skel.h"

#define BPF_TRIGGERS	"/proc/pressure/bpf_triggers"

/*
 * A value of the kernel's enum psi_states (PSI_MEM_SOME, ...), read from
 * the running kernel's BTF: the BPF side takes the same names from
 * vmlinux.h, and user space keeps no copy of the numbers to drift.
 */
static int psi_state(const char *name, int *val)
{
	struct btf *btf = btf__load_vmlinux_btf();
	const struct btf_type *t;
	const struct btf_enum *e;
	int id, i, err = -ENOENT;

	if (!btf) {
		err = errno ? -errno : -ENOENT;
		p_err("cannot read the kernel's BTF: %s", strerror(-err));
		return err;
	}
	id = btf__find_by_name_kind(btf, "psi_states", BTF_KIND_ENUM);
	t = id > 0 ? btf__type_by_id(btf, id) : NULL;
	for (i = 0, e = t ? btf_enum(t) : NULL; t && i < btf_vlen(t); i++, e++)
		if (!strcmp(btf__name_by_offset(btf, e->name_off), name)) {
			*val = e->val;
			err = 0;
			break;
		}
	btf__free(btf);
	if (err)
		p_err("the kernel's BTF has no %s in enum psi_states", name);
	return err;
}

/*
 * The kernel's list, in *@trsp (free() it; on the heap, as it has no
 * bound); returns the count, or -errno (reported).
 */
int kernel_triggers_read(struct kernel_trigger **trsp)
{
	FILE *f = fopen(BPF_TRIGGERS, "r");
	struct kernel_trigger *trs = NULL, *p;
	char line[256];
	int n = 0, cap = 0;

	if (!f) {
		int err = -errno;	/* p_err() may change errno */

		p_err("cannot read %s: %s", BPF_TRIGGERS, strerror(-err));
		return err;
	}
	while (fgets(line, sizeof(line), f)) {
		struct kernel_trigger *t;

		if (n == cap) {
			cap = cap ? 2 * cap : 64;
			p = realloc(trs, cap * sizeof(*trs));
			if (!p) {
				fclose(f);
				free(trs);
				p_err("out of memory");
				return -ENOMEM;
			}
			trs = p;
		}
		t = &trs[n];

		/* The owner column is absent before bpf_psi_ops, "-" for none */
		strcpy(t->owner, "-");
		if (sscanf(line, "%d %lu %15s %7s %lu %lu %lu %31s", &t->id,
			   &t->cgroup_id, t->resource, t->kind,
			   &t->threshold_us, &t->window_us, &t->events,
			   t->owner) >= 7) {
			if (!strcmp(t->owner, "-"))
				t->owner[0] = '\0';
			n++;
		}
	}
	fclose(f);
	*trsp = trs;
	return n;
}

static int trigger_progs_load(struct psi_trigger_bpf **skelp)
{
	LIBBPF_OPTS(bpf_object_open_opts, opts);
	struct psi_trigger_bpf *skel;
	int err;

	open_opts_debug(&opts);
	skel = psi_trigger_bpf__open_opts(&opts);
	if (skel && !psi_trigger_bpf__load(skel)) {
		*skelp = skel;
		return 0;
	}
	err = -errno;
	psi_trigger_bpf__destroy(skel);
	return load_failed("the trigger program", err);
}

static int run_trigger_prog(struct bpf_program *prog, struct psi_trigger_args *args)
{
	int err = syscall_prog_run(bpf_program__fd(prog), args, sizeof(*args));

	if (err)
		p_err("cannot run the trigger program: %s", strerror(-err));
	return err;
}

int psi_add(const struct psi_add_opts *opts)
{
	struct psi_trigger_args args = {
		.cgroup_id = opts->cg->id,
		.threshold_us = opts->stall_us,
		.window_us = opts->window_us,
	};
	struct psi_trigger_bpf *skel;
	int err;

	err = psi_state(opts->type == PSI_FULL ? "PSI_MEM_FULL" :
			"PSI_MEM_SOME", &args.state);
	if (err)
		return err;
	err = state_init() ?: state_lock() ?: recorder_ensure();
	if (err)
		return err;
	err = trigger_progs_load(&skel);
	if (err)
		return err;
	err = run_trigger_prog(skel->progs.psi_trigger_create, &args);
	psi_trigger_bpf__destroy(skel);
	if (err)
		return err;
	switch (args.ret) {
	case -ENOENT:
		p_err("cgroup '%s' is gone", opts->cg->arg);
		return -ENOENT;
	case -EOPNOTSUPP:
		p_err("pressure stall information is disabled in this kernel (psi=0?)");
		return -EOPNOTSUPP;
	case -ENOSPC:
		p_err("too many triggers: the kernel keeps at most 1024 (oomctl psi del)");
		return -ENOSPC;
	case -EPERM:
		p_err("creating a PSI trigger needs CAP_SYS_RESOURCE and CAP_KILL");
		return -EPERM;
	default:
		if (args.ret < 0) {
			p_err("the kernel refused the trigger: %s", strerror(-args.ret));
			return args.ret;
		}
	}
	out_u64("id", "added trigger %s", args.ret);
	out_str("cgroup", " on %s:", opts->cg->path);
	out_str("kind", " memory %s", psi_stall_str(opts->type));
	out_usec("stall_us", " %s",  opts->stall_us);
	out_usec("window_us", " per %s", opts->window_us);
	out_newline();
	return 0;
}

/* psi list's columns: the one model of its text and JSON output */
static const struct col list_cols[] = {
	{ "id", "ID", COL_U64, 0, "the trigger's id" },
	{ "cgroup", "CGROUP", COL_STR, 0, "the cgroup it watches" },
	{ "resource", "RESOURCE", COL_STR, 0, "memory, io or cpu" },
	{ "kind", "KIND", COL_STR, 0, "some or full" },
	{ "stall_us", "STALL", COL_USEC, 0, "stall time that fires it" },
	{ "window_us", "WINDOW", COL_USEC, 0, "the window of the stall" },
	{ "events", "EVENTS", COL_U64, 0, "times it fired" },
	{ "owner", "OWNER", COL_STR, 0,
	  "the PSI handler (bpf_psi_ops) it belongs to, - for a tool's" },
};

const struct listing psi_listing = {
	list_cols, sizeof(list_cols) / sizeof(*list_cols)
};

int psi_list(void)
{
	struct kernel_trigger *trs;
	char path[PATH_MAX];
	struct table *t;
	int n;

	n = kernel_triggers_read(&trs);
	if (n < 0)
		return n;
	t = table_open("triggers", list_cols, psi_listing.ncols);
	for (int i = 0; i < n; i++) {
		table_row(t);
		table_u64(t, trs[i].id);
		table_str(t, cgroup_path_of_id(trs[i].cgroup_id, path, sizeof(path)));
		table_str(t, trs[i].resource);
		table_str(t, trs[i].kind);
		table_usec(t, trs[i].threshold_us);
		table_usec(t, trs[i].window_us);
		table_u64(t, trs[i].events);
		table_str(t, trs[i].owner[0] ? trs[i].owner : "-");
	}
	table_close(t);
	free(trs);
	return 0;
}

int psi_del(const struct psi_del_opts *opts)
{
	struct psi_trigger_bpf *skel;
	struct kernel_trigger *trs;
	int n, err, deleted = 0;

	err = state_init() ?: state_lock();
	if (err)
		return err;
	n = kernel_triggers_read(&trs);
	if (n < 0)
		return n;
	err = trigger_progs_load(&skel);
	if (err) {
		free(trs);
		return err;
	}
	out_open_array("deleted");
	for (int i = 0; i < n; i++) {
		struct psi_trigger_args args = { .id = trs[i].id };

		if (opts->cg ? trs[i].cgroup_id != opts->cg->id :
			       (uint32_t)trs[i].id != opts->id)
			continue;
		/* A handler's trigger goes with the handler, never by id */
		if (trs[i].owner[0]) {
			if (opts->cg)
				continue;
			p_err("trigger %d belongs to the PSI handler %s: it goes when that handler detaches",
			      trs[i].id, trs[i].owner);
			err = -EBUSY;
			break;
		}
		err = run_trigger_prog(skel->progs.psi_trigger_destroy, &args);
		if (err)
			break;
		/* -ENOENT: gone meanwhile (cgroup removed), as good as deleted */
		if (args.ret && args.ret != -ENOENT) {
			err = args.ret;
			if (err == -EPERM)
				p_err("deleting a PSI trigger needs CAP_SYS_RESOURCE and CAP_KILL");
			else
				p_err("cannot delete trigger %d: %s", trs[i].id,
				      strerror(-args.ret));
			break;
		}
		out_u64(NULL, "deleted trigger %s\n", trs[i].id);
		deleted++;
	}
	out_close();
	psi_trigger_bpf__destroy(skel);
	free(trs);
	if (!err && !deleted) {
		if (opts->cg)
			p_err("no trigger on cgroup '%s' (oomctl psi list)", opts->cg->arg);
		else
			p_err("no trigger with id %u (oomctl psi list)", opts->id);
		return -ENOENT;
	}
	return err;
}
