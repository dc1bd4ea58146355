/* Unit tests of cli/parse.c: parsers, formatters, keyword matching. */
#include <errno.h>
#include <mntent.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>

#include "parse.h"
#include "tap.h"

static int nop(int argc __attribute__((unused)),
	       char **argv __attribute__((unused)))
{
	return 0;
}

static void test_keyword(void)
{
	static const char *const words[] = { "scope", "some", "dry-run",
					     "dry", NULL };
	int i = -1;

	is_int(keyword_find(words, "scope", &i), 1, "keyword: exact");
	is_int(i, 0, "keyword: scope is 0");
	is_int(keyword_find(words, "sc", &i), 1, "keyword: sc is unique");
	is_int(i, 0, "keyword: sc is scope");
	is_int(keyword_find(words, "s", &i), 2, "keyword: s is ambiguous");
	is_int(keyword_find(words, "dry", &i), 1,
	       "keyword: an exact word wins over a longer one");
	is_int(i, 3, "keyword: dry is dry");
	is_int(keyword_find(words, "dry-", &i), 1, "keyword: dry- is unique");
	is_int(i, 2, "keyword: dry- is dry-run");
	is_int(keyword_find(words, "scopes", &i), 0, "keyword: too long");
	is_int(keyword_find(words, "", &i), 0, "keyword: empty word");
	is_int(keyword_find(words, "x", &i), 0, "keyword: unknown");
}

static void test_prefix(void)
{
	static const struct cmd objects[] = {
		{ "memcg", nop, "" }, { "policy", nop, "" }, { "psi", nop, "" },
		{ "oom", nop, "" }, { "event", nop, "" }, { "dump", nop, "" },
		{ "help", nop, "" }, { 0 }
	};
	static const struct cmd nested[] = {
		{ "list", nop, "" }, { "listall", nop, "" }, { 0 }
	};
	const struct cmd *m = NULL;

	ok(is_prefix("m", "memcg"), "is_prefix: m of memcg");
	ok(is_prefix("memcg", "memcg"), "is_prefix: whole word");
	ok(!is_prefix("memcgs", "memcg"), "is_prefix: longer is not a prefix");
	ok(!is_prefix("", "memcg"), "is_prefix: empty is nobody's prefix");
	ok(!is_prefix("x", "memcg"), "is_prefix: x of memcg");

	is_int(cmd_find(objects, "m", &m), 1, "cmd_find: m is unique");
	is_str(m->cmd, "memcg", "cmd_find: m is memcg");
	is_int(cmd_find(objects, "p", &m), 2, "cmd_find: p is ambiguous");
	is_int(cmd_find(objects, "po", &m), 1, "cmd_find: po is unique");
	is_str(m->cmd, "policy", "cmd_find: po is policy");
	is_int(cmd_find(objects, "ps", &m), 1, "cmd_find: ps is unique");
	is_str(m->cmd, "psi", "cmd_find: ps is psi");
	is_int(cmd_find(objects, "help", &m), 1, "cmd_find: exact name");
	is_str(m->cmd, "help", "cmd_find: help is help");
	is_int(cmd_find(objects, "frob", &m), 0, "cmd_find: unknown word");
	is_int(cmd_find(objects, "", &m), 0, "cmd_find: empty word");
	is_int(cmd_find(objects, "memcgs", &m), 0, "cmd_find: too long");
	is_int(cmd_find(nested, "list", &m), 1,
	       "cmd_find: exact beats a longer name");
	is_str(m->cmd, "list", "cmd_find: list is list");
	is_int(cmd_find(nested, "lista", &m), 1, "cmd_find: lista is unique");
	is_str(m->cmd, "listall", "cmd_find: lista is listall");
	is_int(cmd_find(nested, "l", &m), 2, "cmd_find: l is ambiguous");
}

