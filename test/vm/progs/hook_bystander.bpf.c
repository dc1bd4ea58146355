// SPDX-License-Identifier: GPL-2.0
/*
 * A program that stays on the OOM hook while test/vm/oom_detach_midway.c
 * detaches another: with one left, the kernel modifies the hook's
 * trampoline instead of taking it down, and does not wait for the program
 * being detached to return before it drops its last reference.
 */
#include "oom.bpf.h"

char LICENSE[] SEC("license") = "GPL";

SEC("fmod_ret.s/bpf_handle_out_of_memory")
int BPF_PROG(hook_bystander, struct oom_control *oc)
{
	return 0;
}
