/*
 * The command line's own declarations, for the front ends (main.c, OBJECT.c,
 * apply.c, ...): exit codes, argument handling, help, and the renderers
 * shared by several front ends. Backends include backend.h, never this.
 */
#ifndef OOMCTL_MAIN_H
#define OOMCTL_MAIN_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "backend.h"
#include "cgroup.h"
#include "options.h"
#include "output.h"
#include "parse.h"

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

extern const char *bin_name;

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

/*
 * The number after keyword @what (count, order, ...) in *@val, or a usage
 * error naming it and its range; returns 0 or OOMCTL_EXIT_USAGE.
 */
int arg_number(const char *what, const char *arg, uint64_t min, uint64_t max,
	       uint64_t *val);

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
	"                    {-r|--raw} | {-b|--bytes} |\n"		\
	"                    --bpffs DIR | --cgroupfs DIR }"

/* A backend's 0 / -errno as an exit status, with a message if it gave none */
int cmd_status(int err);

/*
 * The front end's call of a backend: the kernel is checked first, so that
 * on a kernel without the BPF OOM series no backend makes a bpf() call.
 */
#define cmd_backend(call)	cmd_status(kernel_check(NULL) ?: (call))

/*
 * The renderers of what the backends return, shared by the front ends
 * (dump, apply, oom declare): each calls its backend where it takes no
 * result, and prints through output.h.
 */
extern const struct listing memcg_listing;	/* memcg_render.c */
extern const struct listing policy_listing;	/* policy_render.c */
extern const struct listing psi_listing;	/* psi.c */
int policy_list_print(void);
int policy_show_print(const char *name);
void policy_attached_print(const struct policy_attached *res, bool dry_run);
void policy_detached_print(const char *name);
int policy_explain_print(const struct policy_explain_opts *opts);
int psi_list_print(void);
void psi_added_print(const struct psi_add_opts *opts, int id);
void psi_deleted_print(const int *ids, int n);
int event_list_print(const struct event_list_opts *opts);	/* event.c */
void event_print(const struct oom_event *e);

int do_memcg(int argc, char **argv);
int do_policy(int argc, char **argv);
int do_psi(int argc, char **argv);
int do_oom(int argc, char **argv);
int do_event(int argc, char **argv);
int do_dump(int argc, char **argv);

#endif /* OOMCTL_MAIN_H */
