/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers for the scenarios that drive test/vm/progs/named_victim.bpf.c:
 * instances of the test policy, declared OOMs, and a way to keep a killed
 * task from running (and so from exiting) while the scenario works.
 */
#ifndef __POLICY_UTIL_H
#define __POLICY_UTIL_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "named_victim.h"
#include "named_victim.skel.h"

#define EALREADY_	114

/*
 * Load an instance of the test policy. @shared_seq_fd (or -1) is the run_seq
 * map of an earlier instance, so that all instances number their runs in one
 * sequence; @tracer loads the kill tracer too.
 */
struct named_victim_bpf *policy_load(int shared_seq_fd, bool tracer);
/* Attach its OOM policy with @cookie; the link, or NULL (bails) */
struct bpf_link *policy_attach(struct named_victim_bpf *skel, uint64_t cookie);
/* Attach the tracer programs */
void tracer_attach(struct named_victim_bpf *skel);

/* Load the oom_declare syscall program (before starving: loading sleeps) */
void declare_init(void);
/* bpf_out_of_memory() in the cgroup @cgid (0: system-wide), order 0 */
int declare(uint64_t cgid);

/*
 * Starving: the scenario runs SCHED_FIFO on CPU 0 with RT throttling off,
 * and a task made starvable (pinned to CPU 0, SCHED_FIFO at a lower
 * priority) cannot run there, not even to die of a SIGKILL, until
 * starve_end(). Meanwhile the scenario must not block: it may spin and make
 * syscalls that do not sleep. The OOM reaper (a kernel thread, made
 * SCHED_FIFO above us) still runs, so a starved OOM victim is reaped but
 * stays alive.
 */
void starve_setup(void);
void make_starvable(pid_t pid);
void starve_begin(void);
void starve_end(void);
/* Busy-wait @ms milliseconds without sleeping */
void spin_ms(int ms);
/* Resident memory of @pid in KiB from /proc/PID/statm, -1 if gone */
long rss_kib(pid_t pid);

#endif /* __POLICY_UTIL_H */
