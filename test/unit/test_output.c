/* Unit tests of cli/output.c: one call, two renderings. */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>
#include <json-c/json.h>

#include "output.h"
#include "tap.h"
#include "text_check.h"

/* stdout and stderr of the code under test, caught in files */
static FILE *cap_out, *cap_err;
static int saved_out, saved_err;
static char out[1 << 20], err[4096];

static void cap_start(void)
{
	fflush(stdout);
	fflush(stderr);
	cap_out = tmpfile();
	cap_err = tmpfile();
	saved_out = dup(1);
	saved_err = dup(2);
	dup2(fileno(cap_out), 1);
	dup2(fileno(cap_err), 2);
}

static void cap_read(FILE *f, char *buf, size_t size)
{
	size_t n;

	rewind(f);
	n = fread(buf, 1, size - 1, f);
	buf[n] = '\0';
	fclose(f);
}

static void cap_stop(void)
{
	fflush(stdout);
	fflush(stderr);
	dup2(saved_out, 1);
	dup2(saved_err, 2);
	close(saved_out);
	close(saved_err);
	cap_read(cap_out, out, sizeof(out));
	cap_read(cap_err, err, sizeof(err));
}

static struct json_object *get(struct json_object *obj, const char *key)
{
	struct json_object *v = NULL;

	json_object_object_get_ex(obj, key, &v);
	return v;
}

static void test_plain(void)
{
	json_output = false;
	cap_start();
	out_str("name", "name %s\n", "/a/b");
	out_str("none", "none %s\n", NULL);
	out_u64("id", "id %s\n", 18446744073709551615ULL);
	out_s64("delta", "delta %s\n", -5);
	out_bool("on", "on %s\n", true);
	out_bytes("limit", "limit %s\n", 3ULL << 29);
	out_bytes("max", "max %s\n", OUT_BYTES_MAX);
	out_usec("window", "window %s\n", 150000);
	out_u64("hidden", NULL, 7);
	out_open_object("obj");
	out_str(NULL, "%s", "text");
	out_close();
	out_newline();
	out_text("%d words\n", 2);
	out_finish();
	cap_stop();
	is_str(out, "name /a/b\nnone -\nid 18446744073709551615\ndelta -5\n"
		    "on true\nlimit 1.5G\nmax max\nwindow 150ms\ntext\n"
		    "2 words\n", "plain: every kind of value");
	is_str(err, "", "plain: nothing on stderr");
}

static void test_json(void)
{
	struct json_object *root, *v, *items;
	off_t early;

	json_output = true;
	cap_start();
	out_u64("id", "id %s\n", 5);
	out_str("path", "%s", "/a/b");
	out_str("none", "%s", NULL);
	out_bytes("limit_bytes", "%s", 3ULL << 29);
	out_bytes("max_bytes", "%s", OUT_BYTES_MAX);
	out_usec("window_us", "%s", 150000);
	out_time("at", "%s", 1700000000123456789ULL);
	out_s64("delta", NULL, -5);
	out_str(NULL, "plain only %s\n", "x");
	out_text("plain only too\n");
	out_newline();
	out_open_array("items");
	out_str("ignored", "%s", "a");
	out_u64(NULL, "%s", 7);
	out_open_object(NULL);
	out_bool("on", "%s", false);
	out_close();
	out_close();
	fflush(stdout);
	early = lseek(1, 0, SEEK_CUR);
	out_finish();
	cap_stop();

	is_int(early, 0, "json: nothing printed before out_finish()");
	ok(!strstr(out, "\\/"), "json: slashes are not escaped");
	is_int(count_lines(out), 1, "json: compact is one line");
	root = json_whole(out);
	if (!ok(root && json_object_is_type(root, json_type_object),
		"json: stdout is one JSON object")) {
		printf("#   stdout: %s\n", out);
		return;
	}
	is_int(json_object_object_length(root), 9,
	       "json: nine keys, none plain-only");
	is_u64(json_object_get_uint64(get(root, "id")), 5, "json: id");
	is_str(json_object_get_string(get(root, "path")), "/a/b", "json: path");
	ok(json_object_object_get_ex(root, "none", &v) && !v,
	   "json: NULL string is null");
	v = get(root, "limit_bytes");
	ok(json_object_is_type(v, json_type_int), "json: bytes are a number");
	is_u64(json_object_get_uint64(v), 3ULL << 29, "json: exact bytes");
	ok(json_object_object_get_ex(root, "max_bytes", &v) && !v,
	   "json: max bytes is null");
	is_u64(json_object_get_uint64(get(root, "window_us")), 150000,
	       "json: durations in microseconds");
	is_str(json_object_get_string(get(root, "at")),
	       "2023-11-14T22:13:20.123456Z", "json: time in ISO 8601 UTC");
	is_int(json_object_get_int64(get(root, "delta")), -5, "json: signed");
	items = get(root, "items");
	ok(json_object_is_type(items, json_type_array) &&
	   json_object_array_length(items) == 3, "json: array of three");
	is_str(json_object_get_string(json_object_array_get_idx(items, 0)),
	       "a", "json: keys are ignored in arrays");
	is_int(json_object_get_int(json_object_array_get_idx(items, 1)), 7,
	       "json: keyless number in array");
	v = json_object_array_get_idx(items, 2);
	ok(json_object_is_type(get(v, "on"), json_type_boolean) &&
	   !json_object_get_boolean(get(v, "on")), "json: nested bool");
	json_object_put(root);
	is_str(err, "", "json: nothing on stderr");
}

