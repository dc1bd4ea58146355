/* oomctl oom: declare an OOM by hand, as a policy or a PSI trigger would. */
#include <errno.h>

#include "main.h"

static int do_help(int argc, char **argv);

static int declare(const struct oom_declare_opts *opts)
{
	struct oom_declared res;
	int err = oom_declare(opts, &res);

	if (err)
		return err;
	out_str("scope", "declared an OOM in %s", opts->cg ? opts->cg->path : "the system");
	/* plain: the verdict; the boolean itself only in JSON */
	out_str(NULL, ": %s\n", res.handled ? "handled" : "nothing could be freed");
	out_bool("handled", NULL, res.handled);
	out_open_array("kills");
	for (int i = 0; i < res.nr_kills; i++)
		event_print(&res.kills[i]);
	out_close();
	if (res.handled && !res.nr_kills)
		p_info("no kill was recorded: memory was freed otherwise (a dying task, a notifier)");
	return 0;
}

static int do_declare(int argc, char **argv)
{
	struct oom_declare_opts opts = {};
	struct cgroup_ref cg;
	bool have_order = false;
	uint64_t order;
	int err;

	static const char *const kws[] = { "order", "wait", NULL };
	int kw;

	/*
	 * First word: "order" or "wait" spelled out is a keyword, any other
	 * word a CGROUP (a cgroup named "order" is "/order", and "w" is the
	 * cgroup /w). Later words are keywords only, prefixes allowed.
	 */
	if (argc > 0 && !ARG_IS("order") && !ARG_IS("wait")) {
		err = cgroup_parse(GET_ARG(), &cg);
		if (err)
			return err;
		opts.cg = &cg;
	}
	while (argc > 0) {
		kw = arg_keyword(kws, *argv);
		if (kw == KW_AMBIGUOUS)
			return OOMCTL_EXIT_USAGE;
		if (kw == 0 && !have_order) {
			NEXT_ARG();
			if (!REQ_ARGS(1))
				return OOMCTL_EXIT_USAGE;
			if (arg_number("order", GET_ARG(), 0, OOM_ORDER_MAX, &order))
				return OOMCTL_EXIT_USAGE;
			opts.order = order;
			have_order = true;
		} else if (kw == 1 && !opts.wait) {
			NEXT_ARG();
			opts.wait = true;
		} else {
			usage_err("unexpected argument '%s'", *argv);
			return OOMCTL_EXIT_USAGE;
		}
	}

	if (opts.cg && (err = cgroup_resolve(&cg)))
		return err;
	return cmd_backend(declare(&opts));
}

/* help first: a bare `oomctl oom` must not declare a system-wide OOM */
static const struct cmd cmds[] = {
	{ "help",	do_help,	"" },
	{ "declare",	do_declare,	"[CGROUP] [order N] [wait]" },
	{ 0 }
};

static int do_help(int argc __maybe_unused, char **argv __maybe_unused)
{
	return print_usage("oom", cmds,
		"       N := 0.." __stringify(OOM_ORDER_MAX)
		"  (allocation order, default 0)\n"
		"       " HELP_SPEC_CGROUP "\n"
		"       Without CGROUP the OOM is system-wide.\n");
}

int do_oom(int argc, char **argv)
{
	return cmd_select(cmds, argc, argv);
}
