#!/bin/bash
# oomctl units as systemd-oomd.service (the packaged drop-in
# managed-oom.conf) in a systemd guest, on the scenarios of
# systemd's own TEST-55-OOMD with its unit settings: a slice with
# ManagedOOMMemoryPressure=kill at 20 %, oomd.conf's duration at 2 s, a
# thrasher (testbloat: MemoryHigh=5M) beside an idle unit (testchill).
# systemd-oomd does not run; the kills come from the kernel. Checked: the
# thrasher is killed and the idle unit lives, without swap and with it;
# ManagedOOMPreference=avoid spares the avoided unit; a unit's limit and
# oomd.conf's defaults make the trigger; a unit that stops takes its policy
# and trigger with it, and so does the service. Our kill times are printed,
# not checked. With MANAGED_OOM_COMPARE=1 (test/bench/run does it), the same
# stories run last under systemd-oomd, timed the same way, for its figures.
#
# On the host: managed_oom.sh BUILD_DIR [test/vm/run OPTIONS...]; in the
# guest the same script runs with --guest BUILD_DIR.
set -u
here=$(cd "$(dirname "$0")" && pwd)

if [ "${1:-}" != --guest ]; then
	build=$(cd "${1:?usage: managed_oom.sh BUILD_DIR [RUN_OPTIONS...]}" && pwd)
	shift
	exec "$here/run" --systemd --timeout 900 "$@" -- \
		env MANAGED_OOM_COMPARE="${MANAGED_OOM_COMPARE:-0}" \
		"$here/managed_oom.sh" --guest "$build"
fi

build=${2:?usage: managed_oom.sh --guest BUILD_DIR}
. "$here/lib.sh"
OOMCTL=$build/cli/oomctl HOG=$build/test/vm/hog
oomctl() { "$OOMCTL" "$@"; }
units=/run/systemd/system
managed=/run/oomctl/oomctl.conf.d/50-managed-oom.conf
# a dash in a slice's name nests it: testsuite.slice/testsuite-55.slice/...
slice=/testsuite.slice/testsuite-55.slice/testsuite-55-workload.slice
bloat=testsuite-55-testbloat.service chill=testsuite-55-testchill.service
munch=testsuite-55-testmunch.service

