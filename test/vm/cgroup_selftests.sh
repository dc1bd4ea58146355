#!/bin/bash
# The kernel's own cgroup selftests (tools/testing/selftests/cgroup of the
# same tree: test_core, test_memcontrol, test_kill, test_freezer) as a
# regression test of the series. They run twice, with no policy and with the
# built-in largest-leaf attached, and every case's result must equal the
# pristine kernel's (cgroup-selftests/expected.txt, recorded by
# cgroup-selftests/record-expected.sh in this same environment).
#
# Usage (in the guest; test/vm/run):
#   cgroup_selftests.sh BUILD_DIR [--expected FILE] [--pass no-policy|largest-leaf]
#                                     both passes (or the one named), compare
#   cgroup_selftests.sh BUILD_DIR --record FILE        no policy only; write
#                                                      the results to FILE
# Prints TAP (one check per case and pass: "result equals the pristine
# kernel's"), then "N passed, N failed"; the exit status says whether all
# checks passed. Results are normalised to "TEST: CASE: ok|fail|skip"; the
# pseudo case "exit" says whether the program ran to its end (ok: status 0
# or 1), skipped itself as a whole (skip: status 4) or timed out or died
# (fail).
#
# The environment the selftests need, and which the bare guest lacks (see
# cgroup-selftests/README.md for the reasons and what still fails):
# - a scratch working directory (ext4/ext2 on a RAM disk if the kernel can,
#   else tmpfs): test_memcontrol makes its page cache with
#   open(".", O_TMPFILE), which 9p (the repo, the image) refuses;
# - line-buffered stdout: the tests fork without flushing, so a buffered
#   stdout (a file, a pipe) prints a case's result once per child;
# - a loopback interface that is up, and "localhost" in /etc/hosts
#   (test_memcg_sock connects to localhost);
# - no cgroups left over by an earlier test (those that time out leave
#   theirs populated): removed after every program;
# - every program in its own runner cgroup, so that whatever it forked
#   directly can be killed when it ends or times out.
set -u
here=$(cd "$(dirname "$0")" && pwd)
build=${1:?usage: cgroup_selftests.sh BUILD_DIR [--expected FILE | --record FILE]}
shift
expected=$here/cgroup-selftests/expected.txt record="" pass=both
while [ $# -gt 0 ]; do
	case $1 in
	--expected) expected=${2:?}; shift 2 ;;
	--record) record=${2:?}; shift 2 ;;
	--pass)
		case ${2:-} in
		no-policy|largest-leaf) pass=$2; shift 2 ;;
		*) echo "--pass takes no-policy or largest-leaf" >&2; exit 2 ;;
		esac ;;
	*) echo "unknown argument $1" >&2; exit 2 ;;
	esac
done
# absolute: the programs run in a directory on tmpfs
build=$(cd "$build" && pwd) || exit 2
[ -z "$record" ] || record=$(realpath -m "$record")
expected=$(realpath -m "$expected")
. "$here/lib.sh"
bin=$build/test/vm/cgroup-selftests
OOMCTL=$build/cli/oomctl
oomctl() { "$OOMCTL" "$@"; }
# Seconds each program may take. Measured under TCG on 2 cores, production
# and debug kernels without inotify: core 1-2, memcontrol 20-26, freezer
# 1-4 (every case fails at once), kill never ends (README.md). The debug
# kernel with KASAN: core 12, memcontrol 82, kill 38, freezer 43.
declare -A limit=([test_core]=60 [test_kill]=120 [test_freezer]=120 [test_memcontrol]=240)
programs=(test_core test_memcontrol test_kill test_freezer)
runner=$CG/cgroup-selftests.runner

# This changes the guest's /etc and kills cgroups: never on a host.
[ -f /run/vm/env ] || bail "run me in the test VM: test/vm/run -- $0 BUILD_DIR"
for p in "${programs[@]}"; do
	[ -x "$bin/$p" ] || bail "no $bin/$p; build it: cmake --build $build --target cgroup_selftests_bin"
done

# --- the environment -------------------------------------------------------
# A directory for the tests' files (they make them in "."). Page cache they
# can reclaim needs a disk file system: ext4 or ext2 on a RAM disk if the
# kernel has them (CONFIG_BLK_DEV_RAM, CONFIG_EXT4_FS or CONFIG_EXT2_FS),
# else tmpfs, where reading a file's holes makes no page cache at all.
scratch() {
	local fs dir=/mnt/cgroup-selftests
	for fs in ext4 ext2; do
		grep -qw "$fs" /proc/filesystems && [ -b /dev/ram0 ] || continue
		mkdir -p "$dir" && "mkfs.$fs" -q -F /dev/ram0 >/dev/null 2>&1 &&
			mount -t "$fs" /dev/ram0 "$dir" || continue
		scratch_fs="$fs on /dev/ram0"
		work=$(mktemp -d "$dir/run.XXXXXX") && return 0
	done
	scratch_fs=tmpfs
	work=$(mktemp -d /tmp/cgroup-selftests.XXXXXX)
}

