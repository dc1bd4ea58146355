#!/bin/bash
# The oomd policy: among the OOM scope's units (leaves, or memory.oom.group
# cgroups killed whole) it kills the one with the most reclaim activity,
# then the largest; user.oomd_omit units are never chosen, user.oomd_avoid
# ones last. The first stories have no swap (cg_make sets memory.swap.max
# 0), so reclaim finds nothing to scan and usage decides; the last two swap
# to /dev/ram0 to show that reclaim activity outranks size.
# Usage (in the guest): oomctl_oomd.sh BUILD_DIR
set -u
build=${1:?usage: oomctl_oomd.sh BUILD_DIR}
. "$(dirname "$0")/lib.sh"
OOMCTL=$build/cli/oomctl HOG=$build/test/vm/hog
oomctl() { "$OOMCTL" "$@"; }

# /oomd (100M): a 40M, b 25M, then c wants 35M and hits the limit with
# about 34M: by usage a > c > b. Each argument marks a unit: a=omit sets
# user.oomd_omit to 1 on a, a=omit:VALUE to VALUE; ~a=omit chowns a to
# nobody first, who sets it.
story() {
	local u arg unit xattr value ready
	for u in a b c g; do cg_remove /oomd/$u; done
	cg_make /oomd 100M
	cg_make /oomd/a; cg_make /oomd/b; cg_make /oomd/c
	for arg in "$@"; do
		unit=${arg%%=*} xattr=${arg#*=} value=1
		[[ $xattr = *:* ]] && value=${xattr#*:} xattr=${xattr%%:*}
		if [[ $unit = "~"* ]]; then
			unit=${unit#"~"}
			chown nobody "$CG/oomd/$unit"
			setpriv --reuid=nobody --regid=nogroup --clear-groups \
				setfattr -n "user.oomd_$xattr" -v "$value" "$CG/oomd/$unit"
		else
			setfattr -n "user.oomd_$xattr" -v "$value" "$CG/oomd/$unit"
		fi || bail "cannot set user.oomd_$xattr on $unit"
	done
	A=$(hog_start /oomd/a 40 0); B=$(hog_start /oomd/b 25 0)
	hogs_ready "$A" "$B"
	ready=$(mktemp -u)
	C=$(hog_go /oomd/c 35 0 "$ready")
	for _ in $(seq 300); do
		[ "$(dead_of a="$A" b="$B" c="$C")" = none ] || break
		sleep 0.1
	done
	# c's hog has its memory or is dead: a second kill would have come
	settled "$C" "$ready" || echo "# c's hog neither filled its memory nor died in 30 s"
	rm -f "$ready"
	VICTIM=$(dead_of a="$A" b="$B" c="$C")
}
# killed UNIT: the story killed UNIT's hog and no other; shows the last
# kills of the log otherwise
killed() {
	[ "$VICTIM" = "$1" ] && return
	oomctl event list | tail -n 4
	return 1
}

check "attach oomd" oomctl policy attach oomd
# Its sampler: a BPF timer keeps each unit's pgscan at its last two ticks,
# a second apart, from attach to detach
ticks_apart() {
	local apart
	sleep 2.2
	apart=$(bpftool -j map dump name pgscan_samples |
		jq '[.[].formatted.value | .newer.time_ns - .older.time_ns] | max // 0')
	echo "newer - older: $apart ns"
	[ "$apart" -ge 900000000 ] && [ "$apart" -le 1500000000 ]
}
check "the sampler ticks once a second" ticks_apart
story;                    check "the largest unit, a, is killed (got $VICTIM)" killed a
check "the log says oomd chose it" \
	test "$(oomctl -j event list | jq -r '[.events[] | select(.type == "kill")] | last | .chosen_by')" = oomd
story a=avoid;            check "user.oomd_avoid on a: c is killed (got $VICTIM)" killed c
story a=omit c=omit;      check "user.oomd_omit on a and c: b is killed (got $VICTIM)" killed b
# systemd's booleans, as parse_boolean() reads them
story a=omit:false c=omit:no
check "user.oomd_omit false on a, no on c: not set, a is killed (got $VICTIM)" killed a
story a=omit:YES c=omit:on
check "user.oomd_omit YES on a, on on c: set, b is killed (got $VICTIM)" killed b
# Delegation: nobody owns a and omits it; the OOM's scope /oomd is root's
story "~a=omit"
check "nobody's user.oomd_omit on its own a counts for nothing: a is killed (got $VICTIM)" killed a
story a=avoid b=avoid c=avoid
check "all avoided: the largest again, a (got $VICTIM)" killed a

# kill-unit: the chosen unit dies whole. a holds two 20M hogs (40M, the
# largest unit), b one of 25M; c's 35M hog hits the limit. Attached
# plainly, oomd kills one of a's hogs (they are alike) and the other
# lives; with kill-unit both die, and a's memory.events counts the group
# kill, as for memory.oom.group.
unit_story() {
	local u ready
	for u in a b c g; do cg_remove /oomd/$u; done
	cg_make /oomd 100M; cg_make /oomd/a; cg_make /oomd/b; cg_make /oomd/c
	A1=$(hog_start /oomd/a 20 0); A2=$(hog_start /oomd/a 20 0)
	B=$(hog_start /oomd/b 25 0)
	hogs_ready "$A1" "$A2" "$B"
	ready=$(mktemp -u)
	C=$(hog_go /oomd/c 35 0 "$ready")
	for _ in $(seq 300); do
		[ "$(dead_of a1="$A1" a2="$A2")" = none ] || break
		sleep 0.1
	done
	# c's hog has its memory: no OOM is left to come
	settled "$C" "$ready" || echo "# c's hog neither filled its memory nor died in 30 s"
	rm -f "$ready"
	VICTIM=$(dead_of a1="$A1" a2="$A2" b="$B" c="$C")
}
unit_story
check "attached plainly, one of a's two hogs is killed (got $VICTIM)" \
	test "$VICTIM" = a1 -o "$VICTIM" = a2
oomctl policy detach oomd >/dev/null
check "attach oomd kill-unit" oomctl policy attach oomd kill-unit
check "...policy list says kill-unit" \
	json 'any(.policies[]; .name == "oomd" and .mode == "kill-unit")' oomctl -j policy list
# the last story's hogs still hold /oomd's units
check "...explain says the rest of the victim's unit goes too" \
	json '.policies[0].mode == "kill-unit" and .policies[0].victim.unit == true' \
	oomctl -j policy explain oomd /oomd
unit_story
check "kill-unit: both of a's hogs are killed, b's and c's live (got $VICTIM)" \
	test "$VICTIM" = "a1 a2"
check "...a's memory.events counts the group kill" \
	grep -qx "oom_group_kill 1" $CG/oomd/a/memory.events
check "...the kill report says the policy asked for the unit" \
	bash -c "dmesg | grep -q 'Tasks in /oomd/a are going to be killed: the bpf policy asked for the whole cgroup'"
oomctl policy detach oomd >/dev/null
oomctl policy attach oomd >/dev/null

# memory.oom.group: g (two 20M leaves, 40M together) is one unit, larger
# than any leaf (b 25M, c about 34M when it hits the limit): both of g's
# tasks die, b's survives.
for u in a b c g; do cg_remove /oomd/$u; done
cg_make /oomd/g/x; cg_make /oomd/g/y; cg_make /oomd/b; cg_make /oomd/c
echo 1 > $CG/oomd/g/memory.oom.group
X=$(hog_start /oomd/g/x 20 0); Y=$(hog_start /oomd/g/y 20 0)
B=$(hog_start /oomd/b 25 0)
C=$(hog_go /oomd/c 35 0)
check "an oom.group unit is killed whole: x's hog" wait_dead "$X" 30
check "...and y's hog" wait_dead "$Y" 5
check "b's hog survives" alive "$B"
check "g's memory.events counts the group kill" grep -qx "oom_group_kill 1" $CG/oomd/g/memory.events

# Reclaim activity outranks size. /oomd/a (50M) sits idle and cannot swap;
# /oomd/b (memory.max 16M, swap allowed) holds a smaller hog. With
# "reclaim", b's hog rewrites 24M pass after pass, so b keeps swapping
# (pgscan grows); without, its 12M fit and b reclaims nothing. An OOM is
# then declared in /oomd (declared, so that exactly one OOM is handled and
# no task's allocation decides the timing). b reclaims all along, so it
# has pgscan in the policy's window (the last one to two seconds).
pgscan() {	# pgscan CGROUP: its memory.stat pgscan (reading it flushes)
	key_of "$CG$1/memory.stat" pgscan
}
# reclaim_story [reclaim]: sets the hogs' pids A and B, pgscan SCAN_A and
# SCAN_B and usage USE_A and USE_B just before the OOM, OUT to its JSON
reclaim_story() {
	local i u
	for u in a b c g; do cg_remove /oomd/$u; done
	cg_make /oomd 100M; echo max > $CG/oomd/memory.swap.max
	cg_make /oomd/a; cg_make /oomd/b 16M; echo max > $CG/oomd/b/memory.swap.max
	A=$(hog_start /oomd/a 50 0)
	if [ "${1:-}" = reclaim ]; then
		B=$(HOG_CYCLE=1 hog_start /oomd/b 24 0)
		# a few thousand pages scanned (a, unable to swap, scans none)
		for i in $(seq 100); do
			[ "$(pgscan /oomd/b)" -ge 4000 ] && break
			sleep 0.1
		done
	else
		B=$(hog_start /oomd/b 12 0)
	fi
	SCAN_A=$(pgscan /oomd/a) SCAN_B=$(pgscan /oomd/b)
	USE_A=$(<$CG/oomd/a/memory.current) USE_B=$(<$CG/oomd/b/memory.current)
	OUT=$(oomctl -j oom declare /oomd)
}
swap_on() { mkswap /dev/ram0 && swapon /dev/ram0; }
check "swap on /dev/ram0 (brd)" swap_on

reclaim_story
check "no reclaim: both hogs started, b's pgscan is 0 (got $SCAN_B)" \
	test "$A" != 0 -a "$B" != 0 -a "$SCAN_B" = 0
check "...the larger unit, a, is killed" jqe ".handled and (.kills | length == 1) and .kills[0].pid == $A and .kills[0].chosen_by == \"oomd\"" "$OUT"
check "...a's hog is dead" wait_dead "$A" 5
check "...b's hog survives" alive "$B"

reclaim_story reclaim
check "reclaim: both hogs started" test "$A" != 0 -a "$B" != 0
check "...a is larger than b ($USE_A > $USE_B bytes)" test "$USE_A" -gt "$USE_B"
check "...b reclaims, a does not (pgscan a $SCAN_A, b $SCAN_B)" test "$SCAN_B" -ge 4000 -a "$SCAN_A" -lt 100
check "...b, the unit that reclaims, is killed" jqe ".handled and (.kills | length == 1) and .kills[0].pid == $B and .kills[0].chosen_by == \"oomd\"" "$OUT"
check "...b's hog is dead" wait_dead "$B" 5
check "...a's hog survives" alive "$A"

# The window is recent. a thrashes first (its hog cycles 24M through
# 16M), then its hog is stopped (SIGSTOP: alive, resident, idle), and we
# wait until explain shows no pgscan in a's window (two sampler ticks, at
# most 15 s); then b thrashes, and the OOM is declared while it does. a
# has scanned more pages in total, b in the last seconds: b goes. With
# pgscan counted since boot (or since the policy last looked: this is its
# first OOM here), a would.
a_window_quiet() {
	local out
	for _ in $(seq 30); do
		out=$(oomctl -j policy explain oomd /oomd) &&
			jq -e '[.policies[].candidates[]? | select(.cgroup == "/oomd/a")] | .[0].pgscan == 0' \
				<<<"$out" >/dev/null && return 0
		sleep 0.5
	done
	return 1
}
recent_story() {
	local u i
	for u in a b c g; do cg_remove /oomd/$u; done
	cg_make /oomd 100M; echo max > $CG/oomd/memory.swap.max
	for u in a b; do
		cg_make /oomd/$u 16M; echo max > $CG/oomd/$u/memory.swap.max
	done
	A=$(HOG_CYCLE=1 hog_start /oomd/a 24 0)
	for i in $(seq 300); do
		[ "$(pgscan /oomd/a)" -ge 40000 ] && break
		sleep 0.1
	done
	kill -STOP "$A"
	QUIET=no
	a_window_quiet && QUIET=yes
	B=$(HOG_CYCLE=1 hog_start /oomd/b 24 0)
	for i in $(seq 100); do
		[ "$(pgscan /oomd/b)" -ge 4000 ] && break
		sleep 0.1
	done
	SCAN_A=$(pgscan /oomd/a) SCAN_B=$(pgscan /oomd/b)
	OUT=$(oomctl -j oom declare /oomd)
}
recent_story
check "recent: both hogs started, a's stopped" test "$A" != 0 -a "$B" != 0
check "...a has scanned more in all (pgscan a $SCAN_A, b $SCAN_B)" test "$SCAN_A" -gt "$SCAN_B" -a "$SCAN_B" -ge 4000
check "...explain shows no pgscan in a's window ($QUIET)" test "$QUIET" = yes
check "...b, the unit that reclaims now, is killed" jqe ".handled and (.kills | length == 1) and .kills[0].pid == $B and .kills[0].chosen_by == \"oomd\"" "$OUT"
check "...a's hog survives" alive "$A"
kill -CONT "$A" 2>/dev/null

oomctl policy detach oomd >/dev/null
# the pinned timer map was the last user reference: the kernel frees both
sampler_gone() {
	for _ in $(seq 50); do
		bpftool -j map show | jq -e 'any(.[]; .name == "policy_timers" or .name == "pgscan_samples")' >/dev/null || return 0
		sleep 0.1
	done
	bpftool map show
	return 1
}
check "detached, no map of the sampler is left" sampler_gone
cg_remove /oomd
swapoff /dev/ram0
done_checks
