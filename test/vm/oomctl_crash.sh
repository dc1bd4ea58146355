#!/bin/bash
# oomctl's state in bpffs holds when oomctl dies mid-way (OOM-killed, say)
# and when first uses race. Killed at any bpf() call of an attach, oomctl
# leaves either nothing (no pin, no link) or a policy that policy list shows
# and that detach removes whole; either way the policy attaches again. The
# same for psi add: no trigger left, or one that psi del removes.
# Usage (in the guest): oomctl_crash.sh BUILD_DIR
set -u
build=${1:?usage: oomctl_crash.sh BUILD_DIR}
. "$(dirname "$0")/lib.sh"
OOMCTL=$build/cli/oomctl
oomctl() { "$OOMCTL" "$@"; }
STATE=/sys/fs/bpf/oomctl
tmp=$(mktemp -d)

links() { bpftool -j link show | jq length; }
# pins PATH...: what is under them (pins, folders), one a line: a folder
# left behind blocks the next attach
pins() { find "$@" -mindepth 1 2>/dev/null; }

# Eight first uses of the event log at once: one creates the recorder, the
# others wait for it or find it; none may fail or undo another's pins.
rm -rf "$STATE"
for i in $(seq 8); do
	oomctl event list >/dev/null 2>"$tmp/err.$i" &
done
failed=0
for job in $(jobs -p); do wait "$job" || failed=$((failed + 1)); done
check "8 concurrent first uses of event list: none fails ($failed failed)" \
	bash -c "[ $failed = 0 ] || { cat $tmp/err.*; false; }"
check "...one whole recorder is left, no scratch folder" \
	test -d "$STATE/recorder" -a ! -e "$STATE/recorder-new" -a \
	-e "$STATE/events" -a -e "$STATE/policy_kills"
check "...and the log reads" oomctl event list

# attach_killed_at N: run an attach that is killed at its Nth bpf() call,
# then check the state; sets VERDICT to what was left
attach_killed_at() {
	# strace dies of the signal it injected: bash's "Killed" goes with
	# the subshell's stderr
	(strace -f -o /dev/null -e trace=bpf -e inject=bpf:signal=SIGKILL:when="$1" \
		"$OOMCTL" policy attach largest-leaf >/dev/null 2>&1; true) 2>/dev/null
	if oomctl -j policy list | jq -e 'any(.policies[]; .name == "largest-leaf")' >/dev/null; then
		VERDICT=listed
		oomctl policy detach largest-leaf >/dev/null || { VERDICT="listed, detach failed"; return 1; }
	else
		VERDICT=nothing
	fi
	# nothing of it is left pinned, or attached
	[ -z "$(pins "$STATE/policy" "$STATE/policy-new")" ] || { VERDICT+=", pins left: $(pins "$STATE/policy" "$STATE/policy-new")"; return 1; }
	[ "$(links)" = "$BASE_LINKS" ] || { VERDICT+=", $(links) links, $BASE_LINKS before"; return 1; }
}

# The calls of a whole attach; those up to its last program load only load
# the object (the state changes after: the registry, pins, links), so every
# tenth of them is enough. From a fresh state with its event log: the
# attach's own steps only.
rm -rf "$STATE"
oomctl event list >/dev/null || bail "no event log"
BASE_LINKS=$(links)
strace -f -o "$tmp/trace" -e trace=bpf "$OOMCTL" policy attach largest-leaf >/dev/null
oomctl policy detach largest-leaf >/dev/null
calls=$(grep -c 'bpf(' "$tmp/trace")
first=$(grep 'bpf(' "$tmp/trace" | grep -n 'BPF_PROG_LOAD' | tail -n 1 | cut -d: -f1)
first=$((${first:-0} + 1))
check "an attach makes $calls bpf() calls, the state changes from call $first" \
	test "$first" -gt 1 -a "$first" -lt "$calls"
bad= listed=0 tried=0
for n in $(seq 1 "$calls"); do
	[ "$n" -lt "$first" ] && [ $((n % 10)) != 0 ] && continue
	tried=$((tried + 1))
	attach_killed_at "$n" || bad+=" $n ($VERDICT)"
	[[ $VERDICT = listed* ]] && listed=$((listed + 1))
done
check "killed at each of $tried calls: nothing left, or a listed policy detach removes ($listed listed)${bad:+; failed at$bad}" \
	test -z "$bad"
check "...some kills left a listed policy (the test reached the pins)" test "$listed" -gt 0
check "...and then it attaches again" oomctl policy attach largest-leaf
check "...and detaches" oomctl policy detach largest-leaf

