/* failure.c - see failure.h. */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "strategies/failure.h"
#include "strategies/suggest.h"
#include "strategies/text.h"

/* The keys a body may have, and those of its metadata
 * (docs/api.md#the-body-of-a-post). */
static const char *const top_keys[] = {"error_code", "error_message",
    "agent_id", "attempt_number", "retry_scheduled_at", "intent_id",
    "metadata"};
static const char *const meta_keys[] = {
    "http_status", "exit_code", "signal", "source"};

#define NKEYS(a) (sizeof(a) / sizeof((a)[0]))

static const char *
type_name(const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT:
		return "an object";
	case JSON_ARRAY:
		return "an array";
	case JSON_STRING:
		return "a string";
	case JSON_INTEGER:
		return "an integer";
	case JSON_REAL:
		return "a number with a fraction";
	case JSON_TRUE:
	case JSON_FALSE:
		return "a boolean";
	default:
		return "null";
	}
}

/* SC_EDATA "failure: KEY: expected WANT, got TYPE". */
static int
wrong_type(
    struct sc_err *err, const char *key, const char *want, const json_t *v)
{
	return err_set(err, SC_EDATA, "failure: %s: expected %s, got %s", key,
	    want, type_name(v));
}

/* SC_EDATA naming an unknown key of keys[], with the nearest. */
static int
unknown_key(struct sc_err *err, const char *prefix, const char *key,
    const char *const *keys, size_t n)
{
	struct suggest sg;
	size_t i;
	int best;

	suggest_init(&sg, key);
	for (i = 0; i < n; i++)
		suggest_add(&sg, keys[i], (int)i);
	best = suggest_best(&sg);
	return err_set(err, SC_EDATA, "failure: unknown key %s%.64s%s%s%s",
	    prefix, key, best >= 0 ? " (did you mean " : "",
	    best >= 0 ? keys[best] : "", best >= 0 ? "?)" : "");
}

/* An integer in [lo, hi] at key (null allowed: *out untouched). */
static int
get_int(int *out, const json_t *v, const char *key, int lo, int hi,
    struct sc_err *err)
{
	json_int_t x;

	if (json_is_null(v))
		return 0;
	if (!json_is_integer(v))
		return wrong_type(err, key, "an integer or null", v);
	x = json_integer_value(v);
	if (x < lo || x > hi)
		return err_set(err, SC_EDATA,
		    "failure: %s: must be %d to %d, got %lld", key, lo, hi,
		    (long long)x);
	*out = (int)x;
	return 0;
}

/* Any code of storyctl: reference 003's six are among them, its
 * INVALID_OUTPUT a gate_failed (docs/api.md#error-codes-of-a-post); a
 * record read back may be sent again, whatever its code. */
static int
get_code(struct failure_report *out, const json_t *v, struct sc_err *err)
{
	struct suggest sg;
	const char *s;
	int i, best;

	if (!json_is_string(v))
		return wrong_type(err, "error_code", "a string", v);
	s = json_string_value(v);
	if (errcode_parse(&out->error_code, s) == 0 &&
	    out->error_code != ERRC_NONE)
		return 0;
	suggest_init(&sg, s);
	for (i = 1; i < ERRC__COUNT; i++)
		suggest_add(&sg, errcode_name((enum error_code)i), i);
	best = suggest_best(&sg);
	return err_set(err, SC_EDATA,
	    "failure: error_code: %.64s is not an error code of storyctl%s%s%s "
	    "(docs/api.md#error-codes-of-a-post lists them)",
	    s, best > 0 ? " (did you mean " : "",
	    best > 0 ? errcode_name((enum error_code)best) : "",
	    best > 0 ? "?)" : "");
}

/* A string of at most max - 1 bytes into dst (cleaned), null allowed
 * when nullable. */
static int
get_text(char *dst, size_t max, const json_t *v, const char *key, bool nullable,
    struct sc_err *err)
{
	size_t n;

	if (nullable && json_is_null(v))
		return 0;
	if (!json_is_string(v))
		return wrong_type(
		    err, key, nullable ? "a string or null" : "a string", v);
	n = json_string_length(v);
	if (n >= max)
		return err_set(err, SC_EDATA,
		    "failure: %s: at most %zu bytes, got %zu", key, max - 1, n);
	text_clean(dst, max, json_string_value(v), n, TEXT_KEEP_NL, NULL);
	return 0;
}

