/*
 * What the BPF side implements: one function per verb. The command line
 * has already checked every argument, resolved cgroups to ids and made
 * sure files exist, so these only act and return what they found.
 *
 * Contract:
 * - Return 0 (or a count), or a negative errno after reporting the failure
 *   with one p_err() on stderr (with -d, libbpf and verifier logs go there
 *   as well). -EOPNOTSUPP means "this kernel lacks the BPF OOM hooks" and
 *   becomes exit status 3; anything else is 1. A failure with no p_err()
 *   still gets a generic "Error:" line, but a specific one is better.
 * - Print nothing on stdout: results come back as structs, and the front
 *   ends (OBJECT.c, apply.c) render them through output.h. The host test
 *   oomctl-backends-quiet checks the backends' objects for it.
 * - Paths: pins live under bpffs_dir, cgroups under cgroupfs_dir
 *   (options.h); `debug` asks for libbpf's kernel_log_level (verifier log).
 */
#ifndef OOMCTL_BACKEND_H
#define OOMCTL_BACKEND_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

#include "bpffs.h"
#include "cgroup.h"
#include "kernel.h"
#include "oom_explain.h"
#include "oom_shared.h"
#include "options.h"
#include "output.h"
#include "parse.h"

/* memcg list [CGROUP] [tree] */
struct memcg_list_opts {
	const struct cgroup_ref *root;	/* NULL: the whole hierarchy */
	bool tree;			/* show descendants as a tree */
};

int memcg_list(const struct memcg_list_opts *opts);

/* memcg show CGROUP */
int memcg_show(const struct cgroup_ref *cg);

/* The built-in policies' names, joined by @sep, in @buf */
const char *policy_builtin_names(const char *sep, char *buf, size_t size);

struct policy_meta;
/* The kernel's view of an attached policy: its links, programs, counters */
struct policy_stats {
	uint32_t prog_id;
	uint32_t link_id;
	uint64_t runs;
	bool runs_known;	/* its own nr_runs, or bpf_stats_enabled */
	/* Runs the trampoline's per-CPU recursion guard dropped (hook programs) */
	uint64_t missed;
	uint64_t kills;
};
void policy_stats(const struct policy_meta *meta, struct policy_stats *st);

/* An attached policy, as policy list and show find it */
struct policy_info {
	struct policy_meta meta;
	struct policy_stats st;
	char scope[PATH_MAX];	/* its cgroup's path, or "system" */
	bool orphaned;		/* its scope was removed: it applies nowhere */
};

/* policy list: the attached policies in *@infos (free() it); the count */
int policy_list(struct policy_info **infos);

/* policy show NAME */
int policy_show(const char *name, struct policy_info *info);

/* policy attach { NAME | FILE.bpf.o } [scope CGROUP] [dry-run] [kill-unit] */
struct policy_attach_opts {
	const char *name;		/* built-in policy, or NULL */
	const char *file;		/* BPF object file, or NULL */
	const char *as;			/* its name, if not its own */
	const struct cgroup_ref *scope;	/* NULL: system-wide */
	bool dry_run;			/* attach; log victims, kill nothing */
	bool kill_unit;			/* kill the victim's whole unit */
};

/* What policy attach made */
struct policy_attached {
	char name[POLICY_NAME_LEN];
	uint32_t prog_id, link_id;
};

int policy_attach(const struct policy_attach_opts *opts,
		  struct policy_attached *res);

/* policy detach NAME */
int policy_detach(const char *name);

/* policy explain [NAME] [CGROUP] (policy_explain.c) */
struct policy_explain_opts {
	const char *name;		/* NULL: every attached OOM policy */
	const struct cgroup_ref *oom;	/* the pretended OOM; NULL: system-wide */
};

/* One policy's explanation */
struct policy_explained {
	char name[POLICY_NAME_LEN];
	char source[POLICY_SOURCE_LEN];	/* as policy_meta's */
	bool attached, dry_run, state;	/* state: the attached policy's maps */
	bool kill_unit;			/* attached with kill-unit */
	uint64_t scope_id;
	struct oom_explain_args args;
	/* The units it looked at, in its order of preference, then the
	 * skipped ones */
	struct oom_explain_record *recs;
	size_t nr, cap;
	bool oom;
	const char *status;		/* "acts", "not reached" or NULL */
	bool failed;			/* not explained: @why says why */
	char why[PATH_MAX + 256];
};

/* Whether its OOM hook would end the chain: it kills */
bool policy_explained_kills(const struct policy_explained *e);

