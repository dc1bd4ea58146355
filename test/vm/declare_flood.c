// SPDX-License-Identifier: GPL-2.0
/*
 * declare_flood CGROUP_DIR N: declare N OOMs in a memcg through the
 * oom_declare syscall program, loaded once. Each is logged; the event log
 * test uses it to fill the log quickly.
 *
 * declare_flood --children CGROUP_DIR: one OOM in each cgroup below
 * CGROUP_DIR (not deeper), for as many label sets in the log's counts.
 */
#include <dirent.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "oom_shared.h"
#include "oom_declare.skel.h"

static int declare(int fd, unsigned long long cgroup_id)
{
	struct oom_declare_args args = { .cgroup_id = cgroup_id };
	LIBBPF_OPTS(bpf_test_run_opts, opts, .ctx_in = &args,
		    .ctx_size_in = sizeof(args));

	if (bpf_prog_test_run_opts(fd, &opts) || args.ret < 0) {
		fprintf(stderr, "declare in cgroup %llu failed: %d\n",
			cgroup_id, args.ret);
		return 1;
	}
	return 0;
}

/* One OOM in each child of @dir; a cgroup2 dir's inode is its id */
static int declare_children(int fd, const char *dir)
{
	struct dirent *de;
	int n = 0, err = 0;
	DIR *d = opendir(dir);

	if (!d) {
		perror(dir);
		return 1;
	}
	while (!err && (de = readdir(d)))
		if (de->d_type == DT_DIR && strcmp(de->d_name, ".") &&
		    strcmp(de->d_name, "..")) {
			err = declare(fd, de->d_ino);
			n++;
		}
	closedir(d);
	if (!err)
		printf("%d declared OOMs, one a cgroup\n", n);
	return err;
}

int main(int argc, char **argv)
{
	bool children = argc == 3 && !strcmp(argv[1], "--children");
	struct oom_declare_bpf *skel;
	struct stat st;
	int n = 0, fd, err = 0;

	if (argc != 3 || (!children && (stat(argv[1], &st) ||
					 (n = atoi(argv[2])) <= 0))) {
		fprintf(stderr, "usage: declare_flood CGROUP_DIR N | --children CGROUP_DIR\n");
		return 2;
	}
	skel = oom_declare_bpf__open_and_load();
	if (!skel)
		return 1;
	fd = bpf_program__fd(skel->progs.oom_declare);
	if (children)
		err = declare_children(fd, argv[2]);
	for (int i = 0; i < n && !err; i++)
		err = declare(fd, st.st_ino);
	oom_declare_bpf__destroy(skel);
	return err;
}
