// SPDX-License-Identifier: GPL-2.0
/*
 * Programs that break the BPF OOM rules. verifier_refuses.c loads each one
 * alone and checks that the verifier says no, with the expected message.
 * Each program is named after what it tries.
 */
#include "oom.bpf.h"

char LICENSE[] SEC("license") = "GPL";

/*
 * Killing is for OOM policies, i.e. fmod_ret programs on the OOM hook: the
 * kfunc filter refuses bpf_oom_kill_process() everywhere else.
 */

/* Not from a syscall program (the kfunc is not even registered there) */
SEC("syscall")
int kill_from_syscall(void *ctx)
{
	bpf_oom_kill_process(NULL, NULL, "no");
	return 0;
}

/* Not from a plain fentry program on the OOM hook... */
SEC("fentry.s/bpf_handle_out_of_memory")
int BPF_PROG(kill_from_fentry, struct oom_control *oc)
{
	bpf_oom_kill_process(oc, bpf_get_current_task_btf(), "no");
	return 0;
}

/* ...nor from an fexit program on it */
SEC("fexit.s/bpf_handle_out_of_memory")
int BPF_PROG(kill_from_fexit, struct oom_control *oc, int ret)
{
	bpf_oom_kill_process(oc, bpf_get_current_task_btf(), "no");
	return 0;
}

/* Not from a kprobe on the kernel's OOM path */
SEC("kprobe/out_of_memory")
int BPF_KPROBE(kill_from_kprobe, struct oom_control *oc)
{
	bpf_oom_kill_process(NULL, NULL, "no");
	return 0;
}

/* Not from a (sleepable) LSM program: it shares the tracing kfunc set */
SEC("lsm.s/file_open")
int BPF_PROG(kill_from_lsm, struct file *file)
{
	bpf_oom_kill_process(NULL, bpf_get_current_task_btf(), "no");
	return 0;
}

/* Not from the PSI hook either: a handler declares, the policy kills */
SEC("fmod_ret.s/bpf_handle_psi_event")
int BPF_PROG(kill_from_psi_hook, struct psi_trigger *t)
{
	return bpf_oom_kill_process(NULL, bpf_get_current_task_btf(), "no");
}

/*
 * Only oc->memcg is vouched for: oc->chosen is a plain pointer the kernel
 * may have dropped, not a task a policy may kill.
 */
SEC("fmod_ret.s/bpf_handle_out_of_memory")
int BPF_PROG(kill_untrusted_chosen_task, struct oom_control *oc)
{
	struct task_struct *chosen = oc->chosen;

	if (!chosen)
		return 0;
	return bpf_oom_kill_process(oc, chosen, "no") == 0;
}

/* Declaring an OOM from inside the OOM handling is refused */
SEC("fmod_ret.s/bpf_handle_out_of_memory")
int BPF_PROG(declare_from_oom_hook, struct oom_control *oc)
{
	return bpf_out_of_memory(NULL, 0);
}

/* Declaring reclaims and may sleep: a PSI handler must be sleepable */
SEC("fmod_ret/bpf_handle_psi_event")
int BPF_PROG(declare_while_atomic, struct psi_trigger *t)
{
	return bpf_out_of_memory(NULL, 0);
}

/* Triggers are managed by tools (syscall programs), not by handlers */
SEC("fmod_ret.s/bpf_handle_psi_event")
int BPF_PROG(trigger_from_psi_hook, struct psi_trigger *t)
{
	return bpf_psi_create_trigger(0, PSI_MEM_SOME, 100000, 1000000);
}

/* oc->memcg is NULL for a system-wide OOM: check it before passing it... */
SEC("fmod_ret.s/bpf_handle_out_of_memory")
int BPF_PROG(unchecked_oom_memcg, struct oom_control *oc)
{
	return bpf_mem_cgroup_usage(oc->memcg, false) > 0;
}

/* ...and before reading through it */
SEC("fmod_ret.s/bpf_handle_out_of_memory")
int BPF_PROG(deref_unchecked_oom_memcg, struct oom_control *oc)
{
	return oc->memcg->css.cgroup->level > 1;
}

/*
 * The oom_control is the kernel's: a policy only reads it. Here one would
 * claim progress without killing, and the kernel would not fall back.
 */
SEC("fmod_ret.s/bpf_handle_out_of_memory")
int BPF_PROG(write_oom_control, struct oom_control *oc)
{
	oc->bpf_memory_freed = true;
	return 1;
}

/* A memcg reference must be put... */
SEC("fmod_ret.s/bpf_handle_out_of_memory")
int BPF_PROG(leaked_memcg, struct oom_control *oc)
{
	struct mem_cgroup *root = bpf_get_root_mem_cgroup();

	return root != NULL;
}

