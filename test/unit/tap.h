/* A little TAP for the host unit tests: "ok N - what" / "not ok N - what". */
#ifndef OOMCTL_TAP_H
#define OOMCTL_TAP_H

#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

static int tap_count, tap_failed;

static inline bool __attribute__((format(printf, 4, 5)))
tap_ok(bool pass, const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	printf("%sok %d - ", pass ? "" : "not ", ++tap_count);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	if (!pass) {
		tap_failed++;
		printf("#   failed at %s:%d\n", file, line);
	}
	return pass;
}

static inline void tap_skip(const char *why)
{
	printf("ok %d # SKIP %s\n", ++tap_count, why);
}

#define ok(cond, ...)	tap_ok(!!(cond), __FILE__, __LINE__, __VA_ARGS__)

#define is_int(got, exp, ...)						\
	({								\
		long long _g = (got), _e = (exp);			\
		bool _p = ok(_g == _e, __VA_ARGS__);			\
									\
		if (!_p)						\
			printf("#   got %lld, expected %lld\n", _g, _e); \
		_p;							\
	})

#define is_u64(got, exp, ...)						\
	({								\
		uint64_t _g = (got), _e = (exp);			\
		bool _p = ok(_g == _e, __VA_ARGS__);			\
									\
		if (!_p)						\
			printf("#   got %" PRIu64 ", expected %" PRIu64 "\n", \
			       _g, _e);					\
		_p;							\
	})

#define is_str(got, exp, ...)						\
	({								\
		const char *_g = (got), *_e = (exp);			\
		bool _p = ok(_g && _e ? !strcmp(_g, _e) : _g == _e,	\
			     __VA_ARGS__);				\
									\
		if (!_p)						\
			printf("#   got '%s', expected '%s'\n",		\
			       _g ?: "(null)", _e ?: "(null)");		\
		_p;							\
	})

/* TAP plan last, and a closing line that test runners read */
static inline int tap_done(const char *name)
{
	printf("1..%d\n", tap_count);
	printf("%s: %d passed, %d failed\n", name, tap_count - tap_failed,
	       tap_failed);
	return tap_failed ? 1 : 0;
}

#endif /* OOMCTL_TAP_H */
