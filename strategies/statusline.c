/* statusline.c - see statusline.h (docs/commands.md#the-live-status-line). */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "strategies/duration.h"
#include "strategies/statusline.h"
#include "strategies/text.h"

#define BOLD "\033[1m"
#define PLAIN "\033[0m"
#define SEP " \xc2\xb7 " /* " · " */
#define ELLIPSIS "\xe2\x80\xa6" /* "…", one column */
/* an id is never shortened below this many columns (ellipsis included)
 * before items are left out for "+k more" */
#define ID_MIN 8
/* the cleaned copy of an id, role or agent name */
#define NAME_MAX_BYTES 256

/* A bounded string under construction; over: something did not fit. */
struct sb {
	char *p;
	size_t cap, len;
	bool over;
};

static void
sb_reset(struct sb *b)
{
	b->len = 0;
	b->over = false;
	b->p[0] = '\0';
}

static void
sb_put(struct sb *b, const char *s)
{
	size_t n = strlen(s);

	if (b->len + n >= b->cap) {
		b->over = true;
		return;
	}
	memcpy(b->p + b->len, s, n + 1);
	b->len += n;
}

static void sb_fmt(struct sb *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void
sb_fmt(struct sb *b, const char *fmt, ...)
{
	char tmp[NAME_MAX_BYTES * 2];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(tmp))
		b->over = true;
	else
		sb_put(b, tmp);
}

/* The code point of the well-formed UTF-8 character s[0..len). */
static unsigned long
utf8_cp(const unsigned char *s, size_t len)
{
	unsigned long cp;
	size_t i;

	if (len == 1)
		return s[0];
	cp = s[0] & (0x7f >> len);
	for (i = 1; i < len; i++)
		cp = (cp << 6) | (s[i] & 0x3f);
	return cp;
}

/* Columns of code point cp.  The wide blocks are taken coarsely (whole
 * emoji and symbol blocks count 2): a character counted wider than the
 * terminal draws it only leaves a column free, never wraps the line. */
static size_t
cp_width(unsigned long cp)
{
	static const unsigned long wide[][2] = {
	    {0x1100, 0x115f},
	    {0x231a, 0x231b},
	    {0x2329, 0x232a},
	    {0x23e9, 0x23f3},
	    {0x25fd, 0x25fe},
	    {0x2600, 0x27bf},
	    {0x2b1b, 0x2b1c},
	    {0x2b50, 0x2b55},
	    {0x2e80, 0xa4cf},
	    {0xa960, 0xa97f},
	    {0xac00, 0xd7a3},
	    {0xf900, 0xfaff},
	    {0xfe10, 0xfe19},
	    {0xfe30, 0xfe6f},
	    {0xff00, 0xff60},
	    {0xffe0, 0xffe6},
	    {0x16fe0, 0x18cff},
	    {0x1b000, 0x1b2ff},
	    {0x1f000, 0x1faff},
	    {0x20000, 0x3fffd},
	};
	size_t i;

	for (i = 0; i < sizeof(wide) / sizeof(wide[0]); i++)
		if (cp >= wide[i][0] && cp <= wide[i][1])
			return 2;
	return 1;
}

/* Bytes of the unit at s (an escape, a character or a stray byte), and
 * its columns in *w. */
static size_t
unit_len(const unsigned char *s, size_t n, size_t *w)
{
	size_t len;

	if (s[0] == 0x1b) {
		*w = 0;
		return text_esc_len(s, n);
	}
	len = text_utf8_len(s, n);
	if (len == 0) {
		*w = 1;
		return 1;
	}
	*w = cp_width(utf8_cp(s, len));
	return len;
}

size_t
statusline_width(const char *s)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t n = strlen(s), i = 0, cols = 0, w, len;

	while (i < n) {
		len = unit_len(u + i, n - i, &w);
		cols += w;
		i += len;
	}
	return cols;
}

/* Append the first characters of s that take at most cols columns
 * (escapes pass); *cut tells whether some were left out. */
static void
put_cols(struct sb *b, const char *s, size_t cols, bool *cut)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t n = strlen(s), i = 0, used = 0, w, len;

	*cut = false;
	while (i < n) {
		len = unit_len(u + i, n - i, &w);
		if (used + w > cols) {
			*cut = true;
			break;
		}
		if (b->len + len >= b->cap) {
			b->over = true;
			return;
		}
		memcpy(b->p + b->len, u + i, len);
		b->len += len;
		b->p[b->len] = '\0';
		used += w;
		i += len;
	}
}

/* Append id (bold on request), shortened to max columns with an
 * ellipsis when it is longer; max 0: whole. */
static void
put_id(struct sb *b, const char *id, size_t max, bool bold)
{
	bool cut;

	if (bold)
		sb_put(b, BOLD);
	if (max == 0 || statusline_width(id) <= max) {
		sb_put(b, id);
	} else {
		put_cols(b, id, max > 1 ? max - 1 : 0, &cut);
		sb_put(b, ELLIPSIS);
	}
	if (bold)
		sb_put(b, PLAIN);
}

/* The slots with their names cleaned, for one build. */
struct clean {
	char id[NAME_MAX_BYTES], role[NAME_MAX_BYTES], agent[NAME_MAX_BYTES];
};

