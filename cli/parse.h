/* Pure parsers and formatters of oomctl: no output, no global state. */
#ifndef OOMCTL_PARSE_H
#define OOMCTL_PARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * One entry of an object or verb table. @args is the SYNOPSIS after the
 * keyword; help text and usage errors are built from it, so they cannot
 * drift from the table.
 */
struct cmd {
	const char *cmd;
	int (*func)(int argc, char **argv);
	const char *args;
};

bool is_prefix(const char *pfx, const char *str);

/*
 * Match @arg against the NULL-terminated table @cmds: an exact name wins,
 * otherwise @arg must be the prefix of exactly one name. Returns the number
 * of candidates (0: unknown, 1: *@match is set, >1: ambiguous).
 */
int cmd_find(const struct cmd *cmds, const char *arg, const struct cmd **match);

/*
 * Match @arg against the NULL-terminated @words as cmd_find() does: the
 * number of candidates, *@idx set to the match when there is one.
 */
int keyword_find(const char *const *words, const char *arg, int *idx);

/*
 * Numbers. All return 0, -EINVAL for malformed input (empty, sign, space,
 * garbage, unknown unit, not a whole base unit) or -ERANGE when the value
 * overflows or is out of [@min, @max]. Decimal only: "010" is ten.
 */
int parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *val);

/*
 * Durations: DIGITS[.DIGITS][us|ms|s|min], a bare number is microseconds as
 * in the kernel's PSI trigger interface ("some 150000 1000000"). A fraction
 * is allowed if the result is a whole microsecond: "1.5s", not "1.5us".
 */
int parse_duration(const char *s, uint64_t *usec);

/*
 * Sizes: DIGITS[.DIGITS][K|M|G|T] (either case, binary units), a bare number
 * is bytes; "1.5G" is fine, "0.3K" is not a whole byte and is refused.
 */
int parse_size(const char *s, uint64_t *bytes);

enum psi_stall {
	PSI_SOME,
	PSI_FULL,
};

/* "some" or "full", spelled out: these are the kernel's own words. */
int parse_psi_stall(const char *s, enum psi_stall *type);
const char *psi_stall_str(enum psi_stall type);

/*
 * A value of the kernel's enum psi_states, as the event log records it (a
 * PSI event's trigger), named: its resource ("io", "memory", "cpu") and
 * its kind ("some", "full"), "unknown" past them. The one copy of that
 * order: PSI_IO_SOME, PSI_IO_FULL, PSI_MEM_SOME, ..., PSI_CPU_FULL.
 */
void psi_state_names(uint32_t state, const char **resource, const char **kind);

/* The kernel takes windows up to 10 s (WINDOW_MAX_US); below 500 ms it
 * would poll every few ms, so oomctl keeps the old 500 ms floor. */
#define PSI_WINDOW_MIN_US	500000ULL
#define PSI_WINDOW_MAX_US	10000000ULL

/* -ERANGE: window outside 500ms..10s, -EINVAL: stall 0 or > window */
int psi_trigger_check(uint64_t stall_us, uint64_t window_us);

/* psi-declare's pause after a kill (psi add ... pause DURATION): at most
 * 10 min, which apply's trigger marks keep in 32 bits of microseconds */
#define PSI_PAUSE_MAX_US	600000000ULL

/* -ERANGE: over 10 min */
int psi_pause_check(uint64_t pause_us);

/*
 * The pause when none is given: two windows. An event reports the stall
 * of the window before it, and PSI carries a share of the previous
 * window's growth into the next, so stall from before a kill can fire the
 * trigger until two windows after it.
 */
#define PSI_PAUSE_DEFAULT(window_us)	(2 * (window_us))

/* BPF_OBJ_NAME_LEN - 1, so the name fits a BPF object name */
#define POLICY_NAME_MAX		15
#define POLICY_NAME_RULE	"1 to 15 of [a-z0-9_-], not starting with '-'"

/*
 * 1..15 characters of [a-z0-9_-], not starting with '-' (it would read as
 * an option). -EINVAL or -ENAMETOOLONG.
 */
int policy_name_check(const char *name);

/*
 * Normalize a cgroup argument to a path relative to @cgroupfs, written as
 * "/a/b" ("/" for the root) into @buf. "@cgroupfs/a/b", "/a/b" and "a/b"
 * all give "/a/b"; "//" and "." are folded. Any ".." is refused (-EINVAL)
 * so an argument cannot escape @cgroupfs; -ENAMETOOLONG if @buf is short.
 */
int cgroup_path_norm(const char *cgroupfs, const char *arg, char *buf,
		     size_t size);

/*
 * The cgroup id of the cgroup2 directory @path: on kernfs the file handle is
 * the 64-bit node id, the same id BPF sees (bpf_get_current_cgroup_id()).
 * This one touches the filesystem. -ENOENT etc. from the syscalls, -ENOTDIR
 * if @path is not a directory, -EMEDIUMTYPE if it is not on cgroup2.
 */
int cgroup_id_from_path(const char *path, uint64_t *id);

/* "0", "1023", "4.0K", "312M", "1.5G": like ls -h, binary units */
#define FMT_BYTES_LEN	24	/* also -b's 20 digits */
char *fmt_bytes(uint64_t bytes, char *buf, size_t size);

/* "0", "500us", "1.5ms", "2s": exact, so parse_duration() reads it back */
#define FMT_USEC_LEN	32
char *fmt_usec(uint64_t usec, char *buf, size_t size);

/* @ns is CLOCK_REALTIME in ns. ISO 8601 UTC for JSON, local time for people */
#define FMT_TIME_LEN	48
char *fmt_time_iso(uint64_t ns, char *buf, size_t size);
char *fmt_time_local(uint64_t ns, char *buf, size_t size);

#endif /* OOMCTL_PARSE_H */
