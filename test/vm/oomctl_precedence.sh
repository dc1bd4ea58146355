#!/bin/bash
# Several OOM policies at once: whatever the attach order, the policy with
# the deepest scope that holds the OOM decides, and one OOM kills once. The
# built-in policies are cgroup policies (struct bpf_oom_ops), one a cgroup:
# the kernel asks them from the OOM's cgroup up to the root, until one
# kills. And a policy whose kill the kernel refuses (item j): the kernel's
# killer acts and the log says so.
# Usage (in the guest): oomctl_precedence.sh BUILD_DIR
set -u
build=${1:?usage: oomctl_precedence.sh BUILD_DIR}
. "$(dirname "$0")/lib.sh"
OOMCTL=$build/cli/oomctl HOG=$build/test/vm/hog
oomctl() { "$OOMCTL" "$@"; }
pins=/sys/fs/bpf/oomctl

# /prec/b holds big (40M) and small (16M), /prec/other 60M. big carries
# user.oomd_omit, so in /prec/b largest-leaf picks big and oomd small.
BIG=0 SMALL=0 OTHER=0
hogs() {	# (re)start the hogs that are not running
	alive "$BIG" || BIG=$(hog_start /prec/b/big 40 0)
	alive "$SMALL" || SMALL=$(hog_start /prec/b/small 16 0)
	alive "$OTHER" || OTHER=$(hog_start /prec/other 60 0)
	[ "$BIG" != 0 ] && [ "$SMALL" != 0 ] && [ "$OTHER" != 0 ] ||
		bail "a hog did not start"
}
cg_remove /prec
cg_make /prec/b/big; cg_make /prec/b/small; cg_make /prec/other
setfattr -n user.oomd_omit -v 1 $CG/prec/b/big || bail "no user xattrs on cgroupfs"

# one_oom CGROUP: declare an OOM there. VICTIM: the hog that died (big,
# small, other, none); KILLS: oom_kill events counted meanwhile.
one_oom() {
	local k0 h
	hogs
	k0=$(oom_kills)
	oomctl oom declare "$1" >/dev/null
	VICTIM=none
	for _ in $(seq 50); do
		for h in big small other; do
			local var=${h^^}
			alive "${!var}" || { VICTIM=$h; break 2; }
		done
		sleep 0.1
	done
	# oom declare returns once the OOM was handled: its kills are counted
	KILLS=$(( $(oom_kills) - k0 ))
	CHOSEN_BY=$(oomctl -j event list | jq -r '[.events[] | select(.type == "kill")] | last | .chosen_by')
}

# expect WHAT VICTIM CHOSEN_BY CGROUP: one OOM in CGROUP kills VICTIM once
expect() {
	one_oom "$4"
	check "$1: one OOM in $4 kills $2 (got $VICTIM)" test "$VICTIM" = "$2"
	check "$1: exactly one oom_kill (got $KILLS)" test "$KILLS" = 1
	check "$1: chosen by $3 (log: $CHOSEN_BY)" test "$CHOSEN_BY" = "$3"
}

detach_all() {
	local p
	for p in $(oomctl -j policy list | jq -r '.policies[].name'); do
		oomctl policy detach "$p" >/dev/null
	done
}

# --- one policy a cgroup ------------------------------------------------------
oomctl policy attach oomd >/dev/null
check "a second system-wide policy is refused: the root has one" \
	refused "Error: the root cgroup has a policy attached already (oomctl policy list): one a cgroup" \
	oomctl policy attach largest-leaf
check "...and nothing of it stays attached" \
	test "$(oomctl -j policy list | jq '.policies | length')" = 1
expect "the system-wide oomd decides" small oomd /prec/b
detach_all

# --- a scoped policy against a system-wide one, in both orders ---------------
oomctl policy attach largest-leaf >/dev/null
check "attach oomd scope /prec/b after a system-wide largest-leaf" \
	oomctl policy attach oomd scope /prec/b
expect "oomd scoped, attached last" small oomd /prec/b
detach_all

oomctl policy attach oomd scope /prec/b >/dev/null
oomctl policy attach largest-leaf >/dev/null
expect "oomd scoped, attached first" small oomd /prec/b
check "largest-leaf was not asked: oomd killed first" \
	json '.runs == 0 and .kills == 0' oomctl -j policy show largest-leaf
expect "an OOM outside oomd's scope" other largest-leaf /prec
detach_all

