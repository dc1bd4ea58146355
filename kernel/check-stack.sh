#!/bin/bash
# The stack frames of the kfuncs that run deep inside an allocation (OOM
# policies call them from out_of_memory(), under reclaim): each must stay
# within a budget, so that what a policy's message needs is not on the
# stack (issue 19 i). Reads the built vmlinux; prints each frame.
#
#   kernel/check-stack.sh [KERNEL_CACHE]
set -euo pipefail

cache=${1:-${BPF_OOM_CACHE:-/var/cache/bpf-oom}/kbuild/debian~bookworm}
vmlinux=$cache/linux-build/vmlinux
checkstack=$cache/linux-src/scripts/checkstack.pl
[ -r "$vmlinux" ] && [ -r "$checkstack" ] ||
	{ echo "check-stack: no $vmlinux or $checkstack (build the image)" >&2; exit 1; }

# function budget (bytes): 0 (saved registers only) and 176 today; the
# report's buffers on the stack made bpf_oom_kill_process's frame 480 bytes
budgets="bpf_oom_kill_process 128
bpf_out_of_memory 256"
fail=0
while read -r fn budget; do
	code=$(objdump -d --no-show-raw-insn --disassemble="$fn" "$vmlinux")
	# checkstack.pl reports the stack adjustments; a function that only
	# saves registers has none, and a frame of 0
	size=$(perl "$checkstack" x86_64 0 <<<"$code" | awk '{ print $NF }' |
		sort -n | tail -n 1)
	if ! grep -q "<$fn>:\$" <<<"$code"; then
		echo "FAIL $fn: not in $vmlinux"; fail=1
	elif [ -z "$size" ]; then
		echo "ok   $fn: no stack adjustment (budget $budget)"
	elif [ "$size" -gt "$budget" ]; then
		echo "FAIL $fn: a $size-byte stack frame, over $budget"; fail=1
	else
		echo "ok   $fn: a $size-byte stack frame (budget $budget)"
	fi
done <<<"$budgets"
exit $fail
