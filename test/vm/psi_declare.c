// SPDX-License-Identifier: GPL-2.0
/*
 * The RFC's PSI selftest as a scenario. psitest/cg2 has memory.high 40M and
 * no swap; its hog wants 500 MiB, so it is throttled and the cgroup's memory
 * pressure rises, and with it the system's. cg1's hog holds 100 MiB with no
 * limit. Only kernel-owned triggers (bpf_psi_create_trigger()) reach the
 * handler on the PSI hook (progs/psi_hook_declare.bpf.c):
 *
 *   --kernel-trigger  a "some 100ms per 1s" trigger on cg2, with no fd held:
 *                     the handler declares an OOM in cg2, whose hog must die
 *                     while cg1's survives; the hook ran on the psi_bpf
 *                     workqueue
 *   --system-trigger  the same, system-wide (created for cgroup id 0): the
 *                     kernel lists it with the root cgroup's id, 1, and the
 *                     handler declares a system-wide OOM, which kills the
 *                     largest task, cg1's hog
 *   --fd-trigger      root writes the triggers to cg2's memory.pressure and
 *                     to /proc/pressure/memory and holds the fds: they fire
 *                     for their holder, but the handler never runs and
 *                     nothing is killed
 *   --no-handler      the fd triggers and a kernel-owned trigger on cg2, no
 *                     handler: nothing is killed, and the kernel queues no
 *                     work for the hook
 *   --rfc OBJ         --system-trigger with the RFC's own handler (its
 *                     progs/test_psi.c, built unchanged) instead of ours: a
 *                     kernel-owned trigger has no pressure file (t->of is
 *                     NULL), for which that program declares a system-wide
 *                     OOM
 */
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "scenario.h"
#include "oom_shared.h"
#include "psi_hook_declare.skel.h"
#include "psi_trigger.skel.h"
#include "psi_work_probe.skel.h"

#define TOP "psitest"
#define PSI_MEM_SOME 2		/* enum psi_states */
#define QUIET_MS 15000		/* how long nothing may happen without a handler */
/*
 * Once both fd triggers have fired, the pressure that a handler would act on
 * is there: a handler reached by them would declare within a window (1 s).
 * Three more windows of nothing are enough; QUIET_MS bounds the wait when
 * the pressure does not come.
 */
#define AFTER_FIRED_MS 3000

enum mode { FD_TRIGGER, KERNEL_TRIGGER, SYSTEM_TRIGGER, NO_HANDLER };

static int run_trigger_prog(struct bpf_program *prog, struct psi_trigger_args *args)
{
	LIBBPF_OPTS(bpf_test_run_opts, opts, .ctx_in = args,
		    .ctx_size_in = sizeof(*args));

	return bpf_prog_test_run_opts(bpf_program__fd(prog), &opts);
}

static int kernel_trigger(struct psi_trigger_bpf *trig, uint64_t cgid, int *id)
{
	struct psi_trigger_args args = {
		.cgroup_id = cgid, .state = PSI_MEM_SOME,
		.threshold_us = 100000, .window_us = 1000000,
	};
	int err = run_trigger_prog(trig->progs.psi_trigger_create, &args);

	*id = args.ret;
	return err ?: args.ret < 0 ? args.ret : 0;
}

/* The cgroup id /proc/pressure/bpf_triggers gives trigger @id, or -1 */
static long long listed_cgroup_id(int id)
{
	unsigned long long cgid;
	char line[256];
	long long ret = -1;
	FILE *f = fopen("/proc/pressure/bpf_triggers", "r");
	int n;

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "%d %llu", &n, &cgid) == 2 && n == id)
			ret = cgid;
	if (f)
		fclose(f);
	return ret;
}

static int bpf_triggers_lines(void)
{
	char line[256];
	FILE *f = fopen("/proc/pressure/bpf_triggers", "r");
	int n = 0;

	while (f && fgets(line, sizeof(line), f))
		n++;
	if (f)
		fclose(f);
	return f ? n : -1;
}

static int write_file(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY), ret = 0;

	if (fd < 0 || write(fd, val, strlen(val)) < 0)
		ret = -1;
	if (fd >= 0)
		close(fd);
	return ret;
}

/* A trigger written to a pressure file, held open by this process */
static int fd_trigger(const char *path)
{
	const char *trigger = "some 100000 1000000";
	int fd = open(path, O_RDWR | O_NONBLOCK);

	if (fd < 0 || write(fd, trigger, strlen(trigger) + 1) < 0)
		bail("cannot write a PSI trigger to %s", path);
	return fd;
}

