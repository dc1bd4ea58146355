/* oomctl event: what the OOM killer and the policies did. */
#include <errno.h>

#include "backend.h"

static int do_help(int argc, char **argv);

static int do_list(int argc, char **argv)
{
	struct event_list_opts opts = {};
	const char *arg;
	uint64_t count;
	static const char *const kws[] = { "count", NULL };
	int kw = argc > 0 ? arg_keyword(kws, *argv) : KW_NONE;

	if (kw == KW_AMBIGUOUS)
		return OOMCTL_EXIT_USAGE;
	if (kw == 0) {
		NEXT_ARG();
		if (!REQ_ARGS(1))
			return OOMCTL_EXIT_USAGE;
		arg = GET_ARG();
		if (parse_u64(arg, 1, UINT32_MAX, &count)) {
			p_err("invalid count '%s': expected 1..%u", arg,
			      UINT32_MAX);
			return OOMCTL_EXIT_USAGE;
		}
		opts.count = count;
	}
	if (!NO_MORE_ARGS())
		return OOMCTL_EXIT_USAGE;
	return cmd_backend(event_list(&opts));
}

static int do_watch(int argc, char **argv)
{
	if (!NO_MORE_ARGS())
		return OOMCTL_EXIT_USAGE;
	return cmd_backend(event_watch());
}

/*
 * The format is an option so that others can join it; the file is the
 * textfile collector's, written atomically by the backend.
 */
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
	return cmd_backend(event_export(&opts));
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