static void test_u64(void)
{
	static const char *const bad[] = {
		"", "-1", "+1", " 1", "1 ", "0x10", "1.0", "1k", "abc",
	};
	uint64_t v = 42;
	size_t i;

	is_int(parse_u64("0", 0, UINT64_MAX, &v), 0, "u64: 0");
	is_u64(v, 0, "u64: 0 is 0");
	is_int(parse_u64("010", 0, UINT64_MAX, &v), 0, "u64: 010");
	is_u64(v, 10, "u64: 010 is decimal ten");
	is_int(parse_u64("18446744073709551615", 0, UINT64_MAX, &v), 0,
	       "u64: UINT64_MAX");
	is_u64(v, UINT64_MAX, "u64: UINT64_MAX value");
	is_int(parse_u64("18446744073709551616", 0, UINT64_MAX, &v), -ERANGE,
	       "u64: UINT64_MAX + 1 overflows");
	is_int(parse_u64("99999999999999999999999", 0, UINT64_MAX, &v),
	       -ERANGE, "u64: far overflow");
	for (i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		v = 42;
		is_int(parse_u64(bad[i], 0, UINT64_MAX, &v), -EINVAL,
		       "u64: '%s' is malformed", bad[i]);
		is_u64(v, 42, "u64: '%s' leaves the value alone", bad[i]);
	}
	is_int(parse_u64("10", 0, 10, &v), 0, "u64: max is included");
	is_int(parse_u64("11", 0, 10, &v), -ERANGE, "u64: max + 1");
	is_int(parse_u64("1", 1, 10, &v), 0, "u64: min is included");
	is_int(parse_u64("0", 1, 10, &v), -ERANGE, "u64: min - 1");
	is_int(parse_u64("4294967296", 0, UINT32_MAX, &v), -ERANGE,
	       "u64: UINT32_MAX + 1 with a u32 range");
}

struct good {
	const char *s;
	uint64_t v;
};

static void test_duration(void)
{
	static const struct good good[] = {
		{ "0", 0 }, { "100", 100 }, { "500us", 500 },
		{ "150ms", 150000 }, { "2s", 2000000 }, { "1.5s", 1500000 },
		{ "1.1s", 1100000 }, { "0.5ms", 500 }, { "0.000001s", 1 },
		{ "1.5000000s", 1500000 }, { "1min", 60000000 },
		{ "1.5min", 90000000 }, { "10s", 10000000 },
		{ "18446744073709551615", UINT64_MAX },
		{ "18446744073709.551615s", UINT64_MAX },
	};
	static const char *const bad[] = {
		"", "s", "ms", ".5s", "1.", "1.s", "-1s", "+1s", "1 s", " 1s",
		"1S", "1sec", "1h", "1m", "abc", "1e3", "1.5us", "1.0000001s",
		"0.0000005s", "1,5s", "1.5.s",
	};
	static const char *const huge[] = {
		"18446744073709551616", "18446744073709551615s",
		"18446744073709.551616s", "307445734561825861min",
	};
	uint64_t v;
	size_t i;

	for (i = 0; i < sizeof(good) / sizeof(*good); i++) {
		v = 42;
		is_int(parse_duration(good[i].s, &v), 0, "duration: '%s'",
		       good[i].s);
		is_u64(v, good[i].v, "duration: '%s' value", good[i].s);
	}
	for (i = 0; i < sizeof(bad) / sizeof(*bad); i++)
		is_int(parse_duration(bad[i], &v), -EINVAL,
		       "duration: '%s' is malformed", bad[i]);
	for (i = 0; i < sizeof(huge) / sizeof(*huge); i++)
		is_int(parse_duration(huge[i], &v), -ERANGE,
		       "duration: '%s' overflows", huge[i]);
}

