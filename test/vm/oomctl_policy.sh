#!/bin/bash
# oomctl policy, as an admin uses it: the RFC's OOM story through oomctl
# (attach largest-leaf -> OOM -> the event log names cg4's hog and the
# policy), policies outliving oomctl, dry-run, scope, detach, and bad input.
# Usage (in the guest): oomctl_policy.sh BUILD_DIR
set -u
build=${1:?usage: oomctl_policy.sh BUILD_DIR}
. "$(dirname "$0")/lib.sh"
OOMCTL=$build/cli/oomctl HOG=$build/test/vm/hog
oomctl() { "$OOMCTL" "$@"; }
pins=/sys/fs/bpf/oomctl

last_kill_json() {	# the newest kill record, as JSON
	oomctl -j event list | jq -c '[.events[] | select(.type == "kill")] | last'
}

# --- attach, outlive oomctl, the story --------------------------------------
stats=$(</proc/sys/kernel/bpf_stats_enabled)
check "attach the built-in largest-leaf" oomctl policy attach largest-leaf
check "it is pinned under $pins/policy" test -e "$pins/policy/largest-leaf"
check "the machine's kernel.bpf_stats_enabled is left as it was ($stats)" \
	test "$(</proc/sys/kernel/bpf_stats_enabled)" = "$stats"
check "policy list counts no run yet: the policy counts them itself" \
	json '.policies[0].runs == 0' oomctl -j policy list
check "a new oomctl lists it with a program id" \
	json '.policies[0].prog_id > 0 and .policies[0].name == "largest-leaf"' oomctl -j policy list
link=$(oomctl -j policy show largest-leaf | jq .link_id)
check "the kernel has its struct_ops link (link $link), pinned" \
	json ".id == $link" bpftool -j link show pinned "$pins/policy/largest-leaf/largest_leaf_ops"

oom_story; victim=$VICTIM
check "the OOM killed cg4's hog (first death: $victim)" test "$victim" = cg4
check "cg1, cg2 and cg5's hogs survived" bash -c "$(declare -f alive); alive $PID_CG1 && alive $PID_CG2 && alive $PID_CG5"
k=$(last_kill_json)
check "event list names cg4's hog" jqe ".pid == $PID_CG4" "$k"
check "event list says largest-leaf chose it" jqe '.chosen_by == "largest-leaf"' "$k"
check "event list has its cgroup" jqe '.cgroup == "/oomtest/cg3/cg4"' "$k"
check "event list has the memory it held (> 20M)" jqe ".rss_bytes > $((20 << 20))" "$k"
check "an OOM invocation by allocation is logged" \
	json 'any(.events[]; .type == "oom" and .trigger == "allocation" and .cgroup == "/oomtest")' oomctl -j event list
check "policy list counts one kill" json '.policies[0].kills == 1' oomctl -j policy list
check "policy list counts its runs" json '.policies[0].runs >= 1' oomctl -j policy list
check "policy show has the details" bash -c "'$OOMCTL' policy show largest-leaf | grep -q 'kills: *1'"
# A cgroup policy (struct_ops) runs without the trampoline's recursion guard
check "policy show counts no run dropped by the recursion guard" \
	json '.missed == 0 and .runs >= 1' oomctl -j policy show largest-leaf
check "memory.events of cg4: oom_kill 1" grep -qx "oom_kill 1" $CG/oomtest/cg3/cg4/memory.events
# The policy's message is its own; the name in parentheses is the kernel's:
# the name the policy registered and the cgroup it is attached to (the root)
check "the kernel's kill report names the policy that chose, and its cgroup" \
	bash -c "dmesg | grep -q 'largest-leaf (bpf policy largest-leaf cgroup 1): Killed process $PID_CG4 '"
cg_remove /oomtest

