/*
 * Unit test of the OOM event log's seqlock protocol (bpf/oom_shared.h):
 * oom_event_intact(), and a model of one writer and one reader interleaved
 * in every possible order, which must never let a torn record pass.
 */
#include <stdint.h>
#include <string.h>

#include "oom_shared.h"
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

/* Reader steps (events_read): seq before, the NR_WORDS words of the copy
 * in the order @order, seq after */
#define READER_STEPS	(NR_WORDS + 2)

struct outcome {
	int accepted, torn_accepted, old_torn_accepted;
};

/*
 * Run the reader of record @want against a writer of record @writing on a
 * slot holding record @old, the writer's steps placed where @mask has bits
 * set (bit k: step k of the merged sequence is the writer's).
 */
static void run(uint64_t old, uint64_t writing, uint64_t want,
		const int order[NR_WORDS], unsigned mask, struct outcome *out)
{
	struct oom_event slot, copy, whole;
	uint64_t before = 0, after = 0;
	int r = 0, wr = 0, intact, torn;

	committed(&slot, old);
	memset(&copy, 0, sizeof(copy));
	for (int k = 0; k < READER_STEPS + WRITER_STEPS; k++) {
		if (mask & (1u << k)) {
			writer_step(&slot, writing, wr++);
			continue;
		}
		if (r == 0)
			before = slot.seq;
		else if (r <= NR_WORDS)
			*word(&copy, order[r - 1]) = *word(&slot, order[r - 1]);
		else
			after = slot.seq;
		r++;
	}
	committed(&whole, want);
	torn = memcmp(&copy, &whole, sizeof(copy)) != 0;
	intact = oom_event_intact(want, before, &copy, after);
	out->accepted += intact;
	out->torn_accepted += intact && torn;
	/* The old reader: the copy's own seq alone */
	out->old_torn_accepted += copy.seq == want && torn;
}

/* Every interleaving of the writer's steps into the reader's, for every
 * position of seq in the copy order */
static void all_orders(uint64_t old, uint64_t writing, uint64_t want,
		       struct outcome *out)
{
	const int total = READER_STEPS + WRITER_STEPS;

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
		for (unsigned mask = 0; mask < 1u << total; mask++)
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
		/* else the model could not tell the new check from the old */
		ok(o.old_torn_accepted > 0,
		   "%s: the old check let torn copies pass (%d)",
		   cases[i].what, o.old_torn_accepted);
	}
}

int main(void)
{
	test_intact();
	test_interleavings();
	return tap_done("test_event_seq");
}
