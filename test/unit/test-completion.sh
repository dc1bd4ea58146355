#!/bin/bash
# The bash completion of oomctl, asked as bash asks it, over a made-up
# cgroupfs and bpffs so that the answers are known.
#
# usage: test-completion.sh COMPLETION_FILE
set -u

completion=$1
n=0 failed=0
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT

mkdir -p "$tmp/cg/system.slice/a.service" "$tmp/cg/user.slice" \
	"$tmp/bpf/policy/mine" "$tmp/objs/sub"
touch "$tmp/cg/cgroup.procs" "$tmp/objs/p.bpf.o" "$tmp/objs/notes.txt"
cg=$tmp/cg bpf=$tmp/bpf

# What the completion offers for "oomctl WORDS...", sorted, on one line
complete_words()
{
	bash -c '
		source "$0" || exit 1
		COMP_WORDS=(oomctl "$@")
		COMP_CWORD=$#
		_oomctl 2>/dev/null
		printf "%s\n" "${COMPREPLY[@]}"
	' "$completion" "$@" | sed '/^$/d' | sort | tr '\n' ' ' | sed 's/ $//'
}

# is "EXPECTED" WORDS...
is()
{
	local want=$1 got
	shift
	got=$(complete_words "$@")
	if [[ $got == "$want" ]]; then
		echo "ok $((++n)) - oomctl $*"
	else
		echo "not ok $((++n)) - oomctl $*"
		echo "#   want: '$want'"
		echo "#   got:  '$got'"
		failed=$((failed + 1))
	fi
}

is "memcg" m
is "policy psi" p
is "--bpffs" --b
is "--cgroupfs" -j --c
is "help list show" m ''
is "list" me l
is "show" memcg s
is "attach detach help list show" po ''
is "attach" po a
is "" frob ''
is "memcg" -j --pretty me
is "help" dump ''
is "policy psi" help p

# cgroups: relative, absolute, or under the cgroupfs, directories only
is "system.slice/ tree user.slice/" --cgroupfs "$cg" memcg list ''
is "/system.slice/ /user.slice/" --cgroupfs "$cg" memcg list /
is "system.slice/a.service/" --cgroupfs "$cg" memcg show system.slice/
is "$cg/system.slice/" --cgroupfs "$cg" memcg show "$cg/sy"
is "tree" --cgroupfs "$cg" memcg list user.slice ''
is "" --cgroupfs "$cg" memcg list user.slice tree ''
is "system.slice/" --cgroupfs "$cg/" psi add s
is "full some" --cgroupfs "$cg" psi add user.slice ''
is "" --cgroupfs "$cg" psi add user.slice some ''

# policies: built in, pinned, or object files
is "largest-leaf mine oomd psi-declare" --bpffs "$bpf" policy show ''
is "largest-leaf oomd psi-declare" --bpffs "$tmp/none" policy detach ''
is "$tmp/objs/p.bpf.o $tmp/objs/sub/" --bpffs "$tmp/none" policy attach "$tmp/objs/"
is "dry-run scope" policy attach oomd ''
is "scope" policy attach oomd dry-run ''
is "user.slice/" --cgroupfs "$cg" policy attach oomd scope u

is "order system.slice/ user.slice/ wait" --cgroupfs "$cg" oom declare ''
is "wait" --cgroupfs "$cg" oom declare / order 3 ''
is "1 10" oom declare order 1
is "count" event list ''
is "" event watch ''

echo "1..$n"
echo "test-completion: $((n - failed)) passed, $failed failed"
((failed == 0))
