/*
 * waithint.c - see waithint.h.
 *
 * A small hand-written scanner: at every position of the text it tries
 * the recognisers below in order and keeps the last hint that matched
 * (the newest message in a tail is the one that counts).  Everything is
 * ASCII case-insensitive and works on (pointer, length), so NUL bytes
 * and invalid UTF-8 in the text are harmless.
 */
#include <stdbool.h>
#include <string.h>

#include "strategies/waithint.h"
#include "strategies/text.h"

/* A wait longer than this is nonsense (or an attack on the arithmetic). */
#define WAITHINT_DELAY_MAX_MS ((double)400 * 24 * 3600 * 1000)
/* Numbers with more integer digits than this are not durations. */
#define WAITHINT_NUM_DIGITS_MAX 12

struct unit {
	const char *name;
	double ms;
};

/* Longer spellings first: the first one that matches (and is not followed
 * by a letter) wins, so "ms" is never read as minutes. */
static const struct unit units[] = {
    {"milliseconds", 1},
    {"millisecond", 1},
    {"msecs", 1},
    {"msec", 1},
    {"ms", 1},
    {"seconds", 1000},
    {"second", 1000},
    {"secs", 1000},
    {"sec", 1000},
    {"s", 1000},
    {"minutes", 60000},
    {"minute", 60000},
    {"mins", 60000},
    {"min", 60000},
    {"m", 60000},
    {"hours", 3600000},
    {"hour", 3600000},
    {"hrs", 3600000},
    {"hr", 3600000},
    {"h", 3600000},
    {"days", 86400000},
    {"day", 86400000},
    {"d", 86400000},
};

static const char *const months[12] = {
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
};

static int
at(const char *t, size_t len, size_t p)
{
	return p < len ? (unsigned char)t[p] : 0;
}

/* strlen(w) when t[p..] starts with the lowercase word w, else 0. */
static size_t
ci_at(const char *t, size_t len, size_t p, const char *w)
{
	size_t n = strlen(w), i;

	if (p > len || n > len - p)
		return 0;
	for (i = 0; i < n; i++)
		if (text_lower((unsigned char)t[p + i]) != w[i])
			return 0;
	return n;
}

static size_t
skip_ws(const char *t, size_t len, size_t p)
{
	while (p < len && text_is_space((unsigned char)t[p]))
		p++;
	return p;
}

/* Skip spaces and tabs only (not line ends). */
static size_t
skip_blank(const char *t, size_t len, size_t p)
{
	while (p < len && (t[p] == ' ' || t[p] == '\t'))
		p++;
	return p;
}

/* Skip the punctuation between a key and its value: "Retry-After: 30",
 * "\"retryDelay\": \"30s\"", "'retry-after': '30'", "retry_after=30". */
static size_t
skip_sep(const char *t, size_t len, size_t p)
{
	while (p < len &&
	    (t[p] == ' ' || t[p] == '\t' || t[p] == '"' || t[p] == '\'' ||
		t[p] == ':' || t[p] == '=' || t[p] == '\\'))
		p++;
	return p;
}

/* A decimal number "12" or "4.53" at p.  Returns its end, or p when there
 * is none. */
static size_t
scan_number(const char *t, size_t len, size_t p, double *out)
{
	size_t q = p;
	double v = 0, scale = 1;
	int digits = 0;

	while (q < len && text_is_digit((unsigned char)t[q])) {
		if (++digits > WAITHINT_NUM_DIGITS_MAX)
			return p;
		v = v * 10 + (t[q] - '0');
		q++;
	}
	if (digits == 0)
		return p;
	if (q + 1 < len && t[q] == '.' &&
	    text_is_digit((unsigned char)t[q + 1])) {
		q++;
		while (q < len && text_is_digit((unsigned char)t[q])) {
			scale /= 10;
			v += (t[q] - '0') * scale;
			q++;
		}
	}
	*out = v;
	return q;
}

/* An integer with exactly 10 (seconds) or 13 (milliseconds) digits: a Unix
 * time.  Returns its end, or p. */