/* ...and not used once it is */
SEC("fmod_ret.s/bpf_handle_out_of_memory")
int BPF_PROG(memcg_use_after_put, struct oom_control *oc)
{
	struct mem_cgroup *root = bpf_get_root_mem_cgroup();

	if (!root)
		return 0;
	bpf_put_mem_cgroup(root);
	return bpf_mem_cgroup_usage(root, false) > 0;
}

/* Flushing stats sleeps: not from a non-sleepable program */
SEC("fmod_ret/bpf_handle_out_of_memory")
int BPF_PROG(flush_while_atomic, struct oom_control *oc)
{
	struct mem_cgroup *root = bpf_get_root_mem_cgroup();

	if (root) {
		bpf_mem_cgroup_flush_stats(root);
		bpf_put_mem_cgroup(root);
	}
	return 0;
}

/*
 * Only hooks that vouch for their arguments (the OOM and PSI hooks) give
 * fmod_ret programs trusted pointers. security_vm_enough_memory_mm() is
 * modifiable (an LSM entry point) but its mm comes from anywhere. No kfunc
 * takes an mm, and the verifier checks trust before the pointee's type, so
 * handing the mm to a memcg kfunc tests the trust alone: were the argument
 * trusted, the refusal would name the type mismatch instead.
 */
SEC("fmod_ret/security_vm_enough_memory_mm")
int BPF_PROG(trust_fmod_ret_arg_of_non_hook, struct mm_struct *mm, long pages)
{
	return bpf_mem_cgroup_usage((struct mem_cgroup *)mm, false) > 0;
}

/* The same for fentry: out_of_memory()'s oc and its memcg are not trusted */
SEC("fentry/out_of_memory")
int BPF_PROG(trust_fentry_oom_memcg, struct oom_control *oc)
{
	struct mem_cgroup *memcg = oc->memcg;

	if (!memcg)
		return 0;
	return bpf_mem_cgroup_usage(memcg, false) > 0;
}

/* Only bpf hooks are modifiable, not the OOM killer itself */
SEC("fmod_ret/out_of_memory")
int BPF_PROG(modify_out_of_memory, struct oom_control *oc)
{
	return 1;
}

/*
 * bpf_copy_from_user_task() takes the task's mmap_lock, and a task holding
 * it may be the one allocating under oom_lock: an ABBA deadlock, so OOM
 * policies cannot use it.
 */
SEC("fmod_ret.s/bpf_handle_out_of_memory")
int BPF_PROG(copy_from_user_task_in_oom_hook, struct oom_control *oc)
{
	struct task_struct *task = bpf_get_current_task_btf();
	char comm[16];

	bpf_copy_from_user_task(comm, sizeof(comm), (void *)task->mm->arg_start,
				task, 0);
	return comm[0] == '\0';
}

/* Nor may any other program on the OOM hook, which runs under oom_lock too */
SEC("fentry.s/bpf_handle_out_of_memory")
int BPF_PROG(copy_from_user_task_in_oom_fentry, struct oom_control *oc)
{
	struct task_struct *task = bpf_get_current_task_btf();
	char comm[16];

	bpf_copy_from_user_task(comm, sizeof(comm), (void *)task->mm->arg_start,
				task, 0);
	return 0;
}

SEC("fexit.s/bpf_handle_out_of_memory")
int BPF_PROG(copy_from_user_task_in_oom_fexit, struct oom_control *oc, int ret)
{
	struct task_struct *task = bpf_get_current_task_btf();
	char comm[16];

	bpf_copy_from_user_task(comm, sizeof(comm), (void *)task->mm->arg_start,
				task, 0);
	return 0;
}

/*
 * An fentry program on a function that runs under simple_xattr_set()'s
 * write lock would spin on it reading an xattr: only programs on the bpf
 * hooks, OOM policies and syscall programs read cgroup xattrs (defect g).
 */
char xattr_buf[8];
int xattr_ret;

SEC("fentry/rb_insert_color")
int BPF_PROG(read_xattr_from_fentry, struct rb_node *node, struct rb_root *root)
{
	struct cgroup *cgrp = bpf_cgroup_from_id(1);
	struct bpf_dynptr value;

	if (!cgrp)
		return 0;
	bpf_dynptr_from_mem(xattr_buf, sizeof(xattr_buf), 0, &value);
	xattr_ret = bpf_cgroup_read_xattr(cgrp, "user.oomd_omit", &value);
	bpf_cgroup_release(cgrp);
	return 0;
}
