/*
 * One output API for both renderings, after iproute2's json_print.h: each
 * call prints the plain form with @fmt and adds @key to the JSON document,
 * so no command has twin plain/JSON printers to keep in step.
 *
 * Plain: @fmt is a printf format with exactly one %s, which receives the
 * human rendering of the value ("%-12s", "limit %s "). A NULL @fmt prints
 * nothing in plain mode (JSON-only field).
 *
 * JSON (json-c): values go into the innermost open object under @key, or
 * are appended to the innermost open array (@key ignored). A NULL @key in
 * an object skips the JSON side (plain-only). At top level, keyed values
 * go into an implicit root object, so a command can simply call
 * out_u64("id", ...), and `dump` can gather several lists, each under its
 * own key, into one document; a keyless value said first is the document
 * itself (out_open_array(NULL) for a bare array). For plain-only text use
 * out_text(). The document is printed by out_finish() at
 * the end of the command: stdout is one valid JSON value, or
 * {"error": "..."} if p_err() was called, or null if nothing was said.
 */
#ifndef OOMCTL_OUTPUT_H
#define OOMCTL_OUTPUT_H

#include <stdbool.h>
#include <stdint.h>

extern bool json_output;
extern bool pretty_output;

/*
 * Errors: one "Error: ..." line on stderr, or in JSON mode the document
 * becomes {"error": "..."} (the first error: the root cause). Notes from
 * p_info() go to stderr and are dropped in JSON mode.
 */
void p_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void p_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
bool p_err_reported(void);

/* Sizes equal to this are limits set to "max" (memory.max): null in JSON */
#define OUT_BYTES_MAX	UINT64_MAX

void out_open_object(const char *key);
void out_open_array(const char *key);
void out_close(void);
void out_newline(void);
void out_text(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

void out_str(const char *key, const char *fmt, const char *val);
void out_u64(const char *key, const char *fmt, uint64_t val);
void out_s64(const char *key, const char *fmt, int64_t val);
void out_bool(const char *key, const char *fmt, bool val);
/* plain: "1.5G"; JSON: exact bytes */
void out_bytes(const char *key, const char *fmt, uint64_t bytes);
/* plain: "150ms"; JSON: microseconds */
void out_usec(const char *key, const char *fmt, uint64_t usec);
/* CLOCK_REALTIME ns. plain: local time; JSON: ISO 8601 UTC string */
void out_time(const char *key, const char *fmt, uint64_t ns);
/* plain: @text, the caller's rendering of @val; JSON: the number @val */
void out_u64_as(const char *key, const char *fmt, uint64_t val,
		const char *text);

/*
 * For streams (event watch): print the document built so far now, one
 * JSON value per line, and start a new one. Returns 0 or -errno when
 * stdout is gone, so the loop can stop.
 */
int out_flush(void);

/* End of command: print the JSON document (or error, or null). */
void out_finish(void);

/*
 * Tables, after lsblk: one column model per listing (struct col), from
 * which both renderings come. Plain mode is libsmartcols: aligned columns
 * under a header, numbers right-aligned, display widths of UTF-8 and tree
 * branches (COL_TREE) done by the library. JSON mode makes an array (under
 * @key) of objects keyed by the column keys, in the model's order. Cells
 * are filled by column: @col is the index of the cell's column in the
 * model (its enum), in any order after table_row(); a cell left unset,
 * or table_str(NULL), is "-" / null in any column. -o/--output (out_columns) picks and orders the columns of
 * both renderings; without it plain shows the columns not marked
 * COL_EXTRA and JSON shows them all. -n/--noheadings drops the header.
 */
enum col_type {
	COL_STR,
	COL_U64,
	COL_BYTES,
	COL_USEC,
};

/* struct col .flags */
#define COL_EXTRA	(1U << 0)	/* plain shows it only when -o names it */
#define COL_TREE	(1U << 1)	/* plain draws the rows' tree in it */

struct col {
	const char *key;	/* the JSON key; -o takes it or the header */
	const char *header;
	enum col_type type;
	unsigned int flags;
	const char *help;	/* one line for -o help */
};

/* A listing's model, for the check of -o before the command runs */
struct listing {
	const struct col *cols;
	unsigned int ncols;
};

extern const char *out_columns;	/* -o: comma-separated column names */
extern bool out_noheadings;	/* -n */
/* -r: plain tables unaligned, one space between cells, as lsblk -r: the
 * blanks and unprintable bytes of a cell as \xNN */
extern bool out_raw;
/* -b: sizes in bytes, not 1.5G, in plain text (JSON has bytes anyway) */
extern bool out_exact_bytes;

/*
 * Check -o against @l: 0 if it is absent or names only columns of @l;
 * -EINVAL with a one-line error naming the unknown column; 1 after
 * printing @l's columns for "-o help".
 */
int out_columns_check(const struct listing *l);

struct table;

struct table *table_open(const char *key, const struct col *cols,
			 unsigned int ncols);
void table_row(struct table *t);
/*
 * A row of a tree, @depth below the first row's level: its parent is the
 * last row opened at @depth - 1 (rows come in pre-order).
 */
void table_row_at(struct table *t, unsigned int depth);
void table_str(struct table *t, unsigned int col, const char *val);
void table_u64(struct table *t, unsigned int col, uint64_t val);
void table_bytes(struct table *t, unsigned int col, uint64_t bytes);
void table_usec(struct table *t, unsigned int col, uint64_t usec);
/*
 * Whether rows may be drawn as a tree: plain text can; JSON gives every
 * row its id and level instead.
 */
bool out_draws_trees(void);
/* as out_time() and out_u64_as() */
void table_time(struct table *t, unsigned int col, uint64_t ns);
void table_u64_as(struct table *t, unsigned int col, uint64_t val,
		  const char *text);
void table_close(struct table *t);

#endif /* OOMCTL_OUTPUT_H */
