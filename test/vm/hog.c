// SPDX-License-Identifier: GPL-2.0
/*
 * hog MIB [OOM_SCORE_ADJ] [READY_FILE]: touch exactly MIB MiB of anonymous
 * memory, then create READY_FILE (if given) and sleep until killed. For the
 * shell scenarios; unlike stress-ng it neither respawns nor rewrites its
 * oom_score_adj. The C scenarios' hogs (scenario.c) do the same through the
 * same hog_set_adj() and hog_fill().
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "scenario.h"

int main(int argc, char **argv)
{
	char *end;
	long mib;
	int fd, err;

	mib = argc >= 2 ? strtol(argv[1], &end, 10) : 0;
	if (argc < 2 || argc > 4 || mib <= 0 || *end) {
		fprintf(stderr, "usage: hog MIB [OOM_SCORE_ADJ] [READY_FILE]\n");
		return 2;
	}
	if (argc > 2 && (err = hog_set_adj(argv[2]))) {
		fprintf(stderr, "hog: oom_score_adj %s: %s\n", argv[2], strerror(-err));
		return 1;
	}
	if ((err = hog_fill((size_t)mib * MiB))) {
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
	for (;;)
		pause();
}
