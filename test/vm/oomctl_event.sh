#!/bin/bash
# oomctl event list/watch: the kernel-side log records OOMs and kills with
# no policy attached, keeps at least 1024 records, is read without being
# consumed, and watch streams new records until interrupted.
# Usage (in the guest): oomctl_event.sh BUILD_DIR
set -u
build=${1:?usage: oomctl_event.sh BUILD_DIR}
. "$(dirname "$0")/lib.sh"
OOMCTL=$build/cli/oomctl HOG=$build/test/vm/hog
oomctl() { "$OOMCTL" "$@"; }

check "event list works on an empty log" oomctl event list
check "no policy is attached" test "$(oomctl -j policy list | jq '.policies | length')" = 0

cg_remove /ev
cg_make /ev 64M
# Not through the oomctl function: SIGINT must reach oomctl itself
"$OOMCTL" event watch > /tmp/watch.out 2>&1 &
watch=$!
sleep 1
h=$(hog_go /ev 100 0)
check "a memcg OOM with no policy kills the hog" wait_dead "$h" 30
sleep 1
kill -INT "$watch"
check "event watch ends on SIGINT" wait_dead "$watch" 5
check "watch printed the kernel's kill" grep -q "killed pid $h (hog) in /ev.*chosen by the kernel's OOM killer" /tmp/watch.out
check "watch printed the OOM first" bash -c "head -1 /tmp/watch.out | grep -q 'OOM in /ev (allocation)'"
ev=$(oomctl -j event list)
check "event list has the kill" test "$(jq "[.events[] | select(.type == \"kill\" and .pid == $h)] | length" <<<"$ev")" = 1
check "reading did not consume it" test "$(oomctl -j event list | jq "[.events[] | select(.pid == $h)] | length")" -ge 1
check "count limits the records" test "$(oomctl -j event list count 1 | jq '.events | length')" = 1
check "the kill has a timestamp" test "$(jq -r '.events[-1].time' <<<"$ev" | cut -c1-2)" = 20

# Fill the log past 1024 records: declared OOMs in an empty memcg log one each
cg_make /ev/empty
check "1100 declared OOMs" "$build/test/vm/declare_flood" $CG/ev/empty 1100
n=$(oomctl -j event list | jq '.events | length')
check "the log keeps at least 1024 records (has $n)" test "$n" -ge 1024
check "bad count is a usage error" bash -c "'$OOMCTL' event list count many 2>/dev/null; test \$? = 2"
cg_remove /ev

done_checks
