/* Checks on captured output shared by the host tests. */
#ifndef OOMCTL_TEXT_CHECK_H
#define OOMCTL_TEXT_CHECK_H

#include <string.h>
#include <json-c/json.h>

static inline int count_lines(const char *s)
{
	int n = 0;

	for (; *s; s++)
		n += *s == '\n';
	return n;
}

/* The whole of @s must be one JSON value (and newlines): else NULL */
static inline struct json_object *json_whole(const char *s)
{
	struct json_tokener *tok = json_tokener_new();
	struct json_object *obj = json_tokener_parse_ex(tok, s, strlen(s));
	size_t end = json_tokener_get_parse_end(tok);

	if (json_tokener_get_error(tok) != json_tokener_success ||
	    strspn(s + end, "\n") != strlen(s + end)) {
		json_object_put(obj);
		obj = NULL;
	}
	json_tokener_free(tok);
	return obj;
}

#endif /* OOMCTL_TEXT_CHECK_H */