/*
 * Watch the hogs while polling the fd triggers, for @ms at most and for
 * AFTER_FIRED_MS once both have fired: the index of the first hog to die,
 * or -1. *@fired counts the triggers that fired, *@watched_ms the time.
 */
static int watch(struct hog *hogs, const int *fds, int *fired, int ms,
		 int *watched_ms)
{
	struct pollfd pfds[2];
	int victim = -1, i, left;

	for (i = 0; i < 2; i++) {
		pfds[i].fd = fds[i];
		pfds[i].events = POLLPRI;
	}
	*fired = 0;
	*watched_ms = 0;
	for (left = ms; left > 0 && victim < 0; left -= 100) {
		if (poll(pfds, 2, 100) > 0)
			for (i = 0; i < 2; i++)
				if (pfds[i].revents & POLLPRI) {
					if (++*fired == 2 && left > AFTER_FIRED_MS)
						left = AFTER_FIRED_MS;
					pfds[i].fd = -1;	/* once is enough */
				}
		*watched_ms += 100;
		victim = hogs_wait_first_death(hogs, 2, 0);
	}
	return victim;
}

int main(int argc, char **argv)
{
	const char *arg = argc > 1 ? argv[1] : "";
	const char *rfc = argc > 2 && !strcmp(arg, "--rfc") ? argv[2] : NULL;
	enum mode mode = !strcmp(arg, "--kernel-trigger") ? KERNEL_TRIGGER :
			 !strcmp(arg, "--system-trigger") || rfc ? SYSTEM_TRIGGER :
			 !strcmp(arg, "--no-handler") ? NO_HANDLER :
			 !strcmp(arg, "--fd-trigger") ? FD_TRIGGER : -1;
	bool in_kernel = mode == KERNEL_TRIGGER || mode == SYSTEM_TRIGGER;
	bool kernel_trig = in_kernel || mode == NO_HANDLER;
	struct psi_hook_declare_bpf *skel = NULL;
	struct bpf_object *rfc_obj = NULL;
	struct bpf_link *rfc_link = NULL;
	struct psi_trigger_bpf *trig = NULL;
	struct psi_work_probe_bpf *probe;
	int fds[2] = { -1, -1 }, id = 0, victim, fired, watched_ms;
	struct hog hogs[2];
	long kills;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if ((int)mode < 0)
		bail("usage: psi_declare --fd-trigger | --kernel-trigger | --system-trigger | --no-handler | --rfc OBJ");
	/* A system-wide OOM must take a hog, not this process */
	if (write_file("/proc/self/oom_score_adj", "-1000"))
		bail("cannot protect this process from the OOM killer");
	cg_destroy(TOP);
	if (cg_write("", "cgroup.subtree_control", "+memory") ||
	    cg_create(TOP) || cg_write(TOP, "cgroup.subtree_control", "+memory") ||
	    cg_create(TOP "/cg1") || cg_create(TOP "/cg2") ||
	    cg_write(TOP "/cg2", "memory.high", "40M"))
		bail("cannot set up the cgroups under /sys/fs/cgroup/" TOP);
	cg_write(TOP "/cg2", "memory.swap.max", "0");

	if (rfc) {
		rfc_obj = bpf_object__open_file(rfc, NULL);
		if (!rfc_obj || bpf_object__load(rfc_obj))
			bail("cannot load the RFC's PSI program from %s", rfc);
		rfc_link = bpf_program__attach(bpf_object__find_program_by_name(rfc_obj,
										 "test_psi_event"));
		if (!rfc_link)
			bail("cannot attach the RFC's test_psi_event");
	} else if (mode != NO_HANDLER) {
		skel = psi_hook_declare_bpf__open_and_load();
		if (!skel || psi_hook_declare_bpf__attach(skel))
			bail("cannot load and attach the PSI hook handler");
	}
	probe = psi_work_probe_bpf__open_and_load();
	if (!probe || psi_work_probe_bpf__attach(probe))
		bail("cannot trace psi_bpf_event_workfn (the PSI hook's work item)");
	if (kernel_trig) {
		uint64_t cgid = mode == SYSTEM_TRIGGER ? 0 : cg_id(TOP "/cg2");
		long long listed;
		int err;

		trig = psi_trigger_bpf__open_and_load();
		if (!trig)
			bail("cannot load the trigger programs");
		err = kernel_trigger(trig, cgid, &id);

		check(!err && id > 0, "a kernel-owned %s trigger was created (id %d)",
		      mode == SYSTEM_TRIGGER ? "system-wide" : "cg2", id);
		listed = listed_cgroup_id(id);
		if (mode == SYSTEM_TRIGGER)
			check(listed == 1, "bpf_triggers lists it on the root cgroup, id 1 (got %lld)",
			      listed);
		else
			check(listed == (long long)cgid, "bpf_triggers lists it on cg2, id %llu (got %lld)",
			      (unsigned long long)cgid, listed);
	}
	if (!in_kernel) {
		fds[0] = fd_trigger("/sys/fs/cgroup/" TOP "/cg2/memory.pressure");
		fds[1] = fd_trigger("/proc/pressure/memory");
	}

	if (hog_spawn(&hogs[0], "cg1", TOP "/cg1", 100 * MiB, 0) ||
	    hog_spawn(&hogs[1], "cg2", TOP "/cg2", 500 * MiB, 0))
		bail("cannot start the hogs");
	if (hog_release(&hogs[0]) || !hog_wait_ready(&hogs[0], 30000))
		bail("cg1's hog did not get its memory");
	kills = vmstat_oom_kill();
	hog_release(&hogs[1]);

	if (!in_kernel) {
		victim = watch(hogs, fds, &fired, QUIET_MS, &watched_ms);
		check(victim < 0, "no hog is killed in %.1f s of pressure (first death: %s)",
		      watched_ms / 1000.0, victim < 0 ? "none" : hogs[victim].name);
		check(vmstat_oom_kill() == kills, "/proc/vmstat oom_kill did not change");
		check(cg_read_key(TOP "/cg2", "memory.events", "high") > 0,
		      "cg2 was throttled at memory.high meanwhile");
		check(fired == 2, "both fd triggers fired for their holder (%d did)", fired);
		if (skel)
			check(!skel->bss->nr_runs && !skel->bss->nr_declared,
			      "no fd trigger reached the handler (runs %llu, declared %llu)",
			      (unsigned long long)skel->bss->nr_runs,
			      (unsigned long long)skel->bss->nr_declared);
		else
			check(!probe->bss->nr_works,
			      "with no handler attached, the kernel-owned trigger queued no work (%llu ran)",
			      (unsigned long long)probe->bss->nr_works);
		goto out;
	}

	victim = hogs_wait_first_death(hogs, 2, 60000);
	if (mode == SYSTEM_TRIGGER) {
		check(victim == 0, "the largest task, cg1's hog, was killed (first death: %s)",
		      victim < 0 ? "none" : hogs[victim].name);
		check(victim == 0 && hog_killed_by_sigkill(&hogs[0]),
		      "it died of SIGKILL");
	} else {
		check(victim == 1, "cg2's hog was killed (first death: %s)",
		      victim < 0 ? "none" : hogs[victim].name);
		check(victim == 1 && hog_killed_by_sigkill(&hogs[1]),
		      "it died of SIGKILL");
		check(hog_alive(&hogs[0]), "cg1's hog survived");
		check(cg_read_key(TOP "/cg2", "memory.events", "oom_kill") == 1,
		      "cg2 memory.events says oom_kill 1");
	}
	if (skel)
		check(skel->bss->nr_declared >= 1,
		      "the handler declared the OOM (runs %llu, declared %llu)",
		      (unsigned long long)skel->bss->nr_runs,
		      (unsigned long long)skel->bss->nr_declared);
	else
		check(vmstat_oom_kill() > kills,
		      "the RFC's handler declared it: /proc/vmstat oom_kill rose by %ld",
		      vmstat_oom_kill() - kills);
	check(probe->bss->nr_works >= 1 && !strcmp(probe->bss->wq_name, "psi_bpf"),
	      "the hook ran on the psi_bpf workqueue (%llu runs, last on \"%s\")",
	      (unsigned long long)probe->bss->nr_works, probe->bss->wq_name);
	check(probe->bss->nr_works >= 1 && probe->data->worker_nice == -20,
	      "its worker had nice -20, a WQ_HIGHPRI one (last: nice %d)",
	      probe->data->worker_nice);
out:
	/* Detach first: a system-wide trigger outlives the cgroups */
	psi_hook_declare_bpf__destroy(skel);
	bpf_link__destroy(rfc_link);
	bpf_object__close(rfc_obj);
	hogs_kill(hogs, 2);
	for (int i = 0; i < 2; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	if (mode == SYSTEM_TRIGGER) {
		struct psi_trigger_args args = { .id = id };

		run_trigger_prog(trig->progs.psi_trigger_destroy, &args);
		check(!args.ret && bpf_triggers_lines() == 1,
		      "the system-wide trigger was destroyed (%d)", args.ret);
	}
	psi_trigger_bpf__destroy(trig);
	psi_work_probe_bpf__destroy(probe);
	cg_destroy(TOP);
	if (mode == KERNEL_TRIGGER || mode == NO_HANDLER)
		check(bpf_triggers_lines() == 1, "removing the cgroup removed its trigger");
	return checks_done();
}
