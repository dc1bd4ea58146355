// SPDX-License-Identifier: GPL-2.0
/*
 * cgfs_read [-m MOUNT] [CGROUP]: the fields of `oomctl memcg list`, read
 * from cgroupfs files by a tight reader, for test/bench/listing.sh to time
 * beside oomctl's BPF walker. One line per memcg of CGROUP's subtree
 * (default: the whole hierarchy), pre-order, siblings by name, as oomctl
 * lists them:
 *
 *   PATH CURRENT ANON FILE SWAP MAX HIGH OOM KILLS SOME10 FULL10 PROCS ID LEVEL
 *
 * from memory.current, memory.stat (anon, file), memory.swap.current,
 * memory.max, memory.high, memory.events (oom, oom_kill), memory.pressure
 * (some and full avg10), cgroup.procs (counted) and the directory's inode
 * (the cgroup id); sizes in bytes, "max" for no limit, "-" where the file
 * is missing (the root has no limits). Like oomctl, a cgroup without a
 * memcg of its own (no memory.current) is left out, and so is its
 * subtree, which cannot have one either.
 *
 * Tight: directories are read with getdents64, each file with one
 * openat+read+close into a stack buffer (cgroup.procs: until EOF), no
 * stdio on the input side, output through one large stdio buffer.
 * MOUNT defaults to /sys/fs/cgroup. Exit 1 on any error, with one line.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

static char path[PATH_MAX];	/* of the cgroup being read, below MOUNT */

static void die(const char *what)
{
	fprintf(stderr, "cgfs_read: %s%s%s: %s\n", path, *path ? ": " : "",
		what, strerror(errno));
	exit(1);
}

/*
 * @name of @dfd into @buf, NUL-ended: its length, or -1 if it does not
 * exist. cgroupfs files are seq_files that produce their whole text on the
 * first read when the buffer can hold it, so one read is enough.
 */
static ssize_t read_at(int dfd, const char *name, char *buf, size_t size)
{
	int fd = openat(dfd, name, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0) {
		if (errno == ENOENT)
			return -1;
		die(name);
	}
	n = read(fd, buf, size - 1);
	if (n < 0)
		die(name);
	close(fd);
	buf[n] = '\0';
	return n;
}

/* A single value ("123\n" or "max\n") copied as a token, "-" if missing */
static void value_at(int dfd, const char *name, char *out, size_t size)
{
	if (read_at(dfd, name, out, size) < 0)
		strcpy(out, "-");
	else
		out[strcspn(out, "\n")] = '\0';
}

/*
 * What follows @prefix at a line start of @text, up to the first of @stop
 * (or the line's end), or "-"
 */
static const char *after_in(const char *text, const char *prefix,
			    const char *stop, char *out, size_t size)
{
	size_t len = strlen(prefix), n;
	const char *p;

	for (p = text; p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		if (strncmp(p, prefix, len))
			continue;
		p += len;
		n = strcspn(p, stop);
		if (n >= size)
			n = size - 1;
		memcpy(out, p, n);
		out[n] = '\0';
		return out;
	}
	return "-";
}

/* The number after "KEY " at a line start of @text, or "-" */
static const char *key_in(const char *text, const char *key, char *out,
			  size_t size)
{
	char prefix[64];

	snprintf(prefix, sizeof(prefix), "%s ", key);
	return after_in(text, prefix, "\n", out, size);
}

/* avg10 of the "some"/"full" line of a pressure file, or "-" */
static const char *avg10_in(const char *text, const char *line, char *out,
			    size_t size)
{
	char prefix[16];

	snprintf(prefix, sizeof(prefix), "%s avg10=", line);
	return after_in(text, prefix, " \n", out, size);
}

static long count_procs(int dfd)
{
	int fd = openat(dfd, "cgroup.procs", O_RDONLY | O_CLOEXEC);
	char buf[16384];
	long lines = 0;
	ssize_t n, i;

	if (fd < 0)
		die("cgroup.procs");
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		for (i = 0; i < n; i++)
			lines += buf[i] == '\n';
	if (n < 0)
		die("cgroup.procs");
	close(fd);
	return lines;
}

