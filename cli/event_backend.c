/* event list/watch: the OOM event log kept in the kernel (recorder.bpf.c). */
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>

#include "backend.h"
#include "bpffs.h"
#include "events.h"

struct map_ring {
	int events_fd, head_fd;
};

static int map_ring_head(void *ctx, uint64_t *head)
{
	struct map_ring *m = ctx;
	uint32_t zero = 0;

	return bpf_map_lookup_elem(m->head_fd, &zero, head) ? -errno : 0;
}

static int map_ring_lookup(void *ctx, uint32_t idx, struct oom_event *e)
{
	struct map_ring *m = ctx;

	return bpf_map_lookup_elem(m->events_fd, &idx, e) ? -errno : 0;
}

int events_read(uint64_t after, struct oom_event *evs, int max, uint64_t *head)
{
	struct map_ring m = {
		.events_fd = state_map_fd("events"),
		.head_fd = state_map_fd("events_head"),
	};
	struct event_ring ring = {
		.head = map_ring_head, .lookup = map_ring_lookup, .ctx = &m,
	};
	int n = -ENOENT;

	if (m.events_fd >= 0 && m.head_fd >= 0)
		n = events_read_ring(&ring, after, evs, max, head);
	if (m.events_fd >= 0)
		close(m.events_fd);
	if (m.head_fd >= 0)
		close(m.head_fd);
	return n;
}

/* The log exists once the recorder is attached; attach it on first use. */
static int events_open(void)
{
	return state_init() ?: recorder_ensure();
}

int event_list(const struct event_list_opts *opts, const struct oom_event **evsp)
{
	static struct oom_event evs[OOM_EVENTS_MAX];
	uint64_t head;
	int n, err;

	err = events_open();
	if (err)
		return err;
	n = events_read(0, evs, opts->count ? (int)opts->count : OOM_EVENTS_MAX,
			&head);
	if (n < 0) {
		p_err("cannot read the event log under %s: %s", bpffs_dir,
		      strerror(-n));
		return n;
	}
	*evsp = evs;
	return n;
}

static volatile sig_atomic_t stop;

static void on_signal(int sig __maybe_unused)
{
	stop = 1;
}

int event_watch(int (*emit)(const struct oom_event *e))
{
	static struct oom_event evs[OOM_EVENTS_MAX];
	struct sigaction sa = { .sa_handler = on_signal };
	uint64_t seen, head;
	int n, err;

	err = events_open();
	if (err)
		return err;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	/* Only what happens from now on */
	if (events_read(~0ULL, evs, 1, &seen) < 0) {
		p_err("cannot read the event log under %s", bpffs_dir);
		return -ENOENT;
	}
	while (!stop) {
		n = events_read(seen, evs, OOM_EVENTS_MAX, &head);
		if (n < 0) {	/* head is unset: the log's pins are gone */
			p_err("cannot read the event log under %s: %s",
			      bpffs_dir, strerror(-n));
			return n;
		}
		/* Overwritten before we could read them: skip ahead */
		if (head > seen + OOM_EVENTS_MAX)
			seen = head - OOM_EVENTS_MAX;
		/* In order, and not past a record still being written */
		for (int i = 0; i < n && evs[i].seq == seen + 1; i++, seen++) {
			if (emit(&evs[i]))
				return 0;	/* stdout closed: done */
		}
		usleep(200 * 1000);
	}
	return 0;
}
