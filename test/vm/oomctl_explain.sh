#!/bin/bash
# oomctl policy explain: the built-in policies' choice for a pretended OOM,
# run by their own selection code (a syscall program beside the OOM hook),
# killing nothing. Each prediction is then checked against the victim of a
# real OOM; explain must change no counter, log no event, move no window.
# Usage (in the guest): oomctl_explain.sh BUILD_DIR [--mispredict]
# --mispredict expects the wrong hog, to show that the checks can fail.
set -u
build=${1:?usage: oomctl_explain.sh BUILD_DIR [--mispredict]}
mispredict=${2:-}
. "$(dirname "$0")/lib.sh"
OOMCTL=$build/cli/oomctl HOG=$build/test/vm/hog
oomctl() { "$OOMCTL" "$@"; }

# counters that explain must leave alone: runs and kills of every policy,
# the event log's newest record, the kernel's OOM kills
state() {
	oomctl -j policy list | jq -c '[.policies[] | {name, runs, kills}]'
	oomctl -j event list | jq -c '[.events[] | .seq] | max'
	oom_kills
}

# /oomtest as in oom_story (lib.sh): setup, then the OOM, which prints the
# pid of the first hog to die
setup() { oom_story_setup; }
trigger() { oom_story_trigger; echo "$VICTIM_PID"; }
predicted() {	# predicted JSON: the pid explain says dies, wrong on purpose
	local pid	# with --mispredict
	pid=$(jq -r '.policies[0].victim.pid' <<<"$1")
	[ -n "$mispredict" ] && pid=$((pid + 1))
	echo "$pid"
}

# --- largest-leaf ------------------------------------------------------------
check "attach largest-leaf" oomctl policy attach largest-leaf
setup
before=$(state)
out=$(oomctl -j policy explain largest-leaf /oomtest)
check "explain largest-leaf /oomtest: it would kill" \
	jqe '.policies[0].verdict == "kill" and .would_act == "largest-leaf"' "$out"
check "...cg4 ranks first, with usage without page cache" \
	jqe '.policies[0].candidates[0] | .rank == 1 and .cgroup == "/oomtest/cg3/cg4" and .usage > 20971520 and .cache != null' "$out"
check "...cg2 (a -1000 holder) is skipped and marked" \
	jqe 'any(.policies[0].candidates[]; .cgroup == "/oomtest/cg2" and .rank == null and .marks == "protected")' "$out"
check "...cg5, with no task yet, is skipped as empty" \
	jqe 'any(.policies[0].candidates[]; .cgroup == "/oomtest/cg3/cg5" and .rank == null and .marks == "empty")' "$out"
text=$(oomctl policy explain largest-leaf /oomtest)
check "...the text form names the victim and who acts" \
	bash -c "grep -q 'would kill pid $PID_CG4 ' <<<\"\$1\" && tail -1 <<<\"\$1\" | grep -qx 'would act: largest-leaf'" - "$text"
pred=$(predicted "$out")
check "explain changed no counter and logged no event" test "$(state)" = "$before"
check "explain killed nothing" bash -c "$(declare -f alive); alive $PID_CG1 && alive $PID_CG2 && alive $PID_CG4"
victim=$(trigger)
check "the real OOM killed the predicted pid $pred (got $victim)" test "$victim" = "$pred"
oomctl policy detach largest-leaf >/dev/null
cg_remove /oomtest

# --- oomd: usage decides without swap; an avoided unit comes last ------------
# user.oomd_avoid on cg1 (10M) ranks it below the empty cg5; cg4 (30M)
# still beats cg5's hog, which can reach only 20M before the OOM
check "attach oomd" oomctl policy attach oomd
setup
setfattr -n user.oomd_avoid -v 1 $CG/oomtest/cg1
before=$(state)
out=$(oomctl -j policy explain oomd /oomtest)
check "explain oomd /oomtest: it would kill in cg4" \
	jqe '.policies[0].verdict == "kill" and .policies[0].victim.cgroup == "/oomtest/cg3/cg4"' "$out"
check "...it shows the reclaim window, from the attached policy" \
	jqe '.policies[0].window | test("attached")' "$out"
# the sampler saw each unit within a tick of its creation: windows of one
# to two seconds (3 s allows for a late tick under TCG), none since boot
check "...each unit has pgscan and its window, the sampler's (at most 3 s)" \
	jqe '.policies[0].candidates as $c | ($c | length == 4) and all($c[]; .pgscan != null and .window_us > 0 and .window_us <= 3000000)' "$out"
check "...cg1 is marked avoid and ranked after the smaller cg4" \
	jqe '[.policies[0].candidates[] | select(.rank != null) | .cgroup] as $r | ($r | index("/oomtest/cg1")) > ($r | index("/oomtest/cg3/cg4")) and any(.policies[0].candidates[]; .cgroup == "/oomtest/cg1" and .marks == "avoid")' "$out"
check "...cg5, with no task yet, is skipped as empty" \
	jqe 'any(.policies[0].candidates[]; .cgroup == "/oomtest/cg3/cg5" and .rank == null and .marks == "empty")' "$out"
