#!/bin/bash
# oomctl psi: a trigger added by oomctl belongs to the psi-declare handler
# oomctl attached to its cgroup (struct bpf_psi_ops), stays armed after
# oomctl exits, and declares the OOM that kills the throttled cgroup's hog
# (the RFC's PSI selftest through oomctl). Triggers are listed, deleted, go
# away with their cgroup, and their handlers with them; bad input is
# refused. A user's own bpf_psi_ops object attaches with policy attach.
# Usage (in the guest): oomctl_psi.sh BUILD_DIR
set -u
build=${1:?usage: oomctl_psi.sh BUILD_DIR}
. "$(dirname "$0")/lib.sh"
OOMCTL=$build/cli/oomctl HOG=$build/test/vm/hog
oomctl() { "$OOMCTL" "$@"; }

cg_remove /psitest
cg_make /psitest/cg1
cg_make /psitest/cg2
echo 40M > $CG/psitest/cg2/memory.high

# --- bad input first: nothing may be created --------------------------------
check "stall longer than the window" fails oomctl psi add /psitest/cg2 some 2s 1s
check "a window over 10 s" fails oomctl psi add /psitest/cg2 some 1s 20s
check "a duration with a bad unit" fails oomctl psi add /psitest/cg2 some 100parsecs 1s
check "neither some nor full" fails oomctl psi add /psitest/cg2 most 100ms 1s
check "an unknown cgroup" fails oomctl psi add /nothere some 100ms 1s
check "deleting an unknown id" fails oomctl psi del 999999
check "nothing was created" json '.triggers == []' oomctl -j psi list

# --- add, list, outlive oomctl, fire ------------------------------------------
check "psi-declare is no policy of its own any more" fails oomctl policy attach psi-declare
out=$(oomctl -j psi add /psitest/cg2 some 100ms 1s)
id=$(jq -r .id <<<"$out")
check "psi add returns a trigger id ($id)" test "$id" -gt 0
check "psi list shows it on /psitest/cg2" \
	json "[.triggers[] | select(.id == $id) | .cgroup] == [\"/psitest/cg2\"]" oomctl -j psi list
check "the kernel lists it" grep -q "^$id " /proc/pressure/bpf_triggers
check "it belongs to the psi-declare handler" \
	json "any(.triggers[]; .id == $id and .owner == \"psi-declare\")" oomctl -j psi list
check "the handler's link is pinned by the trigger's id" test -e /sys/fs/bpf/oomctl/psi/$id

cg1=$(hog_start /psitest/cg1 100 0)
cg2=$(hog_go /psitest/cg2 500 0)
check "the throttled hog in cg2 is killed" wait_dead "$cg2" 60
check "the hog in cg1 survives" alive "$cg1"
check "cg2's memory.events says oom_kill 1" grep -qx "oom_kill 1" $CG/psitest/cg2/memory.events
ev=$(oomctl -j event list)
check "the log has the PSI event on cg2" \
	jqe 'any(.events[]; .type == "psi" and .cgroup == "/psitest/cg2")' "$ev"
check "the log has an OOM declared by PSI in cg2" \
	jqe 'any(.events[]; .type == "oom" and .trigger == "psi" and .cgroup == "/psitest/cg2")' "$ev"
check "the log has the kill of cg2's hog" \
	jqe "[.events[] | select(.type == \"kill\" and .pid == $cg2)] | length == 1" "$ev"
check "the trigger counted events, none paused (no kill before)" \
	json "any(.triggers[]; .id == $id and .events > 0 and .paused == 0)" oomctl -j psi list
kill -9 "$cg1"; wait 2>/dev/null

# --- delete; removal of the cgroup removes its triggers ----------------------
check "psi del by id" oomctl psi del "$id"
check "it is gone" bash -c "! grep -q '^$id ' /proc/pressure/bpf_triggers"
id2=$(oomctl -j psi add /psitest/cg1 full 200ms 2s | jq -r .id)
# Ids come from an IDA: a freed one is reused, so they never run out
check "a deleted trigger's id is reused ($id2, was $id)" test "$id2" = "$id"
id3=$(oomctl -j psi add /psitest/cg1 some 150ms 1s | jq -r .id)
check "psi del by cgroup removes both of its triggers" \
	json '.deleted | length == 2' oomctl -j psi del /psitest/cg1
id4=$(oomctl -j psi add /psitest/cg2 some 150ms 1s | jq -r .id)
cg_remove /psitest
check "removing the cgroup removed its trigger" bash -c "! grep -q '^$id4 ' /proc/pressure/bpf_triggers"
check "psi list is empty" json '.triggers == []' oomctl -j psi list
check "psi del drops the handler whose cgroup went" \
	bash -c "! oomctl psi del $id4 2>/dev/null && ! test -e /sys/fs/bpf/oomctl/psi/$id4"

