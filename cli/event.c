/* oomctl event: what the OOM killer and the policies did. */
#include <errno.h>

#include "backend.h"

static int do_help(int argc, char **argv);

static int do_list(int argc, char **argv)
{
	struct event_list_opts opts = {};
	const char *arg;
	uint64_t count;

	if (ARG_IS("count")) {
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

static const struct cmd cmds[] = {
	{ "list",	do_list,	"[count N]" },
	{ "watch",	do_watch,	"" },
	{ "help",	do_help,	"" },
	{ 0 }
};

static int do_help(int argc __maybe_unused, char **argv __maybe_unused)
{
	return print_usage("event", cmds,
		"       N := number of most recent events (default: all)\n");
}

int do_event(int argc, char **argv)
{
	return cmd_select(cmds, argc, argv);
}
