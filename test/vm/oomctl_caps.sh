#!/bin/bash
# Declaring an OOM needs CAP_KILL, and a PSI trigger's handler (psi add)
# CAP_SYS_ADMIN and CAP_KILL, in the initial user namespace (issue 9, c;
# issue 19). A root process left with only CAP_BPF and CAP_PERFMON loads
# the declare program but the kernel refuses its declare with -EPERM; the
# verifier refuses the handler its bpf_out_of_memory(). oomctl names the
# missing capabilities in one line; nothing is killed. Full root does the
# same things (the control). Deleting a trigger detaches its pinned
# handler, which bpffs' permissions guard: user nobody is refused.
# Usage (in the guest): oomctl_caps.sh BUILD_DIR
set -u
build=${1:?usage: oomctl_caps.sh BUILD_DIR}
. "$(dirname "$0")/lib.sh"
OOMCTL=$build/cli/oomctl HOG=$build/test/vm/hog
oomctl() { "$OOMCTL" "$@"; }
# capped COMMAND...: run it as root with CAP_BPF and CAP_PERFMON only
capped() {
	setpriv --bounding-set=-all,+bpf,+perfmon --inh-caps=-all,+bpf,+perfmon "$@"
}
bpf_triggers() { tail -n +2 /proc/pressure/bpf_triggers | wc -l; }

cg_remove /caps
cg_make /caps/a; cg_make /caps/b; cg_make /caps/c
# A kernel that lets the capped declares through kills hogs, never this shell
echo -1000 > /proc/self/oom_score_adj

# CAP_PERFMON is bit 38, CAP_BPF 39; CAP_KILL (5) and CAP_SYS_RESOURCE (24)
# must be gone
check "the capped effective set is CAP_BPF and CAP_PERFMON only" \
	test "$(capped awk '/^CapEff:/ { print $2 }' /proc/self/status)" = 000000c000000000

a=$(hog_start /caps/a 32 0)
b=$(hog_start /caps/b 32 0)
c=$(hog_start /caps/c 32 1000)	# a system-wide OOM's victim
[ "$a" != 0 ] && [ "$b" != 0 ] && [ "$c" != 0 ] || bail "the hogs did not get their memory"

# --- control: full root declares in /caps/b --------------------------------
check "root declares an OOM in /caps/b" oomctl oom declare /caps/b
check "b's hog is dead" wait_dead "$b" 5
kills=$(oom_kills)

# --- capped: the programs load, the kernel refuses -------------------------
check "capped: a declared OOM in /caps/a is refused for want of CAP_KILL" \
	refused "Error: declaring an OOM needs CAP_KILL" capped "$OOMCTL" oom declare /caps/a
check "capped: so is a system-wide one" \
	refused "Error: declaring an OOM needs CAP_KILL" capped "$OOMCTL" oom declare
check "a's hog is alive" alive "$a"
check "c's hog (oom_score_adj 1000) is alive" alive "$c"
check "/proc/vmstat oom_kill is unchanged ($kills)" test "$(oom_kills)" = "$kills"
ev=$(oomctl -j event list)
check "the log has no OOM but root's" no_events '.type == "oom" and .cgroup != "/caps/b"'

check "capped: creating a PSI trigger is refused" \
	refused "Error: attaching a PSI handler needs CAP_SYS_ADMIN and CAP_KILL" \
	capped "$OOMCTL" psi add /caps/a some 100ms 1s
check "capped: so is a system-wide one" \
	refused "Error: attaching a PSI handler needs CAP_SYS_ADMIN and CAP_KILL" \
	capped "$OOMCTL" psi add / some 100ms 1s
check "no handler is left pinned" test -z "$(ls /sys/fs/bpf/oomctl/psi 2>/dev/null)"
check "the kernel lists no trigger" test "$(bpf_triggers)" = 0

# --- control: root adds a trigger; nobody cannot delete it, root can --------
id=$(oomctl -j psi add /caps/a some 100ms 1s | jq -r .id)
check "root adds a trigger on /caps/a (id $id)" grep -q "^$id " /proc/pressure/bpf_triggers
check "nobody: deleting it is refused" \
	refused "Error: /sys/fs/bpf/oomctl is root's: this needs root" \
	setpriv --reuid=nobody --regid=nogroup --clear-groups "$OOMCTL" psi del "$id"
check "it is still listed" grep -q "^$id " /proc/pressure/bpf_triggers
check "root deletes it" oomctl psi del "$id"

check "root declares the OOM in /caps/a that capped could not" oomctl oom declare /caps/a
check "a's hog is dead" wait_dead "$a" 5

# --- not root at all: a refusal that says so, never an empty answer --------
oomctl policy attach largest-leaf scope /caps >/dev/null
as_nobody() { setpriv --reuid=nobody --regid=nogroup --clear-groups "$@"; }
for cmd in "policy list" "policy show largest-leaf" "event list"; do
	# shellcheck disable=SC2086 # the words of the command
	check "nobody: $cmd is refused, needing root" \
		refused "Error: /sys/fs/bpf/oomctl is root's: this needs root" \
		as_nobody "$OOMCTL" $cmd
done
oomctl policy detach largest-leaf >/dev/null

cg_remove /caps
done_checks
