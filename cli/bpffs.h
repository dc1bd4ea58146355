/*
 * What oomctl keeps in the kernel, under bpffs_dir (default
 * /sys/fs/bpf/oomctl), so that it works with no oomctl process around:
 *
 *   events, events_head, policy_kills   the OOM event log (maps)
 *   recorder/<program>                   the log's recorder (links)
 *   policies                             registry: name -> struct policy_meta
 *   policy_names                         cookie -> name, kept after detach
 *   policy/<name>/<program>              an attached policy (links)
 *   walker/{memcg_walk,records,object}   the memcg walker: program, ring,
 *                                        its object's hash (memcg_walk.c)
 *
 * PSI triggers live in the kernel itself (/proc/pressure/bpf_triggers).
 */
#ifndef OOMCTL_BPFFS_H
#define OOMCTL_BPFFS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "oom_shared.h"

#define POLICY_NAME_LEN		32
#define POLICY_SOURCE_LEN	4096	/* PATH_MAX */

enum policy_hook {
	HOOK_OOM = 1,		/* bpf_handle_out_of_memory */
	HOOK_PSI = 2,		/* bpf_handle_psi_event */
};

#define POLICY_DRY_RUN		(1U << 0)
/* A cgroup policy (struct bpf_oom_ops): the kernel asks it at its scope's
 * cgroup, the deepest first, before the OOM hook's programs */
#define POLICY_CGROUP_OPS	(1U << 1)
/*
 * Recorded before its first link is made, cleared once every link is pinned
 * under policy/NAME. An attach that died in between (oomctl itself killed)
 * leaves the policy listed as incomplete, and detach removes it: its links
 * are pinned under policy/NAME or still in the scratch folder policy-new/NAME.
 */
#define POLICY_ATTACHING	(1U << 2)
/* Attached with kill-unit: the victim's whole unit is killed with it */
#define POLICY_KILL_UNIT	(1U << 3)

struct policy_meta {
	char name[POLICY_NAME_LEN];
	char source[POLICY_SOURCE_LEN];	/* "built-in" or the object's path */
	uint64_t cookie;		/* attach cookie, names its kills */
	uint64_t scope_id;		/* 0: system-wide */
	uint64_t attach_time_ns;	/* CLOCK_REALTIME */
	uint32_t hooks;			/* enum policy_hook bits */
	uint32_t flags;
	/* The object file as attached, for apply to see it changed: its
	 * size and CRC-32 (an upgrade keeps the mtime, dpkg and install -p
	 * do) */
	uint64_t source_size;
	uint32_t source_crc32;
	/* Where its own `__u64 nr_runs` sits in its .bss (pinned as
	 * policy/NAME/map-bss), -1 if it counts none */
	int32_t runs_offset;
};

/*
 * The built-in policy that a policy named @name with @source (its meta's)
 * runs: @name for "built-in", KIND for "built-in:KIND" (an instance with a
 * name of its own); NULL for an object file.
 */
const char *policy_source_builtin(const char *source, const char *name);

/*
 * The size and CRC-32 of the file at @path, read whole: 0, or -errno (not
 * reported).
 */
int file_digest(const char *path, uint64_t *size, uint32_t *crc32);

/* Make sure bpffs is mounted and our folder exists: 0 or -errno reported. */
int state_init(void);

/* bpffs_dir + "/" + the formatted rest */
int state_path(char *buf, size_t size, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Remove a folder of our pins and the pins in it (bpffs: unlink, rmdir). */
int state_unpin_dir(const char *dir);

/* Pin @link at @pin and drop our hold of it: attached while pinned; if the
 * pin fails, detached and said. 0 or -errno. */
struct bpf_link;
int link_pin_release(struct bpf_link *link, const char *pin);

/* Serialize commands that change the state (flock on the folder). */
int state_lock(void);

/* Load and pin the event log and its recorder unless they are there. */
int recorder_ensure(void);

/* fd of a pinned map of ours ("events", "policies", ...), or -errno. */
int state_map_fd(const char *name);

/* A map oomctl makes itself and pins under bpffs_dir */
struct state_map_def {
	const char *pin;		/* its name under bpffs_dir */
	const char *name;		/* the kernel's name for it */
	const char *what;		/* for errors; NULL: fail silently */
	unsigned int type;		/* enum bpf_map_type */
	uint32_t key_size, value_size, max_entries;
	uint32_t flags;			/* map_flags */
};

/* fd of the pinned map, made and pinned first if @create; or -errno. */
int state_map_get(const struct state_map_def *def, bool create);

/* The policy registry. */
int registry_fd(bool create);
int registry_get(const char *name, struct policy_meta *meta);
/* Size of the registry map: how many policies can be attached at once */
#define REGISTRY_MAX		256
/*
 * The attached policies, sorted by attach time, in *@metas (free() it):
 * returns the count, or -ENOMEM reported.
 */
int registry_list(struct policy_meta **metas);
/*
 * The path of a scoped policy's cgroup when it was attached, by policy name,
 * so that a removed scope is still named; set and get return 0 or -errno,
 * not reported (a missing path is no reason to fail).
 */
int scope_path_set(const char *name, const char *path);
int scope_path_get(const char *name, char *buf, size_t size);
void scope_path_drop(const char *name);
int policy_names_fd(bool create);
/*
 * The programs of policy @name's pinned links (policy/NAME/): their prog ids
 * in @prog_ids and link ids in @link_ids (either may be NULL), at most @max;
 * returns the count.
 */
int policy_link_progs(const char *name, uint32_t *prog_ids, uint32_t *link_ids,
		      int max);
const char *policy_name_of_cookie(uint64_t cookie, char *buf, size_t size);

#endif /* OOMCTL_BPFFS_H */
