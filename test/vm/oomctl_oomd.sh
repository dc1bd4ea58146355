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
# no task's allocation decides the timing). The policy's window is "since
# it last looked": a and b are new to it, so their whole pgscan counts.
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

oomctl policy detach oomd >/dev/null
cg_remove /oomd
swapoff /dev/ram0
done_checks
