#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <locale.h>
#include <strings.h>
#include <json-c/json.h>
#include <libsmartcols/libsmartcols.h>

#include "output.h"
#include "parse.h"

bool json_output;
bool pretty_output;
const char *out_columns;
bool out_noheadings;
bool out_raw;
bool out_exact_bytes;

#define OUT_DEPTH_MAX	16

static struct json_object *root;
static struct json_object *stack[OUT_DEPTH_MAX];
static int depth;
static char *err_msg;
static bool err_reported;
static bool flushed;		/* out_flush() printed documents already */

/* Running out of memory in an OOM tool is not worth a recovery path. */
static void *xrealloc(void *p, size_t size)
{
	p = realloc(p, size);
	if (!p) {
		fputs("Error: out of memory\n", stderr);
		exit(EXIT_FAILURE);
	}
	return p;
}

static char *xstrdup(const char *s)
{
	return strcpy(xrealloc(NULL, strlen(s) + 1), s);
}

void p_err(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	if (!json_output) {
		fputs("Error: ", stderr);
		vfprintf(stderr, fmt, ap);
		fputc('\n', stderr);
	} else if (!err_msg && vasprintf(&err_msg, fmt, ap) < 0) {
		err_msg = NULL;
	}
	va_end(ap);
	err_reported = true;
}

