#!/bin/bash
# oomctl event list/watch: the kernel-side log records OOMs and kills with
# no policy attached, keeps at least 1024 records, is read without being
# consumed, and watch streams new records until interrupted. Each record
# keeps its cgroup's path, which names the cgroup after it is removed.
# Its counts (the Prometheus export) hold 4096 label sets, then "(other)".
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
# watch catches SIGINT once it has the log open, just before it notes
# where the log stands: what comes after that, it prints
catches_sigint() {
	local mask
	mask=$(awk '/^SigCgt:/ { print $2 }' "/proc/$1/status" 2>/dev/null)
	[ -n "$mask" ] && (( 0x$mask & 2 ))
}
for _ in $(seq 100); do catches_sigint "$watch" && break; sleep 0.1; done
check "event watch is up" catches_sigint "$watch"
t0=$(date +%s.%N)
h=$(hog_go /ev 100 0)
check "a memcg OOM with no policy kills the hog" wait_dead "$h" 30
t1=$(date +%s.%N)
for _ in $(seq 100); do grep -q "killed pid $h " /tmp/watch.out && break; sleep 0.1; done
kill -INT "$watch"
check "event watch ends on SIGINT" wait_dead "$watch" 5
check "watch printed the kernel's kill" grep -q "killed pid $h (hog) in /ev.*chosen by the kernel's OOM killer" /tmp/watch.out
check "watch printed the OOM first" bash -c "head -1 /tmp/watch.out | grep -q 'OOM in /ev (allocation)'"
ev=$(oomctl -j event list)
check "event list has the kill" test "$(jq "[.events[] | select(.type == \"kill\" and .pid == $h)] | length" <<<"$ev")" = 1
check "reading did not consume it" test "$(oomctl -j event list | jq "[.events[] | select(.pid == $h)] | length")" -ge 1
check "count limits the records" test "$(oomctl -j event list count 1 | jq '.events | length')" = 1
# in_window TIME: TIME (local, as list prints it, to the ms) lies between
# the hog's start and the moment we saw it dead
in_window() {
	local t
	t=$(date -d "$1" +%s.%N) || return 1
	echo "kill at $t, hog from $t0 to $t1"
	awk -v t="$t" -v a="$t0" -v b="$t1" 'BEGIN { exit !(t >= a - 0.001 && t <= b + 0.001) }'
}
check "the kill's time is when it happened" \
	in_window "$(jq -r "[.events[] | select(.type == \"kill\" and .pid == $h)][0].time" <<<"$ev")"

# Fill the log past 1024 records, and its counts past OOM_COUNTS_MAX (4096)
# label sets, after which they go under "(other)": a declared OOM in an
# empty memcg logs one record, and 4100 new cgroups are more label sets
# than the counts have room for
cg_make /ovf/c0
echo +memory > $CG/ovf/cgroup.subtree_control
mkdir $CG/ovf/c{1..4099}
check "one declared OOM in each of 4100 cgroups" "$build/test/vm/declare_flood" --children $CG/ovf
n=$(oomctl -j event list | jq '.events | length')
check "the log keeps at least 1024 records (has $n)" test "$n" -ge 1024
prom=$(oomctl event export --prometheus)
check "the OOMs beyond 4096 label sets are counted under (other)" \
	grep -qE '^oomctl_ooms_total\{cgroup="\(other\)",trigger="\(other\)"\} [1-9]' <<<"$prom"
check "...and the four families hold 4096 label sets" test \
	"$(grep -cE '^oomctl_(kills|dry_run_kills|ooms|psi_events)_total\{' <<<"$prom")" = 4097
rmdir $CG/ovf/c[0-9]* $CG/ovf
check "bad count is a usage error" bash -c "'$OOMCTL' event list count many 2>/dev/null; test \$? = 2"

# Paths in the log: a removed cgroup keeps the path it had at the event
cg_make /ev/gone 32M	# below /ev's 64M: the OOM is /ev/gone's
h=$(hog_go /ev/gone 100 0)
check "an OOM in /ev/gone kills the hog" wait_dead "$h" 30
check "while /ev/gone exists the kill names it" json \
	"any(.events[]; .type == \"kill\" and .pid == $h and .cgroup == \"/ev/gone\" and .cgroup_removed == false)" oomctl -j event list count 10
cg_remove /ev/gone
check "/ev/gone is removed" test ! -d $CG/ev/gone
oomctl event list count 10 > /tmp/list.out 2>&1
check "event list names the removed cgroup's kill by its path" \
	grep -q "killed pid $h (hog) in /ev/gone (removed)" /tmp/list.out
check "and its OOM" grep -q "OOM in /ev/gone (removed) (allocation)" /tmp/list.out
check "-j has the removed cgroup's path" json \
	"any(.events[]; .type == \"kill\" and .pid == $h and .cgroup == \"/ev/gone\" and .cgroup_removed == true)" oomctl -j event list count 10
check "dump names it too" bash -c "'$OOMCTL' dump | grep -q 'killed pid $h (hog) in /ev/gone (removed)'"

# A deep path fits whole; a long one keeps its end behind "..."
deep=/ev/deep$(printf '/d%02d' $(seq 30))
cg_make "$deep"
check "declared OOM in a 31-deep cgroup" "$build/test/vm/declare_flood" "$CG$deep" 1
a=$(printf 'a%.0s' $(seq 100)) b=$(printf 'b%.0s' $(seq 100)) c=$(printf 'c%.0s' $(seq 100))
long=/ev/long/$a/$b/$c	# 311 bytes: more than fits
cg_make "$long"
check "declared OOM in a cgroup with a 311-byte path" "$build/test/vm/declare_flood" "$CG$long" 1
cg_remove /ev/deep
cg_remove /ev/long
ev=$(oomctl -j event list count 4)
check "the deep path is whole" \
	jqe "any(.events[]; .type == \"oom\" and .cgroup == \"$deep\" and .cgroup_removed)" "$ev"
# the last 252 bytes: the end of $a, then /$b/$c
tail="...${long: -252}"
check "the long path is its end behind '...'" \
	jqe "any(.events[]; .type == \"oom\" and .cgroup == \"$tail\" and .cgroup_removed)" "$ev"
check "event list prints the cut path" bash -c "'$OOMCTL' event list count 4 | grep -qF 'OOM in $tail (removed)'"
cg_remove /ev

# A log pinned by an older oomctl, with smaller records, is replaced, not
# misread (in a folder of its own: the live log stays)
old=/sys/fs/bpf/oldlog
rm -rf $old; mkdir -p $old/recorder
bpftool map create $old/events type array key 4 value 136 entries 4096 name oom_events
bpftool map create $old/events_head type array key 4 value 8 entries 1 name oom_events_head
check "an older log is replaced, with a notice" \
	bash -c "'$OOMCTL' --bpffs $old event list 2>&1 >/dev/null | grep -q 'older format'"
check "by a log of today's records" \
	test "$(bpftool -j map show pinned $old/events | jq .bytes_value)" = "$(bpftool -j map show pinned /sys/fs/bpf/oomctl/events | jq .bytes_value)"
rm -rf $old

done_checks
