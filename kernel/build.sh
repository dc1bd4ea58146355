#!/bin/bash
# Build the patched guest kernel into a cache outside the repo.
#
#   kernel/build.sh [--debug|--pristine|--rfc[=SEEDS_DIR]|--deb] [CACHE_DIR]
#
# mkosi runs it (kernel/mkosi.build) in its build container, with CACHE_DIR
# its persistent BuildDirectory. On the host that folder is
# $BPF_OOM_CACHE/kbuild/debian~bookworm (mkosi 14 adds the distribution), the
# default CACHE_DIR here; there, --pristine builds the kernel without the
# series, for comparisons.
#
# CACHE_DIR/linux-src          git repo of the extracted linux-source-6.12, tag "base" = pristine
# CACHE_DIR/linux-build        O= build dir: arch/x86/boot/bzImage, vmlinux, vmlinux.h
# CACHE_DIR/linux-build-debug  the same with --debug: bpf-oom-debug.config on top
#                              (lockdep, RCU and list checks, hang detectors,
#                              KASAN, the cgroup v1 memory controller)
# CACHE_DIR/linux-build-pristine  --pristine: the production config without
#                              the series (from the worktree linux-pristine-src),
#                              for comparisons; nothing builds it by default
# CACHE_DIR/linux-build-rfc   --rfc: the RFC as posted ("mm: BPF OOM", April
#                              2025: the seed patches 002..011 in SEEDS_DIR,
#                              default $RFC_SEEDS or the repo's ../shared/seeds),
#                              then any port fixups in test/bench/rfc (none are
#                              needed: its README.md), with the production
#                              config, from the worktree linux-rfc-src; for
#                              test/bench/run only, never CI
# CACHE_DIR/linux-image-*.deb  --deb: the production kernel as a Debian package
#                              (make bindeb-pkg), after a production build
#
# Both flavours build from the same source tree, one at a time (a lock).
# A build is keyed by (source package version, series, config fragments, this
# script). An unchanged key costs a hash; a changed series is applied through a
# scratch git index and checked out over the previous one, so only files whose
# patched content differs are rewritten and make rebuilds incrementally.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
fragments=("$here/bpf-oom.config")
flavour="" seeds=""
deb=false
case ${1:-} in
--debug) fragments+=("$here/bpf-oom-debug.config"); flavour=-debug; shift ;;
--pristine) flavour=-pristine; shift ;;
--rfc | --rfc=*)
	# The RFC's own uname -r, so a guest says which kernel it runs
	fragments+=("$here/../test/bench/rfc/rfc.config"); flavour=-rfc
	seeds=${RFC_SEEDS:-$here/../../shared/seeds}
	[ "$1" = --rfc ] || seeds=${1#--rfc=}
	shift ;;
--deb) deb=true; shift ;;
esac
cache=${1:-${BPF_OOM_CACHE:-/var/cache/bpf-oom}/kbuild/debian~bookworm}
src=$cache/linux-src
out=$cache/linux-build$flavour
tarball=/usr/src/linux-source-6.12.tar.xz
jobs=$(nproc)

say() { printf '[kernel%s] %s\n' "$flavour" "$*"; }
die() { printf '[kernel] error: %s\n' "$*" >&2; exit 1; }

pkgver=$(dpkg-query -W -f='${Version}' linux-source-6.12 2>/dev/null) ||
	die "linux-source-6.12 is not installed (apt-get install linux-source-6.12)"
[ -r "$tarball" ] || die "$tarball is missing"

# One build at a time: a second caller waits, then finds the work done.
mkdir -p "$cache"
exec 9>"$cache/build.lock"
flock 9

series=()
if [ "$flavour" = -rfc ]; then
	# The seeds are named NNN-patch-*.patch; 000 and 001 are not patches.
	[ -d "$seeds" ] || die "no seeds directory $seeds (--rfc=DIR or RFC_SEEDS)"
	mapfile -t series < <(find "$seeds" -maxdepth 1 -name '[0-9][0-9][0-9]-patch-*.patch' | sort)
	[ "${#series[@]}" -gt 0 ] || die "no NNN-patch-*.patch in $seeds"
	# Our port goes last, strict: it is made against the seeds' result.
	mapfile -t -O "${#series[@]}" series < <(find "$here/../test/bench/rfc" \
		-maxdepth 1 -name '[0-9][0-9][0-9][0-9]-*.patch' | sort)
