/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the RFC's progs/test_psi.c takes from the tree it was posted for
 * and 6.12 lacks, included ahead of the program (-include), which stays as
 * posted: the kfunc prototypes that bpftool 7.5 and later write into
 * vmlinux.h (bookworm's 7.1 does not), and the name of struct kernfs_node's
 * parent pointer, "__parent" since 6.15 and "parent" in 6.12 (a macro, so
 * the program's t->of->kn->__parent->id reads 6.12's field).
 */
struct cgroup;
extern struct cgroup *bpf_cgroup_from_id(unsigned long long cgid)
	__attribute__((section(".ksyms")));
extern void bpf_cgroup_release(struct cgroup *cgrp)
	__attribute__((section(".ksyms")));
#define __parent parent
