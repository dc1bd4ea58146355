/*
 * oom declare: run bpf_out_of_memory() through the oom_declare syscall
 * program and find what the OOM handling did, in the event log.
 */
#include <errno.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>
#include <bpf/libbpf.h>

#include "backend.h"
#include "bpffs.h"
#include "events.h"
#include "kernel.h"
#include "oom_declare.skel.h"

/* How long `wait` waits for another OOM's handling to end */
#define WAIT_MAX_MS	30000
#define WAIT_STEP_MS	50

/*
 * Whether vm.panic_on_oom forbids this declared OOM (and say so): the kernel
 * refuses, rather than panics, any declared OOM at 2, and a system-wide one
 * (no cgroup, or the root cgroup, id 1) at 1.
 */
static bool panic_forbids(const struct oom_declare_opts *opts)
{
	bool system = !opts->cg || opts->cg->id == 1;
	FILE *f = fopen("/proc/sys/vm/panic_on_oom", "r");
	int mode = 0;

	if (f) {
		if (fscanf(f, "%d", &mode) != 1)
			mode = 0;
		fclose(f);
	}
	if (mode == 2)
		p_err("vm.panic_on_oom=2 forbids declared OOMs");
	else if (mode == 1 && system)
		p_err("vm.panic_on_oom=1 forbids declared system-wide OOMs");
	else
		return false;
	return true;
}

int oom_declare(const struct oom_declare_opts *opts, struct oom_declared *res)
{
	static struct oom_event evs[OOM_EVENTS_MAX];
	LIBBPF_OPTS(bpf_object_open_opts, open_opts);
	struct oom_declare_args args = {
		.cgroup_id = opts->cg ? opts->cg->id : 0,
		.order = opts->order,
	};
	struct timespec step = { .tv_nsec = WAIT_STEP_MS * 1000000L };
	struct oom_declare_bpf *skel;
	uint64_t before, head;
	int err, n, waited = 0;

	err = state_init() ?: recorder_ensure();
	if (err)
		return err;
	events_read(~0ULL, evs, 1, &before);

	open_opts_debug(&open_opts);
	skel = oom_declare_bpf__open_opts(&open_opts);
	if (!skel || oom_declare_bpf__load(skel)) {
		err = load_failed("the declare program", -errno);
		goto out;
	}
	for (;;) {
		err = syscall_prog_run(bpf_program__fd(skel->progs.oom_declare),
				       &args, sizeof(args));
		if (err) {
			p_err("cannot run the declare program: %s", strerror(-err));
			goto out;
		}
		if (args.ret != -EBUSY || !opts->wait || waited >= WAIT_MAX_MS)
			break;
		nanosleep(&step, NULL);
		waited += WAIT_STEP_MS;
	}

	switch (args.ret) {
	case -EBUSY:
		if (opts->wait)
			p_err("busy: another OOM is being handled (waited %g s)",
			      waited / 1000.0);
		else
			p_err("busy: another OOM is being handled (add 'wait' to wait for it)");
		err = -EBUSY;
		goto out;
	case -ENOENT:
		p_err("cgroup '%s' is gone", opts->cg->arg);
		err = -ENOENT;
		goto out;
	case -EOPNOTSUPP:
		/* the kernel's refusal under vm.panic_on_oom, or ours: no memcg */
		if (panic_forbids(opts)) {
			err = -EPERM;
			goto out;
		}
		if (!opts->cg) {
			p_err("the kernel refused the OOM: %s", strerror(EOPNOTSUPP));
			err = -EOPNOTSUPP;
			goto out;
		}
		p_err("cgroup '%s' has no memory controller (enable +memory in its parent's cgroup.subtree_control)",
		      opts->cg->arg);
		err = -ENODEV;
		goto out;
	case -EPERM:
		p_err("declaring an OOM needs CAP_KILL");
		err = -EPERM;
		goto out;
	default:
		if (args.ret < 0) {
			p_err("the kernel refused the OOM: %s", strerror(-args.ret));
			err = args.ret;
			goto out;
		}
	}

	res->handled = args.ret;
	res->kills = evs;
	res->nr_kills = 0;
	n = events_read(before, evs, OOM_EVENTS_MAX, &head);
	for (int i = 0; i < n; i++)
		if (evs[i].type == OOM_EVENT_KILL || evs[i].type == OOM_EVENT_DRY_RUN)
			evs[res->nr_kills++] = evs[i];
	err = 0;
out:
	oom_declare_bpf__destroy(skel);
	return err;
}
