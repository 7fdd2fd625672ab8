/* config_json.c - see config_int.h: the JSON getters of the loader, each
 * checking a key's type and range and naming it in its message
 * (docs/configuration.md). */
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "controller/config/config_int.h"
#include "controller/config/presets.h"
#include "state/fsutil.h"
#include "state/gitwork.h"
#include "strategies/schedule.h"
#include "strategies/sprintstatus.h"
#include "strategies/suggest.h"
#include "strategies/text.h"

/* "FILE: KEY: message" (or "FILE: message" when key is NULL). */
int
config_fail(struct loader *ld, const char *key, const char *fmt, ...)
{
	char msg[768];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (key == NULL)
		return err_set(ld->err, SC_EDATA, "%s: %s", ld->file, msg);
	return err_set(ld->err, SC_EDATA, "%s: %s: %s", ld->file, key, msg);
}

int
config_fail_nomem(struct loader *ld)
{
	return err_set(ld->err, SC_EOS, "%s: out of memory", ld->file);
}

/* Key paths are for messages: one cut short by KEY_MAX is still fine. */
void
config_key_join(char *buf, const char *parent, const char *key)
{
	int n;

	if (parent == NULL || parent[0] == '\0')
		n = snprintf(buf, KEY_MAX, "%s", key);
	else
		n = snprintf(buf, KEY_MAX, "%s.%s", parent, key);
	if (n < 0)
		buf[0] = '\0';
}

void
config_key_index(char *buf, const char *parent, size_t i)
{
	if (snprintf(buf, KEY_MAX, "%s[%zu]", parent, i) < 0)
		buf[0] = '\0';
}

const char *
config_type_word(const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT:
		return "an object";
	case JSON_ARRAY:
		return "an array";
	case JSON_STRING:
		return "a string";
	case JSON_INTEGER:
	case JSON_REAL:
		return "a number";
	case JSON_TRUE:
	case JSON_FALSE:
		return "a boolean";
	default:
		return "null";
	}
}

int
config_wrong_type(
    struct loader *ld, const char *key, const char *want, const json_t *v)
{
	return config_fail(
	    ld, key, "expected %s, got %s", want, config_type_word(v));
}

/* Copy s for a message or a name shown: the one cleaner of text
 * (docs/reliability.md "control characters"). */
void
config_shown(char *dst, size_t cap, const char *s)
{
	text_clean(
	    dst, cap, s, strlen(s), TEXT_SPACES | TEXT_MARK_INVALID, NULL);
}

/* Every key of obj must be in allowed (NULL-terminated). */
int
config_check_keys(struct loader *ld, json_t *obj, const char *path,
    const char *const *allowed)
{
	const char *k, *hint = NULL;
	json_t *v;
	char full[KEY_MAX], shown[KEY_MAX];
	size_t i, d, best = 3;
	bool known;

	json_object_foreach(obj, k, v)
	{
		known = false;
		for (i = 0; allowed[i] != NULL; i++)
			if (strcmp(k, allowed[i]) == 0)
				known = true;
		if (known)
			continue;
		for (i = 0; allowed[i] != NULL; i++) {
			d = suggest_distance(k, allowed[i]);
			if (d < best) {
				best = d;
				hint = allowed[i];
			}
		}
		config_shown(shown, sizeof(shown), k);
		config_key_join(full, path, shown);
		if (hint != NULL)
			return config_fail(ld, NULL,
			    "unknown key %s (did you mean %s?)", full, hint);
		return config_fail(ld, NULL, "unknown key %s", full);
	}
	return 0;
}

/* The value of key in obj, or NULL when absent. */
static json_t *
member(json_t *obj, const char *key)
{
	return obj != NULL ? json_object_get(obj, key) : NULL;
}

/* A number (fractions allowed) in [min, max], or (min, max] when
 * min_open.  Absent: *out untouched. */
int
config_get_number(struct loader *ld, json_t *obj, const char *path,
    const char *name, double *out, double min, double max, bool min_open)
{
	json_t *v = member(obj, name);
	char key[KEY_MAX];
	double d;

	if (v == NULL)
		return 0;
	config_key_join(key, path, name);
	if (!json_is_number(v))
		return config_wrong_type(ld, key, "a number", v);
	d = json_number_value(v);
	if (!isfinite(d) || (min_open ? !(d > min) : !(d >= min)) || d > max) {
		/* A small closed range (jitter) reads best as "between". */
		if (max < SECONDS_MAX && !min_open)
			return config_fail(ld, key,
			    "must be between %g and %g, got %g", min, max, d);
		if (d > max)
			return config_fail(
			    ld, key, "must be <= %g, got %g", max, d);
		return config_fail(ld, key, "must be %s %g, got %g",
		    min_open ? ">" : ">=", min, d);
	}
	*out = d;
	return 0;
}

/* An integer in [min, max].  An integral real such as 1e3 is accepted;
 * 1.5 is not ("_ms values are integers"). */