static void test_json_null_and_error(void)
{
	bool reported, forgotten;
	struct json_object *root;

	json_output = true;
	cap_start();
	out_finish();
	cap_stop();
	is_str(out, "null\n", "json: nothing to say is null");

	cap_start();
	out_open_array("items");
	out_u64(NULL, NULL, 1);
	p_err("first %d", 1);
	p_err("second");
	p_info("a note");
	reported = p_err_reported();
	out_finish();
	forgotten = !p_err_reported();
	cap_stop();
	ok(reported, "json: p_err() is remembered");
	ok(forgotten, "json: out_finish() forgets the error");
	is_str(err, "", "json: errors and notes stay off stderr");
	root = json_whole(out);
	ok(root && json_object_object_length(root) == 1,
	   "json: an error replaces the document");
	is_str(json_object_get_string(get(root, "error")), "first 1",
	       "json: the first error is the one reported");
	json_object_put(root);

	/* pretty: several lines, same document */
	pretty_output = true;
	cap_start();
	out_u64("a", NULL, 1);
	out_open_array("b");
	out_u64(NULL, NULL, 2);
	out_close();
	out_finish();
	cap_stop();
	pretty_output = false;
	ok(count_lines(out) > 3, "json: pretty is indented on several lines");
	root = json_whole(out);
	ok(root && json_object_get_int(get(root, "a")) == 1,
	   "json: pretty output parses");
	json_object_put(root);
}

static void test_text_errors(void)
{
	json_output = false;
	cap_start();
	p_err("bad '%s'", "x");
	p_info("note %d", 3);
	out_finish();
	cap_stop();
	is_str(err, "Error: bad 'x'\nnote 3\n", "text: error and note on stderr");
	is_str(out, "", "text: nothing on stdout");
}

static void test_stream(void)
{
	struct json_object *a, *b;
	int ret1, ret2;
	char *second;

	json_output = true;
	cap_start();
	out_u64("n", NULL, 1);
	ret1 = out_flush();
	out_u64("n", NULL, 2);
	ret2 = out_flush();
	out_finish();
	cap_stop();
	is_int(ret1, 0, "stream: first flush");
	is_int(ret2, 0, "stream: second flush");
	is_int(count_lines(out), 2, "stream: a line per document, no trailing null");
	second = strchr(out, '\n') + 1;
	second[-1] = '\0';
	a = json_whole(out);
	b = json_whole(second);
	ok(a && b && json_object_get_int(get(a, "n")) == 1 &&
	   json_object_get_int(get(b, "n")) == 2, "stream: documents parse");
	json_object_put(a);
	json_object_put(b);
}

static const struct col cols[] = {
	{ "name", "NAME", COL_STR, 0, NULL },
	{ "current_bytes", "CURRENT", COL_BYTES, 0, NULL },
	{ "id", "ID", COL_U64, 0, NULL },
};

