// SPDX-License-Identifier: GPL-2.0
/*
 * A declared OOM in a cgroup v1 memcg (issue 19 i), on the debug kernel,
 * which has the v1 memory controller (CONFIG_MEMCG_V1). The controller is
 * moved to a v1 hierarchy with two memcgs, each with a sleeping task:
 *  - plain: bpf_out_of_memory() kills its task, as in a real OOM there;
 *  - nokill: memory.oom_control's oom_kill_disable is set, so its tasks
 *    wait for memory rather than die in a real OOM: the declared OOM is
 *    refused (EOPNOTSUPP), and the task lives.
 * The guest is its own: the v1 hierarchy keeps the controller while its
 * dying memcgs last.
 *
 * It must run before any cgroup v2 memcg was created in the guest: a v2
 * memcg still dying when the controller moves to v1 is uncharged with v1's
 * memory+swap accounting, which it was never charged with, and the kernel
 * warns of the page counter's underflow.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "scenario.h"
#include "declare_v1.skel.h"

#define V1 "/run/v1mem"

static int write_str(const char *path, const char *val)
{
	FILE *f = fopen(path, "w");
	int ret;

	if (!f)
		return -1;
	ret = fputs(val, f) < 0 ? -1 : 0;
	return fclose(f) ? -1 : ret;
}

static void sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/* A memcg V1/@name with a hog of 20M in it, and oom_kill_disable @nokill */
static void memcg_with_hog(const char *name, struct hog *h, bool nokill)
{
	char path[128], pid[16];

	snprintf(path, sizeof(path), V1 "/%s", name);
	if (mkdir(path, 0755))
		bail("cannot create %s", path);
	snprintf(path, sizeof(path), V1 "/%s/memory.oom_control", name);
	if (nokill && write_str(path, "1"))
		bail("cannot set %s", path);
	if (hog_spawn(h, name, "", 20 * MiB, 0))
		bail("cannot start a hog");
	snprintf(path, sizeof(path), V1 "/%s/cgroup.procs", name);
	snprintf(pid, sizeof(pid), "%d", h->pid);
	if (write_str(path, pid) || hog_release(h) || !hog_wait_ready(h, 30000))
		bail("cannot run a hog in %s", name);
}

/* The number of memcgs, the root's included, from /proc/cgroups */
static int memcgs(void)
{
	char name[32];
	int hier, num, enabled, n = -1;
	FILE *f = fopen("/proc/cgroups", "r");

	if (!f)
		return -1;
	fscanf(f, "%*[^\n]\n");	/* the header */
	while (fscanf(f, "%31s %d %d %d", name, &hier, &num, &enabled) == 4)
		if (!strcmp(name, "memory"))
			n = num;
	fclose(f);
	return n;
}

static int declare_in(struct declare_v1_bpf *skel, const char *name)
{
	LIBBPF_OPTS(bpf_test_run_opts, opts);
	char path[128];
	struct stat st;

	snprintf(path, sizeof(path), V1 "/%s", name);
	if (stat(path, &st))
		bail("cannot stat %s", path);
	skel->bss->target_ino = st.st_ino;
	skel->data->ret = 1;
	if (bpf_prog_test_run_opts(bpf_program__fd(skel->progs.declare_v1), &opts))
		bail("cannot run declare_v1");
	return skel->data->ret;
}

int main(void)
{
	struct declare_v1_bpf *skel;
	struct hog plain, nokill;
	int ret, tries, nr;

	setvbuf(stdout, NULL, _IOLBF, 0);
	/* This process must outlive the OOMs it declares */
	if (write_str("/proc/self/oom_score_adj", "-1000"))
		bail("cannot protect this process from the OOM killer");
	nr = memcgs();
	if (nr != 1)
		bail("%d memcgs exist (/proc/cgroups): run this first in a fresh guest", nr);
	/* Unbind memory from v2: no v2 cgroup below the root may use it */
	if (write_str("/sys/fs/cgroup/cgroup.subtree_control", "-memory"))
		bail("cannot take the memory controller off cgroup v2");
	mkdir(V1, 0755);
	for (tries = 0; mount("none", V1, "cgroup", 0, "memory"); tries++) {
		if (errno != EBUSY || tries == 100)
			bail("cannot mount the v1 memory controller on " V1 ": %s",
			     strerror(errno));
		sleep_ms(100);	/* the v2 memcgs are still dying */
	}
	memcg_with_hog("plain", &plain, false);
	memcg_with_hog("nokill", &nokill, true);

	skel = declare_v1_bpf__open_and_load();
	if (!skel)
		bail("cannot load progs/declare_v1.bpf.c");
	ret = declare_in(skel, "nokill");
	check(ret == -EOPNOTSUPP,
	      "a declared OOM in a v1 memcg with oom_kill_disable is refused (%d)", ret);
	sleep_ms(500);
	check(hog_alive(&nokill), "its task lives");
	ret = declare_in(skel, "plain");
	check(ret == 1, "one in a v1 memcg without it runs (%d)", ret);
	check(!hog_wait_ready(&plain, 10000) && hog_killed_by_sigkill(&plain),
	      "and kills its task");
	check(hog_alive(&nokill), "the other memcg's task still lives");

	declare_v1_bpf__destroy(skel);
	hogs_kill(&plain, 1);
	hogs_kill(&nokill, 1);
	rmdir(V1 "/plain");
	rmdir(V1 "/nokill");
	umount(V1);
	return checks_done();
}
