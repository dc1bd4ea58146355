#!/bin/bash
# oomctl apply: a configuration file attaches its policies and PSI triggers;
# applied again it changes nothing (same programs); a changed file is in
# force after apply; a broken file or a policy that fails to load half-way
# leaves the previous state as it was; what was attached by hand stays.
# The default file and its drop-ins are read in a private /etc.
# Usage (in the guest): oomctl_apply.sh BUILD_DIR
set -u
build=${1:?usage: oomctl_apply.sh BUILD_DIR}
. "$(dirname "$0")/lib.sh"
OOMCTL=$build/cli/oomctl
oomctl() { "$OOMCTL" "$@"; }
pins=/sys/fs/bpf/oomctl

cg_remove /apply
cg_make /apply/a
cg_make /apply/b
cg_make /apply/h
d=/tmp/apply
rm -rf $d && mkdir -p $d
cp "$build/bpf/largest_leaf.bpf.o" $d/ll2.bpf.o
cp "$build/bpf/bad_policy.bpf.o" $d/bad.bpf.o
cp "$build/bpf/oomd.bpf.o" $d/hand.bpf.o

# state: the policies (name, prog, scope, mode) and the triggers, as JSON
state() {
	{ oomctl -j policy list | jq -c '[.policies[] | {name, prog_id, scope, mode}] | sort_by(.name)'
	  oomctl -j psi list | jq -c '[.triggers[] | {id, cgroup, kind, stall_us, window_us, pause_us}] | sort_by(.id)'
	} 2>&1
}
# has JQ: the filter holds on {"p": policies, "t": triggers}
has() {
	local s
	s=$(state | jq -sc '{p: .[0], t: .[1]}')
	jqe "$1" "$s"
}
# same_state BEFORE: the state and the pins are what they were
same_state() {
	local now
	now="$(state)
$(find $pins | sort)"
	# files: the guest's devtmpfs has no /dev/fd for <(...)
	[ "$now" = "$1" ] || { echo "$1" >$d/was; echo "$now" >$d/now
		diff $d/was $d/now; return 1; }
}
snapshot() { state; find $pins | sort; }

# --- by hand, before any configuration: apply must leave these alone --------
oomctl policy attach $d/hand.bpf.o scope /apply/h >/dev/null || bail "attach hand.bpf.o by hand"
hand_trig=$(oomctl -j psi add /apply/a some 300ms 2s | jq -r .id)

# --- a first configuration --------------------------------------------------
cat >$d/one.conf <<CONF
# policies
policy attach largest-leaf scope /apply/a
policy attach oomd dry-run

psi add /apply/b some 150ms 1s   # the trigger
CONF
check "--check passes" oomctl apply --check $d/one.conf
check "--check attached nothing" has '(.p | map(.name)) == ["hand"]'
check "apply attaches it" json '.added == 3 and .kept == 0 and .removed == 0' \
	oomctl -j apply $d/one.conf
check "largest-leaf is scoped to /apply/a and kills" \
	has 'any(.p[]; .name == "largest-leaf" and .scope == "/apply/a" and .mode == "kill")'
check "oomd is attached dry-run, system-wide" \
	has 'any(.p[]; .name == "oomd" and .scope == "system" and .mode == "dry-run")'
check "the trigger is on /apply/b: some 150ms per 1s" \
	has 'any(.t[]; .cgroup == "/apply/b" and .kind == "some" and .stall_us == 150000 and .window_us == 1000000)'
check "the hand-attached policy and trigger are still there" \
	has "any(.p[]; .name == \"hand\") and any(.t[]; .id == $hand_trig)"
check "the event recorder is pinned" test -d $pins/recorder
before=$(snapshot)

# --- again: nothing changes ------------------------------------------------------
check "apply again: all kept" json '.added == 0 and .kept == 3 and .removed == 0' \
	oomctl -j apply $d/one.conf
check "apply again: same programs, same triggers, same pins" same_state "$before"

# --- a broken file: the previous state stays -----------------------------------
printf 'policy attach oomd\npsi add /apply/b some 1s 2s\npolicy attach largest-leaf sideways\n' >$d/broken.conf
out=$(oomctl apply $d/broken.conf 2>&1); rc=$?
check "a broken file: exit status 2 ($rc)" test "$rc" = 2
check "a broken file: one line naming line 3" \
	test "$out" = "Error: $d/broken.conf:3: unexpected 'sideways' (policy attach { NAME | FILE.bpf.o } [scope CGROUP] [dry-run] [kill-unit] [name POLICY])"
check "a broken file: nothing changed" same_state "$before"
printf 'policy attach oomd\npolicy attach oomd scope /apply/nothere\n' >$d/broken2.conf
check "a scope that does not exist fails" fails oomctl apply $d/broken2.conf
check "... and nothing changed" same_state "$before"

