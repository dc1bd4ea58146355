/* oomctl psi: pressure (PSI) triggers that may declare an OOM. */
#include <errno.h>

#include "backend.h"

static int do_help(int argc, char **argv);

static int do_list(int argc, char **argv)
{
	if (!NO_MORE_ARGS())
		return OOMCTL_EXIT_USAGE;
	return cmd_backend(psi_list());
}

static int duration_parse(const char *what, const char *arg, uint64_t *usec)
{
	int err = parse_duration(arg, usec);

	if (err)
		p_err("invalid %s '%s': %s", what, arg, err == -ERANGE ?
		      "too large" : "expected a duration like 150ms or 2s");
	return err ? OOMCTL_EXIT_USAGE : OOMCTL_EXIT_OK;
}

static int do_add(int argc, char **argv)
{
	struct psi_add_opts opts = {};
	const char *type;
	struct cgroup_ref cg;
	int err;

	if (!REQ_ARGS(4))
		return OOMCTL_EXIT_USAGE;
	err = cgroup_parse(GET_ARG(), &cg);
	if (err)
		return err;
	opts.cg = &cg;
	type = GET_ARG();
	if (parse_psi_stall(type, &opts.type)) {
		p_err("invalid stall type '%s': expected 'some' or 'full'",
		      type);
		return OOMCTL_EXIT_USAGE;
	}
	err = duration_parse("STALL", GET_ARG(), &opts.stall_us) ?:
	      duration_parse("WINDOW", GET_ARG(), &opts.window_us);
	if (err)
		return err;
	opts.pause_us = PSI_PAUSE_DEFAULT(opts.window_us);
	if (argc > 0 && ARG_IS("pause")) {
		NEXT_ARG();
		if (!REQ_ARGS(1))
			return OOMCTL_EXIT_USAGE;
		err = duration_parse("PAUSE", GET_ARG(), &opts.pause_us);
		if (err)
			return err;
	}
	if (!NO_MORE_ARGS())
		return OOMCTL_EXIT_USAGE;

	switch (psi_trigger_check(opts.stall_us, opts.window_us)) {
	case -ERANGE:
		p_err("WINDOW must be within 500ms..10s (10s is the kernel's limit; shorter than 500ms polls too often)");
		return OOMCTL_EXIT_USAGE;
	case -EINVAL:
		p_err("STALL must be more than 0 and at most WINDOW");
		return OOMCTL_EXIT_USAGE;
	}
	if (psi_pause_check(opts.pause_us)) {
		p_err("PAUSE must be at most 10min");
		return OOMCTL_EXIT_USAGE;
	}

	err = cgroup_resolve(&cg);
	if (err)
		return err;
	return cmd_backend(psi_add(&opts));
}

static int do_del(int argc, char **argv)
{
	struct psi_del_opts opts = {};
	struct cgroup_ref cg;
	const char *arg;
	uint64_t id;
	int err;

	if (!REQ_ARGS(1))
		return OOMCTL_EXIT_USAGE;
	arg = GET_ARG();
	if (!NO_MORE_ARGS())
		return OOMCTL_EXIT_USAGE;

	/* digits are an ID; a cgroup named "12" is "/12" */
	err = parse_u64(arg, 0, UINT32_MAX, &id);
	if (err == -ERANGE) {
		p_err("invalid ID '%s': at most %u", arg, UINT32_MAX);
		return OOMCTL_EXIT_USAGE;
	}
	if (!err) {
		opts.id = id;
	} else {
		err = cgroup_parse(arg, &cg) ?: cgroup_resolve(&cg);
		if (err)
			return err;
		opts.cg = &cg;
	}
	return cmd_backend(psi_del(&opts));
}

static const struct cmd cmds[] = {
	{ "list",	do_list,	"" },
	{ "add",	do_add,		"CGROUP { some | full } STALL WINDOW [pause PAUSE]" },
	{ "del",	do_del,		"{ ID | CGROUP }" },
	{ "help",	do_help,	"" },
	{ 0 }
};

static int do_help(int argc __maybe_unused, char **argv __maybe_unused)
{
	return print_usage("psi", cmds,
		"       STALL, WINDOW := DURATION  (0 < STALL <= WINDOW, "
		"WINDOW 500ms..10s)\n"
		"       PAUSE := DURATION  (no OOM this long after a kill in "
		"CGROUP; default 2 x WINDOW, at most 10min)\n"
		"       " HELP_SPEC_DURATION "\n"
		"       " HELP_SPEC_CGROUP "\n");
}

int do_psi(int argc, char **argv)
{
	return cmd_select(cmds, argc, argv);
}
