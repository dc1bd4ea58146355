/*
 * The memcg walk (memcg_walk.c): every memory cgroup below one, read in the
 * kernel by bpf/memcg_walk.bpf.c, put in pre-order with paths for the
 * renderers (memcg_render.c).
 */
#ifndef OOMCTL_MEMCG_WALK_H
#define OOMCTL_MEMCG_WALK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cgroup.h"
#include "oom_shared.h"

/* The records of one walk, in the kernel's order */
struct walk {
	struct memcg_record *recs;
	size_t nr, cap;
	unsigned int runs;	/* BPF_PROG_TEST_RUNs */
	unsigned int restarts;	/* after -EAGAIN */
	bool oom;		/* out of memory in on_record() */
};

/* A memcg of the result, in output order */
struct node {
	const struct memcg_record *rec;
	char *path;
	unsigned int depth;	/* below the walk's root */
};

/* calloc() that exits on failure: a listing has no half-way result */
void *xcalloc(size_t n, size_t size);

/*
 * Run the walker until the walk is done: every memcg below @cg (NULL: the
 * root) in pre-order, into @w (free w->recs). Errors are reported.
 */
int walk_run(const struct cgroup_ref *cg, uint32_t flags, struct walk *w);

/*
 * The records of @w as a pre-order walk from the root record, children
 * sorted by name, with paths: @nodes gets up to w->nr entries. Returns
 * their number; duplicates and orphans (parent not seen) are left out.
 */
size_t walk_order(const struct walk *w, const char *root_path,
		  struct node *nodes);

#endif /* OOMCTL_MEMCG_WALK_H */
