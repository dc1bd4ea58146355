/*
 * What oomctl keeps in the kernel, under bpffs_dir (default
 * /sys/fs/bpf/oomctl), so that it works with no oomctl process around:
 *
 *   events, events_head, policy_kills   the OOM event log (maps)
 *   recorder/<program>                   the log's recorder (links)
 *   policies                             registry: name -> struct policy_meta
 *   policy_names                         cookie -> name, kept after detach
 *   policy/<name>/<program>              an attached policy (links)
 *
 * PSI triggers live in the kernel itself (/proc/pressure/bpf_triggers).
 */
#ifndef OOMCTL_STATE_H
#define OOMCTL_STATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "oom_shared.h"

#define POLICY_NAME_LEN		32
#define POLICY_SOURCE_LEN	128

enum policy_hook {
	HOOK_OOM = 1,		/* bpf_handle_out_of_memory */
	HOOK_PSI = 2,		/* bpf_handle_psi_event */
};

#define POLICY_DRY_RUN		(1U << 0)

struct policy_meta {
	char name[POLICY_NAME_LEN];
	char source[POLICY_SOURCE_LEN];	/* "built-in" or the object's path */
	uint64_t cookie;		/* attach cookie, names its kills */
	uint64_t scope_id;		/* 0: system-wide */
	uint64_t attach_time_ns;	/* CLOCK_REALTIME */
	uint32_t hooks;			/* enum policy_hook bits */
	uint32_t flags;
};

/*
 * Check the kernel has the BPF OOM hooks: 0, or -EOPNOTSUPP reported. It
 * parses the kernel's BTF: call it to explain a failed load, not up front.
 */
int kernel_check(void);

/* Make sure bpffs is mounted and our folder exists: 0 or -errno reported. */
int state_init(void);

/* bpffs_dir + "/" + the formatted rest */
int state_path(char *buf, size_t size, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Remove a folder of our pins and the pins in it (bpffs: unlink, rmdir). */
int state_unpin_dir(const char *dir);

/* Serialize commands that change the state (flock on the folder). */
int state_lock(void);

/* Load and pin the event log and its recorder unless they are there. */
int recorder_ensure(void);

/* fd of a pinned map of ours ("events", "policies", ...), or -errno. */
int state_map_fd(const char *name);

/* The policy registry. */
int registry_fd(bool create);
int registry_get(const char *name, struct policy_meta *meta);
/* Fill @metas (sorted by attach time); returns the count or -errno. */
int registry_list(struct policy_meta *metas, int max);
int policy_names_fd(bool create);
const char *policy_name_of_cookie(uint64_t cookie, char *buf, size_t size);

/* BPF_PROG_TEST_RUN of a syscall program on @ctx (in and out). */
int syscall_prog_run(int prog_fd, void *ctx, size_t size);

/* Enable libbpf's verifier log for an object when -d was given. */
struct bpf_object_open_opts;
void open_opts_debug(struct bpf_object_open_opts *opts);

/* "/a/b" for a cgroup id ("/" for the root), "(removed #ID)" if gone. */
const char *cgroup_path_of_id(uint64_t id, char *buf, size_t size);

/* CLOCK_BOOTTIME ns (BPF's bpf_ktime_get_boot_ns) to CLOCK_REALTIME ns */
uint64_t boot_to_realtime(uint64_t boot_ns);

/*
 * Records of the event log after seq @after, oldest first, at most @max
 * (the newest ones); *head gets the log's head. Returns the count or -errno.
 */
int events_read(uint64_t after, struct oom_event *evs, int max, uint64_t *head);
/* One record as a line (plain) or an object (JSON) */
void event_print(const struct oom_event *e);

#endif /* OOMCTL_STATE_H */
