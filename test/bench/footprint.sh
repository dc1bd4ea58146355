#!/bin/bash
# Footprint (issue 7, item 5), run IN the systemd guest (test/vm/run
# --systemd): what each OOM killer keeps once set up. For each killer:
# the processes it leaves resident, their total RSS, and the BPF memory it
# holds. A figure, never an assertion.
#
#   test/bench/footprint.sh OUTDIR BUILD_DIR [--quick]
#
# Writes OUTDIR/footprint.csv, "killer,processes,rss_kib,bpf_kib", one row
# per killer; progress and what was counted go to stderr; a missing cell is
# one error line and exit 1. --quick is accepted for test/bench/run and
# changes nothing: the full run is short already.
#
# Killers, each set up the way an admin would, then given 3 s to settle,
# and more, up to 20 s, until their RSS holds still (within 2% over 1 s:
# a daemon in Python takes seconds to start under TCG):
# - oomctl: oomctl apply of largest-leaf and a PSI trigger on / (its psi-declare handler)
#   (some 50ms 500ms); apply also starts the event log's recorder. Its
#   programs and maps stay pinned under /sys/fs/bpf/oomctl, no process runs.
# - systemd-oomd, earlyoom, nohang: their Debian units (masked at boot by
#   test/vm/init-systemd: we unmask and start the one measured), Debian's
#   default configuration. If a unit does not start, the daemon is started
#   by hand with the unit's command line, and stderr says so.
#
# What is counted, measured for every killer alike:
# - processes: the user-space processes that did not exist before the setup
#   and still exist 3 s after it (pid and start time, so a reused pid is
#   new). They are listed on stderr. New kernel threads are listed there too
#   but not counted: they hold no RSS (a PSI trigger's psimon, say).
# - rss_kib: the sum of their VmRSS.
# - bpf_kib: the BPF programs, maps and BTF that the setup left in the
#   kernel: for oomctl those reachable from its pins (the pinned links'
#   programs, the programs' maps, pinned maps, their BTF), for a daemon those
#   its processes hold file descriptors to. A program counts its memlock
#   (the instructions) plus its JIT image, a map its memlock (the kernel's
#   estimate of its memory), a BTF object its size.
set -euo pipefail

die() { echo "footprint: $*" >&2; exit 1; }
log() { echo "footprint: $*" >&2; }
usage() { echo "usage: footprint.sh OUTDIR BUILD_DIR [--quick]" >&2; exit 2; }