# --- a conflict with a policy attached by hand ---------------------------------
printf 'policy attach %s dry-run\n' $d/hand.bpf.o >$d/conflict.conf
out=$(oomctl apply $d/conflict.conf 2>&1); rc=$?
check "a hand-attached policy with other options: exit 1 ($rc)" test "$rc" = 1
check "... named with its line" grep -q "^Error: $d/conflict.conf:1: policy hand is attached by hand" <<<"$out"
check "... and nothing changed" same_state "$before"

# --- a change: in force after apply -------------------------------------------
cat >$d/two.conf <<CONF
policy attach largest-leaf scope /apply/b
policy attach $d/ll2.bpf.o dry-run
psi add /apply/b full 200ms 2s
CONF
old_ll=$(oomctl -j policy show largest-leaf | jq .prog_id)
check "apply the changed file" json '.added == 3 and .removed == 3' oomctl -j apply $d/two.conf
check "largest-leaf moved to /apply/b (new program)" \
	has "any(.p[]; .name == \"largest-leaf\" and .scope == \"/apply/b\" and .prog_id != $old_ll)"
check "ll2 from the object file, dry-run" \
	has 'any(.p[]; .name == "ll2" and .mode == "dry-run")'
check "oomd, no longer configured, is detached" has 'all(.p[]; .name != "oomd")'
check "the old trigger is gone, the new one is there" \
	has 'all(.t[]; .kind != "some" or .cgroup != "/apply/b") and any(.t[]; .cgroup == "/apply/b" and .kind == "full" and .stall_us == 200000 and .window_us == 2000000)'
check "the hand-attached policy and trigger stay" \
	has "any(.p[]; .name == \"hand\") and any(.t[]; .id == $hand_trig)"
before=$(snapshot)

# --- a policy that fails to load, after a good one: all undone ------------------
cat >$d/half.conf <<CONF
policy attach largest-leaf scope /apply/b
policy attach $d/ll2.bpf.o dry-run
psi add /apply/b full 200ms 2s
policy attach oomd scope /apply/a
psi add /apply/a full 100ms 1s
policy attach $d/bad.bpf.o
CONF
check "--check cannot see it: the file is fine" oomctl apply --check $d/half.conf
out=$(oomctl apply $d/half.conf 2>&1); rc=$?
check "the verifier's refusal fails apply ($rc)" test "$rc" = 1
check "... saying which line" grep -q "^$d/half.conf:6: this line failed" <<<"$out"
check "oomd, attached before it, was undone: state as before" \
	same_state "$before"
out=$(oomctl -j apply $d/half.conf 2>&1); rc=$?
check "the same with -j: exit 1 ($rc), one JSON error" \
	jqe '.error | test("bad_policy|bad|verif|load"; "i")' "$out"
check "... and the state as before" same_state "$before"
check "apply of the good file still keeps all" json '.added == 0 and .kept == 3' \
	oomctl -j apply $d/two.conf

# --- a changed object is attached anew, whatever its mtime -----------------------
old_ll2=$(oomctl -j policy show ll2 | jq .prog_id)
touch $d/ll2.bpf.o
check "apply after the object was touched, not changed: kept" \
	json '.added == 0 and .kept == 3' oomctl -j apply $d/two.conf
# an upgrade, as dpkg and install -p do it: new content, the old mtime
cp "$build/bpf/oomd.bpf.o" $d/new.bpf.o
touch -r $d/ll2.bpf.o $d/new.bpf.o
mv $d/new.bpf.o $d/ll2.bpf.o
check "apply after the object changed, its mtime kept" \
	json '.added == 1 and .removed == 1 and .kept == 2' oomctl -j apply $d/two.conf
check "ll2 runs a new program" \
	json ".prog_id != $old_ll2" oomctl -j policy show ll2

# --- a trigger's pause is part of it: another pause replaces the trigger ---------
sed 's|^psi add /apply/b full 200ms 2s$|& pause 15s|' $d/two.conf >$d/pause.conf
check "a pause added to the trigger's line replaces the trigger" \
	json '.added == 1 and .removed == 1 and .kept == 2' oomctl -j apply $d/pause.conf
check "... whose handler pauses 15s, as psi list reads it" \
	has 'any(.t[]; .cgroup == "/apply/b" and .kind == "full" and .pause_us == 15000000)'
check "... and a second apply keeps it" \
	json '.added == 0 and .kept == 3' oomctl -j apply $d/pause.conf
check "back to the default pause (two windows): replaced again" \
	json '.added == 1 and .removed == 1 and .kept == 2' oomctl -j apply $d/two.conf
check "... whose handler pauses two windows" \
	has 'any(.t[]; .cgroup == "/apply/b" and .kind == "full" and .pause_us == 4000000)'

