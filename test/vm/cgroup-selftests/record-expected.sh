#!/bin/bash
# Record expected.txt, the cgroup selftests' results on a PRISTINE kernel:
# the same tree and config as the patched one, without the series. Boots it
# RUNS times (default 2) with no policy, in the environment that
# test/vm/cgroup_selftests.sh makes, and refuses results that differ between
# runs (a flaky case cannot be a reference) or that come from a kernel with
# the series' OOM hook.
#
#   test/vm/cgroup-selftests/record-expected.sh [--runs N] [--allow-patched]
#                                               BZIMAGE [BUILD_DIR]
#
# BUILD_DIR (default: build/ in the repo) must hold the selftests
# (cmake --build BUILD_DIR --target cgroup_selftests_bin). Re-record whenever
# the kernel config, the guest image or the environment in
# cgroup_selftests.sh changes.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../.." && pwd)
runs=3 allow_patched=false
while [ $# -gt 0 ]; do
	case $1 in
	--runs) runs=${2:?}; shift 2 ;;
	--allow-patched) allow_patched=true; shift ;;
	-*) echo "unknown option $1" >&2; exit 2 ;;
	*) break ;;
	esac
done
kernel=${1:?usage: record-expected.sh [--runs N] [--allow-patched] BZIMAGE [BUILD_DIR]}
build=$(cd "${2:-$repo/build}" && pwd)
[ -f "$kernel" ] || { echo "no kernel at $kernel" >&2; exit 1; }
kernel=$(realpath "$kernel")

# The guest writes into the repo (it sees the repo, not /tmp).
tmp=$(mktemp -d "$here/.record.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
for i in $(seq "$runs"); do
	echo "[record] run $i of $runs on $kernel" >&2
	start=$SECONDS
	"$repo/test/vm/run" --kernel "$kernel" --timeout 300 -- \
		"$repo/test/vm/cgroup_selftests.sh" "$build" --record "$tmp/run$i" >"$tmp/log$i" 2>&1 ||
		{ cat "$tmp/log$i" >&2; echo "[record] run $i failed" >&2; exit 1; }
	echo "[record] run $i: $((SECONDS - start)) s" >&2
	if grep -q '^# series:' "$tmp/run$i" && ! $allow_patched; then
		echo "[record] $kernel has the series' OOM hook: not a pristine kernel" >&2
		exit 1
	fi
	grep -v '^#' "$tmp/run$i" >"$tmp/results$i"
	if [ "$i" -gt 1 ] &&
	   ! cmp -s <(cut -d: -f1,2 "$tmp/results1") <(cut -d: -f1,2 "$tmp/results$i"); then
		diff -u "$tmp/results1" "$tmp/results$i" >&2
		echo "[record] runs 1 and $i ran different cases (above): not recording" >&2
		exit 1
	fi
done
# A case whose verdict differs between runs is flaky on the pristine kernel
# too: it is recorded with every verdict seen ("ok|fail"), and any of them
# matches later. Listed, so that nobody mistakes it for a pass.
awk -F': ' '{ key = $1 ": " $2; v = $3
	if (!(key in seen)) { order[++n] = key; seen[key] = v }
	else if (("|" seen[key] "|") !~ ("\\|" v "\\|")) seen[key] = seen[key] "|" v }
	END { for (i = 1; i <= n; i++) print order[i] ": " seen[order[i]] }' \
	"$tmp"/results[0-9]* >"$tmp/merged"
flaky=$(grep -c '|' "$tmp/merged" || true)
[ "$flaky" -eq 0 ] || { echo "[record] flaky on this kernel:" >&2; grep '|' "$tmp/merged" >&2; }
{
	echo "# The kernel's cgroup selftests (tools/testing/selftests/cgroup) on the"
	echo "# pristine kernel, no policy, in the environment test/vm/cgroup_selftests.sh"
	echo "# makes; that script compares every run with these. Why cases fail or"
	echo "# skip here: README.md. Recorded by record-expected.sh ($runs"
	echo "# runs) from $kernel on $(date -u +%Y-%m-%d). \"ok|fail\": flaky there."
	grep '^#' "$tmp/run1"
	cat "$tmp/merged"
} >"$here/expected.txt"
echo "[record] wrote $here/expected.txt ($(grep -c . "$tmp/merged") results, $flaky flaky)" >&2
