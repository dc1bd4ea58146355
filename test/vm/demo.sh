#!/bin/bash
# The demo, run inside the guest by test/demo: an admin's session with
# oomctl on the patched kernel. Usage: demo.sh BUILD_DIR
set -u
build=${1:?usage: demo.sh BUILD_DIR}
. "$(dirname "$0")/lib.sh"
HOG=$build/test/vm/hog
export PATH="$build/cli:$PATH"

step() { printf '\n\033[1m== %s ==\033[0m\n' "$*"; }
run() { printf '\033[2m# %s\033[0m\n' "$*"; "$@"; }

step "The kernel: $(uname -r), with the BPF OOM hooks"
grep -q bpf_handle_out_of_memory /proc/kallsyms && echo "bpf_handle_out_of_memory and bpf_handle_psi_event are there"

step "1. The RFC's OOM story: the largest-leaf policy, attached with oomctl"
run oomctl policy attach largest-leaf
run oomctl policy list
echo "oomctl has exited; the policy stays attached (pinned under /sys/fs/bpf/oomctl)."
echo "/oomtest is limited to 100M; hogs fill cg1 (10M, oom_score_adj 1000),"
echo "cg2 (40M, oom_score_adj -1000), cg3/cg4 (30M), then cg3/cg5 hits the limit..."
oom_story
echo "First to die: the hog of $VICTIM"
run oomctl memcg list /oomtest tree
run oomctl event list count 3
run oomctl policy list

step "2. The same OOM without the policy: the kernel's own heuristic"
run oomctl policy detach largest-leaf
oom_story
echo "First to die: the hog of $VICTIM (the kernel prefers oom_score_adj 1000)"
run oomctl event list count 1
cg_remove /oomtest

step "3. Pressure declares the OOM: a PSI trigger no process holds"
cg_make /psitest/cg1; cg_make /psitest/cg2
echo 40M > $CG/psitest/cg2/memory.high
run oomctl psi add /psitest/cg2 some 100ms 1s
run oomctl psi list
echo "cg2's hog wants 500M but is throttled at memory.high=40M..."
keep=$(hog_start /psitest/cg1 100 0)
victim=$(hog_go /psitest/cg2 500 0)
wait_dead "$victim" 60 && echo "cg2's hog was killed; cg1's is $(alive "$keep" && echo alive)"
run oomctl event list count 4
run oomctl psi list
cg_remove /psitest
echo "(removing /psitest removed its trigger too)"
run oomctl psi list

step "4. An OOM declared on purpose"
cg_make /batch
hog_start /batch 64 0 >/dev/null
run oomctl oom declare /batch

step "5. The overview, as systemd's oomctl dump gives it"
run oomctl dump | head -30
cg_remove /batch
