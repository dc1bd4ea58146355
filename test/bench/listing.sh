#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Listing figures (issue 7, item 3). Runs IN the systemd guest
# (test/vm/run --systemd), as root:
#
#   test/bench/listing.sh OUTDIR BUILD_DIR [--quick]
#
# At 100, 1000 and 10000 memory cgroups (--quick: 100 and 1000), RUNS times
# each (3; --quick: 1), the tools in turn within each run:
#   oomctl-first         BUILD_DIR/cli/oomctl memcg list SUBTREE with no
#                        walker pinned (we remove /sys/fs/bpf/oomctl/walker
#                        before each such run): load, verify, pin, walk; the
#                        first call after boot is one of these
#   oomctl               the same call with the walker pinned: the walk
#   oomctl-json          oomctl -j memcg list SUBTREE, pinned
#   cgfs-read            BUILD_DIR/test/bench/cgfs_read SUBTREE: the same
#                        fields read from cgroupfs files
#   systemd-oomctl-dump  systemd's /usr/bin/oomctl dump (systemd-oomd 252;
#                        ours clashes by name, so it is always called by path)
# Each call is timed by BUILD_DIR/test/bench/timeit: wall time from fork to
# reap and the child's peak RSS. Writes OUTDIR/listing.csv
#   tool,cgroups,run,wall_ms,peak_rss_kib
# one row per call; prints medians and the cost per cgroup on stdout (the
# marginal cost between two sizes shows whether it is linear), progress on
# stderr. Not a test: nothing fails on slow numbers. It fails, with one
# line, if a tool fails, prints no figure, or lists other than the N memcgs
# (oomctl's and cgfs_read's paths and ids must agree).
#
# systemd-oomd's dump is not a listing: oomd watches the units configured
# with ManagedOOMSwap=kill or ManagedOOMMemoryPressure=kill, one cgroup
# each, and its dump prints its settings, the system's memory and, for each
# monitored cgroup, its pressure, usage, memory.min/low and pgscan, from the
# contexts it refreshes on its timer; the cgroups below a monitored unit are
# read only when oomd picks a victim. So the N memcgs live below one
# monitored unit (bench-listing.service, Delegate=yes,
# ManagedOOMMemoryPressure=kill), the dump must show that unit, and its cost
# does not grow with N: it is what a user of systemd's tool gets, not a
# like-for-like listing. systemd-oomd is masked in the test guest
# (test/vm/init-systemd): we unmask and start it, and on exit stop it and
# mask it again (the kill-latency runs start only the killer they measure).
#
# The subtree: SVC/lst, with N/100 parents p000.. of 99 children c00..c98
# each (the last has 98): N memcgs, lst included; two mkdir(1) calls make
# them (one process each: every exec is dear under TCG), timed on stderr. The
# binaries are copied to /tmp first: exec from the repo's 9p share (no
# cache) would time 9p, not the tool. The walker stays pinned on exit, as
# any `oomctl memcg list` leaves it.
#
# The first read of a new cgroup's files makes their kernfs dentries and
# inodes, a cost paid once per cgroup that the BPF walk never pays: run 1
# of cgfs-read alone would pay it, so one cgfs_read after making the tree,
# before the runs, pays it; its time is logged on stderr as the cold read.
# So is the cost of exec'ing /bin/true through timeit, the floor under
# every figure at 100 cgroups.
set -eEuo pipefail
me=${0##*/}
die() {
	echo "$me: error: $*" >&2
	exit 1
}
log() { echo "$me: $*" >&2; }
trap 'die "line $LINENO: \"$BASH_COMMAND\" failed"' ERR
usage="usage: $me OUTDIR BUILD_DIR [--quick]"

[ $# -eq 2 ] || [ $# -eq 3 ] || die "$usage"
outdir=$1
build=$2
sizes=(100 1000 10000)
runs=3	# the median of 3: the full benchmark must fit in 30 minutes
if [ $# -eq 3 ]; then
	[ "$3" = --quick ] || die "$usage"
	sizes=(100 1000)
	runs=1
fi
[ "$EUID" -eq 0 ] || die "must run as root (in the guest)"
read -r pid1 </proc/1/comm
[ "$pid1" = systemd ] || die "needs systemd as PID 1: test/vm/run --systemd"
for f in cli/oomctl test/bench/cgfs_read test/bench/timeit; do
	[ -x "$build/$f" ] || die "no $build/$f: build the oomctl, cgfs_read and timeit targets"
done
for f in /usr/bin/oomctl /usr/bin/jq; do
	[ -x "$f" ] || die "no $f in the guest"
done
grep -qw memory /sys/fs/cgroup/cgroup.controllers ||
	die "no memory controller on /sys/fs/cgroup"

now_us() { # into $REPLY: EPOCHREALTIME without its dot, no fork
	local t=$EPOCHREALTIME
	REPLY=${t/./}
}
since() { # START_US: seconds since, into $REPLY, as "12.3"
	local start=$1
	now_us
	local d=$(((REPLY - start) / 100000))
	REPLY=$((d / 10)).$((d % 10))
}
now_us
t_all=$REPLY

tmp=$(mktemp -d /tmp/listing.XXXXXX)
cp "$build/cli/oomctl" "$build/test/bench/cgfs_read" \
	"$build/test/bench/timeit" "$tmp/"
oomctl=$tmp/oomctl
cgfs=$tmp/cgfs_read
timeit=$tmp/timeit
pins=/sys/fs/bpf/oomctl/walker

unit=bench-listing.service
svc_path=/system.slice/$unit
svc=/sys/fs/cgroup$svc_path
cg=$svc_path/lst
masks=/run/systemd/system
unmasked=()
oomd_was_active=0
parents=()
kids=()

cleanup() {
	local rc=$?
	trap - ERR
	cd /
	if [ -d "$svc/lst" ]; then
		rmdir "${kids[@]/#/$svc/}" "${parents[@]/#/$svc/}" "$svc/lst" \
			2>/dev/null || true
	fi
	systemctl stop "$unit" 2>/dev/null || true
	if [ "$oomd_was_active" = 0 ]; then
		systemctl stop systemd-oomd.service systemd-oomd.socket \
			2>/dev/null || true
	fi
	if [ ${#unmasked[@]} -gt 0 ]; then
		for m in "${unmasked[@]}"; do
			: >"$masks/$m" || true
		done
		systemctl daemon-reload || true
	fi
	rm -rf "$tmp"
	exit "$rc"
}
trap cleanup EXIT

# --- systemd-oomd, watching the unit that holds the subtree ---
log "starting systemd-oomd and $unit"
systemctl is-active --quiet systemd-oomd.service && oomd_was_active=1
for m in systemd-oomd.service systemd-oomd.socket; do
	# masked as test/vm/init-systemd does: an empty unit file
	if [ -f "$masks/$m" ] && [ ! -s "$masks/$m" ]; then
		rm -f "$masks/$m"
		unmasked+=("$m")
	fi
done
[ ${#unmasked[@]} -eq 0 ] || systemctl daemon-reload
systemctl stop "$unit" 2>/dev/null || true
systemctl reset-failed "$unit" 2>/dev/null || true
systemd-run --quiet --unit="$unit" -p Delegate=yes \
	-p ManagedOOMMemoryPressure=kill sleep infinity
[ -d "$svc" ] || die "systemd-run made no $svc"
# no processes in an inner cgroup: sleep goes to a leaf of its own, then
# lst can have a memcg
mkdir "$svc/holder"
mapfile -t pids <"$svc/cgroup.procs"
for p in "${pids[@]}"; do
	echo "$p" >"$svc/holder/cgroup.procs"
done
echo +memory >"$svc/cgroup.subtree_control"
systemctl start systemd-oomd.socket systemd-oomd.service
# oomd learns the unit from PID 1 over varlink: wait until its dump has it
for ((i = 0; ; i++)); do
	if /usr/bin/oomctl --no-pager dump >"$tmp/dump" 2>&1 &&
		grep -q "Path: $svc_path\$" "$tmp/dump"; then
		break
	fi
	[ $i -lt 30 ] || die "systemd-oomd's dump does not show $svc_path after 30 s: $(tail -n1 "$tmp/dump")"
	sleep 1
done

# --- the subtree ---
make_tree() { # N: svc/lst with N memcgs (cwd: $svc)
	local n=$1 np=$(($1 / 100)) i name
	parents=()
	kids=()
	for ((i = 0; i < np; i++)); do
		printf -v name 'lst/p%03d' "$i"
		parents+=("$name")
		if [ $i -lt $((np - 1)) ]; then
			kids+=("$name"/c{00..98})
		else
			kids+=("$name"/c{00..97})
		fi
	done
	[ $((1 + ${#parents[@]} + ${#kids[@]})) -eq "$n" ] ||
		die "make_tree $n: $((1 + ${#parents[@]} + ${#kids[@]})) cgroups"
	mkdir lst
	echo +memory >lst/cgroup.subtree_control
	mkdir "${parents[@]}"
	for name in "${parents[@]}"; do
		echo +memory >"$name/cgroup.subtree_control"
	done
	mkdir "${kids[@]}"
}

remove_tree() {
	rmdir "${kids[@]}"
	rmdir "${parents[@]}"
	rmdir lst
	parents=()
	kids=()
}

# --- one timed call ---
csv=()
declare -A last	# tool -> wall_ms of its last call, for the progress line
measure() { # TOOL N RUN COMMAND...
	local tool=$1 n=$2 run=$3 line
	shift 3
	if ! line=$("$timeit" -o "$tmp/$tool.out" -e "$tmp/$tool.err" "$@"); then
		die "$tool at $n cgroups, run $run: ${line:-timeit failed}: $(tail -n1 "$tmp/$tool.err")"
	fi
	[[ $line =~ ^wall_ms=([0-9]+\.[0-9]+)\ maxrss_kib=([0-9]+)\ status=0$ ]] ||
		die "$tool at $n cgroups, run $run: no figure from timeit: '$line'"
	csv+=("$tool,$n,$run,${BASH_REMATCH[1]},${BASH_REMATCH[2]}")
	last[$tool]=${BASH_REMATCH[1]}
}

# What each tool printed must be the N memcgs
check_table() { # TOOL N: a header, then N rows
	local -a rows
	mapfile -t rows <"$tmp/$1.out"
	{ [[ ${rows[0]-} == PATH* ]] && [ $((${#rows[@]} - 1)) -eq "$2" ]; } ||
		die "$1 at $2 cgroups: $((${#rows[@]} - 1)) rows, want $2"
}
check_json() { # N: N objects with a path (the whole JSON: check_same)
	local got
	got=$({ grep -o '"path":' "$tmp/oomctl-json.out" || true; } | wc -l)
	[ "$got" -eq "$1" ] || die "oomctl-json at $1 cgroups: $got memcgs, want $1"
}
check_cgfs() { # N
	local -a rows
	mapfile -t rows <"$tmp/cgfs-read.out"
	[ ${#rows[@]} -eq "$1" ] ||
		die "cgfs-read at $1 cgroups: ${#rows[@]} rows, want $1"
}
check_dump() {
	grep -q "Path: $svc_path\$" "$tmp/systemd-oomctl-dump.out" ||
		die "systemd-oomctl-dump: $svc_path is not in the dump"
}
check_same() { # N: oomctl's JSON and cgfs_read: the same paths and ids
	jq -r '.memcgs[] | "\(.path) \(.id)"' "$tmp/oomctl-json.out" \
		>"$tmp/ids.oomctl" || die "oomctl-json at $1 cgroups: not JSON"
	awk '{ print $1, $13 }' "$tmp/cgfs-read.out" >"$tmp/ids.cgfs"
	cmp -s "$tmp/ids.oomctl" "$tmp/ids.cgfs" ||
		die "at $1 cgroups, oomctl and cgfs_read list other memcgs (paths and ids differ)"
}

# --- the runs ---
log "sizes ${sizes[*]}, $runs runs each; binaries in $tmp"
floor=()
for r in 1 2 3; do
	line=$("$timeit" /bin/true) || die "timeit /bin/true: $line"
	floor+=("${line%% *}")
done
log "exec floor, timeit /bin/true: ${floor[*]}"
cd "$svc"
for n in "${sizes[@]}"; do
	now_us
	t0=$REPLY
	make_tree "$n"
	since "$t0"
	log "$n cgroups: made in $REPLY s"
	line=$("$timeit" -o "$tmp/cold.out" "$cgfs" "$cg") ||
		die "cgfs-read at $n cgroups, cold: ${line:-timeit failed}"
	log "$n cgroups: cold cgfs-read (not in the CSV): ${line%% *}"
	for ((r = 1; r <= runs; r++)); do
		rm -rf "$pins"
		measure oomctl-first "$n" "$r" "$oomctl" memcg list "$cg"
		[ -e "$pins/memcg_walk" ] ||
			die "oomctl-first at $n cgroups: the walker was not pinned in $pins"
		check_table oomctl-first "$n"
		pin_ino=$(stat -c %i "$pins")
		measure oomctl "$n" "$r" "$oomctl" memcg list "$cg"
		check_table oomctl "$n"
		measure oomctl-json "$n" "$r" "$oomctl" -j memcg list "$cg"
		check_json "$n"
		[ "$(stat -c %i "$pins")" = "$pin_ino" ] ||
			die "at $n cgroups: the warm calls pinned the walker again"
		measure cgfs-read "$n" "$r" "$cgfs" "$cg"
		check_cgfs "$n"
		measure systemd-oomctl-dump "$n" "$r" /usr/bin/oomctl --no-pager dump
		check_dump
		[ "$r" -gt 1 ] || check_same "$n"
		log "$n cgroups, run $r/$runs (ms): first ${last[oomctl-first]}, plain ${last[oomctl]}, json ${last[oomctl-json]}, cgfs-read ${last[cgfs-read]}, systemd dump ${last[systemd-oomctl-dump]}"
	done
	if [ "$n" != "${sizes[-1]}" ]; then
		now_us
		t0=$REPLY
		remove_tree
		since "$t0"
		log "$n cgroups: removed in $REPLY s"
	fi
done

# --- every tool has a figure at every size ---
for tool in oomctl-first oomctl oomctl-json cgfs-read systemd-oomctl-dump; do
	for n in "${sizes[@]}"; do
		got=0
		for row in "${csv[@]}"; do
			[[ $row != "$tool,$n,"* ]] || got=$((got + 1))
		done
		[ "$got" -eq "$runs" ] ||
			die "$tool at $n cgroups: $got figures, want $runs"
	done
done

mkdir -p "$outdir"
printf '%s\n' tool,cgroups,run,wall_ms,peak_rss_kib "${csv[@]}" \
	>"$outdir/listing.csv.tmp"
mv "$outdir/listing.csv.tmp" "$outdir/listing.csv"

# Medians per tool and size; us/cgroup = median / N; marginal = the growth
# of the median from the previous size, per added cgroup (the slope)
printf '%s\n' "${csv[@]}" | awk -F, -v runs="$runs" '
function median(a, n,	i, j, t) {
	for (i = 2; i <= n; i++) {
		t = a[i]
		for (j = i - 1; j >= 1 && a[j] > t; j--)
			a[j + 1] = a[j]
		a[j + 1] = t
	}
	return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
{
	if (!($1 in seen_tool)) { seen_tool[$1]; tools[++nt] = $1 }
	if (!($2 in seen_n)) { seen_n[$2]; sizes[++ns] = $2 }
	k = $1 SUBSEP $2
	c = ++cnt[k]
	wall[k, c] = $4
	rss[k, c] = $5
}
END {
	printf "# listing: median of %d runs; us/cgroup = median wall / N; " \
		"marginal = growth of the median per added cgroup\n", runs
	printf "%-20s %7s %9s %9s %9s %8s %9s %9s\n", "tool", "cgroups",
		"wall_ms", "min_ms", "max_ms", "rss_kib", "us/cgroup",
		"marginal"
	for (i = 1; i <= nt; i++) {
		prev = ""
		for (s = 1; s <= ns; s++) {
			k = tools[i] SUBSEP sizes[s]
			n = cnt[k]
			if (!n)
				continue
			split("", a); split("", b)
			for (j = 1; j <= n; j++) {
				a[j] = wall[k, j] + 0
				b[j] = rss[k, j] + 0
			}
			m = median(a, n)
			marg = "-"
			if (prev != "")
				marg = sprintf("%.1f",
					(m - prevm) * 1000 / (sizes[s] - prev))
			printf "%-20s %7d %9.1f %9.1f %9.1f %8.0f %9.1f %9s\n",
				tools[i], sizes[s], m, a[1], a[n], median(b, n),
				m * 1000 / sizes[s], marg
			prev = sizes[s]
			prevm = m
		}
	}
}'
since "$t_all"
log "done in $REPLY s; $outdir/listing.csv"