# --- the default file and its drop-ins, in a private /etc -------------------------
cp -a /etc $d/etc
# dropin.sh DUP: /etc/oomctl as below (DUP=1: 20-b.conf repeats oomd), then
# oomctl -j apply in a mount namespace of its own
cat >$d/dropin.sh <<'SH'
set -e
d=$1 oomctl=$2 dup=$3
mount -t tmpfs tmpfs /etc
cp -a $d/etc/. /etc/
mkdir -p /etc/oomctl/oomctl.conf.d
echo "policy attach largest-leaf scope /apply/b" >/etc/oomctl/oomctl.conf
echo "policy attach oomd" >/etc/oomctl/oomctl.conf.d/10-a.conf
[ "$dup" = 0 ] || echo "policy attach oomd dry-run" >/etc/oomctl/oomctl.conf.d/20-b.conf
echo "policy attach $d/ll2.bpf.o" >/etc/oomctl/oomctl.conf.d/30-c.txt
exec "$oomctl" -j apply
SH
out=$(unshare -m bash $d/dropin.sh $d "$OOMCTL" 1 2>/dev/null)
check "drop-ins are read in lexical order: 20-b repeats 10-a's oomd" \
	jqe '.error == "/etc/oomctl/oomctl.conf.d/20-b.conf:1: policy '"'oomd'"' is configured already at /etc/oomctl/oomctl.conf.d/10-a.conf:1"' "$out"
out=$(unshare -m bash $d/dropin.sh $d "$OOMCTL" 0 2>/dev/null)
check "the default file and a .conf drop-in apply; a .txt is not read" \
	jqe '.files == 2 and .added == 1 and .kept == 1 and .removed == 2' "$out"
check "... in force: largest-leaf and oomd; ll2 and the trigger are gone" \
	has '(.p | map(.name)) == ["hand", "largest-leaf", "oomd"] and all(.t[]; .cgroup != "/apply/b")'

# --- drop-ins in /etc, /run and below, as systemd reads oomd.conf's -------------
# layers.sh MODE: drop-ins in /etc, /run and /usr/local/lib (the image's
# /usr/lib is read-only; /usr/local/lib holds nothing oomctl needs), each
# on a tmpfs in a mount namespace of its own, then oomctl -j apply --check.
# MODE order adds /etc's 50-last.conf, which repeats /usr/local/lib's
# 05-first.conf: the error names both, in that order.
cat >$d/layers.sh <<'SH'
set -e
d=$1 oomctl=$2 mode=$3
mount -t tmpfs tmpfs /etc
cp -a $d/etc/. /etc/
rm -rf /etc/oomctl
mkdir /etc/oomctl
mount -t tmpfs tmpfs /run
mkdir /run/oomctl
mount -t tmpfs tmpfs /usr/local/lib
mkdir /usr/local/lib/oomctl
et=/etc/oomctl/oomctl.conf.d run=/run/oomctl/oomctl.conf.d
lib=/usr/local/lib/oomctl/oomctl.conf.d
mkdir $et $run $lib
# the same name: /etc's over the others', /run's over /usr/local/lib's
echo "policy attach oomd" >$et/10-a.conf
echo "policy attach oomd dry-run" >$run/10-a.conf
echo "not a line" >$lib/10-a.conf
echo "psi add /apply/b some 150ms 1s" >$run/20-b.conf
echo "not a line" >$lib/20-b.conf
# a link to /dev/null in /etc masks the one below
echo "not a line" >$lib/30-c.conf
ln -s /dev/null $et/30-c.conf
# one of /usr/local/lib's alone, the first by name
echo "policy attach largest-leaf scope /apply/b" >$lib/05-first.conf
[ "$mode" != order ] || echo "policy attach largest-leaf" >$et/50-last.conf
exec "$oomctl" -j apply --check
SH
out=$(unshare -m bash $d/layers.sh $d "$OOMCTL" ok 2>&1)
check "drop-ins of /etc, /run and /usr/local/lib: one file a name, the first folder's" \
	jqe '.files == 4 and .policies == 2 and .triggers == 1' "$out"
out=$(unshare -m bash $d/layers.sh $d "$OOMCTL" order 2>&1)
check "... read by name across the folders: 05-first before /etc's 50-last" \
	jqe '.error == "/etc/oomctl/oomctl.conf.d/50-last.conf:1: policy '"'largest-leaf'"' is configured already at /usr/local/lib/oomctl/oomctl.conf.d/05-first.conf:1"' "$out"

# --- an empty file: ours go, the hand-attached stay ------------------------------
: >$d/empty.conf
check "apply an empty file" json '.removed == 2' oomctl -j apply $d/empty.conf
check "only what was attached by hand is left" \
	has "(.p | map(.name)) == [\"hand\"] and (.t | map(.id)) == [$hand_trig]"
# oomd attached by hand now has the name apply once attached: not apply's
oomctl policy attach oomd >/dev/null
check "a policy attached by hand under a name apply once used stays" \
	json '.removed == 0' oomctl -j apply $d/empty.conf
check "... attached" has 'any(.p[]; .name == "oomd")'
oomctl policy detach oomd >/dev/null

oomctl policy detach hand >/dev/null
oomctl psi del "$hand_trig" >/dev/null
cg_remove /apply
done_checks
