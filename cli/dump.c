/*
 * oomctl dump: everything at once, for bug reports. An object without
 * verbs: in JSON one object with the lists of the other objects.
 */
#include <stdio.h>

#include "main.h"

static int do_help(int argc, char **argv);

static const struct cmd cmds[] = {
	{ "help",	do_help,	"" },
	{ 0 }
};

static int do_help(int argc __maybe_unused, char **argv __maybe_unused)
{
	/* print_usage() knows verbs only, and dump is mostly used bare */
	fprintf(json_output ? stderr : stdout,
		"Usage: %1$s dump\n"
		"       %1$s dump help\n"
		"\n"
		"       " HELP_SPEC_OPTIONS "\n", bin_name);
	return OOMCTL_EXIT_OK;
}

int do_dump(int argc, char **argv)
{
	struct memcg_list_opts memcgs = { .tree = true };
	/* recent activity, not the whole log */
	struct event_list_opts events = { .count = 20 };
	int err;

	if (argc > 0)
		return cmd_select(cmds, argc, argv);
	/* four lists with four column sets: -o could name none of them well */
	if (out_columns) {
		p_err("-o/--output does not apply to dump, which prints several "
		      "lists");
		return OOMCTL_EXIT_USAGE;
	}

	/* As systemd's oomctl dump: what acts first, then what it watches */
	/* stop at the first failure: one error, and it is the cause */
	err = kernel_check(NULL);
	if (!err) {
		out_text("# policies\n");
		err = policy_list_print();
	}
	if (!err) {
		out_text("\n# pressure triggers\n");
		err = psi_list_print();
	}
	if (!err) {
		out_text("\n# memory cgroups\n");
		err = memcg_list(&memcgs);
	}
	if (!err) {
		out_text("\n# recent events\n");
		err = event_list_print(&events);
	}
	return cmd_status(err);
}