static int
get_time(int64_t *out, const json_t *v, const char *key, struct sc_err *err)
{
	if (json_is_null(v))
		return 0;
	if (!json_is_string(v))
		return wrong_type(err, key, "an RFC 3339 time or null", v);
	if (failure_time_parse(out, json_string_value(v)) < 0)
		return err_set(err, SC_EDATA,
		    "failure: %s: %.64s is not an RFC 3339 date-time, "
		    "such as 2026-02-15T10:05:00Z",
		    key, json_string_value(v));
	return 0;
}

static int
get_meta(struct failure_report *out, const json_t *m, struct sc_err *err)
{
	const char *key, *src;
	json_t *v;
	int rc = 0;

	if (json_is_null(m))
		return 0;
	if (!json_is_object(m))
		return wrong_type(err, "metadata", "an object or null", m);
	json_object_foreach((json_t *)m, key, v)
	{
		if (strcmp(key, "http_status") == 0)
			rc = get_int(&out->http_status, v,
			    "metadata.http_status", 100, 599, err);
		else if (strcmp(key, "exit_code") == 0)
			rc = get_int(&out->exit_code, v, "metadata.exit_code",
			    0, 255, err);
		else if (strcmp(key, "signal") == 0)
			rc = get_int(
			    &out->signal, v, "metadata.signal", 1, 64, err);
		else if (strcmp(key, "source") == 0) {
			/* a record read back may be sent again; storyctl's
			 * own records are not for a client to make */
			src = json_string_value(v);
			if (!json_is_null(v) &&
			    (src == NULL || strcmp(src, "external") != 0))
				rc = err_set(err, SC_EDATA,
				    "failure: metadata.source: only "
				    "\"external\" (or null) can be sent");
		} else
			rc = unknown_key(
			    err, "metadata.", key, meta_keys, NKEYS(meta_keys));
		if (rc < 0)
			break;
	}
	return rc;
}

static int
get_intent(const json_t *v, const char *story_id, struct sc_err *err)
{
	if (json_is_null(v))
		return 0;
	if (!json_is_string(v))
		return wrong_type(err, "intent_id", "a string or null", v);
	if (strcmp(json_string_value(v), story_id) != 0)
		return err_set(err, SC_EDATA,
		    "failure: intent_id: %.64s is not the story of the path "
		    "(%.64s)",
		    json_string_value(v), story_id);
	return 0;
}

/* One key of the body. */
static int
get_key(struct failure_report *out, const char *key, const json_t *v,
    const char *story_id, bool *have_code, struct sc_err *err)
{
	if (strcmp(key, "error_code") == 0) {
		*have_code = true;
		return get_code(out, v, err);
	}
	if (strcmp(key, "error_message") == 0)
		return get_text(out->error_message, sizeof(out->error_message),
		    v, key, true, err);
	if (strcmp(key, "agent_id") == 0)
		return get_text(
		    out->agent_id, sizeof(out->agent_id), v, key, true, err);
	if (strcmp(key, "attempt_number") == 0)
		return get_int(
		    &out->attempt_number, v, key, 1, FAILURE_ATTEMPT_MAX, err);
	if (strcmp(key, "retry_scheduled_at") == 0)
		return get_time(&out->retry_scheduled_ms, v, key, err);
	if (strcmp(key, "intent_id") == 0)
		return get_intent(v, story_id, err);
	if (strcmp(key, "metadata") == 0)
		return get_meta(out, v, err);
	return unknown_key(err, "", key, top_keys, NKEYS(top_keys));
}

int
failure_parse(struct failure_report *out, const char *body, size_t len,
    const char *story_id, struct sc_err *err)
{
	json_error_t jerr;
	json_t *j = NULL, *v;
	const char *key;
	bool have_code = false;
	int rc = 0;

	memset(out, 0, sizeof(*out));
	out->exit_code = -1;
	if (len > 0 && !text_json_depth_ok(body, len, FAILURE_DEPTH_MAX))
		return err_set(err, SC_EDATA,
		    "failure: the body nests deeper than %d levels",
		    FAILURE_DEPTH_MAX);
	j = json_loadb(len > 0 ? body : "", len,
	    JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &jerr);
	if (j == NULL)
		return err_set(err, SC_EUSAGE,
		    "failure: the body is not JSON: %s (line %d)", jerr.text,
		    jerr.line);
	if (!json_is_object(j)) {
		rc = wrong_type(err, "the body", "an object", j);
		goto out;
	}
	json_object_foreach(j, key, v)
	{
		rc = get_key(out, key, v, story_id, &have_code, err);
		if (rc < 0)
			goto out;
	}
	if (!have_code)
		rc = err_set(err, SC_EDATA,
		    "failure: error_code is required (e.g. \"CRASH\")");
out:
	json_decref(j);
	if (rc < 0) {
		memset(out, 0, sizeof(*out));
		out->exit_code = -1;
	}
	return rc;
}

