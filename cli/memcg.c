/* oomctl memcg: the memory cgroups the OOM policies choose from. */
#include "main.h"

static int do_help(int argc, char **argv);

static int do_list(int argc, char **argv)
{
	struct memcg_list_opts opts = {};
	struct cgroup_ref cg;
	int err;

	static const char *const kws[] = { "tree", NULL };
	int kw;

	/*
	 * First word: only "tree" spelled out is the keyword, any other word
	 * is a CGROUP ("tr" is the cgroup /tr, a cgroup named "tree" is
	 * "/tree"). After a CGROUP only the keyword can follow, so a prefix
	 * of it is taken as it is for verbs.
	 */
	if (argc > 0 && !ARG_IS("tree")) {
		err = cgroup_parse(GET_ARG(), &cg);
		if (err)
			return err;
		opts.root = &cg;
	}
	if (argc > 0 && (kw = arg_keyword(kws, *argv)) != KW_NONE) {
		if (kw == KW_AMBIGUOUS)
			return OOMCTL_EXIT_USAGE;
		NEXT_ARG();
		opts.tree = true;
	}
	if (!NO_MORE_ARGS())
		return OOMCTL_EXIT_USAGE;

	if (opts.root && (err = cgroup_resolve(&cg)))
		return err;
	return cmd_backend(memcg_list(&opts));
}

static int do_show(int argc, char **argv)
{
	struct cgroup_ref cg;
	int err;

	if (!REQ_ARGS(1))
		return OOMCTL_EXIT_USAGE;
	err = cgroup_parse(GET_ARG(), &cg);
	if (err)
		return err;
	if (!NO_MORE_ARGS())
		return OOMCTL_EXIT_USAGE;

	err = cgroup_resolve(&cg);
	if (err)
		return err;
	return cmd_backend(memcg_show(&cg));
}

static const struct cmd cmds[] = {
	{ "list",	do_list,	"[CGROUP] [tree]" },
	{ "show",	do_show,	"CGROUP" },
	{ "help",	do_help,	"" },
	{ 0 }
};

static int do_help(int argc __maybe_unused, char **argv __maybe_unused)
{
	return print_usage("memcg", cmds,
			   "       " HELP_SPEC_CGROUP "\n");
}

int do_memcg(int argc, char **argv)
{
	return cmd_select(cmds, argc, argv);
}
