#!/bin/bash
# OOM-path cost (issue 7, item 4), run IN the guest: the time the kernel
# spends in out_of_memory() for one OOM over NCG leaf memory cgroups of 10
# processes each (1000 x 10; --quick: 100 x 10), with three selections:
# largest-leaf attached, oomd attached, and no policy (kernel: the kernel's
# own oom_badness scan). A figure, never an assertion of speed.
#
#   test/bench/oom_path.sh OUTDIR BUILD_DIR [--quick]
#
# Writes OUTDIR/oom_path.csv, "selection,cgroups,tasks,run,oom_us", a row per
# run (5 per selection; --quick: 1), and OUTDIR/oom_path_parts.csv, the same
# runs split into the policy hook, the kernel's task scan and the OOM report
# (parts, not a sum: a policy's kill, and so its report, is inside its hook).
# Progress goes to stderr; any missing cell is one error line and exit 1.
#
# The setup, and why:
# - /oompath/cg0001..cgNNNN, leaves, each with 10 sleeping processes forked
#   by test/bench/oom_path_tree (no exec: 10,000 execs would take ~17 min
#   under TCG). The sleepers touch no memory of their own. The last leaf's
#   tenth process is a 16 MiB hog, made anew before each run: it is the
#   victim that every selection must find (the largest leaf, the largest
#   process by oom_badness, the largest unit for oomd, whose pgscan windows
#   are all 0 without reclaim). It comes last in every walk (the last child
#   created, the last process forked), so a selection that found it went over
#   all of them; the run fails if anything else died, or more than it.
# - Each sleeper costs the kernel ~105 KiB (page tables ~40, kernel stack
#   16, slab ~15, measured under this kernel): 10,000 need ~1.1 GiB, more
#   than test/vm/run's default guest of 1 GiB has; run the full mode with
#   --mem 2048. We check MemAvailable first: running out of memory with
#   10,000 processes livelocks the guest until test/vm/run's timeout.
# - The OOM is declared on /oompath (oomctl oom declare, oomctl-oom(8)): an
#   OOM of the memcg that holds all the leaves, so its candidates are all
#   10,000 processes; out_of_memory() runs as for a memcg at its
#   memory.max, minus the allocation. No dry-run: a dry-run policy only
#   logs, then the kernel's selection runs too, and we would time both.
# - The probes (progs/oom_path.bpf.c, loaded by test/bench/oom_path around
#   each declare) time out_of_memory() with fentry/fexit, and inside it the
#   policy hook, the kernel's scan and the report.
# - vm.oom_dump_tasks=0: else the report lists all 10,000 tasks, whichever
#   selection chose, and that listing would be the figure. The console log
#   level is 1 during the runs: under TCG writing the report to the serial
#   console costs more than the selection; the kernel log still gets it, and
#   is scanned for kernel reports at the end (test/vm/splat-scan), since the
#   console log that test/vm/run scans no longer shows them.
# - kernel.bpf_stats_enabled=1 throughout: policy attach turns it on, and it
#   slows every BPF program a little, the event recorder's included (started
#   by the first declare or attach), so the kernel's runs get it too.
# - One OOM before the timed ones, not recorded: the boot's first OOM report
#   costs up to 3x the next ones (cold caches), and would weigh on whichever
#   selection came first.
# - The selections take turns, one run each per round, so that drift of the
#   shared host hits them alike; a policy is attached for its run only.
set -euo pipefail

die() { echo "oom_path: $*" >&2; exit 1; }
log() { echo "oom_path: $*" >&2; }
usage() { echo "usage: oom_path.sh OUTDIR BUILD_DIR [--quick]" >&2; exit 2; }