void p_info(const char *fmt, ...)
{
	va_list ap;

	if (json_output)
		return;
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

bool p_err_reported(void)
{
	return err_reported;
}

/*
 * Takes ownership of @val. At top level, the first keyless value is the
 * document, and keyed values go into an implicit root object. Returns
 * false if @val was dropped: keyless in an object means plain-only.
 */
static bool json_add(const char *key, struct json_object *val)
{
	struct json_object *parent = depth ? stack[depth - 1] : root;

	if (!depth && !root) {
		root = key ? json_object_new_object() : val;
		if (!key)
			return true;
		parent = root;
	} else if (!depth && !json_object_is_type(root, json_type_object)) {
		/* the document was a bare value, and it is complete */
		parent = NULL;
	}
	if (json_object_is_type(parent, json_type_array)) {
		json_object_array_add(parent, val);
		return true;
	}
	if (key && json_object_is_type(parent, json_type_object)) {
		json_object_object_add(parent, key, val);
		return true;
	}
	json_object_put(val);
	return false;
}

static void out_open(const char *key, struct json_object *val)
{
	if (!json_output)
		return;
	if (depth == OUT_DEPTH_MAX || !json_add(key, val)) {
		/* a caller bug: fail loudly, never print a broken document */
		fprintf(stderr, "oomctl: bad nesting at key '%s'\n", key ?: "");
		abort();
	}
	stack[depth++] = val;
}

void out_open_object(const char *key)
{
	out_open(key, json_output ? json_object_new_object() : NULL);
}

void out_open_array(const char *key)
{
	out_open(key, json_output ? json_object_new_array() : NULL);
}

void out_close(void)
{
	if (json_output && depth)
		depth--;
}

void out_newline(void)
{
	if (!json_output)
		putchar('\n');
}

void out_text(const char *fmt, ...)
{
	va_list ap;

	if (json_output)
		return;
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
}

/* The length of the UTF-8 sequence at @s that is valid and printable, or 0 */
static size_t printable_len(const unsigned char *s)
{
	size_t len, i;

	if (*s >= 0x20 && *s < 0x7f)
		return 1;
	if (*s >= 0xc2 && *s <= 0xdf)
		len = 2;
	else if (*s >= 0xe0 && *s <= 0xef)
		len = 3;
	else if (*s >= 0xf0 && *s <= 0xf4)
		len = 4;
	else
		return 0;	/* a control character, DEL, or no lead byte */
	for (i = 1; i < len; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	/* overlong forms, surrogates, past U+10FFFF, and C1 controls */
	if ((s[0] == 0xe0 && s[1] < 0xa0) || (s[0] == 0xed && s[1] > 0x9f) ||
	    (s[0] == 0xf0 && s[1] < 0x90) || (s[0] == 0xf4 && s[1] > 0x8f) ||
	    (s[0] == 0xc2 && s[1] < 0xa0))
		return 0;
	return len;
}

/*
 * Names from the system (a process's comm, a cgroup's path) are anyone's:
 * a control character would reach the terminal as an escape sequence, and
 * a byte that is not UTF-8 would make the JSON invalid. Each such byte
 * becomes the text \xNN, the same in both renderings. NULL if @s is clean
 * already, else a copy to free.
 */
static char *clean_text(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n, len = 0, dirty = 0;
	char *out, *o;

	for (p = (const unsigned char *)s; *p; p += n ?: 1) {
		n = printable_len(p);
		dirty += !n;
		len += n ?: 4;
	}
	if (!dirty)
		return NULL;
	o = out = xrealloc(NULL, len + 1);
	for (p = (const unsigned char *)s; *p; p += n ?: 1) {
		n = printable_len(p);
		if (n) {
			memcpy(o, p, n);
			o += n;
		} else {
			o += sprintf(o, "\\x%02x", *p);
		}
	}
	*o = '\0';
	return out;
}

/* The one place a value is rendered: @val for JSON, @s for plain. */
static void out_val(const char *key, const char *fmt, struct json_object *val,
		    const char *s)
{
	if (json_output)
		json_add(key, val);
	else if (fmt)
		printf(fmt, s);
}

void out_str(const char *key, const char *fmt, const char *val)
{
	char *clean = val ? clean_text(val) : NULL;

	val = clean ?: val;
	out_val(key, fmt, json_output && val ? json_object_new_string(val) : NULL,
		val ?: "-");
	free(clean);
}

void out_u64(const char *key, const char *fmt, uint64_t val)
{
	char s[24];

	snprintf(s, sizeof(s), "%" PRIu64, val);
	out_val(key, fmt, json_output ? json_object_new_uint64(val) : NULL, s);
}

void out_s64(const char *key, const char *fmt, int64_t val)
{
	char s[24];

	snprintf(s, sizeof(s), "%" PRId64, val);
	out_val(key, fmt, json_output ? json_object_new_int64(val) : NULL, s);
}

void out_bool(const char *key, const char *fmt, bool val)
{
	out_val(key, fmt, json_output ? json_object_new_boolean(val) : NULL,
		val ? "true" : "false");
}

static const char *bytes_str(uint64_t bytes, char *buf, size_t size)
{
	if (bytes == OUT_BYTES_MAX)
		return "max";
	if (out_exact_bytes) {
		snprintf(buf, size, "%" PRIu64, bytes);
		return buf;
	}
	return fmt_bytes(bytes, buf, size);
}

void out_bytes(const char *key, const char *fmt, uint64_t bytes)
{
	char s[FMT_BYTES_LEN];

	out_val(key, fmt, json_output && bytes != OUT_BYTES_MAX ?
		json_object_new_uint64(bytes) : NULL,
		bytes_str(bytes, s, sizeof(s)));
}

void out_usec(const char *key, const char *fmt, uint64_t usec)
{
	char s[FMT_USEC_LEN];

	out_val(key, fmt, json_output ? json_object_new_uint64(usec) : NULL,
		fmt_usec(usec, s, sizeof(s)));
}

void out_time(const char *key, const char *fmt, uint64_t ns)
{
	char s[FMT_TIME_LEN];

	if (json_output)
		json_add(key, json_object_new_string(fmt_time_iso(ns, s,
								   sizeof(s))));
	else if (fmt)
		printf(fmt, fmt_time_local(ns, s, sizeof(s)));
}

void out_u64_as(const char *key, const char *fmt, uint64_t val,
		const char *text)
{
	out_val(key, fmt, json_output ? json_object_new_uint64(val) : NULL,
		text);
}

static void json_print(struct json_object *obj)
{
	int flags = JSON_C_TO_STRING_NOSLASHESCAPE;

	if (pretty_output)
		flags |= JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED;
	/* NULL prints as "null": the answer of a command with nothing to say */
	puts(json_object_to_json_string_ext(obj, flags));
}

int out_flush(void)
{
	if (json_output && root) {
		json_print(root);
		json_object_put(root);
		root = NULL;
		depth = 0;
		flushed = true;
	}
	if (fflush(stdout) || ferror(stdout))
		return -EIO;
	return 0;
}

void out_finish(void)
{
	struct json_object *err;

	if (json_output && err_msg) {
		err = json_object_new_object();
		json_object_object_add(err, "error",
				       json_object_new_string(err_msg));
		json_print(err);
		json_object_put(err);
	} else if (json_output && (root || !flushed)) {
		/* a stream ends without a trailing null */
		json_print(root);
	}
	json_object_put(root);
	root = NULL;
	depth = 0;
	free(err_msg);
	err_msg = NULL;
	err_reported = false;
	flushed = false;
}

/* The column of @cols that @name (its key or header, any case) names */
static int col_find(const struct col *cols, unsigned int ncols,
		    const char *name, size_t len)
{
	unsigned int i;

	for (i = 0; i < ncols; i++)
		if ((strlen(cols[i].key) == len &&
		     !strncasecmp(cols[i].key, name, len)) ||
		    (strlen(cols[i].header) == len &&
		     !strncasecmp(cols[i].header, name, len)))
			return i;
	return -1;
}

int out_columns_check(const struct listing *l)
{
	const char *p = out_columns, *end;
	unsigned int i;

	if (!p)
		return 0;
	if (!strcmp(p, "help")) {
		/* asked for: stdout, or stderr beside JSON's document */
		FILE *f = json_output ? stderr : stdout;

		fprintf(f, "Available columns (-o, comma-separated):\n");
		for (i = 0; i < l->ncols; i++)
			fprintf(f, "  %-10s %-24s %s%s\n", l->cols[i].header,
				l->cols[i].key, l->cols[i].help ?: "",
				l->cols[i].flags & COL_EXTRA ?
				" (not shown by default)" : "");
		return 1;
	}
	for (;;) {
		end = strchrnul(p, ',');
		if (col_find(l->cols, l->ncols, p, end - p) < 0) {
			p_err("unknown column '%.*s'; see '-o help'",
			      (int)(end - p), p);
			return -EINVAL;
		}
		if (!*end)
			return 0;
		p = end + 1;
	}
}

struct table {
	const struct col *cols;
	unsigned int ncols;
	bool row_open;
	/* JSON: the current row's cells (null is a value too), added in the
	 * model's order */
	struct json_object **vals;
	bool *set;
	int *pos;		/* model column -> shown column, or -1 */
	unsigned int nshown;
	/* plain mode */
	struct libscols_table *tb;
	struct libscols_line *ln;
	struct libscols_line **at;	/* the last row at each depth */
	unsigned int nat;
};

/* Which columns show, in which order: -o, else the defaults */
static void table_pick(struct table *t)
{
	const char *p = out_columns, *end;
	unsigned int i;
	int c;

	t->pos = xrealloc(NULL, t->ncols * sizeof(*t->pos));
	for (i = 0; i < t->ncols; i++) {
		bool shown = !p && (json_output ||
				    !(t->cols[i].flags & COL_EXTRA));

		t->pos[i] = shown ? (int)t->nshown++ : -1;
	}
	/* out_columns_check() ran on the listing: unknown names are skipped */
	for (; p; p = *end ? end + 1 : NULL) {
		end = strchrnul(p, ',');
		c = col_find(t->cols, t->ncols, p, end - p);
		if (c >= 0 && t->pos[c] < 0)
			t->pos[c] = t->nshown++;
	}
}

struct table *table_open(const char *key, const struct col *cols,
			 unsigned int ncols)
{
	struct table *t = xrealloc(NULL, sizeof(*t));
	unsigned int i, k;

	*t = (struct table){ .cols = cols, .ncols = ncols };
	table_pick(t);
	if (json_output) {
		t->vals = xrealloc(NULL, ncols * sizeof(*t->vals));
		memset(t->vals, 0, ncols * sizeof(*t->vals));
		t->set = xrealloc(NULL, ncols * sizeof(*t->set));
		memset(t->set, 0, ncols * sizeof(*t->set));
		out_open_array(key);
		return t;
	}
	t->tb = scols_new_table();
	if (!t->tb) {
		fputs("Error: out of memory\n", stderr);
		exit(EXIT_FAILURE);
	}
	/* two blanks between columns, as oomctl always printed them; -r one */
	scols_table_set_column_separator(t->tb, out_raw ? " " : "  ");
	scols_table_enable_noheadings(t->tb, out_noheadings);
	scols_table_enable_raw(t->tb, out_raw);
	for (k = 0; k < t->nshown; k++)
		for (i = 0; i < ncols; i++) {
			int fl = 0;

			if (t->pos[i] != (int)k)
				continue;
			if (cols[i].type != COL_STR)
				fl |= SCOLS_FL_RIGHT;
			if (cols[i].flags & COL_TREE)
				fl |= SCOLS_FL_TREE;
			if (!scols_table_new_column(t->tb, cols[i].header, 0,
						    fl)) {
				fputs("Error: out of memory\n", stderr);
				exit(EXIT_FAILURE);
			}
		}
	return t;
}

/* JSON: the open row's cells, in the model's order, and its end */
static void json_row_close(struct table *t)
{
	if (!t->row_open)
		return;
	for (unsigned int i = 0; i < t->ncols; i++)
		if (t->set[i]) {
			json_add(t->cols[i].key, t->vals[i]);
			t->vals[i] = NULL;
			t->set[i] = false;
		}
	out_close();
	t->row_open = false;
}

static void table_new_row(struct table *t, struct libscols_line *parent)
{
	unsigned int i;

	if (json_output) {
		json_row_close(t);
		out_open_object(NULL);
		t->row_open = true;
		return;
	}
	t->ln = scols_table_new_line(t->tb, parent);
	if (!t->ln) {
		fputs("Error: out of memory\n", stderr);
		exit(EXIT_FAILURE);
	}
	t->row_open = true;
	/* cells left unset print as "-" */
	for (i = 0; i < t->nshown; i++)
		scols_line_set_data(t->ln, i, "-");
}

void table_row(struct table *t)
{
	table_new_row(t, NULL);
}

void table_row_at(struct table *t, unsigned int level)
{
	struct libscols_line *parent = NULL;

	if (!json_output && level && level <= t->nat)
		parent = t->at[level - 1];
	table_new_row(t, parent);
	if (json_output)
		return;
	if (level >= t->nat) {
		t->at = xrealloc(t->at, (level + 1) * sizeof(*t->at));
		memset(t->at + t->nat, 0, (level + 1 - t->nat) * sizeof(*t->at));
		t->nat = level + 1;
	}
	t->at[level] = t->ln;
}

/* Cell @col: JSON @val under the column's key, or plain @s in the line */
static void table_cell(struct table *t, unsigned int col,
		       struct json_object *val, const char *s)
{
	if (col >= t->ncols || !t->row_open || t->pos[col] < 0) {
		/* not shown, or a caller bug: no such column, or no
		 * table_row() */
		json_object_put(val);
		return;
	}
	if (json_output) {
		json_object_put(t->vals[col]);	/* set twice: the last */
		t->vals[col] = val;
		t->set[col] = true;
	} else {
		scols_line_set_data(t->ln, t->pos[col], s ?: "-");
	}
}

void table_str(struct table *t, unsigned int col, const char *val)
{
	/* A text cell libsmartcols copies and encodes itself, as \xNN too */
	char *clean = json_output && val ? clean_text(val) : NULL;

	val = clean ?: val;
	table_cell(t, col, json_output && val ? json_object_new_string(val) : NULL,
		   val ?: "-");
	free(clean);
}

void table_u64(struct table *t, unsigned int col, uint64_t val)
{
	char s[24];

	snprintf(s, sizeof(s), "%" PRIu64, val);
	table_cell(t, col, json_output ? json_object_new_uint64(val) : NULL, s);
}

void table_bytes(struct table *t, unsigned int col, uint64_t bytes)
{
	char s[FMT_BYTES_LEN];

	table_cell(t, col, json_output && bytes != OUT_BYTES_MAX ?
		   json_object_new_uint64(bytes) : NULL,
		   bytes_str(bytes, s, sizeof(s)));
}

void table_usec(struct table *t, unsigned int col, uint64_t usec)
{
	char s[FMT_USEC_LEN];

	table_cell(t, col, json_output ? json_object_new_uint64(usec) : NULL,
		   fmt_usec(usec, s, sizeof(s)));
}

bool out_draws_trees(void)
{
	return !json_output;
}

void table_time(struct table *t, unsigned int col, uint64_t ns)
{
	char s[FMT_TIME_LEN];

	table_cell(t, col, json_output ?
		   json_object_new_string(fmt_time_iso(ns, s, sizeof(s))) : NULL,
		   json_output ? NULL : fmt_time_local(ns, s, sizeof(s)));
}

void table_u64_as(struct table *t, unsigned int col, uint64_t val,
		  const char *text)
{
	table_cell(t, col, json_output ? json_object_new_uint64(val) : NULL,
		   text);
}

/*
 * libsmartcols measures cells with the C library's multibyte functions and
 * picks UTF-8 or ASCII branches from nl_langinfo(CODESET), so it prints
 * under the user's LC_CTYPE; oomctl itself keeps the C locale.
 */
static void table_print(struct libscols_table *tb)
{
	const char *cur = setlocale(LC_CTYPE, NULL);
	char *old = xstrdup(cur ?: "C");

	setlocale(LC_CTYPE, "");
	fflush(stdout);
	scols_print_table(tb);
	setlocale(LC_CTYPE, old);
	free(old);
}

void table_close(struct table *t)
{
	if (json_output) {
		json_row_close(t);
		out_close();
	} else {
		table_print(t->tb);
		scols_unref_table(t->tb);
	}
	free(t->at);
	free(t->pos);
	free(t->vals);
	free(t->set);
	free(t);
}
