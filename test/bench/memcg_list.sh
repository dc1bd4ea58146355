#!/bin/bash
# Figures for `oomctl memcg list` on big hierarchies, measured in a VM (not a
# test: nothing fails on slow numbers). For each size N, the guest creates
# about N memory cgroups (N/100 parents of 99 children each; memory enabled
# everywhere), then times `oomctl memcg list` of that subtree in JSON, plain
# and tree output: wall time, rows per second, runs of the BPF walker
# (1 + resumes after a full ring buffer) and oomctl's peak RSS.
#
#   test/bench/memcg_list.sh [N...]        (default: 1000 10000)
#
# Environment: BUILD (default: build), the cmake build directory with
# test/vm/memcg_list and cli/oomctl; VM_MEM (MiB, default 1024).
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd -P)
build=$(cd "${BUILD:-$repo/build}" && pwd -P)
[ $# -gt 0 ] || set -- 1000 10000
for bin in "$build/test/vm/memcg_list" "$build/cli/oomctl"; do
	[ -x "$bin" ] || { echo "memcg_list.sh: no $bin; build first" >&2; exit 1; }
done
exec "$repo/test/vm/run" --timeout 1800 --mem "${VM_MEM:-1024}" -- \
	"$build/test/vm/memcg_list" "$build/cli/oomctl" --bench "$@"