static size_t
scan_epoch(const char *t, size_t len, size_t p, int64_t *out)
{
	size_t q = p;
	int64_t v = 0;

	while (q < len && text_is_digit((unsigned char)t[q]) && q - p < 14) {
		v = v * 10 + (t[q] - '0');
		q++;
	}
	if (q < len && text_is_alnum((unsigned char)t[q]))
		return p;
	if (q - p == 13)
		v /= 1000;
	else if (q - p != 10)
		return p;
	*out = v;
	return q;
}

static const struct unit *
unit_at(const char *t, size_t len, size_t p)
{
	size_t i, n;

	for (i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		n = ci_at(t, len, p, units[i].name);
		if (n > 0 && !text_is_alpha(at(t, len, p + n)))
			return &units[i];
	}
	return NULL;
}

static int64_t
clamp_ms(double ms)
{
	if (ms < 0)
		return 0;
	if (ms > WAITHINT_DELAY_MAX_MS)
		ms = WAITHINT_DELAY_MAX_MS;
	return (int64_t)(ms + 0.5);
}

/*
 * A duration at p: "4.53s", "123ms", "8h44m7s", "2 days 3 hours 20
 * minutes", "5 days 22 hours 11\nminutes" (codex wraps its banner), "1
 * hour, 5 minutes", "1 hour and 5 minutes".  A bare number counts as
 * seconds only when unitless_ok and no word follows it.  Returns the end
 * of the duration, or 0 when there is none.
 */
static size_t
scan_duration(
    const char *t, size_t len, size_t p, int64_t *out_ms, bool unitless_ok)
{
	const struct unit *u;
	double total = 0, v = 0;
	size_t q = p, r, num_end, end = 0;
	int count = 0;

	for (;;) {
		r = skip_ws(t, len, q);
		num_end = scan_number(t, len, r, &v);
		if (num_end == r)
			break;
		r = skip_ws(t, len, num_end);
		u = unit_at(t, len, r);
		if (u == NULL) {
			if (count == 0 && unitless_ok &&
			    !text_is_alnum(at(t, len, num_end)) &&
			    !text_is_alpha(at(t, len, r))) {
				total = v * 1000;
				end = num_end;
				count = 1;
			}
			break;
		}
		total += v * u->ms;
		end = r + strlen(u->name);
		count++;
		/* separators between the parts */
		q = skip_ws(t, len, end);
		if (at(t, len, q) == ',')
			q = skip_ws(t, len, q + 1);
		if (ci_at(t, len, q, "and") && text_is_space(at(t, len, q + 3)))
			q += 3;
	}
	if (count == 0)
		return 0;
	*out_ms = clamp_ms(total);
	return end;
}

/* A month name ("Jul", "July", "Sept") at p: returns its end and sets
 * *month (1..12), or returns p. */
static size_t
scan_month(const char *t, size_t len, size_t p, int *month)
{
	size_t q = p, n, k;
	int i;

	while (q < len && text_is_alpha((unsigned char)t[q]))
		q++;
	n = q - p;
	if (n < 3)
		return p;
	if (n == 4 && ci_at(t, len, p, "sept")) {
		*month = 9;
		return q;
	}
	for (i = 0; i < 12; i++) {
		if (n > strlen(months[i]))
			continue;
		for (k = 0; k < n; k++)
			if (text_lower((unsigned char)t[p + k]) != months[i][k])
				break;
		if (k == n) {
			*month = i + 1;
			return q;
		}
	}
	return p;
}

/* The day of a date at q ("7", "23", "5th") into *day, 1 to 31, with
 * no letter or digit after it.  Returns its end, or 0. */
static size_t
scan_day(const char *t, size_t len, size_t q, int *day)
{
	size_t r = q;
	int d = 0;

	while (r < len && text_is_digit((unsigned char)t[r]) && r - q < 3)
		d = d * 10 + (t[r++] - '0');
	if (r == q || r - q > 2 || d < 1 || d > 31)
		return 0;
	if (ci_at(t, len, r, "st") || ci_at(t, len, r, "nd") ||
	    ci_at(t, len, r, "rd") || ci_at(t, len, r, "th"))
		r += 2;
	if (text_is_alnum(at(t, len, r)))
		return 0;
	*day = d;
	return r;
}

