#!/bin/bash
# test/vm/splat-scan on recorded guest console logs, and test/vm/run's exit
# status 123 for a run whose kernel reported a problem.
#
# consoles/ holds real logs from `test/vm/run --log` (trimmed), on the
# series before the issue-9 fixes:
#   clean-boot.log        test/vm/run -- true
#   oom-kill.log          ... -- build/test/vm/oom_largest_leaf --no-policy
#   oomd-might-sleep.log  ... -- test/vm/oomctl_oomd.sh build
# and hand-written ones shaped like the kernel's reports. test/vm/run is run
# with a stand-in QEMU that writes a console log and an exit status, so
# that no guest boots.
#
# usage: test-splat-scan.sh
set -u

here=$(cd "$(dirname "$0")" && pwd -P)
scan=$here/../vm/splat-scan vmrun=$here/../vm/run consoles=$here/consoles
n=0 failed=0
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT

pass() { echo "ok $((++n)) - $1"; }
fail() { echo "not ok $((++n)) - $1"; failed=$((failed + 1)); }
diag() { sed 's/^/#   /'; }

# clean LOG: no report, and nothing printed
clean() {
	local out rc=0
	out=$("$scan" "$1" 2>&1) || rc=$?
	if [ "$rc" = 0 ] && [ -z "$out" ]; then
		pass "${1##*/}: no report"
	else
		fail "${1##*/}: no report (exit $rc)"
		printf '%s\n' "$out" | diag
	fi
}

# report LOG COUNT FIRST LAST [TEXT...]: exit 1, the report shown runs from
# the message FIRST to the message LAST and holds each TEXT, and the
# summary counts COUNT reports.
report() {
	local log=$1 count=$2 first=$3 last=$4 out rc=0 msgs why="" t s=s
	shift 4
	out=$("$scan" "$log" 2>&1) || rc=$?
	# the report's messages: no summary line, no timestamps
	msgs=$(sed '$d' <<<"$out" | sed -E 's/^\[ *[0-9]+\.[0-9]+\] ?//')
	[ "$count" != 1 ] || s=""
	[ "$rc" = 1 ] || why+=" exit $rc;"
	[ "$(head -n 1 <<<"$msgs")" = "$first" ] || why+=" first line;"
	[ "$(tail -n 1 <<<"$msgs")" = "$last" ] || why+=" last line;"
	for t in "$@"; do
		grep -qF -- "$t" <<<"$msgs" || why+=" no '$t';"
	done
	[ "$(tail -n 1 <<<"$out")" = "splat-scan: $count kernel report$s found, the first one above" ] ||
		why+=" summary;"
	if [ -z "$why" ]; then
		pass "${log##*/}: $first"
	else
		fail "${log##*/}: $first:$why"
		printf '%s\n' "$out" | diag
	fi
}

# line REPORT|- CONSOLE_LINE: is that one line the start of a report?
line() {
	local want=$1 rc=0
	printf '%s\n' "$2" >"$tmp/line.log"
	"$scan" "$tmp/line.log" >/dev/null 2>&1 || rc=$?
	if { [ "$want" = REPORT ] && [ "$rc" = 1 ]; } || { [ "$want" = - ] && [ "$rc" = 0 ]; }; then
		pass "$want: $2"
	else
		fail "$want: $2 (exit $rc)"
	fi
}

c=$consoles
echo "# recorded logs without a report"
clean "$c/clean-boot.log"
clean "$c/oom-kill.log"
clean "$c/init-exit.log" # PID 1 exiting is test/vm/run's 125, not a kernel problem

echo "# recorded logs with reports"
# the first of two, not the OOM report (with its own Call Trace) after it
report "$c/oomd-might-sleep.log" 2 \
	"BUG: sleeping function called from invalid context at kernel/locking/mutex.c:283" \
	" </TASK>" "in_atomic(): 1, irqs_disabled(): 0, non_block: 0, pid: 81, name: hog" \
	" ? kernfs_xattr_get+0x2b/0x67" " ? bpf_prog_2e0e1add7d061bd9_oomd+0x37d/0x884" \
	" ? bpf_handle_out_of_memory+0x9/0xc"
