#!/bin/bash
# Install what building and testing need on a Debian 12 host (run as root).
# Quick when everything is there already.
set -euo pipefail

packages=(
	# the kernel: source package, toolchain, BTF
	linux-source-6.12 build-essential flex bison bc libssl-dev libelf-dev
	dwarves xz-utils cpio git python3
	# BPF programs and user space
	clang-19 bpftool libbpf-dev zlib1g-dev libjson-c-dev libsmartcols-dev cmake pkg-config
	# man page lint in test/unit/check-docs.sh; its completion tests
	mandoc groff-base bash-completion
	# the oomctl package (cli/packaging/) and its lint
	dpkg-dev lintian
	# the Prometheus text parser of test/vm/oomctl_export.py
	python3-prometheus-client
	# test/bench/run's plots
	gnuplot-nox
	# the guest: image and emulator
	mkosi debootstrap qemu-system-x86
)

missing=()
for p in "${packages[@]}"; do
	[ "$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null)" = "install ok installed" ] ||
		missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "[deps] installing: ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
