/*
 * The oomctl binary from outside: exit codes, one-line errors, stdout that
 * is always JSON with -j. Nothing here needs the BPF side or root.
 */
#define _GNU_SOURCE	/* memmem() */
#include <dirent.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <json-c/json.h>

#include "tap.h"
#include "text_check.h"

#ifndef OOMCTL_BIN
#error "OOMCTL_BIN must name the oomctl binary"
#endif

#define ARGV_MAX	16

struct run {
	int status;		/* exit code, or 128 + signal */
	char out[65536];
	char err[65536];
};

static void slurp(FILE *f, char *buf, size_t size)
{
	size_t n;

	rewind(f);
	n = fread(buf, 1, size - 1, f);
	buf[n] = '\0';
	fclose(f);
}

/* Run oomctl with @args (NULL-terminated); stdout to @out_path if set. */
static void run_to(struct run *r, const char *out_path, const char *const *args)
{
	FILE *out = tmpfile(), *err = tmpfile();
	const char *argv[ARGV_MAX + 2] = { OOMCTL_BIN };
	int i, status, fd;
	pid_t pid;

	for (i = 0; args[i] && i < ARGV_MAX; i++)
		argv[i + 1] = args[i];
	fflush(stdout);
	pid = fork();
	if (!pid) {
		fd = out_path ? open(out_path, O_WRONLY) : fileno(out);
		dup2(fd, 1);
		dup2(fileno(err), 2);
		execv(OOMCTL_BIN, (char **)argv);
		_exit(127);
	}
	waitpid(pid, &status, 0);
	r->status = WIFEXITED(status) ? WEXITSTATUS(status) :
		    128 + WTERMSIG(status);
	slurp(out, r->out, sizeof(r->out));
	slurp(err, r->err, sizeof(r->err));
}

static void run(struct run *r, const char *const *args)
{
	run_to(r, NULL, args);
}

/* "a b c" of @args, for test names */
static const char *cmdline(const char *const *args)
{
	static char buf[512];
	size_t n = 0;

	buf[0] = '\0';
	for (; *args && n < sizeof(buf); args++)
		n += snprintf(buf + n, sizeof(buf) - n, "%s%s", n ? " " : "",
			      **args ? *args : "''");
	return buf;
}

/* ok(), and on failure what oomctl said */
#define ok_run(r, cond, ...)						\
	({								\
		bool _p = ok(cond, __VA_ARGS__);			\
									\
		if (!_p)						\
			printf("#   status %d\n#   stdout: %s\n#   stderr: %s\n", \
			       (r)->status, (r)->out, (r)->err);	\
		_p;							\
	})

/* stdout is {"error": "non-empty string"} and nothing else */
static bool is_json_error(const char *s)
{
	struct json_object *obj = json_whole(s), *e = NULL;
	bool ret;

	ret = json_object_is_type(obj, json_type_object) &&
	      json_object_object_length(obj) == 1 &&
	      json_object_object_get_ex(obj, "error", &e) &&
	      json_object_is_type(e, json_type_string) &&
	      json_object_get_string_len(e) > 0;
	json_object_put(obj);
	return ret;
}

static char tmpdir[] = "/tmp/oomctl-test.XXXXXX";

/* Whether @dir holds anything but . and .. */
static bool is_dir_nonempty(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	bool any = false;

	while (d && (de = readdir(d)))
		any |= strcmp(de->d_name, ".") && strcmp(de->d_name, "..");
	if (d)
		closedir(d);
	return any;
}