# --- detach: the policy no longer runs --------------------------------------
check "detach largest-leaf" oomctl policy detach largest-leaf
check "its pins are gone" test ! -e "$pins/policy/largest-leaf"
check "policy list is empty" json '.policies == []' oomctl -j policy list
check "the kernel has no such link" fails bpftool link show id "$link"
check "the log still names largest-leaf for its kill" \
	test "$(oomctl -j event list | jq -r "[.events[] | select(.type == \"kill\" and .pid == $PID_CG4)] | last | .chosen_by")" = largest-leaf
oom_story; victim=$VICTIM
check "without it the kernel's killer picks cg1 (got $victim)" test "$victim" = cg1
check "and the log says the kernel chose" \
	test "$(last_kill_json | jq -r .chosen_by)" = "the kernel's OOM killer"
check "the kernel's own kill report names no bpf policy" \
	bash -c "dmesg | grep 'Killed process $PID_CG1 ' | grep -v -q 'bpf policy'"
cg_remove /oomtest

# --- dry-run: choose, log, kill nothing -------------------------------------
check "attach largest-leaf dry-run" oomctl policy attach largest-leaf dry-run
check "policy list says dry-run" json '.policies[0].mode == "dry-run"' oomctl -j policy list
oom_story; victim=$VICTIM
check "dry-run killed nothing itself: the kernel picked cg1 (got $victim)" test "$victim" = cg1
check "the log says which hog it would have killed (cg4's)" \
	json "any(.events[]; .type == \"dry-run\" and .pid == $PID_CG4 and .chosen_by == \"largest-leaf\")" oomctl -j event list
check "policy list counts no kill" json '.policies[0].kills == 0' oomctl -j policy list
oomctl policy detach largest-leaf >/dev/null
cg_remove /oomtest

# --- scope: only OOMs inside the subtree -------------------------------------
cg_make /elsewhere
check "attach largest-leaf scope /elsewhere" oomctl policy attach largest-leaf scope /elsewhere
check "policy list shows the scope" json '.policies[0].scope == "/elsewhere"' oomctl -j policy list
oom_story; victim=$VICTIM
check "an OOM outside the scope is left to the kernel (got $victim)" test "$victim" = cg1
oomctl policy detach largest-leaf >/dev/null
cg_remove /oomtest
cg_make /oomtest 100M
check "attach largest-leaf scope /oomtest" oomctl policy attach largest-leaf scope /oomtest
oom_story; victim=$VICTIM
check "an OOM inside the scope is the policy's (got $victim)" test "$victim" = cg4
oomctl policy detach largest-leaf >/dev/null
cg_remove /oomtest
cg_remove /elsewhere

# --- a user's own object file -----------------------------------------------
cp "$build/bpf/largest_leaf.bpf.o" /tmp/myleaf.bpf.o
check "attach a user's .bpf.o, named after the file" oomctl policy attach /tmp/myleaf.bpf.o
check "it is listed as myleaf from its file" \
	test "$(oomctl -j policy show myleaf | jq -r .source)" = /tmp/myleaf.bpf.o
oom_story; victim=$VICTIM
check "the user's policy handles the OOM (got $victim)" test "$victim" = cg4
check "detach it" oomctl policy detach myleaf
cg_remove /oomtest

# --- bad input: one line, non-zero, nothing left behind ---------------------
before=$(find $pins | sort | md5sum)
check "unknown built-in" fails oomctl policy attach no-such-policy
check "missing file" fails oomctl policy attach /tmp/nothere.bpf.o
echo garbage > /tmp/garbage.bpf.o
check "a file that is no BPF object" fails oomctl policy attach /tmp/garbage.bpf.o
cp "$build/bpf/oom_declare.bpf.o" /tmp/nohook.bpf.o
check "an object without a hook program" fails oomctl policy attach /tmp/nohook.bpf.o
check "a scope that does not exist" fails oomctl policy attach largest-leaf scope /nothere
cp "$build/bpf/bad_policy.bpf.o" /tmp/badpolicy.bpf.o
check "a policy the verifier refuses" fails oomctl policy attach /tmp/badpolicy.bpf.o
check "detach of a policy not attached" fails oomctl policy detach largest-leaf
check "show of a policy not attached" fails oomctl policy show largest-leaf
check "nothing was left pinned by the failures" test "$(find $pins | sort | md5sum)" = "$before"
oomctl policy attach largest-leaf >/dev/null
check "attaching the same name twice" fails oomctl policy attach largest-leaf
oomctl policy detach largest-leaf >/dev/null
check "bad syntax exits 2" bash -c "'$OOMCTL' policy attach largest-leaf sideways 2>/dev/null; test \$? = 2"

done_checks
