#!/bin/bash
# oomctl.service in a systemd guest (test/vm/run --systemd): the unit of the
# package, enabled in /etc, applies /etc/oomctl/oomctl.conf at boot, so the
# configured policy and trigger are in force with no command typed, and a
# service that overruns its MemoryMax during the boot is killed by the
# configured policy and logged before any interactive oomctl command. Then
# a broken file makes the unit fail visibly and leaves the state as it was.
# Last, a policy scoped to a unit whose restart makes its cgroup anew is
# listed as orphaned, and the next apply attaches it to the new cgroup.
#
# On the host: oomctl_apply_boot.sh BUILD_DIR [test/vm/run OPTIONS...]
# writes the guest's /etc files into BUILD_DIR/test/vm/apply-boot-etc and
# boots the guest; in it, the same script runs with --guest BUILD_DIR.
set -u
here=$(cd "$(dirname "$0")" && pwd)

if [ "${1:-}" != --guest ]; then
	build=$(cd "${1:?usage: oomctl_apply_boot.sh BUILD_DIR [RUN_OPTIONS...]}" && pwd)
	shift
	etc=$build/test/vm/apply-boot-etc
	rm -rf "$etc" && mkdir -p "$etc/systemd/system/sysinit.target.wants" \
		"$etc/systemd/system/multi-user.target.wants" "$etc/oomctl" || exit 1
	# The packaged unit as it is, with the build's oomctl for /usr/sbin's
	sed "s|/usr/sbin/oomctl|$build/cli/oomctl|" \
		"$here/../../cli/packaging/oomctl.service" \
		>"$etc/systemd/system/oomctl.service" || exit 1
	ln -s ../oomctl.service "$etc/systemd/system/sysinit.target.wants/"
	cat >"$etc/oomctl/oomctl.conf" <<-CONF
	# what the guest boots with
	policy attach largest-leaf scope /system.slice
	psi add /system.slice some 150ms 1s
	CONF
	# A service that overruns its limit once the boot reaches it
	cat >"$etc/systemd/system/boot-hog.service" <<-UNIT
	[Unit]
	Description=A hog that the configured policy kills during the boot
	After=oomctl.service
	[Service]
	Type=exec
	MemoryMax=48M
	MemorySwapMax=0
	ExecStart=$build/test/vm/hog 200
	[Install]
	WantedBy=multi-user.target
	UNIT
	ln -s ../boot-hog.service "$etc/systemd/system/multi-user.target.wants/"
	# A unit to scope a policy to, restarted by the test
	cat >"$etc/systemd/system/scoped.service" <<-UNIT
	[Unit]
	Description=A unit with a policy of its own
	[Service]
	Type=exec
	ExecStart=/bin/sleep infinity
	# the OOM kill of a hog put into it does not stop it
	OOMPolicy=continue
	UNIT
	exec "$here/run" --systemd --etc "$etc" --timeout 300 "$@" -- \
		"$here/oomctl_apply_boot.sh" --guest "$build"
fi

build=${2:?usage: oomctl_apply_boot.sh --guest BUILD_DIR}
. "$here/lib.sh"
OOMCTL=$build/cli/oomctl HOG=$build/test/vm/hog
oomctl() { "$OOMCTL" "$@"; }

# Before any oomctl command here: apply at boot pinned the recorder
check "the recorder was pinned at boot" test -d /sys/fs/bpf/oomctl/recorder
check "oomctl.service is active" test "$(prop oomctl.service ActiveState)" = active
ran=$(prop oomctl.service ExecMainExitTimestampMonotonic)
check "... and ran before sysinit.target ($ran)" test "$ran" -gt 0 -a \
	"$ran" -le "$(prop sysinit.target ActiveEnterTimestampMonotonic)"
for _ in $(seq 300); do
	[ "$(prop boot-hog.service ActiveState)" = active ] || break
	sleep 0.1
done
check "boot-hog.service was OOM-killed" \
	test "$(prop boot-hog.service Result)" = oom-kill
check "the kill is in event list, chosen by the configured policy" \
	json 'any(.events[]; .type == "kill" and .comm == "hog" and .chosen_by == "largest-leaf")' \
	oomctl -j event list
