// SPDX-License-Identifier: GPL-2.0
/*
 * oom_path OUT CGROUP -- COMMAND [ARG...]: run COMMAND with the probes of
 * progs/oom_path.bpf.c attached, then write to OUT one line for each call of
 * out_of_memory() on the memory cgroup CGROUP (a cgroup2 directory; the
 * root, /sys/fs/cgroup, means system-wide OOMs) that COMMAND caused or that
 * happened meanwhile:
 *
 *   total_ns policy_ns scan_ns report_ns victim_pid nr_victims handled
 *
 * total_ns is the whole call; policy_ns the time in the BPF policies' hook,
 * scan_ns in the kernel's task scan (its own selection), report_ns in the
 * OOM report; victim_pid the first task marked as victim (0: none), then how
 * many were, and out_of_memory()'s return value. OUT starts with a # line
 * naming the columns. Exit status: COMMAND's (128 + signal if killed), or 1
 * with one line on stderr if the probes could not be run.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/magic.h>
#include <linux/types.h>
#include <bpf/libbpf.h>

#include "progs/oom_path_shared.h"
#include "oom_path.skel.h"

static int die(const char *fmt, ...)
{
	va_list ap;

	fputs("oom_path: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

/* libbpf's warnings only: its info lines would drown the benchmark's */
static int print_warnings(enum libbpf_print_level level, const char *fmt,
			  va_list ap)
{
	return level == LIBBPF_WARN ? vfprintf(stderr, fmt, ap) : 0;
}

/* The id out_of_memory() sees for CGROUP: its inode number, 0 for the root */
static __u64 cgroup_id(const char *path)
{
	struct statfs fs;
	struct stat st;

	if (statfs(path, &fs) || stat(path, &st))
		die("%s: %s", path, strerror(errno));
	if (fs.f_type != CGROUP2_SUPER_MAGIC || !S_ISDIR(st.st_mode))
		die("%s: not a cgroup2 directory", path);
	return st.st_ino == 1 ? 0 : st.st_ino;
}

int main(int argc, char **argv)
{
	struct oom_path_bpf *skel;
	int status, rc;
	FILE *out;
	pid_t pid;

	if (argc < 5 || strcmp(argv[3], "--")) {
		fprintf(stderr, "usage: oom_path OUT CGROUP -- COMMAND [ARG...]\n");
		return 2;
	}
	libbpf_set_print(print_warnings);
	skel = oom_path_bpf__open();
	if (!skel)
		die("cannot open the BPF object: %s", strerror(errno));
	skel->rodata->target_cgid = cgroup_id(argv[2]);
	if ((rc = oom_path_bpf__load(skel)))
		die("cannot load the probes: %s", strerror(-rc));
	if ((rc = oom_path_bpf__attach(skel)))
		die("cannot attach the probes: %s", strerror(-rc));

	pid = fork();
	if (pid < 0)
		die("fork: %s", strerror(errno));
	if (!pid) {
		execvp(argv[4], argv + 4);
		fprintf(stderr, "oom_path: %s: %s\n", argv[4], strerror(errno));
		_exit(127);
	}
	if (waitpid(pid, &status, 0) < 0)
		die("waitpid: %s", strerror(errno));

	out = fopen(argv[1], "w");
	if (!out)
		die("%s: %s", argv[1], strerror(errno));
	fprintf(out, "# total_ns policy_ns scan_ns report_ns victim_pid nr_victims handled\n");
	for (__u32 i = 0; i < skel->bss->nr_calls && i < OOM_PATH_MAX_CALLS; i++) {
		const struct oom_call *c = &skel->bss->calls[i];

		fprintf(out, "%llu %llu %llu %llu %u %u %u\n",
			(unsigned long long)c->total_ns,
			(unsigned long long)c->part_ns[OOM_PATH_POLICY],
			(unsigned long long)c->part_ns[OOM_PATH_SCAN],
			(unsigned long long)c->part_ns[OOM_PATH_REPORT],
			c->victim_pid, c->nr_victims, c->handled);
	}
	if (fclose(out))
		die("%s: %s", argv[1], strerror(errno));
	if (skel->bss->nr_other)
		fprintf(stderr, "oom_path: %u OOM(s) elsewhere, not counted\n",
			skel->bss->nr_other);
	oom_path_bpf__destroy(skel);

	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}