/* Each is refused as a usage error before anything is looked up. */
static const char *const usage_errors[][ARGV_MAX] = {
	{ NULL },
	{ "frobnicate" },
	{ "p" },
	{ "--frob", "memcg" },
	{ "--bpffs" },
	{ "--cgroupfs", "relative/dir", "memcg" },
	{ "memcg", "bogus" },
	{ "memcg", "show" },
	{ "memcg", "show", "a", "b" },
	{ "memcg", "list", "a/../b" },
	{ "memcg", "list", "a", "tree", "x" },
	{ "memcg", "list", "-j" },
	{ "memcg", "show", "" },
	{ "policy", "list", "x" },
	{ "policy", "show" },
	{ "policy", "show", "sixteen-chars-xx" },
	{ "policy", "attach" },
	{ "policy", "attach", "Bad!" },
	{ "policy", "attach", "x", "scope" },
	{ "policy", "attach", "x", "scope", "a/.." },
	{ "policy", "attach", "x", "dry-run", "dry-run" },
	{ "policy", "attach", "x", "bogus" },
	{ "policy", "attach", "x", "name" },
	{ "policy", "attach", "x", "name", "Bad!" },
	{ "policy", "attach", "x", "name", "a", "name", "b" },
	{ "units", "x" },
	{ "policy", "detach" },
	{ "policy", "detach", "-x" },
	{ "psi", "add", "/" },
	{ "psi", "add", "a/../b", "some", "1s", "2s" },
	{ "psi", "add", "/", "bogus", "1s", "2s" },
	{ "psi", "add", "/", "some", "1x", "2s" },
	{ "psi", "add", "/", "some", "1s", "-2s" },
	{ "psi", "add", "/", "some", "1s", "20s" },
	{ "psi", "add", "/", "some", "1s", "499ms" },
	{ "psi", "add", "/", "some", "3s", "2s" },
	{ "psi", "add", "/", "some", "0", "2s" },
	{ "psi", "add", "/", "some", "1s", "2s", "x" },
	{ "psi", "del" },
	{ "psi", "del", "4294967296" },
	{ "psi", "del", "1", "2" },
	{ "oom", "declare", "order" },
	{ "oom", "declare", "order", "11" },
	{ "oom", "declare", "order", "-1" },
	{ "oom", "declare", "/", "wait", "wait" },
	{ "oom", "declare", "order", "1", "order", "2" },
	{ "oom", "declare", "..", "wait" },
	{ "event", "list", "count" },
	{ "event", "list", "count", "0" },
	{ "event", "list", "count", "x" },
	{ "event", "list", "x" },
	{ "event", "watch", "now" },
	{ "dump", "x" },
	{ "help", "frob" },
	{ "help", "memcg", "x" },
	/* -o and -n */
	{ "-o", "bogus", "policy", "list" },
	{ "-o", "path,bogus", "memcg", "list" },
	{ "-o", "", "psi", "list" },
	{ "-o", "name", "policy", "show", "x" },
	{ "-o", "name", "event", "list" },
	{ "-o", "name", "dump" },
	{ "-n", "memcg", "list", "a", "trees" },
	/* keywords: prefixes, but not beyond the word */
	{ "policy", "attach", "x", "dry-runs" },
	{ "policy", "attach", "x", "dr", "dr" },
	{ "oom", "declare", "/", "w", "w" },
	{ "event", "list", "countx", "1" },
};

static void test_usage_errors(void)
{
	const char *args[ARGV_MAX + 1];
	struct run r;
	size_t i, n;

	for (i = 0; i < sizeof(usage_errors) / sizeof(*usage_errors); i++) {
		const char *const *u = usage_errors[i];
		const char *name;

		run(&r, u);
		name = cmdline(u);
		is_int(r.status, 2, "text: '%s' exits 2", name);
		ok_run(&r, count_lines(r.err) == 1 && !strncmp(r.err, "Error: ", 7),
		       "text: '%s' says one Error: line", name);
		is_str(r.out, "", "text: '%s' prints nothing on stdout", name);

		/* the same with -j first */
		args[0] = "-j";
		for (n = 0; u[n]; n++)
			args[n + 1] = u[n];
		args[n + 1] = NULL;
		run(&r, args);
		name = cmdline(args);
		is_int(r.status, 2, "json: '%s' exits 2", name);
		ok_run(&r, is_json_error(r.out), "json: '%s' stdout is {\"error\": ...}",
		       name);
		is_str(r.err, "", "json: '%s' keeps stderr empty", name);
	}
}

