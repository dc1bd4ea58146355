/*
 * oomctl: global options, the table of objects and the dispatch to them.
 *
 *   oomctl [OPTIONS] OBJECT COMMAND [ARGS...]
 */
#include <argp.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <bpf/libbpf.h>

#include "backend.h"
#include "main.h"
#include "config.h"

#ifndef OOMCTL_VERSION
#define OOMCTL_VERSION "unknown"
#endif

const char *bin_name = "oomctl";
bool debug;
const char *bpffs_dir = OOMCTL_BPFFS_DEFAULT;
const char *cgroupfs_dir = OOMCTL_CGROUPFS_DEFAULT;

/* What is running, for usage errors: set by cmd_select() */
static const struct cmd *cur_obj, *cur_verb;
static bool show_version;
static unsigned int show_help;	/* argp_help() flags */

static int do_help(int argc, char **argv);

static const struct cmd objects[] = {
	{ "memcg",	do_memcg,	"" },
	{ "policy",	do_policy,	"" },
	{ "psi",	do_psi,		"" },
	{ "oom",	do_oom,		"" },
	{ "event",	do_event,	"" },
	{ "dump",	do_dump,	"" },
	{ "apply",	do_apply,	"[--check] [FILE]" },
	{ "units",	do_units,	"[user-units N]" },
	{ "help",	do_help,	"" },
	{ 0 }
};

/*
 * Without -d libbpf stays quiet, warnings included: a failed command
 * explains itself in its one Error: line, and stderr stays that line.
 */
