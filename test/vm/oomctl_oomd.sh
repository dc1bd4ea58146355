#!/bin/bash
# The oomd policy: among the OOM scope's units (leaves, or memory.oom.group
# cgroups killed whole) it kills the one with the most reclaim activity,
# then the largest; user.oomd_omit units are never chosen, user.oomd_avoid
# ones last. No swap here, so reclaim finds nothing to scan and usage
# decides. Usage (in the guest): oomctl_oomd.sh BUILD_DIR
set -u
build=${1:?usage: oomctl_oomd.sh BUILD_DIR}
. "$(dirname "$0")/lib.sh"
OOMCTL=$build/cli/oomctl HOG=$build/test/vm/hog
oomctl() { "$OOMCTL" "$@"; }

# /oomd (100M): a 40M, b 25M, then c wants 35M and hits the limit with
# about 34M: by usage a > c > b.
story() {
	local u
	for u in a b c g; do cg_remove /oomd/$u; done
	cg_make /oomd 100M
	cg_make /oomd/a; cg_make /oomd/b; cg_make /oomd/c
	for u in "$@"; do setfattr -n "user.oomd_${u#*=}" -v 1 "$CG/oomd/${u%=*}"; done
	A=$(hog_start /oomd/a 40 0); B=$(hog_start /oomd/b 25 0)
	C=$(hog_go /oomd/c 35 0)
	VICTIM=none
	for _ in $(seq 300); do
		alive "$A" || { VICTIM=a; return; }
		alive "$B" || { VICTIM=b; return; }
		alive "$C" || { VICTIM=c; return; }
		sleep 0.1
	done
}

check "attach oomd" oomctl policy attach oomd
story;                    check "the largest unit, a, is killed (got $VICTIM)" test "$VICTIM" = a
check "the log says oomd chose it" \
	test "$(oomctl -j event list | jq -r '[.events[] | select(.type == "kill")] | last | .chosen_by')" = oomd
story a=avoid;            check "user.oomd_avoid on a: c is killed (got $VICTIM)" test "$VICTIM" = c
story a=omit c=omit;      check "user.oomd_omit on a and c: b is killed (got $VICTIM)" test "$VICTIM" = b
story a=avoid b=avoid c=avoid
check "all avoided: the largest again, a (got $VICTIM)" test "$VICTIM" = a

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

oomctl policy detach oomd >/dev/null
cg_remove /oomd
done_checks
