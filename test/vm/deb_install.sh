#!/bin/bash
# The oomctl Debian package (cli/packaging/), as an admin installs it: dpkg -i
# into a scratch root (the guest's /usr is read only) whose package database
# is a copy of the guest's, so Depends are checked against bookworm's real
# packages; then the installed oomctl handles an OOM, man finds the pages,
# the completion loads, and dpkg -P removes every file.
# Usage (in the guest): deb_install.sh BUILD_DIR
set -u
build=${1:?usage: deb_install.sh BUILD_DIR}
. "$(dirname "$0")/lib.sh"
HOG=$build/test/vm/hog

debs=("$build"/oomctl_*_amd64.deb)
[ ${#debs[@]} -eq 1 ] && [ -f "${debs[0]}" ] ||
	bail "want one $build/oomctl_*_amd64.deb (cmake --build build --target deb)"
deb=${debs[0]}
version=$(dpkg-deb -f "$deb" Version)

root=$(mktemp -d /tmp/debroot.XXXXXX)
mkdir -p "$root/var/lib"
cp -a /var/lib/dpkg "$root/var/lib/" || bail "cannot copy /var/lib/dpkg"
# Without file triggers: man-db's would run its postinst in the scratch
# root, which has no man-db to run
rm -f "$root/var/lib/dpkg/triggers/File"
rdpkg() { dpkg --root="$root" "$@"; }
rquery() { dpkg-query --admindir="$root/var/lib/dpkg" "$@"; }
OOMCTL=$root/usr/sbin/oomctl

# --- install ----------------------------------------------------------------
# The guest has systemd-oomd (for test/bench), whose client is an oomctl too:
# both packages ship completions/oomctl, so ours conflicts with it.
refused_for_conflict() {
	local out
	out=$(rdpkg -i "$deb" 2>&1) && { echo "installed"; return 1; }
	grep -q 'oomctl conflicts with systemd-oomd' <<<"$out" || { printf '%s\n' "$out"; return 1; }
}
check "dpkg -i refuses while systemd-oomd is installed" refused_for_conflict
# A machine without it: the database without systemd-oomd's stanza and files
db=$root/var/lib/dpkg
awk -v RS= -v ORS='\n\n' '!/^Package: systemd-oomd\n/' "$db/status" >"$db/status.new" &&
	mv "$db/status.new" "$db/status" && rm -f "$db"/info/systemd-oomd.* ||
	bail "cannot drop systemd-oomd from the scratch database"
check "dpkg -i ${deb##*/} into $root" rdpkg -i "$deb"
check "dpkg says oomctl $version is installed" \
	test "$(rquery -W -f='${Status} ${Version}' oomctl)" = "install ok installed $version"
check "dpkg --audit finds nothing half-installed" \
	bash -c "[ -z \"\$(dpkg --root='$root' --audit)\" ]"
check "dpkg -L lists the binary" \
	bash -c "$(declare -f rquery); root='$root'; rquery -L oomctl | grep -qx /usr/sbin/oomctl"
check "the installed oomctl runs: --version says $version" \
	bash -c "'$OOMCTL' --version | grep -qF '$version'"

# --- man and completion from the installed paths -----------------------------
check "man -M finds oomctl(8)" \
	test "$(man -M "$root/usr/share/man" -w oomctl)" = "$root/usr/share/man/man8/oomctl.8.gz"
check "man -M finds oomctl-policies(7)" \
	test "$(man -M "$root/usr/share/man" -w 7 oomctl-policies)" = "$root/usr/share/man/man7/oomctl-policies.7.gz"
check "oomctl(8) renders, and names oomctl-policy(8)" \
	bash -c "MANWIDTH=80 man -M '$root/usr/share/man' oomctl 2>/dev/null | grep -q 'oomctl-policy'"
check "the completion defines a completion for oomctl" \
	bash -c "source '$root/usr/share/bash-completion/completions/oomctl' && complete -p oomctl"

# --- a scenario run by the installed binary ----------------------------------
check "the installed oomctl attaches largest-leaf" "$OOMCTL" policy attach largest-leaf
oom_story; victim=$VICTIM
check "the OOM killed the hog largest-leaf names, cg4's (first death: $victim)" \
	test "$victim" = cg4
k=$("$OOMCTL" -j event list |
	jq -c '[.events[] | select(.type == "kill")] | last')
check "its event log names cg4's hog ($PID_CG4)" jq -e ".pid == $PID_CG4" <<<"$k"
check "and says largest-leaf chose it" jq -e '.chosen_by == "largest-leaf"' <<<"$k"
cg_remove /oomtest
check "the installed oomctl detaches it" "$OOMCTL" policy detach largest-leaf

# --- removal ----------------------------------------------------------------
check "dpkg -P oomctl" rdpkg -P oomctl
check "nothing of the package is left under $root/usr" \
	bash -c "[ -z \"\$(find '$root/usr' -name '*oomctl*' 2>/dev/null)\" ]"
check "dpkg no longer knows oomctl" \
	bash -c "$(declare -f rquery); root='$root'; rquery -W oomctl 2>&1 | grep -q 'no packages found matching oomctl'"
rm -rf "$root"

done_checks
