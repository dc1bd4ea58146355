// SPDX-License-Identifier: GPL-2.0
/*
 * What CAP_BPF and CAP_PERFMON, which a BPF token can grant inside a user
 * namespace, do not allow (issue 19, defects e and h).
 *
 * The RFC's OOM hook is root's. An fmod_ret program on
 * it that returns 1 (progs/greedy_hook.bpf.c's silencer) stops every policy
 * after it without killing, which needs no CAP_KILL. So a program of any
 * tracing type on it is loaded and attached by CAP_SYS_ADMIN only: a user
 * with CAP_BPF and CAP_PERFMON (nobody, here) can neither load one nor
 * attach one that root loaded.
 *
 * The memcg kfuncs read any memcg, the root's included, past the caller's
 * cgroup namespace: in a syscall program they need CAP_PERFMON, as reading
 * kernel memory does. nobody with CAP_BPF alone cannot load
 * progs/memcg_peek.bpf.c, which reads the root memcg's usage with them
 * and nothing else; with CAP_PERFMON too, it can.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <linux/capability.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "scenario.h"
#include "greedy_hook.skel.h"
#include "memcg_peek.skel.h"

/* Load memcg_peek as nobody with @caps; 0 or the error */
static int load_memcg_peek_as_nobody(unsigned long long caps)
{
	struct memcg_peek_bpf *skel;
	int status;
	pid_t pid;

	pid = fork();
	if (pid < 0)
		bail("fork");
	if (!pid) {
		if (prctl(PR_SET_KEEPCAPS, 1) || setresgid(65534, 65534, 65534) ||
		    setresuid(65534, 65534, 65534) || caps_set_effective(caps))
			_exit(255);
		skel = memcg_peek_bpf__open_and_load();
		_exit(skel ? 0 : errno);
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status) == 255)
		bail("cannot become nobody");
	return -WEXITSTATUS(status);
}

int main(void)
{
	struct greedy_hook_bpf *root_skel, *skel;
	int prog_fd, status, fd, err;
	pid_t pid;

	setvbuf(stdout, NULL, _IOLBF, 0);
	root_skel = greedy_hook_bpf__open();
	if (!root_skel)
		bail("cannot open progs/greedy_hook.bpf.c");
	bpf_program__set_autoload(root_skel->progs.greedy_hook, false);
	if (greedy_hook_bpf__load(root_skel))
		bail("root cannot load the silencer");
	prog_fd = bpf_program__fd(root_skel->progs.silencer);

	pid = fork();
	if (pid < 0)
		bail("fork");
	if (!pid) {
		if (prctl(PR_SET_KEEPCAPS, 1) || setresgid(65534, 65534, 65534) ||
		    setresuid(65534, 65534, 65534) ||
		    caps_set_effective(1ULL << CAP_BPF | 1ULL << CAP_PERFMON))
			_exit(2);
		skel = greedy_hook_bpf__open();
		if (!skel)
			_exit(2);
		bpf_program__set_autoload(skel->progs.greedy_hook, false);
		err = greedy_hook_bpf__load(skel);
		fd = bpf_link_create(prog_fd, 0, BPF_MODIFY_RETURN, NULL);
		/* The two results, for the parent to check */
		_exit((err == -EPERM) | (fd == -EPERM) << 1 | 1 << 2);
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    !(WEXITSTATUS(status) & 4))
		bail("cannot become nobody with CAP_BPF and CAP_PERFMON");
	check(WEXITSTATUS(status) & 1,
	      "nobody with CAP_BPF+CAP_PERFMON cannot load the silencer, an fmod_ret program on the OOM hook");
	check(WEXITSTATUS(status) & 2,
	      "nor attach one that root loaded");

	fd = bpf_link_create(prog_fd, 0, BPF_MODIFY_RETURN, NULL);
	check(fd >= 0, "root attaches it (%d)", fd);
	if (fd >= 0)
		close(fd);
	greedy_hook_bpf__destroy(root_skel);

	check(load_memcg_peek_as_nobody(1ULL << CAP_BPF) == -EACCES,
	      "nobody with CAP_BPF alone cannot load a syscall program that reads the root memcg");
	check(load_memcg_peek_as_nobody(1ULL << CAP_BPF | 1ULL << CAP_PERFMON) == 0,
	      "with CAP_PERFMON too, it can");
	return checks_done();
}