static void
clean_name(char *dst, const char *src)
{
	bool cut;

	if (src == NULL)
		src = "";
	text_clean(dst, NAME_MAX_BYTES, src, strlen(src),
	    TEXT_COLLAPSE | TEXT_MARK_INVALID | TEXT_TRIM, &cut);
	/* a tab's width depends on the column: a space instead */
	for (; *dst != '\0'; dst++)
		if (*dst == '\t')
			*dst = ' ';
}

/* Level 0: every field in words; 1: compact with the elapsed time; 2:
 * the attempt and the tasks only (docs/commands.md#the-live-status-line). */
static void
put_item(struct sb *b, const struct statusline_in *in,
    const struct statusline_slot *sl, const struct clean *c, int level,
    size_t idmax)
{
	char el[32];

	duration_fmt(el, sizeof(el), sl->ms);
	put_id(b, c->id, idmax, in->bold);
	if (sl->waiting) {
		if (level == 0)
			sb_fmt(b, " next attempt %d in %s", sl->attempt, el);
		else
			sb_fmt(b, " a%d in %s", sl->attempt, el);
	} else if (level == 0) {
		sb_fmt(b, " attempt %d/%d %s (%s) %d/%d tasks %s", sl->attempt,
		    sl->max_attempts, c->role, c->agent, sl->tasks_completed,
		    sl->tasks_total, el);
	} else if (level == 1) {
		sb_fmt(b, " a%d/%d %d/%d %s", sl->attempt, sl->max_attempts,
		    sl->tasks_completed, sl->tasks_total, el);
	} else {
		sb_fmt(b, " a%d %d/%d", sl->attempt, sl->tasks_completed,
		    sl->tasks_total);
	}
}

/* "[2 running, 1 waiting, breaker cooldown 20s]" */
static void
put_head(struct sb *b, const struct statusline_in *in)
{
	size_t i, run = 0, wait = 0;
	const char *sep = "";
	char el[32];

	for (i = 0; i < in->nslots; i++) {
		if (in->slots[i].waiting)
			wait++;
		else
			run++;
	}
	sb_put(b, "[");
	if (run > 0) {
		sb_fmt(b, "%zu running", run);
		sep = ", ";
	}
	if (wait > 0) {
		sb_fmt(b, "%s%zu waiting", sep, wait);
		sep = ", ";
	}
	if (in->cooldown_ms > 0) {
		duration_fmt(el, sizeof(el), in->cooldown_ms);
		sb_fmt(b, "%sbreaker cooldown %s", sep, el);
	}
	sb_put(b, "]");
}

/* Render the line with the first shown items at level, ids at most
 * idmax columns; whether it fits the budget. */
static bool
render(struct sb *b, const struct statusline_in *in, const struct clean *c,
    int level, size_t idmax, size_t shown, size_t budget)
{
	size_t i;

	sb_reset(b);
	put_head(b, in);
	for (i = 0; i < shown; i++) {
		sb_put(b, i == 0 ? " " : SEP);
		put_item(b, in, &in->slots[i], &c[i], level, idmax);
	}
	if (shown < in->nslots)
		sb_fmt(b, "%s+%zu more", shown == 0 ? " " : SEP,
		    in->nslots - shown);
	return !b->over && statusline_width(b->p) <= budget;
}

/* The most slots one line names; the rest are "+k more". */
#define SLOTS_MAX 64

void
statusline_build(char *buf, size_t size, const struct statusline_in *in)
{
	struct clean c[SLOTS_MAX];
	char tmp[STATUSLINE_BUF];
	struct sb b = {tmp, sizeof(tmp), 0, false};
	struct sb out = {buf, size, 0, false};
	struct statusline_in v = *in;
	size_t budget, i, idlong = 0, idmax, shown;
	int level;
	bool cut;

	buf[0] = '\0';
	if (v.width < 2 || (v.nslots == 0 && v.cooldown_ms <= 0))
		goto out;
	budget = (size_t)v.width - 1;
	if (v.nslots > SLOTS_MAX)
		v.nslots = SLOTS_MAX;
	for (i = 0; i < v.nslots; i++) {
		clean_name(c[i].id, v.slots[i].id);
		clean_name(c[i].role, v.slots[i].role);
		clean_name(c[i].agent, v.slots[i].agent);
		if (statusline_width(c[i].id) > idlong)
			idlong = statusline_width(c[i].id);
	}
	for (level = 0; level <= 2; level++)
		if (render(&b, &v, c, level, 0, v.nslots, budget))
			goto fits;
	for (idmax = idlong; idmax-- > ID_MIN;)
		if (render(&b, &v, c, 2, idmax, v.nslots, budget))
			goto fits;
	for (shown = v.nslots; shown-- > 0;)
		if (render(&b, &v, c, 2, ID_MIN, shown, budget))
			goto fits;
	/* not even the head fits: cut it */
	render(&b, &v, c, 2, ID_MIN, 0, budget);
	put_cols(&out, b.p, budget - 1, &cut);
	if (cut)
		sb_put(&out, ELLIPSIS);
	if (v.bold)
		sb_put(&out, PLAIN);
	goto out;
fits:
	put_cols(&out, b.p, budget, &cut);
out:
	return;
}