report "$c/oomd-debug.log" 3 "WARNING: suspicious RCU usage" " </TASK>" \
	"Illegal context switch in RCU read-side critical section!" \
	"stack backtrace:" "lockdep_rcu_suspicious" "kernfs_xattr_get"
report "$c/lockdep-circular.log" 1 \
	"WARNING: possible circular locking dependency detected" " </TASK>" \
	"-> #1 (oom_lock){+.+.}-{3:3}:" " *** DEADLOCK ***" "stack backtrace:" \
	" bpf_copy_from_user_task+0x52/0x130"
report "$c/warning.log" 1 \
	"WARNING: CPU: 0 PID: 412 at mm/oom_kill.c:1118 bpf_oom_kill_process+0x1a9/0x1f0" \
	"---[ end trace 0000000000000000 ]---" "RIP: 0010:bpf_oom_kill_process+0x1a9/0x1f0" \
	" bpf_handle_out_of_memory+0x3e/0x90" " </TASK>"
report "$c/kasan.log" 1 \
	"BUG: KASAN: slab-use-after-free in bpf_oom_kill_process+0x1d4/0x2a0" \
	"==================================================================" \
	"Read of size 8 at addr ffff888006a3c1a8 by task hog/356" "Allocated by task 340:" \
	"Freed by task 0:" "Memory state around the buggy address:"
report "$c/hung-task.log" 1 "INFO: task oomctl:362 blocked for more than 122 seconds." \
	" </TASK>" "task:oomctl          state:D" " bpf_out_of_memory+0x61/0x1f0"
report "$c/soft-lockup.log" 1 \
	"watchdog: BUG: soft lockup - CPU#0 stuck for 26s! [declare_flood:288]" " </TASK>" \
	" </IRQ>" " bpf_prog_9e0d4c1b7a2f3e58_declare+0x3a/0x52"
report "$c/rcu-stall.log" 1 "rcu: INFO: rcu_preempt detected stalls on CPUs/tasks:" \
	"rcu: rcu_preempt kthread timer wakeup didn't happen for 21001 jiffies! g3449 f0x0 RCU_GP_WAIT_FQS(5) ->state=0x402" \
	"NMI backtrace for cpu 1" " psi_bpf_handler_work+0x2e/0x60"
report "$c/refcount.log" 1 "refcount_t: underflow; use-after-free." \
	"---[ end trace 0000000000000000 ]---" \
	"WARNING: CPU: 1 PID: 377 at lib/refcount.c:28 refcount_warn_saturate+0xba/0x110" \
	" psi_trigger_destroy+0x1c5/0x2a0" "irq event stamp: 18342"
report "$c/list-del.log" 2 \
	"list_del corruption. prev->next should be ffff888004e1d2a8, but was ffff888004e1d3a8. (prev=ffff888005a10c08)" \
	"---[ end trace 0000000000000000 ]---" "kernel BUG at lib/list_debug.c:62!" \
	"Oops: invalid opcode: 0000 [#1] PREEMPT SMP NOPTI" "Modules linked in:"