static void test_messages(void)
{
	struct run r;

	run(&r, (const char *[]){ "frobnicate", NULL });
	ok_run(&r, strstr(r.err, "'frobnicate'") && strstr(r.err, "object"),
	       "unknown object is named");
	run(&r, (const char *[]){ "p", NULL });
	ok_run(&r, strstr(r.err, "ambiguous") && strstr(r.err, "policy") &&
	       strstr(r.err, "psi"), "ambiguous prefix names the candidates");
	run(&r, (const char *[]){ "memcg", "zap", NULL });
	ok_run(&r, strstr(r.err, "'memcg zap'"), "unknown verb is named with its object");
	run(&r, (const char *[]){ "psi", "add", "/", NULL });
	ok_run(&r, strstr(r.err, "usage: oomctl psi add CGROUP"),
	       "missing arguments show the SYNOPSIS");
	/* argp stops at OBJECT: "-1" reaches the handler, not getopt */
	run(&r, (const char *[]){ "oom", "declare", "order", "-1", NULL });
	ok_run(&r, strstr(r.err, "order '-1'"), "arguments after OBJECT are not options");
	run(&r, (const char *[]){ "--bpffs", NULL });
	ok_run(&r, strstr(r.err, "'--bpffs' needs an argument"),
	       "missing option argument is named");
	run(&r, (const char *[]){ "-o", "name,nosuchcol", "policy", "list",
				  NULL });
	ok_run(&r, strstr(r.err, "unknown column 'nosuchcol'") &&
	       !strstr(r.err, "'name"), "an unknown column is named, alone");
	run(&r, (const char *[]){ "-o", "help", "memcg", "list", NULL });
	ok_run(&r, r.status == 0 && strstr(r.out, "CURRENT") &&
	       strstr(r.out, "current_bytes") && strstr(r.out, "LEVEL") &&
	       !*r.err, "-o help lists a listing's columns, hidden ones too");
	run(&r, (const char *[]){ "-o", "help", "psi", "list", NULL });
	ok_run(&r, r.status == 0 && strstr(r.out, "WINDOW") &&
	       !strstr(r.out, "CURRENT"), "-o help lists that listing's only");
	run(&r, (const char *[]){ "--frob", NULL });
	ok_run(&r, strstr(r.err, "unknown option '--frob'"), "unknown option is named");
}

static void test_success(void)
{
	static const char *const good[][ARGV_MAX] = {
		{ "--version" },
		{ "-V", "memcg", "list" },
		{ "help" },
		{ "help", "psi" },
		{ "help", "help" },
		{ "memcg", "help" },
		{ "policy", "help" },
		{ "psi", "help" },
		{ "oom", "help" },
		{ "event", "help" },
		{ "dump", "help" },
		{ "m", "h" },
		{ "po", "he" },
	};
	struct json_object *obj;
	struct run r;
	size_t i;

	for (i = 0; i < sizeof(good) / sizeof(*good); i++) {
		run(&r, good[i]);
		ok_run(&r, r.status == 0 && *r.out && !*r.err,
		       "'%s' exits 0 with output on stdout only", cmdline(good[i]));
	}
	run(&r, (const char *[]){ "--version", NULL });
	ok_run(&r, !strncmp(r.out, "oomctl v", 8), "--version names oomctl");

	run(&r, (const char *[]){ "help", NULL });
	ok_run(&r, strstr(r.out, "OBJECT := { memcg | policy | psi | oom | "
			  "event | dump | apply | units }"), "help lists the objects");
	run(&r, (const char *[]){ "m", "h", NULL });
	ok_run(&r, strstr(r.out, "oomctl memcg show CGROUP") != NULL,
	       "prefixes reach memcg help");

	/* declaring an OOM kills: never without its name (help, not declare) */
	run(&r, (const char *[]){ "oom", NULL });
	ok_run(&r, r.status == 0 && strstr(r.out, "Usage: oomctl oom help") &&
	       strstr(r.out, "oomctl oom declare") && !*r.err,
	       "'oom' alone prints its help and declares nothing");

	run(&r, (const char *[]){ "-j", "help", NULL });
	ok_run(&r, r.status == 0 && !strcmp(r.out, "null\n"),
	       "-j help says null on stdout");

	run(&r, (const char *[]){ "-j", "--version", NULL });
	obj = json_whole(r.out);
	ok_run(&r, r.status == 0 && obj &&
	       json_object_object_get_ex(obj, "version", NULL) &&
	       json_object_object_get_ex(obj, "libbpf_version", NULL),
	       "-j --version is JSON with the versions");
	json_object_put(obj);

	run(&r, (const char *[]){ "-p", "-V", NULL });
	obj = json_whole(r.out);
	ok_run(&r, r.status == 0 && obj && count_lines(r.out) > 1,
	       "-p implies -j and indents");
	json_object_put(obj);
}

