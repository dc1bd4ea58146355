#!/bin/bash
# Build the "rfc" killer against the RFC kernel's BTF (kernel/build.sh --rfc
# first): OUT/rfc_psi_handler, with its BPF object built in (a skeleton).
#
#   test/bench/rfc/build.sh OUT
#
# A plain script, not CMake: CI never builds the RFC kernel, so nothing there
# has its vmlinux.h. A few seconds; it always rebuilds.
# Environment: BPF_OOM_CACHE (default /var/cache/bpf-oom), RFC_KBUILD (default
# $BPF_OOM_CACHE/kbuild/debian~bookworm/linux-build-rfc).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd -P)
kbuild=${RFC_KBUILD:-${BPF_OOM_CACHE:-/var/cache/bpf-oom}/kbuild/debian~bookworm/linux-build-rfc}

die() { printf '[rfc-build] error: %s\n' "$*" >&2; exit 1; }

[ $# -eq 1 ] || { echo "usage: test/bench/rfc/build.sh OUT" >&2; exit 2; }
out=$1
[ -f "$kbuild/vmlinux.h" ] || die "no $kbuild/vmlinux.h: run kernel/build.sh --rfc first"
clang=$(command -v clang-19 || command -v clang) || die "clang is missing (test/deps.sh)"
bpftool=$(PATH=$PATH:/usr/sbin:/sbin command -v bpftool) || die "bpftool is missing (test/deps.sh)"
pkg-config --exists libbpf || die "libbpf-dev is missing (test/deps.sh)"

mkdir -p "$out"
tmp=$(mktemp -d "$out/.build.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

"$clang" -g -O2 -Wall -target bpf -D__TARGET_ARCH_x86 -I"$kbuild" -I"$here/../../../bpf" \
	-c "$here/rfc_psi_handler.bpf.c" -o "$tmp/rfc_psi_handler.bpf.o"
"$bpftool" gen skeleton "$tmp/rfc_psi_handler.bpf.o" name rfc_psi_handler_bpf \
	> "$tmp/rfc_psi_handler.skel.h"
# shellcheck disable=SC2046 # pkg-config's flags are words
cc -O2 -g -Wall -Wextra -I"$tmp" "$here/rfc_psi_handler.c" -o "$tmp/rfc_psi_handler" \
	$(pkg-config --cflags --libs libbpf)
# Replaced, never rewritten in place: a guest may be running the old one.
for f in rfc_psi_handler.bpf.o rfc_psi_handler.skel.h rfc_psi_handler; do
	mv -f "$tmp/$f" "$out/$f"
done
echo "[rfc-build] $out/rfc_psi_handler (against $kbuild/vmlinux.h)"
