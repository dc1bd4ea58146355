# Shell helpers for the oomctl scenarios (sourced; run inside the guest).
# TAP lines, then "N passed, N failed"; the exit status says whether all
# checks passed.
CG=/sys/fs/cgroup
nr_pass=0 nr_fail=0

# A failing check shows the command's output as "# " lines. It goes to a
# file, not a pipe: a command may leave a background process holding it.
# Builtins where a command would do: every exec costs ~0.1 s under TCG.
check_out=${TMPDIR:-/tmp}/check.$$
# CHECK_TIMES=FILE: each check's end time and description go to FILE, to
# find where a scenario's time goes (bash's clock: no exec)
check() {	# check DESCRIPTION COMMAND...
	local what=$1 line; shift
	[ -z "${CHECK_TIMES:-}" ] || printf '%s start %s\n' "$EPOCHREALTIME" "$what" >>"$CHECK_TIMES"
	if "$@" >"$check_out" 2>&1; then
		nr_pass=$((nr_pass + 1)); echo "ok $((nr_pass + nr_fail)) - $what"
	else
		nr_fail=$((nr_fail + 1)); echo "not ok $((nr_pass + nr_fail)) - $what"
		while IFS= read -r line || [ -n "$line" ]; do
			echo "# $line"
		done <"$check_out"
	fi
	[ -z "${CHECK_TIMES:-}" ] || printf '%s end\n' "$EPOCHREALTIME" >>"$CHECK_TIMES"
}

# jqe FILTER JSON: jq -e's verdict on JSON (false or null fails); the JSON
# is printed for check to show on failure. jq 1.6 -e passes on no input.
jqe() {
	printf '%s\n' "$2"
	[[ $2 = *[![:space:]]* ]] || { echo "(no JSON)"; return 1; }
	jq -e "$1" <<<"$2" >/dev/null
}

# json FILTER COMMAND...: COMMAND succeeds and jq -e FILTER holds on its
# output, which check shows on failure
json() {
	local filter=$1 out rc=0; shift
	out=$("$@") || rc=$?
	[ "$rc" = 0 ] || { printf '%s\n' "$out" "exit status $rc: $*"; return 1; }
	jqe "$filter" "$out"
}

done_checks() {
	echo "1..$((nr_pass + nr_fail))"
	echo "$nr_pass passed, $nr_fail failed"
	[ "$nr_fail" -eq 0 ] && [ "$nr_pass" -gt 0 ]
}

bail() { echo "Bail out! $*"; exit 1; }

# prop UNIT PROPERTY: a unit's property, in a systemd guest (run --systemd)
prop() { systemctl show -P "$2" "$1"; }

# fails COMMAND...: it exits non-zero and says one line on stderr
fails() {
	local err rc
	err=$("$@" 2>&1 >/dev/null); rc=$?
	echo "$err"
	[ "$rc" -ne 0 ] && [ -n "$err" ] && [[ $err != *$'\n'* ]]
}

# key_of FILE KEY: the value of "KEY VALUE" in a flat-keyed kernel file.
# The file is read in one go: bash's read builtin lseeks back after each
# line, and a seq_file (memory.stat, /proc/vmstat) regenerates its text on
# every seek, so the lines shift under it as the counters change.
key_of() {
	local text line
	text=$(<"$1") || return 1
	while IFS= read -r line; do
		[ "${line%% *}" = "$2" ] && { echo "${line#* }"; return 0; }
	done <<<"$text"
	echo "no $2 in $1"
	return 1
}

# oom_kills: the kernel's count of OOM kills (/proc/vmstat oom_kill)
oom_kills() { key_of /proc/vmstat oom_kill; }

# refused LINE COMMAND...: it exits 1, its stderr is exactly LINE
refused() {
	local line=$1 err rc; shift
	err=$("$@" 2>&1 >/dev/null); rc=$?
	echo "exit $rc, stderr: $err"
	[ "$rc" -eq 1 ] && [ "$err" = "$line" ]
}

# no_events COND: no logged event (JSON of `oomctl -j event list` in $ev)
# satisfies jq's COND; shows those that do
no_events() {
	local e; e=$(jq -c "[.events[] | select($1)]" <<<"$ev"); echo "$e"; [ "$e" = "[]" ]
}

