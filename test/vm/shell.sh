#!/bin/bash
# The shell README offers (test/vm/run --shell), driven as a person would:
# through a pseudo-terminal (script), typing oomctl and man there.
# Runs on the host; arguments go to test/vm/run (e.g. --kernel BZIMAGE).
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
. "$here/lib.sh"

command -v script >/dev/null || bail "script (util-linux) is missing"
tmp=$(mktemp -d /tmp/bpf-oom-shell.XXXXXX)
trap 'exec 3>&- 2>/dev/null; rm -rf "$tmp"' EXIT
mkfifo "$tmp/in"

# Typed only once the guest's banner is out, as a person would. The status
# lines are told from their echo: the echo shows "$?", not its value.
cmd=$(printf '%q ' "$here/run" --timeout 300 "$@" --shell)
timeout -k 5 300 script -qfec "$cmd" "$tmp/typescript" <"$tmp/in" >/dev/null &
pid=$!
exec 3>"$tmp/in"
for _ in $(seq 1200); do
	grep -qa 'exit the shell to power off' "$tmp/typescript" 2>/dev/null && break
	kill -0 "$pid" 2>/dev/null || break
	sleep 0.1
done
printf '%s\n' 'oomctl policy list; echo "policy-list-status:$?"' \
	'command -v oomctl; man -w 8 oomctl; echo "man-w-status:$?"' 'exit 7' >&3
rc=0
wait "$pid" || rc=$?
exec 3>&-
# Without the terminal's control sequences (bash turns bracketed paste off
# right before a command's output, so an empty output leaves one in front
# of the next line)
session=$(tr -d '\r' <"$tmp/typescript" | sed 's/\x1b\[[0-9;?]*[A-Za-z]//g')

shows() { printf '%s\n' "$session" | grep -qx "$1" || { printf '%s\n' "$session"; false; }; }
check "oomctl policy list runs in the shell (exit 0)" shows 'policy-list-status:0'
check "man -w 8 oomctl finds the manual page (exit 0)" shows 'man-w-status:0'
# The image has systemd-oomd's oomctl(1) and /usr/bin/oomctl too: the shell
# must find the project's, as built in the repo
repo=$(cd "$here/../.." && pwd -P)
check "oomctl is the repo's build" shows "$repo/build/cli/oomctl"
check "oomctl(8) is the repo's page" shows "$repo/build/man/man8/oomctl.8"
exits() { [ "$rc" = "$1" ] || { echo "runner exited $rc; session:"; printf '%s\n' "$session"; false; }; }
check "the runner returns the shell's exit status (7)" exits 7
done_checks