static void test_size(void)
{
	static const struct good good[] = {
		{ "0", 0 }, { "1023", 1023 }, { "4K", 4096 }, { "4k", 4096 },
		{ "1.25K", 1280 }, { "312M", 312ULL << 20 },
		{ "1.5G", 3ULL << 29 }, { "1.5g", 3ULL << 29 },
		{ "1T", 1ULL << 40 }, { "16777215T", 16777215ULL << 40 },
		{ "0.5T", 1ULL << 39 },
	};
	static const char *const bad[] = {
		"", "K", "-1K", "1KB", "1KiB", "1P", "1 K", "0.3K", "1.5",
		".5K", "1.K", "x",
	};
	uint64_t v;
	size_t i;

	for (i = 0; i < sizeof(good) / sizeof(*good); i++) {
		v = 42;
		is_int(parse_size(good[i].s, &v), 0, "size: '%s'", good[i].s);
		is_u64(v, good[i].v, "size: '%s' value", good[i].s);
	}
	for (i = 0; i < sizeof(bad) / sizeof(*bad); i++)
		is_int(parse_size(bad[i], &v), -EINVAL,
		       "size: '%s' is malformed", bad[i]);
	is_int(parse_size("16777216T", &v), -ERANGE, "size: 2^64 overflows");
	is_int(parse_size("18446744073709551616", &v), -ERANGE,
	       "size: 2^64 bytes overflows");
}

static void test_psi(void)
{
	static const char *const bad[] = { "", "s", "Some", "FULL", "fully",
					   "some " };
	enum psi_stall t = PSI_FULL;
	const char *res, *kind;
	size_t i;

	is_int(parse_psi_stall("some", &t), 0, "psi: some");
	is_int(t, PSI_SOME, "psi: some is PSI_SOME");
	is_int(parse_psi_stall("full", &t), 0, "psi: full");
	is_int(t, PSI_FULL, "psi: full is PSI_FULL");
	is_str(psi_stall_str(PSI_SOME), "some", "psi: PSI_SOME prints some");
	is_str(psi_stall_str(PSI_FULL), "full", "psi: PSI_FULL prints full");
	for (i = 0; i < sizeof(bad) / sizeof(*bad); i++)
		is_int(parse_psi_stall(bad[i], &t), -EINVAL,
		       "psi: '%s' is refused", bad[i]);

	/* enum psi_states: PSI_IO_SOME 0 ... PSI_MEM_SOME 2, PSI_MEM_FULL 3 ... */
	psi_state_names(2, &res, &kind);
	is_str(res, "memory", "psi: state 2 is memory's");
	is_str(kind, "some", "psi: state 2 is some");
	psi_state_names(5, &res, &kind);
	is_str(res, "cpu", "psi: state 5 is cpu's");
	is_str(kind, "full", "psi: state 5 is full");
	psi_state_names(6, &res, &kind);
	is_str(res, "unknown", "psi: state 6 has no resource");
	is_str(kind, "unknown", "psi: state 6 has no kind");

	is_int(psi_trigger_check(1, 500000), 0, "psi: smallest window");
	is_int(psi_trigger_check(10000000, 10000000), 0,
	       "psi: largest window, stall = window");
	is_int(psi_trigger_check(1, 499999), -ERANGE, "psi: window too small");
	is_int(psi_trigger_check(1, 10000001), -ERANGE, "psi: window too large");
	is_int(psi_trigger_check(0, 1000000), -EINVAL, "psi: zero stall");
	is_int(psi_trigger_check(2000000, 1000000), -EINVAL,
	       "psi: stall longer than window");
}

static void test_policy_name(void)
{
	static const char *const good[] = {
		"oomd", "largest-leaf", "psi-declare", "a", "0", "a_b-9",
		"abcdefghijklmno",
	};
	static const char *const bad[] = {
		"", "-x", "Oomd", "a.b", "a/b", "a b", "a\n", "é",
	};
	size_t i;

	for (i = 0; i < sizeof(good) / sizeof(*good); i++)
		is_int(policy_name_check(good[i]), 0, "policy: '%s'", good[i]);
	for (i = 0; i < sizeof(bad) / sizeof(*bad); i++)
		is_int(policy_name_check(bad[i]), -EINVAL,
		       "policy: '%s' is refused", bad[i]);
	is_int(policy_name_check("abcdefghijklmnop"), -ENAMETOOLONG,
	       "policy: 16 characters are too many");
}

