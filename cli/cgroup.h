/* Cgroups named on the command line, and cgroup ids named back. */
#ifndef OOMCTL_CGROUP_H
#define OOMCTL_CGROUP_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

/*
 * A cgroup named on the command line. cgroup_parse() checks the syntax
 * (usage error), cgroup_resolve() looks it up (runtime error); handlers
 * parse every argument before resolving any, so bad syntax is always
 * exit 2 whatever the machine has.
 */
struct cgroup_ref {
	const char *arg;	/* as typed */
	char path[PATH_MAX];	/* "/a/b", relative to cgroupfs_dir */
	char fspath[PATH_MAX];	/* cgroupfs_dir + path */
	uint64_t id;		/* set by cgroup_resolve() */
};

int cgroup_parse(const char *arg, struct cgroup_ref *cg);
int cgroup_resolve(struct cgroup_ref *cg);

/* "/a/b" for a cgroup id ("/" for the root), "(removed #ID)" if gone. */
const char *cgroup_path_of_id(uint64_t id, char *buf, size_t size);

#endif /* OOMCTL_CGROUP_H */