/* Read exactly n digits at *s as a number, moving *s past them. */
static int
digits(int *out, const char **s, int n)
{
	int v = 0, i;

	for (i = 0; i < n; i++) {
		if (!text_is_digit((unsigned char)(*s)[i]))
			return -1;
		v = v * 10 + ((*s)[i] - '0');
	}
	*s += n;
	*out = v;
	return 0;
}

/* Days from 1970-01-01 to y-m-d of the proleptic Gregorian calendar. */
static int64_t
days_from_civil(int y, int m, int d)
{
	int64_t era, yoe, doy, doe;

	y -= m <= 2;
	era = y / 400;
	yoe = y - era * 400;
	doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

static int
month_days(int y, int m)
{
	static const int days[] = {
	    31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
	bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;

	return m == 2 && leap ? 29 : days[m - 1];
}

/* "Z", or "+HH:MM" / "-HH:MM" as minutes east of UTC, at the end. */
static int
zone(int *east, const char *s)
{
	int h, m, sign;

	if ((s[0] == 'Z' || s[0] == 'z') && s[1] == '\0') {
		*east = 0;
		return 0;
	}
	if (s[0] != '+' && s[0] != '-')
		return -1;
	sign = s[0] == '-' ? -1 : 1;
	s++;
	if (digits(&h, &s, 2) < 0 || *s++ != ':' || digits(&m, &s, 2) < 0 ||
	    *s != '\0' || h > 23 || m > 59)
		return -1;
	*east = sign * (h * 60 + m);
	return 0;
}

/* An RFC 3339 date-time's fields as written, before any check of
 * their ranges. */
struct civil {
	int y, mo, d, h, mi, sec;
	int frac; /* milliseconds */
};

/* "YYYY-MM-DDTHH:MM:SS" at *s into t, moving *s past it. */
static int
date_time(struct civil *t, const char **s)
{
	if (digits(&t->y, s, 4) < 0 || *(*s)++ != '-' ||
	    digits(&t->mo, s, 2) < 0 || *(*s)++ != '-' ||
	    digits(&t->d, s, 2) < 0 || (**s != 'T' && **s != 't'))
		return -1;
	(*s)++;
	if (digits(&t->h, s, 2) < 0 || *(*s)++ != ':' ||
	    digits(&t->mi, s, 2) < 0 || *(*s)++ != ':' ||
	    digits(&t->sec, s, 2) < 0)
		return -1;
	return 0;
}

/* ".fff" at *s (any number of digits, milliseconds kept) into *frac,
 * moving *s past it; nothing there is 0. */
static int
fraction(int *frac, const char **s)
{
	int scale = 100;

	*frac = 0;
	if (**s != '.')
		return 0;
	if (!text_is_digit((unsigned char)*++*s))
		return -1;
	for (; text_is_digit((unsigned char)**s); (*s)++) {
		*frac += (**s - '0') * scale;
		scale /= 10;
	}
	return 0;
}

/* Are t's fields a date and time of the calendar (a leap second
 * allowed), from 1970 on? */
static bool
civil_ok(const struct civil *t)
{
	return t->y >= 1970 && t->mo >= 1 && t->mo <= 12 && t->d >= 1 &&
	    t->d <= month_days(t->y, t->mo) && t->h <= 23 && t->mi <= 59 &&
	    t->sec <= 60;
}

int
failure_time_parse(int64_t *ms, const char *s)
{
	struct civil c;
	int east = 0;
	int64_t t;

	if (s == NULL || date_time(&c, &s) < 0 || fraction(&c.frac, &s) < 0)
		return -1;
	if (zone(&east, s) < 0 || !civil_ok(&c))
		return -1;
	t = ((days_from_civil(c.y, c.mo, c.d) * 24 + c.h) * 60 + c.mi) * 60 +
	    c.sec;
	t = (t - (int64_t)east * 60) * 1000 + c.frac;
	/* after 1970 and before the year 10000, read in UTC: a leap second
	 * or an offset must not carry 9999-12-31 into a year no RFC 3339
	 * date-time can show (docs/api.md#the-body-of-a-post) */
	if (t <= 0 || t >= FAILURE_TIME_END_MS)
		return -1;
	*ms = t;
	return 0;
}
