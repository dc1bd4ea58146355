/*
 * Unit test of the OOM event log's reader, events_read_ring() of
 * cli/event_ring.c, the code oomctl runs: its seqlock check
 * (bpf/oom_shared.h's oom_event_intact()) against a writer interleaved with
 * its lookups in every possible order, which must never let a torn record
 * pass; and which records it reads from a ring of any head.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "events.h"
#include "tap.h"

/* The modelled part of a record: seq and three data words */
enum { W_SEQ, W_TIME, W_RSS, W_CGROUP, NR_WORDS };

static u64 *word(struct oom_event *e, int w)
{
	switch (w) {
	case W_SEQ: return &e->seq;
	case W_TIME: return &e->time_ns;
	case W_RSS: return &e->rss_bytes;
	default: return &e->cgroup_id;
	}
}

/* What the writer of record @seq stores in data word @w */
static uint64_t value(uint64_t seq, int w)
{
	return seq * 10 + (uint64_t)w;
}

static void committed(struct oom_event *e, uint64_t seq)
{
	memset(e, 0, sizeof(*e));
	for (int w = W_TIME; w < NR_WORDS; w++)
		*word(e, w) = value(seq, w);
	e->seq = seq;
}

/* Writer step @i of record @seq (oom_event_begin/commit): seq 0, the data
 * words one by one, seq last */
#define WRITER_STEPS	(NR_WORDS + 1)
static void writer_step(struct oom_event *slot, uint64_t seq, int i)
{
	if (i == 0)
		slot->seq = 0;
	else if (i < NR_WORDS)
		*word(slot, i) = value(seq, i);
	else
		slot->seq = seq;
}

/* The reader's steps: three lookups (seq before, the copy, seq after),
 * each a copy of the record's words in some order */
#define LOOKUPS		3
#define READER_STEPS	(LOOKUPS * NR_WORDS)
#define TOTAL_STEPS	(READER_STEPS + WRITER_STEPS)

struct outcome {
	int accepted, torn_accepted, old_torn_accepted;
};

/* One slot, holding record @old, that a writer of record @writing
 * overwrites in its steps, placed among the reader's where @mask has bits
 * set (bit k: step k of the merged sequence is the writer's) */
struct interleaved {
	struct oom_event slot;
	uint64_t head, writing;
	uint32_t idx;			/* the slot the reader must read */
	const int *order;		/* the order a lookup copies the words */
	unsigned int mask;
	int step, written, lookups, wrong_slot;
	struct oom_event middle;	/* the second lookup's copy */
};

static void writer_turns(struct interleaved *r)
{
	while (r->step < TOTAL_STEPS && (r->mask & (1u << r->step))) {
		writer_step(&r->slot, r->writing, r->written++);
		r->step++;
	}
}

static int interleaved_head(void *ctx, uint64_t *head)
{
	*head = ((struct interleaved *)ctx)->head;
	return 0;
}

static int interleaved_lookup(void *ctx, uint32_t idx, struct oom_event *e)
{
	struct interleaved *r = ctx;

	r->wrong_slot |= idx != r->idx;
	memset(e, 0, sizeof(*e));
	for (int i = 0; i < NR_WORDS; i++) {
		writer_turns(r);
		*word(e, r->order[i]) = *word(&r->slot, r->order[i]);
		r->step++;
	}
	if (r->lookups++ == 1)
		r->middle = *e;
	return 0;
}

/* events_read_ring() of record @want, from a slot holding @old that a
 * writer of @writing overwrites as @mask says */
static void run(uint64_t old, uint64_t writing, uint64_t want,
		const int order[NR_WORDS], unsigned int mask,
		struct outcome *out)
{
	struct interleaved r = {
		.head = want, .writing = writing, .order = order,
		.idx = (want - 1) & (OOM_EVENTS_MAX - 1), .mask = mask,
	};
	struct event_ring ring = {
		.head = interleaved_head, .lookup = interleaved_lookup,
		.ctx = &r,
	};
	struct oom_event got, whole;
	uint64_t head;
	int n, torn;

	committed(&r.slot, old);
	n = events_read_ring(&ring, want - 1, &got, 1, &head);
	committed(&whole, want);
	torn = memcmp(&got, &whole, sizeof(got)) != 0;
	out->accepted += n == 1 && !r.wrong_slot;
	out->torn_accepted += n == 1 && (torn || r.wrong_slot);
	/* What checking the copy's own seq alone would have let through */
	torn = memcmp(&r.middle, &whole, sizeof(whole)) != 0;
	out->old_torn_accepted += r.lookups > 1 && r.middle.seq == want && torn;
}

/* Every interleaving of the writer's steps into the reader's, for every
 * position of seq in the copy order */
static void all_orders(uint64_t old, uint64_t writing, uint64_t want,
		       struct outcome *out)
{
	memset(out, 0, sizeof(*out));
	for (int seq_at = 0; seq_at < NR_WORDS; seq_at++) {
		int order[NR_WORDS], n = 0;

		for (int w = W_TIME; w < NR_WORDS; w++) {
			if (n == seq_at)
				order[n++] = W_SEQ;
			order[n++] = w;
		}
		if (n == seq_at)
			order[n++] = W_SEQ;
		for (unsigned int mask = 0; mask < 1u << TOTAL_STEPS; mask++)
			if (__builtin_popcount(mask) == WRITER_STEPS)
				run(old, writing, want, order, mask, out);
	}
}

