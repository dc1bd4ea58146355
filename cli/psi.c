/* oomctl psi: pressure (PSI) triggers that may declare an OOM. */
#include <errno.h>
#include <stdlib.h>

#include "main.h"

static int do_help(int argc, char **argv);

/* psi list's columns: the one model of its text and JSON output */
enum {
	PSI_COL_ID, PSI_COL_CGROUP, PSI_COL_RESOURCE, PSI_COL_KIND,
	PSI_COL_STALL, PSI_COL_WINDOW, PSI_COL_EVENTS, PSI_COL_PAUSE,
	PSI_COL_PAUSED, PSI_COL_OWNER, PSI_NR_COLS
};

static const struct col list_cols[PSI_NR_COLS] = {
	[PSI_COL_ID] = { "id", "ID", COL_U64, 0, "the trigger's id" },
	[PSI_COL_CGROUP] =
		{ "cgroup", "CGROUP", COL_STR, 0, "the cgroup it watches" },
	[PSI_COL_RESOURCE] =
		{ "resource", "RESOURCE", COL_STR, 0, "memory, io or cpu" },
	[PSI_COL_KIND] = { "kind", "KIND", COL_STR, 0, "some or full" },
	[PSI_COL_STALL] =
		{ "stall_us", "STALL", COL_USEC, 0, "stall time that fires it" },
	[PSI_COL_WINDOW] =
		{ "window_us", "WINDOW", COL_USEC, 0, "the window of the stall" },
	[PSI_COL_EVENTS] = { "events", "EVENTS", COL_U64, 0, "times it fired" },
	[PSI_COL_PAUSE] = { "pause_us", "PAUSE", COL_USEC, 0,
		"no OOM declared this long after a kill below it; - if unknown" },
	[PSI_COL_PAUSED] = { "paused", "PAUSED", COL_U64, 0,
		"events on which the pause declared nothing; - if unknown" },
	[PSI_COL_OWNER] = { "owner", "OWNER", COL_STR, 0,
		"the PSI handler (bpf_psi_ops) it belongs to, - for a tool's" },
};

const struct listing psi_listing = { list_cols, PSI_NR_COLS };

int psi_list_print(void)
{
	struct psi_trigger_info *infos;
	char path[PATH_MAX];
	struct table *t;
	int n;

	n = psi_list(&infos);
	if (n < 0)
		return n;
	t = table_open("triggers", list_cols, psi_listing.ncols);
	for (int i = 0; i < n; i++) {
		const struct kernel_trigger *k = &infos[i].k;

		table_row(t);
		table_u64(t, PSI_COL_ID, k->id);
		table_str(t, PSI_COL_CGROUP,
			  cgroup_path_of_id(k->cgroup_id, path, sizeof(path)));
		table_str(t, PSI_COL_RESOURCE, k->resource);
		table_str(t, PSI_COL_KIND, k->kind);
		table_usec(t, PSI_COL_STALL, k->threshold_us);
		table_usec(t, PSI_COL_WINDOW, k->window_us);
		table_u64(t, PSI_COL_EVENTS, k->events);
		if (infos[i].pause_us != UINT64_MAX)
			table_usec(t, PSI_COL_PAUSE, infos[i].pause_us);
		else
			table_str(t, PSI_COL_PAUSE, NULL);
		if (infos[i].paused != UINT64_MAX)
			table_u64(t, PSI_COL_PAUSED, infos[i].paused);
		else
			table_str(t, PSI_COL_PAUSED, NULL);
		table_str(t, PSI_COL_OWNER, k->owner[0] ? k->owner : "-");
	}
	table_close(t);
	free(infos);
	return 0;
}

void psi_added_print(const struct psi_add_opts *opts, int id)
{
	out_u64("id", "added trigger %s", id);
	out_str("cgroup", " on %s:", opts->cg->path);
	out_str("kind", " memory %s", psi_stall_str(opts->type));
	out_usec("stall_us", " %s",  opts->stall_us);
	out_usec("window_us", " per %s", opts->window_us);
	out_usec("pause_us", ", pause %s after a kill", opts->pause_us);
	out_newline();
}

void psi_deleted_print(const int *ids, int n)
{
	out_open_array("deleted");
	for (int i = 0; i < n; i++)
		out_u64(NULL, "deleted trigger %s\n", ids[i]);
	out_close();
}

static int do_list(int argc, char **argv)
{
	if (!NO_MORE_ARGS())
		return OOMCTL_EXIT_USAGE;
	return cmd_backend(psi_list_print());
}

static int add(const struct psi_add_opts *opts)
{
	int id, err = psi_add(opts, &id);

	if (!err)
		psi_added_print(opts, id);
	return err;
}

static int del(const struct psi_del_opts *opts)
{
	int *ids, n, err = psi_del(opts, &ids, &n);

	psi_deleted_print(ids, n);
	free(ids);
	return err;
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
	return cmd_backend(add(&opts));
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
	return cmd_backend(del(&opts));
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
