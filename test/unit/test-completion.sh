#!/bin/bash
# The bash completion of oomctl, asked as bash asks it, over a made-up
# cgroupfs and bpffs so that the answers are known. A fake oomctl on PATH
# stands in for the real one (which would need a BPF OOM kernel): it
# answers `psi list` and `policy list` with known JSON and logs how it was
# called, so the live trigger ids and policy names can be checked, and so
# can the promise that completing runs nothing but those list commands.
#
# usage: test-completion.sh COMPLETION_FILE
set -u

completion=$(realpath "$1") || exit 1
bash_completion=/usr/share/bash-completion/bash_completion
n=0 failed=0
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT

mkdir -p "$tmp/cg/system.slice/a.service" "$tmp/cg/user.slice" \
	"$tmp/cg/dev:x" "$tmp/bpf/policy/mine" "$tmp/objs/sub" "$tmp/bin" \
	"$tmp/empty"
touch "$tmp/cg/cgroup.procs" "$tmp/objs/p.bpf.o" "$tmp/objs/notes.txt"
cg=$tmp/cg bpf=$tmp/bpf

# The fake oomctl: compact JSON as the real one prints it, an argv log
cat >"$tmp/bin/oomctl" <<EOF
#!/bin/bash
echo "\$*" >>"$tmp/calls"
case "\$*" in
*"-j psi list")
	echo '{"triggers":[{"id":3,"cgroup":"/work","resource":"memory","kind":"some","stall_us":150000,"window_us":1000000,"events":12},{"id":14,"cgroup":"/work/batch","resource":"memory","kind":"full","stall_us":500000,"window_us":2000000,"events":0}]}' ;;
*"-j policy list")
	echo '{"policies":[{"name":"oomd","hook":"oom","prog_id":58,"attached":"2026-12-03T09:12:44Z","scope":"/work","mode":"kill","runs":1,"kills":3},{"name":"my_pol-2","hook":"psi","prog_id":61,"attached":"2026-12-03T09:13:05Z","scope":"system","mode":"dry-run","runs":0,"kills":0}]}' ;;
*"-o help memcg list")
	printf '%s\n' 'Available columns (-o, comma-separated):' \
		'  PATH       path                     the cgroup' \
		'  CURRENT    current_bytes            memory.current' ;;
*"-o help policy list")
	printf '%s\n' 'Available columns (-o, comma-separated):' \
		'  NAME       name                     the policy' ;;
*"-o help psi list")
	printf '%s\n' 'Available columns (-o, comma-separated):' \
		'  ID         id                       the trigger' ;;
*)	echo "Error: the fake oomctl does not know '\$*'" >&2; exit 1 ;;
esac
EOF
chmod +x "$tmp/bin/oomctl"
# A PATH without jq, for the completion's own JSON reader
mkdir "$tmp/nojq"
for t in bash grep sed timeout cat; do
	ln -s "$(type -P "$t")" "$tmp/nojq/$t"
done
ln -s "$tmp/bin/oomctl" "$tmp/nojq/oomctl"
# One that fails as oomctl does on a kernel without BPF OOM
mkdir "$tmp/fail"
printf '#!/bin/sh\necho "{\\"error\\":\\"no\\"}"; exit 3\n' >"$tmp/fail/oomctl"
chmod +x "$tmp/fail/oomctl"

