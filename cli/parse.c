#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/vfs.h>

#include "parse.h"

bool is_prefix(const char *pfx, const char *str)
{
	if (!pfx || !*pfx)
		return false;
	return !strncmp(str, pfx, strlen(pfx));
}

int cmd_find(const struct cmd *cmds, const char *arg, const struct cmd **match)
{
	int n = 0;

	for (; cmds->cmd; cmds++) {
		if (!strcmp(cmds->cmd, arg)) {
			*match = cmds;
			return 1;
		}
		if (is_prefix(arg, cmds->cmd) && !n++)
			*match = cmds;
	}
	return n;
}

int keyword_find(const char *const *words, const char *arg, int *idx)
{
	int i, n = 0;

	for (i = 0; words[i]; i++) {
		if (!strcmp(words[i], arg)) {
			*idx = i;
			return 1;
		}
		if (is_prefix(arg, words[i]) && !n++)
			*idx = i;
	}
	return n;
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

int parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *val)
{
	uint64_t v = 0;

	if (!is_digit(*s))
		return -EINVAL;
	for (; is_digit(*s); s++) {
		if (v > (UINT64_MAX - (*s - '0')) / 10)
			return -ERANGE;
		v = v * 10 + (*s - '0');
	}
	if (*s)
		return -EINVAL;
	if (v < min || v > max)
		return -ERANGE;
	*val = v;
	return 0;
}

struct unit {
	const char *sfx;
	uint64_t mult;
};

/*
 * At most this many significant decimals: keeps frac * mult within 64 bits
 * for multipliers up to 2^40, and nothing finer is a whole base unit anyway.
 */
#define FRAC_DIGITS_MAX	6

/* DIGITS[.DIGITS]SUFFIX, in integers so that "1.1s" is exactly 1100000. */
static int parse_units(const char *s, const struct unit *units, uint64_t *val)
{
	uint64_t ip = 0, frac = 0, fdiv = 1, fval;
	const char *f = NULL, *fend = NULL;

	if (!is_digit(*s))
		return -EINVAL;
	for (; is_digit(*s); s++) {
		if (ip > (UINT64_MAX - (*s - '0')) / 10)
			return -ERANGE;
		ip = ip * 10 + (*s - '0');
	}
	if (*s == '.') {
		f = ++s;
		if (!is_digit(*s))
			return -EINVAL;
		while (is_digit(*s))
			s++;
		fend = s;
		while (fend > f && fend[-1] == '0')
			fend--;
		if (fend - f > FRAC_DIGITS_MAX)
			return -EINVAL;
		for (; f < fend; f++) {
			frac = frac * 10 + (*f - '0');
			fdiv *= 10;
		}
	}
	for (; units->sfx; units++)
		if (!strcmp(s, units->sfx))
			break;
	if (!units->sfx)
		return -EINVAL;
	if (frac * units->mult % fdiv)
		return -EINVAL;
	fval = frac * units->mult / fdiv;
	if (ip > (UINT64_MAX - fval) / units->mult)
		return -ERANGE;
	*val = ip * units->mult + fval;
	return 0;
}

int parse_duration(const char *s, uint64_t *usec)
{
	static const struct unit units[] = {
		{ "",		1 },
		{ "us",		1 },
		{ "ms",		1000 },
		{ "s",		1000000 },
		{ "min",	60000000 },
		{ NULL,		0 },
	};

	return parse_units(s, units, usec);
}

int parse_size(const char *s, uint64_t *bytes)
{
	static const struct unit units[] = {
		{ "",	1 },
		{ "K",	1ULL << 10 }, { "k",	1ULL << 10 },
		{ "M",	1ULL << 20 }, { "m",	1ULL << 20 },
		{ "G",	1ULL << 30 }, { "g",	1ULL << 30 },
		{ "T",	1ULL << 40 }, { "t",	1ULL << 40 },
		{ NULL,	0 },
	};

	return parse_units(s, units, bytes);
}

int parse_psi_stall(const char *s, enum psi_stall *type)
{
	if (!strcmp(s, "some"))
		*type = PSI_SOME;
	else if (!strcmp(s, "full"))
		*type = PSI_FULL;
	else
		return -EINVAL;
	return 0;
}

const char *psi_stall_str(enum psi_stall type)
{
	return type == PSI_FULL ? "full" : "some";
}

void psi_state_names(uint32_t state, const char **resource, const char **kind)
{
	static const char * const resources[] = { "io", "memory", "cpu" };
	bool known = state < 2 * sizeof(resources) / sizeof(*resources);

	*resource = known ? resources[state / 2] : "unknown";
	*kind = known ? psi_stall_str(state & 1 ? PSI_FULL : PSI_SOME) : "unknown";
}

int psi_trigger_check(uint64_t stall_us, uint64_t window_us)
{
	if (window_us < PSI_WINDOW_MIN_US || window_us > PSI_WINDOW_MAX_US)
		return -ERANGE;
	if (!stall_us || stall_us > window_us)
		return -EINVAL;
	return 0;
}

int psi_pause_check(uint64_t pause_us)
{
	return pause_us > PSI_PAUSE_MAX_US ? -ERANGE : 0;
}