check "...cg2 (a -1000 holder) is skipped" \
	jqe 'any(.policies[0].candidates[]; .cgroup == "/oomtest/cg2" and .rank == null and .marks == "protected")' "$out"
pred=$(predicted "$out")
check "explain changed no counter and logged no event" test "$(state)" = "$before"
victim=$(trigger)
check "the real OOM killed the predicted pid $pred (got $victim)" test "$victim" = "$pred"
# the sampler keeps the windows recent, for skipped units too
out=$(oomctl -j policy explain oomd /oomtest)
check "after the OOM, every window is still the sampler's (at most 3 s)" \
	jqe 'all(.policies[0].candidates[]; .window_us > 0 and .window_us <= 3000000)' "$out"
setfattr -x user.oomd_avoid $CG/oomtest/cg1

# --- no NAME: the attached policies in the kernel's order --------------------
setup
oomctl policy attach largest-leaf scope /oomtest/cg3 >/dev/null
out=$(oomctl -j policy explain /oomtest)
check "an OOM in /oomtest: oomd acts, largest-leaf (scoped deeper) is out of scope" \
	jqe '.would_act == "oomd" and ([.policies[].name] == ["largest-leaf", "oomd"]) and .policies[0].verdict == "out-of-scope"' "$out"
out=$(oomctl -j policy explain /oomtest/cg3)
check "an OOM in /oomtest/cg3: oomd defers to largest-leaf, which acts" \
	jqe '.would_act == "largest-leaf" and .policies[0].verdict == "kill" and .policies[1].verdict == "defers"' "$out"
oomctl policy detach largest-leaf >/dev/null
oomctl policy detach oomd >/dev/null
out=$(oomctl -j policy explain)
check "nothing attached: the kernel's killer acts" \
	jqe '.would_act == "the kernel'"'"'s OOM killer" and .policies == []' "$out"
out=$(oomctl -j policy explain oomd /oomtest)
check "explain of oomd not attached: the window is since boot" \
	jqe '(.policies[0].window | test("since boot")) and .policies[0].attached == false' "$out"

# --- bad input: one line, non-zero -------------------------------------------
check "unknown policy" fails oomctl policy explain no-such-policy
check "a cgroup that does not exist" fails oomctl policy explain largest-leaf /nothere
check "psi-declare, a PSI handler now, is no policy to explain" fails oomctl policy explain psi-declare
# a user's object without the explain program: it can be attached, not
# explained; a copy of a built-in's object carries its explain program
cp "$build/bpf/refused_kill.bpf.o" /tmp/refused.bpf.o
cp "$build/bpf/largest_leaf.bpf.o" /tmp/myleaf.bpf.o
oomctl policy attach /tmp/myleaf.bpf.o >/dev/null
check "attach a user's .bpf.o without an explain program" oomctl policy attach /tmp/refused.bpf.o
check "explain of it: one line, non-zero" fails oomctl policy explain refused
out=$(oomctl -j policy explain /oomtest)
# the kernel asks the cgroup policy (myleaf, a struct bpf_oom_ops on the
# root) before the programs on the OOM hook (refused)
check "explain of all: the user's copy of largest-leaf acts first, refused is still listed" \
	jqe '.would_act == "myleaf" and .policies[0].name == "myleaf" and .policies[0].verdict == "kill" and .policies[1].name == "refused" and .policies[1].error != null' "$out"
oomctl policy detach refused >/dev/null
oomctl policy detach myleaf >/dev/null

# A policy's source path, 200 bytes long, is kept whole
long=/tmp/$(printf 'd%.0s' $(seq 190))
mkdir -p "$long"
cp "$build/bpf/largest_leaf.bpf.o" "$long/mine.bpf.o"
oomctl policy attach "$long/mine.bpf.o" scope /oomtest >/dev/null
check "policy show keeps the whole ${#long}-byte path of its source" \
	json ".source == \"$long/mine.bpf.o\"" oomctl -j policy show mine
oomctl policy detach mine >/dev/null
rm -r "$long"
# Explain runs the code that is attached: the object file may have changed
# since (an upgrade), or gone
cp "$build/bpf/largest_leaf.bpf.o" /tmp/mine.bpf.o
oomctl policy attach /tmp/mine.bpf.o scope /oomtest >/dev/null
cp "$build/bpf/oomd.bpf.o" /tmp/mine.bpf.o
check "explain of a policy whose file is now oomd's runs the attached largest-leaf" \
	json '.policies[0].name == "mine" and (.policies[0].candidates | length > 0 and all(.[]; .cache != null and .pgscan == null))' \
	oomctl -j policy explain mine /oomtest
rm /tmp/mine.bpf.o
check "...and with its file gone" \
	json '.policies[0].verdict == "kill"' oomctl -j policy explain mine /oomtest
oomctl policy detach mine >/dev/null
check "bad syntax exits 2" bash -c "'$OOMCTL' policy explain largest-leaf /oomtest extra 2>/dev/null; test \$? = 2"
cg_remove /oomtest

done_checks