check "the configured policy is attached, scoped to /system.slice" \
	json '[.policies[] | {name, scope, mode}] == [{"name": "largest-leaf", "scope": "/system.slice", "mode": "kill"}]' \
	oomctl -j policy list
check "the configured trigger is armed" \
	json '[.triggers[] | select(.cgroup == "/system.slice" and .kind == "some" and .stall_us == 150000 and .window_us == 1000000)] | length == 1' \
	oomctl -j psi list
before=$(oomctl -j policy list | jq -c '[.policies[] | {name, prog_id}]'; oomctl -j psi list | jq -c '[.triggers[].id]')

# A broken file: the unit fails, says where, and nothing changes
printf 'policy attach largest-leaf scope /system.slice\npolicy attach oomd everywhere\n' \
	>/etc/oomctl/oomctl.conf
check "restarting with a broken file fails" bash -c '! systemctl restart oomctl.service'
check "the unit is failed, exit status 2" test \
	"$(prop oomctl.service ActiveState) $(prop oomctl.service ExecMainStatus)" = "failed 2"
check "the journal has the line's error" bash -c \
	"journalctl -b -u oomctl.service -o cat | grep -qx \"Error: /etc/oomctl/oomctl.conf:2: unexpected 'everywhere' (policy attach { NAME | FILE.bpf.o } \\[scope CGROUP\\] \\[dry-run\\] \\[kill-unit\\] \\[name POLICY\\])\""
check "the policy and the trigger are those of the boot" test \
	"${before/largest-leaf/}" != "$before" -a \
	"$(oomctl -j policy list | jq -c '[.policies[] | {name, prog_id}]'; oomctl -j psi list | jq -c '[.triggers[].id]')" = "$before"

# A unit's restart makes its cgroup anew, and the policy scoped to it stays
# with the removed one: listed as orphaned, with a warning, until apply
# attaches it to the new cgroup
systemctl start scoped.service
printf '%s\n' 'policy attach largest-leaf scope /system.slice' \
	'psi add /system.slice some 150ms 1s' \
	'policy attach oomd scope /system.slice/scoped.service' >/etc/oomctl/oomctl.conf
restart_apply() {
	systemctl restart oomctl.service && return
	journalctl -b -u oomctl.service -o cat | tail -n 5
	return 1
}
check "apply attaches oomd to scoped.service" restart_apply
oomd_scope() { json "[.policies[] | select(.name == \"oomd\") | {scope, mode}] == [{\"scope\": \"/system.slice/scoped.service\", \"mode\": \"$1\"}]" oomctl -j policy list; }
check "... listed with its scope, mode kill" oomd_scope kill
systemctl restart scoped.service
check "after the unit's restart, oomd is listed orphaned, by the path it had" \
	oomd_scope orphaned
check "... and policy list warns on stderr that it applies nowhere" bash -c \
	"$OOMCTL policy list 2>&1 >/dev/null | grep -E '^warning: policy oomd applies nowhere: its scope /system.slice/scoped.service \\(cgroup #[0-9]+\\) was removed \\(/system.slice/scoped.service now is another cgroup: attach it there again, or run oomctl apply\\); detach it$'"
check "... as policy show does" bash -c \
	"$OOMCTL policy show oomd 2>&1 | grep -x 'orphaned:  true' && $OOMCTL policy show oomd 2>&1 >/dev/null | grep -q '^warning: policy oomd applies nowhere'"
# The kernel reaches it no more: an OOM in the new cgroup goes to the
# policy above, largest-leaf of /system.slice
systemctl set-property --runtime scoped.service MemoryMax=32M MemorySwapMax=0
H=$(hog_go /system.slice/scoped.service 64 0)
for _ in $(seq 300); do alive "$H" || break; sleep 0.1; done
check "an OOM in the unit's new cgroup is the policy above's to decide" \
	json '[.events[] | select(.type == "kill")] | last | .cgroup == "/system.slice/scoped.service" and .chosen_by == "largest-leaf"' \
	oomctl -j event list
check "restarting oomctl.service attaches oomd again" restart_apply
check "... to the unit's new cgroup, mode kill" oomd_scope kill
check "... and policy list warns no more" bash -c \
	"! $OOMCTL policy list 2>&1 >/dev/null | grep -q warning"
done_checks
