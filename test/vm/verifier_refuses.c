// SPDX-License-Identifier: GPL-2.0
/*
 * The verifier and the kfunc filters say no to programs that break the BPF
 * OOM rules (progs/verifier_refuses.bpf.c): each program is loaded alone and
 * must fail with the expected message in its log.
 */
#include <stdio.h>
#include <string.h>
#include <bpf/libbpf.h>

#include "scenario.h"
#include "verifier_refuses.skel.h"

#define NOT_ALLOWED(kfunc) "calling kernel function " kfunc " is not allowed"

static const struct {
	const char *prog;
	const char *msg;
} cases[] = {
	/* Only an OOM policy kills */
	{ "kill_from_syscall", NOT_ALLOWED("bpf_oom_kill_process") },
	{ "kill_from_fentry", NOT_ALLOWED("bpf_oom_kill_process") },
	{ "kill_from_fexit", NOT_ALLOWED("bpf_oom_kill_process") },
	{ "kill_from_kprobe", NOT_ALLOWED("bpf_oom_kill_process") },
	/* needs CONFIG_BPF_LSM; 6.12 gives LSM programs the tracing kfuncs */
	{ "kill_from_lsm", NOT_ALLOWED("bpf_oom_kill_process") },
	{ "kill_from_psi_hook", NOT_ALLOWED("bpf_oom_kill_process") },
	{ "kill_untrusted_chosen_task", "R2 must be referenced or trusted" },
	/* Only PSI handlers (sleepable) and tools declare; tools make triggers */
	{ "declare_from_oom_hook", NOT_ALLOWED("bpf_out_of_memory") },
	{ "declare_while_atomic",
	  "program must be sleepable to call sleepable kfunc bpf_out_of_memory" },
	{ "trigger_from_psi_hook", NOT_ALLOWED("bpf_psi_create_trigger") },
	/* oc->memcg may be NULL; *oc is read-only */
	{ "unchecked_oom_memcg", "Possibly NULL pointer passed to trusted arg0" },
	{ "deref_unchecked_oom_memcg", "invalid mem access 'trusted_ptr_or_null_'" },
	{ "write_oom_control", "only read is supported" },
	/* memcg references */
	{ "leaked_memcg", "Unreleased reference" },
	/* the put turns every copy of the pointer into a scalar */
	{ "memcg_use_after_put",
	  "arg#0 pointer type STRUCT mem_cgroup must point to scalar, or struct with scalar" },
	{ "flush_while_atomic",
	  "program must be sleepable to call sleepable kfunc bpf_mem_cgroup_flush_stats" },
	/* Arguments are trusted on the hooks only; only hooks are modifiable */
	{ "trust_fmod_ret_arg_of_non_hook", "R1 must be referenced or trusted" },
	{ "trust_fentry_oom_memcg", "R1 must be referenced or trusted" },
	{ "modify_out_of_memory", "out_of_memory() is not modifiable" },
	/* mmap_lock under oom_lock (issue 9, item 3i) */
	{ "copy_from_user_task_in_oom_hook",
	  "program of this type cannot use helper bpf_copy_from_user_task#191" },
	/* ... nor any program on the OOM hook (issue 19, defect b) */
	{ "copy_from_user_task_in_oom_fentry",
	  "program of this type cannot use helper bpf_copy_from_user_task#191" },
	{ "copy_from_user_task_in_oom_fexit",
	  "program of this type cannot use helper bpf_copy_from_user_task#191" },
	/* cgroup xattrs: not from any tracing program (defect g) */
	{ "read_xattr_from_fentry", NOT_ALLOWED("bpf_cgroup_read_xattr") },
};

static char log_buf[1 << 20];

/* The end of the verifier's log tells what happened instead, as TAP comments */
static void print_log_tail(int lines)
{
	char *end = log_buf + strlen(log_buf), *tail = end;

	if (tail == log_buf) {
		printf("# the verifier's log is empty (libbpf says why on stderr)\n");
		return;
	}
	if (tail[-1] == '\n')
		tail--;
	for (; tail > log_buf && lines; tail--)
		lines -= tail[-1] == '\n';
	if (*tail == '\n')
		tail++;
	while (tail < end) {
		int len = strcspn(tail, "\n");

		printf("#   %.*s\n", len, tail);
		tail += len + (tail[len] == '\n');
	}
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct verifier_refuses_bpf *skel = verifier_refuses_bpf__open();
		struct bpf_program *prog, *target = NULL;
		int err;

		if (!skel)
			bail("cannot open the object");
		bpf_object__for_each_program(prog, skel->obj) {
			bool this = !strcmp(bpf_program__name(prog), cases[i].prog);

			bpf_program__set_autoload(prog, this);
			if (this)
				target = prog;
		}
		if (!target)
			bail("no program %s", cases[i].prog);
		log_buf[0] = '\0';
		bpf_program__set_log_buf(target, log_buf, sizeof(log_buf));
		bpf_program__set_log_level(target, 1);
		err = verifier_refuses_bpf__load(skel);
		check(err && strstr(log_buf, cases[i].msg), "%s is refused: \"%s\"",
		      cases[i].prog, cases[i].msg);
		if (!err || !strstr(log_buf, cases[i].msg)) {
			printf("# %s: load %s (%d)\n", cases[i].prog,
			       err ? "failed" : "succeeded", err);
			print_log_tail(6);
			if (bpf_program__type(target) == BPF_PROG_TYPE_LSM &&
			    libbpf_probe_bpf_prog_type(BPF_PROG_TYPE_LSM, NULL) <= 0)
				printf("# this kernel has no BPF LSM (CONFIG_BPF_LSM)\n");
		}
		verifier_refuses_bpf__destroy(skel);
	}
	return checks_done();
}
