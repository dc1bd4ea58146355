/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers for the VM scenarios: cgroups under /sys/fs/cgroup, an exact memory
 * hog, and TAP-style checks that count passes and failures.
 */
#ifndef __SCENARIO_H
#define __SCENARIO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define MiB (1024UL * 1024)

/* A child that charges exactly @bytes of anonymous memory when released. */
struct hog {
	const char *name;
	pid_t pid;
	int go_fd;		/* write a byte: start allocating */
	int ready_fd;		/* reads a byte once all memory is touched */
	int status;		/* wait status once reaped */
	bool reaped;
};

int cg_create(const char *cg);
int cg_write(const char *cg, const char *file, const char *val);
int cg_read(const char *cg, const char *file, char *buf, size_t size);
long cg_read_key(const char *cg, const char *file, const char *key);
/* The kernel's count of OOM kills (/proc/vmstat oom_kill), or -1 */
long vmstat_oom_kill(void);
uint64_t cg_id(const char *cg);
/* Kill everything below @cg and remove it, deepest first. */
void cg_destroy(const char *cg);

/* What every hog does, also test/vm/hog (for the shell scenarios) */
int hog_set_adj(const char *oom_score_adj);
/* Touch @bytes of fresh anonymous memory, every page of it */
int hog_fill(size_t bytes);

/*
 * The hog queries below note the hog's state (alive, exit status, signal);
 * the next check prints the notes if it fails, and bail() always does.
 */
/* Fork a hog in cgroup @cg that will allocate @bytes with @oom_score_adj. */
int hog_spawn(struct hog *h, const char *name, const char *cg, size_t bytes,
	      int oom_score_adj);
int hog_release(struct hog *h);
/* Wait until the hog touched all its memory; false if it died or timed out. */
bool hog_wait_ready(struct hog *h, int timeout_ms);
bool hog_alive(struct hog *h);
bool hog_killed_by_sigkill(struct hog *h);
/*
 * Whether task @pid was sent no SIGKILL: it lives, is not exiting, and has
 * none pending. Right after an OOM handled synchronously (a declared one),
 * this tells a survivor without waiting for a victim to die; it can miss a
 * kill only in the moment between the task taking SIGKILL and its exit.
 */
bool task_unkilled(pid_t pid);
bool hog_unkilled(struct hog *h);
/* Index of the first of @n hogs to die within @timeout_ms, or -1. */
int hogs_wait_first_death(struct hog *hogs, int n, int timeout_ms);
void hogs_kill(struct hog *hogs, int n);

/*
 * Make @caps (a mask of 1ULL << CAP_*) the effective capabilities, as far
 * as the permitted set allows; 0 or -errno.
 */
#define CAPS_ALL (~0ULL)
int caps_set_effective(unsigned long long caps);

/* Whether the kernel's log (/dev/kmsg) has a record with @needle */
bool kmsg_has(const char *needle);

/* TAP-style: "ok N - what" / "not ok N - what" */
bool check(bool cond, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Print the plan and "N passed, N failed"; the exit status to return. */
int checks_done(void);
void bail(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

#endif /* __SCENARIO_H */
