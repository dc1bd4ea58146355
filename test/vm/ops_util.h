/* SPDX-License-Identifier: GPL-2.0 */
/*
 * For the scenarios that load a BPF object of struct_ops (bpf_oom_ops,
 * bpf_psi_ops) without a skeleton: its load, its global data, and the
 * attach of one of its maps to a cgroup.
 */
#ifndef __OPS_UTIL_H
#define __OPS_UTIL_H

#include <stddef.h>
#include <bpf/libbpf.h>

/* Open and load @path; bails */
struct bpf_object *ops_load(const char *path);
/* The mmap of @obj's map whose name ends with @suffix (".bss", ".data"),
 * of @size bytes at least; bails */
void *ops_global_data(struct bpf_object *obj, const char *suffix, size_t size);
/* Attach @obj's struct_ops map @name to the cgroup @cg under /sys/fs/cgroup
 * ("" for no target: the root); the link, or NULL with errno set */
struct bpf_link *ops_attach(struct bpf_object *obj, const char *name,
			    const char *cg);

#endif /* __OPS_UTIL_H */
