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
#include "clock.h"
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

static const char *type_str(uint32_t type)
{
	switch (type) {
	case OOM_EVENT_INVOKE: return "oom";
	case OOM_EVENT_KILL: return "kill";
	case OOM_EVENT_PSI: return "psi";
	case OOM_EVENT_DRY_RUN: return "dry-run";
	default: return "?";
	}
}

static const char *trigger_str(uint32_t trigger)
{
	switch (trigger) {
	case OOM_TRIGGER_ALLOCATION: return "allocation";
	case OOM_TRIGGER_DECLARED: return "declared";
	case OOM_TRIGGER_PSI: return "psi";
	default: return "?";
	}
}

static const char *psi_state_str(uint32_t state)
{
	static const char * const names[] = {
		"io some", "io full", "memory some", "memory full",
		"cpu some", "cpu full",
	};

	return state < sizeof(names) / sizeof(names[0]) ? names[state] : "?";
}

/*
 * Whether the cgroup of @e is gone: not when its recorded path still leads
 * to it (no privilege needed), else not when its id still opens (it moved,
 * or the path was cut). Without CAP_DAC_READ_SEARCH a moved cgroup looks
 * removed.
 */
static bool event_cgroup_removed(const struct oom_event *e, const char *path)
{
	char fspath[PATH_MAX], live[PATH_MAX];
	const char *fs = strcmp(cgroupfs_dir, "/") ? cgroupfs_dir : "";
	uint64_t id;

	if (e->cgroup_id <= 1)
		return false;
	if (path[0] == '/' &&
	    snprintf(fspath, sizeof(fspath), "%s%s", fs, path) <
	    (int)sizeof(fspath) &&
	    !cgroup_id_from_path(fspath, &id) && id == e->cgroup_id)
		return false;
	return cgroup_path_of_id(e->cgroup_id, live, sizeof(live))[0] == '(';
}

void event_print(const struct oom_event *e)
{
	char cg[PATH_MAX + 16], name[64];
	bool removed;

	out_open_object(NULL);
	out_u64("seq", NULL, e->seq);
	out_time("time", "%s ", boot_to_realtime(e->time_ns));
	out_str("type", "%-8s", type_str(e->type));
	/* The path recorded at the event (oom_shared.h); the live one only for
	 * a record without (the walk in the kernel failed) */
	if (e->cgroup_path[0])
		snprintf(cg, sizeof(cg), "%.*s", (int)sizeof(e->cgroup_path),
			 e->cgroup_path);
	else
		cgroup_path_of_id(e->cgroup_id, cg, sizeof(cg));
	removed = event_cgroup_removed(e, cg);
	if (removed && cg[0] != '(' && !json_output)
		strcat(cg, " (removed)");
	switch (e->type) {
	case OOM_EVENT_INVOKE:
		out_str("cgroup", "OOM in %s", e->cgroup_id ? cg : "the system");
		out_str("trigger", " (%s)", trigger_str(e->trigger));
		out_u64("pid", " by pid %s", e->pid);
		out_str("comm", " (%s)", e->comm);
		break;
	case OOM_EVENT_KILL:
	case OOM_EVENT_DRY_RUN:
		out_str(NULL, "%s", e->type == OOM_EVENT_KILL ? "killed" :
			"would kill");
		out_u64("pid", " pid %s", e->pid);
		out_str("comm", " (%s)", e->comm);
		out_str("cgroup", " in %s", cg);
		out_bytes("rss_bytes", ", %s resident", e->rss_bytes);
		out_str("chosen_by", ", chosen by %s", e->policy_cookie ?
			policy_name_of_cookie(e->policy_cookie, name, sizeof(name)) :
			"the kernel's OOM killer");
		if (e->message[0])
			out_str("message", ": \"%s\"", e->message);
		break;
	case OOM_EVENT_PSI:
		out_str("pressure", "%s", psi_state_str(e->trigger));
		out_str("cgroup", " pressure in %s", e->cgroup_id ? cg : "the system");
		break;
	}
	out_u64("cgroup_id", NULL, e->cgroup_id);
	out_bool("cgroup_removed", NULL, removed);
	out_close();
	out_newline();
}

/* The log exists once the recorder is attached; attach it on first use. */
static int events_open(void)
{
	return state_init() ?: recorder_ensure();
}

int event_list(const struct event_list_opts *opts)
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
	out_open_array("events");
	for (int i = 0; i < n; i++)
		event_print(&evs[i]);
	out_close();
	return 0;
}

static volatile sig_atomic_t stop;

static void on_signal(int sig __maybe_unused)
{
	stop = 1;
}

int event_watch(void)
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
			event_print(&evs[i]);
			if (out_flush())
				return 0;	/* stdout closed: done */
		}
		usleep(200 * 1000);
	}
	return 0;
}