setup() {
	scratch && cd "$work" || bail "no directory for the tests' files"
	if ! getent hosts localhost >/dev/null; then
		# The image has no /etc/hosts and /etc is read-only: a copy on tmpfs
		mkdir -p /run/etc && cp -a /etc/. /run/etc/ &&
			printf '127.0.0.1\tlocalhost\n::1\t\tlocalhost ip6-localhost ip6-loopback\n' \
				>/run/etc/hosts && mount --bind /run/etc /etc ||
			bail "cannot provide /etc/hosts"
		getent hosts localhost >/dev/null || bail "localhost does not resolve"
	fi
	if (( ! ($(</sys/class/net/lo/flags) & 1) )); then
		# No ip(8) in the image: SIOCGIFFLAGS, then SIOCSIFFLAGS with IFF_UP
		perl -e 'socket(my $s, 2, 2, 0) or die "socket: $!\n";
			my $r = pack("a16 s x22", "lo", 0);
			ioctl($s, 0x8913, $r) or die "SIOCGIFFLAGS: $!\n";
			my $f = unpack("x16 s", $r) | 1;
			ioctl($s, 0x8914, pack("a16 s x22", "lo", $f)) or die "SIOCSIFFLAGS: $!\n"' ||
			bail "cannot bring lo up"
	fi
	mkdir -p "$runner" || bail "cannot create $runner"
	# (no process substitution: the guest has no /dev/fd)
	mapfile -t keep <<<"$(find "$CG" -mindepth 1 -maxdepth 1 -type d)"
	# What decides which cases can pass; recorded with the expected results
	environment="inotify: $([ -d /proc/sys/fs/inotify ] && echo yes || echo no)"
	environment+=", files: $scratch_fs, swap: $(($(grep -c . /proc/swaps) - 1)) device(s)"
	environment+=", controllers: $(<"$CG/cgroup.controllers")"
	echo "# kernel: $(</proc/version)"
	echo "# $(nproc) CPU(s), $(awk '/MemTotal/ { print int($2 / 1024) " MiB" }' /proc/meminfo)"
	echo "# environment: $environment"
}