# psi add, killed at each bpf() call from its last program load on: the
# handler's link is only our fd's until it is pinned, so the kernel
# detaches it, and its trigger goes, when oomctl dies; or it is pinned, and
# psi del removes it. The kernel puts a closed link from a work item: wait
# for it. Cgroup /crash has no pressure, so the trigger never fires.
cg_make /crash
triggers() { jq '[.triggers[] | select(.cgroup == "/crash")] | length' <<<"$(oomctl -j psi list)"; }
# psi_settled: as many triggers listed on /crash as handlers pinned
psi_settled() {
	local i
	for i in $(seq 30); do
		[ "$(triggers)" = "$(pins "$STATE/psi" | wc -l)" ] && return 0
		sleep 0.1
	done
	return 1
}
psi_killed_at() {
	(strace -f -o /dev/null -e trace=bpf -e inject=bpf:signal=SIGKILL:when="$1" \
		"$OOMCTL" psi add /crash some 100ms 1s >/dev/null 2>&1; true) 2>/dev/null
	psi_settled || { VERDICT="$(triggers) triggers, $(pins "$STATE/psi" | wc -l) pins"; return 1; }
	if [ "$(triggers)" = 1 ]; then
		VERDICT=listed
		oomctl psi del /crash >/dev/null || { VERDICT="listed, psi del failed"; return 1; }
	else
		VERDICT=nothing
	fi
	psi_settled && [ "$(triggers)" = 0 ] || { VERDICT+=", $(triggers) triggers left"; return 1; }
	[ "$(links)" = "$BASE_LINKS" ] || { VERDICT+=", $(links) links, $BASE_LINKS before"; return 1; }
}
check "psi add, traced, not killed, adds the trigger" \
	strace -f -o "$tmp/trace" -e trace=bpf "$OOMCTL" psi add /crash some 100ms 1s
check "...which psi del removes" oomctl psi del /crash
calls=$(grep -c 'bpf(' "$tmp/trace")
first=$(grep 'bpf(' "$tmp/trace" | grep -n 'BPF_PROG_LOAD' | tail -n 1 | cut -d: -f1)
first=${first:-1}
bad= listed=0 tried=0
for n in $(seq "$first" "$calls"); do
	tried=$((tried + 1))
	psi_killed_at "$n" || bad+=" $n ($VERDICT)"
	[[ $VERDICT = listed* ]] && listed=$((listed + 1))
done
check "psi add killed at each of its last $tried calls: no trigger left, or one psi del removes ($listed listed)${bad:+; failed at$bad}" \
	test -z "$bad"
# Killed at its pin, the commit point, and at every call before: nothing
check "...the last of them is the pin" \
	test "$(grep 'bpf(' "$tmp/trace" | tail -n 1 | grep -c BPF_OBJ_PIN)" = 1
check "...and the calls tried include the attach (BPF_LINK_CREATE)" \
	bash -c "grep 'bpf(' '$tmp/trace' | tail -n $tried | grep -q BPF_LINK_CREATE"
cg_remove /crash

# A recorder an older oomctl pinned (its PSI program had another name) is
# replaced on first use, the log kept
events=$(oomctl -j event list | jq '.events | length')
mv "$STATE/recorder/record_psi_event" "$STATE/recorder/enter_psi_handler"
check "an older recorder: event list still reads the log ($events events)" \
	json ".events | length == $events" oomctl -j event list
check "...and its links were replaced by the current ones" \
	test -e "$STATE/recorder/record_psi_event" -a ! -e "$STATE/recorder/enter_psi_handler"
check "...as many as before" test "$(links)" = "$BASE_LINKS"

# So is one that kept no counts beside the log (an older oomctl's: no
# counts pins); left in place, it would count into maps nobody reads
rm "$STATE/counts" "$STATE/counts_other"
check "a recorder without counts: event list still reads the log" \
	json ".events | length == $events" oomctl -j event list
check "...the counts are pinned again" test -e "$STATE/counts" -a -e "$STATE/counts_other"
check "...as many links as before" test "$(links)" = "$BASE_LINKS"
cg_make /crash_count
check "...and they count a new OOM (a declared one in /crash_count)" \
	"$build/test/vm/declare_flood" "$CG/crash_count" 1
check "...which the export shows" bash -c \
	"'$OOMCTL' event export --prometheus | grep -qx 'oomctl_ooms_total{cgroup=\"/crash_count\",trigger=\"declared\"} 1'"
cg_remove /crash_count

rm -rf "$tmp"
done_checks