mkdir -p $units /run/systemd/oomd.conf.d
# init-systemd masks the user-space killers: systemd-oomd is the one here
rm -f $units/systemd-oomd.service $units/systemd-oomd.socket
dropin=$units/systemd-oomd.service.d/oomctl.conf
mkdir -p ${dropin%/*}
# the packaged drop-in, with the build's oomctl, and a drop-in after it,
# as oomctl-units(8)'s example writes one, that follows 5 units a user
# (16 by default; each costs an attach, some 4 s under TCG; the stories
# below have at most 4 of testuser's at once before its 6th is refused)
units_a_user=5
units_dropin=${dropin%/*}/user-units.conf
managed_on() {
	sed "s|/usr/sbin/oomctl|$OOMCTL|" "$here/../../cli/packaging/managed-oom.conf" >$dropin
	printf '[Service]\nExecStart=\nExecStart=%s units user-units %s\n' \
		"$OOMCTL" $units_a_user >$units_dropin
	systemctl daemon-reload
}
managed_off() { rm -f $dropin $units_dropin; systemctl daemon-reload; }
# TEST-55-OOMD's settings; its thrashers are stress(1), ours the hog
printf '[OOM]\nDefaultMemoryPressureDurationSec=2s\n' \
	>/run/systemd/oomd.conf.d/99-oomd-test.conf
printf '[Slice]\nManagedOOMMemoryPressure=kill\nManagedOOMMemoryPressureLimit=20%%\n' \
	>$units/testsuite-55-workload.slice
thrasher() {	# thrasher MEMORY_HIGH MIB
	printf '[Service]\nMemoryHigh=%s\nSlice=testsuite-55-workload.slice\nEnvironment=HOG_CYCLE=1\nExecStart=%s %s\n' \
		"$1" "$HOG" "$2"
}
thrasher 5M 200 >$units/$bloat
thrasher 5M 150 >$units/$munch
printf '[Service]\nMemoryHigh=3M\nSlice=testsuite-55-workload.slice\nExecStart=%s 1\n' \
	"$HOG" >$units/$chill
# A slice that sets no limit: oomd.conf's default (60 %) applies
printf '[Slice]\nManagedOOMMemoryPressure=kill\n' >$units/fallback.slice
printf '[Service]\nSlice=fallback.slice\nExecStart=/bin/sleep infinity\n' \
	>$units/fallback-idle.service
systemctl daemon-reload

start_service() {
	managed_on && systemctl restart systemd-oomd.service && return
	journalctl -b -u systemd-oomd.service -o cat | tail -n 20
	return 1
}
check "with the drop-in, systemd-oomd.service (re)starts as oomctl units" start_service
pid=$(prop systemd-oomd.service MainPID)
[ "$(prop systemd-oomd.service ActiveState)" = active ] &&
	[[ $(tr '\0' ' ' </proc/$pid/cmdline) == "$OOMCTL units user-units $units_a_user " ]] ||
	bail "systemd-oomd.service does not run oomctl units"
rss=$(awk '/^VmRSS/ {print $2 " " $3}' /proc/$pid/status)
echo "# footprint: one process, oomctl units, VmRSS $rss"
check "with no unit asking, the drop-in names no cgroup" \
	bash -c "! grep -v '^#' $managed"
# Debian's systemd-oomd package sets ManagedOOMSwap=kill on -.slice
check "ManagedOOMSwap=kill (-.slice's) is refused, and the journal says why" bash -c \
	"journalctl -b -u systemd-oomd.service -o cat | grep -qx '/: ManagedOOMSwap=kill is not enforced: no kernel event marks swap use crossing a limit (oomctl-units(8))'"
# TEST-55's own overrides of the package's defaults (user@.service's 50 %)
mkdir -p $units/-.slice.d $units/user@.service.d
printf '[Slice]\nManagedOOMSwap=auto\n' >$units/-.slice.d/99-oomd-test.conf
printf '[Service]\nManagedOOMMemoryPressure=auto\nManagedOOMMemoryPressureLimit=0%%\n' \
	>$units/user@.service.d/99-oomd-test.conf
systemctl daemon-reload

# in_dropin REGEX [SECONDS]: the daemon has written a line matching REGEX
in_dropin() {
	for _ in $(seq $(( ${2:-20} * 10 ))); do
		grep -qE "$1" $managed 2>/dev/null && return 0
		sleep 0.1
	done
	cat $managed
	return 1
}
# gone_from_dropin REGEX: no line matches REGEX any more
gone_from_dropin() {
	for _ in $(seq 200); do
		grep -qE "$1" $managed 2>/dev/null || return 0
		sleep 0.1
	done
	cat $managed
	return 1
}
# wait_stopped UNIT [SECONDS]: the unit is no longer active
wait_stopped() {
	for _ in $(seq $(( ${2:-120} * 10 ))); do
		case $(prop "$1" ActiveState) in active|activating|deactivating) ;;
		*) return 0 ;; esac
		sleep 0.1
	done
	return 1
}
# kill_ms UNIT: from the start of its main process to its death
kill_ms() {
	echo $(( ($(prop "$1" ExecMainExitTimestampMonotonic) - \
		  $(prop "$1" ExecMainStartTimestampMonotonic)) / 1000 ))
}
# story WHAT ARMED: testchill starts, then, once ARMED says the killer
# watches the slice, testbloat; testbloat must die, testchill live. Sets MS
# to testbloat's kill time from its start, or "never within 120 s".
story() {
	systemctl start $chill
	check "$1: the slice is watched" eventually $2
	[ "$2" = armed_ours ] || calm
	systemctl start $bloat
	if wait_stopped $bloat 120; then MS=$(kill_ms $bloat); else MS="never within 120 s"; fi
	check "$1: testbloat is killed ($MS ms after its start)" \
		test "$(prop $bloat ActiveState)" != active
	check "$1: ... and testchill lives" test "$(prop $chill ActiveState)" = active
	oomctl event list | tail -n 3 | sed 's/^/# /'
	systemctl stop $bloat $chill 2>/dev/null
}
armed_ours() { policy_of_slice && trigger_of_slice; }
# calm: the slice's 10 s average of full stall is below 5 %, as after a
# quiet while: systemd-oomd, which acts on that average, would act at once
# on what is left of the last story's (the trigger looks at its window only)
calm() {
	for _ in $(seq 600); do
		awk '/^full/ {split($2, a, "="); exit !(a[2] < 5)}' $CG$slice/memory.pressure && return
		sleep 0.1
	done
}
# systemd's own oomctl, as TEST-55 asks it
armed_oomd() { /usr/bin/oomctl | grep -q "Path: $slice"; }

# eventually COMMAND...: it succeeds within 20 s (the daemon writes the
# drop-in, then applies it)
eventually() {
	for _ in $(seq 200); do
		"$@" >/dev/null 2>&1 && return 0
		sleep 0.1
	done
	"$@"
}
policy_of_slice() {
	json "[.policies[] | select(.scope == \"$slice\" and .mode == \"kill\" and (.name | test(\"^oomd-[0-9a-f]{10}\$\")))] | length == 1" \
		oomctl -j policy list
}
trigger_of_slice() {
	json "[.triggers[] | select(.cgroup == \"$slice\" and .kind == \"full\" and .stall_us == $stall and .window_us == $window and .pause_us == 15000000)] | length == 1" \
		oomctl -j psi list
}
systemctl start $chill
stall=400000 window=2000000	# 20 % of 2 s
check "a unit of the slice starts: the drop-in has the slice's policy" \
	in_dropin "^policy attach oomd scope $slice name oomd-[0-9a-f]{10}\$"
check "... and its trigger: full, 20 % of oomd.conf's 2 s" \
	in_dropin "^psi add $slice full ${stall}us ${window}us pause 15s\$"
check "the policy is attached to the slice's cgroup" eventually policy_of_slice
check "the trigger is armed on it" eventually trigger_of_slice
systemctl stop $chill

story "no swap" armed_ours
ours_noswap=$MS
check "no swap: the kill is the slice's policy's, in the kernel" \
	json "[.events[] | select(.type == \"kill\")] | last | .cgroup == \"$slice/$bloat\" and (.chosen_by | startswith(\"oomd-\"))" \
	oomctl -j event list
check "no swap: systemd saw an OOM kill (Result=oom-kill)" \
	test "$(prop $bloat Result)" = oom-kill

systemctl start fallback-idle.service
check "a slice with no limit of its own: oomd.conf's 60 % of 2 s" \
	in_dropin "^psi add /fallback.slice full 1200000us 2000000us pause 15s\$"
systemctl stop fallback-idle.service fallback.slice
check "... stopped, its lines go" gone_from_dropin "/fallback.slice"

# TEST-55's last part: testbloat avoided, testmunch thrashes beside it
mkdir -p $units/$bloat.d
printf '[Service]\nManagedOOMPreference=avoid\n' >$units/$bloat.d/avoid.conf
systemctl daemon-reload
seq0=$(oomctl -j event list | jq '[.events[].seq] | max // 0')
systemctl start $chill $munch $bloat
check "ManagedOOMPreference=avoid: systemd marks testbloat's cgroup" bash -c \
	"getfattr --only-values -n user.oomd_avoid $CG$slice/$bloat | grep -qx 1"
if wait_stopped $munch 120; then MS=$(kill_ms $munch); else MS="never within 120 s"; fi
check "avoid: testmunch is killed ($MS ms)" test "$(prop $munch ActiveState)" != active
# testbloat thrashes on: the next events after the trigger's 15 s pause
# kill testchill, then testbloat. The log's order, not the units' states at
# some moment, says who went first.
victims() { oomctl -j event list | jq -c "[.events[] | select(.type == \"kill\" and .seq > $seq0) | .cgroup | ltrimstr(\"$slice/\")]"; }
check "avoid: ... the first of the slice's units to die ($(victims))" json \
	"[.events[] | select(.type == \"kill\" and .seq > $seq0)] | first | .cgroup == \"$slice/$munch\"" \
	oomctl -j event list
check "avoid: testbloat, avoided, is not killed before testchill" json \
	"index(\"$bloat\") == null or (index(\"$chill\") != null and index(\"$chill\") < index(\"$bloat\"))" \
	victims
systemctl stop $bloat $chill $munch
rm -r $units/$bloat.d
systemctl daemon-reload

systemctl stop testsuite-55-workload.slice
check "the slice stopped: its lines leave the drop-in" gone_from_dropin "$slice"
check "... its policy is detached" eventually json \
	"[.policies[] | select(.name | startswith(\"oomd-\"))] | length == 0" oomctl -j policy list
check "... and no trigger is left on it" eventually json \
	"[.triggers[] | select(.cgroup == \"$slice\")] | length == 0" oomctl -j psi list

check "swap on /dev/ram0" bash -c 'mkswap /dev/ram0 >/dev/null && swapon /dev/ram0'
story "swap" armed_ours
ours_swap=$MS

# A user unit: the user manager reports it on systemd-oomd.socket's socket,
# which the service was passed
useradd -M -u 1000 testuser
user_units=/run/systemd/user
mkdir -p $user_units
cp $units/testsuite-55-workload.slice $units/$bloat $units/$chill $user_units/
uslice=/user.slice/user-1000.slice/user@1000.service$slice
usystemctl() { runuser -u testuser -- env XDG_RUNTIME_DIR=/run/user/1000 systemctl --user "$@"; }
uprop() { usystemctl show -P "$2" "$1"; }
check "the user manager of testuser starts" systemctl start user@1000.service
usystemctl start $chill $bloat
check "user unit: the drop-in has the user's slice" \
	in_dropin "^psi add $uslice full ${stall}us ${window}us pause 15s\$"
for _ in $(seq 1200); do
	[ "$(uprop $bloat ActiveState)" = active ] || break
	sleep 0.1
done
check "user unit: testbloat is killed" test "$(uprop $bloat ActiveState)" != active
check "user unit: ... and testchill lives" test "$(uprop $chill ActiveState)" = active
upolicy=$(oomctl -j policy list | jq -r ".policies[] | select(.scope == \"$uslice\") | .name")
check "user unit: the kill is the user slice's policy's (${upolicy:-none})" \
	json "[.events[] | select(.type == \"kill\")] | last | .cgroup == \"$uslice/$bloat\" and .chosen_by == \"$upolicy\"" \
	oomctl -j event list
usystemctl stop $chill $bloat
# A user may report only cgroups of its own
# report [limit=N] MODE PATH... [MODE PATH...]: one message of user
# $REPORTER (testuser), ManagedOOMMemoryPressure=MODE of each PATH that
# follows MODE, with the limit N (2^32 = 100 %) of the limit= before it
report() {
	runuser -u "${REPORTER:-testuser}" -- python3 -c '
import json, socket, sys
s = socket.socket(socket.AF_UNIX)
s.connect("/run/systemd/oom/io.system.ManagedOOM")
cgroups, mode, limit = [], None, None
for a in sys.argv[1:]:
    if a in ("kill", "auto"):
        mode = a
    elif a.startswith("limit="):
        limit = int(a[6:])
    else:
        cgroups.append({"mode": mode, "path": a,
                        "property": "ManagedOOMMemoryPressure"})
        if limit is not None:
            cgroups[-1]["limit"] = limit
m = {"method": "io.systemd.oom.ReportManagedOOMCGroups", "oneway": True,
     "parameters": {"cgroups": cgroups}}
s.sendall(json.dumps(m).encode() + b"\0")
s.close()' "$@"
}
# in_journal LINE: the service said LINE (within 10 s)
in_journal() {
	for _ in $(seq 100); do
		journalctl -b -u systemd-oomd.service -o cat | grep -qxF -- "$1" && return 0
		sleep 0.1
	done
	journalctl -b -u systemd-oomd.service -o cat | tail -n 5
	return 1
}
mkdir -p $CG/notyours
report kill /notyours
check "a user's report on root's cgroup is refused, and said so" \
	in_journal "user 1000 may not manage /notyours: not its cgroup"
check "... and is in no line" bash -c "! grep -q /notyours $managed"
rmdir $CG/notyours
# A path systemd would not make: a tab would start another word of the line
umgr=/user.slice/user-1000.slice/user@1000.service
runuser -u testuser -- mkdir "$CG$umgr/tab"$'\t'"dry-run"
report kill "$umgr/tab"$'\t'"dry-run"
check "a user's cgroup path with a tab is refused, and said so" \
	in_journal "user 1000 sent a cgroup path systemd would not make: ignored"
check "... and is in no line" bash -c "! grep -q '$umgr/tab' $managed"
# A user's units beyond user-units are refused: each one costs a BPF object
usystemctl stop testsuite-55-workload.slice
gone_from_dropin "$uslice" >/dev/null
caps=()
over=$((units_a_user + 1))
for i in $(seq $over); do
	runuser -u testuser -- mkdir "$CG$umgr/cap$i"
	caps+=("$umgr/cap$i")
done
report kill "${caps[@]}"
check "a user's unit beyond user-units ($over) is refused, and said so" \
	in_journal "user 1000 may not manage $umgr/cap$over: it has $units_a_user units already"
# followed CGROUP_PREFIX N: N lines of triggers under the prefix, all
# applied (attaches take a while under TCG)
followed() {
	for _ in $(seq 600); do
		[ "$(grep -c "^psi add $1" $managed)" = "$2" ] &&
			[ "$(oomctl -j psi list | jq "[.triggers[] | select(.cgroup | startswith(\"$1\"))] | length")" = "$2" ] &&
			return 0
		sleep 0.1
	done
	grep -c "^psi add $1" $managed
	oomctl psi list
	journalctl -b -u systemd-oomd.service -o cat | tail -n 5
	return 1
}
check "... its $units_a_user others are followed" followed "$umgr/cap" $units_a_user
# One stops and the last asks again, then the stopped one: it would be
# one too many now
report auto "$umgr/cap1"
gone_from_dropin "^psi add $umgr/cap1 " >/dev/null
report kill "$umgr/cap$over" "$umgr/cap1"
check "a user's stopped unit asking again counts against its $units_a_user" \
	in_journal "user 1000 may not manage $umgr/cap1: it has $units_a_user units already"
check "... $units_a_user are followed" followed "$umgr/cap" $units_a_user
report auto "${caps[@]}"
check "... and when they stop, they go" gone_from_dropin "$umgr/cap"

# PID 1's kill on a cgroup that a user owns (user@.service's, as Debian's
# package asks) holds whatever the user says of that cgroup
systemctl set-property --runtime user@1000.service ManagedOOMMemoryPressure=kill
check "PID 1 asks a kill on user@1000.service: the drop-in has it" \
	in_dropin "^psi add $umgr full "
pid1_line=$(grep "^psi add $umgr full " $managed)
runuser -u testuser -- mkdir "$CG$umgr/probe"
report auto "$umgr" kill "$umgr/probe"
check "... testuser's report on it and on a cgroup below is taken" \
	in_dropin "^psi add $umgr/probe full "
check "... the user's \"auto\" for it (its own cgroup) does not take it away" \
	grep -qxF "$pid1_line" $managed
report limit=4294967295 kill "$umgr" auto "$umgr/probe"
gone_from_dropin "^psi add $umgr/probe " >/dev/null
check "... nor does its own kill at 100 %: one line, PID 1's limit" \
	test "$(grep "^psi add $umgr full " $managed)" = "$pid1_line"
mkdir $CG/rootprobe
REPORTER=root report auto "$umgr" kill /rootprobe
check "... root on the users' socket is a user: its report is taken" \
	in_dropin "^psi add /rootprobe full "
check "... and its \"auto\" does not take PID 1's away" \
	grep -qxF "$pid1_line" $managed
REPORTER=root report auto /rootprobe
gone_from_dropin "^psi add /rootprobe " >/dev/null
rmdir $CG/rootprobe
# Policies it detached, and the others, are the pins' alone: the service
# holds no link (it held one a link it ever made, which kept a detached
# policy attached, and the cgroup refused the next one with EBUSY)
pid=$(prop systemd-oomd.service MainPID)
check "the service holds no BPF link of its own" \
	test "$(find /proc/$pid/fd -lname 'anon_inode:bpf_link' | wc -l)" = 0
# A user cannot stop the service: a method that is not a string
runuser -u testuser -- python3 -c '
import socket
s = socket.socket(socket.AF_UNIX)
s.connect("/run/systemd/oom/io.system.ManagedOOM")
s.sendall(b"{\"method\": null}\0not json\0")
s.close()'
# (each check its own cgroup: a policy detached in the service, then
# attached again on the same cgroup, was refused with EBUSY: not solved)
runuser -u testuser -- mkdir "$CG$umgr/probe2" "$CG$umgr/probe3"
report kill "$umgr/probe2"
check "a message with a null method is dropped: the service lives on" \
	in_dropin "^psi add $umgr/probe2 full "
check "... the same process ($pid)" test "$(prop systemd-oomd.service MainPID)" = "$pid"
# A path whose policy name (40 bits of its hash) is user@1000.service's
collide=$umgr/yCfJvY4
runuser -u testuser -- mkdir "$CG$collide"
report kill "$collide" "$umgr/probe3"
check "a user's cgroup with the policy name of PID 1's unit: not followed, said so" \
	in_journal "$collide: its policy name $(oomctl -j policy list | jq -r ".policies[] | select(.scope == \"$umgr\") | .name") is another cgroup's already: not followed"
check "... and the rest of the report is: its policy is attached" eventually json \
	"any(.policies[]; .scope == \"$umgr/probe3\")" oomctl -j policy list
report auto "$collide" "$umgr/probe2" "$umgr/probe3"
gone_from_dropin "^psi add $umgr/probe" >/dev/null
rmdir "$CG$collide" "$CG$umgr/probe2" "$CG$umgr/probe3"
systemctl set-property --runtime user@1000.service ManagedOOMMemoryPressure=auto
check "PID 1's \"auto\" leaves testuser's own kill of its cgroup, at its 100 %" \
	in_dropin "^psi add $umgr full ${window}us ${window}us pause 15s\$"
report auto "$umgr"
check "... which testuser's \"auto\" takes away" gone_from_dropin "^psi add $umgr"
rmdir "$CG$umgr/probe"

# One user's idle connections cannot make the other users wait: a user
# keeps 4 at most. testuser2 has no user manager, which would hold one;
# its 300 are more than the service's table of 256.
useradd -M -u 1001 testuser2
runuser -u testuser -- mkdir "$CG$umgr/conn"
runuser -u testuser2 -- python3 -c '
import select, socket, time
conns = set()
for _ in range(300):
    s = socket.socket(socket.AF_UNIX)
    s.connect("/run/systemd/oom/io.system.ManagedOOM")
    conns.add(s)
end = time.monotonic() + 20
while conns and time.monotonic() < end:
    for s in select.select(list(conns), [], [], 1)[0]:
        if s.recv(1) == b"":
            conns.discard(s)
    if len(conns) <= 4:
        end = min(end, time.monotonic() + 2)	# and no fewer, 2 s on
print(len(conns), flush=True)
time.sleep(120)' >/tmp/held &
holder=$!
for _ in $(seq 300); do [ -s /tmp/held ] && break; sleep 0.1; done
check "300 idle connections of testuser2: 4 are kept ($(cat /tmp/held))" \
	test "$(cat /tmp/held)" = 4
report kill "$umgr/conn"
check "... and testuser's report is followed meanwhile" \
	in_dropin "^psi add $umgr/conn full "
kill $holder
wait $holder
report auto "$umgr/conn"
gone_from_dropin "^psi add $umgr/conn " >/dev/null
rmdir "$CG$umgr/conn"
rmdir "${caps[@]/#/$CG}" "$CG$umgr/tab"$'\t'"dry-run"

systemctl start $chill
in_dropin "$slice" >/dev/null
# the socket too: a user manager's next report would start the service
check "stopping the service detaches the units' policies" bash -c \
	"systemctl stop systemd-oomd.socket systemd-oomd.service && ! test -e $managed && ! $OOMCTL policy list | grep -q oomd-"
systemctl stop $chill

# systemd 254 and later send a unit's own ManagedOOMMemoryPressureDurationSec=
# ("duration"); 252 has none. A PID 1 stand-in, in a mount namespace of its
# own, sends one: 20 % of 5 s.
fake_pid1() {
	timeout 60 unshare -m bash -c '
	mount -t tmpfs tmpfs /run/systemd || exit 1
	python3 -c "
import json, socket, sys
s = socket.socket(socket.AF_UNIX)
s.bind(\"/run/systemd/io.system.ManagedOOM\")
s.listen(1)
c, _ = s.accept()
c.recv(4096)
u = {\"mode\": \"kill\", \"path\": sys.argv[1], \"property\": \"ManagedOOMMemoryPressure\",
     \"limit\": 858993459, \"duration\": 5000000}
c.sendall(json.dumps({\"parameters\": {\"cgroups\": [u]}, \"continues\": True}).encode() + b\"\\0\")
c.recv(1)
" "$1" &
	for _ in $(seq 100); do [ -S /run/systemd/io.system.ManagedOOM ] && break; sleep 0.1; done
	"$2" units & pid=$!
	for _ in $(seq 200); do grep -q "^psi add" "$3" 2>/dev/null && break; sleep 0.1; done
	grep "^psi add" "$3"
	kill $pid; wait $pid
	' fake "$slice" "$OOMCTL" "$managed" 2>&1
}
systemctl start $chill
duration_line() {
	fake_pid1 >/tmp/fake_pid1.out
	cat /tmp/fake_pid1.out
	grep -qx "psi add $slice full 1000000us 5000000us pause 15s" /tmp/fake_pid1.out
}
check "a unit's own duration makes the window: 20 % of 5 s" duration_line
check "... and the stand-in's oomctl units, stopped, leaves nothing" bash -c \
	"! test -e $managed && ! $OOMCTL policy list | grep -q oomd-"
systemctl stop $chill

echo "# kill time from testbloat's start: oomctl $ours_noswap ms without swap, $ours_swap ms with swap"
if [ "${MANAGED_OOM_COMPARE:-0}" != 1 ]; then
	done_checks
	exit
fi

# The same stories under systemd-oomd, timed the same way
managed_off
systemctl restart systemd-oomd.socket systemd-oomd.service
story "systemd-oomd, swap" armed_oomd
oomd_swap=$MS
swapoff /dev/ram0
systemctl start $chill
eventually armed_oomd
calm
systemctl start $bloat
if wait_stopped $bloat 30; then oomd_noswap="$(kill_ms $bloat) ms"; else oomd_noswap="never within 30 s"; fi
oomd_chill=$(prop $chill ActiveState)
systemctl stop $bloat $chill 2>/dev/null
echo "# systemd-oomd: $oomd_swap ms with swap; without swap testbloat: $oomd_noswap, testchill: $oomd_chill"
done_checks