# Kill what a program left behind: its runner's tasks, and the cgroups it
# made (test cgroups that a timeout or a failure left populated).
tidy() {	# tidy PROGRAM
	local d k
	echo 1 >"$runner/cgroup.kill"
	for d in "$CG"/*/; do
		d=${d%/}
		for k in "${keep[@]}"; do [ "$d" = "$k" ] && continue 2; done
		echo "# $1 left $d behind; removing it"
		cg_remove "${d#"$CG"}"
		[ ! -d "$d" ] || echo "# cannot remove $d"
	done
}

note_result() {	# note_result KEY VERDICT
	got[$1]=$2
	[ -n "${seen[$1]+set}" ] || order+=("$1")
	seen[$1]=1
}

# run_program PROGRAM: run it, print its output as comments, and add its
# normalised results to the array `got` (TEST: CASE -> verdict).
run_program() {
	local p=$1 out=$work/$1.out rc start line verdict name
	start=$SECONDS
	(echo "$BASHPID" >"$runner/cgroup.procs" &&
		exec timeout -k 5 "${limit[$p]}" stdbuf -oL -eL "$bin/$p") >"$out" 2>&1 </dev/null
	rc=$?
	sed 's/^/# /' "$out"
	case $rc in
	0|1) verdict=ok ;;
	4) verdict=skip ;;
	124|137) verdict=fail; echo "# $p timed out after ${limit[$p]} s" ;;
	*) verdict=fail; echo "# $p ended with status $rc" ;;
	esac
	echo "# $p: status $rc in $((SECONDS - start)) s"
	note_result "$p: exit" "$verdict"
	while IFS= read -r line; do
		if [[ $line =~ ^(not\ )?ok\ [0-9]+\ (#\ ([A-Za-z]+)\ )?(.*[^[:space:]])[[:space:]]*$ ]]; then
			name=${BASH_REMATCH[4]}
			if [ -n "${BASH_REMATCH[1]}" ]; then verdict=fail
			elif [ "${BASH_REMATCH[3]^^}" = SKIP ]; then verdict=skip
			else verdict=ok
			fi
			[ -z "${got["$p: $name"]+set}" ] || echo "# $p reported $name twice"
			note_result "$p: $name" "$verdict"
		fi
	done <"$out"
	tidy "$p"
}

# A program any of whose cases differs from the pristine kernel's result runs
# once more, and only the second run's results count; the first is printed
# beside them. Some upstream cases wait for a state change with fixed
# timeouts and fail now and then under TCG on any kernel: test_cgfreezer_ptrace
# on the pristine one (expected.txt), test_cgfreezer_migrate ("isn't frozen")
# once in CI with no policy attached, as on kernelci's boards. A regression
# fails both runs.
run_all() {	# run_all LABEL: every program; then compare with the expected
	local p key
	declare -gA got=() seen=() first=()
	local -A again=()
	order=()
	echo "# === ${1} ==="
	for p in "${programs[@]}"; do run_program "$p"; done
	[ -n "$record" ] && return
	for key in "${order[@]}" "${wanted[@]}"; do
		matches "$key" && continue
		first[$key]=${got[$key]:-not reported}
		again[${key%%: *}]=1
	done
	for p in "${programs[@]}"; do
		[ -n "${again[$p]+set}" ] || continue
		echo "# $p differed from the pristine kernel: running it once more"
		for key in "${!got[@]}"; do
			[[ $key != "$p: "* ]] || unset 'got[$key]'
		done
		run_program "$p"
	done
	for key in "${order[@]}"; do compare "$1" "$key"; done
	for key in "${wanted[@]}"; do
		[ -n "${seen[$key]+set}" ] || compare "$1" "$key"
	done
}

matches() {	# matches KEY: the result equals the pristine kernel's
	local g=${got[$1]:-not reported} w=${want[$1]:-not reported}
	# "ok|fail": the pristine kernel gave either (record-expected.sh)
	[[ "|$w|" == *"|$g|"* ]]
}

# compare LABEL KEY: a check that the result equals the pristine kernel's
compare() {
	local g=${got[$2]:-not reported} w=${want[$2]:-not reported}
	local retried=${first[$2]+ (first run: ${first[$2]}, counted: the second)}
	if matches "$2"; then
		nr_pass=$((nr_pass + 1)); echo "ok $((nr_pass + nr_fail)) - [$1] $2: $g$retried"
	else
		nr_fail=$((nr_fail + 1))
		echo "not ok $((nr_pass + nr_fail)) - [$1] $2: $g (pristine: $w)$retried"
	fi
}

# --- main ------------------------------------------------------------------
declare -A want=()
wanted=()
if [ -z "$record" ]; then
	[ -r "$expected" ] ||
		bail "no $expected: record it on a pristine kernel with test/vm/cgroup-selftests/record-expected.sh"
	while IFS= read -r line; do
		[[ $line =~ ^[[:space:]]*(#|$) ]] && continue
		[[ $line =~ ^(.+):\ ((ok|fail|skip)(\|(ok|fail|skip))*)$ ]] ||
			bail "bad line in $expected: $line"
		want["${BASH_REMATCH[1]}"]=${BASH_REMATCH[2]}
		wanted+=("${BASH_REMATCH[1]}")
	done <"$expected"
fi
setup
if [ -z "$record" ]; then
	recorded=$(sed -n 's/^# environment: //p' "$expected")
	[ "$recorded" = "$environment" ] ||
		echo "# note: $expected was recorded in another environment: $recorded"
fi

if [ -n "$record" ]; then
	run_all "no policy"
	{
		echo "# kernel: $(</proc/version)"
		if grep -qw bpf_handle_out_of_memory /proc/kallsyms; then
			echo "# series: this kernel has the BPF OOM hook (not pristine)"
		fi
		echo "# environment: $environment"
		for key in "${order[@]}"; do echo "$key: ${got[$key]}"; done
	} >"$record"
	echo "# recorded ${#order[@]} results in $record"
	exit 0
fi

[ "$pass" = largest-leaf ] || run_all "no policy"
if [ "$pass" = no-policy ]; then
	done_checks
	exit
fi

check "attach largest-leaf" oomctl policy attach largest-leaf
run_all "largest-leaf"
runs=$(oomctl -j policy list | jq '[.policies[] | select(.name == "largest-leaf")][0].runs')
kills=$(oomctl -j policy list | jq '[.policies[] | select(.name == "largest-leaf")][0].kills')
check "largest-leaf handled the selftests' OOMs (runs: $runs, kills: $kills)" \
	test "${runs:-0}" -gt 0
check "detach largest-leaf" oomctl policy detach largest-leaf
done_checks