echo "# single lines"
ts="[   12.345678]"
line REPORT "$ts BUG: kernel NULL pointer dereference, address: 0000000000000000"
line REPORT "$ts BUG: scheduling while atomic: hog/351/0x00000002"
line REPORT "$ts [ BUG: Invalid wait context ]"
line REPORT "$ts WARNING: possible recursive locking detected"
line REPORT "$ts WARNING: inconsistent lock state"
line REPORT "$ts WARNING: bad unlock balance detected!"
line REPORT "$ts WARNING: lock held when returning to user space!"
line REPORT "$ts UBSAN: array-index-out-of-bounds in mm/oom_kill.c:412:9"
line REPORT "$ts kernel BUG at mm/oom_kill.c:1077!"
line REPORT "$ts Oops: general protection fault, probably for non-canonical address 0xdffffc0000000001: 0000 [#1] PREEMPT SMP KASAN NOPTI"
line REPORT "$ts general protection fault, probably for non-canonical address 0x6b6b6b6b6b6b6b6b: 0000 [#1] SMP"
line REPORT "$ts Kernel panic - not syncing: Fatal exception"
line REPORT "$ts Unable to handle kernel paging request at virtual address dead000000000108"
line REPORT "$ts rcu: INFO: rcu_preempt self-detected stall on CPU"
line REPORT "$ts rcu: INFO: rcu_sched detected expedited stalls on CPUs/tasks: { 0-... } 21002 jiffies s: 137 root: 0x1/."
line REPORT "$ts NMI watchdog: Watchdog detected hard LOCKUP on cpu 1"
line REPORT "$ts list_add corruption. next->prev should be prev (ffff888004e1d2a8), but was ffff888004e1d3a8. (next=ffff888005a10c08)."
line REPORT "$ts list_add double add: new=ffff888004e1d2a8, prev=ffff888004e1d2a8, next=ffff888005a10c08."
line REPORT "$ts refcount_t: addition on 0; use-after-free."
line REPORT "${ts}[  T351] BUG: sleeping function called from invalid context at kernel/locking/mutex.c:283"
line REPORT "$ts WARNING: CPU: 0 PID: 1 at kernel/bpf/verifier.c:20931 bpf_check+0x1e4/0x2a0"$'\r'
line - "$ts hog invoked oom-killer: gfp_mask=0xcc0(GFP_KERNEL), order=0, oom_score_adj=0"
line - "$ts Out of memory: Killed process 342 (hog) total-vm:1052712kB, anon-rss:1015808kB, file-rss:1152kB, shmem-rss:0kB, UID:0 pgtables:2028kB oom_score_adj:0"
line - "$ts oom-kill:constraint=CONSTRAINT_NONE,nodemask=(null),cpuset=/,mems_allowed=0,global_oom,task_memcg=/,task=hog,pid=342,uid=0"
line - "$ts Spectre V2 : WARNING: Unprivileged eBPF is enabled with eIBRS on, data leaks possible via Spectre v2 BHB attacks!"
line - "$ts Kernel panic - not syncing: Attempted to kill init! exitcode=0x00000100"
line - "$ts rcu: Hierarchical RCU implementation."
line - "$ts ---[ end trace 0000000000000000 ]---"
line - "echo the next line says BUG: but is user text"
line - "$ts INFO: lockdep is turned off."

echo "# a long report is cut"
{
	echo "$ts BUG: sleeping function called from invalid context at mm/slub.c:4187"
	echo "$ts Call Trace:"
	echo "$ts  <TASK>"
	for i in $(seq 120); do echo "$ts  frame_$i+0x10/0x20"; done
	echo "$ts  </TASK>"
} >"$tmp/long.log"
out=$("$scan" "$tmp/long.log")
if [ "$(wc -l <<<"$out")" = 82 ] &&
	[ "$(sed -n 81p <<<"$out")" = "[... the report goes on for 44 more lines in the log]" ]; then
	pass "a report of 124 lines: 80 shown, the rest counted"
else
	fail "a report of 124 lines: 80 shown, the rest counted"
	tail -n 5 <<<"$out" | diag
fi

rc=0
"$scan" "$tmp/none.log" 2>/dev/null || rc=$?
if [ "$rc" = 2 ]; then pass "a missing log: exit 2"; else fail "a missing log: exit 2 (got $rc)"; fi

