/*
 * What oomctl needs from the running kernel, and how it asks for it.
 * Nothing here runs before kernel_check() passed: on a kernel without the
 * BPF OOM series oomctl makes no bpf() call at all.
 */
#ifndef OOMCTL_KERNEL_H
#define OOMCTL_KERNEL_H

#include <stdbool.h>

#include <stddef.h>

/*
 * Whether the running kernel has the BPF OOM hooks, and the functions in
 * @kfuncs (NULL-terminated, or NULL), from its BTF and with no bpf() call:
 * 0, or -EOPNOTSUPP reported in one line.
 */
int kernel_check(const char *const *kfuncs);

/* Report that the kernel refused to load @what; returns @err (-errno). */
int load_failed(const char *what, int err);

/* Enable libbpf's verifier log for an object when -d was given. */
struct bpf_object_open_opts;
void open_opts_debug(struct bpf_object_open_opts *opts);

/* BPF_PROG_TEST_RUN of a syscall program on @ctx (in and out): 0, -errno
 * if the run failed, or the program's own negative return value */
int syscall_prog_run(int prog_fd, void *ctx, size_t size);
/* Whether capability @cap (CAP_*) is in our effective set: for messages
 * only, the kernel decides */
bool cap_effective(int cap);

#endif /* OOMCTL_KERNEL_H */