[ $# -eq 2 ] || { [ $# -eq 3 ] && [ "$3" = --quick ]; } || usage
outdir=$1 build=$2
oomctl=$build/cli/oomctl
[ -x "$oomctl" ] || die "no $oomctl: build it first"
[ "$(</proc/1/comm)" = systemd ] ||
	die "needs systemd as PID 1: run it in test/vm/run --systemd"
mkdir -p "$outdir" || die "cannot create $outdir"
csv=$outdir/footprint.csv
tmp=$(mktemp -d)
bpffs=/sys/fs/bpf/oomctl
masks=/run/systemd/system
killers=(oomctl systemd-oomd earlyoom nohang)
settle=3

# Each daemon: its units (the first is started), its command line by hand
declare -A units=(
	[systemd-oomd]="systemd-oomd.service systemd-oomd.socket"
	[earlyoom]="earlyoom.service"
	[nohang]="nohang.service")
declare -A by_hand=(
	[systemd-oomd]="/lib/systemd/systemd-oomd"
	[earlyoom]="/usr/bin/earlyoom -r 3600"
	[nohang]="/usr/sbin/nohang --monitor --config /etc/nohang/nohang.conf")

current='' hand_pid='' unmasked=()
teardown() {	# the killer set up last, gone
	case $current in
	'') ;;
	oomctl) "$oomctl" apply "$tmp/empty.conf" >&2 ;;
	*)	if [ -n "$hand_pid" ]; then
			kill "$hand_pid" 2>/dev/null; wait "$hand_pid" 2>/dev/null
		else
			# shellcheck disable=SC2086
			systemctl stop ${units[$current]}
		fi ;;
	esac
	current='' hand_pid=''
}
# Leave the guest as we found it: no killer running, the daemons masked
finish() {
	set +e
	teardown
	if [ ${#unmasked[@]} -gt 0 ]; then
		for u in "${unmasked[@]}"; do : >"$masks/$u"; done
		systemctl daemon-reload
	fi
	rm -rf "$tmp"
}
trap finish EXIT

[ ! -d "$bpffs" ] || [ -z "$("$oomctl" -n -o name policy list)" ] ||
	die "oomctl policies are attached already: not a clean guest"
for k in "${!units[@]}"; do
	u=${units[$k]%% *}
	! systemctl -q is-active "$u" || die "$u is running already"
done

# snapshot NAME: the processes now, as NAME[pid]=starttime (builtins only,
# so that the snapshot makes no process itself)
snapshot() {
	local -n snap=$1
	local d stat
	local -a f
	snap=()
	# shellcheck disable=SC2034 # snap is a nameref: the caller's array
	for d in /proc/[0-9]*; do
		{ read -r stat <"$d/stat"; } 2>/dev/null || continue
		read -ra f <<<"${stat##*) }"
		snap[${d#/proc/}]=${f[19]}	# field 22, starttime
	done
}

# count_new: the processes in `after` that are not in `before`, into
# $procs (user space), $rss (kB, their VmRSS sum) and $pids; listed on
# stderr with -v
count_new() {
	local say=:
	[ "${1:-}" = -v ] && say=log
	local pid stat comm k v u cg flags
	local -a f
	procs=0 rss=0 pids=()
	for pid in "${!after[@]}"; do
		[ "${before[$pid]:-}" = "${after[$pid]}" ] && continue
		{ read -r stat <"/proc/$pid/stat"; } 2>/dev/null || continue
		comm=${stat#*(}; comm=${comm%)*}
		read -ra f <<<"${stat##*) }"
		flags=${f[6]}	# field 9
		{ read -r cg <"/proc/$pid/cgroup"; } 2>/dev/null || cg="?"
		if (( flags & 0x00200000 )); then	# PF_KTHREAD
			$say "  new kernel thread $pid ($comm), not counted"
			continue
		fi
		v=0
		while read -r k u _; do
			[ "$k" = VmRSS: ] && v=$u
		done <"/proc/$pid/status"
		procs=$((procs + 1)) rss=$((rss + v)) pids+=("$pid")
		$say "  new process $pid ($comm) in ${cg#0::}: VmRSS $v kB"
	done
}

# pinned_bpf: bytes of the BPF objects reachable from oomctl's pins
pinned_bpf() {
	bpftool -j -f link show >"$tmp/links.json"
	bpftool -j -f prog show >"$tmp/progs.json"
	bpftool -j -f map show >"$tmp/maps.json"
	bpftool -j btf show >"$tmp/btf.json"
	jq -rn --arg dir "$bpffs/" \
		--slurpfile links "$tmp/links.json" --slurpfile progs "$tmp/progs.json" \
		--slurpfile maps "$tmp/maps.json" --slurpfile btf "$tmp/btf.json" '
		def ours: any(.pinned[]?; startswith($dir));
		([$links[0][] | select(ours) | .prog_id]) as $lp
		| [$progs[0][] | select(ours or (.id as $i | $lp | index($i)))] as $p
		| ([$p[].map_ids[]?] | unique) as $pm
		| [$maps[0][] | select(ours or (.id as $i | $pm | index($i)))] as $m
		| ([$p[].btf_id?, $m[].btf_id?] | map(select(. != null and . > 0)) | unique) as $bt
		| [$btf[0][] | select(.id as $i | $bt | index($i))] as $b
		| ([$p[] | "  prog \(.id) \(.name // "?"): \((.bytes_memlock // 0) + (.bytes_jited // 0)) bytes"]
		   + [$m[] | "  map \(.id) \(.name // "?") (\(.type)): \(.bytes_memlock // 0) bytes"]
		   + [$b[] | "  btf \(.id): \(.size // 0) bytes"] | join("\n")) as $list
		| { progs: ($p | length), maps: ($m | length), btf: ($b | length),
		    prog_bytes: ([$p[] | (.bytes_memlock // 0) + (.bytes_jited // 0)] | add // 0),
		    map_bytes: ([$m[].bytes_memlock // 0] | add // 0),
		    btf_bytes: ([$b[].size // 0] | add // 0) }
		| "\(.progs) \(.prog_bytes) \(.maps) \(.map_bytes) \(.btf) \(.btf_bytes)\n\($list)"'
}

# held_bpf PID...: bytes of the BPF programs and maps the processes hold fds
# of (their fdinfo's memlock; the same object counted once)
held_bpf() {
	local pid fd link k val v id bytes=0 n=0
	declare -A seen=()
	for pid in "$@"; do
		for fd in /proc/"$pid"/fd/*; do
			link=$(readlink "$fd" 2>/dev/null) || continue
			case $link in anon_inode:bpf-prog|anon_inode:bpf-map) ;; *) continue ;; esac
			id='' v=0
			while read -r k val _; do
				case $k in
				prog_id:|map_id:) id=${link#anon_inode:}$val ;;
				memlock:) v=$val ;;
				esac
			done <"/proc/$pid/fdinfo/${fd##*/}"
			[ -n "$id" ] && [ -z "${seen[$id]:-}" ] || continue
			seen[$id]=1 bytes=$((bytes + v)) n=$((n + 1))
		done
	done
	echo "$n $bytes"
}

kib() { echo $((($1 + 1023) / 1024)); }

setup() {	# setup KILLER
	local k=$1 u
	current=$k
	case $k in
	oomctl)
		printf '%s\n' "policy attach largest-leaf" "psi add / some 50ms 500ms" >"$tmp/oomctl.conf"
		: >"$tmp/empty.conf"
		"$oomctl" apply "$tmp/oomctl.conf" >&2 || die "oomctl apply failed"
		;;
	*)
		for u in ${units[$k]}; do
			[ -e "$masks/$u" ] && [ ! -s "$masks/$u" ] && unmasked+=("$u")
			rm -f "$masks/$u"
		done
		systemctl daemon-reload
		# shellcheck disable=SC2086
		if ! systemctl start ${units[$k]%% *}; then
			systemctl status --no-pager ${units[$k]%% *} >&2 || true
			log "$k: its unit did not start; starting ${by_hand[$k]} by hand"
			# shellcheck disable=SC2086
			${by_hand[$k]} </dev/null >/dev/null 2>&1 &
			hand_pid=$!
		fi
		;;
	esac
}

echo "killer,processes,rss_kib,bpf_kib" >"$csv"
declare -A before after
for k in "${killers[@]}"; do
	log "$k: setting up"
	snapshot before
	setup "$k"
	sleep "$settle"
	prev=-1
	for _ in $(seq 17); do
		snapshot after
		count_new
		[ $(((rss - prev) * 50)) -le "$prev" ] && [ $(((prev - rss) * 50)) -le "$prev" ] && break
		prev=$rss
		sleep 1
	done
	count_new -v
	if [ "$k" = oomctl ]; then
		counts=$(pinned_bpf) || die "$k: bpftool failed"
		read -r np pb nm mb nb bb <<<"$counts"
		log "  pinned: $np programs ($pb bytes with JIT images), $nm maps ($mb bytes), $nb BTF ($bb bytes):"
		echo "${counts#*$'\n'}" >&2
		bpf=$(kib $((pb + mb + bb)))
		[ "$np" -gt 0 ] || die "$k: no program reachable from $bpffs"
	else
		[ "$procs" -gt 0 ] || die "$k: no process of it is running"
		counts=$(held_bpf "${pids[@]}")
		read -r nb bb <<<"$counts"
		log "  BPF objects held by its processes: $nb ($bb bytes)"
		bpf=$(kib "$bb")
	fi
	echo "$k,$procs,$rss,$bpf" >>"$csv"
	log "$k: $procs processes, $rss kB RSS, $bpf KiB BPF"
	teardown
done

n=$(grep -cE '^[a-z-]+,[0-9]+,[0-9]+,[0-9]+$' "$csv" || true)
[ "$n" -eq "${#killers[@]}" ] || die "$n of ${#killers[@]} killers measured in $csv"
log "wrote $csv in $SECONDS s"
