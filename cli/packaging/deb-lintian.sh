#!/bin/bash
# Build the oomctl package into DIR with deb.cmake, check that it holds what
# an admin needs, and run lintian on it (errors fail, the rest is listed).
# usage: deb-lintian.sh DIR DEB_CMAKE CMAKE -DVAR=VALUE...
set -u
dir=$1 script=$2; shift 2
n=0 failed=0
pass() { echo "ok $((++n)) - $1"; }
fail() { echo "not ok $((++n)) - $1"; failed=$((failed + 1)); }

rm -rf "$dir" && mkdir -p "$dir/out" || exit 1
if out=$("$@" -DOUT_DIR="$dir/out" -DWORK_DIR="$dir/work" -P "$script" 2>&1); then
	pass "the package builds"
else
	fail "the package builds"; sed 's/^/#   /' <<<"$out"
	echo "1..$n"; exit 1
fi
debs=("$dir"/out/oomctl_*.deb)
[ ${#debs[@]} -eq 1 ] && [ -f "${debs[0]}" ] || { fail "one .deb was written"; echo "1..$n"; exit 1; }
deb=${debs[0]}
pass "one .deb was written: ${deb##*/}"

contents=$(dpkg-deb -c "$deb" | awk '{print $1, $2, $NF}')
for want in "-rwxr-xr-x root/root ./usr/sbin/oomctl" \
	"-rw-r--r-- root/root ./usr/share/man/man8/oomctl.8.gz" \
	"-rw-r--r-- root/root ./usr/share/man/man7/oomctl-policies.7.gz" \
	"-rw-r--r-- root/root ./usr/share/bash-completion/completions/oomctl" \
	"-rw-r--r-- root/root ./lib/systemd/system/oomctl.service" \
	"-rw-r--r-- root/root ./usr/share/oomctl/managed-oom.conf" \
	"-rw-r--r-- root/root ./usr/share/man/man8/oomctl-units.8.gz" \
	"-rw-r--r-- root/root ./usr/share/doc/oomctl/copyright" \
	"-rw-r--r-- root/root ./usr/share/doc/oomctl/changelog.gz"; do
	if grep -qxF -- "$want" <<<"$contents"; then
		pass "it has ${want##* }"
	else
		fail "it has ${want##* } (mode, owner: ${want% *})"
	fi
done
if grep -q '\.[1-9]$' <<<"$contents"; then
	fail "no uncompressed man page"; grep '\.[1-9]$' <<<"$contents" | sed 's/^/#   /'
else
	pass "no uncompressed man page"
fi
# The built-in policies' sources, to start one's own policy from: they
# build from the package alone, as examples/README says, against the
# kernel's vmlinux.h ($EXAMPLES_VMLINUX_H) with $EXAMPLES_CLANG
for f in README largest_leaf.bpf.c oomd.bpf.c psi_declare.bpf.c oom.bpf.h; do
	if grep -qxF -- "-rw-r--r-- root/root ./usr/share/doc/oomctl/examples/$f" <<<"$contents"; then
		pass "it has /usr/share/doc/oomctl/examples/$f"
	else
		fail "it has /usr/share/doc/oomctl/examples/$f"
	fi
done
ex=$dir/root/usr/share/doc/oomctl/examples
if ! dpkg-deb -x "$deb" "$dir/root" || ! cp "${EXAMPLES_VMLINUX_H:-/nonexistent}" "$ex/vmlinux.h"; then
	fail "the examples unpack beside a vmlinux.h (EXAMPLES_VMLINUX_H=${EXAMPLES_VMLINUX_H:-})"
else
	for p in largest_leaf oomd psi_declare; do
		if out=$(cd "$ex" && "${EXAMPLES_CLANG:-clang}" -g -O2 -target bpf \
				-D__TARGET_ARCH_x86 -I. -c "$p.bpf.c" -o "$dir/$p.bpf.o" 2>&1); then
			pass "examples/$p.bpf.c builds from the package alone"
		else
			fail "examples/$p.bpf.c builds from the package alone"
			sed 's/^/#   /' <<<"$out"
		fi
	done
fi

depends=$(dpkg-deb -f "$deb" Depends)
# libbpf is linked in (the patched tree's 1.5: bookworm's libbpf1 has no
# struct_ops links); what it needs is not
if grep -q 'libelf1' <<<"$depends" && grep -q 'libc6' <<<"$depends" &&
   ! grep -q 'libbpf1' <<<"$depends"; then
	pass "Depends names libelf1 and libc6, not libbpf1: $depends"
else
	fail "Depends names libelf1 and libc6, not libbpf1: $depends"
fi

if ! command -v lintian >/dev/null; then
	fail "lintian is installed (test/deps.sh installs it)"
else
	# --fail-on error: warnings are listed, not fatal
	lint=$(lintian --fail-on error --display-info --tag-display-limit 0 "$deb" 2>&1)
	rc=$?
	# lintian says it runs as root on stderr; that is no finding
	lint=$(grep -v 'running with root privileges' <<<"$lint")
	if [ $rc -eq 0 ]; then
		pass "lintian reports no error"
	else
		fail "lintian reports no error (status $rc)"
	fi
	[ -n "$lint" ] && sed 's/^/#   /' <<<"$lint"
fi
echo "1..$n"
[ $failed -eq 0 ]
