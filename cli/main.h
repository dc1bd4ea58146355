/* Shared declarations of the oomctl command line. */
#ifndef OOMCTL_MAIN_H
#define OOMCTL_MAIN_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "cgroup.h"
#include "output.h"
#include "parse.h"

#define OOMCTL_BPFFS_DEFAULT	"/sys/fs/bpf/oomctl"
#define OOMCTL_CGROUPFS_DEFAULT	"/sys/fs/cgroup"

/*
 * Exit status of oomctl, and the return value of every command handler.
 * Documented in oomctl(8); scripts rely on these, so never renumber.
 */
enum oomctl_exit {
	OOMCTL_EXIT_OK		= 0,	/* success */
	OOMCTL_EXIT_FAIL	= 1,	/* runtime failure: not found, the
					 * kernel or the verifier refused,
					 * stdout could not be written */
	OOMCTL_EXIT_USAGE	= 2,	/* bad syntax or argument value */
	OOMCTL_EXIT_NOSUPP	= 3,	/* the kernel lacks the BPF OOM hooks */
};

#ifndef __maybe_unused
#define __maybe_unused		__attribute__((unused))
#endif
#define __str(x)		#x
#define __stringify(x)		__str(x)

extern const char *bin_name;
extern bool debug;		/* -d: libbpf and verifier logs on stderr */
extern const char *bpffs_dir;	/* --bpffs: where oomctl pins live */
extern const char *cgroupfs_dir;	/* --cgroupfs: the cgroup2 mount */

/*
 * Argument consumption, so that handlers read like the SYNOPSIS. Handlers
 * get argc/argv after their verb. REQ_ARGS() and NO_MORE_ARGS() report a
 * usage error themselves; the handler then returns OOMCTL_EXIT_USAGE.
 */
#define NEXT_ARG()	({ argc--; argv++; })
#define GET_ARG()	({ argc--; *argv++; })
#define ARG_IS(kw)	(argc > 0 && !strcmp(*argv, (kw)))
#define REQ_ARGS(cnt)							\
	({								\
		bool _ok = argc >= (cnt);				\
									\
		if (!_ok)						\
			usage_err("missing argument");			\
		_ok;							\
	})
#define NO_MORE_ARGS()							\
	({								\
		bool _ok = argc <= 0;					\
									\
		if (!_ok)						\
			usage_err("unexpected argument '%s'", *argv);	\
		_ok;							\
	})

/*
 * Run the entry of @cmds that *argv names (unique prefix), or the first
 * entry if there is no argument: put the default verb first. A verb that
 * kills is never a default: such an object puts "help" first (oom.c).
 */
int cmd_select(const struct cmd *cmds, int argc, char **argv);

/*
 * The keyword @arg names in @words (NULL-terminated): its index, exact or
 * by unique prefix as objects and verbs; KW_NONE if it names none, or
 * KW_AMBIGUOUS after a one-line error naming the candidates. Where a
 * keyword and a CGROUP share a position, the verb tests ARG_IS() instead,
 * so that a prefix there stays a cgroup name.
 */
#define KW_NONE		(-1)
#define KW_AMBIGUOUS	(-2)
int arg_keyword(const char *const *words, const char *arg);

/* p_err() "MSG; usage: oomctl OBJECT VERB ARGS" for the running verb */
void usage_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* The help of one object, built from its table, on stdout */
int print_usage(const char *object, const struct cmd *cmds, const char *defs);

#define HELP_SPEC_CGROUP						\
	"CGROUP := { PATH | /PATH | " OOMCTL_CGROUPFS_DEFAULT "/PATH }"	\
	"  (under --cgroupfs)"
#define HELP_SPEC_DURATION						\
	"DURATION := NUMBER[us|ms|s|min]  (a bare number is microseconds)"
#define HELP_SPEC_OPTIONS						\
	"OPTIONS := { {-j|--json} [{-p|--pretty}] | {-d|--debug} |\n"	\
	"                    {-o|--output} COLUMNS | {-n|--noheadings} |\n"	\
	"                    --bpffs DIR | --cgroupfs DIR }"

/* A backend's 0 / -errno as an exit status, with a message if it gave none */
int cmd_status(int err);

int do_memcg(int argc, char **argv);
int do_policy(int argc, char **argv);
int do_psi(int argc, char **argv);
int do_oom(int argc, char **argv);
int do_event(int argc, char **argv);
int do_dump(int argc, char **argv);

#endif /* OOMCTL_MAIN_H */