static int __attribute__((format(printf, 2, 0)))
print_libbpf(enum libbpf_print_level level __maybe_unused, const char *fmt,
	     va_list ap)
{
	if (!debug)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

/* The listings that take -o, each with its one column model */
static const struct {
	const char *obj, *verb;
	const struct listing *cols;
} listings[] = {
	{ "memcg",	"list",	&memcg_listing },
	{ "policy",	"list",	&policy_listing },
	{ "psi",	"list",	&psi_listing },
};

/*
 * -o against the verb about to run, before it acts: 0 to go on, 1 after
 * "-o help", -EINVAL after a one-line error.
 */
static int columns_check(void)
{
	size_t i;

	if (!out_columns)
		return 0;
	for (i = 0; i < sizeof(listings) / sizeof(*listings); i++)
		if (!strcmp(listings[i].obj, cur_obj->cmd) &&
		    !strcmp(listings[i].verb, cur_verb->cmd))
			return out_columns_check(listings[i].cols);
	p_err("-o/--output applies to memcg list, policy list and psi list, "
	      "not '%s %s'", cur_obj->cmd, cur_verb->cmd);
	return -EINVAL;
}

int arg_number(const char *what, const char *arg, uint64_t min, uint64_t max,
	       uint64_t *val)
{
	if (!parse_u64(arg, min, max, val))
		return 0;
	p_err("invalid %s '%s': expected %llu..%llu", what, arg,
	      (unsigned long long)min, (unsigned long long)max);
	return OOMCTL_EXIT_USAGE;
}

int arg_keyword(const char *const *words, const char *arg)
{
	char list[256] = "";
	size_t len = 0;
	int i, idx, n = keyword_find(words, arg, &idx);

	if (n <= 1)
		return n ? idx : KW_NONE;
	for (i = 0; words[i]; i++)
		if (is_prefix(arg, words[i]) && len < sizeof(list))
			len += snprintf(list + len, sizeof(list) - len, "%s%s",
					len ? ", " : "", words[i]);
	p_err("ambiguous keyword '%s': could be %s", arg, list);
	return KW_AMBIGUOUS;
}

int cmd_select(const struct cmd *cmds, int argc, char **argv)
{
	const struct cmd *c = cmds, *p;
	const char *what = cur_obj ? cur_obj->cmd : NULL;
	int n = argc > 0 ? cmd_find(cmds, *argv, &c) : 1;
	char list[256] = "";
	size_t len = 0;

	if (n == 1) {
		if (cur_obj) {
			cur_verb = c;
			n = columns_check();
			if (n)
				return n < 0 ? OOMCTL_EXIT_USAGE : OOMCTL_EXIT_OK;
		} else {
			cur_obj = c;
		}
		return argc > 0 ? c->func(argc - 1, argv + 1) : c->func(0, argv);
	}
	if (!n) {
		if (what)
			p_err("unknown command '%s %s'; see '%s %s help'",
			      what, *argv, bin_name, what);
		else
			p_err("unknown object '%s'; see '%s help'",
			      *argv, bin_name);
		return OOMCTL_EXIT_USAGE;
	}
	for (p = cmds; p->cmd; p++)
		if (is_prefix(*argv, p->cmd) && len < sizeof(list))
			len += snprintf(list + len, sizeof(list) - len, "%s%s",
					len ? ", " : "", p->cmd);
	p_err("ambiguous %s '%s': could be %s", what ? "command" : "object",
	      *argv, list);
	return OOMCTL_EXIT_USAGE;
}

void usage_err(const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (cur_verb)
		p_err("%s; usage: %s %s %s%s%s", msg, bin_name, cur_obj->cmd,
		      cur_verb->cmd, *cur_verb->args ? " " : "",
		      cur_verb->args);
	else
		p_err("%s; usage: %s %s%s%s", msg, bin_name,
		      cur_obj ? cur_obj->cmd : "OBJECT",
		      cur_obj && *cur_obj->args ? " " : "",
		      cur_obj ? cur_obj->args : "");
}

/* Help goes to stdout; in JSON mode stdout says null, so help goes aside */
static FILE *help_stream(void)
{
	return json_output ? stderr : stdout;
}

int print_usage(const char *object, const struct cmd *cmds, const char *defs)
{
	FILE *f = help_stream();
	const struct cmd *c;

	for (c = cmds; c->cmd; c++)
		fprintf(f, "%s %s %s %s%s%s\n", c == cmds ? "Usage:" : "      ",
			bin_name, object, c->cmd, *c->args ? " " : "", c->args);
	fprintf(f, "\n%s       " HELP_SPEC_OPTIONS "\n", defs);
	return OOMCTL_EXIT_OK;
}

static int do_help(int argc, char **argv)
{
	FILE *f = help_stream();
	const struct cmd *c;
	const char *sep = " ";

	if (argc > 1) {
		usage_err("unexpected argument '%s'", argv[1]);
		return OOMCTL_EXIT_USAGE;
	}
	/* "help OBJECT" is "OBJECT help" */
	if (argc == 1 && strcmp(*argv, "help")) {
		char *sub[] = { *argv, "help", NULL };

		cur_obj = NULL;
		return cmd_select(objects, 2, sub);
	}

	fprintf(f,
		"Usage: %1$s [OPTIONS] OBJECT { COMMAND | help }\n"
		"       %1$s help [OBJECT]\n"
		"       %1$s --version\n"
		"\n"
		"       OBJECT := {", bin_name);
	for (c = objects; c->cmd; c++) {
		if (c->func == do_help)
			continue;
		fprintf(f, "%s%s", sep, c->cmd);
		sep = " | ";
	}
	fprintf(f, " }\n       " HELP_SPEC_OPTIONS "\n");
	return OOMCTL_EXIT_OK;
}

static int do_version(void)
{
	char libbpf[32];

	snprintf(libbpf, sizeof(libbpf), "%u.%u", libbpf_major_version(),
		 libbpf_minor_version());
	out_str("version", "oomctl v%s\n", OOMCTL_VERSION);
	out_str("libbpf_version", "using libbpf v%s\n", libbpf);
	return OOMCTL_EXIT_OK;
}

int cmd_status(int err)
{
	if (!err)
		return OOMCTL_EXIT_OK;
	if (!p_err_reported())
		p_err("%s%s%s: %s", cur_obj ? cur_obj->cmd : bin_name,
		      cur_verb ? " " : "", cur_verb ? cur_verb->cmd : "",
		      strerror(-err));
	return err == -EOPNOTSUPP ? OOMCTL_EXIT_NOSUPP : OOMCTL_EXIT_FAIL;
}

enum {
	OPT_BPFFS = 0x100,
	OPT_CGROUPFS,
	OPT_USAGE,
};

static const struct argp_option options[] = {
	{ "json", 'j', NULL, 0, "JSON on stdout, errors included", 0 },
	{ "pretty", 'p', NULL, 0, "Pretty-printed JSON (implies --json)", 0 },
	{ "debug", 'd', NULL, 0, "Show libbpf and verifier logs on stderr", 0 },
	{ "version", 'V', NULL, 0, "Print the version and exit", 0 },
	{ "output", 'o', "COLUMNS", 0,
	  "Columns of a list, comma-separated (-o help names them)", 0 },
	{ "noheadings", 'n', NULL, 0, "No header line in lists", 0 },
	{ "raw", 'r', NULL, 0, "Lists unaligned, one space between cells", 0 },
	{ "bytes", 'b', NULL, 0, "Sizes in bytes, not rounded to K, M, G", 0 },
	{ "bpffs", OPT_BPFFS, "DIR", 0,
	  "Folder of oomctl's pins (default " OOMCTL_BPFFS_DEFAULT ")", 0 },
	{ "cgroupfs", OPT_CGROUPFS, "DIR", 0,
	  "The cgroup2 mount (default " OOMCTL_CGROUPFS_DEFAULT ")", 0 },
	/* argp's own are silent under ARGP_NO_ERRS */
	{ "help", 'h', NULL, 0, "Give this help list", -1 },
	{ "usage", OPT_USAGE, NULL, 0, "Give a short usage message", -1 },
	{ 0 }
};

static int dir_arg(const char **dir, const char *opt, char *arg)
{
	size_t len = strlen(arg);

	if (*arg != '/') {
		p_err("%s needs an absolute path, not '%s'", opt, arg);
		return EINVAL;
	}
	while (len > 1 && arg[len - 1] == '/')
		arg[--len] = '\0';
	*dir = arg;
	return 0;
}

/* argp itself would print two lines and exit 64: say it in one, exit 2 */
static void opt_error(const struct argp_state *state)
{
	const char *word = state->argv[state->next - 1];
	const struct argp_option *o;

	for (o = options; o->name; o++)
		if (o->arg && ((word[1] == '-' && is_prefix(word + 2, o->name)) ||
			       (word[1] == o->key && !word[2]))) {
			p_err("option '%s' needs an argument", word);
			return;
		}
	p_err("unknown option '%s'; see '%s --help'", word, bin_name);
}

static error_t parse_opt(int key, char *arg, struct argp_state *state)
{
	int *first = state->input;

	switch (key) {
	case 'j':
		json_output = true;
		break;
	case 'p':
		json_output = pretty_output = true;
		break;
	case 'd':
		debug = true;
		break;
	case 'V':
		show_version = true;
		break;
	case 'o':
		if (!*arg) {
			p_err("-o/--output needs column names; see '-o help'");
			return EINVAL;
		}
		out_columns = arg;
		break;
	case 'n':
		out_noheadings = true;
		break;
	case 'r':
		out_raw = true;
		break;
	case 'b':
		out_exact_bytes = true;
		break;
	case 'h':
		show_help = ARGP_HELP_STD_HELP & ~ARGP_HELP_EXIT_OK;
		break;
	case OPT_USAGE:
		show_help = ARGP_HELP_USAGE;
		break;
	case OPT_BPFFS:
		return dir_arg(&bpffs_dir, "--bpffs", arg);
	case OPT_CGROUPFS:
		return dir_arg(&cgroupfs_dir, "--cgroupfs", arg);
	case ARGP_KEY_ARGS:
		/* OBJECT: the rest belongs to the command, dashes or not */
		*first = state->next;
		state->next = state->argc;
		break;
	case ARGP_KEY_ERROR:
		if (!p_err_reported() && state->next > 0 &&
		    state->next <= state->argc)
			opt_error(state);
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

/*
 * perf's lesson: output lost to a full disk or a closed pipe is a failure,
 * and stdout is broken, so say it on stderr whatever the mode.
 */
static int close_stdout(int ret)
{
	const char *what = NULL;

	if (fflush(stdout))
		what = strerror(errno);
	else if (ferror(stdout))
		what = "I/O error";
	else if (fclose(stdout))
		what = strerror(errno);
	if (!what)
		return ret;
	fprintf(stderr, "Error: cannot write to stdout: %s\n", what);
	return ret ?: OOMCTL_EXIT_FAIL;
}

int main(int argc, char **argv)
{
	static const struct argp argp = {
		.options = options,
		.parser = parse_opt,
		.args_doc = "OBJECT [COMMAND [ARGS...]]",
		.doc = "Inspect and steer the kernel's OOM handling with BPF "
		       "policies.\vRun 'oomctl help' for the objects and their "
		       "commands.",
	};
	int first = argc, ret;

	bin_name = program_invocation_short_name;
	libbpf_set_print(print_libbpf);

	if (argp_parse(&argp, argc, argv,
		       ARGP_IN_ORDER | ARGP_NO_ERRS | ARGP_NO_HELP, NULL, &first)) {
		ret = OOMCTL_EXIT_USAGE;
	} else if (show_help) {
		argp_help(&argp, stdout, show_help, (char *)bin_name);
		ret = OOMCTL_EXIT_OK;
	} else if (show_version) {
		ret = do_version();
	} else if (first >= argc) {
		p_err("missing OBJECT; see '%s help'", bin_name);
		ret = OOMCTL_EXIT_USAGE;
	} else {
		ret = cmd_select(objects, argc - first, argv + first);
	}

	/* never fail silently, even through a handler's bug */
	if (ret && !p_err_reported())
		p_err("command failed");
	out_finish();
	return close_stdout(ret);
}
