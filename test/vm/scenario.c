// SPDX-License-Identifier: GPL-2.0
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "scenario.h"

#define CGROOT "/sys/fs/cgroup"

static int nr_passed, nr_failed;

static void cg_path(char *buf, size_t size, const char *cg, const char *file)
{
	snprintf(buf, size, CGROOT "/%s%s%s", cg, file ? "/" : "", file ? file : "");
}

int cg_create(const char *cg)
{
	char path[512];

	cg_path(path, sizeof(path), cg, NULL);
	if (mkdir(path, 0755) && errno != EEXIST)
		return -errno;
	return 0;
}

int cg_write(const char *cg, const char *file, const char *val)
{
	char path[512];
	int fd, ret = 0;

	cg_path(path, sizeof(path), cg, file);
	fd = open(path, O_WRONLY);
	if (fd < 0)
		return -errno;
	if (write(fd, val, strlen(val)) < 0)
		ret = -errno;
	close(fd);
	return ret;
}

int cg_read(const char *cg, const char *file, char *buf, size_t size)
{
	char path[512];
	ssize_t n;
	int fd;

	cg_path(path, sizeof(path), cg, file);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, size - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	return 0;
}

long cg_read_key(const char *cg, const char *file, const char *key)
{
	char buf[4096], *p;
	size_t len = strlen(key);

	if (cg_read(cg, file, buf, sizeof(buf)))
		return -1;
	for (p = buf; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (!strncmp(p, key, len) && p[len] == ' ')
			return strtol(p + len + 1, NULL, 10);
	return -1;
}

uint64_t cg_id(const char *cg)
{
	struct stat st;
	char path[512];

	/* On cgroup2 the directory's inode number is the cgroup id */
	cg_path(path, sizeof(path), cg, NULL);
	return stat(path, &st) ? 0 : st.st_ino;
}

void cg_destroy(const char *cg)
{
	char cmd[1024];

	/* cgroup.kill takes down every task below, then rmdir depth-first */
	cg_write(cg, "cgroup.kill", "1");
	snprintf(cmd, sizeof(cmd),
		 "for i in $(seq 50); do find " CGROOT "/%s -depth -type d "
		 "-exec rmdir {} + 2>/dev/null; [ -d " CGROOT "/%s ] || exit 0; "
		 "sleep 0.1; done", cg, cg);
	if (system(cmd))
		fprintf(stderr, "# could not remove cgroup %s\n", cg);
}

static void hog_main(int go_fd, int ready_fd, size_t bytes, int adj)
{
	char buf[16];
	char *mem;
	size_t i;
	int fd;

	snprintf(buf, sizeof(buf), "%d", adj);
	fd = open("/proc/self/oom_score_adj", O_WRONLY);
	if (fd < 0 || write(fd, buf, strlen(buf)) < 0)
		_exit(2);
	close(fd);

	if (read(go_fd, buf, 1) != 1)
		_exit(3);
	mem = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED)
		_exit(4);
	for (i = 0; i < bytes; i += 4096)
		mem[i] = 1;
	if (write(ready_fd, "r", 1) != 1)
		_exit(5);
	for (;;)
		pause();
}

int hog_spawn(struct hog *h, const char *name, const char *cg, size_t bytes,
	      int oom_score_adj)
{
	int go[2], ready[2];
	char pid[32];
	int err;

	memset(h, 0, sizeof(*h));
	h->name = name;
	if (pipe2(go, O_CLOEXEC) || pipe2(ready, O_CLOEXEC))
		return -errno;
	h->pid = fork();
	if (h->pid < 0)
		return -errno;
	if (!h->pid) {
		close(go[1]);
		close(ready[0]);
		hog_main(go[0], ready[1], bytes, oom_score_adj);
	}
	close(go[0]);
	close(ready[1]);
	h->go_fd = go[1];
	h->ready_fd = ready[0];

	snprintf(pid, sizeof(pid), "%d", h->pid);
	err = cg_write(cg, "cgroup.procs", pid);
	if (err) {
		kill(h->pid, SIGKILL);
		waitpid(h->pid, NULL, 0);
		h->reaped = true;
	}
	return err;
}

int hog_release(struct hog *h)
{
	return write(h->go_fd, "g", 1) == 1 ? 0 : -errno;
}

bool hog_wait_ready(struct hog *h, int timeout_ms)
{
	struct pollfd pfd = { .fd = h->ready_fd, .events = POLLIN };
	char c;

	if (poll(&pfd, 1, timeout_ms) != 1)
		return false;
	return read(h->ready_fd, &c, 1) == 1;
}

static bool hog_reap(struct hog *h)
{
	if (!h->reaped && waitpid(h->pid, &h->status, WNOHANG) == h->pid)
		h->reaped = true;
	return h->reaped;
}

bool hog_alive(struct hog *h)
{
	return !hog_reap(h);
}

bool hog_killed_by_sigkill(const struct hog *h)
{
	return h->reaped && WIFSIGNALED(h->status) &&
	       WTERMSIG(h->status) == SIGKILL;
}

int hogs_wait_first_death(struct hog *hogs, int n, int timeout_ms)
{
	struct timespec ts = { .tv_nsec = 10 * 1000 * 1000 };
	int waited, i;

	for (waited = 0; waited <= timeout_ms; waited += 10) {
		for (i = 0; i < n; i++)
			if (!hogs[i].reaped && hog_reap(&hogs[i]))
				return i;
		nanosleep(&ts, NULL);
	}
	return -1;
}

void hogs_kill(struct hog *hogs, int n)
{
	for (int i = 0; i < n; i++) {
		if (hogs[i].reaped || !hogs[i].pid)
			continue;
		kill(hogs[i].pid, SIGKILL);
		waitpid(hogs[i].pid, &hogs[i].status, 0);
		hogs[i].reaped = true;
	}
}

bool check(bool cond, const char *fmt, ...)
{
	va_list ap;

	printf("%s %d - ", cond ? "ok" : "not ok", nr_passed + nr_failed + 1);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
	if (cond)
		nr_passed++;
	else
		nr_failed++;
	return cond;
}

int checks_done(void)
{
	printf("1..%d\n%d passed, %d failed\n", nr_passed + nr_failed,
	       nr_passed, nr_failed);
	return nr_failed || !nr_passed ? 1 : 0;
}

void bail(const char *fmt, ...)
{
	va_list ap;

	printf("Bail out! ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	exit(1);
}
