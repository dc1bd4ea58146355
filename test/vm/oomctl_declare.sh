#!/bin/bash
# oomctl oom declare: a syscall program calls bpf_out_of_memory(); oomctl
# says who was killed and by whom. System-wide and in a memcg, with and
# without a policy; bad input refused.
# Usage (in the guest): oomctl_declare.sh BUILD_DIR
set -u
build=${1:?usage: oomctl_declare.sh BUILD_DIR}
. "$(dirname "$0")/lib.sh"
OOMCTL=$build/cli/oomctl HOG=$build/test/vm/hog
oomctl() { "$OOMCTL" "$@"; }

cg_remove /decl
cg_make /decl/a; cg_make /decl/b; cg_make /decl/c

check "order out of range is a usage error" bash -c "'$OOMCTL' oom declare order 11 2>/dev/null; test \$? = 2"
check "an unknown cgroup" fails oomctl oom declare /nothere

a=$(hog_start /decl/a 64 1000)
b=$(hog_start /decl/b 32 0)
c=$(hog_start /decl/c 32 0)

out=$(oomctl -j oom declare)
check "a system-wide declared OOM is handled" jqe '.handled == true' "$out"
check "it reports the kill of the oom_score_adj 1000 hog" \
	jqe ".kills[0].pid == $a" "$out"
check "chosen by the kernel's killer" \
	jqe ".kills[0].chosen_by == \"the kernel's OOM killer\"" "$out"
check "that hog is dead" wait_dead "$a" 5
check "plain output names the victim" bash -c "'$OOMCTL' oom declare /decl/c | grep -q 'killed pid $c'"
check "c's hog is dead" wait_dead "$c" 5
c=$(hog_start /decl/c 32 0)

oomctl policy attach largest-leaf >/dev/null
out=$(oomctl -j oom declare /decl/b)
check "an OOM declared in /decl/b with largest-leaf attached" jqe '.handled == true' "$out"
check "it reports b's hog killed by largest-leaf" \
	jqe "[.kills[] | select(.pid == $b) | .chosen_by] == [\"largest-leaf\"]" "$out"
check "b's hog is dead" wait_dead "$b" 5
check "c's hog is alive" alive "$c"
check "the log has the declared OOM in /decl/b" \
	json '[.events[] | select(.type == "oom" and .trigger == "declared" and .cgroup == "/decl/b")] | length == 1' oomctl -j event list
oomctl policy detach largest-leaf >/dev/null

out=$(oomctl -j oom declare /decl/b)
check "an OOM in an empty memcg frees nothing" jqe '.handled == false' "$out"
cg_remove /decl

done_checks
