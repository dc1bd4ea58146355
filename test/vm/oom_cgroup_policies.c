// SPDX-License-Identifier: GPL-2.0
/*
 * OOM policies attached to cgroups (struct bpf_oom_ops, issue 19 item 1),
 * with the test policies of progs/cgroup_policies.bpf.c:
 *  - test-a on pol/a, test-root on the root (a link with no target); an OOM
 *    in pol/a is decided by test-a, one in pol/b by test-root, and the kill
 *    report names the policy and its cgroup; the link says where it is;
 *  - one policy per cgroup: a second one on pol/a gets EBUSY;
 *  - attaching needs CAP_SYS_ADMIN: without it, EPERM, even as root with
 *    CAP_BPF, CAP_PERFMON and CAP_KILL;
 *  - with test-a detached, an OOM in pol/a goes up to test-root.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <linux/capability.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "ops_util.h"
#include "scenario.h"

#define TOP "pol"

struct policy_stats {
	unsigned int runs;
	unsigned int kills;
	unsigned long long last_cgroup;
	int last_ret;
};
enum { TEST_A, TEST_ROOT, TEST_SPARE };

static struct bpf_object *obj;
static struct policy_stats *stats;

static void load(void)
{
	obj = ops_load(CGROUP_POLICIES_OBJ);
	stats = ops_global_data(obj, ".bss", 3 * sizeof(*stats));
}

/* Attach @name to the cgroup @cg ("" for no target); the link or NULL */
static struct bpf_link *attach(const char *name, const char *cg)
{
	return ops_attach(obj, name, cg);
}

/* A hog of 150M in @cg (memory.max 100M) is killed; by whom is the stats' */
static void oom_in(const char *cg)
{
	struct hog h;

	if (hog_spawn(&h, "hog", cg, 150 * MiB, 0) || hog_release(&h))
		bail("cannot start a hog in %s", cg);
	check(!hog_wait_ready(&h, 60000) && hog_killed_by_sigkill(&h),
	      "the hog in %s was killed", cg);
	hogs_kill(&h, 1);
}

static void check_decided(const char *cg, int who, const char *name,
			  const struct policy_stats *before)
{
	const char *names[] = { "test-a", "test-root", "test-spare" };
	char report[128];

	for (int i = 0; i <= TEST_SPARE; i++) {
		unsigned int kills = stats[i].kills - before[i].kills;

		if (i == who)
			check(kills == 1 && stats[i].last_cgroup == cg_id(cg),
			      "an OOM in %s: %s killed there (%u kills, last OOM in cgroup %llu, %llu expected)",
			      cg, names[i], kills, stats[i].last_cgroup,
			      (unsigned long long)cg_id(cg));
		else
			check(kills == 0, "an OOM in %s: %s killed nothing (%u)",
			      cg, names[i], kills);
	}
	snprintf(report, sizeof(report), "%s (bpf policy %s cgroup %llu)", name,
		 name, (unsigned long long)cg_id(who == TEST_A ? TOP "/a" : ""));
	check(kmsg_has(report), "the kill report says \"%s\"", report);
}

int main(void)
{
	struct policy_stats before[3];
	struct bpf_link *link_a, *link_root, *link;
	struct bpf_link_info info;
	__u32 len = sizeof(info);
	int err;

	setvbuf(stdout, NULL, _IOLBF, 0);
	cg_destroy(TOP);
	if (cg_write("", "cgroup.subtree_control", "+memory") ||
	    cg_create(TOP) || cg_write(TOP, "cgroup.subtree_control", "+memory") ||
	    cg_create(TOP "/a") || cg_create(TOP "/b") ||
	    cg_write(TOP "/a", "memory.max", "100M") ||
	    cg_write(TOP "/b", "memory.max", "100M"))
		bail("cannot set up the cgroups under /sys/fs/cgroup/" TOP);
	cg_write(TOP "/a", "memory.swap.max", "0");
	cg_write(TOP "/b", "memory.swap.max", "0");

	load();
	link_a = attach("policy_a", TOP "/a");
	err = link_a ? 0 : -errno;
	check(link_a, "test-a attaches to %s/a (%d)", TOP, err);
	link_root = attach("policy_root", "");
	err = link_root ? 0 : -errno;
	check(link_root, "test-root attaches to the root (%d)", err);
	if (!link_a || !link_root)
		bail("cannot go on without both policies");

	memset(&info, 0, sizeof(info));
	err = bpf_link_get_info_by_fd(bpf_link__fd(link_a), &info, &len);
	check(!err && info.struct_ops.cgroup_id == cg_id(TOP "/a"),
	      "test-a's link says where it is attached (cgroup %llu)",
	      (unsigned long long)info.struct_ops.cgroup_id);

	link = attach("policy_spare", TOP "/a");
	err = link ? 0 : -errno;
	check(err == -EBUSY,
	      "a second policy on %s/a is refused with EBUSY (%d)", TOP, err);
	bpf_link__destroy(link);

	caps_set_effective(CAPS_ALL & ~(1ULL << CAP_SYS_ADMIN));
	link = attach("policy_spare", TOP "/b");
	err = link ? 0 : -errno;
	check(err == -EPERM,
	      "root without CAP_SYS_ADMIN cannot attach a policy (%d)", err);
	caps_set_effective(CAPS_ALL);
	bpf_link__destroy(link);

	memcpy(before, stats, sizeof(before));
	oom_in(TOP "/a");
	check_decided(TOP "/a", TEST_A, "test-a", before);

	memcpy(before, stats, sizeof(before));
	oom_in(TOP "/b");
	check_decided(TOP "/b", TEST_ROOT, "test-root", before);

	bpf_link__destroy(link_a);
	memcpy(before, stats, sizeof(before));
	oom_in(TOP "/a");
	check(stats[TEST_ROOT].kills - before[TEST_ROOT].kills == 1 &&
	      stats[TEST_A].runs == before[TEST_A].runs,
	      "with test-a detached, test-root decides an OOM in %s/a", TOP);

	bpf_link__destroy(link_root);

	bpf_object__close(obj);
	cg_destroy(TOP);
	return checks_done();
}