static bool print_memcg(int dfd, unsigned int level)
{
	char cur[32], swap[32], max[32], high[32], stat[16384], events[512],
	     pressure[512], anon[32], file[32], oom[32], kill[32], some[16],
	     full[16];
	struct stat st;
	ssize_t n;

	/* the root has no memory.current but is a memcg: its stat says so */
	n = read_at(dfd, "memory.current", cur, sizeof(cur));
	if (n < 0 && level)
		return false;
	if (n < 0)
		strcpy(cur, "-");
	else
		cur[strcspn(cur, "\n")] = '\0';
	if (read_at(dfd, "memory.stat", stat, sizeof(stat)) < 0)
		return false;	/* memory not enabled at all */
	value_at(dfd, "memory.swap.current", swap, sizeof(swap));
	value_at(dfd, "memory.max", max, sizeof(max));
	value_at(dfd, "memory.high", high, sizeof(high));
	if (read_at(dfd, "memory.events", events, sizeof(events)) < 0)
		*events = '\0';
	if (read_at(dfd, "memory.pressure", pressure, sizeof(pressure)) < 0)
		*pressure = '\0';
	if (fstat(dfd, &st))
		die("fstat");

	printf("%s %s %s %s %s %s %s %s %s %s %s %ld %llu %u\n",
	       *path ? path : "/", cur,
	       key_in(stat, "anon", anon, sizeof(anon)),
	       key_in(stat, "file", file, sizeof(file)), swap, max, high,
	       key_in(events, "oom", oom, sizeof(oom)),
	       key_in(events, "oom_kill", kill, sizeof(kill)),
	       avg10_in(pressure, "some", some, sizeof(some)),
	       avg10_in(pressure, "full", full, sizeof(full)),
	       count_procs(dfd), (unsigned long long)st.st_ino, level);
	return true;
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The child cgroups of @dfd (directories), sorted; *nr set */
static char **children(int dfd, size_t *nr)
{
	char buf[32768], **names = NULL;
	size_t cap = 0, n = 0;
	long got, off;

	for (;;) {
		got = syscall(SYS_getdents64, dfd, buf, sizeof(buf));
		if (got < 0)
			die("getdents64");
		if (!got)
			break;
		for (off = 0; off < got;) {
			struct dirent64 *d = (struct dirent64 *)(buf + off);

			off += d->d_reclen;
			if (d->d_type != DT_DIR || !strcmp(d->d_name, ".") ||
			    !strcmp(d->d_name, ".."))
				continue;
			if (n == cap) {
				cap = cap ? 2 * cap : 64;
				names = realloc(names, cap * sizeof(*names));
				if (!names)
					die("realloc");
			}
			names[n] = strdup(d->d_name);
			if (!names[n++])
				die("strdup");
		}
	}
	qsort(names, n, sizeof(*names), name_cmp);
	*nr = n;
	return names;
}

/* Pre-order from the cgroup open at @dfd, whose path is in path[0..len) */
static void walk(int dfd, size_t len, unsigned int level)
{
	char **names;
	size_t i, nr, l;
	int cfd;

	if (!print_memcg(dfd, level))
		return;
	names = children(dfd, &nr);
	for (i = 0; i < nr; i++) {
		l = strlen(names[i]);
		if (len + 1 + l >= sizeof(path)) {
			errno = ENAMETOOLONG;
			die(names[i]);
		}
		path[len] = '/';
		memcpy(path + len + 1, names[i], l + 1);
		cfd = openat(dfd, names[i], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (cfd < 0)
			die("open");
		walk(cfd, len + 1 + l, level + 1);
		close(cfd);
		path[len] = '\0';
		free(names[i]);
	}
	free(names);
}

int main(int argc, char **argv)
{
	const char *mount = "/sys/fs/cgroup", *cg = "/";
	unsigned int level = 0;
	static char out[1 << 16];
	const char *p;
	size_t len;
	int opt, mfd, dfd;

	while ((opt = getopt(argc, argv, "m:")) != -1) {
		if (opt != 'm') {
			fputs("usage: cgfs_read [-m MOUNT] [CGROUP]\n", stderr);
			return 2;
		}
		mount = optarg;
	}
	if (optind + 1 < argc) {
		fputs("usage: cgfs_read [-m MOUNT] [CGROUP]\n", stderr);
		return 2;
	}
	if (optind < argc)
		cg = argv[optind];
	while (*cg == '/')
		cg++;
	len = strlen(cg);
	while (len && cg[len - 1] == '/')
		len--;
	if (len) {
		if (len + 1 >= sizeof(path)) {
			errno = ENAMETOOLONG;
			die(cg);
		}
		path[0] = '/';
		memcpy(path + 1, cg, len);
		path[++len] = '\0';
		for (p = path; *p; p++)
			level += *p == '/';
	}

	mfd = open(mount, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (mfd < 0)
		die(mount);
	dfd = len ? openat(mfd, path + 1, O_RDONLY | O_DIRECTORY | O_CLOEXEC) :
		    mfd;
	if (dfd < 0)
		die("open");
	if (faccessat(dfd, "memory.stat", F_OK, 0) ||
	    (level && faccessat(dfd, "memory.current", F_OK, 0))) {
		fprintf(stderr, "cgfs_read: %s: no memcg of its own\n",
			len ? path : "/");
		return 1;
	}
	setvbuf(stdout, out, _IOFBF, sizeof(out));
	walk(dfd, len, level);
	if (fflush(stdout) || ferror(stdout))
		die("stdout");
	return 0;
}
