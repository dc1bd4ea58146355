// SPDX-License-Identifier: GPL-2.0
/*
 * A hog declares an OOM in its own memcg: the declaring task is never the
 * victim. selfdecl/f holds a 30 MiB hog and the declarer, which touches
 * 80 MiB (the largest task there by far) and then runs the oom_declare
 * syscall program for its own cgroup. The kernel's killer must take the
 * smaller hog and spare the declarer, which gets the verdict "handled".
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "scenario.h"
#include "oom_shared.h"
#include "oom_declare.skel.h"

#define TOP "selfdecl"
#define CG TOP "/f"

/* The declarer: in @cg once @go reads a byte; reports the kfunc's result */
static void declarer_main(int prog_fd, uint64_t cgid, int go, int result)
{
	struct oom_declare_args args = { .cgroup_id = cgid };
	LIBBPF_OPTS(bpf_test_run_opts, opts, .ctx_in = &args,
		    .ctx_size_in = sizeof(args));
	size_t bytes = 80 * MiB;
	char c, *mem;

	if (read(go, &c, 1) != 1)
		_exit(3);
	mem = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED)
		_exit(4);
	for (size_t i = 0; i < bytes; i += 4096)
		mem[i] = 1;
	if (bpf_prog_test_run_opts(prog_fd, &opts))
		args.ret = -errno - 1000;	/* the run itself failed */
	if (write(result, &args.ret, sizeof(args.ret)) != sizeof(args.ret))
		_exit(5);
	for (;;)
		pause();
}

int main(void)
{
	struct oom_declare_bpf *skel;
	int go[2], result[2], ret = 0, status;
	struct pollfd pfd;
	struct hog small;
	char pid[32], what[64];
	pid_t declarer;
	uint64_t cgid;
	ssize_t n;

	setvbuf(stdout, NULL, _IOLBF, 0);
	cg_destroy(TOP);
	if (cg_write("", "cgroup.subtree_control", "+memory") ||
	    cg_create(TOP) || cg_write(TOP, "cgroup.subtree_control", "+memory") ||
	    cg_create(CG))
		bail("cannot set up the cgroups under /sys/fs/cgroup/" TOP);
	cg_write(CG, "memory.swap.max", "0");
	cgid = cg_id(CG);

	skel = oom_declare_bpf__open_and_load();
	if (!skel)
		bail("cannot load the oom_declare syscall program");

	if (hog_spawn(&small, "small", CG, 30 * MiB, 0) ||
	    hog_release(&small) || !hog_wait_ready(&small, 30000))
		bail("the 30 MiB hog did not get its memory");

	if (pipe2(go, O_CLOEXEC) || pipe2(result, O_CLOEXEC))
		bail("pipe: %s", strerror(errno));
	declarer = fork();
	if (declarer < 0)
		bail("fork: %s", strerror(errno));
	if (!declarer) {
		close(go[1]);
		close(result[0]);
		declarer_main(bpf_program__fd(skel->progs.oom_declare), cgid,
			      go[0], result[1]);
	}
	close(go[0]);
	close(result[1]);
	snprintf(pid, sizeof(pid), "%d", declarer);
	if (cg_write(CG, "cgroup.procs", pid) || write(go[1], "g", 1) != 1) {
		kill(declarer, SIGKILL);
		bail("cannot start the declarer in %s", CG);
	}

	/* It reports once its declared OOM was handled, unless it died */
	pfd = (struct pollfd){ .fd = result[0], .events = POLLIN };
	n = poll(&pfd, 1, 60000) == 1 ? read(result[0], &ret, sizeof(ret)) : -1;
	if (n == sizeof(ret))
		snprintf(what, sizeof(what), "ret %d", ret);
	else
		snprintf(what, sizeof(what), "%s", n == 0 ? "the declarer died" :
			 "no answer in 60 s");
	check(n == sizeof(ret) && ret == 1,
	      "the declarer's OOM in its own memcg was handled (%s)", what);
	check(hogs_wait_first_death(&small, 1, 10000) == 0 &&
	      hog_killed_by_sigkill(&small), "the 30 MiB hog was killed");
	/* The declare handled the OOM before it answered */
	n = waitpid(declarer, &status, WNOHANG);
	check(n == 0 && task_unkilled(declarer),
	      "the declarer (80 MiB, the largest) survived%s",
	      n == declarer && WIFSIGNALED(status) ?
	      (WTERMSIG(status) == SIGKILL ? " (killed by SIGKILL)" : " (killed)") : "");
	check(cg_read_key(CG, "memory.events", "oom_kill") == 1,
	      "%s memory.events says oom_kill 1", CG);

	kill(declarer, SIGKILL);
	waitpid(declarer, NULL, 0);
	hogs_kill(&small, 1);
	oom_declare_bpf__destroy(skel);
	cg_destroy(TOP);
	return checks_done();
}
