#!/bin/bash
# Triggers written to pressure files never reach bpf PSI handlers (issue 9,
# b). With a psi-declare handler attached by root (oomctl psi add on cg1,
# which has no pressure), user nobody arms "some 150ms per 2s" on
# /proc/pressure/memory and on /psiu/cg2/memory.pressure (chowned to it) and
# holds the fds while cg2's hog thrashes under memory.high: nothing may be
# declared or killed. Then root's trigger on cg2 (oomctl psi add) does reach
# its handler, which declares the OOM that kills cg2's hog.
# Usage (in the guest): psi_unprivileged.sh BUILD_DIR
set -u
build=${1:?usage: psi_unprivileged.sh BUILD_DIR}
. "$(dirname "$0")/lib.sh"
OOMCTL=$build/cli/oomctl HOG=$build/test/vm/hog
oomctl() { "$OOMCTL" "$@"; }
QUIET=10	# seconds of pressure with only nobody's triggers armed: 5 of their 2 s windows
# events COND: the logged events (in $ev) for which jq's COND holds, on one line
events() { jq -c "[.events[] | select($1)]" <<<"$ev"; }

cg_remove /psiu
cg_make /psiu/cg1
cg_make /psiu/cg2
echo 40M > $CG/psiu/cg2/memory.high
chown nobody $CG/psiu/cg2/memory.pressure || bail "cannot chown cg2's memory.pressure"

idle=$(oomctl -j psi add /psiu/cg1 some 150ms 2s | jq -r .id)
check "root attaches a psi-declare handler, on cg1 (trigger $idle)" test "$idle" -gt 0

# nobody's triggers, held by a sleep that inherits the fds; it says "armed"
armed=$(mktemp)
setpriv --reuid=nobody --regid=nogroup --clear-groups bash -c '
	exec 3<>/proc/pressure/memory 4<>"$1" || exit 1
	echo "some 150000 2000000" >&3 || exit 1
	echo "some 150000 2000000" >&4 || exit 1
	echo armed
	exec sleep 1000' - "$CG/psiu/cg2/memory.pressure" >"$armed" 2>&1 &
holder=$!
for _ in $(seq 50); do grep -q armed "$armed" && break; sleep 0.1; done
check "nobody armed both triggers" grep -qx armed "$armed"
check "and holds them as uid 65534" \
	test "$(awk '/^Uid:/ { print $2 }' /proc/$holder/status)" = 65534

cg1=$(hog_start /psiu/cg1 100 0)
[ "$cg1" != 0 ] || bail "cg1's hog did not get its memory"
kills=$(oom_kills)
cg2=$(hog_go /psiu/cg2 500 0)
sleep $QUIET
check "cg2's hog is alive after ${QUIET} s of pressure" alive "$cg2"
check "cg1's hog is alive" alive "$cg1"
check "/proc/vmstat oom_kill is unchanged ($kills)" test "$(oom_kills)" = "$kills"
check "cg2 was throttled at memory.high" \
	awk '$1 == "high" && $2 > 0 { ok = 1 } END { exit !ok }' $CG/psiu/cg2/memory.events
ev=$(oomctl -j event list)
check "no PSI event reached bpf" no_events '.type == "psi"'
check "no OOM was declared" no_events '.type == "oom"'

# --- control: a kernel-owned trigger on cg2 reaches the handler ------------
alive "$cg2" || cg2=$(hog_go /psiu/cg2 500 0)	# so that it is a control
id=$(oomctl -j psi add /psiu/cg2 some 100ms 1s | jq -r .id)
check "root adds a kernel-owned trigger on cg2 (id $id)" test "$id" -gt 0
check "it declares the OOM: cg2's hog is killed" wait_dead "$cg2" 60
check "cg1's hog survives" alive "$cg1"
ev=$(oomctl -j event list)
check "the log has PSI events on cg2" \
	test "$(events '.type == "psi" and .cgroup == "/psiu/cg2"')" != "[]"
check "the log has an OOM declared by PSI in cg2" \
	test "$(events '.type == "oom" and .trigger == "psi" and .cgroup == "/psiu/cg2"')" != "[]"
check "and no PSI event or OOM elsewhere" \
	no_events '(.type == "psi" or .type == "oom") and .cgroup != "/psiu/cg2"'
check "nobody's trigger holder is still there" alive "$holder"

kill "$holder" "$cg1" 2>/dev/null; wait 2>/dev/null
rm -f "$armed"
oomctl psi del "$id" >/dev/null
oomctl psi del "$idle" >/dev/null
cg_remove /psiu
done_checks
