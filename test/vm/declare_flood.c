// SPDX-License-Identifier: GPL-2.0
/*
 * declare_flood CGROUP_DIR N: declare N OOMs in a memcg through the
 * oom_declare syscall program, loaded once. Each is logged; the event log
 * test uses it to fill the log quickly.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "oom_shared.h"
#include "oom_declare.skel.h"

int main(int argc, char **argv)
{
	struct oom_declare_args args = {};
	LIBBPF_OPTS(bpf_test_run_opts, opts, .ctx_in = &args,
		    .ctx_size_in = sizeof(args));
	struct oom_declare_bpf *skel;
	struct stat st;
	int n, fd;

	if (argc != 3 || stat(argv[1], &st) || (n = atoi(argv[2])) <= 0) {
		fprintf(stderr, "usage: declare_flood CGROUP_DIR N\n");
		return 2;
	}
	skel = oom_declare_bpf__open_and_load();
	if (!skel)
		return 1;
	fd = bpf_program__fd(skel->progs.oom_declare);
	for (int i = 0; i < n; i++) {
		args.cgroup_id = st.st_ino;	/* a cgroup2 dir's inode is its id */
		if (bpf_prog_test_run_opts(fd, &opts) || args.ret < 0) {
			fprintf(stderr, "declare %d failed: %d\n", i, args.ret);
			return 1;
		}
	}
	oom_declare_bpf__destroy(skel);
	return 0;
}
