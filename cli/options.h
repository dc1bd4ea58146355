/*
 * What oomctl's global options set (main.c), for the front ends and the
 * backends alike. Nothing of the command line's own is here: that is
 * main.h, which no backend includes.
 */
#ifndef OOMCTL_OPTIONS_H
#define OOMCTL_OPTIONS_H

#include <stdbool.h>

#define OOMCTL_BPFFS_DEFAULT	"/sys/fs/bpf/oomctl"
#define OOMCTL_CGROUPFS_DEFAULT	"/sys/fs/cgroup"

#ifndef __maybe_unused
#define __maybe_unused		__attribute__((unused))
#endif
#define __str(x)		#x
#define __stringify(x)		__str(x)

extern bool debug;		/* -d: libbpf and verifier logs on stderr */
extern const char *bpffs_dir;	/* --bpffs: where oomctl pins live */
extern const char *cgroupfs_dir;	/* --cgroupfs: the cgroup2 mount */

#endif /* OOMCTL_OPTIONS_H */
