#!/bin/bash
# A declared OOM never panics the machine (issue 9, d). With
# vm.panic_on_oom=1 the kernel refuses a declared system-wide OOM (no
# cgroup, or the root cgroup) and kills as usual for a declared memcg OOM;
# with =2 it refuses every declared OOM. oomctl says which setting forbids
# it. Nothing is killed by a refused OOM. A kernel that panics instead ends
# this run without a status, which fails it.
# Usage (in the guest): oomctl_panic_on_oom.sh BUILD_DIR
set -u
build=${1:?usage: oomctl_panic_on_oom.sh BUILD_DIR}
. "$(dirname "$0")/lib.sh"
OOMCTL=$build/cli/oomctl HOG=$build/test/vm/hog
oomctl() { "$OOMCTL" "$@"; }
panic_on_oom() { echo "$1" > /proc/sys/vm/panic_on_oom; }

cg_remove /pan
# A declared system-wide OOM kills hogs, never this shell
echo -1000 > /proc/self/oom_score_adj
cg_make /pan/a; cg_make /pan/b; cg_make /pan/c
a=$(hog_start /pan/a 32 0)
b=$(hog_start /pan/b 32 1000)
c=$(hog_start /pan/c 32 0)
[ "$a" != 0 ] && [ "$b" != 0 ] && [ "$c" != 0 ] || bail "the hogs did not get their memory"
oomctl event list >/dev/null	# the recorder is there before the first OOM

# --- vm.panic_on_oom=1 ------------------------------------------------------
panic_on_oom 1
check "=1: an OOM declared in /pan/a kills as usual" oomctl oom declare /pan/a
check "a's hog is dead" wait_dead "$a" 5
kills=$(oom_kills)
echo "# =1: declaring a system-wide OOM (a panic here ends the run)"
check "=1: a declared system-wide OOM is refused" \
	refused "Error: vm.panic_on_oom=1 forbids declared system-wide OOMs" oomctl oom declare
check "=1: so is one in the root cgroup" \
	refused "Error: vm.panic_on_oom=1 forbids declared system-wide OOMs" oomctl oom declare /
check "b's hog (oom_score_adj 1000) is alive" alive "$b"
check "/proc/vmstat oom_kill is unchanged ($kills)" test "$(oom_kills)" = "$kills"

# --- vm.panic_on_oom=2 ------------------------------------------------------
panic_on_oom 2
echo "# =2: declaring an OOM in /pan/c (a panic here ends the run)"
check "=2: a declared memcg OOM is refused" \
	refused "Error: vm.panic_on_oom=2 forbids declared OOMs" oomctl oom declare /pan/c
check "=2: so is a system-wide one" \
	refused "Error: vm.panic_on_oom=2 forbids declared OOMs" oomctl oom declare
check "c's hog is alive" alive "$c"
check "b's hog is alive" alive "$b"
check "/proc/vmstat oom_kill is unchanged ($kills)" test "$(oom_kills)" = "$kills"
ev=$(oomctl -j event list)
check "the log has no OOM but the first" no_events '.type == "oom" and .cgroup != "/pan/a"'

# --- back to 0: declared OOMs work again -------------------------------------
panic_on_oom 0
check "=0: a declared system-wide OOM is handled" oomctl oom declare
check "it killed b's hog (oom_score_adj 1000)" wait_dead "$b" 5
check "c's hog is alive" alive "$c"

cg_remove /pan
done_checks