[ $# -eq 2 ] || { [ $# -eq 3 ] && [ "$3" = --quick ]; } || usage
outdir=$1 build=$2 quick=${3:-}
repo=$(cd "$(dirname "$0")/../.." && pwd -P)
oomctl=$build/cli/oomctl
probe=$build/test/bench/oom_path
tree=$build/test/bench/oom_path_tree
for bin in "$oomctl" "$probe" "$tree"; do
	[ -x "$bin" ] || die "no $bin: build it first"
done
mkdir -p "$outdir" || die "cannot create $outdir"

if [ "$quick" = --quick ]; then ncg=100 runs=1; else ncg=1000 runs=5; fi
ntasks=10 hog_mib=16
selections=(kernel largest-leaf oomd)
CG=/sys/fs/cgroup
name=oompath P=$CG/oompath
last=$P/cg$(printf %04d "$ncg")
tmp=$(mktemp -d)
csv=$outdir/oom_path.csv parts=$outdir/oom_path_parts.csv

[ -e "$P" ] && die "$P exists already: another run's leftovers?"
attached=$("$oomctl" -n -o name policy list) || die "oomctl policy list failed"
[ -z "$attached" ] || die "policies attached already (${attached//$'\n'/ }): they would choose instead"

read -r printk_level _ </proc/sys/kernel/printk
dump_tasks=$(</proc/sys/vm/oom_dump_tasks)
threads_max=$(</proc/sys/kernel/threads-max)
tree_pid='' policy=''
cleanup() {
	set +e
	[ -z "$policy" ] || "$oomctl" policy detach "$policy" >/dev/null
	[ -z "$tree_pid" ] || kill "$tree_pid" 2>/dev/null
	if [ -d "$P" ]; then
		echo 1 >"$P/cgroup.kill"
		for _ in $(seq 100); do
			rmdir "$P"/cg* "$P" 2>/dev/null
			[ -d "$P" ] || break
			sleep 0.2
		done
		[ -d "$P" ] && echo "oom_path: could not remove $P" >&2
	fi
	echo "$printk_level" >/proc/sys/kernel/printk
	echo "$dump_tasks" >/proc/sys/vm/oom_dump_tasks
	echo "$threads_max" >/proc/sys/kernel/threads-max
	rm -rf "$tmp"
}
trap cleanup EXIT

echo 1 >/proc/sys/kernel/printk
echo 0 >/proc/sys/vm/oom_dump_tasks
# The kernel sizes threads-max to 1/8 of memory in kernel stacks: ~7,800
# in a 1 GiB guest, short of the 10,000 sleepers
need=$((ncg * ntasks + 2000))
[ "$threads_max" -ge "$need" ] || echo "$need" >/proc/sys/kernel/threads-max
[ "$(</proc/sys/kernel/pid_max)" -ge "$need" ] || die "kernel.pid_max is below $need"
echo 1 >/proc/sys/kernel/bpf_stats_enabled

meminfo() {	# meminfo FIELD: its kB in $kb
	local k v
	kb=0
	while read -r k v _; do
		[ "$k" = "$1:" ] && kb=$v && return
	done </proc/meminfo
}
meminfo MemAvailable
need_kb=$((ncg * ntasks * 110 + 192 * 1024))
[ "$kb" -ge "$need_kb" ] ||
	die "$ncg x $ntasks tasks need ~$((need_kb / 1024)) MiB, MemAvailable is $((kb / 1024)) MiB: give the guest more (test/vm/run --mem 2048)"

# The hierarchy; the tree maker stays as the sleepers' parent, outside it
mkdir "$P"
start=$SECONDS
# Its line comes through a FIFO: the prod guest has no /dev/fd, so no
# process substitution, and $(...) would wait for the tree maker to exit
mkfifo "$tmp/tree" "$tmp/hog"
"$tree" populate "$P" "$ncg" "$ntasks" >"$tmp/tree" &
tree_pid=$!
read -r -t 300 word pid <"$tmp/tree" && [ "$word" = ready ] && [ "$pid" = "$tree_pid" ] ||
	die "oom_path_tree could not make $ncg cgroups x $ntasks tasks"
meminfo MemAvailable
log "$ncg cgroups x $ntasks tasks made in $((SECONDS - start)) s; MemAvailable $((kb / 1024)) MiB"

# count_tasks: the processes in the leaves, in $tasks, and the leaves in
# $cgroups (builtins only: an exec is ~0.1 s under TCG)
count_tasks() {
	local f pids
	tasks=0 cgroups=0
	for f in "$P"/cg*/cgroup.procs; do
		mapfile -t pids <"$f"
		tasks=$((tasks + ${#pids[@]})) cgroups=$((cgroups + 1))
	done
}

# us NS: NS nanoseconds in microseconds, three decimals
us() { printf '%d.%03d' $(($1 / 1000)) $(($1 % 1000)); }

# one_run SELECTION RUN: the hog, the declared OOM and its figures
one_run() {
	local sel=$1 run=$2 hog kills chosen total pol scan report victim nvict handled
	local expect=$sel
	[ "$sel" = kernel ] && expect="the kernel's OOM killer"

	# disown: its death by SIGKILL is expected, not a job to report
	"$tree" hog "$last" "$hog_mib" >"$tmp/hog" &
	disown $!
	read -r -t 60 hog <"$tmp/hog" && [ "$hog" = $! ] ||
		die "$sel run $run: the hog did not start"
	count_tasks
	[ "$tasks" -eq $((ncg * ntasks)) ] && [ "$cgroups" -eq "$ncg" ] ||
		die "$sel run $run: $cgroups cgroups with $tasks tasks, not $ncg with $((ncg * ntasks))"

	"$probe" "$tmp/calls" "$P" -- "$oomctl" -j oom declare "/$name" >"$tmp/declare.json" ||
		die "$sel run $run: oomctl oom declare /$name failed"
	# One out_of_memory() call on /oompath, which killed the hog alone
	mapfile -t lines <"$tmp/calls"
	[ "${lines[0]:-}" != "${lines[0]#\#}" ] && lines=("${lines[@]:1}")
	[ "${#lines[@]}" -eq 1 ] ||
		die "$sel run $run: ${#lines[@]} out_of_memory() calls on /$name, not 1"
	read -r total pol scan report victim nvict handled <<<"${lines[0]}"
	[ "$victim" = "$hog" ] && [ "$nvict" = 1 ] && [ "$handled" = 1 ] ||
		die "$sel run $run: victim $victim ($nvict marked, handled $handled), not the hog $hog"
	kills=$(jq -r '.kills | length' "$tmp/declare.json")
	chosen=$(jq -r '.kills[0].chosen_by // "nobody"' "$tmp/declare.json")
	[ "$kills" = 1 ] && [ "$chosen" = "$expect" ] ||
		die "$sel run $run: $kills kill(s), chosen by $chosen, not 1 by $expect"
	# The hog gone, nothing else: the next run must find the same tree
	for _ in $(seq 300); do
		count_tasks
		[ "$tasks" -eq $((ncg * ntasks - 1)) ] && break
		sleep 0.1
	done
	[ "$tasks" -eq $((ncg * ntasks - 1)) ] ||
		die "$sel run $run: $tasks tasks left after the kill, not $((ncg * ntasks - 1))"

	if [ "$run" = warm-up ]; then
		log "warm-up: $(us "$total") us in out_of_memory(), not recorded"
		return
	fi
	echo "$sel,$cgroups,$((ncg * ntasks)),$run,$(us "$total")" >>"$csv"
	echo "$sel,$run,$(us "$total"),$(us "$pol"),$(us "$scan"),$(us "$report")" >>"$parts"
	log "$sel run $run: $(us "$total") us in out_of_memory() (policy $(us "$pol"), kernel scan $(us "$scan"), report $(us "$report")), victim $victim (the hog)"
}

echo "selection,cgroups,tasks,run,oom_us" >"$csv"
echo "selection,run,oom_us,policy_us,scan_us,report_us" >"$parts"
one_run kernel warm-up
for run in $(seq "$runs"); do
	for sel in "${selections[@]}"; do
		if [ "$sel" != kernel ]; then
			"$oomctl" policy attach "$sel" >&2 ||
				die "oomctl policy attach $sel failed"
			policy=$sel
		fi
		one_run "$sel" "$run"
		if [ -n "$policy" ]; then
			"$oomctl" policy detach "$policy" >/dev/null ||
				die "oomctl policy detach $policy failed"
			policy=''
		fi
	done
done

# Every cell measured
for sel in "${selections[@]}"; do
	n=$(grep -c "^$sel,$ncg,$((ncg * ntasks)),[0-9]*,[0-9.]*\$" "$csv" || true)
	[ "$n" -eq "$runs" ] || die "$sel: $n of $runs runs in $csv"
done

# The runs' kernel reports did not reach the console: look for them here
echo "$printk_level" >/proc/sys/kernel/printk
dmesg >"$tmp/kmsg" || die "cannot read the kernel log"
"$repo/test/vm/splat-scan" "$tmp/kmsg" >&2 ||
	die "the kernel reported a problem during the runs (above)"
log "wrote $csv and $parts in $SECONDS s"
