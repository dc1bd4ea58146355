/*
 * Reading the OOM event log's ring (events.h): which records to copy, and
 * the seqlock check of each copy (oom_shared.h). Pure: the ring's slots
 * come through callbacks, the pinned maps in oomctl (event_backend.c), a
 * writer interleaved with the reads in test/unit/test_event_seq.c.
 */
#include <errno.h>

#include "events.h"

int events_read_ring(const struct event_ring *ring, uint64_t after,
		     struct oom_event *evs, int max, uint64_t *head)
{
	uint64_t seq, first;
	int n = 0;

	if (ring->head(ring->ctx, head))
		return -ENOENT;
	/* Only the newest @max records after @after, and only those the ring
	 * still holds: seq lives in slot (seq - 1) % OOM_EVENTS_MAX. */
	if (after >= *head)	/* nothing new; also the ~0 "head only" call */
		return 0;
	first = after + 1;
	if (*head >= OOM_EVENTS_MAX && first <= *head - OOM_EVENTS_MAX)
		first = *head - OOM_EVENTS_MAX + 1;
	if (*head >= (uint64_t)max && first <= *head - max)
		first = *head - max + 1;
	for (seq = first; seq <= *head; seq++) {
		uint32_t idx = (seq - 1) & (OOM_EVENTS_MAX - 1);
		struct oom_event probe;
		uint64_t before;

		/*
		 * The seqlock read of oom_shared.h: seq before, the copy, seq
		 * after, each its own lookup (a lookup copies a whole record,
		 * in no set order). A record being written or overwritten
		 * meanwhile fails the check and is skipped.
		 */
		if (ring->lookup(ring->ctx, idx, &probe))
			continue;
		before = probe.seq;
		if (before != seq ||
		    ring->lookup(ring->ctx, idx, &evs[n]) ||
		    ring->lookup(ring->ctx, idx, &probe))
			continue;
		if (oom_event_intact(seq, before, &evs[n], probe.seq))
			n++;
	}
	return n;
}