# --- the pause after a kill ---------------------------------------------------
# A kill below a trigger answers the stall of the windows before it: for the
# trigger's pause its handler declares nothing. Here the memcg's own OOM
# kills in pa; a throttled hog in pb then stalls /psitest through the pause
# of /psitest's trigger, and lives; pb's own trigger, no kill below it,
# kills it; after a short pause, the next hog's stall kills again.
cg_make /psitest/pa
cg_make /psitest/pb
echo 20M > $CG/psitest/pa/memory.max
echo 40M > $CG/psitest/pb/memory.high
check "a pause over 10 min is refused" fails oomctl psi add /psitest some 100ms 1s pause 11min
check "'pause' without its duration is refused" fails oomctl psi add /psitest some 100ms 1s pause
check "nothing was created" json '.triggers == []' oomctl -j psi list
dflt=$(oomctl -j psi add /psitest some 100ms 2s | jq -r .id)
check "the default pause is two windows, as psi list reads it from the handler" \
	json "[.triggers[] | select(.id == $dflt) | .pause_us] == [4000000]" oomctl -j psi list
oomctl psi del "$dflt" >/dev/null
top=$(oomctl -j psi add /psitest some 100ms 1s pause 10min | jq -r .id)
check "psi list shows trigger $top's pause of 10min" \
	json "[.triggers[] | select(.id == $top) | .pause_us] == [600000000]" oomctl -j psi list
pa=$(hog_go /psitest/pa 100 0)
check "the memcg's own OOM kills the hog in pa" wait_dead "$pa" 30
events() { oomctl -j psi list | jq ".triggers[] | select(.id == $1) | .events"; }
# fired ID N: trigger ID fired N times more since $before
fired() {
	for _ in $(seq 300); do
		[ "$(events "$1")" -ge $((before + $2)) ] && return 0
		sleep 0.1
	done
	return 1
}
before=$(events "$top")
pb=$(hog_go /psitest/pb 500 0)
check "/psitest's trigger fires 3 times on pb's stall during its pause" fired "$top" 3
# paused_at_least N: the handler counted N paused events (its work runs
# a moment after the kernel counts the event)
paused_at_least() {
	for _ in $(seq 50); do
		oomctl -j psi list | jq -e ".triggers[] | select(.id == $top) | .paused >= $1" >/dev/null && return 0
		sleep 0.1
	done
	oomctl -j psi list
	return 1
}
check "... and its handler counts them as paused" paused_at_least 3
check "... and pb's hog lives: no OOM was declared" alive "$pb"
ev=$(oomctl -j event list)
killseq=$(jq "[.events[] | select(.type == \"kill\" and .pid == $pa) | .seq] | max // 0" <<<"$ev")
check "the log has pa's kill (seq $killseq)" test "$killseq" -gt 0
check "... and after it no OOM declared on /psitest" \
	jqe "[.events[] | select(.seq > $killseq and .type == \"oom\" and .cgroup == \"/psitest\")] == []" "$ev"
# pa's kill is not below /psitest/pb: a trigger there acts at once
oomctl psi add /psitest/pb some 100ms 1s pause 10min >/dev/null
check "pb's own trigger, with no kill below it, kills pb's hog" wait_dead "$pb" 30
t0=$(date +%s%N)
oomctl psi del /psitest/pb >/dev/null
oomctl psi del "$top" >/dev/null
oomctl psi add /psitest some 100ms 1s pause 5s >/dev/null
pc=$(hog_go /psitest/pb 500 0)
check "a trigger whose 5 s pause after pb's kill ends kills the next hog" wait_dead "$pc" 30
gap=$(( ($(date +%s%N) - t0) / 1000000 ))
check "... not before the pause ended (${gap} ms after pb's kill)" test "$gap" -ge 4500
oomctl psi del /psitest >/dev/null
kill -9 "$pc" 2>/dev/null; wait 2>/dev/null
cg_remove /psitest

# Removing oomctl's folder (oomctl(8)) detaches the handlers, so their
# triggers go; the kernel puts a link from a work item: wait for it
cg_make /psitest/cg3
id5=$(oomctl -j psi add /psitest/cg3 some 150ms 1s | jq -r .id)
rm -r /sys/fs/bpf/oomctl
gone() { for _ in $(seq 50); do grep -q "^$1 " /proc/pressure/bpf_triggers || return 0; sleep 0.1; done; return 1; }
check "rm -r of the bpffs folder destroyed trigger $id5" gone "$id5"
cg_remove /psitest

# --- a user's own handler: a bpf_psi_ops object, by policy attach ------------
cg_make /psiown
check "attach a bpf_psi_ops object to /psiown" \
	oomctl policy attach "$build/bpf/psi_own_handler.bpf.o" scope /psiown
check "policy list shows it on /psiown, hook psi" \
	json '[.policies[] | select(.name == "psi_own_handler") | [.scope, .hook]] == [["/psiown", "psi"]]' \
	oomctl -j policy list
check "its init armed its trigger on /psiown" \
	json '[.triggers[] | select(.owner == "own-handler") | .cgroup] == ["/psiown"]' oomctl -j psi list
check "psi del refuses another handler's trigger" \
	fails oomctl psi del "$(oomctl -j psi list | jq '.triggers[0].id')"
check "detaching it removes its trigger" oomctl policy detach psi_own_handler
check "psi list is empty again" json '.triggers == []' oomctl -j psi list
cg_remove /psiown

done_checks
