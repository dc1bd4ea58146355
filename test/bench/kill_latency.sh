#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Kill latency (issue 7, items 1 and 2). Runs IN the systemd guest
# (test/vm/run --systemd), as root:
#
#   test/bench/kill_latency.sh OUTDIR BUILD_DIR [--quick] [--killers LIST]
#
# For each killer in LIST (default: ours ours-fd systemd-oomd earlyoom
# nohang kernel; rfc needs the RFC kernel, test/bench/run boots it) and each
# workload (W1..W4; --quick: W1), BUILD_DIR/test/bench/kill_latency runs the
# workload RUNS times (10; --quick: 1) and appends a CSV row per run to
# OUTDIR/kill_latency.csv (its --header says the columns). A run that nothing
# killed within LIMIT seconds of the release (4; --quick: 3; $KL_LIMIT) is a
# row with killed=0 (a run without a kill costs the whole limit, and the
# full benchmark must fit in 30 minutes). Exits 1, with one line, when a
# killer cannot be set up or a cell has fewer rows than runs; never on a
# slow figure. $KL_RUNS and $KL_WORKLOADS override the runs and workloads,
# for trying things out.
#
# The killers, each alone (the daemons' units are masked at boot by
# test/vm/init-systemd; we unmask the one we measure and mask it again):
#   ours          per cell, oomctl psi add CGROUP some 50ms 500ms on the
#                 workload's cgroups (W2: its whole scope): a psi-declare
#                 handler each, owning its trigger. Not the root for W2:
#                 a system-wide OOM's victim can be any process of the
#                 guest (once, before handlers paused after a kill, an
#                 event after a kill made it this guest's init: README).
#   ours-fd       the trigger written to CGROUP's memory.pressure by a
#                 process that holds it open, as the RFC's handlers used
#                 them, with a psi-declare handler attached (on an empty
#                 cgroup, whose own trigger never fires). Our kernel sends a
#                 file's trigger only to its poller (kernel/patches/0009):
#                 this cell shows it.
#   rfc           test/bench/rfc's loader: the RFC's handler on a trigger it
#                 holds open, on the RFC kernel (BENCH_RFC_BIN: its build)
#   systemd-oomd  Debian's 252 at its most aggressive documented settings:
#                 DefaultMemoryPressureDurationSec=1s (oomd.conf(5): "0, or
#                 at least 1 second") and ManagedOOMMemoryPressureLimit=1% on
#                 the workload's scope (0% means "the default", 60%). It is
#                 restarted before each run, in a new scope: after a kill it
#                 holds off for 15 s, and the scope's 10 s pressure average
#                 would carry one run into the next.
#   earlyoom      Debian's unit and defaults (/etc/default/earlyoom)
#   nohang        Debian's unit and /etc/nohang/nohang.conf
#   kernel        nothing: the kernel's OOM killer alone
#
# Each cell runs in a transient scope (systemd-run --scope, Delegate=yes),
# the driver in a leaf of it with oom_score_adj -1000 and user.oomd_omit, the
# workload in sibling leaves (kill_latency.c).
set -eEuo pipefail
me=${0##*/}
die() { echo "$me: $*" >&2; exit 1; }
trap 'die "line $LINENO: $BASH_COMMAND failed"' ERR

here=$(cd "$(dirname "$0")" && pwd -P)
trigger_ms="50ms 500ms"		# STALL WINDOW of every trigger here
trigger_file="some 50000 500000"	# the same, as memory.pressure takes it

# --inner KILLER WORKLOAD RUNS LIMIT FIRST: in the scope systemd-run made
if [ "${1:-}" = --inner ]; then
	shift
	scope=$(sed -n 's/^0:://p' /proc/self/cgroup)
	mkdir "/sys/fs/cgroup$scope/driver"
	echo $$ >"/sys/fs/cgroup$scope/driver/cgroup.procs"
	setfattr -n user.oomd_omit -v 1 "/sys/fs/cgroup$scope/driver"
	exec "$KL_BIN/kill_latency" "$1" "$2" "${scope#/}" "$3" "$4" "$5"
fi

[ $# -ge 2 ] || die "usage: $me OUTDIR BUILD_DIR [--quick] [--killers LIST]"
out=$1 build=$2
shift 2
quick=false
killers="ours ours-fd systemd-oomd earlyoom nohang kernel"
while [ $# -gt 0 ]; do
	case $1 in
	--quick) quick=true; shift ;;
	--killers) [ $# -ge 2 ] || die "--killers needs a list"
		killers=${2//,/ }; shift 2 ;;
	*) die "unknown argument $1" ;;
	esac
done
runs=${KL_RUNS:-10} limit=${KL_LIMIT:-4} workloads=${KL_WORKLOADS:-W1 W2 W3 W4}
if $quick; then runs=${KL_RUNS:-1} limit=${KL_LIMIT:-3} workloads=${KL_WORKLOADS:-W1}; fi

# Copies in the guest's tmpfs: exec from the 9p share would time 9p
export KL_BIN=/run/kill-latency
mkdir -p "$KL_BIN" "$out"
cp "$build/test/bench/kill_latency" "$build/cli/oomctl" "$KL_BIN/"
oomctl=$KL_BIN/oomctl		# by path: systemd-oomd ships an oomctl too
csv=$out/kill_latency.csv
[ -s "$csv" ] || "$KL_BIN/kill_latency" --header >"$csv"
echo -1000 >/proc/self/oom_score_adj

unit_mask() {	# unit_mask {on|off} UNIT...: the masks of test/vm/init-systemd
	local how=$1 u
	shift
	for u; do
		if [ "$how" = on ]; then : >"/run/systemd/system/$u"
		else rm -f "/run/systemd/system/$u"
		fi
	done
	systemctl daemon-reload
}

daemon_start() {	# daemon_start UNIT [SOCKET]
	unit_mask off "$@"
	systemctl start "$1" || die "$1 did not start"
	sleep 1		# its first look at memory
}

daemon_stop() {		# daemon_stop UNIT [SOCKET]
	systemctl is-active -q "$1" || die "$1 died during its cells"
	systemctl stop "$@"
	unit_mask on "$@"
}

# The shell commands kill_latency runs around a cell (kill_latency.c)
holders=$KL_BIN/holders
case_arm() {	# what KL_ARM and KL_DISARM are for KILLER
	case $1 in
	ours)
		KL_ARM="for c; do $oomctl psi add \"\$c\" some $trigger_ms >/dev/null || exit; done"
		KL_DISARM="for c; do $oomctl psi del \"\$c\" >/dev/null || exit; done" ;;
	ours-fd)
		KL_ARM="for c; do
			exec 3<>\"\$c/memory.pressure\" && echo '$trigger_file' >&3 || exit
			sleep infinity >/dev/null 2>&1 &
			echo \$! >>$holders; exec 3>&-; done"
		KL_DISARM="xargs kill <$holders; rm $holders" ;;
	rfc)
		KL_ARM="for c; do f=$KL_BIN/rfc.\$\$.\$(basename \"\$c\")
			$BENCH_RFC_BIN/rfc_psi_handler \"\$c\" '$trigger_file' >\$f 2>&1 &
			echo \$! >>$holders
			for i in \$(seq 300); do grep -q ready \$f && continue 2
				kill -0 \$! 2>/dev/null || break; sleep 0.1; done
			cat \$f >&2; exit 1; done"
		KL_DISARM="xargs kill <$holders; rm $holders" ;;
	*) KL_ARM="" KL_DISARM="" ;;
	esac
	export KL_ARM KL_DISARM
}