# The other way round: largest-leaf scoped, oomd system-wide
oomctl policy attach largest-leaf scope /prec/b >/dev/null
oomctl policy attach oomd >/dev/null
expect "largest-leaf scoped, attached first" big largest-leaf /prec/b
detach_all
oomctl policy attach oomd >/dev/null
oomctl policy attach largest-leaf scope /prec/b >/dev/null
expect "largest-leaf scoped, attached last" big largest-leaf /prec/b
detach_all

# --- nested scopes: /prec and /prec/b ----------------------------------------
oomctl policy attach oomd scope /prec/b >/dev/null
oomctl policy attach largest-leaf scope /prec >/dev/null
expect "nested: oomd /prec/b first, largest-leaf /prec last" small oomd /prec/b
expect "nested: an OOM in /prec is largest-leaf's" other largest-leaf /prec
detach_all
oomctl policy attach largest-leaf scope /prec >/dev/null
oomctl policy attach oomd scope /prec/b >/dev/null
expect "nested: largest-leaf /prec first, oomd /prec/b last" small oomd /prec/b
detach_all
oomctl policy attach oomd scope /prec >/dev/null
oomctl policy attach largest-leaf scope /prec/b >/dev/null
expect "nested: largest-leaf /prec/b under oomd /prec" big largest-leaf /prec/b
detach_all

# --- a user's copy of a built-in is a cgroup policy too -----------------------
cp "$build/bpf/largest_leaf.bpf.o" /tmp/myleaf.bpf.o
oomctl policy attach oomd scope /prec/b >/dev/null
oomctl policy attach /tmp/myleaf.bpf.o >/dev/null
expect "a user's largest_leaf.bpf.o, system-wide, attached last" small oomd /prec/b
detach_all

# --- what takes no precedence -------------------------------------------------
oomctl policy attach oomd scope /prec/b dry-run >/dev/null
oomctl policy attach largest-leaf >/dev/null
expect "a deeper dry-run policy kills nothing: the next one up decides" big largest-leaf /prec/b
detach_all

# The deeper policy finds nothing: the kernel asks the next policy up
setfattr -n user.oomd_omit -v 1 $CG/prec/b/small
oomctl policy attach oomd scope /prec/b >/dev/null
oomctl policy attach largest-leaf >/dev/null
expect "the deeper policy frees nothing: the root's decides" big largest-leaf /prec/b
check "oomd was asked first" json '.runs >= 1 and .kills == 0' oomctl -j policy show oomd
detach_all
oomctl policy attach oomd scope /prec/b >/dev/null
expect "with no policy above it, the kernel's killer acts" big "the kernel's OOM killer" /prec/b
setfattr -x user.oomd_omit $CG/prec/b/small
oomctl policy attach largest-leaf >/dev/null
check "detach the deeper policy" oomctl policy detach oomd
expect "the system-wide policy handles /prec/b again" big largest-leaf /prec/b
check "attaching a name twice fails" fails oomctl policy attach largest-leaf scope /prec/b
detach_all
cg_remove /prec

# --- a refused kill: the kernel's killer acts and is named (item j) ----------
# refused_kill.bpf.o names the oom_score_adj -1000 processes of the OOM's
# memcg, which the kernel refuses (-EPERM), and returns 1 anyway.
cg_make /refused
PROT=$(hog_start /refused 30 -1000)
VICT=$(hog_start /refused 10 0)
cp "$build/bpf/refused_kill.bpf.o" /tmp/refused.bpf.o
check "attach a policy whose kills are refused" oomctl policy attach /tmp/refused.bpf.o
k0=$(oom_kills)
check "declare an OOM in /refused" oomctl oom declare /refused
check "the kernel's killer killed the other hog" wait_dead "$VICT" 10
check "the protected hog lives" alive "$PROT"
check "one oom_kill" test "$(( $(oom_kills) - k0 ))" = 1
prog=$(oomctl -j policy show refused | jq .prog_id)
bss=$(bpftool -j prog show id "$prog" | jq '.map_ids[]' | while read -r m; do
	bpftool -j map dump id "$m" 2>/dev/null
done | jq -sc '[.. | objects | select(has("last_ret") or has("nr_tries"))] | add')
check "the policy tried and was refused with -EPERM" \
	jqe '.last_ret == -1 and .nr_tries >= 1' "$bss"
k=$(oomctl -j event list | jq -c '[.events[] | select(.type == "kill")] | last')
check "the log's last kill is that hog's" test "$(jq -r .pid <<<"$k")" = "$VICT"
check "the log says the kernel chose it" \
	test "$(jq -r .chosen_by <<<"$k")" = "the kernel's OOM killer"
check "policy show counts no kill for the refused policy" \
	test "$(oomctl -j policy show refused | jq .kills)" = 0
oomctl policy detach refused >/dev/null
cg_remove /refused

done_checks