cg_make() {	# cg_make PATH [memory.max]: with +memory on the way down
	local path=$1 p=""
	echo +memory > "$CG/cgroup.subtree_control"
	for part in ${path//\// }; do
		[ -n "$p" ] && echo +memory > "$CG$p/cgroup.subtree_control" 2>/dev/null
		p="$p/$part"
		mkdir -p "$CG$p"
	done
	[ -n "${2:-}" ] && echo "$2" > "$CG$path/memory.max"
	echo 0 > "$CG$path/memory.swap.max" 2>/dev/null || true
}

cg_remove() {	# cg_remove PATH: kill its tasks, remove it and below
	[ -d "$CG$1" ] || return 0
	echo 1 > "$CG$1/cgroup.kill" 2>/dev/null
	for _ in $(seq 50); do
		find "$CG$1" -depth -type d -exec rmdir {} + 2>/dev/null
		[ -d "$CG$1" ] || return 0
		sleep 0.1
	done
}

# hog_start CGROUP MIB ADJ: start a hog there, wait until its memory is in;
# prints its pid. A hog that dies while filling is reported as pid 0.
hog_start() {
	local ready; ready=$(mktemp -u)
	# The hog must not keep $(...)'s pipe open: its caller would wait forever
	(echo "$BASHPID" > "$CG$1/cgroup.procs" &&
		exec "$HOG" "$2" "$3" "$ready" >/dev/null 2>&1) &
	local pid=$! i
	disown "$pid"	# no "Killed" job report: the kill is the point
	for i in $(seq 300); do
		[ -e "$ready" ] && { rm -f "$ready"; echo "$pid"; return 0; }
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	echo 0
}

# hogs_ready PID...: every hog_start succeeded. One that died while filling
# prints 0, and "alive 0" is false: a story would count it as the victim.
hogs_ready() {
	local pid
	for pid; do
		[ "$pid" != 0 ] || bail "a hog died before it was ready"
	done
}

# dead_of NAME=PID...: the names whose hogs are dead, space-separated,
# "none" if every one lives
dead_of() {
	local arg dead=
	for arg; do
		alive "${arg#*=}" || dead+="${dead:+ }${arg%%=*}"
	done
	echo "${dead:-none}"
}

# hog_go CGROUP MIB ADJ [READY]: start a hog without waiting; prints its
# pid. With READY, the hog creates that file once its memory is in.
hog_go() {
	(echo "$BASHPID" > "$CG$1/cgroup.procs" &&
		exec "$HOG" "$2" "$3" ${4:+"$4"} >/dev/null 2>&1) &
	disown $!
	echo $!
}

# settled PID READY [SECONDS]: the hog PID that hit the OOM (hog_go with
# READY) has all its memory, or is dead. Either way its charges no longer
# fail, so the OOM episode is over: any second kill would have come by now.
# Fails after SECONDS (default 30).
settled() {
	for _ in $(seq $(( ${3:-30} * 10 ))); do
		[ -e "$2" ] && return 0
		alive "$1" || return 0
		sleep 0.1
	done
	return 1
}

# alive PID: running, not a zombie waiting to be reaped
alive() {
	local stat
	{ read -r stat <"/proc/$1/stat"; } 2>/dev/null || return 1
	stat=${stat##*) }
	[ "${stat%% *}" != Z ]
}
# wait_dead PID [SECONDS]
wait_dead() {
	for _ in $(seq $(( ${2:-30} * 10 ))); do
		alive "$1" || { wait "$1" 2>/dev/null; return 0; }
		sleep 0.1
	done
	return 1
}

# The RFC selftest's OOM: /oomtest (memory.max 100M) is filled by hogs in
# cg1 (10M, oom_score_adj 1000), cg2 (40M, -1000), cg3/cg4 (30M), and then
# cg3/cg5 (25M) hits the limit. One kill is enough either way: largest-leaf
# picks cg4, the kernel's killer cg1. Sets PID_CG1.. PID_CG5, VICTIM to the
# cgroup name of the first hog to die (cg1..cg5), or "none", and VICTIM_PID
# to its pid; it returns once the OOM is over (settled). Call it directly, not in $(...): the variables must reach the
# caller. /oomtest itself is kept if it exists (a policy may be scoped to it).
oom_story() {
	oom_story_setup
	oom_story_trigger
}
# The story up to the OOM: cg1, cg2 and cg3/cg4 with their hogs, cg3/cg5 empty
oom_story_setup() {
	local c
	for c in cg1 cg2 cg3; do cg_remove /oomtest/$c; done
	cg_make /oomtest 100M
	cg_make /oomtest/cg1; cg_make /oomtest/cg2; cg_make /oomtest/cg3/cg4
	cg_make /oomtest/cg3/cg5
	PID_CG1=$(hog_start /oomtest/cg1 10 1000)
	PID_CG2=$(hog_start /oomtest/cg2 40 -1000)
	PID_CG4=$(hog_start /oomtest/cg3/cg4 30 0)
}
# The OOM: cg5's hog fills /oomtest; wait for the first death, then for
# the episode's end (settled)
oom_story_trigger() {
	local i cg var ready
	hogs_ready "$PID_CG1" "$PID_CG2" "$PID_CG4"
	ready=$(mktemp -u)
	PID_CG5=$(hog_go /oomtest/cg3/cg5 25 0 "$ready")
	VICTIM=none VICTIM_PID=none
	for i in $(seq 300); do
		for cg in cg1 cg2 cg4 cg5; do
			var=PID_${cg^^}
			alive "${!var}" || { VICTIM=$cg VICTIM_PID=${!var}; break 2; }
		done
		sleep 0.1
	done
	[ "$VICTIM" = none ] || settled "$PID_CG5" "$ready" ||
		echo "# cg5's hog neither filled its memory nor died in 30 s"
	rm -f "$ready"
}
