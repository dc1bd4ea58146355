/* oomctl event: what the OOM killer and the policies did. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "main.h"

static int do_help(int argc, char **argv);

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

/* "memory some", ...: the pressure of a PSI event */
static const char *psi_state_str(uint32_t state, char *buf, size_t size)
{
	const char *resource, *kind;

	psi_state_names(state, &resource, &kind);
	snprintf(buf, size, "%s %s", resource, kind);
	return buf;
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

/* One record as a line (plain) or an object (JSON) */
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
		out_str("pressure", "%s", psi_state_str(e->trigger, name, sizeof(name)));
		out_str("cgroup", " pressure in %s", e->cgroup_id ? cg : "the system");
		break;
	}
	out_u64("cgroup_id", NULL, e->cgroup_id);
	out_bool("cgroup_removed", NULL, removed);
	out_close();
	out_newline();
}

int event_list_print(const struct event_list_opts *opts)
{
	const struct oom_event *evs;
	int n = event_list(opts, &evs);

	if (n < 0)
		return n;
	out_open_array("events");
	for (int i = 0; i < n; i++)
		event_print(&evs[i]);
	out_close();
	return 0;
}

/* event watch's: one record, then out at once */
static int event_emit(const struct oom_event *e)
{
	event_print(e);
	return out_flush();
}

static int do_list(int argc, char **argv)
{
	struct event_list_opts opts = {};
	uint64_t count;
	static const char *const kws[] = { "count", NULL };
	int kw = argc > 0 ? arg_keyword(kws, *argv) : KW_NONE;

	if (kw == KW_AMBIGUOUS)
		return OOMCTL_EXIT_USAGE;
	if (kw == 0) {
		NEXT_ARG();
		if (!REQ_ARGS(1))
			return OOMCTL_EXIT_USAGE;
		if (arg_number("count", GET_ARG(), 1, UINT32_MAX, &count))
			return OOMCTL_EXIT_USAGE;
		opts.count = count;
	}
	if (!NO_MORE_ARGS())
		return OOMCTL_EXIT_USAGE;
	return cmd_backend(event_list_print(&opts));
}

static int do_watch(int argc, char **argv)
{
	if (!NO_MORE_ARGS())
		return OOMCTL_EXIT_USAGE;
	return cmd_backend(event_watch(event_emit));
}

/*
 * The format is an option so that others can join it; the file is the
 * textfile collector's, written atomically by the backend.
 */
static int export(const struct event_export_opts *opts)
{
	size_t len = 0;
	char *text = NULL;
	int err = event_export(opts, &text, &len);

	if (!err && text)
		fwrite(text, 1, len, stdout);	/* main checks stdout */
	free(text);
	return err;
}

static int do_export(int argc, char **argv)
{
	struct event_export_opts opts = {};

	if (json_output) {
		usage_err("export writes the Prometheus text format: -j does not apply");
		return OOMCTL_EXIT_USAGE;
	}
	if (!ARG_IS("--prometheus")) {
		if (argc > 0)
			usage_err("unknown format '%s': expected --prometheus", *argv);
		else
			usage_err("missing format: expected --prometheus");
		return OOMCTL_EXIT_USAGE;
	}
	NEXT_ARG();
	if (argc > 0) {
		opts.file = GET_ARG();
		if (!*opts.file || opts.file[strlen(opts.file) - 1] == '/') {
			usage_err("'%s' is not a file name", opts.file);
			return OOMCTL_EXIT_USAGE;
		}
	}
	if (!NO_MORE_ARGS())
		return OOMCTL_EXIT_USAGE;
	return cmd_backend(export(&opts));
}

static const struct cmd cmds[] = {
	{ "list",	do_list,	"[count N]" },
	{ "watch",	do_watch,	"" },
	{ "export",	do_export,	"--prometheus [FILE]" },
	{ "help",	do_help,	"" },
	{ 0 }
};

static int do_help(int argc __maybe_unused, char **argv __maybe_unused)
{
	return print_usage("event", cmds,
		"       N := number of most recent events (default: all)\n"
		"       FILE := a node_exporter textfile (default: stdout)\n");
}

int do_event(int argc, char **argv)
{
	return cmd_select(cmds, argc, argv);
}
