#!/bin/bash
# Smoke test of the "rfc" killer, in a guest running the RFC kernel:
#
#   flock /var/cache/bpf-oom/build.lock test/vm/run --timeout 300 \
#     --kernel /var/cache/bpf-oom/kbuild/debian~bookworm/linux-build-rfc/arch/x86/boot/bzImage \
#     -- test/bench/rfc/smoke.sh HANDLER_DIR [HOG]
#
# HANDLER_DIR holds rfc_psi_handler (test/bench/rfc/build.sh HANDLER_DIR); HOG
# defaults to the main build's test/vm/hog. The RFC selftest's setup: a cgroup
# with memory.high 40M and no swap, the handler on its memory pressure ("some
# 50000 500000"), a hog rewriting 500 MiB in it. Passes if the hog dies of
# SIGKILL within 20 s and the cgroup counts an OOM kill. Exit 0 on a pass,
# else 1 with one line saying why.
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd -P)
repo=$(cd "$here/../../.." && pwd -P)
limit_s=20
trigger="some 50000 500000"

fail() { echo "rfc-smoke: FAIL: $*" >&2; exit 1; }
if [ $# -lt 1 ] || [ $# -gt 2 ]; then
	echo "usage: smoke.sh HANDLER_DIR [HOG]" >&2
	exit 2
fi
handler=$(realpath -m "$1")/rfc_psi_handler
hog=${2:-$repo/build/test/vm/hog}
[ -x "$handler" ] || fail "no $handler (test/bench/rfc/build.sh $1)"
[ -x "$hog" ] || fail "no $hog (the main build's test/vm/hog)"
[[ $(uname -r) == *-bpf-oom-rfc ]] ||
	fail "this is $(uname -r), not the RFC kernel: boot test/vm/run --kernel .../linux-build-rfc/arch/x86/boot/bzImage"

cg=/sys/fs/cgroup/rfc-smoke
tmp=$(mktemp -d)
hpid="" gpid=""
cleanup() {
	[ -z "$gpid" ] || kill -KILL "$gpid" 2>/dev/null
	[ -z "$hpid" ] || { kill -TERM "$hpid" 2>/dev/null; wait "$hpid" 2>/dev/null; }
	rmdir "$cg" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT

grep -qw memory /sys/fs/cgroup/cgroup.subtree_control ||
	echo +memory >/sys/fs/cgroup/cgroup.subtree_control || fail "cannot enable the memory controller"
mkdir "$cg" || fail "cannot create $cg"
echo 40M >"$cg/memory.high" || fail "cannot set memory.high"
# no swap controller file without swap: then there is nothing to limit
[ ! -e "$cg/memory.swap.max" ] || echo 0 >"$cg/memory.swap.max" || fail "cannot set memory.swap.max"
# The test's shell must not be the victim: its memcg is not $cg, but be sure.
echo -1000 >/proc/self/oom_score_adj

echo "rfc-smoke: $(uname -r), handler on $cg: \"$trigger\""
mkfifo "$tmp/out"
"$handler" "$cg" "$trigger" >"$tmp/out" 2>"$tmp/err" &
hpid=$!
exec 3<"$tmp/out"
line=""
read -r -t 60 line <&3
[ "$line" = ready ] || fail "handler not ready: $(head -n 1 "$tmp/err")"
echo "rfc-smoke: handler ready (pid $hpid)"

# The hog joins the cgroup before it allocates anything.
start=$(date +%s%N)
HOG_CYCLE=1 bash -c 'echo $$ >"$1/cgroup.procs" && echo 0 >/proc/self/oom_score_adj && exec "$2" 500' \
	hog "$cg" "$hog" &
gpid=$!
mkfifo "$tmp/nap" && exec 4<>"$tmp/nap"
status=""
# bash reports a job killed by a signal on stderr when it reaps it: not news here
exec 5>&2 2>/dev/null
while [ $(( ($(date +%s%N) - start) / 1000000000 )) -lt "$limit_s" ]; do
	if ! kill -0 "$gpid" 2>/dev/null; then
		wait "$gpid"
		status=$?
		break
	fi
	read -r -t 0.1 -u 4	# a 0.1 s nap without an exec (0.1 s each under TCG)
done
exec 2>&5 5>&-
ms=$(( ($(date +%s%N) - start) / 1000000 ))
[ -n "$status" ] || fail "the hog was still alive after $limit_s s ($(grep -w oom_kill "$cg/memory.events"))"
gpid=""
ooms=$(awk '$1 == "oom_kill" { print $2 }' "$cg/memory.events")
echo "rfc-smoke: hog exited with status $status after $ms ms; $cg oom_kill $ooms"
kill -TERM "$hpid" && wait "$hpid"
hrc=$?
hpid=""
cat "$tmp/err"
[ "$status" = 137 ] || fail "the hog exited with status $status, not by SIGKILL (137)"
[ "${ooms:-0}" -ge 1 ] || fail "the hog died of SIGKILL, but $cg counts no OOM kill"
[ "$hrc" = 0 ] || fail "the handler exited with status $hrc on SIGTERM"
echo "rfc-smoke: PASS: SIGKILL by the OOM killer $ms ms after the hog started"
