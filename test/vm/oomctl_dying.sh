#!/bin/bash
# Removed cgroups that linger. A cgroup removed while pages are still
# charged to it stays behind, offline ("dying"), until they are freed. The
# built-in policies must count it for nothing: it is no unit (it has no task
# to kill), and it does not keep its live parent from being a leaf. A live
# unit with no task is no candidate either. Choosing either would leave the
# OOM to the kernel's killer, so each check also looks at who chose.
# Usage (in the guest): oomctl_dying.sh BUILD_DIR
set -u
build=${1:?usage: oomctl_dying.sh BUILD_DIR}
. "$(dirname "$0")/lib.sh"
OOMCTL=$build/cli/oomctl HOG=$build/test/vm/hog
oomctl() { "$OOMCTL" "$@"; }

# tmpfs pages stay charged to the cgroup that wrote them after the writer
# exits: that is what keeps a removed cgroup dying
SHM=$(mktemp -d)
mount -t tmpfs -o size=120M dying "$SHM" || bail "cannot mount a tmpfs on $SHM"
charge() {	# charge CGROUP MIB: MIB of tmpfs pages, charged to CGROUP
	(echo "$BASHPID" > "$CG$1/cgroup.procs" &&
		exec dd if=/dev/zero of="$SHM/${1//\//_}" bs=1M count="$2" status=none)
}

# /dying (160M): a holds two 8M hogs (16M: the largest leaf, but neither
# is the largest process) and a removed child, old, with 24M of tmpfs
# charged to it. b holds one 12M hog, the largest process: the kernel's
# killer would take it. e is live but empty, with 48M of tmpfs: by usage
# with the cache (oomd's measure, in which a's 16M count with old's 24M:
# memory.current is hierarchical) the largest unit. A declared OOM in
# /dying, so that exactly one OOM is handled. (Small sizes: every page
# costs under KASAN and TCG.)
story() {
	cg_remove /dying; rm -f "$SHM"/*
	cg_make /dying 160M
	cg_make /dying/a/old; cg_make /dying/b; cg_make /dying/e
	charge /dying/a/old 24 && rmdir "$CG/dying/a/old"
	# a leaf again: tasks may join it (no internal processes)
	echo -memory > "$CG/dying/a/cgroup.subtree_control"
	charge /dying/e 48
	DYING=$(key_of "$CG/dying/a/cgroup.stat" nr_dying_descendants)
	A1=$(hog_start /dying/a 8 0); A2=$(hog_start /dying/a 8 0)
	B=$(hog_start /dying/b 12 0)
	hogs_ready "$A1" "$A2" "$B"
	EXPLAINED=$(oomctl -j policy explain "$1" /dying)
	OUT=$(oomctl -j oom declare /dying)
}

for policy in largest-leaf oomd; do
	check "attach $policy" oomctl policy attach "$policy"
	story "$policy"
	check "$policy: explain ranks a first, skips e as empty, lists no removed cgroup" \
		jqe '.policies[0].candidates as $c |
		     $c[0].cgroup == "/dying/a" and
		     any($c[]; .cgroup == "/dying/e" and .rank == null and .marks == "empty") and
		     all($c[]; .cgroup | test("old") | not)' "$EXPLAINED"
	check "$policy: a's removed child lingers (nr_dying_descendants $DYING)" \
		test "$DYING" -ge 1
	check "$policy: e is live and empty" \
		test "$(key_of "$CG/dying/e/cgroup.stat" nr_descendants)" = 0 -a \
		-z "$(<"$CG/dying/e/cgroup.procs")"
	check "$policy chooses a, the leaf with the dying child, and kills one of its hogs" \
		jqe ".handled and (.kills | length == 1) and
		     (.kills[0].pid == $A1 or .kills[0].pid == $A2) and
		     .kills[0].chosen_by == \"$policy\"" "$OUT"
	check "$policy: b's hog survives" alive "$B"
	oomctl policy detach "$policy" >/dev/null
done

# kill-unit (bpf_oom_kill_memcg()): a, chosen, dies whole; b lives
for policy in largest-leaf oomd; do
	check "attach $policy kill-unit" oomctl policy attach "$policy" kill-unit
	story "$policy"
	check "$policy kill-unit kills a's first hog" \
		jqe ".handled and .kills[0].chosen_by == \"$policy\" and
		     (.kills[0].pid == $A1 or .kills[0].pid == $A2)" "$OUT"
	check "...and a's other hog" bash -c "$(declare -f alive wait_dead); wait_dead $A1 5 && wait_dead $A2 5"
	check "...b's hog survives" alive "$B"
	oomctl policy detach "$policy" >/dev/null
done

cg_remove /dying
umount "$SHM" && rmdir "$SHM"
done_checks