/* The explanation of one pretended OOM */
struct policy_explanation {
	uint64_t oom_id;		/* 0: system-wide */
	bool single;			/* explain NAME: @policies[0] alone */
	struct policy_explained *policies;	/* in the kernel's order */
	int n;
	const char *actor;		/* the policy that would act, or NULL */
	const char *unknown;		/* reached, but not explained */
};

int policy_explain(const struct policy_explain_opts *opts,
		   struct policy_explanation *x);
void policy_explanation_free(struct policy_explanation *x);

/* psi add CGROUP { some | full } STALL WINDOW */
struct psi_add_opts {
	const struct cgroup_ref *cg;
	enum psi_stall type;
	uint64_t stall_us;		/* 0 < stall_us <= window_us */
	uint64_t window_us;		/* PSI_WINDOW_MIN_US..PSI_WINDOW_MAX_US */
	uint64_t pause_us;		/* psi_pause_check() */
};

/* psi add: the new trigger's id in *@id */
int psi_add(const struct psi_add_opts *opts, int *id);

/* psi del { ID | CGROUP }: exactly one of the two */
struct psi_del_opts {
	const struct cgroup_ref *cg;	/* NULL: by id */
	uint32_t id;
};

/* The ids of the triggers deleted in *@ids (free() it), their count in
 * *@n, also when an error stopped the deletion midway */
int psi_del(const struct psi_del_opts *opts, int **ids, int *n);

/* oom declare [CGROUP] [order N] [wait] */
struct oom_declare_opts {
	const struct cgroup_ref *cg;	/* NULL: system-wide */
	unsigned int order;		/* 0..OOM_ORDER_MAX */
	bool wait;			/* retry while another OOM holds the lock */
};

/* MAX_PAGE_ORDER of x86-64 and of arm64 with 4K pages */
#define OOM_ORDER_MAX	10

/* What the OOM handling did */
struct oom_declared {
	bool handled;			/* it freed memory */
	const struct oom_event *kills;	/* the kills and dry-run kills
					 * logged meanwhile */
	int nr_kills;
};

int oom_declare(const struct oom_declare_opts *opts, struct oom_declared *res);

/* event list [count N] */
struct event_list_opts {
	uint32_t count;			/* 0: all kept events */
};

/* The records, oldest first, in *@evs (the backend's buffer): the count */
int event_list(const struct event_list_opts *opts, const struct oom_event **evs);

/*
 * event watch: @emit() each new record as it comes, until SIGINT or
 * SIGTERM, or until @emit() returns non-zero (stdout closed)
 */
int event_watch(int (*emit)(const struct oom_event *e));

/* event export --prometheus [FILE] */
struct event_export_opts {
	const char *file;		/* replaced atomically; NULL: *@text */
};

/* The text in *@text (free() it) when no file was given */
int event_export(const struct event_export_opts *opts, char **text, size_t *len);

/* Shared by the backends */

/* The kernel's list of its triggers, read by kernel_triggers_read() alone */
#define BPF_TRIGGERS		"/proc/pressure/bpf_triggers"
/* The name oomctl's PSI handler registers (bpf/psi_declare.bpf.c) */
#define PSI_DECLARE_NAME	"psi-declare"

/* One kernel-owned PSI trigger, a line of /proc/pressure/bpf_triggers */
struct kernel_trigger {
	int id;
	uint64_t cgroup_id;
	char resource[16];
	char kind[8];
	uint64_t threshold_us;
	uint64_t window_us;
	uint64_t events;
	/* The bpf_psi_ops handler that owns it, "" for a tool's (oomctl's) */
	char owner[32];
};
int kernel_triggers_read(struct kernel_trigger **trsp);	/* psi_backend.c */
/* The pause of oomctl's psi-declare handler of trigger @id and the events
 * it paused on (UINT64_MAX: unknown; @paused may be NULL), read from the
 * handler itself; -errno if it has none (another tool's trigger) */
int psi_handler_read(int id, uint64_t *pause_us, uint64_t *paused);	/* psi_backend.c */

/* psi list */
struct psi_trigger_info {
	struct kernel_trigger k;
	uint64_t pause_us;	/* UINT64_MAX: unknown (not a psi-declare's) */
	uint64_t paused;	/* UINT64_MAX: unknown */
};

/* The kernel-owned triggers in *@infos (free() it): the count */
int psi_list(struct psi_trigger_info **infos);

#endif /* OOMCTL_BACKEND_H */
