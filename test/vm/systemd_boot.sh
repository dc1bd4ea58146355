#!/bin/bash
# test/vm/run --systemd as the next tests use it: systemd is PID 1 and the
# boot ends running (or degraded by the units listed below), files given
# with --etc are in /etc before systemd starts (a unit there runs at boot),
# the command's exit status and the console's kernel reports still decide
# the run. Runs on the host; arguments go to test/vm/run (e.g. --kernel
# BZIMAGE). Two guests: one for the checks, one with a kernel report.
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)

# Units allowed to fail in the guest (none today); anything else failed is
# a failed check, named in its output.
expected_failed=""

if [ "${1:-}" = --guest ]; then # in the guest, from vm-command.service
	token=$2
	# "ok - what" or "not ok - what" plus "# output" lines, for the host
	say() {
		local what=$1 out; shift
		if out=$("$@" 2>&1); then echo "ok - $what"
		else echo "not ok - $what"; printf '%s\n' "$out" | sed 's/^/# /'; fi
	}
	pid1() { local c; c=$(</proc/1/comm); echo "PID 1: $c"; [ "$c" = systemd ]; }
	booted() {
		local state failed u
		state=$(systemctl is-system-running --wait)
		failed=$(systemctl list-units --failed --plain --no-legend | cut -d' ' -f1)
		echo "state: $state; failed units: ${failed:-none}"
		[ "$state" = running ] || [ "$state" = degraded ] || return 1
		for u in $failed; do
			[[ " $expected_failed " = *" $u "* ]] || return 1
		done
	}
	etc_file() { cat /etc/oomctl/oomctl.conf; [ "$(</etc/oomctl/oomctl.conf)" = "$token" ]; }
	# the --etc unit ran at boot: its wants link and unit were in place
	# before systemd started; the image's files beside them are still there
	etc_unit() {
		systemctl status vm-etc-probe.service
		[ "$(systemctl is-active vm-etc-probe.service)" = active ] &&
			[ "$(</run/vm-etc-probe)" = "$token" ] &&
			[ -d /etc/systemd/system/timers.target.wants ] &&
			[ -f /etc/default/locale ]
	}
	guest_env() {
		local o; o=$(command -v oomctl); echo "oomctl: $o; cwd: $PWD"
		[ "$o" = "$3/build/cli/oomctl" ] && [ "$PWD" = "$4" ]
	}
	say "PID 1 is systemd" pid1
	say "the boot ends running or degraded, no unexpected failed unit" booted
	say "a file given with --etc is in /etc" etc_file
	say "a unit given with --etc ran at boot; the image's /etc is kept" etc_unit
	say "the command finds oomctl and runs in the host's directory" guest_env "$@"
	# a kernel message from the command is in the console log
	echo "<4>systemd_boot: console probe $token" >/dev/kmsg
	exit 42 # the host checks that this status comes through
fi

. "$here/lib.sh"
repo=$(cd "$here/../.." && pwd -P)
tmp=$(mktemp -d /tmp/bpf-oom-systemd.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
token=probe-$$-$RANDOM
mkdir -p "$tmp/etc/oomctl" "$tmp/etc/systemd/system/multi-user.target.wants"
echo "$token" >"$tmp/etc/oomctl/oomctl.conf"
cat >"$tmp/etc/systemd/system/vm-etc-probe.service" <<EOF
[Unit]
Description=systemd_boot.sh's unit from --etc
[Service]
Type=oneshot
RemainAfterExit=yes
ExecStart=/bin/sh -c 'echo $token >/run/vm-etc-probe'
EOF
ln -s ../vm-etc-probe.service "$tmp/etc/systemd/system/multi-user.target.wants/"

rc=0
(cd "$repo" && "$here/run" --timeout 300 "$@" --systemd --etc "$tmp/etc" \
	--log "$tmp/console.log" -- "$here/systemd_boot.sh" --guest "$token" \
	"$repo" "$repo") >"$tmp/out" 2>"$tmp/err" || rc=$?
# The guest's verdicts, as checks here, with the output it gave for them
what="" verdict="" shown=""
flush() {
	[ -z "$what" ] ||
		check "$what" sh -c 'printf "%s" "$1"; [ "$2" = ok ]' - "$shown" "$verdict"
	what="" shown=""
}
while IFS= read -r line; do
	case $line in
	"ok - "*) flush; verdict=ok what=${line#ok - } ;;
	"not ok - "*) flush; verdict=failed what=${line#not ok - } ;;
	"# "*) shown+=${line#\# }$'\n' ;;
	esac
done <"$tmp/out"
flush
verdicts() { cat "$tmp/out"; [ "$(grep -c '^ok - ' "$tmp/out")" = 5 ]; }
check "the guest gave its 5 verdicts, all ok" verdicts
status() { echo "run exited $rc; stderr:"; cat "$tmp/err"; [ "$rc" = 42 ]; }
check "the command's failing status (42) is the run's" status
console() { grep -q "\] systemd_boot: console probe $token" "$tmp/console.log"; }
check "kernel messages during the command reach the console log" console

# A kernel report on the console fails the run as without systemd (123)
rc=0
"$here/run" --timeout 300 "$@" --systemd -- \
	'echo "<4>WARNING: CPU: 0 PID: 1 at systemd_boot.sh: a planted report" >/dev/kmsg' \
	>"$tmp/out" 2>"$tmp/err" || rc=$?
splat() { echo "run exited $rc; stderr:"; cat "$tmp/err"; [ "$rc" = 123 ] && grep -q 'a planted report' "$tmp/err"; }
check "a kernel report under systemd fails the run (123)" splat
done_checks