static void test_cgroup_path(void)
{
	static const struct {
		const char *fs, *arg, *path;
	} good[] = {
		{ "/sys/fs/cgroup", "/sys/fs/cgroup/a/b", "/a/b" },
		{ "/sys/fs/cgroup", "/a/b", "/a/b" },
		{ "/sys/fs/cgroup", "a/b", "/a/b" },
		{ "/sys/fs/cgroup", "/sys/fs/cgroup", "/" },
		{ "/sys/fs/cgroup", "/sys/fs/cgroup/", "/" },
		{ "/sys/fs/cgroup", "/", "/" },
		{ "/sys/fs/cgroup", ".", "/" },
		{ "/sys/fs/cgroup", "a//b/", "/a/b" },
		{ "/sys/fs/cgroup", "./a/./b/.", "/a/b" },
		{ "/sys/fs/cgroup", "..a/b..", "/..a/b.." },
		{ "/sys/fs/cgroup", "/sys/fs/cgroupX/a", "/sys/fs/cgroupX/a" },
		{ "/sys/fs/cgroup", "sys/fs/cgroup/a", "/sys/fs/cgroup/a" },
		{ "/sys/fs/cgroup/", "/sys/fs/cgroup/a", "/a" },
		{ "/", "/a", "/a" },
	};
	static const char *const bad[] = {
		"", "..", "a/../b", "/sys/fs/cgroup/..", "a/..", "../x",
	};
	char buf[64];
	size_t i;

	for (i = 0; i < sizeof(good) / sizeof(*good); i++) {
		buf[0] = '\0';
		is_int(cgroup_path_norm(good[i].fs, good[i].arg, buf,
					sizeof(buf)), 0,
		       "cgroup: '%s' under %s", good[i].arg, good[i].fs);
		is_str(buf, good[i].path, "cgroup: '%s' normalized",
		       good[i].arg);
	}
	for (i = 0; i < sizeof(bad) / sizeof(*bad); i++)
		is_int(cgroup_path_norm("/sys/fs/cgroup", bad[i], buf,
					sizeof(buf)), -EINVAL,
		       "cgroup: '%s' is refused", bad[i]);
	is_int(cgroup_path_norm("/sys/fs/cgroup", "abcd", buf, 5),
	       -ENAMETOOLONG, "cgroup: no room for '/abcd' and NUL");
	is_int(cgroup_path_norm("/sys/fs/cgroup", "abc", buf, 5), 0,
	       "cgroup: just room for '/abc'");
	is_int(cgroup_path_norm("/sys/fs/cgroup", "/", buf, 2), 0,
	       "cgroup: just room for '/'");
	is_int(cgroup_path_norm("/sys/fs/cgroup", "/", buf, 1), -ENAMETOOLONG,
	       "cgroup: no room for '/'");
}

/* A cgroup2 mount of this machine, if it has one */
static char *cgroup2_mount(void)
{
	static char dir[4096];
	struct mntent *m;
	FILE *f = setmntent("/proc/self/mounts", "r");

	if (!f)
		return NULL;
	while ((m = getmntent(f)))
		if (!strcmp(m->mnt_type, "cgroup2")) {
			snprintf(dir, sizeof(dir), "%s", m->mnt_dir);
			endmntent(f);
			return dir;
		}
	endmntent(f);
	return NULL;
}

static void test_cgroup_id(void)
{
	char *mnt = cgroup2_mount(), file[4200];
	uint64_t id = 0;
	struct stat st;

	is_int(cgroup_id_from_path("/nonexistent/oomctl", &id), -ENOENT,
	       "cgroup id: missing path");
	is_int(cgroup_id_from_path("/proc/self/status", &id), -ENOTDIR,
	       "cgroup id: a file is not a cgroup");
	is_int(cgroup_id_from_path("/proc", &id), -EMEDIUMTYPE,
	       "cgroup id: a directory off cgroup2 is not a cgroup");
	if (!mnt) {
		tap_skip("no cgroup2 mount");
		return;
	}
	/* kernfs: a cgroup's inode number is its id on 64-bit hosts */
	if (is_int(cgroup_id_from_path(mnt, &id), 0, "cgroup id: %s", mnt) &&
	    !stat(mnt, &st))
		is_u64(id, st.st_ino, "cgroup id: of %s is its inode", mnt);
	snprintf(file, sizeof(file), "%s/cgroup.procs", mnt);
	is_int(cgroup_id_from_path(file, &id), -ENOTDIR,
	       "cgroup id: cgroup.procs is not a cgroup");
}

