#!/bin/bash
# Build the kernel's own cgroup selftests (test_core, test_memcontrol,
# test_kill, test_freezer) from the cached kernel tree, out of tree.
#
#   test/vm/cgroup-selftests/build.sh [SRC_DIR] OUT_DIR
#
# SRC_DIR (default $BPF_OOM_CACHE/kbuild/debian~bookworm/linux-src, made by kernel/build.sh) is only
# read. OUT_DIR gets the four programs, and khdr/usr/include: the tree's uapi
# headers from `make O=OUT_DIR/khdr headers` (the selftests' Makefile would
# want them in the tree's usr/include, and headers_install needs rsync).
# The programs are compiled with gcc directly, with the flags of the
# selftests' Makefile and lib.mk (-Wall -pthread -D_GNU_SOURCE=, the uapi
# headers first), since their Makefile writes into the source tree. No -O,
# as there: at -O2 gcc drops test_memcontrol's alloc_anon() (malloc, touch
# every page, free) as dead code, and its OOM cases fail for want of an OOM.
#
# Keyed by this script, the selftest sources, the uapi headers and gcc's
# version: an unchanged key costs a hash (under a second).
set -euo pipefail

say() { printf '[cgroup-selftests] %s\n' "$*"; }
die() { printf '[cgroup-selftests] error: %s\n' "$*" >&2; exit 1; }

case $# in
1) src=${BPF_OOM_CACHE:-/var/cache/bpf-oom}/kbuild/debian~bookworm/linux-src; out=$1 ;;
2) src=$1; out=$2 ;;
*) die "usage: build.sh [SRC_DIR] OUT_DIR" ;;
esac
sel=$src/tools/testing/selftests
cg=$sel/cgroup
tests=(test_core test_memcontrol test_kill test_freezer)
[ -f "$cg/cgroup_util.c" ] || die "no cgroup selftests in $src (build the image first: test/vm/image.sh)"
command -v gcc >/dev/null || die "gcc is missing"
mkdir -p "$out"
out=$(cd "$out" && pwd -P)

# What the programs are made of: their sources and the shared headers they
# include (cgroup_util, kselftest.h, clone3 and pidfd helpers), the uapi.
uapi=("$src/include/uapi" "$src/arch/x86/include/uapi")
key=$( {
	cat "$0"
	gcc --version | head -1
	for t in "${tests[@]}"; do cat "$cg/$t.c"; done
	cat "$cg"/cgroup_util.[ch]
	cat "$sel/kselftest.h" "$sel/clone3/clone3_selftests.h" "$sel/pidfd/pidfd.h"
	find "${uapi[@]}" -type f -print0 | sort -z | xargs -0 cat
} | sha256sum | cut -c1-16)
built() { local t; for t in "${tests[@]}"; do [ -x "$out/$t" ] || return 1; done; }
if [ "$(cat "$out/.key" 2>/dev/null)" = "$key" ] && built; then
	exit 0
fi

say "building ${tests[*]} from $cg"
rm -f "$out/.key"
# The uapi headers of this tree (CLONE_INTO_CGROUP, struct clone_args, ...).
make -s -C "$src" O="$out/khdr" headers >"$out/headers.log" 2>&1 ||
	{ tail -20 "$out/headers.log" >&2; die "make headers failed (log: $out/headers.log)"; }
cflags=(-Wall -pthread -D_GNU_SOURCE= -isystem "$out/khdr/usr/include")
for t in "${tests[@]}"; do
	gcc "${cflags[@]}" -o "$out/$t.tmp" "$cg/$t.c" "$cg/cgroup_util.c" ||
		die "compiling $t failed"
	mv "$out/$t.tmp" "$out/$t"
done
echo "$key" >"$out/.key"
say "done: $out"