static void fill(struct table *t)
{
	table_row(t);
	table_str(t, 0, "/");
	table_bytes(t, 1, 3ULL << 29);
	table_u64(t, 2, 1);
	table_row(t);
	table_str(t, 0, "/system.slice");
	table_bytes(t, 1, 312ULL << 20);
	table_u64(t, 2, 12345);
	table_row(t);
	table_str(t, 0, "/a");
	table_str(t, 1, NULL);
	/* the last cell is missing: "-" / absent, never a shifted row */
}

/* One row, its cells set out of the model's order, ID twice */
static void render_out_of_order(void)
{
	struct table *t;

	cap_start();
	t = table_open("memcgs", cols, 3);
	table_row(t);
	table_u64(t, 2, 9);
	table_str(t, 0, "/late");
	table_u64(t, 2, 12);
	table_str(t, 1, NULL);
	table_close(t);
	out_finish();
	cap_stop();
}

static void test_table(void)
{
	static const struct col last_str[] = {
		{ "id", "ID", COL_U64, 0, NULL },
		{ "name", "NAME", COL_STR, 0, NULL },
	};
	struct json_object *root, *arr, *row;
	struct table *t;
	int i;

	json_output = false;
	cap_start();
	t = table_open("memcgs", cols, 3);
	fill(t);
	table_close(t);
	t = table_open("x", last_str, 2);
	table_row(t);
	table_u64(t, 0, 7);
	table_str(t, 1, "a");
	table_row(t);
	table_u64(t, 0, 1000);
	table_str(t, 1, "longer");
	table_close(t);
	out_finish();
	cap_stop();
	is_str(out,
	       "NAME           CURRENT     ID\n"
	       "/                 1.5G      1\n"
	       "/system.slice     312M  12345\n"
	       "/a                   -      -\n"
	       "  ID  NAME\n"
	       "   7  a\n"
	       "1000  longer\n",
	       "table: aligned, numbers right, no trailing blanks");

	/* -r and -b, as lsblk's: one space, blanks escaped; exact bytes */
	out_raw = out_exact_bytes = true;
	cap_start();
	t = table_open("memcgs", cols, 3);
	fill(t);
	table_row(t);
	table_str(t, 0, "/a b");
	table_bytes(t, 1, OUT_BYTES_MAX);
	table_close(t);
	out_finish();
	cap_stop();
	out_raw = out_exact_bytes = false;
	is_str(out,
	       "NAME CURRENT ID\n"
	       "/ 1610612736 1\n"
	       "/system.slice 327155712 12345\n"
	       "/a - -\n"
	       "/a\\x20b max -\n",
	       "-r -b: unaligned, one space, a blank as \\x20; bytes exact");

	/* Cells by column: any order, the last of two wins; JSON keys and
	 * plain columns in the model's order */
	render_out_of_order();
	is_str(out, "NAME   CURRENT  ID\n/late        -  12\n",
	       "table: cells by column id, in any order");
	json_output = true;
	render_out_of_order();
	json_output = false;
	is_str(out, "{\"memcgs\":[{\"name\":\"/late\",\"current_bytes\":null,\"id\":12}]}\n",
	       "json: keys in the model's order, null kept, the last value");

	json_output = true;
	cap_start();
	t = table_open("memcgs", cols, 3);
	fill(t);
	table_close(t);
	out_finish();
	cap_stop();
	root = json_whole(out);
	arr = get(root, "memcgs");
	if (!ok(json_object_is_type(arr, json_type_array) &&
		json_object_array_length(arr) == 3, "table: JSON array of rows")) {
		printf("#   stdout: %s\n", out);
		json_object_put(root);
		return;
	}
	row = json_object_array_get_idx(arr, 1);
	is_str(json_object_get_string(get(row, "name")), "/system.slice",
	       "table: JSON row keyed by column");
	is_u64(json_object_get_uint64(get(row, "current_bytes")), 312ULL << 20,
	       "table: JSON bytes exact");
	is_u64(json_object_get_uint64(get(row, "id")), 12345, "table: JSON id");
	row = json_object_array_get_idx(arr, 2);
	ok(json_object_object_get_ex(row, "current_bytes", &arr) && !arr,
	   "table: JSON NULL cell is null");
	ok(!json_object_object_get_ex(row, "id", NULL),
	   "table: JSON missing cell is absent");
	json_object_put(root);

	/* many rows: every line as wide as the header */
	json_output = false;
	cap_start();
	t = table_open("memcgs", cols, 3);
	for (i = 0; i < 20000; i++) {
		char name[32];

		snprintf(name, sizeof(name), "/cg%d", i);
		table_row(t);
		table_str(t, 0, name);
		table_bytes(t, 1, (uint64_t)i * 4096 * 1021);
		table_u64(t, 2, i);
	}
	table_close(t);
	cap_stop();
	is_int(count_lines(out), 20001, "table: 20000 rows and a header");
	{
		size_t w = strchr(out, '\n') - out;
		char *p = out;

		for (i = 0; *p; i++) {
			char *nl = strchr(p, '\n');

			if ((size_t)(nl - p) != w)
				break;
			p = nl + 1;
		}
		is_int(i, 20001, "table: all lines %zu wide", w);
	}
}

