// SPDX-License-Identifier: GPL-2.0
/*
 * hog MIB [OOM_SCORE_ADJ] [READY_FILE]: touch exactly MIB MiB of anonymous
 * memory, then create READY_FILE (if given) and sleep until killed. With
 * HOG_CYCLE=1 in its environment (which lib.sh's hog_start passes on) it
 * does not sleep but rewrites those pages, pass after pass: in a cgroup
 * that holds less than MIB MiB it keeps reclaiming (swapping) to go on. For the shell scenarios; unlike stress-ng it neither
 * respawns nor rewrites its oom_score_adj. The C scenarios' hogs
 * (scenario.c) do the same through the same hog_set_adj() and hog_fill().
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "scenario.h"

/* One write to every page; volatile, as nothing reads them back */
static void touch(volatile char *mem, size_t bytes, char value)
{
	long page = sysconf(_SC_PAGESIZE);

	for (size_t i = 0; i < bytes; i += page)
		mem[i] = value;
}

int main(int argc, char **argv)
{
	const char *cycle = getenv("HOG_CYCLE");
	bool cycling = cycle && !strcmp(cycle, "1");
	char *end, *mem = NULL;
	size_t bytes;
	long mib;
	int fd, err = 0;

	mib = argc >= 2 ? strtol(argv[1], &end, 10) : 0;
	if (argc < 2 || argc > 4 || mib <= 0 || *end) {
		fprintf(stderr, "usage: hog MIB [OOM_SCORE_ADJ] [READY_FILE]\n");
		return 2;
	}
	if (cycle && !cycling && strcmp(cycle, "0")) {
		fprintf(stderr, "hog: HOG_CYCLE must be 0 or 1, not \"%s\"\n", cycle);
		return 2;
	}
	bytes = (size_t)mib * MiB;
	if (argc > 2 && (err = hog_set_adj(argv[2]))) {
		fprintf(stderr, "hog: oom_score_adj %s: %s\n", argv[2], strerror(-err));
		return 1;
	}
	if (cycling) {
		/* its own mapping: the passes need the address */
		mem = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (mem == MAP_FAILED)
			err = -errno;
		else
			touch(mem, bytes, 1);
	} else {
		err = hog_fill(bytes);
	}
	if (err) {
		fprintf(stderr, "hog: mmap %ld MiB: %s\n", mib, strerror(-err));
		return 1;
	}
	if (argc > 3) {
		fd = open(argv[3], O_CREAT | O_WRONLY, 0644);
		if (fd < 0) {
			fprintf(stderr, "hog: %s: %s\n", argv[3], strerror(errno));
			return 1;
		}
		close(fd);
	}
	for (char pass = 2; cycling; pass++)
		touch(mem, bytes, pass);
	for (;;)
		pause();
}