int policy_name_check(const char *name)
{
	const char *p;

	if (!*name || *name == '-')
		return -EINVAL;
	for (p = name; *p; p++)
		if (!is_digit(*p) && !(*p >= 'a' && *p <= 'z') &&
		    *p != '_' && *p != '-')
			return -EINVAL;
	return p - name > POLICY_NAME_MAX ? -ENAMETOOLONG : 0;
}

int cgroup_path_norm(const char *cgroupfs, const char *arg, char *buf,
		     size_t size)
{
	size_t rlen = strlen(cgroupfs), n = 0, len;
	const char *p = arg, *end;

	if (!*arg)
		return -EINVAL;
	while (rlen && cgroupfs[rlen - 1] == '/')
		rlen--;
	if (*arg == '/' && !strncmp(arg, cgroupfs, rlen) &&
	    (arg[rlen] == '/' || !arg[rlen]))
		p = arg + rlen;

	for (;;) {
		while (*p == '/')
			p++;
		if (!*p)
			break;
		end = strchrnul(p, '/');
		len = end - p;
		if (len == 2 && !memcmp(p, "..", 2))
			return -EINVAL;
		if (!(len == 1 && *p == '.')) {
			if (n + 1 + len >= size)
				return -ENAMETOOLONG;
			buf[n++] = '/';
			memcpy(buf + n, p, len);
			n += len;
		}
		p = end;
	}
	if (!n) {
		if (size < 2)
			return -ENAMETOOLONG;
		buf[n++] = '/';
	}
	buf[n] = '\0';
	return 0;
}

int cgroup_id_from_path(const char *path, uint64_t *id)
{
	union {
		struct file_handle fh;
		char buf[sizeof(struct file_handle) + sizeof(uint64_t)];
	} h = { .fh.handle_bytes = sizeof(uint64_t) };
	struct statfs sfs;
	struct stat st;
	int mnt_id;

	if (stat(path, &st))
		return -errno;
	if (!S_ISDIR(st.st_mode))
		return -ENOTDIR;
	if (statfs(path, &sfs))
		return -errno;
	if (sfs.f_type != CGROUP2_SUPER_MAGIC)
		return -EMEDIUMTYPE;
	if (name_to_handle_at(AT_FDCWD, path, &h.fh, &mnt_id, 0))
		return -errno;
	if (h.fh.handle_bytes != sizeof(*id))
		return -EMEDIUMTYPE;
	memcpy(id, h.fh.f_handle, sizeof(*id));
	return 0;
}

char *fmt_bytes(uint64_t bytes, char *buf, size_t size)
{
	static const char units[] = "BKMGTPE";
	double v = bytes;
	int i = 0;

	if (bytes < 1024) {
		snprintf(buf, size, "%" PRIu64, bytes);
		return buf;
	}
	while (v >= 1024 && units[i + 1]) {
		v /= 1024;
		i++;
	}
	/* 1023.6K rounds to 1024K: say 1.0M instead */
	if ((uint64_t)(v + 0.5) >= 1024 && units[i + 1]) {
		v /= 1024;
		i++;
	}
	if ((uint64_t)(v * 10 + 0.5) < 100)
		snprintf(buf, size, "%.1f%c", v, units[i]);
	else
		snprintf(buf, size, "%.0f%c", v, units[i]);
	return buf;
}

/* "<whole>[.<frac without trailing zeros>]<unit>" */
static char *fmt_fixed(uint64_t v, uint64_t div, int digits, const char *unit,
		       char *buf, size_t size)
{
	uint64_t frac = v % div;
	int n = digits;

	if (!frac) {
		snprintf(buf, size, "%" PRIu64 "%s", v / div, unit);
		return buf;
	}
	while (!(frac % 10)) {
		frac /= 10;
		n--;
	}
	snprintf(buf, size, "%" PRIu64 ".%0*" PRIu64 "%s", v / div, n, frac,
		 unit);
	return buf;
}

char *fmt_usec(uint64_t usec, char *buf, size_t size)
{
	if (!usec)
		snprintf(buf, size, "0");
	else if (usec < 1000)
		snprintf(buf, size, "%" PRIu64 "us", usec);
	else if (usec < 1000000)
		fmt_fixed(usec, 1000, 3, "ms", buf, size);
	else
		fmt_fixed(usec, 1000000, 6, "s", buf, size);
	return buf;
}

static char *fmt_time(uint64_t ns, bool utc, char *buf, size_t size)
{
	time_t sec = ns / 1000000000;
	struct tm tm;
	size_t n;

	if (!(utc ? gmtime_r(&sec, &tm) : localtime_r(&sec, &tm)) ||
	    !(n = strftime(buf, size, utc ? "%Y-%m-%dT%H:%M:%S" :
					    "%Y-%m-%d %H:%M:%S", &tm))) {
		snprintf(buf, size, "?");
		return buf;
	}
	if (utc)
		snprintf(buf + n, size - n, ".%06" PRIu64 "Z",
			 ns % 1000000000 / 1000);
	else
		snprintf(buf + n, size - n, ".%03" PRIu64,
			 ns % 1000000000 / 1000000);
	return buf;
}

char *fmt_time_iso(uint64_t ns, char *buf, size_t size)
{
	return fmt_time(ns, true, buf, size);
}

char *fmt_time_local(uint64_t ns, char *buf, size_t size)
{
	return fmt_time(ns, false, buf, size);
}
