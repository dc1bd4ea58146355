#!/bin/bash
# Build the guest root file system (a Debian directory tree) with mkosi.
#
#   test/vm/image.sh [CACHE_DIR]          build if needed; print the root's path
#   test/vm/image.sh --path [CACHE_DIR]   print the root's path, fail if not built
#
# CACHE_DIR (default: $BPF_OOM_CACHE or /var/cache/bpf-oom) gets
#   image-<key>/root   the image, keyed by mkosi.conf, the mkosi version and
#                      this script; images for other keys are removed
#   mkosi-cache/       mkosi's package cache, so rebuilds download less
#   image-<key>.log    the full mkosi output of the last build
# Progress goes to stderr; stdout carries only the path.
set -euo pipefail

say() { printf '[image] %s\n' "$*" >&2; }
die() { printf '[image] error: %s\n' "$*" >&2; exit 1; }

only_path=false
if [ "${1:-}" = --path ]; then only_path=true; shift; fi
repo=$(cd "$(dirname "$0")/../.." && pwd)
cache=${1:-${BPF_OOM_CACHE:-/var/cache/bpf-oom}}
cache=$(realpath -m "$cache")

command -v mkosi >/dev/null || die "mkosi is not installed (apt-get install mkosi debootstrap)"
key=$( { cat "$repo/mkosi.conf" "$0"; mkosi --version; } | sha256sum | cut -c1-16)
dir=$cache/image-$key

if [ -f "$dir/.done" ]; then
	$only_path || say "up to date (key $key)"
	echo "$dir/root"
	exit 0
fi
$only_path && die "no guest image for the current mkosi.conf; build it with test/vm/image.sh"

[ "$(id -u)" = 0 ] || die "mkosi must run as root"
mkdir -p "$cache"
# One build at a time per cache (CI and a developer may share it).
exec 9>"$cache/image.lock"
flock 9
if [ -f "$dir/.done" ]; then echo "$dir/root"; exit 0; fi

say "building key $key (log: $dir.log)"
start=$SECONDS
rm -rf "$dir.tmp"
mkdir -p "$dir.tmp" "$cache/mkosi-cache"
# Show mkosi's main steps and debootstrap's and apt's milestones; the rest
# (hundreds of lines) stays in the log.
set +e
mkosi -C "$repo" --force \
	--output="$dir.tmp/root" \
	--cache="$cache/mkosi-cache" \
	--workspace-dir="$dir.tmp" \
	build </dev/null 2>&1 | tee "$dir.log" |
	awk '/‣/ && !/API VFS|ownership|Package Cache|namespace|workspace/ ||
	     /^I: (Retrieving|Unpacking|Configuring) (packages|required|the base)/ ||
	     /^I: Base system installed|newly installed/ {
		sub(/^[ \t]*(‣ *)?/, ""); print "[image]   " $0; fflush() }' >&2
rc=${PIPESTATUS[0]}
set -e
if [ "$rc" -ne 0 ]; then
	tail -n 30 "$dir.log" >&2
	die "mkosi failed (exit $rc; full log: $dir.log)"
fi
[ -x "$dir.tmp/root/bin/bash" ] || die "mkosi produced no root at $dir.tmp/root"
touch "$dir.tmp/.done"

# Replace: drop images for other keys, then move the new one in place.
for old in "$cache"/image-*; do
	case $old in "$dir.tmp"|"$dir.log"|"$dir.tmp/"*) continue ;; esac
	[ -e "$old" ] && rm -rf "$old"
done
mv "$dir.tmp" "$dir"
say "built in $((SECONDS - start)) s: $dir/root"
echo "$dir/root"
