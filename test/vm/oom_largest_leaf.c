// SPDX-License-Identifier: GPL-2.0
/*
 * The RFC's OOM selftest as a scenario. Hogs fill oomtest/ (memory.max 100M)
 * one after the other; the last one, in cg3/cg5, hits the limit. One kill
 * is enough either way, so the first death is the choice. With the
 * largest-leaf policy attached the OOM must kill exactly the hog of cg3/cg4:
 * at that moment it is the largest killable leaf (cg2 is larger but protected
 * by oom_score_adj -1000, cg5 is still filling up). One oom_kill must show in
 * cg4's memory.events and every other hog must survive.
 *
 * --no-policy runs the same OOM without the policy: the kernel's own killer
 * must then first pick cg1's hog (oom_score_adj 1000), which shows that the
 * scenario tells the policy's choice from the kernel's.
 *
 * --rfc OBJ runs it with the RFC's own selftest program instead (its
 * progs/test_oom.c, taken unchanged from the posted patch and built here),
 * on the RFC's OOM hook: it kills every process of the same leaf, cg4.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <bpf/libbpf.h>

#include "scenario.h"
#include "largest_leaf.skel.h"

#define TOP "oomtest"

static struct {
	const char *cg;
	size_t bytes;
	int adj;
} leaves[] = {			/* in the order they fill up */
	{ TOP "/cg1", 10 * MiB, 1000 },
	{ TOP "/cg2", 40 * MiB, -1000 },
	{ TOP "/cg3/cg4", 30 * MiB, 0 },
	{ TOP "/cg3/cg5", 25 * MiB, 0 },	/* 80 + 25 > 100: OOM */
};
#define NR_LEAVES (int)(sizeof(leaves) / sizeof(leaves[0]))

static void setup_cgroups(void)
{
	cg_destroy(TOP);
	if (cg_write("", "cgroup.subtree_control", "+memory") ||
	    cg_create(TOP) || cg_write(TOP, "memory.max", "100M") ||
	    cg_write(TOP, "cgroup.subtree_control", "+memory") ||
	    cg_create(TOP "/cg1") || cg_create(TOP "/cg2") ||
	    cg_create(TOP "/cg3") ||
	    cg_write(TOP "/cg3", "cgroup.subtree_control", "+memory") ||
	    cg_create(TOP "/cg3/cg4") || cg_create(TOP "/cg3/cg5"))
		bail("cannot set up the cgroups under /sys/fs/cgroup/" TOP);
	/* No swap to escape to; absent without CONFIG_SWAP, hence unchecked */
	cg_write(TOP, "memory.swap.max", "0");
}

/* The RFC's program from @path on the OOM hook, or NULL */
static struct bpf_link *attach_rfc(const char *path, struct bpf_object **objp)
{
	struct bpf_object *obj = bpf_object__open_file(path, NULL);
	struct bpf_program *prog;

	if (!obj || bpf_object__load(obj))
		return NULL;
	*objp = obj;
	prog = bpf_object__find_program_by_name(obj, "test_bpf_out_of_memory");
	return prog ? bpf_program__attach(prog) : NULL;
}

int main(int argc, char **argv)
{
	bool with_policy = !(argc > 1 && !strcmp(argv[1], "--no-policy"));
	const char *rfc = argc > 2 && !strcmp(argv[1], "--rfc") ? argv[2] : NULL;
	int expected = with_policy ? 2 : 0;	/* cg4's or cg1's hog */
	struct largest_leaf_bpf *skel = NULL;
	struct bpf_object *rfc_obj = NULL;
	struct bpf_link *link = NULL;
	struct hog hogs[NR_LEAVES];
	int i, victim;

	setvbuf(stdout, NULL, _IOLBF, 0);
	setup_cgroups();

	if (rfc) {
		link = attach_rfc(rfc, &rfc_obj);
		if (!link)
			bail("cannot load and attach the RFC's program from %s", rfc);
	} else if (with_policy) {
		/* A cgroup policy on the root: the whole machine */
		struct bpf_map *ops = NULL;

		skel = largest_leaf_bpf__open_and_load();
		if (skel)
			ops = bpf_object__find_map_by_name(skel->obj,
							   "largest_leaf_ops");
		link = ops ? bpf_map__attach_struct_ops(ops) : NULL;
		if (!link)
			bail("cannot load and attach the largest-leaf policy");
	}

	for (i = 0; i < NR_LEAVES; i++)
		if (hog_spawn(&hogs[i], leaves[i].cg, leaves[i].cg,
			      leaves[i].bytes, leaves[i].adj))
			bail("cannot start a hog in %s", leaves[i].cg);

	for (i = 0; i < NR_LEAVES - 1; i++)
		if (hog_release(&hogs[i]) || !hog_wait_ready(&hogs[i], 30000))
			bail("hog in %s did not get its memory", leaves[i].cg);
	hog_release(&hogs[NR_LEAVES - 1]);

	victim = hogs_wait_first_death(hogs, NR_LEAVES, 60000);
	check(victim >= 0, "a hog died within 60 s");
	if (victim >= 0)
		check(victim == expected, "the victim is %s's hog (got %s)",
		      leaves[expected].cg, leaves[victim].cg);
	check(victim >= 0 && hog_killed_by_sigkill(&hogs[victim]),
	      "the victim died of SIGKILL");

	if (!with_policy)	/* the kernel goes on killing: not our business */
		goto out;

	check(hog_wait_ready(&hogs[NR_LEAVES - 1], 30000),
	      "%s's hog got its memory after the kill", leaves[NR_LEAVES - 1].cg);
	for (i = 0; i < NR_LEAVES; i++)
		if (i != expected)
			check(hog_alive(&hogs[i]), "%s's hog survived",
			      leaves[i].cg);
	check(cg_read_key(leaves[expected].cg, "memory.events", "oom_kill") == 1,
	      "%s memory.events says oom_kill 1", leaves[expected].cg);
	if (skel)
		check(skel->bss->nr_kills == 1 && skel->bss->nr_runs >= 1,
		      "the policy ran and counted one kill (runs %llu, kills %llu)",
		      (unsigned long long)skel->bss->nr_runs,
		      (unsigned long long)skel->bss->nr_kills);
out:
	hogs_kill(hogs, NR_LEAVES);
	bpf_link__destroy(link);
	bpf_object__close(rfc_obj);
	largest_leaf_bpf__destroy(skel);
	cg_destroy(TOP);
	return checks_done();
}