scope() {	# scope NAME KILLER WORKLOAD RUNS FIRST: one kill_latency process
	systemd-run --quiet --scope --unit="$1" --slice=bench.slice \
		-p Delegate=yes -p MemoryAccounting=yes \
		-p ManagedOOMMemoryPressure=kill -p ManagedOOMMemoryPressureLimit=1% \
		-- "$here/$me" --inner "$2" "$3" "$4" "$limit" "$5" >>"$csv"
}

cell() {	# cell KILLER WORKLOAD
	local k=$1 w=$2 r
	echo "$me: $k $w: $runs runs, limit $limit s" >&2
	case_arm "$k"
	if [ "$k" = systemd-oomd ]; then
		for r in $(seq "$runs"); do
			systemctl restart systemd-oomd
			scope "bench-$k-$w-$r" "$k" "$w" 1 "$r"
		done
	else
		scope "bench-$k-$w" "$k" "$w" "$runs" 1
	fi
	[ "$(grep -c "^$k,$w," "$csv")" -ge "$runs" ] ||
		die "$k $w: fewer than $runs rows in $csv"
}

mkdir -p /run/systemd/oomd.conf.d
printf '[OOM]\nDefaultMemoryPressureDurationSec=1s\n' \
	>/run/systemd/oomd.conf.d/bench.conf

for k in $killers; do
	case $k in
	ours) ;;
	ours-fd) mkdir -p /sys/fs/cgroup/bench-idle
		"$oomctl" psi add /bench-idle some 100ms 1s >/dev/null ||
			die "ours-fd: cannot attach a psi-declare handler" ;;
	rfc) [ -x "${BENCH_RFC_BIN:-}/rfc_psi_handler" ] ||
		die "rfc: no \$BENCH_RFC_BIN/rfc_psi_handler (test/bench/rfc/build.sh)" ;;
	systemd-oomd) daemon_start systemd-oomd.service systemd-oomd.socket ;;
	earlyoom | nohang) daemon_start "$k.service" ;;
	kernel) ;;
	*) die "unknown killer $k" ;;
	esac
	for w in $workloads; do cell "$k" "$w"; done
	case $k in
	ours-fd) "$oomctl" psi del /bench-idle >/dev/null
		rmdir /sys/fs/cgroup/bench-idle ;;
	systemd-oomd | earlyoom | nohang)
		# What the daemon said it did, for the record. By its identifier
		# too: the lines of a daemon restarted per run can reach journald
		# after the process is gone, without a unit to match -u.
		journalctl -q -o short-monotonic "_SYSTEMD_UNIT=$k.service" + \
			"SYSLOG_IDENTIFIER=$k" >"$out/$k.log"
		case $k in
		systemd-oomd) daemon_stop systemd-oomd.service systemd-oomd.socket ;;
		*) daemon_stop "$k.service" ;;
		esac ;;
	esac
done
