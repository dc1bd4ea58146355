// SPDX-License-Identifier: GPL-2.0
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "scenario.h"
#include "policy_util.h"
#include "oom_shared.h"
#include "oom_declare.skel.h"

#define PRIO_SCENARIO	50
#define PRIO_STARVED	1
#define PRIO_REAPER	60

struct named_victim_bpf *policy_load(int shared_seq_fd, bool tracer)
{
	struct named_victim_bpf *skel = named_victim_bpf__open();

	if (!skel)
		bail("cannot open the named_victim test policy");
	if (!tracer) {
		bpf_program__set_autoload(skel->progs.trace_oom_enter, false);
		bpf_program__set_autoload(skel->progs.trace_oom_exit, false);
		bpf_program__set_autoload(skel->progs.trace_kill, false);
	}
	if (shared_seq_fd >= 0 &&
	    bpf_map__reuse_fd(skel->maps.run_seq, shared_seq_fd))
		bail("cannot share the run_seq map");
	if (named_victim_bpf__load(skel))
		bail("the kernel refused the named_victim test policy");
	return skel;
}

struct bpf_link *policy_attach(struct named_victim_bpf *skel, uint64_t cookie)
{
	LIBBPF_OPTS(bpf_trace_opts, opts, .cookie = cookie);
	struct bpf_link *link;

	link = bpf_program__attach_trace_opts(skel->progs.named_victim, &opts);
	if (!link)
		bail("cannot attach the named_victim test policy: %s",
		     strerror(errno));
	return link;
}

void tracer_attach(struct named_victim_bpf *skel)
{
	if (!bpf_program__attach(skel->progs.trace_oom_enter) ||
	    !bpf_program__attach(skel->progs.trace_oom_exit) ||
	    !bpf_program__attach(skel->progs.trace_kill))
		bail("cannot attach the kill tracer: %s", strerror(errno));
}

static struct oom_declare_bpf *declare_skel;

void declare_init(void)
{
	if (declare_skel)
		return;
	declare_skel = oom_declare_bpf__open_and_load();
	if (!declare_skel)
		bail("cannot load the oom_declare syscall program");
}

int declare(uint64_t cgid)
{
	struct oom_declare_args args = { .cgroup_id = cgid };
	LIBBPF_OPTS(bpf_test_run_opts, opts, .ctx_in = &args,
		    .ctx_size_in = sizeof(args));

	declare_init();
	if (bpf_prog_test_run_opts(bpf_program__fd(declare_skel->progs.oom_declare),
				   &opts))
		bail("BPF_PROG_TEST_RUN of oom_declare failed");
	return args.ret;
}

static void write_file(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY);

	if (fd < 0 || write(fd, val, strlen(val)) < 0)
		bail("cannot write %s to %s: %s", val, path, strerror(errno));
	close(fd);
}

static void set_fifo(pid_t pid, int prio)
{
	struct sched_param sp = { .sched_priority = prio };

	if (sched_setscheduler(pid, SCHED_FIFO, &sp))
		bail("cannot make pid %d SCHED_FIFO %d: %s", pid, prio,
		     strerror(errno));
}

static void pin_cpu0(pid_t pid)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(0, &set);
	if (sched_setaffinity(pid, sizeof(set), &set))
		bail("cannot pin pid %d to CPU 0: %s", pid, strerror(errno));
}

static pid_t kthread_pid(const char *comm)
{
	char path[300], buf[32];
	struct dirent *de;
	pid_t pid = 0;
	DIR *d = opendir("/proc");
	int fd;
	ssize_t n;

	while (d && !pid && (de = readdir(d))) {
		if (de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/comm", de->d_name);
		fd = open(path, O_RDONLY);
		if (fd < 0)
			continue;
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (n > 0 && buf[n - 1] == '\n')
			n--;
		if (n > 0 && (size_t)n == strlen(comm) && !memcmp(buf, comm, n))
			pid = atoi(de->d_name);
	}
	if (d)
		closedir(d);
	return pid;
}

void starve_setup(void)
{
	pid_t reaper = kthread_pid("oom_reaper");

	/* Else the kernel gives RT tasks 0.95 s a second and us a gap */
	write_file("/proc/sys/kernel/sched_rt_runtime_us", "-1");
	if (!reaper)
		bail("no oom_reaper kernel thread");
	/* Wherever it runs, the reaper must not wait for our spinning */
	set_fifo(reaper, PRIO_REAPER);
}

void make_starvable(pid_t pid)
{
	/*
	 * SCHED_FIFO, not a nice level: 6.12's fair server runs CFS tasks
	 * 50 ms a second even under a spinning RT task, long enough to exit.
	 */
	pin_cpu0(pid);
	set_fifo(pid, PRIO_STARVED);
}

void starve_begin(void)
{
	pin_cpu0(0);
	set_fifo(0, PRIO_SCENARIO);
}

void starve_end(void)
{
	struct sched_param sp = { .sched_priority = 0 };
	cpu_set_t set;

	sched_setscheduler(0, SCHED_OTHER, &sp);
	CPU_ZERO(&set);
	for (int i = 0; i < CPU_SETSIZE; i++)
		CPU_SET(i, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

void spin_ms(int ms)
{
	struct timespec start, now;

	clock_gettime(CLOCK_MONOTONIC, &start);
	do
		clock_gettime(CLOCK_MONOTONIC, &now);
	while ((now.tv_sec - start.tv_sec) * 1000 +
	       (now.tv_nsec - start.tv_nsec) / 1000000 < ms);
}

long rss_kib(pid_t pid)
{
	char path[64], buf[128];
	long size, rss;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/statm", pid);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	if (sscanf(buf, "%ld %ld", &size, &rss) != 2)
		return -1;
	return rss * (sysconf(_SC_PAGESIZE) / 1024);
}
