/* The OOM event log: reading its records (event_backend.c, event_ring.c). */
#ifndef OOMCTL_EVENTS_H
#define OOMCTL_EVENTS_H

#include <stdint.h>

#include "oom_shared.h"

/*
 * Records of the event log after seq @after, oldest first, at most @max
 * (the newest ones); *head gets the log's head. Returns the count or -errno.
 */
int events_read(uint64_t after, struct oom_event *evs, int max, uint64_t *head);

/* Where events_read_ring() reads (event_ring.c): the pinned maps, or a test */
struct event_ring {
	int (*head)(void *ctx, uint64_t *head);		/* 0 or -errno */
	/* A copy of slot @idx into @e: 0 or -errno */
	int (*lookup)(void *ctx, uint32_t idx, struct oom_event *e);
	void *ctx;
};

/* events_read() on @ring */
int events_read_ring(const struct event_ring *ring, uint64_t after,
		     struct oom_event *evs, int max, uint64_t *head);

#endif /* OOMCTL_EVENTS_H */
