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

static const struct {
	const char *prog;
	const char *msg;
} cases[] = {
	{ "kill_from_syscall", "calling kernel function bpf_oom_kill_process is not allowed" },
	{ "kill_from_fentry", "calling kernel function bpf_oom_kill_process is not allowed" },
	{ "declare_from_oom_hook", "calling kernel function bpf_out_of_memory is not allowed" },
	{ "trigger_from_psi_hook", "calling kernel function bpf_psi_create_trigger is not allowed" },
	{ "unchecked_oom_memcg", "Possibly NULL pointer passed to trusted arg0" },
	{ "leaked_memcg", "Unreleased reference" },
	{ "flush_while_atomic", "program must be sleepable to call sleepable kfunc bpf_mem_cgroup_flush_stats" },
};

static char log_buf[1 << 20];

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
			char *tail = log_buf + strlen(log_buf);

			/* The end of the log tells what happened instead */
			for (int lines = 0; tail > log_buf && lines < 4; tail--)
				lines += tail[-1] == '\n';
			printf("# %s: load %s; log ends:\n# %s\n", cases[i].prog,
			       err ? "failed" : "succeeded", tail);
		}
		verifier_refuses_bpf__destroy(skel);
	}
	return checks_done();
}
