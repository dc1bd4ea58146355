#!/bin/bash
# Build the guest with mkosi: the Debian root file system and, in mkosi's
# build step (kernel/mkosi.build), the patched kernels that it carries.
#
#   test/vm/image.sh [CACHE_DIR]          build if needed; print the root's path
#   test/vm/image.sh --path [CACHE_DIR]   print the root's path, fail if not built
#
# BPF_OOM_FLAVOURS in the environment says what to build, of "prod" (the
# production kernel, always built), "debug" (the debug kernel) and "deb"
# (the production kernel's package): all three by default, "prod" alone for
# test/demo, which boots nothing else. An image with more than asked for is
# up to date.
#
# CACHE_DIR (default: $BPF_OOM_CACHE or /var/cache/bpf-oom) gets
#   image/root         the guest; its /boot has vmlinuz-bpf-oom{,-debug}
#   image/root.cache-pre-{dev,inst}
#                      mkosi's incremental caches of the two phases' package
#                      installs, kept while mkosi.conf does not change
#   image/build.log    the full mkosi output of the last build
#   kbuild/            mkosi's BuildDirectory: kernel sources, builds,
#                      vmlinux.h and the linux-image package (kernel/build.sh)
#   mkosi-cache/       mkosi's package cache, so rebuilds download less
#
# The image is keyed by mkosi.conf, the kernel's inputs (series, configs,
# scripts), the linux-source-6.12 version apt offers, the mkosi version and
# this script: an unchanged key costs a few hashes. A changed kernel input
# rebuilds incrementally: the package installs come from mkosi's caches and
# make reuses the objects in kbuild/.
# Progress goes to stderr; stdout carries only the path.
set -euo pipefail

say() { printf '[image] %s\n' "$*" >&2; }
die() { printf '[image] error: %s\n' "$*" >&2; exit 1; }

only_path=false
if [ "${1:-}" = --path ]; then only_path=true; shift; fi
repo=$(cd "$(dirname "$0")/../.." && pwd)
cache=${1:-${BPF_OOM_CACHE:-/var/cache/bpf-oom}}
cache=$(realpath -m "$cache")
dir=$cache/image

if $only_path; then
	[ -f "$dir/.key" ] && [ -x "$dir/root/bin/bash" ] ||
		die "no guest image in $dir; build it with test/vm/image.sh"
	echo "$dir/root"
	exit 0
fi

command -v mkosi >/dev/null || die "mkosi is not installed (apt-get install mkosi debootstrap)"
mkosi_version=$(mkosi --version)
# The version a fresh build container would install
srcver=$(apt-cache policy linux-source-6.12 2>/dev/null | awk '/Candidate:/ { print $2 }')
[ -n "$srcver" ] && [ "$srcver" != "(none)" ] ||
	die "apt knows no linux-source-6.12 (is bookworm-security in the sources? apt-get update)"
confkey=$( { cat "$repo/mkosi.conf"; echo "$mkosi_version"; } | sha256sum | cut -c1-16)
key=$( { echo "$confkey $srcver"; cat "$0" "$repo"/kernel/mkosi.build "$repo"/kernel/build.sh \
	"$repo"/kernel/*.config; find "$repo/kernel/patches" -name '[0-9][0-9][0-9][0-9]-*.patch' \
	! -name '0000-*' | sort | xargs cat; } | sha256sum | cut -c1-16)

# The flavours asked for, in a fixed order, the production kernel always
flavours=prod
for f in ${BPF_OOM_FLAVOURS-prod debug deb}; do
	case $f in
	prod) ;;
	debug | deb) [[ " $flavours " = *" $f "* ]] || flavours="$flavours $f" ;;
	*) die "unknown flavour '$f' in BPF_OOM_FLAVOURS (prod, debug, deb)" ;;
	esac
done
# Whether the image built has every flavour asked for
has_flavours() {
	local f built
	built=" $(cat "$dir/.flavours" 2>/dev/null || echo prod debug deb) "
	for f in $flavours; do
		[[ $built = *" $f "* ]] || return 1
	done
}

if [ "$(cat "$dir/.key" 2>/dev/null)" = "$key" ] && [ -x "$dir/root/bin/bash" ] &&
   has_flavours; then
	say "up to date (key $key)"
	echo "$dir/root"
	exit 0
fi

[ "$(id -u)" = 0 ] || die "mkosi must run as root"
mkdir -p "$dir" "$cache/kbuild" "$cache/mkosi-cache"
# One image build at a time per cache; and the kernel build takes the cores,
# so VM runs (which take build.lock) wait for it.
exec 8>"$cache/image.lock"
flock 8
if [ "$(cat "$dir/.key" 2>/dev/null)" = "$key" ] && has_flavours; then
	echo "$dir/root"
	exit 0
fi
exec 9>"$cache/build.lock"
flock 9

# mkosi's incremental caches hold the package installs: drop them when the
# package lists (mkosi.conf) or mkosi change. By hand, as mkosi's own way
# (--force twice) also empties the build directory, the kernels' objects.
if [ "$(cat "$dir/.confkey" 2>/dev/null)" != "$confkey" ]; then
	rm -rf "$dir/root.cache-pre-dev" "$dir/root.cache-pre-inst"
	say "mkosi.conf changed: the package installs are redone"
fi

say "building key $key, $flavours (log: $dir/build.log)"
# mkosi's steps, debootstrap's and apt's milestones and the kernel build's
# progress; the rest (thousands of lines) stays in the log. Line by line, as
# it comes: mawk would read the pipe in blocks and hold the progress back.
show_progress()
{
	grep --line-buffered -a -E \
		'‣|^I: (Retrieving|Unpacking|Configuring) (packages|required|the base)|^I: Base system installed|newly installed|^\[kernel' |
	grep --line-buffered -a -v -E 'API VFS|ownership|Package Cache|namespace|workspace|bind mount' |
	sed -u -E 's/^[[:space:]]*(‣ *)?/[image]   /'
}
start=$SECONDS
rm -f "$dir/.key"
# systemd-nspawn runs the build script. On these machines it cannot register
# with systemd (no system bus, /run is no tmpfs): mkosi.conf keeps it in our
# scope (NspawnKeepUnit=yes), and it gets a tmpfs for its state in a private
# mount namespace.
set +e
unshare -m --propagation private sh -c '
	mkdir -p /run/systemd/nspawn &&
	mount -t tmpfs tmpfs /run/systemd/nspawn &&
	exec "$@"' sh \
	mkosi -C "$repo" --force --incremental \
		--output="$dir/root" \
		--cache="$cache/mkosi-cache" \
		--build-dir="$cache/kbuild" \
		--workspace-dir="$dir" \
		--environment=BPF_OOM_FLAVOURS="${flavours// /,}" \
		build </dev/null 2>&1 | tee "$dir/build.log" | show_progress >&2
rc=${PIPESTATUS[0]}
set -e
if [ "$rc" -ne 0 ]; then
	tail -n 30 "$dir/build.log" >&2
	die "mkosi failed (exit $rc; full log: $dir/build.log)"
fi
want="bin/bash boot/vmlinuz-bpf-oom"
[[ " $flavours " = *" debug "* ]] && want="$want boot/vmlinuz-bpf-oom-debug"
for f in $want; do
	[ -e "$dir/root/$f" ] || die "mkosi produced no $dir/root/$f"
done
echo "$confkey" > "$dir/.confkey"
echo "$flavours" > "$dir/.flavours"
echo "$key" > "$dir/.key"
# Images of the layout before the kernel moved into mkosi
rm -rf "$cache"/image-*
say "built in $((SECONDS - start)) s: $dir/root"
echo "$dir/root"