/* test_table_columns()' columns: a tree, a size, an extra (hidden) one */
static const struct col tcols[] = {
	{ "path", "PATH", COL_STR, COL_TREE, NULL },
	{ "size_bytes", "SIZE", COL_BYTES, 0, NULL },
	{ "level", "LEVEL", COL_U64, COL_EXTRA, NULL },
};

/* One root row, "/" 1.0K level 7, rendered with the options in force */
static void render_root_row(void)
{
	struct table *t;

	cap_start();
	t = table_open("rows", tcols, 3);
	table_row_at(t, 0);
	table_str(t, 0, "/");
	table_bytes(t, 1, 1024);
	table_u64(t, 2, 7);
	table_close(t);
	out_finish();
	cap_stop();
}

/* -o, -n, hidden columns and trees, in both renderings */
static void test_table_columns(void)
{
	static const struct listing l = { tcols, 3 };
	struct json_object *root, *arr, *row;
	struct table *t;

	json_output = false;
	out_columns = "SIZE,path,nope";
	cap_start();
	is_int(out_columns_check(&l), -EINVAL, "-o: an unknown column fails");
	out_finish();
	cap_stop();
	is_str(err, "Error: unknown column 'nope'; see '-o help'\n",
	       "-o: one line naming the unknown column");

	out_columns = "help";
	cap_start();
	is_int(out_columns_check(&l), 1, "-o help: handled");
	cap_stop();
	ok(strstr(out, "LEVEL") && strstr(out, "size_bytes"),
	   "-o help: names and keys");

	out_columns = "size,PATH,Level";
	is_int(out_columns_check(&l), 0, "-o: keys or headers, any case");
	/* the branches follow the user's LC_CTYPE: ASCII in C */
	setenv("LC_ALL", "C", 1);
	cap_start();
	t = table_open("rows", tcols, 3);
	table_row_at(t, 0);
	table_str(t, 0, "/");
	table_bytes(t, 1, 1024);
	table_u64(t, 2, 0);
	table_row_at(t, 1);
	table_str(t, 0, "a");
	table_bytes(t, 1, 2048);
	table_u64(t, 2, 1);
	table_row_at(t, 2);
	table_str(t, 0, "x");
	table_row_at(t, 1);
	table_str(t, 0, "b");
	table_close(t);
	out_finish();
	cap_stop();
	/* the C locale of this test: ASCII branches */
	is_str(out,
	       "SIZE  PATH   LEVEL\n"
	       "1.0K  /          0\n"
	       "2.0K  |-a        1\n"
	       "   -  | `-x      -\n"
	       "   -  `-b        -\n",
	       "-o: chosen order, the tree drawn in its column");

	setenv("LC_ALL", "C.UTF-8", 1);
	cap_start();
	t = table_open("rows", tcols, 3);
	table_row_at(t, 0);
	table_str(t, 0, "/");
	table_row_at(t, 1);
	table_str(t, 0, "aé");
	table_row_at(t, 2);
	table_str(t, 0, "x");
	table_row_at(t, 1);
	table_str(t, 0, "b");
	table_close(t);
	out_finish();
	cap_stop();
	unsetenv("LC_ALL");
	/* "aé" is two columns wide in three bytes: LEVEL stays aligned */
	is_str(out,
	       "SIZE  PATH   LEVEL\n"
	       "   -  /          -\n"
	       "   -  ├─aé       -\n"
	       "   -  │ └─x      -\n"
	       "   -  └─b        -\n",
	       "UTF-8: box-drawing branches, widths by display columns");

	out_columns = NULL;
	out_noheadings = true;
	render_root_row();
	ok(count_lines(out) == 1 && !strncmp(out, "/ ", 2) &&
	   strstr(out, "1.0K") && !strstr(out, "PATH") && !strstr(out, "7"),
	   "-n: no header; extra columns hidden");
	out_noheadings = false;

	json_output = true;
	render_root_row();
	root = json_whole(out);
	row = json_object_array_get_idx(get(root, "rows"), 0);
	ok(row && json_object_object_length(row) == 3 &&
	   json_object_get_uint64(get(row, "level")) == 7,
	   "json: every column by default, extra ones too");
	json_object_put(root);

	out_columns = "level";
	render_root_row();
	root = json_whole(out);
	arr = get(root, "rows");
	row = json_object_array_get_idx(arr, 0);
	ok(row && json_object_object_length(row) == 1 &&
	   json_object_get_uint64(get(row, "level")) == 7,
	   "json: -o picks the keys too");
	json_object_put(root);
	out_columns = NULL;
	json_output = false;
}

