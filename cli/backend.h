/*
 * What the BPF side implements: one function per verb. The command line
 * has already checked every argument, resolved cgroups to ids and made
 * sure files exist, so these only act and report.
 *
 * Contract:
 * - Return 0, or a negative errno after reporting the failure with one
 *   p_err() (with -d, libbpf and verifier logs go to stderr as well).
 *   -EOPNOTSUPP means "this kernel lacks the BPF OOM hooks" and becomes
 *   exit status 3; anything else is 1. A failure with no p_err() still
 *   gets a generic "Error:" line, but a specific one is better.
 * - Print results only through output.h (out_*, table_*), so -j and -p
 *   work. List functions put their array under a key (table_open("memcgs",
 *   ...)), so `oomctl dump` can gather them into one JSON object.
 *   A command with nothing to say prints nothing: JSON mode then says null.
 * - Paths: pins live under bpffs_dir, cgroups under cgroupfs_dir (main.h);
 *   `debug` asks for libbpf's kernel_log_level (verifier log).
 * - event_watch() runs until SIGINT/SIGTERM or until out_flush() fails
 *   (stdout closed); it calls out_flush() after each event.
 *
 */
#ifndef OOMCTL_BACKEND_H
#define OOMCTL_BACKEND_H

#include <stdbool.h>
#include <stdint.h>

#include "kernel.h"
#include "main.h"

/*
 * The front end's call of a backend: the kernel is checked first, so that
 * on a kernel without the BPF OOM series no backend makes a bpf() call.
 */
#define cmd_backend(call)	cmd_status(kernel_check(NULL) ?: (call))

/* memcg list [CGROUP] [tree] */
struct memcg_list_opts {
	const struct cgroup_ref *root;	/* NULL: the whole hierarchy */
	bool tree;			/* show descendants as a tree */
};

int memcg_list(const struct memcg_list_opts *opts);
/* its columns, for -o (memcg_render.c) */
extern const struct listing memcg_listing;

/* memcg show CGROUP */
int memcg_show(const struct cgroup_ref *cg);

/* The built-in policies' names, joined by @sep, in @buf */
const char *policy_builtin_names(const char *sep, char *buf, size_t size);

/* policy list */
int policy_list(void);
extern const struct listing policy_listing;

/* policy show NAME */
int policy_show(const char *name);

/* policy attach { NAME | FILE.bpf.o } [scope CGROUP] [dry-run] */
struct policy_attach_opts {
	const char *name;		/* built-in policy, or NULL */
	const char *file;		/* BPF object file, or NULL */
	const char *as;			/* its name, if not its own */
	const struct cgroup_ref *scope;	/* NULL: system-wide */
	bool dry_run;			/* attach; log victims, kill nothing */
};

int policy_attach(const struct policy_attach_opts *opts);

/* policy detach NAME */
int policy_detach(const char *name);

/* policy explain [NAME] [CGROUP] (policy_explain.c) */
struct policy_explain_opts {
	const char *name;		/* NULL: every attached OOM policy */
	const struct cgroup_ref *oom;	/* the pretended OOM; NULL: system-wide */
};

int policy_explain(const struct policy_explain_opts *opts);

/* psi list */
int psi_list(void);
extern const struct listing psi_listing;

/* psi add CGROUP { some | full } STALL WINDOW */
struct psi_add_opts {
	const struct cgroup_ref *cg;
	enum psi_stall type;
	uint64_t stall_us;		/* 0 < stall_us <= window_us */
	uint64_t window_us;		/* PSI_WINDOW_MIN_US..PSI_WINDOW_MAX_US */
	uint64_t pause_us;		/* psi_pause_check() */
	int *id;			/* if set, gets the new trigger's id */
};

int psi_add(const struct psi_add_opts *opts);

/* psi del { ID | CGROUP }: exactly one of the two */
struct psi_del_opts {
	const struct cgroup_ref *cg;	/* NULL: by id */
	uint32_t id;
};

int psi_del(const struct psi_del_opts *opts);

/* oom declare [CGROUP] [order N] [wait] */
struct oom_declare_opts {
	const struct cgroup_ref *cg;	/* NULL: system-wide */
	unsigned int order;		/* 0..OOM_ORDER_MAX */
	bool wait;			/* retry while another OOM holds the lock */
};

/* MAX_PAGE_ORDER of x86-64 and of arm64 with 4K pages */
#define OOM_ORDER_MAX	10

int oom_declare(const struct oom_declare_opts *opts);

/* event list [count N] */
struct event_list_opts {
	uint32_t count;			/* 0: all kept events */
};

int event_list(const struct event_list_opts *opts);

/* event watch */
int event_watch(void);

/* event export --prometheus [FILE] */
struct event_export_opts {
	const char *file;		/* NULL: stdout; else replaced atomically */
};

int event_export(const struct event_export_opts *opts);

/* Shared by the backends */

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

#endif /* OOMCTL_BACKEND_H */
