// SPDX-License-Identifier: GPL-2.0
/*
 * timeit [-o OUT] [-e ERR] [--] COMMAND [ARGS...]: run COMMAND once and
 * print on stdout
 *
 *   wall_ms=W maxrss_kib=R status=S
 *
 * W: wall time from just before fork() to wait4()'s return (exec and the
 * dynamic loader included, as a user pays them); R: the child's peak RSS
 * as wait4() reports it (ru_maxrss, KiB); S: its exit status, or 128 +
 * signal. COMMAND's stdout goes to OUT (default /dev/null), its stderr to
 * ERR (default ours). The guest image has no /usr/bin/time, hence this.
 *
 * Exit status: COMMAND's (the line is printed whatever it is); 125 if
 * COMMAND could not be run at all, 2 on bad usage.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void usage(void)
{
	fputs("usage: timeit [-o OUT] [-e ERR] [--] COMMAND [ARGS...]\n",
	      stderr);
	exit(2);
}

static int open_out(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

	if (fd < 0) {
		fprintf(stderr, "timeit: %s: %s\n", path, strerror(errno));
		exit(125);
	}
	return fd;
}

int main(int argc, char **argv)
{
	const char *out = "/dev/null", *err = NULL;
	int out_fd, err_fd = -1, opt, st;
	struct rusage ru;
	double start, ms;
	pid_t pid;

	while ((opt = getopt(argc, argv, "+o:e:")) != -1) {
		switch (opt) {
		case 'o':
			out = optarg;
			break;
		case 'e':
			err = optarg;
			break;
		default:
			usage();
		}
	}
	if (optind >= argc)
		usage();

	/* opened before the clock starts: not the command's cost */
	out_fd = open_out(out);
	if (err)
		err_fd = open_out(err);

	start = now_ms();
	pid = fork();
	if (pid < 0) {
		fprintf(stderr, "timeit: fork: %s\n", strerror(errno));
		return 125;
	}
	if (!pid) {
		if (dup2(out_fd, 1) < 0 || (err_fd >= 0 && dup2(err_fd, 2) < 0))
			_exit(125);
		execvp(argv[optind], argv + optind);
		fprintf(stderr, "timeit: %s: %s\n", argv[optind],
			strerror(errno));
		_exit(125);
	}
	while (wait4(pid, &st, 0, &ru) < 0) {
		if (errno != EINTR) {
			fprintf(stderr, "timeit: wait4: %s\n", strerror(errno));
			return 125;
		}
	}
	ms = now_ms() - start;
	st = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	printf("wall_ms=%.3f maxrss_kib=%ld status=%d\n", ms, ru.ru_maxrss, st);
	return st;
}