/* A year at q: four digits not followed by ':' (that would be a time)
 * or a letter, and a ',' after it.  Returns the end, or q. */
static size_t
skip_year(const char *t, size_t len, size_t q)
{
	size_t r = q;

	while (r < len && text_is_digit((unsigned char)t[r]))
		r++;
	if (r - q != 4 || at(t, len, r) == ':' || text_is_alpha(at(t, len, r)))
		return q;
	if (at(t, len, r) == ',')
		r++;
	return skip_ws(t, len, r);
}

/* "Apr 23", "Feb 7,", "Jul 5th, 2026", optionally followed by "at".
 * Returns the end, or p when there is no date. */
static size_t
scan_date(const char *t, size_t len, size_t p, int *month, int *day)
{
	size_t q;
	int m = 0, d = 0;

	q = scan_month(t, len, p, &m);
	if (q == p)
		return p;
	q = scan_day(t, len, skip_blank(t, len, q), &d);
	if (q == 0)
		return p;
	if (at(t, len, q) == ',')
		q++;
	q = skip_year(t, len, skip_ws(t, len, q));
	if (ci_at(t, len, q, "at") && text_is_space(at(t, len, q + 2)))
		q = skip_ws(t, len, q + 2);
	*month = m;
	*day = d;
	return q;
}

/* Whether s[0..n) is a safe IANA-style zone name: [A-Za-z0-9_+/-] only,
 * no "..", no leading '/', shorter than the zone field. */
static bool
zone_ok(const char *s, size_t n, size_t cap)
{
	size_t i;

	if (n == 0 || n >= cap || s[0] == '/')
		return false;
	for (i = 0; i < n; i++) {
		int c = (unsigned char)s[i];

		if (!text_is_alnum(c) && c != '_' && c != '+' && c != '-' &&
		    c != '/')
			return false;
		/* only the allowed set can appear, so ".." cannot either;
		 * keep the rule explicit in case the set ever grows */
		if (c == '.' && i + 1 < n && s[i + 1] == '.')
			return false;
	}
	return true;
}

/* "3", "13", "3:30", "13:00" at q into *hour and *minute; *colon says
 * whether minutes were given.  Returns the end, or 0. */
static size_t
scan_hour(
    const char *t, size_t len, size_t q, int *hour, int *minute, bool *colon)
{
	int hd = 0;

	*hour = *minute = 0;
	*colon = false;
	while (q < len && text_is_digit((unsigned char)t[q]) && hd < 3) {
		*hour = *hour * 10 + (t[q++] - '0');
		hd++;
	}
	if (hd == 0 || hd > 2)
		return 0;
	if (at(t, len, q) == ':' && text_is_digit(at(t, len, q + 1)) &&
	    text_is_digit(at(t, len, q + 2)) &&
	    !text_is_digit(at(t, len, q + 3))) {
		*minute = (t[q + 1] - '0') * 10 + (t[q + 2] - '0');
		*colon = true;
		q += 3;
	}
	return q;
}

/* "am", "a.m.", "pm", "p.m." at r (blanks before it skipped): *half is
 * 'a', 'p' or 0.  Returns the end of the marker, or r when none. */
static size_t
scan_ampm(const char *t, size_t len, size_t r, int *half)
{
	size_t s = skip_blank(t, len, r);

	*half = 0;
	if (ci_at(t, len, s, "a.m.") || ci_at(t, len, s, "p.m.")) {
		*half = text_lower(at(t, len, s));
		return s + 4;
	}
	if (ci_at(t, len, s, "am") || ci_at(t, len, s, "pm")) {
		*half = text_lower(at(t, len, s));
		return s + 2;
	}
	return r;
}

/* "(Europe/Oslo)" after q into h->zone; anything else in parentheses is
 * not a zone (docs/classification.md#wait-hints).  Returns the end of
 * the zone, or q when there is none. */
