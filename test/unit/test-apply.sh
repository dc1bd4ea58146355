#!/bin/bash
# oomctl apply's configuration reader on the host: a good file passes
# --check, each bad one is refused with exit status 2 and exactly one line
# "Error: FILE:LINE: problem" naming the right line. All of it happens
# before oomctl looks at the kernel, so none of it needs BPF or root.
# usage: test-apply.sh OOMCTL
set -u
oomctl=${1:?usage: test-apply.sh OOMCTL}
n=0 failed=0
pass() { echo "ok $((++n)) - $1"; }
fail() { echo "not ok $((++n)) - $1"; failed=$((failed + 1)); }
dir=$(mktemp -d) || exit 1
trap 'rm -rf "$dir"' EXIT
mkdir "$dir/cgroup"		# --cgroupfs: scopes under it are looked up
touch "$dir/mine.bpf.o" "$dir/oomd.bpf.o"
mkdir "$dir/cgroup/x.o"

# run ARGS...: $status, $out, $err of oomctl --cgroupfs DIR ARGS...
run()
{
	out=$("$oomctl" --cgroupfs "$dir/cgroup" "$@" 2>"$dir/err")
	status=$?
	err=$(<"$dir/err")
}

# refused NAME LINE PATTERN TEXT...: a file of TEXT lines is refused, with
# one error line "FILE:LINE: ..." matching PATTERN (grep -E)
refused()
{
	local name=$1 line=$2 pat=$3 f=$dir/bad.conf
	shift 3
	printf '%s\n' "$@" >"$f"
	run apply --check "$f"
	if [[ $status -eq 2 && $(wc -l <<<"$err") -eq 1 && -z $out ]] &&
	   grep -qE "^Error: $f:$line: ($pat)" <<<"$err"; then
		pass "$name: refused at line $line"
	else
		fail "$name: refused at line $line with /$pat/ (status $status)"
		sed 's/^/#   /' <<<"$err"
	fi
}

# --- a good file -------------------------------------------------------------
good=$dir/good.conf
cat >"$good" <<CONF
# comments and blank lines are ignored

policy attach largest-leaf dry-run
	policy attach oomd   # a comment after the words
policy attach $dir/mine.bpf.o dry-run
# one built-in, twice: a name of its own each
policy attach oomd name oomd-b dry-run
policy attach largest-leaf kill-unit name ll-unit
CONF
run apply --check "$good"
if [[ $status -eq 0 && $out == "configuration OK: 5 policies, 0 triggers in 1 file" ]]; then
	pass "a good file passes --check"
else
	fail "a good file passes --check (status $status: $out $err)"
fi
run -j apply --check "$good"
if [[ $status -eq 0 ]] && jq -e '.policies == 5 and .triggers == 0 and .files == 1' \
	<<<"$out" >/dev/null; then
	pass "--check -j counts them"
else
	fail "--check -j counts them ($out)"
fi

# --- bad files: every problem, each in its line ---------------------------------
f=$dir/three.conf
printf '%s\n' "policy attach oomdd" "# fine" "policy attach oomd" "psi add / most 1s 2s" \
	"policy attach oomd" >"$f"
run apply --check "$f"
want="Error: $f:1: no built-in policy 'oomdd' (largest-leaf, oomd)
Error: $f:4: invalid stall type 'most': expected 'some' or 'full'
Error: $f:5: policy 'oomd' is configured already at $f:3"
if [[ $status -eq 2 && -z $out && $err == "$want" ]]; then
	pass "three bad lines: each told, in order, exit status 2"
else
	fail "three bad lines: each told, in order, exit status 2 (status $status)"
	sed 's/^/#   /' <<<"$err"
fi

refused "an unknown command" 3 "unknown command 'policy load'" \
	"# ok" "policy attach oomd" "policy load oomd"
refused "an unknown word after policy attach" 1 "unexpected 'priority'" \
	"policy attach oomd priority 5"
# the host's cgroupfs is no cgroup2: scopes that resolve are the VM's test
refused "a scope that is no cgroup2 folder" 1 "'/' is not a cgroup: $dir/cgroup is not on cgroup2" \
	"policy attach oomd scope /"
refused "scope without a cgroup" 2 "missing CGROUP after 'scope'" \
	"" "policy attach oomd scope"
refused "a scope with .." 1 "invalid cgroup '../etc'" \
	"policy attach oomd scope ../etc"
refused "a scope that does not exist" 1 "cgroup '/nope' not found" \
	"policy attach oomd scope /nope"
refused "a duplicate policy" 4 "policy 'oomd' is configured already at $dir/bad.conf:2" \
	"policy attach largest-leaf" "policy attach oomd" "" "policy attach oomd dry-run"
