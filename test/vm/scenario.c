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
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/capability.h>

#include "scenario.h"

#define CGROOT "/sys/fs/cgroup"

static int nr_passed, nr_failed;

/*
 * What the last hog queries saw, one line per hog, printed as "# " lines
 * under the next check if it fails: "the hog was killed" failing then says
 * whether it is alive, exited (and why) or died of another signal.
 */
#define NR_NOTES 16
static struct {
	const void *key;
	char text[128];
} notes[NR_NOTES];

static void note(const void *key, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void note(const void *key, const char *fmt, ...)
{
	va_list ap;
	int i;

	for (i = 0; i < NR_NOTES && notes[i].key && notes[i].key != key; i++)
		;
	if (i == NR_NOTES)
		return;	/* the first notes are kept: more are noise */
	notes[i].key = key;
	va_start(ap, fmt);
	vsnprintf(notes[i].text, sizeof(notes[i].text), fmt, ap);
	va_end(ap);
}

static void notes_flush(bool show)
{
	for (int i = 0; i < NR_NOTES && notes[i].key; i++) {
		if (show)
			printf("#   %s\n", notes[i].text);
		notes[i].key = NULL;
	}
}

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

int hog_set_adj(const char *adj)
{
	int fd, ret = 0;

	fd = open("/proc/self/oom_score_adj", O_WRONLY);
	if (fd < 0)
		return -errno;
	if (write(fd, adj, strlen(adj)) < 0)
		ret = -errno;
	close(fd);
	return ret;
}

int hog_fill(size_t bytes)
{
	long page = sysconf(_SC_PAGESIZE);
	char *mem;

	mem = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED)
		return -errno;
	for (size_t i = 0; i < bytes; i += page)
		mem[i] = 1;
	return 0;
}

/* The hog's exit statuses, for the notes */
enum { HOG_ADJ = 2, HOG_GO, HOG_MMAP, HOG_READY };
static const char *const hog_why[] = {
	[HOG_ADJ] = "cannot set oom_score_adj",
	[HOG_GO] = "no go from the parent",
	[HOG_MMAP] = "mmap failed",
	[HOG_READY] = "cannot report ready",
};

static void hog_main(int go_fd, int ready_fd, size_t bytes, int adj)
{
	char buf[16];

	snprintf(buf, sizeof(buf), "%d", adj);
	if (hog_set_adj(buf))
		_exit(HOG_ADJ);
	if (read(go_fd, buf, 1) != 1)
		_exit(HOG_GO);
	if (hog_fill(bytes))
		_exit(HOG_MMAP);
	if (write(ready_fd, "r", 1) != 1)
		_exit(HOG_READY);
	for (;;)
		pause();
}