static size_t
scan_zone(const char *t, size_t len, size_t q, struct waithint *h)
{
	size_t r, zs;

	h->zone[0] = '\0';
	r = skip_blank(t, len, q);
	if (at(t, len, r) != '(')
		return q;
	zs = r + 1;
	r = zs;
	while (r < len && r - zs < sizeof(h->zone) && t[r] != ')')
		r++;
	if (at(t, len, r) != ')' || !zone_ok(t + zs, r - zs, sizeof(h->zone)))
		return q;
	memcpy(h->zone, t + zs, r - zs);
	h->zone[r - zs] = '\0';
	return r + 1;
}

/* Days from 1970-01-01 to the proleptic Gregorian y-m-d (the civil
 * calendar arithmetic of H. Hinnant's days_from_civil): pure, no tz. */
static int64_t
days_from_civil(int64_t y, int m, int d)
{
	int64_t era, yoe, doy, doe;

	y -= m <= 2;
	era = (y >= 0 ? y : y - 399) / 400;
	yoe = y - era * 400;
	doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

/* n digits at q into *v.  Returns the end, or 0. */
static size_t
scan_digits(const char *t, size_t len, size_t q, size_t n, int *v)
{
	size_t i;

	*v = 0;
	for (i = 0; i < n; i++) {
		if (!text_is_digit(at(t, len, q + i)))
			return 0;
		*v = *v * 10 + (t[q + i] - '0');
	}
	return q + n;
}

/* The fields of an ISO 8601 date and time as scan_iso() reads them. */
struct iso {
	int y, mo, d;
	int hour, minute, sec;
};

/* "2025-06-01" at p (after white space) into v.  Returns the end, or
 * 0. */
static size_t
scan_iso_date(const char *t, size_t len, size_t p, struct iso *v)
{
	size_t q;

	q = skip_ws(t, len, p);
	if ((q = scan_digits(t, len, q, 4, &v->y)) == 0 ||
	    at(t, len, q) != '-' ||
	    (q = scan_digits(t, len, q + 1, 2, &v->mo)) == 0 ||
	    at(t, len, q) != '-' ||
	    (q = scan_digits(t, len, q + 1, 2, &v->d)) == 0)
		return 0;
	if (v->mo < 1 || v->mo > 12 || v->d < 1 || v->d > 31 || v->y < 1970)
		return 0;
	return q;
}

/* The time after the date at q: "T00:00:00", " at 00:00", " 00:00"
 * (seconds optional) into v.  Returns the end, or 0. */
static size_t
scan_iso_time(const char *t, size_t len, size_t q, struct iso *v)
{
	bool colon;

	v->sec = 0;
	if (at(t, len, q) == 'T')
		q++;
	else
		q = skip_ws(t, len, q);
	if (ci_at(t, len, q, "at") && text_is_space(at(t, len, q + 2)))
		q = skip_ws(t, len, q + 2);
	q = scan_hour(t, len, q, &v->hour, &v->minute, &colon);
	if (q == 0 || !colon || v->hour > 23 || v->minute > 59)
		return 0;
	if (at(t, len, q) == ':' && scan_digits(t, len, q + 1, 2, &v->sec) != 0)
		q += 3;
	if (v->sec > 60)
		return 0;
	return q;
}

/*
 * An ISO 8601 date and time at p: "2025-06-01 at 00:00 UTC",
 * "2025-06-01T00:00:00Z", "2025-06-01 00:00 (Europe/Oslo)".  In UTC
 * (UTC, GMT, Z) it is an instant, WAITHINT_EPOCH; with a zone in
 * parentheses or none (local time) it is a dated WAITHINT_CLOCK, which
 * controller/tz.c resolves (docs/classification.md#wait-hints).
 * Returns the end, or 0.
 */
static size_t
scan_iso(const char *t, size_t len, size_t p, struct waithint *h)
{
	struct iso v;
	size_t q, r;

	if ((q = scan_iso_date(t, len, p, &v)) == 0 ||
	    (q = scan_iso_time(t, len, q, &v)) == 0)
		return 0;
	r = skip_blank(t, len, q);
	if (at(t, len, q) == 'Z' || ci_at(t, len, r, "utc") ||
	    ci_at(t, len, r, "gmt")) {
		q = at(t, len, q) == 'Z' ? q + 1 : r + 3;
		if (text_is_alnum(at(t, len, q)))
			return 0;
		h->kind = WAITHINT_EPOCH;
		h->epoch_s = days_from_civil(v.y, v.mo, v.d) * 86400 +
		    v.hour * 3600 + v.minute * 60 + v.sec;
		return q;
	}
	h->kind = WAITHINT_CLOCK;
	h->hour = v.hour;
	h->minute = v.minute;
	h->month = v.mo;
	h->day = v.d;
	return scan_zone(t, len, q, h);
}

/*
 * A wall-clock time at p: "1am", "3:30pm", "3:15 PM", "13:00", optionally
 * "at " first, a date before it ("Apr 23 at 4pm", "Feb 7, 11am") and a
 * zone after it ("(Europe/Oslo)").  A bare "13" is not a time: it needs
 * am/pm or minutes.  Returns the end, or 0.
 */
static size_t
scan_clock(const char *t, size_t len, size_t p, struct waithint *h)
{
	size_t q, r;
	int hour, minute, month = 0, day = 0, half;
	bool colon;

	q = skip_ws(t, len, p);
	if (ci_at(t, len, q, "at") && text_is_space(at(t, len, q + 2)))
		q = skip_ws(t, len, q + 2);
	if ((r = scan_iso(t, len, q, h)) != 0)
		return r;
	q = scan_date(t, len, q, &month, &day);
	q = scan_hour(t, len, q, &hour, &minute, &colon);
	if (q == 0)
		return 0;
	r = scan_ampm(t, len, q, &half);
	if (half != 0) {
		if (text_is_alnum(at(t, len, r)) || hour < 1 || hour > 12)
			return 0;
		hour = hour % 12 + (half == 'p' ? 12 : 0);
		q = r;
	} else if (!colon || hour > 23 || text_is_alnum(at(t, len, q))) {
		return 0;
	}
	if (minute > 59)
		return 0;
	h->kind = WAITHINT_CLOCK;
	h->hour = hour;
	h->minute = minute;
	h->month = month;
	h->day = day;
	return scan_zone(t, len, q, h);
}

/* Phrases followed by a duration.  The first N_RETRYING are a CLI
 * announcing its own next retry ("Retrying after 35606439ms..."): any
 * other hint in the same output, the API's reset, wins over them
 * (docs/classification.md#wait-hints). */
#define N_RETRYING 2
static const char *const delay_phrases[] = {
    "retrying in",
    "retrying after",
    "retry in",
    "retry after",
    "try again in",
    "try again after",
    "reset after",
    "resets after",
    "reset in",
    "resets in",
};

/* Phrases followed by a wall-clock time. */
static const char *const clock_phrases[] = {
    "try again at",
    "will reset at",
    "reset at",
    "resets at",
    "resets",
    /* Anthropic's workspace limit: "You will regain access on
     * 2025-06-01 at 00:00 UTC." */
    "regain access on",
};

/* How the value after a keyed field reads. */
enum field_value {
	FV_MS, /* a number of milliseconds */
	FV_SECONDS, /* a number of seconds */
	FV_DURATION, /* "38.601s" */
	FV_EPOCH /* Unix seconds or milliseconds */
};

/* Keyed fields (headers, JSON keys, claude's banner), in the order they
 * are tried: the first whose name is at p decides, with its value or
 * with nothing (docs/classification.md#wait-hints). */
static const struct {
	const char *name;
	enum field_value value;
	bool sep; /* a ':' or '=' and quotes may follow the name */
} fields[] = {
    /* HTTP headers: Retry-After in seconds (an HTTP-date is skipped),
     * retry-after-ms in milliseconds */
    {"retry-after-ms", FV_MS, true},
    {"retry-after", FV_SECONDS, true},
    {"retry_after", FV_SECONDS, true},
    /* google.rpc.RetryInfo: "retryDelay": "38.601s" */
    {"retrydelay", FV_DURATION, true},
    /* codex backend: "resets_in_seconds":602705, "resets_at":1775317531 */
    {"resets_in_seconds", FV_SECONDS, true},
    {"resets_at", FV_EPOCH, true},
    /* claude: "Claude AI usage limit reached|1755615600" */
    {"limit reached|", FV_EPOCH, false},
};

/* The value of kind v at q into *h.  Returns its end, or 0. */
static size_t
field_read(
    const char *t, size_t len, size_t q, enum field_value v, struct waithint *h)
{
	size_t e;
	double num = 0;
	int64_t ms = 0, epoch = 0;

	if (v == FV_DURATION) {
		e = scan_duration(t, len, q, &ms, true);
		if (e != 0) {
			h->kind = WAITHINT_DELAY;
			h->delay_ms = ms;
		}
		return e;
	}
	if (v == FV_EPOCH) {
		e = scan_epoch(t, len, q, &epoch);
		if (e == q)
			return 0;
		h->kind = WAITHINT_EPOCH;
		h->epoch_s = epoch;
		return e;
	}
	e = scan_number(t, len, q, &num);
	if (e == q || text_is_alnum(at(t, len, e)))
		return 0;
	h->kind = WAITHINT_DELAY;
	h->delay_ms = clamp_ms(v == FV_SECONDS ? num * 1000 : num);
	return e;
}

/* Try every recogniser at p.  Returns the end of the hint, or 0;
 * *retrying says it is a CLI's own retry, not the API's reset. */
static size_t
hint_at(const char *t, size_t len, size_t p, struct waithint *h, bool *retrying)
{
	size_t n, e, i;
	int64_t ms = 0;

	for (i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
		n = ci_at(t, len, p, fields[i].name);
		if (n == 0)
			continue;
		return field_read(t, len,
		    fields[i].sep ? skip_sep(t, len, p + n) : p + n,
		    fields[i].value, h);
	}
	for (i = 0; i < sizeof(delay_phrases) / sizeof(delay_phrases[0]); i++) {
		n = ci_at(t, len, p, delay_phrases[i]);
		if (n == 0 || !text_is_space(at(t, len, p + n)))
			continue;
		e = scan_duration(t, len, p + n, &ms, true);
		if (e != 0) {
			h->kind = WAITHINT_DELAY;
			h->delay_ms = ms;
			*retrying = i < N_RETRYING;
			return e;
		}
	}
	for (i = 0; i < sizeof(clock_phrases) / sizeof(clock_phrases[0]); i++) {
		n = ci_at(t, len, p, clock_phrases[i]);
		if (n == 0 || !text_is_space(at(t, len, p + n)))
			continue;
		e = scan_clock(t, len, p + n, h);
		if (e != 0)
			return e;
	}
	return 0;
}

int
waithint_parse(struct waithint *out, const char *text, size_t len)
{
	struct waithint cur;
	size_t p = 0, e;
	bool retrying, found_retrying = false;
	int found = 0;

	memset(out, 0, sizeof(*out));
	out->kind = WAITHINT_NONE;
	if (text == NULL)
		return 0;
	while (p < len) {
		int c = text_lower((unsigned char)text[p]);

		/* every recogniser starts with one of these letters, and
		 * none starts in the middle of a word */
		if ((c == 'r' || c == 't' || c == 'l' || c == 'w') &&
		    (p == 0 || !text_is_alpha((unsigned char)text[p - 1]))) {
			memset(&cur, 0, sizeof(cur));
			retrying = false;
			e = hint_at(text, len, p, &cur, &retrying);
			if (e > p) {
				/* the last hint, but a CLI's own retry
				 * never hides the API's reset */
				if (!found || !retrying || found_retrying) {
					*out = cur;
					found_retrying = retrying;
				}
				found = 1;
				p = e;
				continue;
			}
		}
		p++;
	}
	return found;
}