/*
 * Whether the running kernel has the BPF OOM hooks: their names in its BTF.
 * A crude look at the raw file, on purpose unlike oomctl's own check.
 */
static bool kernel_has_hooks(void)
{
	static const char name[] = "bpf_handle_out_of_memory";
	FILE *f = fopen("/sys/kernel/btf/vmlinux", "r");
	struct stat st;
	bool found;
	char *buf;
	size_t n;

	if (!f)
		return false;
	/* sysfs gives the BTF's size */
	buf = fstat(fileno(f), &st) ? NULL : malloc(st.st_size + 1);
	n = buf ? fread(buf, 1, st.st_size, f) : 0;
	fclose(f);
	found = buf && memmem(buf, n, name, sizeof(name));
	free(buf);
	return found;
}

/*
 * Syntax is fine; what happens next is up to the machine. These tests
 * never let oomctl load BPF into the host kernel: it checks the kernel's
 * BTF before any bpf() call, and its pins go to a scratch folder anyway.
 */
static void test_runtime(void)
{
	static const char *const any[][ARGV_MAX] = {
		{ "-j", "memcg", "list" },
		{ "-j", "memcg" },
		{ "-j", "policy", "list" },
		{ "-j", "psi" },
		{ "-j", "event", "list", "count", "3" },
		{ "-j", "dump" },
	};
	const char *args[ARGV_MAX + 1];
	char sub[64], fs[64], bpffs[64];
	struct run r;
	size_t i, n;

	snprintf(bpffs, sizeof(bpffs), "--bpffs=%s/bpf", tmpdir);
	if (kernel_has_hooks()) {
		/* oomctl would load BPF here: that is test/vm's job */
		tap_skip("the host kernel has the BPF OOM hooks");
		goto lookups;
	}
	for (i = 0; i < sizeof(any) / sizeof(*any); i++) {
		args[0] = bpffs;
		for (n = 0; any[i][n]; n++)
			args[n + 1] = any[i][n];
		args[n + 1] = NULL;
		run(&r, args);
		ok_run(&r, r.status == 3 && is_json_error(r.out) &&
		       strstr(r.out, "lacks BPF OOM support") && !*r.err,
		       "'%s' on a kernel without the hooks: exit 3, one JSON error",
		       cmdline(args));
	}
	run(&r, (const char *[]){ bpffs, "policy", "list", NULL });
	ok_run(&r, r.status == 3 && count_lines(r.err) == 1 &&
	       strstr(r.err, "bpf_handle_out_of_memory") && !*r.out,
	       "the missing hook is named in one line");
	ok(access(tmpdir, F_OK) == 0 && !is_dir_nonempty(tmpdir),
	   "nothing was created in the scratch bpffs folder");

	run(&r, (const char *[]){ bpffs, "policy", "attach", "x", "dry-run", NULL });
	ok_run(&r, r.status == 3,
	       "'policy attach x dry-run' parses (options stop at OBJECT)");

lookups:
	/* these fail before oomctl asks the kernel anything */

	run(&r, (const char *[]){ "policy", "attach", "/nonexistent/p.bpf.o",
				  NULL });
	ok_run(&r, r.status == 1 && count_lines(r.err) == 1 && strstr(r.err, "p.bpf.o"),
	       "attaching a missing file is a runtime error naming it");

	/* a cgroupfs that is not cgroup2: every lookup fails at runtime */
	snprintf(fs, sizeof(fs), "--cgroupfs=%s", tmpdir);
	snprintf(sub, sizeof(sub), "%s/sub", tmpdir);
	mkdir(sub, 0755);
	run(&r, (const char *[]){ fs, "memcg", "show", "nosuch", NULL });
	ok_run(&r, r.status == 1 && count_lines(r.err) == 1 && strstr(r.err, "'nosuch'") &&
	       strstr(r.err, "not found"), "a missing cgroup: exit 1, named");
	run(&r, (const char *[]){ fs, "memcg", "show", "sub", NULL });
	ok_run(&r, r.status == 1 && strstr(r.err, "cgroup2"),
	       "a directory off cgroup2 is not a cgroup: exit 1");
	run(&r, (const char *[]){ fs, "-j", "psi", "add", "sub", "some", "1s",
				  "1s", NULL });
	ok_run(&r, r.status == 1 && is_json_error(r.out),
	       "runtime errors are JSON too");
	/* syntax is checked before lookups: exit 2, not 1 */
	run(&r, (const char *[]){ fs, "psi", "add", "nosuch", "some", "1s",
				  "20s", NULL });
	ok_run(&r, r.status == 2 && strstr(r.err, "WINDOW"),
	       "a bad WINDOW wins over a missing cgroup");

	/*
	 * Keywords by prefix after a CGROUP; in the first word only the
	 * whole keyword, so a prefix there is a cgroup. Exit 1 (the lookup
	 * in a cgroupfs that is not cgroup2) means the words parsed.
	 */
	run(&r, (const char *[]){ fs, "memcg", "list", "sub", "tr", NULL });
	ok_run(&r, r.status == 1 && strstr(r.err, "cgroup2"),
	       "'memcg list sub tr': tr is tree");
	run(&r, (const char *[]){ fs, "memcg", "list", "tr", NULL });
	ok_run(&r, r.status == 1 && strstr(r.err, "'tr'"),
	       "'memcg list tr': tr is a cgroup, not tree");
	run(&r, (const char *[]){ fs, "oom", "declare", "sub", "o", "1", "w",
				  NULL });
	ok_run(&r, r.status == 1 && strstr(r.err, "cgroup2"),
	       "'oom declare sub o 1 w': order and wait by prefix");
	run(&r, (const char *[]){ fs, "oom", "declare", "w", NULL });
	ok_run(&r, r.status == 1 && strstr(r.err, "'w'"),
	       "'oom declare w': w is a cgroup, not wait");
	run(&r, (const char *[]){ fs, "policy", "attach", "x", "sc", "sub",
				  "dry", NULL });
	ok_run(&r, r.status == 1 && strstr(r.err, "cgroup2"),
	       "'policy attach x sc sub dry': scope and dry-run by prefix");
	rmdir(sub);
}

static void test_stdout_errors(void)
{
	struct run r;

	if (access("/dev/full", W_OK)) {
		tap_skip("no /dev/full");
		return;
	}
	run_to(&r, "/dev/full", (const char *[]){ "--version", NULL });
	ok_run(&r, r.status == 1 && strstr(r.err, "stdout"),
	       "a full stdout fails the command");
	run_to(&r, "/dev/full", (const char *[]){ "-j", "help", NULL });
	is_int(r.status, 1, "a full stdout fails in JSON mode too");
}

int main(void)
{
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 1;
	}
	test_usage_errors();
	test_messages();
	test_success();
	test_runtime();
	test_stdout_errors();
	rmdir(tmpdir);
	return tap_done("test_cli");
}