/* Note the hog's state (after a reap attempt) for a failing check */
static void hog_note(struct hog *h, const char *extra)
{
	int st = h->status, code = WEXITSTATUS(h->status);

	if (!h->reaped)
		note(h, "hog %s (pid %d): alive%s", h->name, h->pid, extra);
	else if (WIFSIGNALED(st))
		note(h, "hog %s (pid %d): killed by signal %d (%s)%s", h->name,
		     h->pid, WTERMSIG(st), strsignal(WTERMSIG(st)), extra);
	else
		note(h, "hog %s (pid %d): exited %d%s%s%s", h->name, h->pid, code,
		     code >= HOG_ADJ && code <= HOG_READY ? " (" : "",
		     code >= HOG_ADJ && code <= HOG_READY ? hog_why[code] : "",
		     code >= HOG_ADJ && code <= HOG_READY ? ")" : "");
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

static bool hog_reap(struct hog *h)
{
	if (!h->reaped && waitpid(h->pid, &h->status, WNOHANG) == h->pid)
		h->reaped = true;
	return h->reaped;
}

bool hog_wait_ready(struct hog *h, int timeout_ms)
{
	struct pollfd pfd = { .fd = h->ready_fd, .events = POLLIN };
	char c;

	if (poll(&pfd, 1, timeout_ms) == 1 && read(h->ready_fd, &c, 1) == 1)
		return true;
	/* a dead hog's pipe reads EOF: give it time to be reaped */
	for (int i = 0; i < 10 && !hog_reap(h); i++)
		usleep(10000);
	hog_note(h, ", not ready");
	return false;
}

bool hog_alive(struct hog *h)
{
	bool alive = !hog_reap(h);

	hog_note(h, "");
	return alive;
}

bool task_unkilled(pid_t pid)
{
	unsigned long long pending, sigkill = 1ULL << (SIGKILL - 1);
	unsigned int flags;
	char path[64], line[512], state, *p;
	bool unkilled;
	FILE *f;

	/* stat: ... ) STATE PPID PGRP SESSION TTY TPGID FLAGS ... */
	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	f = fopen(path, "r");
	if (!f)
		return false;
	p = fgets(line, sizeof(line), f) ? strrchr(line, ')') : NULL;
	fclose(f);
	if (!p || sscanf(p + 1, " %c %*d %*d %*d %*d %*d %u", &state, &flags) != 2)
		return false;
	/* PF_EXITING: it took its SIGKILL, or exits anyway */
	unkilled = state != 'Z' && state != 'X' && !(flags & 0x4);
	/* SigPnd (the thread's) and ShdPnd (the process'), in hex */
	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	f = unkilled ? fopen(path, "r") : NULL;
	if (unkilled && !f)
		return false;
	while (f && fgets(line, sizeof(line), f))
		if ((sscanf(line, "SigPnd: %llx", &pending) == 1 ||
		     sscanf(line, "ShdPnd: %llx", &pending) == 1) &&
		    (pending & sigkill))
			unkilled = false;
	if (f)
		fclose(f);
	return unkilled;
}

bool hog_unkilled(struct hog *h)
{
	bool unkilled = !hog_reap(h) && task_unkilled(h->pid);

	hog_note(h, unkilled ? "" : ", sent SIGKILL");
	return unkilled;
}

bool hog_killed_by_sigkill(struct hog *h)
{
	hog_reap(h);
	hog_note(h, "");
	return h->reaped && WIFSIGNALED(h->status) &&
	       WTERMSIG(h->status) == SIGKILL;
}

int hogs_wait_first_death(struct hog *hogs, int n, int timeout_ms)
{
	struct timespec ts = { .tv_nsec = 10 * 1000 * 1000 };
	int waited, i;

	for (waited = 0; waited <= timeout_ms; waited += 10) {
		for (i = 0; i < n; i++)
			if (!hogs[i].reaped && hog_reap(&hogs[i])) {
				hog_note(&hogs[i], ", the first to die");
				return i;
			}
		nanosleep(&ts, NULL);
	}
	for (i = 0; i < n; i++)
		hog_note(&hogs[i], "");
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
	notes_flush(!cond);
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
	notes_flush(true);
	exit(1);
}

/* The kernel's count of OOM kills (/proc/vmstat oom_kill), or -1 */
long vmstat_oom_kill(void)
{
	char line[128];
	long val = -1;
	FILE *f = fopen("/proc/vmstat", "r");

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "oom_kill %ld", &val) == 1)
			break;
	if (f)
		fclose(f);
	return val;
}

int caps_set_effective(unsigned long long caps)
{
	struct __user_cap_header_struct hdr = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct data[2] = {};

	if (syscall(SYS_capget, &hdr, data))
		return -errno;
	data[0].effective = (unsigned int)caps & data[0].permitted;
	data[1].effective = (unsigned int)(caps >> 32) & data[1].permitted;
	return syscall(SYS_capset, &hdr, data) ? -errno : 0;
}

/* Whether the kernel's log has a line with @needle */
bool kmsg_has(const char *needle)
{
	char rec[2048];
	bool found = false;
	ssize_t n;
	int fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK);

	if (fd < 0)
		return false;
	while (!found && (n = read(fd, rec, sizeof(rec) - 1)) != 0) {
		if (n < 0) {
			if (errno == EPIPE)	/* overwritten: read on */
				continue;
			break;
		}
		rec[n] = '\0';
		found = strstr(rec, needle);
	}
	close(fd);
	return found;
}
