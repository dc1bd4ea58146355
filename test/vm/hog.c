// SPDX-License-Identifier: GPL-2.0
/*
 * hog MIB [OOM_SCORE_ADJ] [READY_FILE]: touch exactly MIB MiB of anonymous
 * memory, then create READY_FILE (if given) and sleep until killed. For the
 * shell scenarios; unlike stress-ng it neither respawns nor rewrites its
 * oom_score_adj.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	size_t bytes;
	char *mem;
	int fd;

	if (argc < 2 || atol(argv[1]) <= 0) {
		fprintf(stderr, "usage: hog MIB [OOM_SCORE_ADJ] [READY_FILE]\n");
		return 2;
	}
	bytes = (size_t)atol(argv[1]) << 20;
	if (argc > 2) {
		fd = open("/proc/self/oom_score_adj", O_WRONLY);
		if (fd < 0 || write(fd, argv[2], strlen(argv[2])) < 0) {
			perror("hog: oom_score_adj");
			return 1;
		}
		close(fd);
	}
	mem = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED) {
		perror("hog: mmap");
		return 1;
	}
	for (size_t i = 0; i < bytes; i += 4096)
		mem[i] = 1;
	if (argc > 3 && (fd = open(argv[3], O_CREAT | O_WRONLY, 0644)) >= 0)
		close(fd);
	for (;;)
		pause();
}
