/*
 * oomctl's configuration, /etc/oomctl/oomctl.conf and its drop-ins: read,
 * checked and resolved in full before anything is applied (apply.c).
 *
 * The syntax is oomctl's own command line, one command a line:
 *
 *   # comment
 *   policy attach { NAME | /PATH/FILE.bpf.o } [scope CGROUP] [dry-run]
 *                 [name POLICY]
 *   psi add CGROUP { some | full } STALL WINDOW
 *
 * Why: an admin already knows these words from oomctl(8) and can try any
 * line by typing "oomctl " before it; a second vocabulary (INI keys) would
 * have to be learned, documented and kept in step with the command line.
 */
#ifndef OOMCTL_CONFIG_H
#define OOMCTL_CONFIG_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

#include "parse.h"

#define OOMCTL_CONF_FILE	"/etc/oomctl/oomctl.conf"
/*
 * Drop-ins: the files NAME.conf in DIR/oomctl/oomctl.conf.d for DIR in /etc,
 * /run, /usr/local/lib and /usr/lib, as systemd reads oomd.conf's: by name
 * across the folders, and of two with the same name, the one in the
 * earlier folder (an empty file or a link to /dev/null there masks one
 * below).
 */
#define OOMCTL_CONF_DROPINS	"oomctl/oomctl.conf.d"

/* "FILE:LINE" of an entry, for its errors */
#define CONF_WHERE_LEN		(PATH_MAX + 16)

struct conf_policy {
	char where[CONF_WHERE_LEN];
	char name[32];			/* the registry's key */
	bool builtin;			/* else an object file */
	char kind[32];			/* which built-in */
	char file[PATH_MAX];		/* realpath() of the object */
	uint64_t file_size;		/* file_digest(): to see a changed */
	uint32_t file_crc32;		/* object, whatever its mtime */
	uint64_t scope_id;		/* 0: system-wide */
	char scope[PATH_MAX];		/* "/a/b" under cgroupfs_dir */
	bool dry_run;
	bool kill_unit;
};

struct conf_trigger {
	char where[CONF_WHERE_LEN];
	uint64_t cgroup_id;
	char cgroup[PATH_MAX];
	enum psi_stall type;
	uint64_t stall_us, window_us;
	uint64_t pause_us;		/* pause DURATION, or the default */
};

struct config {
	struct conf_policy *policies;
	int npolicies;
	struct conf_trigger *triggers;
	int ntriggers;
	int nfiles;			/* files read */
};

/*
 * Read @file, or if NULL the default file (if present) and then the
 * drop-ins, in the order above. Each bad line is reported in one p_err()
 * line "FILE:LINE: problem", and the read goes on to tell the next; a file
 * that cannot be read ends it. Cgroups are resolved and object files
 * looked at; no bpf() call. 0 or an exit status (OOMCTL_EXIT_USAGE for a
 * bad configuration, OOMCTL_EXIT_FAIL for an unreadable file).
 */
int config_read(const char *file, struct config *conf);
void config_free(struct config *conf);

struct dropin {
	char name[NAME_MAX + 1];
	char path[PATH_MAX + NAME_MAX + 2];
};

/*
 * The drop-ins @sub ("oomctl/oomctl.conf.d") of /etc, /run, /usr/local/lib
 * and /usr/lib, as above: the files to read, in order, in *@dropins (free()
 * it). Their count, or -(an exit status) after one error line.
 */
int dropins_list(const char *sub, struct dropin **dropins);

/*
 * Read the configuration and apply it, as oomctl apply does: 0 or an exit
 * status, after the problem's error line.
 */
int apply_configured(void);

/* oomctl apply [--check] [FILE] (apply.c) */
int do_apply(int argc, char **argv);

/* oomctl units (managed_oom.c) */
int do_units(int argc, char **argv);

#endif /* OOMCTL_CONFIG_H */
