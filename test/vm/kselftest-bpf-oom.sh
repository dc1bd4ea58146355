#!/bin/bash
# The series' own kselftests, tools/testing/selftests/bpf_oom of the patched
# tree, run in the guest with the kernel's kselftest runner (runner.sh, as
# run_kselftest.sh uses it). They are built on the host by the
# kselftest_bpf_oom target (test/vm/CMakeLists.txt) with
# `make -C .../bpf_oom O=DIR`, which puts them in DIR/kselftest/bpf_oom.
#
# Passes if every test ran and passed. A skip fails here: the guest has all
# they need (root, the series, cgroup2 with the memory controller).
# Usage (in the guest): kselftest-bpf-oom.sh DIR
set -u
out=${1:?usage: kselftest-bpf-oom.sh DIR (the make O= directory)}
base=$out/kselftest
dir=$base/bpf_oom
tests=(oom_policy psi_handler declare_caps)

for t in "${tests[@]}"; do
	if [ ! -x "$dir/$t" ]; then
		echo "Bail out! $dir/$t was not built: is there a" \
			"tools/testing/selftests/bpf_oom in the kernel tree?"
		exit 1
	fi
done
[ -r "$base/kselftest/runner.sh" ] || { echo "Bail out! no $base/kselftest/runner.sh"; exit 1; }

log=$(mktemp)
(
	cd "$dir" || exit 1
	set +u		# runner.sh reads unset variables
	BASE_DIR=$base
	# shellcheck disable=SC1091 # built with the tests
	. "$BASE_DIR/kselftest/runner.sh"
	# The tests' output goes to $logfile, /dev/stdout by default: a file
	# in the guest's devtmpfs, where nothing makes that symlink
	# shellcheck disable=SC2034 # read by runner.sh
	logfile=/proc/self/fd/1
	run_many "${tests[@]/#/./}"
) | tee "$log"

passed=0
for t in "${tests[@]}"; do
	grep -Eq "^ok [0-9]+ selftests: bpf_oom: $t\$" "$log" && passed=$((passed + 1))
done
rm -f "$log"
echo "bpf_oom kselftests: $passed of ${#tests[@]} passed"
[ "$passed" -eq "${#tests[@]}" ]