/*
 * Names from the system reach the terminal with no control character and
 * JSON with valid UTF-8 only: each other byte as the text \xNN, the same
 * in both renderings; valid UTF-8 is kept as it is.
 */
static void test_clean(void)
{
	static const struct col name_col[] = {
		{ "name", "NAME", COL_STR, 0, NULL },
	};
	static const char *const in[] = {
		"a\x1b[31mb\tc",		/* an escape sequence, a tab */
		"x\xff\xc3y\xc0\xafz",	/* no UTF-8: a stray, a cut, an overlong */
		"\xed\xa0\x80\xc2\x85",	/* a surrogate, a C1 control (NEL) */
		"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x90\xa7", /* é € and a penguin */
	};
	static const char *const exp[] = {
		"a\\x1b[31mb\\x09c",
		"x\\xff\\xc3y\\xc0\\xafz",
		"\\xed\\xa0\\x80\\xc2\\x85",
		"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x90\xa7",
	};
	struct json_object *root, *v;
	struct table *t;
	char want[256] = "";
	unsigned int i;

	json_output = false;
	cap_start();
	for (i = 0; i < 4; i++)
		out_str("name", "%s\n", in[i]);
	t = table_open("names", name_col, 1);
	table_row(t);
	table_str(t, 0, in[0]);
	table_close(t);
	out_finish();
	cap_stop();
	for (i = 0; i < 4; i++)
		snprintf(want + strlen(want), sizeof(want) - strlen(want), "%s\n",
			 exp[i]);
	snprintf(want + strlen(want), sizeof(want) - strlen(want),
		 "NAME\n%s\n", exp[0]);
	is_str(out, want, "clean: controls and non-UTF-8 as \\xNN, UTF-8 kept, text and table");

	json_output = true;
	for (i = 0; i < 4; i++) {
		cap_start();
		out_str("name", "%s", in[i]);
		out_finish();
		cap_stop();
		root = json_tokener_parse(out);
		v = NULL;
		json_object_object_get_ex(root, "name", &v);
		is_str(v ? json_object_get_string(v) : "(none)", exp[i],
		       "clean: JSON string %u as in the text", i);
		json_object_put(root);
	}
	cap_start();
	t = table_open("names", name_col, 1);
	table_row(t);
	table_str(t, 0, in[1]);
	table_close(t);
	out_finish();
	cap_stop();
	ok(strstr(out, "x\\\\xff\\\\xc3y") != NULL, "clean: a JSON table cell too");
}

int main(void)
{
	test_clean();
	test_plain();
	test_json();
	test_json_null_and_error();
	test_text_errors();
	test_table_columns();
	test_stream();
	test_table();
	return tap_done("test_output");
}