static void test_intact(void)
{
	struct oom_event e;

	committed(&e, 5);
	ok(oom_event_intact(5, 5, &e, 5), "intact: seq the same throughout");
	ok(!oom_event_intact(5, 0, &e, 5), "intact: a writer inside before");
	ok(!oom_event_intact(5, 5, &e, 0), "intact: a writer began meanwhile");
	ok(!oom_event_intact(5, 5, &e, 5 + OOM_EVENTS_MAX),
	   "intact: slot reused meanwhile");
	ok(!oom_event_intact(6, 6, &e, 6), "intact: the copy is another record");
	e.seq = 0;
	ok(!oom_event_intact(0, 0, &e, 0), "intact: seq 0 is never a record");
}

static void test_interleavings(void)
{
	/* The slot holds record 1; the writer writes 1 + OOM_EVENTS_MAX */
	static const struct {
		const char *what;
		uint64_t want;
	} cases[] = {
		{ "overwrite (read record 1)", 1 },
		{ "first write (read the new record)", 1 + OOM_EVENTS_MAX },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct outcome o;

		all_orders(1, 1 + OOM_EVENTS_MAX, cases[i].want, &o);
		is_int(o.torn_accepted, 0, "%s: no torn copy accepted",
		       cases[i].what);
		ok(o.accepted > 0, "%s: undisturbed reads accepted (%d)",
		   cases[i].what, o.accepted);
		/* else these interleavings could not tell the seqlock check
		 * from a check of the copy's own seq; a reader that goes on
		 * only after seeing the new record's seq sees it whole */
		if (cases[i].want == 1)
			ok(o.old_torn_accepted > 0,
			   "%s: the copy's seq alone would let torn copies pass (%d)",
			   cases[i].what, o.old_torn_accepted);
	}
}

/* A quiet ring whose head is @head: each slot holds its newest record */
static int ring_head(void *ctx, uint64_t *head)
{
	const uint64_t *h = ctx;

	if (!*h)
		return -ENOENT;	/* stands for a head that cannot be read */
	*head = *h;
	return 0;
}

static int ring_lookup(void *ctx, uint32_t idx, struct oom_event *e)
{
	uint64_t head = *(const uint64_t *)ctx, seq = idx + 1;

	while (seq + OOM_EVENTS_MAX <= head)
		seq += OOM_EVENTS_MAX;
	committed(e, seq);
	return 0;
}

static struct oom_event evs[OOM_EVENTS_MAX];

/* Which records events_read_ring() returns for a head, after and max */
static void test_window(void)
{
	static const struct {
		const char *what;
		uint64_t head, after;
		int max, n;
		uint64_t first;
	} cases[] = {
		{ "a young ring, all", 10, 0, OOM_EVENTS_MAX, 10, 1 },
		{ "after 7: 8 to 10", 10, 7, OOM_EVENTS_MAX, 3, 8 },
		{ "a wrapped ring: the last 4096", OOM_EVENTS_MAX + 10, 0,
		  OOM_EVENTS_MAX, OOM_EVENTS_MAX, 11 },
		{ "a wrapped ring, max 5: the newest 5", OOM_EVENTS_MAX + 10, 0,
		  5, 5, OOM_EVENTS_MAX + 6 },
		{ "after an overwritten record: what is left", 3 * OOM_EVENTS_MAX,
		  100, OOM_EVENTS_MAX, OOM_EVENTS_MAX, 2 * OOM_EVENTS_MAX + 1 },
		{ "after the head: nothing", 10, 10, OOM_EVENTS_MAX, 0, 0 },
		{ "the head only (after ~0)", 10, ~0ULL, 1, 0, 0 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint64_t h = cases[i].head, head = 0;
		struct event_ring ring = {
			.head = ring_head, .lookup = ring_lookup, .ctx = &h,
		};
		int n = events_read_ring(&ring, cases[i].after, evs,
					 cases[i].max, &head);
		bool in_order = true;

		for (int k = 1; k < n; k++)
			in_order &= evs[k].seq == evs[k - 1].seq + 1;
		is_int(n, cases[i].n, "window: %s: %d records", cases[i].what,
		       cases[i].n);
		ok(!n || (evs[0].seq == cases[i].first &&
			  evs[n - 1].seq == cases[i].head && in_order),
		   "window: %s: from %llu to the head, in order", cases[i].what,
		   (unsigned long long)cases[i].first);
		ok(head == cases[i].head, "window: %s: the head is reported",
		   cases[i].what);
	}
	{
		uint64_t h = 0, head;
		struct event_ring ring = {
			.head = ring_head, .lookup = ring_lookup, .ctx = &h,
		};

		is_int(events_read_ring(&ring, 0, evs, 1, &head), -ENOENT,
		       "window: no head: -ENOENT");
	}
}

int main(void)
{
	test_intact();
	test_interleavings();
	test_window();
	return tap_done("test_event_seq");
}