int
config_get_integer(struct loader *ld, json_t *obj, const char *path,
    const char *name, long long *out, long long min, long long max)
{
	json_t *v = member(obj, name);
	char key[KEY_MAX];
	long long n;
	double d;

	if (v == NULL)
		return 0;
	config_key_join(key, path, name);
	if (json_is_integer(v)) {
		n = (long long)json_integer_value(v);
	} else if (json_is_real(v)) {
		d = json_real_value(v);
		if (!isfinite(d) || d != floor(d))
			return config_fail(
			    ld, key, "must be an integer, got %g", d);
		if (d < (double)min)
			return config_fail(
			    ld, key, "must be >= %lld, got %g", min, d);
		if (d > (double)max)
			return config_fail(
			    ld, key, "must be <= %lld, got %g", max, d);
		n = (long long)d;
	} else {
		return config_wrong_type(ld, key, "an integer", v);
	}
	if (n < min)
		return config_fail(
		    ld, key, "must be >= %lld, got %lld", min, n);
	if (n > max)
		return config_fail(
		    ld, key, "must be <= %lld, got %lld", max, n);
	*out = n;
	return 0;
}

int
config_get_int(struct loader *ld, json_t *obj, const char *path,
    const char *name, int *out, int min, int max)
{
	long long n = *out;
	int rc;

	rc = config_get_integer(ld, obj, path, name, &n, min, max);
	if (rc == 0)
		*out = (int)n;
	return rc;
}

int
config_get_bool(struct loader *ld, json_t *obj, const char *path,
    const char *name, bool *out)
{
	json_t *v = member(obj, name);
	char key[KEY_MAX];

	if (v == NULL)
		return 0;
	if (!json_is_boolean(v)) {
		config_key_join(key, path, name);
		return config_wrong_type(
		    ld, key, "a boolean (true or false)", v);
	}
	*out = json_is_true(v);
	return 0;
}

/* A non-empty string, copied into *out (the old value freed). */
int
config_get_string(struct loader *ld, json_t *obj, const char *path,
    const char *name, char **out)
{
	json_t *v = member(obj, name);
	char key[KEY_MAX];
	char *copy = NULL;

	if (v == NULL)
		return 0;
	config_key_join(key, path, name);
	if (!json_is_string(v))
		return config_wrong_type(ld, key, "a string", v);
	if (json_string_length(v) == 0)
		return config_fail(ld, key, "must not be empty");
	copy = strdup(json_string_value(v));
	if (copy == NULL)
		return config_fail_nomem(ld);
	free(*out);
	*out = copy;
	return 0;
}

/* An array of strings into *out (replacing it); items must be non-empty
 * when nonempty_items, and the list itself when nonempty_list. */
int
config_parse_strings(struct loader *ld, json_t *v, const char *key,
    struct strlist *out, bool nonempty_list, bool nonempty_items)
{
	struct strlist tmp = {0};
	char ikey[KEY_MAX];
	json_t *item;
	size_t i;
	int rc = 0;

	if (!json_is_array(v)) {
		rc = config_wrong_type(ld, key, "an array of strings", v);
		goto out;
	}
	if (nonempty_list && json_array_size(v) == 0) {
		rc = config_fail(ld, key, "must not be empty");
		goto out;
	}
	json_array_foreach(v, i, item)
	{
		config_key_index(ikey, key, i);
		if (!json_is_string(item)) {
			rc = config_wrong_type(ld, ikey, "a string", item);
			goto out;
		}
		if (nonempty_items && json_string_length(item) == 0) {
			rc = config_fail(ld, ikey, "must not be empty");
			goto out;
		}
		if (strlist_push(&tmp, json_string_value(item)) < 0) {
			rc = config_fail_nomem(ld);
			goto out;
		}
	}
	strlist_release(out);
	*out = tmp;
	memset(&tmp, 0, sizeof(tmp));
out:
	strlist_release(&tmp);
	return rc;
}

int
config_get_strings(struct loader *ld, json_t *obj, const char *path,
    const char *name, struct strlist *out)
{
	json_t *v = member(obj, name);
	char key[KEY_MAX];

	if (v == NULL)
		return 0;
	config_key_join(key, path, name);
	return config_parse_strings(ld, v, key, out, false, true);
}

/* An argv template: a non-empty array of strings, the program non-empty. */
int
config_parse_argv(
    struct loader *ld, json_t *v, const char *key, struct strlist *out)
{
	char ikey[KEY_MAX];
	int rc;

	rc = config_parse_strings(ld, v, key, out, true, false);
	if (rc == 0 && out->items[0][0] == '\0') {
		config_key_index(ikey, key, 0);
		rc =
		    config_fail(ld, ikey, "the program name must not be empty");
	}
	return rc;
}

int
config_want_object(struct loader *ld, json_t *v, const char *key)
{
	if (!json_is_object(v))
		return config_wrong_type(ld, key, "an object", v);
	return 0;
}