static void test_fmt_bytes(void)
{
	static const struct {
		uint64_t v;
		const char *s;
	} cases[] = {
		{ 0, "0" }, { 1, "1" }, { 1023, "1023" }, { 1024, "1.0K" },
		{ 1536, "1.5K" }, { 4096, "4.0K" }, { 10239, "10K" },
		{ 10240, "10K" }, { 1023 * 1024, "1023K" },
		{ 1048575, "1.0M" }, { 312ULL << 20, "312M" },
		{ 3ULL << 29, "1.5G" }, { 1ULL << 40, "1.0T" },
		{ UINT64_MAX, "16E" },
	};
	char buf[FMT_BYTES_LEN];
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(*cases); i++)
		is_str(fmt_bytes(cases[i].v, buf, sizeof(buf)), cases[i].s,
		       "fmt_bytes: %" PRIu64, cases[i].v);
}

static void test_fmt_usec(void)
{
	static const struct {
		uint64_t v;
		const char *s;
	} cases[] = {
		{ 0, "0" }, { 1, "1us" }, { 999, "999us" }, { 1000, "1ms" },
		{ 1500, "1.5ms" }, { 150000, "150ms" }, { 1000000, "1s" },
		{ 1500000, "1.5s" }, { 1234567, "1.234567s" },
		{ 90000000, "90s" }, { 1000001, "1.000001s" },
	};
	char buf[FMT_USEC_LEN];
	uint64_t back;
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(*cases); i++)
		is_str(fmt_usec(cases[i].v, buf, sizeof(buf)), cases[i].s,
		       "fmt_usec: %" PRIu64, cases[i].v);

	/* exact: what it prints reads back as the same duration */
	srand(1);
	for (i = 0; i < 1000; i++) {
		uint64_t v = (uint64_t)rand() * rand() % 100000000000ULL;

		fmt_usec(v, buf, sizeof(buf));
		if (parse_duration(buf, &back) || back != v)
			break;
	}
	ok(i == 1000, "fmt_usec: 1000 random values read back (stopped at %zu)",
	   i);
	fmt_usec(UINT64_MAX, buf, sizeof(buf));
	ok(!parse_duration(buf, &back) && back == UINT64_MAX,
	   "fmt_usec: UINT64_MAX reads back");
}

static void test_fmt_time(void)
{
	char buf[FMT_TIME_LEN];

	is_str(fmt_time_iso(0, buf, sizeof(buf)), "1970-01-01T00:00:00.000000Z",
	       "fmt_time_iso: epoch");
	is_str(fmt_time_iso(1700000000123456789ULL, buf, sizeof(buf)),
	       "2023-11-14T22:13:20.123456Z", "fmt_time_iso: 1.7e9 s");
	setenv("TZ", "UTC", 1);
	tzset();
	is_str(fmt_time_local(1700000000123456789ULL, buf, sizeof(buf)),
	       "2023-11-14 22:13:20.123", "fmt_time_local: in UTC");
	setenv("TZ", "UTC-2", 1);
	tzset();
	is_str(fmt_time_local(1700000000123456789ULL, buf, sizeof(buf)),
	       "2023-11-15 00:13:20.123", "fmt_time_local: two hours east");
}

int main(void)
{
	test_prefix();
	test_keyword();
	test_u64();
	test_duration();
	test_size();
	test_psi();
	test_policy_name();
	test_cgroup_path();
	test_cgroup_id();
	test_fmt_bytes();
	test_fmt_usec();
	test_fmt_time();
	return tap_done("test_parse");
}
