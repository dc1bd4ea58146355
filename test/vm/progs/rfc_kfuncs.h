/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The kfunc prototypes that the RFC's progs/test_oom.c takes from its
 * vmlinux.h without declaring them: bpftool 7.5 and later writes them into
 * vmlinux.h, bookworm's 7.1 does not. Included ahead of the program
 * (-include), which stays as posted.
 */
struct mem_cgroup;
extern unsigned long bpf_mem_cgroup_usage(struct mem_cgroup *memcg, _Bool swap)
	__attribute__((section(".ksyms")));
extern unsigned long bpf_mem_cgroup_page_state(struct mem_cgroup *memcg, int idx)
	__attribute__((section(".ksyms")));