echo "# test/vm/run, with a stand-in QEMU"
# Like QEMU it opens the guest's stderr (a FIFO that test/vm/run reads);
# it writes $FAKE_CONSOLE to the -serial file and $FAKE_STATUS (when set)
# to the status file in the per-run directory (the vmrun share), as the
# guest's init does, then sleeps $FAKE_SLEEP seconds (to be timed out).
mkdir -p "$tmp/bin" "$tmp/image/bin" "$tmp/cache"
cat >"$tmp/bin/qemu-system-x86_64" <<'EOF'
#!/bin/bash
while [ $# -gt 0 ]; do
	case $1 in
	-serial) console=${2#file:} ;;
	-chardev) case $2 in file,id=err,path=*) exec 3>"${2#*,path=}" ;; esac ;;
	-virtfs) case $2 in *,mount_tag=vmrun,*) rundir=${2#local,path=}; rundir=${rundir%%,mount_tag=*} ;; esac ;;
	esac
	shift
done
cp "$FAKE_CONSOLE" "$console"
[ -z "${FAKE_STATUS:-}" ] || echo "$FAKE_STATUS" >"$rundir/status"
[ -z "${FAKE_SLEEP:-}" ] || exec sleep "$FAKE_SLEEP"
EOF
chmod +x "$tmp/bin/qemu-system-x86_64"
: >"$tmp/image/bin/bash"
chmod +x "$tmp/image/bin/bash"
# what test/vm/run checks of a bzImage: "HdrS" at 514
{ head -c 514 /dev/zero; printf HdrS; } >"$tmp/bzImage"

# vm STATUS CONSOLE GUEST_STATUS [TEXT...]: test/vm/run with the guest
# writing CONSOLE and reporting GUEST_STATUS ("" none, "sleep" none and no
# end) exits STATUS and says each TEXT on stderr; the log it says it kept
# is CONSOLE.
vm() {
	local want=$1 console=$2 guest=$3 rc=0 err why="" t kept
	shift 3
	err=$(
		export PATH="$tmp/bin:$PATH" BPF_OOM_CACHE=$tmp/cache FAKE_CONSOLE=$console
		case $guest in
		sleep) export FAKE_SLEEP=30 ;;
		?*) export FAKE_STATUS=$guest ;;
		esac
		"$vmrun" --timeout 1 --kernel "$tmp/bzImage" --image "$tmp/image" -- true 2>&1 >/dev/null
	) || rc=$?
	[ "$rc" = "$want" ] || why+=" exit $rc;"
	for t in "$@"; do
		grep -qF -- "$t" <<<"$err" || why+=" no '$t';"
	done
	# 123 to 125 keep the log and say where; the command's status, nothing
	kept=$(sed -n 's/.*kernel console log: //p' <<<"$err")
	case $want in
	12[345]) [ -n "$kept" ] || why+=" no kept log;" ;;
	*) [ -z "$err" ] || why+=" said something;" ;;
	esac
	if [ -n "$kept" ]; then
		cmp -s "$kept" "$console" || why+=" kept log differs;"
		rm -f "$kept"
	fi
	local what="${console##*/}, command exits $guest: exit $want"
	case $guest in
	"") what="${console##*/}, guest dies: exit $want" ;;
	sleep) what="${console##*/}, guest hangs: exit $want" ;;
	esac
	if [ -z "$why" ]; then
		pass "$what"
	else
		fail "$what:$why"
		printf '%s\n' "$err" | diag
	fi
}

oomd=$c/oomd-might-sleep.log
bug="[vm] | [" # the report's lines, timestamps and all
vm 0 "$c/clean-boot.log" 0
vm 3 "$c/oom-kill.log" 3
vm 123 "$oomd" 0 "[vm] the guest kernel reported a problem (the command exited 0)" \
	"BUG: sleeping function called from invalid context at kernel/locking/mutex.c:283" \
	"$bug" "[vm] | splat-scan: 2 kernel reports found"
vm 123 "$oomd" 1 "(the command exited 1)" "kernfs_xattr_get"
vm 123 "$c/list-del.log" "" "(the guest died without an exit status (QEMU exit 0))" \
	"kernel BUG at lib/list_debug.c:62!"
vm 123 "$oomd" sleep "(timed out after 1 s)" "BUG: sleeping function called"
vm 124 "$c/clean-boot.log" sleep "[vm] timed out after 1 s"
vm 125 "$c/init-exit.log" "" "[vm] the guest died without an exit status" \
	"[vm] | init: cannot read /mnt/env"

echo "1..$n"
echo "$((n - failed)) passed, $failed failed"
[ "$failed" = 0 ]