elif [ "$flavour" != -pristine ]; then
	mapfile -t series < <(find "$here/patches" -name '[0-9][0-9][0-9][0-9]-*.patch' \
		! -name '0000-*' | sort)
fi
key=$( { echo "$pkgver"; cat "${series[@]}" "${fragments[@]}" "$0"; } |
	sha256sum | cut -c1-16)

# kernel.release is VERSION + CONFIG_LOCALVERSION: an empty LOCALVERSION in
# the environment keeps setlocalversion from adding "+" for the git tree.
export LOCALVERSION=

if $deb; then
	[ "$(cat "$out/.key" 2>/dev/null)" = "$key" ] ||
		die "--deb packages the production build: run kernel/build.sh first"
	if [ "$(cat "$cache/.debkey" 2>/dev/null)" = "$key" ] &&
	   compgen -G "$cache/linux-image-*.deb" >/dev/null; then
		say "package up to date (key $key)"
		exit 0
	fi
	say "make bindeb-pkg (log: $out/deb.log)"
	start=$SECONDS
	rm -f "$cache"/linux-*.deb "$cache"/linux-*.buildinfo "$cache"/linux-*.changes
	# The package lands in the build directory's parent, CACHE_DIR.
	# The maintainer of the oomctl package (cli/packaging), not root@host
	env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL \
		DEBFULLNAME="bpf-oom maintainers" \
		DEBEMAIL="maintainers@users.noreply.a-seed-c5eed8a1.example" \
		make -C "$src" O="$out" -j"$jobs" \
		KDEB_PKGVERSION="$(cat "$out/include/config/kernel.release")-1" \
		DPKG_FLAGS="-d -Ppkg.linux-upstream.nokerneldbg" bindeb-pkg >"$out/deb.log" 2>&1 ||
		{ tail -n 20 "$out/deb.log" >&2; die "make bindeb-pkg failed (log: $out/deb.log)"; }
	# Only the kernel: no debug symbols package (-P above), no libc headers
	rm -f "$cache"/linux-*.buildinfo "$cache"/linux-*.changes "$cache"/linux-libc-dev_*.deb
	echo "$key" > "$cache/.debkey"
	say "packaged in $((SECONDS - start)) s: $(cd "$cache" && echo linux-image-*.deb)"
	exit 0
fi

if [ -f "$out/.key" ] && [ "$(cat "$out/.key")" = "$key" ] &&
   [ -f "$out/arch/x86/boot/bzImage" ] && [ -f "$out/vmlinux.h" ]; then
	say "up to date (key $key): $out"
	exit 0
fi
say "building key $key (linux-source-6.12 $pkgver, ${#series[@]} patches)"
mkdir -p "$cache" "$out"

# 1. Pristine source as a git repo, once per package version.
if [ "$(git -C "$src" config --get bpfoom.pkgver 2>/dev/null)" != "$pkgver" ]; then
	say "extracting $tarball"
	rm -rf "$src" "$src.tmp" "$cache/linux-pristine-src" "$cache/linux-rfc-src"
	mkdir -p "$src.tmp"
	tar -xf "$tarball" -C "$src.tmp" --strip-components=1
	git -C "$src.tmp" init -q
	git -C "$src.tmp" config user.name bpf-oom-build
	git -C "$src.tmp" config user.email bpf-oom-build@localhost
	say "recording the pristine tree in git"
	git -C "$src.tmp" add -f -A
	git -C "$src.tmp" commit -q -m "linux-source-6.12 $pkgver"
	git -C "$src.tmp" tag -f base >/dev/null
	git -C "$src.tmp" config bpfoom.pkgver "$pkgver"
	mv "$src.tmp" "$src"
fi

# 2. Apply the series in a scratch index (strict: no fuzz, no offsets
#    beyond what git apply accepts), then move the work tree to the result.
#    The pristine flavour builds from a worktree of its own at "base", so
#    that the two trees never rewrite each other's files.
if [ "$flavour" = -pristine ]; then
	srctree=$cache/linux-pristine-src
	if [ ! -d "$srctree" ]; then
		git -C "$src" worktree prune
		git -C "$src" worktree add -q --detach "$srctree" base
	fi
