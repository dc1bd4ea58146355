#!/bin/bash
# Check every patch of the series on its own, in order: it applies, it is
# checkpatch --strict clean, and the objects of the files it touches
# compile with the series up to it. The full series is linked by
# kernel/build.sh. Uses a scratch worktree and build dir in the kernel cache,
# $BPF_OOM_CACHE/kbuild/debian~bookworm (needs the image to have been built once, for the
# source and .config).
#
#   kernel/check-series.sh [CACHE_DIR]
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
cache=${1:-${BPF_OOM_CACHE:-/var/cache/bpf-oom}/kbuild/debian~bookworm}
src=$cache/linux-src
work=$cache/linux-check
out=$cache/linux-check-build

[ -d "$src/.git" ] && [ -f "$cache/linux-build/.config" ] ||
	{ echo "check-series: build the image first (test/vm/image.sh)" >&2; exit 1; }
exec 9>"$cache/build.lock"
flock 9

git -C "$src" worktree remove --force "$work" 2>/dev/null || rm -rf "$work"
git -C "$src" worktree prune
git -C "$src" worktree add -q --detach "$work" base
mkdir -p "$out"
cp "$cache/linux-build/.config" "$out/.config"
make -s -C "$work" O="$out" olddefconfig
make -s -C "$work" O="$out" -j"$(nproc)" prepare >/dev/null

fail=0
for p in $(find "$here/patches" -name '0[0-9][0-9][0-9]-*.patch' ! -name '0000-*' | sort); do
	name=$(basename "$p")
	git -C "$work" apply --index "$p" || { echo "FAIL $name: does not apply"; fail=1; break; }
	git -C "$work" -c user.name=check -c user.email=check@localhost \
		commit -q -m "$name"
	if ! "$work/scripts/checkpatch.pl" --strict --no-tree -q "$p" >/dev/null; then
		echo "FAIL $name: checkpatch"; fail=1
	fi
	# kernel/sched/psi.c and friends compile only inside build_utility.c
	# (tools/ is user space, built by its own Makefile: not kernel objects)
	objs=$(git -C "$work" diff --name-only HEAD~1 -- '*.c' ':!tools' |
		sed 's|^kernel/sched/psi\.c$|kernel/sched/build_utility.c|; s/\.c$/.o/' |
		sort -u)
	# Headers: their users are rebuilt when the next .c changes; check the
	# .c files the series touches, which include them.
	[ -n "$objs" ] || objs="mm/oom_kill.o kernel/sched/build_utility.o"
	if make -s -C "$work" O="$out" -j"$(nproc)" $objs >"$out/$name.log" 2>&1; then
		echo "ok   $name ($objs)"
	else
		echo "FAIL $name: build"; tail -5 "$out/$name.log"; fail=1
	fi
done
git -C "$src" worktree remove --force "$work"
exit $fail
