#!/bin/bash
# The oomctl Debian package (cli/packaging/), as an admin installs it: dpkg -i
# into a scratch root (the guest's /usr is read only) whose package database
# is a copy of the guest's, so Depends are checked against bookworm's real
# packages, with systemd-oomd installed (issue 21): both stay installed,
# systemd's completion is diverted beside ours and completes its binary;
# then the installed oomctl handles an OOM, man finds the pages, and dpkg -P
# removes every file and gives systemd its completion back.
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

# --- install, beside systemd-oomd ---------------------------------------------
# The guest has systemd-oomd (for test/bench), whose client is an oomctl too,
# with a bash completion of that name: the scratch root gets that file as
# systemd-oomd installed it. Maintainer scripts run outside a chroot (the
# scratch root has no shell), dpkg-divert at $DPKG_ROOT.
sd_comp=/usr/share/bash-completion/completions/oomctl
[ "$(dpkg -S $sd_comp 2>/dev/null)" = "systemd-oomd: $sd_comp" ] ||
	bail "the guest has no systemd-oomd with its $sd_comp"
mkdir -p "$root${sd_comp%/*}" && cp $sd_comp "$root$sd_comp"
check "dpkg -i ${deb##*/} into $root, with systemd-oomd installed" \
	rdpkg --force-script-chrootless -i "$deb"
check "systemd-oomd is still installed" \
	test "$(rquery -W -f='${Status}' systemd-oomd)" = "install ok installed"
check "systemd-oomd's completion is diverted to oomctl.systemd, by oomctl" \
	bash -c "dpkg-divert --admindir '$root/var/lib/dpkg' --listpackage $sd_comp | grep -qx oomctl &&
		cmp -s $sd_comp '$root$sd_comp.systemd'"
check "ours is at $sd_comp" grep -q _oomctl_dispatch "$root$sd_comp"
check "systemd's client stays /usr/bin/oomctl" \
	test "$(dpkg -S /usr/bin/oomctl)" = "systemd-oomd: /usr/bin/oomctl"
# root's PATH (login.defs' ENV_SUPATH) has /usr/sbin, where ours is, first
check "root's PATH finds /usr/sbin/oomctl before /usr/bin/oomctl" \
	bash -c "grep -E '^ENV_SUPATH' /etc/login.defs | grep -q '/usr/sbin:.*/usr/bin'"
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
# complete WORDS...: what the installed completion offers for the last word
complete_words() {
	bash -c '
		[ -r /usr/share/bash-completion/bash_completion ] &&
			. /usr/share/bash-completion/bash_completion
		_OOMCTL_SYSTEMD_COMPLETION=$1$2.systemd
		. "$1$2"
		shift 2
		COMP_WORDS=("$@") COMP_CWORD=$(($# - 1))
		COMP_LINE="$*" COMP_POINT=${#COMP_LINE}
		_oomctl_dispatch "$1" "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}"
		echo "${COMPREPLY[*]}"' - "$root" $sd_comp "$@"
}
check "the completion is registered for oomctl" \
	bash -c "source '$root$sd_comp' && complete -p oomctl | grep -q _oomctl_dispatch"
check "systemd's /usr/bin/oomctl completes systemd's verbs" \
	test "$(complete_words /usr/bin/oomctl '')" = "help dump"
ours=" $(complete_words "$OOMCTL" '') "
check "ours completes our objects (policy, psi:$ours)" \
	bash -c "[[ '$ours' == *' policy '* && '$ours' == *' psi '* ]]"

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
check "dpkg -P oomctl" rdpkg --force-script-chrootless -P oomctl
check "nothing of the package is left under $root/usr, systemd's completion is back" \
	bash -c "[ \"\$(find '$root/usr' -name '*oomctl*' 2>/dev/null)\" = '$root$sd_comp' ] &&
		cmp -s $sd_comp '$root$sd_comp'"
check "and not diverted" \
	test -z "$(dpkg-divert --admindir "$root/var/lib/dpkg" --listpackage $sd_comp)"
check "dpkg no longer knows oomctl" \
	bash -c "$(declare -f rquery); root='$root'; rquery -W oomctl 2>&1 | grep -q 'no packages found matching oomctl'"
rm -rf "$root"

done_checks