else
	srctree=$src
	if [ "$flavour" = -rfc ]; then
		srctree=$cache/linux-rfc-src
		if [ ! -d "$srctree" ]; then
			git -C "$src" worktree prune
			git -C "$src" worktree add -q --detach "$srctree" base
		fi
	fi
	apply() { GIT_INDEX_FILE=$index git -C "$src" apply --cached "$@"; }
	index=$src/.git/index.series$flavour
	rm -f "$index"
	GIT_INDEX_FILE=$index git -C "$src" read-tree base
	head=$(git -C "$src" rev-parse base)
	for p in "${series[@]}"; do
		name=$(basename "$p")
		if [ -z "$seeds" ] || [[ $p != "$seeds"/* ]]; then
			apply "$p" || die "$name does not apply"
		elif ! apply "$p" 2>/dev/null; then
			# The seeds were written against bpf-next (~6.15): with
			# less context (like patch's fuzz) a hunk can only land
			# elsewhere; anything more is a fixup in our port patch
			# (test/bench/rfc/README.md).
			apply -C2 "$p" || die "$name does not apply, even with 2 lines of context"
			say "$name: applied with 2 lines of context"
		fi
		tree=$(GIT_INDEX_FILE=$index git -C "$src" write-tree)
		head=$(git -C "$src" commit-tree "$tree" -p "$head" -m "$name")
	done
	rm -f "$index"
	git -C "$srctree" checkout -q -f --detach "$head"
fi

# 3. Configure: tinyconfig + kvm_guest.config + our fragments.
cfgkey=$(cat "${fragments[@]}" | sha256sum | cut -c1-16)
if [ ! -f "$out/.config" ] || [ "$(cat "$out/.cfgkey" 2>/dev/null)" != "$cfgkey" ]; then
	say "configuring"
	make -s -C "$srctree" O="$out" tinyconfig >/dev/null
	make -s -C "$srctree" O="$out" kvm_guest.config >/dev/null
	"$srctree/scripts/kconfig/merge_config.sh" -m -O "$out" "$out/.config" \
		"${fragments[@]}" >/dev/null
	make -s -C "$srctree" O="$out" olddefconfig >/dev/null
	echo "$cfgkey" > "$out/.cfgkey"
fi
required=(SMP ACPI X86_MPPARSE VM_EVENT_COUNTERS BPF_SYSCALL BPF_JIT DEBUG_INFO_BTF
	DYNAMIC_FTRACE_WITH_DIRECT_CALLS FUNCTION_TRACER BPF_EVENTS MEMCG PSI CGROUP_BPF
	9P_FS VIRTIO_CONSOLE DEBUG_ATOMIC_SLEEP BPF_LSM)
[ "$flavour" != -debug ] || required+=(PROVE_LOCKING PROVE_RCU DEBUG_LIST BUG_ON_DATA_CORRUPTION
	DETECT_HUNG_TASK SOFTLOCKUP_DETECTOR KASAN KASAN_GENERIC MEMCG_V1)
missing=""
for opt in "${required[@]}"; do
	grep -qx "CONFIG_$opt=y" "$out/.config" || missing="$missing CONFIG_$opt"
done
[ -z "$missing" ] || die "options that must be =y are not:$missing"

# 4. Build, showing progress rather than thousands of lines.
say "make -j$jobs bzImage (log: $out/build.log)"
start=$SECONDS
set +e
"$here/make-progress" "[kernel$flavour]" "$out/build.log" -C "$srctree" O="$out" -j"$jobs" bzImage
rc=$?
set -e
if [ "$rc" -ne 0 ]; then
	grep -E 'error|Error' "$out/build.log" | head -30 >&2
	die "kernel build failed (full log: $out/build.log)"
fi
say "built in $((SECONDS - start)) s"

# 5. vmlinux.h from the patched kernel's BTF, rewritten only when it changes
#    so the BPF objects don't rebuild needlessly.
bpftool btf dump file "$out/vmlinux" format c > "$out/vmlinux.h.new"
if cmp -s "$out/vmlinux.h.new" "$out/vmlinux.h"; then
	rm "$out/vmlinux.h.new"
else
	mv "$out/vmlinux.h.new" "$out/vmlinux.h"
fi
echo "$key" > "$out/.key"
say "done: $out/arch/x86/boot/bzImage"
