// SPDX-License-Identifier: GPL-2.0
/*
 * The hierarchy test/bench/oom_path.sh measures the OOM path over.
 *
 * oom_path_tree populate DIR NCG NTASKS
 *	Make NCG leaf memory cgroups DIR/cg0001.. below DIR (an existing
 *	cgroup2 directory) and fill each with NTASKS sleeping processes, but
 *	the last one with NTASKS - 1: the hog below is its last. Prints
 *	"ready PID" (its own pid) once all are in, then stays, out of DIR, as
 *	the sleepers' parent and reaper until they are all gone.
 * oom_path_tree hog CGROUP MIB
 *	Move into CGROUP, touch MIB MiB of anonymous memory, print its pid,
 *	and sleep until killed.
 *
 * One fork per sleeper and no exec (an exec costs ~0.1 s under TCG), from
 * a small static binary, so that 10,000 of them cost little time and
 * memory. The sleepers touch no memory of their own: the OOM's victim must
 * be the hog, whichever selection runs, and only if it looked at all.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static void die(const char *fmt, ...)
{
	va_list ap;

	fputs("oom_path_tree: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

static void write_file(const char *dir, const char *file, const char *val)
{
	char path[4096];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	fd = open(path, O_WRONLY);
	if (fd < 0)
		die("%s: %s", path, strerror(errno));
	if (write(fd, val, strlen(val)) < 0)
		die("%s: write %s: %s", path, val, strerror(errno));
	close(fd);
}

/* Our own cgroup, to go back to: "0::/PATH" in /proc/self/cgroup */
static void own_cgroup(char *buf, size_t size)
{
	char line[2048];
	FILE *f = fopen("/proc/self/cgroup", "r");

	if (!f || !fgets(line, sizeof(line), f) || strncmp(line, "0::", 3))
		die("cannot read /proc/self/cgroup");
	fclose(f);
	line[strcspn(line, "\n")] = 0;
	snprintf(buf, size, "/sys/fs/cgroup%s", line + 3);
}

static long number(const char *s, const char *what)
{
	char *end;
	long v = strtol(s, &end, 10);

	if (*s == 0 || *end || v <= 0)
		die("%s must be a positive number, not \"%s\"", what, s);
	return v;
}

static void sleeper(void)
{
	for (;;)
		pause();
}

static int populate(const char *dir, long ncg, long ntasks)
{
	char home[4096], cg[4096];
	int null = open("/dev/null", O_WRONLY);
	pid_t pid;

	if (null < 0)
		die("/dev/null: %s", strerror(errno));
	own_cgroup(home, sizeof(home));
	write_file(dir, "cgroup.subtree_control", "+memory");
	for (long i = 1; i <= ncg; i++) {
		long n = i == ncg ? ntasks - 1 : ntasks;

		snprintf(cg, sizeof(cg), "%s/cg%04ld", dir, i);
		if (mkdir(cg, 0755) && errno != EEXIST)
			die("mkdir %s: %s", cg, strerror(errno));
		write_file(cg, "cgroup.procs", "0");
		for (long t = 0; t < n; t++) {
			pid = fork();
			if (pid < 0)
				die("fork (%ld of %ld in %s): %s", t + 1, n, cg,
				    strerror(errno));
			/* Not on our stdout: the caller reads it up to its end
			 * if we die before "ready" */
			if (!pid) {
				dup2(null, STDOUT_FILENO);
				sleeper();
			}
		}
	}
	write_file(home, "cgroup.procs", "0");
	printf("ready %d\n", getpid());
	fflush(stdout);
	/* The caller reads one line: let it see the end of our output */
	if (dup2(null, STDOUT_FILENO) < 0)
		die("/dev/null: %s", strerror(errno));
	close(null);
	while (wait(NULL) > 0 || errno == EINTR)
		;
	return 0;
}

static int hog(const char *cg, long mib)
{
	size_t bytes = (size_t)mib << 20;
	long page = sysconf(_SC_PAGESIZE);
	volatile char *mem;

	write_file(cg, "cgroup.procs", "0");
	mem = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED)
		die("mmap %ld MiB: %s", mib, strerror(errno));
	for (size_t i = 0; i < bytes; i += page)
		mem[i] = 1;
	printf("%d\n", getpid());
	fflush(stdout);
	close(STDOUT_FILENO);
	sleeper();
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 5 && !strcmp(argv[1], "populate"))
		return populate(argv[2], number(argv[3], "NCG"),
				number(argv[4], "NTASKS"));
	if (argc == 4 && !strcmp(argv[1], "hog"))
		return hog(argv[2], number(argv[3], "MIB"));
	fprintf(stderr, "usage: oom_path_tree populate DIR NCG NTASKS\n"
			"       oom_path_tree hog CGROUP MIB\n");
	return 2;
}
