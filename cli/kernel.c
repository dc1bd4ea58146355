/*
 * What oomctl needs from the running kernel, and how it asks for it
 * (kernel.h): the hooks check, load options, one explanation of a refused
 * load, test runs of syscall programs, and our capabilities for messages.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <linux/capability.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "options.h"
#include "output.h"
#include "kernel.h"

/* Where the kernel describes itself, for messages */
#define VMLINUX_BTF	"/sys/kernel/btf/vmlinux"

/* The series' hooks: every policy, the recorder and the triggers use them */
static const char *const hook_funcs[] = {
	"bpf_handle_out_of_memory",
	"bpf_handle_psi_event",
	NULL
};

/* The first of @names (NULL-terminated) that @btf has no function of */
static const char *missing_func(const struct btf *btf, const char *const *names)
{
	for (; names && *names; names++)
		if (btf__find_by_name_kind(btf, *names, BTF_KIND_FUNC) < 0)
			return *names;
	return NULL;
}

int kernel_check(const char *const *kfuncs)
{
	/* parsed once: dump and the memcg walker ask again */
	static struct btf *btf;
	static int btf_err;
	const char *missing;

	if (!btf && !btf_err) {
		btf = btf__load_vmlinux_btf();
		btf_err = btf ? 0 : errno ?: ENOENT;
	}
	if (!btf) {
		p_err("this kernel lacks BPF OOM support: cannot read its BTF (%s): %s",
		      VMLINUX_BTF, strerror(btf_err));
		return -EOPNOTSUPP;
	}
	missing = missing_func(btf, hook_funcs) ?: missing_func(btf, kfuncs);
	if (missing) {
		p_err("this kernel lacks BPF OOM support: no %s in %s", missing,
		      VMLINUX_BTF);
		return -EOPNOTSUPP;
	}
	return 0;
}

int load_failed(const char *what, int err)
{
	p_err("the kernel refused %s: %s%s", what, strerror(-err),
	      debug ? "" : " (-d shows the verifier log)");
	return err;
}

void open_opts_debug(struct bpf_object_open_opts *opts)
{
	if (debug)
		opts->kernel_log_level = 1 | 2 | 4;
}

int syscall_prog_run(int prog_fd, void *ctx, size_t size)
{
	LIBBPF_OPTS(bpf_test_run_opts, opts, .ctx_in = ctx, .ctx_size_in = size);

	/* A syscall program's context is copied back into ctx_in */
	if (bpf_prog_test_run_opts(prog_fd, &opts))
		return -errno;
	/* What the program returned: 0, or its own -errno */
	return (int)opts.retval;
}

bool cap_effective(int cap)
{
	struct __user_cap_header_struct hdr = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = {};

	if (syscall(SYS_capget, &hdr, data))
		return false;
	return data[CAP_TO_INDEX(cap)].effective & CAP_TO_MASK(cap);
}
