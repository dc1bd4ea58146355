#!/bin/bash
# Does a person watching `cmake --build` (as test/demo and test/all run it)
# see the kernel build's progress while it runs? The real pipeline, with
# the kernel and mkosi replaced by fakes: test/vm/image.sh, under a make
# that passes -s in MAKEFLAGS as CMake's does, runs a fake mkosi whose build
# step runs kernel/make-progress over a fake kbuild make that prints a step
# line every 0.5 s for 4 s, then is quiet for 4 s (like a link), and stays
# silent under -s as kbuild does. Told that a whole build takes 8 steps
# (MAKE_PROGRESS_TOTAL), the progress says how many of them and the time
# left, then that the link is left.
#
# usage: test-build-progress.sh REPO
set -u
repo=$1
n=0 failed=0
pass() { echo "ok $((++n)) - $1"; }
fail() { echo "not ok $((++n)) - $1"; failed=$((failed + 1)); }

if [ "$(id -u)" != 0 ]; then
	echo "1..0 # SKIP image.sh runs mkosi as root"
	exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/bin" "$tmp/cache"

cat > "$tmp/bin/make" <<'FAKE'
#!/bin/bash
case " ${MAKEFLAGS:-} " in *" s"*|*" -s"*|" s "*) exit 0 ;; esac
for i in 1 2 3 4 5 6 7 8; do echo "  CC      mm/f$i.o"; sleep 0.5; done
touch "$PHASES/quiet"
sleep 4
echo "  LD      vmlinux"
touch "$PHASES/done"
FAKE
cat > "$tmp/bin/mkosi" <<FAKE
#!/bin/bash
[ "\$1" = --version ] && { echo "mkosi 14"; exit 0; }
out=
for a; do case \$a in --output=*) out=\${a#--output=} ;; esac; done
echo "‣ Running second (final) stage…"
MAKE_PROGRESS_TOTAL=8 MAKE_PROGRESS_INTERVAL=2 "$repo/kernel/make-progress" "[kernel]" "$tmp/kbuild.log" bzImage
mkdir -p "\$out/bin" "\$out/boot"
cp /bin/true "\$out/bin/bash"
touch "\$out/boot/vmlinuz-bpf-oom" "\$out/boot/vmlinuz-bpf-oom-debug"
FAKE
chmod +x "$tmp/bin/make" "$tmp/bin/mkosi"

# Each line of image.sh's stderr, stamped with the fake make's phase when it
# arrived: steps (printing step lines), quiet (linking) or done.
phase()
{
	if [ -e "$tmp/done" ]; then echo done
	elif [ -e "$tmp/quiet" ]; then echo quiet
	else echo steps
	fi
}
MAKEFLAGS=" -s" PHASES=$tmp PATH="$tmp/bin:$PATH" "$repo/test/vm/image.sh" "$tmp/cache" \
	2>&1 >/dev/null | while IFS= read -r line; do
		echo "$(phase) $line"
	done > "$tmp/seen"
sed 's/^/#   /' "$tmp/seen"

steps=$(grep -cE '\[image\] *\[kernel\] *[0-9]+ (of about 8 )?steps.*, [0-9]+:[0-9]+ elapsed' "$tmp/seen")
if [ "$steps" -ge 3 ]; then
	pass "the output shows the step count and elapsed time, $steps times"
else
	fail "the output shows the step count and elapsed time at least 3 times (got $steps)"
fi
if grep -qE '^steps .*steps.*, [0-9]+:[0-9]+ elapsed' "$tmp/seen"; then
	pass "progress shows while the build runs, not at its end"
else
	fail "progress shows while the build runs, not at its end (none before the link)"
fi
if grep -qE '^quiet .*steps.*, [0-9]+:[0-9]+ elapsed' "$tmp/seen"; then
	pass "progress goes on while make is quiet"
else
	fail "progress goes on while make is quiet (none during the 4 s link)"
fi
if grep -qE '\[kernel\] *[1-9][0-9]* (of about 8 )?steps' "$tmp/seen"; then
	pass "the steps are counted under a parent make's -s"
else
	fail "the steps are counted under a parent make's -s (all 0)"
fi
if grep -qE '^steps .*\[kernel\] *[1-7] of about 8 steps, about [0-9]+:[0-9]{2} left, ' "$tmp/seen"; then
	pass "while it counts, the progress says of how many steps and the time left"
else
	fail "while it counts, the progress says of how many steps and the time left"
fi
if grep -q '^quiet .*8 steps (about 8 expected: the link is left)' "$tmp/seen"; then
	pass "past the expected steps, it says that the link is left"
else
	fail "past the expected steps, it says that the link is left"
fi
# The counts a cold build is measured against, one per flavour build.sh has
for p in '[kernel]' '[kernel-debug]' '[kernel-rfc]'; do
	if awk -v p="$p" '$1 == p && $2 ~ /^[1-9][0-9]+$/ { found = 1 } END { exit !found }' \
		"$repo/kernel/whole-build-steps"; then
		pass "kernel/whole-build-steps has a count for $p"
	else
		fail "kernel/whole-build-steps has a count for $p"
	fi
done
echo "1..$n"
[ "$failed" -eq 0 ]
