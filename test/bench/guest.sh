#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The benchmark's parts in one systemd guest (test/bench/run boots it):
#
#   test/bench/guest.sh OUTDIR BUILD_DIR [--quick] [PART...]
#
# PART: footprint, oom_path, listing, kill (default: all, in that order:
# the footprint first, on a guest where nothing has been set up yet). Each
# part leaves the guest as it found it; the first that fails ends the run.
# Extra arguments for test/bench/kill_latency.sh go in $KL_ARGS.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd -P)
[ $# -ge 2 ] || { echo "usage: guest.sh OUTDIR BUILD_DIR [--quick] [PART...]" >&2; exit 2; }
# absolute: the parts change directory
mkdir -p "$1"
out=$(cd "$1" && pwd -P) build=$(cd "$2" && pwd -P)
shift 2
quick=()
[ "${1:-}" != --quick ] || { quick=(--quick); shift; }
[ $# -gt 0 ] || set -- footprint oom_path listing kill
for part; do
	start=$SECONDS
	echo "bench: $part" >&2
	case $part in
	footprint | oom_path | listing) "$here/$part.sh" "$out" "$build" "${quick[@]}" ;;
	# shellcheck disable=SC2086 # KL_ARGS: words
	kill) "$here/kill_latency.sh" "$out" "$build" "${quick[@]}" ${KL_ARGS:-} ;;
	*) echo "guest.sh: unknown part $part" >&2; exit 2 ;;
	esac
	echo "bench: $part took $((SECONDS - start)) s" >&2
	echo "$part,$((SECONDS - start))" >>"$out/parts.csv"
done