refused "a file named like a built-in" 2 "policy 'oomd' is configured already at $dir/bad.conf:1" \
	"policy attach oomd" "policy attach $dir/oomd.bpf.o"
refused "an unknown built-in" 1 "no built-in policy 'oomdd' \\(largest-leaf, oomd" \
	"policy attach oomdd"
refused "a bad name after 'name'" 1 "invalid policy name 'Big': 1 to 15 of \\[a-z0-9_-\\]" \
	"policy attach oomd name Big"
refused "'name' without a name" 1 "missing POLICY after 'name'" \
	"policy attach oomd name"
refused "two policies given one name" 2 "policy 'work' is configured already at $dir/bad.conf:1" \
	"policy attach oomd name work" "policy attach largest-leaf dry-run name work"
refused "no policy named" 1 "missing NAME or FILE.bpf.o" "policy attach"
refused "kill-unit twice" 1 "unexpected 'kill-unit'" "policy attach oomd kill-unit kill-unit"
refused "a relative object path" 1 "'mine.bpf.o': an object file needs an absolute path" \
	"policy attach mine.bpf.o"
refused "a missing object file" 1 "cannot open '$dir/gone.bpf.o': No such file" \
	"policy attach $dir/gone.bpf.o"
refused "a folder as object file" 1 "'$dir/cgroup/x.o' is not a BPF object file" \
	"policy attach $dir/cgroup/x.o"
refused "psi: a bad stall type" 1 "invalid stall type 'most'" \
	"psi add / most 100ms 1s"
refused "psi: a bad duration" 1 "invalid STALL '100parsecs'" \
	"psi add / some 100parsecs 1s"
refused "psi: a window over 10 s" 1 "WINDOW must be within 500ms..10s" \
	"psi add / some 1s 20s"
refused "psi: stall over window" 1 "STALL must be more than 0 and at most WINDOW" \
	"psi add / some 2s 1s"
refused "psi: a missing argument" 1 "missing argument" "psi add / some 1s"
refused "psi: an extra argument" 1 "too many arguments" "psi add / some 1s 1s now"
refused "psi: a cgroup that does not exist" 1 "cgroup '/nope' not found" \
	"psi add /nope some 100ms 1s"
refused "psi: a pause over 10 min" 1 "PAUSE must be at most 10min" \
	"psi add / some 1s 1s pause 11min"
refused "psi: pause without its duration" 1 "missing argument" \
	"psi add / some 1s 1s pause"
refused "psi: an unknown option" 1 "too many arguments" \
	"psi add / some 1s 1s wait 2s"
printf 'policy attach oomd\npolicy attach largest-leaf\0 dry-run\n' >"$dir/nul.conf"
run apply --check "$dir/nul.conf"
if [[ $status -eq 2 ]] && grep -qx "Error: $dir/nul.conf:2: a NUL byte in the line" <<<"$err"; then
	pass "a NUL byte is refused at its line"
else
	fail "a NUL byte is refused at its line (status $status: $err)"
fi

# --- the same checks come first without --check: nothing is applied ------------
printf 'policy attach oomd\npolicy attach oomd\n' >"$dir/dup.conf"
run apply "$dir/dup.conf"
if [[ $status -eq 2 ]] && grep -qx "Error: $dir/dup.conf:2: policy 'oomd' is configured already at $dir/dup.conf:1" <<<"$err"; then
	pass "apply without --check refuses the file before the kernel check"
else
	fail "apply without --check refuses the file before the kernel check (status $status: $err)"
fi
run -j apply --check "$dir/dup.conf"
if [[ $status -eq 2 ]] && jq -e --arg f "$dir/dup.conf" \
	'.error == "\($f):2: policy '"'oomd'"' is configured already at \($f):1"' <<<"$out" >/dev/null; then
	pass "-j: the error is the document"
else
	fail "-j: the error is the document ($out)"
fi

# --- usage -----------------------------------------------------------------------
run apply --check "$dir/none.conf"
if [[ $status -eq 1 ]] && grep -qx "Error: $dir/none.conf: cannot read: No such file or directory" <<<"$err"; then
	pass "a missing FILE: exit 1, one line"
else
	fail "a missing FILE: exit 1, one line (status $status: $err)"
fi
for args in "--check $good $good" "--check --check $good" "--force $good"; do
	# shellcheck disable=SC2086
	run apply $args
	if [[ $status -eq 2 && $err == "Error: unexpected argument '"*"'; usage: oomctl apply [--check] [FILE]" ]]; then
		pass "apply $args: usage error"
	else
		fail "apply $args: usage error (status $status: $err)"
	fi
done
run apply help
if [[ $status -eq 0 && $out == "Usage: oomctl apply [--check] [FILE]"* ]]; then
	pass "apply help"
else
	fail "apply help (status $status)"
fi
echo "1..$n"
[ $failed -eq 0 ]
