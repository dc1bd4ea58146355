/* oomctl policy: the BPF OOM policies, built in or from an object file. */
#include <errno.h>
#include <stdio.h>
#include <sys/stat.h>

#include "main.h"

static int do_help(int argc, char **argv);

/* Policies are named, files are paths: "./x.o", "x.bpf.o", "/a/x" */
static bool is_policy_file(const char *arg)
{
	size_t len = strlen(arg);

	return strchr(arg, '/') || (len > 2 && !strcmp(arg + len - 2, ".o"));
}

static int name_parse(const char *name)
{
	int err = policy_name_check(name);

	if (err)
		p_err("invalid policy name '%s': %s", name,
		      err == -ENAMETOOLONG ?
		      "longer than " __stringify(POLICY_NAME_MAX) " characters" :
		      "use [a-z0-9_-], not starting with '-'");
	return err ? OOMCTL_EXIT_USAGE : OOMCTL_EXIT_OK;
}

static int do_list(int argc, char **argv)
{
	if (!NO_MORE_ARGS())
		return OOMCTL_EXIT_USAGE;
	return cmd_backend(policy_list_print());
}

/* VERB NAME: exactly one valid policy name, then @fn(name) */
static int with_name(int argc, char **argv, int (*fn)(const char *name))
{
	const char *name;
	int err;

	if (!REQ_ARGS(1))
		return OOMCTL_EXIT_USAGE;
	name = GET_ARG();
	err = name_parse(name);
	if (err)
		return err;
	if (!NO_MORE_ARGS())
		return OOMCTL_EXIT_USAGE;
	return cmd_backend(fn(name));
}

static int do_show(int argc, char **argv)
{
	return with_name(argc, argv, policy_show_print);
}

static int attach(const struct policy_attach_opts *opts)
{
	struct policy_attached res;
	int err = policy_attach(opts, &res);

	if (!err)
		policy_attached_print(&res, opts->dry_run);
	return err;
}

static int do_attach(int argc, char **argv)
{
	static const char *const kws[] = { "scope", "dry-run", "name",
					   "kill-unit", NULL };
	struct policy_attach_opts opts = {};
	int kw;
	struct cgroup_ref scope;
	const char *what;
	struct stat st;
	int err;

	if (!REQ_ARGS(1))
		return OOMCTL_EXIT_USAGE;
	what = GET_ARG();
	if (is_policy_file(what)) {
		opts.file = what;
	} else {
		err = name_parse(what);
		if (err)
			return err;
		opts.name = what;
	}
	/* keywords only after NAME or FILE: prefixes are taken */
	while (argc > 0) {
		kw = arg_keyword(kws, *argv);
		if (kw == KW_AMBIGUOUS)
			return OOMCTL_EXIT_USAGE;
		if (kw == 0 && !opts.scope) {
			NEXT_ARG();
			if (!REQ_ARGS(1))
				return OOMCTL_EXIT_USAGE;
			err = cgroup_parse(GET_ARG(), &scope);
			if (err)
				return err;
			opts.scope = &scope;
		} else if (kw == 1 && !opts.dry_run) {
			NEXT_ARG();
			opts.dry_run = true;
		} else if (kw == 2 && !opts.as) {
			NEXT_ARG();
			if (!REQ_ARGS(1))
				return OOMCTL_EXIT_USAGE;
			opts.as = GET_ARG();
			err = name_parse(opts.as);
			if (err)
				return err;
		} else if (kw == 3 && !opts.kill_unit) {
			NEXT_ARG();
			opts.kill_unit = true;
		} else {
			usage_err("unexpected argument '%s'", *argv);
			return OOMCTL_EXIT_USAGE;
		}
	}

	if (opts.file && stat(opts.file, &st)) {
		p_err("cannot open '%s': %s", opts.file, strerror(errno));
		return OOMCTL_EXIT_FAIL;
	}
	if (opts.file && !S_ISREG(st.st_mode)) {
		p_err("'%s' is not a BPF object file", opts.file);
		return OOMCTL_EXIT_FAIL;
	}
	if (opts.scope && (err = cgroup_resolve(&scope)))
		return err;
	return cmd_backend(attach(&opts));
}

static int detach(const char *name)
{
	int err = policy_detach(name);

	if (!err)
		policy_detached_print(name);
	return err;
}

static int do_detach(int argc, char **argv)
{
	return with_name(argc, argv, detach);
}

/*
 * explain [NAME] [CGROUP]: a lone argument with a '/' (or "." or "..") is
 * the CGROUP, as policy names have none
 */
static int do_explain(int argc, char **argv)
{
	struct policy_explain_opts opts = {};
	struct cgroup_ref oom;
	int err;

	if (argc > 0 && !strchr(*argv, '/') && strcmp(*argv, ".") &&
	    strcmp(*argv, "..")) {
		opts.name = GET_ARG();
		err = name_parse(opts.name);
		if (err)
			return err;
	}
	if (argc > 0) {
		err = cgroup_parse(GET_ARG(), &oom);
		if (err)
			return err;
		opts.oom = &oom;
	}
	if (!NO_MORE_ARGS())
		return OOMCTL_EXIT_USAGE;
	if (opts.oom && (err = cgroup_resolve(&oom)))
		return err;
	return cmd_backend(policy_explain_print(&opts));
}

static const struct cmd cmds[] = {
	{ "list",	do_list,	"" },
	{ "show",	do_show,	"NAME" },
	{ "attach",	do_attach,
	  "{ NAME | FILE.bpf.o } [scope CGROUP] [dry-run] [kill-unit] [name POLICY]" },
	{ "detach",	do_detach,	"NAME" },
	{ "explain",	do_explain,	"[NAME] [CGROUP]" },
	{ "help",	do_help,	"" },
	{ 0 }
};

static int do_help(int argc __maybe_unused, char **argv __maybe_unused)
{
	char names[256], defs[512];

	snprintf(defs, sizeof(defs),
		 "       NAME := { %s | POLICY }\n"
		 "       POLICY := 1-15 of [a-z0-9_-]: a file's name, or the one given\n"
		 "       " HELP_SPEC_CGROUP "\n",
		 policy_builtin_names(" | ", names, sizeof(names)));
	return print_usage("policy", cmds, defs);
}

int do_policy(int argc, char **argv)
{
	return cmd_select(cmds, argc, argv);
}
