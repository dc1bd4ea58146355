// SPDX-License-Identifier: GPL-2.0
/*
 * rfc_psi_handler CGROUP_PATH TRIGGER: the benchmark's "rfc" killer, for the
 * RFC kernel only (test/bench/rfc/README.md).
 *
 *   rfc_psi_handler /sys/fs/cgroup/bench/w1 "some 50000 500000"
 *
 * Writes TRIGGER to CGROUP_PATH/memory.pressure and keeps the file open: in
 * the RFC, as in mainline, a trigger lives as long as its file. Then attaches
 * rfc_psi_handler.bpf.c, which declares an OOM in the cgroup whenever that
 * trigger fires, prints "ready" on stdout and runs until SIGTERM/SIGINT (exit
 * 0) or SIGKILL. On any error: one line on stderr, exit status 1 (2: usage).
 *
 * While it runs it polls the file. A trigger fires only while its event flag
 * is clear, and only reading the event (poll) clears it; without this the
 * handler would run once per trigger. Polling only re-arms the trigger: the
 * OOM is declared in the kernel, whether or not we get to run.
 *
 * It refuses to run on a kernel whose release does not end in -bpf-oom-rfc
 * (rfc.config): our own kernel has a hook and kfuncs of the same names and
 * types, so the handler would load there too, and measure something else.
 * RFC_HANDLER_ANY_KERNEL=1 skips that check (an RFC kernel built elsewhere).
 * RFC_HANDLER_DEBUG=1 passes libbpf's messages through (the verifier log).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/utsname.h>
#include <bpf/libbpf.h>

#include "rfc_psi_handler.skel.h"

static const char *prog = "rfc_psi_handler";
static volatile sig_atomic_t stop;
static bool debug;
static char last_libbpf[256];	/* its last warning, for the error line */

static void fail(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	if (last_libbpf[0])
		fprintf(stderr, " (libbpf: %s)", last_libbpf);
	fputc('\n', stderr);
	exit(1);
}

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	char *nl;

	if (debug)
		return vfprintf(stderr, fmt, ap);
	if (level != LIBBPF_WARN)
		return 0;
	vsnprintf(last_libbpf, sizeof(last_libbpf), fmt, ap);
	/* one line: the message's first */
	nl = strchr(last_libbpf, '\n');
	if (nl)
		*nl = '\0';
	if (!strncmp(last_libbpf, "libbpf: ", 8))
		memmove(last_libbpf, last_libbpf + 8, strlen(last_libbpf + 8) + 1);
	return 0;
}

static bool env_is_1(const char *name)
{
	const char *v = getenv(name);

	return v && !strcmp(v, "1");
}

static void check_kernel(void)
{
	static const char suffix[] = "-bpf-oom-rfc";
	struct utsname u;
	size_t n;

	if (env_is_1("RFC_HANDLER_ANY_KERNEL"))
		return;
	if (uname(&u))
		fail("uname: %s", strerror(errno));
	n = strlen(u.release);
	if (n < sizeof(suffix) - 1 || strcmp(u.release + n - (sizeof(suffix) - 1), suffix))
		fail("kernel %s is not the RFC kernel (*%s, kernel/build.sh --rfc)",
		     u.release, suffix);
}

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

/* The cgroup's id, as the kernel's cgroup_id(): its kernfs node's */
static unsigned long long cgroup_id(const char *path)
{
	struct {
		struct file_handle fh;
		unsigned long long id;
	} h = { .fh.handle_bytes = sizeof(h.id) };
	int mount_id;

	if (name_to_handle_at(AT_FDCWD, path, &h.fh, &mount_id, 0))
		fail("%s: cannot get the cgroup id: %s", path, strerror(errno));
	if (h.fh.handle_bytes != sizeof(h.id))
		fail("%s: not a cgroup v2 directory", path);
	return h.id;
}

int main(int argc, char **argv)
{
	struct rfc_psi_handler_bpf *skel;
	struct sigaction sa = { .sa_handler = on_signal };
	const char *cg, *trigger;
	char file[4096];
	struct pollfd pfd;
	int fd, err;

	if (argc != 3 || !argv[1][0] || !argv[2][0]) {
		fprintf(stderr, "usage: %s CGROUP_PATH TRIGGER  (e.g. /sys/fs/cgroup/w1 \"some 50000 500000\")\n",
			prog);
		return 2;
	}
	cg = argv[1];
	trigger = argv[2];
	debug = env_is_1("RFC_HANDLER_DEBUG");
	check_kernel();
	libbpf_set_print(libbpf_print);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);	/* a closed stdout is a write error, not death */

	/* The trigger first: its errors (syntax, no PSI, no cgroup) come quickest. */
	if ((size_t)snprintf(file, sizeof(file), "%s/memory.pressure", cg) >= sizeof(file))
		fail("%s: path too long", cg);
	fd = open(file, O_RDWR | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		fail("cannot open %s: %s", file, strerror(errno));
	if (write(fd, trigger, strlen(trigger)) < 0)
		fail("cannot write trigger \"%s\" to %s: %s", trigger, file, strerror(errno));

	skel = rfc_psi_handler_bpf__open();
	if (!skel)
		fail("cannot open the BPF object: %s", strerror(errno));
	skel->rodata->watched_cgroup_id = cgroup_id(cg);
	err = rfc_psi_handler_bpf__load(skel);
	if (err)
		fail("cannot load the handler (is this the RFC kernel?): %s", strerror(-err));
	err = rfc_psi_handler_bpf__attach(skel);
	if (err)
		fail("cannot attach to bpf_handle_psi_event: %s", strerror(-err));
	last_libbpf[0] = '\0';	/* warnings of a load that worked explain no later error */

	if (printf("ready\n") < 0 || fflush(stdout))
		fail("cannot write to stdout: %s", strerror(errno));

	/*
	 * An event before the attach went unhandled: the first poll clears it,
	 * so the trigger fires again at its next window.
	 */
	pfd = (struct pollfd){ .fd = fd, .events = POLLPRI };
	while (!stop) {
		if (poll(&pfd, 1, -1) < 0) {
			if (errno == EINTR)
				continue;
			fail("poll %s: %s", file, strerror(errno));
		}
		/* EPOLLERR: the trigger or the cgroup is gone */
		if (pfd.revents & (POLLERR | POLLNVAL | POLLHUP))
			fail("%s: the trigger is gone (cgroup removed?)", file);
	}

	fprintf(stderr, "%s: %llu events, %llu OOMs declared, %llu busy, last %lld\n",
		prog, (unsigned long long)skel->bss->nr_events,
		(unsigned long long)skel->bss->nr_declared,
		(unsigned long long)skel->bss->nr_busy, (long long)skel->bss->last_ret);
	rfc_psi_handler_bpf__destroy(skel);
	close(fd);
	return 0;
}