# What the completion offers for the command line LINE typed up to its end,
# sorted, on one line. MODE: "full" with bash-completion loaded, "plain"
# without it. The words are split as readline splits them: at blanks, and
# a run of the COMP_WORDBREAKS characters = and : is a word of its own.
complete_line()
{
	local mode=$1 line=$2 path=${3:-$tmp/bin:$PATH}
	cd "$tmp/empty" && PATH=$path bash -c '
		mode=$1 line=$2
		if [[ $mode == full ]]; then
			source "$3" || exit 1
		fi
		source "$0" || exit 1
		COMP_WORDS=() w=
		for (( i = 0; i < ${#line}; i++ )); do
			c=${line:i:1}
			if [[ $c == " " ]]; then
				[[ $w ]] && COMP_WORDS+=("$w")
				w=
			elif [[ $c == [=:] ]]; then
				[[ $w && $w != [=:]* ]] && { COMP_WORDS+=("$w"); w=; }
				w+=$c
			else
				[[ $w == [=:]* ]] && { COMP_WORDS+=("$w"); w=; }
				w+=$c
			fi
		done
		COMP_WORDS+=("$w")
		COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 ))
		COMP_LINE=$line COMP_POINT=${#line}
		_oomctl_bpf oomctl "${COMP_WORDS[COMP_CWORD]}" \
			"${COMP_WORDS[COMP_CWORD - 1]}" 2>/dev/null
		printf "%s\n" "${COMPREPLY[@]}"
	' "$completion" "$mode" "$line" "$bash_completion" |
		sed '/^$/d' | sort | tr '\n' ' ' | sed 's/ $//'
}

# check NAME WANT GOT
check()
{
	if [[ $3 == "$2" ]]; then
		echo "ok $((++n)) - $1"
	else
		echo "not ok $((++n)) - $1"
		echo "#   want: '$2'"
		echo "#   got:  '$3'"
		failed=$((failed + 1))
	fi
}

# is "EXPECTED" "LINE": what `oomctl LINE<TAB>` offers, with bash-completion
is() { check "oomctl $2" "$1" "$(complete_line full "oomctl $2")"; }

if [[ ! -r $bash_completion ]]; then
	echo "not ok 1 - bash-completion is installed ($bash_completion; test/deps.sh)"
	echo "1..1"
	exit 1
fi

is "memcg" "m"
is "policy psi" "p"
is "--bpffs --bytes" "--b"
is "--raw" "-n --r"
is "--cgroupfs" "-j --c"
is "help list show" "m "
is "list" "me l"
is "show" "memcg s"
is "attach detach explain help list show" "po "
is "attach" "po a"
is "" "frob "
is "memcg" "-j --pretty me"
is "help" "dump "
is "policy psi" "help p"

# cgroups: relative, absolute, or under the cgroupfs, directories only
is "dev:x/ system.slice/ tree user.slice/" "--cgroupfs $cg memcg list "
is "/dev:x/ /system.slice/ /user.slice/" "--cgroupfs $cg memcg list /"
is "system.slice/a.service/" "--cgroupfs $cg memcg show system.slice/"
is "$cg/system.slice/" "--cgroupfs $cg memcg show $cg/sy"
is "tree" "--cgroupfs $cg memcg list user.slice "
is "" "--cgroupfs $cg memcg list user.slice tree "
is "system.slice/" "--cgroupfs $cg/ psi add s"
is "full some" "--cgroupfs $cg psi add user.slice "
is "" "--cgroupfs $cg psi add user.slice some "
is "pause" "--cgroupfs $cg psi add user.slice some 1s 2s "
is "" "--cgroupfs $cg psi add user.slice some 1s 2s pause "
# after a colon readline replaces only what follows it
is "x/" "--cgroupfs $cg memcg show dev:"

# --opt=DIR, and argp's unique prefixes of long options
is "system.slice/" "--cgroupfs=$cg memcg show s"
is "system.slice/" "--cg=$cg memcg show s"
is "system.slice/" "--cg $cg memcg show s"
is "$tmp/objs" "--bpffs=$tmp/ob"
is "$tmp/objs" "--cgroupfs $tmp/ob"
is "" "--json=x"

# policies: built in for attach, with object files and folders
is "largest-leaf oomd" "policy attach "
is "$tmp/objs/p.bpf.o $tmp/objs/sub" "policy attach $tmp/objs/"
is "dry-run kill-unit name scope" "policy attach oomd "
is "" "policy attach oomd name "
is "kill-unit name scope" "policy attach oomd dry-run "
is "user.slice/" "--cgroupfs $cg policy attach oomd scope u"

# live: attached policies and trigger ids from the (fake) oomctl's lists
rm -f "$tmp/calls"
is "my_pol-2 oomd" "--bpffs=$bpf policy show "
is "oomd" "--bpffs $bpf policy detach o"
is "14 3 dev:x/ system.slice/ user.slice/" "--cgroupfs $cg psi del "
is "14" "--cgroupfs $cg psi del 1"
check "the list commands got the global options as typed" \
	"--bpffs=$bpf -j policy list|--bpffs $bpf -j policy list|--cgroupfs $cg -j psi list|--cgroupfs $cg -j psi list" \
	"$(paste -sd '|' "$tmp/calls" 2>/dev/null)"
is "" "--cgroupfs $cg psi del 3 "
is "" "policy show oomd "
check "no other command ran (no oomctl call for words after the first)" \
	4 "$(wc -l <"$tmp/calls")"
# explain: a built-in or attached name, or a cgroup; then a cgroup
is "dev:x/ largest-leaf my_pol-2 oomd system.slice/ user.slice/" \
	"--bpffs $bpf --cgroupfs $cg policy explain "
is "/system.slice/" "--cgroupfs $cg policy explain oomd /sy"
is "" "--cgroupfs $cg policy explain /user.slice "
check "without jq: policy names" "my_pol-2 oomd" \
	"$(complete_line full "oomctl policy detach " "$tmp/nojq")"
check "without jq: trigger ids" "14 3" \
	"$(complete_line full "oomctl --cgroupfs /nonexistent psi del " "$tmp/nojq")"
# an oomctl that fails (no BPF OOM kernel, no root) offers nothing
check "a failing oomctl: no names" "" \
	"$(complete_line full "oomctl policy show " "$tmp/fail:$PATH")"

# -o COLUMNS: every listing's columns, from `oomctl -o help OBJECT list`
rm -f "$tmp/calls"
is "CURRENT ID NAME PATH help" "-o "
is "CURRENT" "--output C"
is "PATH,CURRENT PATH,ID PATH,NAME PATH,PATH" "-j --output=PATH,"
is "ID,NAME" "-jo ID,N"
check "-o asked only 'oomctl -o help OBJECT list'" \
	"-o help memcg list|-o help policy list|-o help psi list" \
	"$(sort -u "$tmp/calls" | paste -sd '|')"
is "memcg" "-o PATH -n me"
is "--noheadings" "-o PATH --noh"

# apply [--check] [FILE], event export --prometheus [FILE]
is "$tmp/objs/notes.txt $tmp/objs/p.bpf.o $tmp/objs/sub" "apply $tmp/objs/"
is "--check" "apply --"
is "$tmp/objs/notes.txt $tmp/objs/p.bpf.o $tmp/objs/sub" "apply --check $tmp/objs/"
is "" "apply --check $tmp/objs/p.bpf.o "
is "help" "apply he"
is "export" "event e"
is "--prometheus" "event export "
is "$tmp/objs/notes.txt $tmp/objs/p.bpf.o $tmp/objs/sub" "event export --prometheus $tmp/objs/"

is "dev:x/ order system.slice/ user.slice/ wait" "--cgroupfs $cg oom declare "
is "wait" "--cgroupfs $cg oom declare / order 3 "
is "1 10" "oom declare order 1"
is "count" "event list "
is "" "event watch "

# without bash-completion (sourced by hand on a minimal system)
check "plain: objects" "policy psi" "$(complete_line plain "oomctl p")"
check "plain: cgroups" "system.slice/" \
	"$(complete_line plain "oomctl --cgroupfs $cg memcg show s")"

echo "1..$n"
echo "test-completion: $((n - failed)) passed, $failed failed"
((failed == 0))
