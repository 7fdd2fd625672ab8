/* text.c - see text.h. */
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "strategies/text.h"

void
text_trim(const char **s, size_t *n)
{
	while (*n > 0 && text_is_space((unsigned char)(*s)[0])) {
		(*s)++;
		(*n)--;
	}
	while (*n > 0 && text_is_space((unsigned char)(*s)[*n - 1]))
		(*n)--;
}

bool
text_ci_eq(const char *s, const char *w, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (text_lower((unsigned char)s[i]) != w[i])
			return false;
	return true;
}

size_t
text_ci_find(
    const char *s, size_t n, size_t from, const char *needle, bool word)
{
	size_t m = strlen(needle), i;

	if (m == 0 || m > n)
		return n;
	for (i = from; i + m <= n; i++) {
		if (text_lower((unsigned char)s[i]) != needle[0] ||
		    !text_ci_eq(s + i, needle, m))
			continue;
		if (word &&
		    ((i > 0 && text_is_ident((unsigned char)s[i - 1])) ||
			(i + m < n && text_is_ident((unsigned char)s[i + m]))))
			continue;
		return i;
	}
	return n;
}

bool
text_ci_has(const char *s, size_t n, const char *needle, bool word)
{
	return text_ci_find(s, n, 0, needle, word) < n;
}

bool
text_ci_contains(const char *s, size_t n, const char *pat)
{
	size_t m, i, k;

	if (pat == NULL || (m = strlen(pat)) == 0 || m > n)
		return false;
	for (i = 0; i + m <= n; i++) {
		for (k = 0; k < m; k++)
			if (text_lower((unsigned char)s[i + k]) !=
			    text_lower((unsigned char)pat[k]))
				break;
		if (k == m)
			return true;
	}
	return false;
}

size_t
text_utf8_len(const unsigned char *s, size_t n)
{
	unsigned char c = s[0], lo = 0x80, hi = 0xbf;
	size_t k, i;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf) {
		k = 2;
	} else if (c >= 0xe0 && c <= 0xef) {
		k = 3;
		if (c == 0xe0)
			lo = 0xa0;
		else if (c == 0xed)
			hi = 0x9f;
	} else if (c >= 0xf0 && c <= 0xf4) {
		k = 4;
		if (c == 0xf0)
			lo = 0x90;
		else if (c == 0xf4)
			hi = 0x8f;
	} else {
		return 0;
	}
	if (n < k || s[1] < lo || s[1] > hi)
		return 0;
	for (i = 2; i < k; i++)
		if (!text_utf8_cont(s[i]))
			return 0;
	return k;
}

/* text_esc_len() of a CSI: "ESC [", parameter bytes, intermediate
 * bytes, one final byte. */
static size_t
esc_csi_len(const unsigned char *s, size_t n)
{
	size_t i = 2;

	while (i < n && s[i] >= 0x30 && s[i] <= 0x3f)
		i++;
	while (i < n && s[i] >= 0x20 && s[i] <= 0x2f)
		i++;
	if (i < n && s[i] >= 0x40 && s[i] <= 0x7e)
		i++;
	return i;
}

/* text_esc_len() of a control string (OSC, DCS, SOS, PM, APC): up to
 * BEL or ST; one never ended stops before a newline, which stays. */
static size_t
esc_string_len(const unsigned char *s, size_t n)
{
	size_t i;

	for (i = 2; i < n; i++) {
		if (s[i] == 0x07)
			return i + 1;
		if (s[i] == 0x1b)
			return i + 1 < n && s[i + 1] == '\\' ? i + 2 : i;
		if (s[i] == '\n')
			return i;
	}
	return n;
}

/* text_esc_len() of a short nF/Fp/Fe/Fs escape: intermediate bytes,
 * one final byte. */
static size_t
esc_other_len(const unsigned char *s, size_t n)
{
	size_t i = 1;

	while (i < n && s[i] >= 0x20 && s[i] <= 0x2f)
		i++;
	if (i < n && s[i] >= 0x30 && s[i] <= 0x7e)
		i++;
	return i;
}

size_t
text_esc_len(const unsigned char *s, size_t n)
{
	if (n < 2)
		return n;
	switch (s[1]) {
	case '[':
		return esc_csi_len(s, n);
	case ']':
	case 'P':
	case 'X':
	case '^':
	case '_':
		return esc_string_len(s, n);
	default:
		return esc_other_len(s, n);
	}
}

bool
text_json_depth_ok(const char *s, size_t n, int max_depth)
{
	bool str = false, esc = false;
	size_t i;
	int d = 0;

	for (i = 0; i < n; i++) {
		if (str) {
			if (esc)
				esc = false;
			else if (s[i] == '\\')
				esc = true;
			else if (s[i] == '"')
				str = false;
		} else if (s[i] == '"') {
			str = true;
		} else if (s[i] == '{' || s[i] == '[') {
			if (++d > max_depth)
				return false;
		} else if (s[i] == '}' || s[i] == ']') {
			d--;
		}
	}
	return true;
}

/*
 * The invisible format characters text_clean() drops
 * (docs/reliability.md, "control characters"): the bidi controls that
 * reorder what a terminal shows (U+202A..U+202E, U+2066..U+2069,
 * U+200E, U+200F, U+061C), and the invisible ones that hide or split a
 * word (U+200B, U+2060..U+2064, U+FEFF, U+00AD, U+180E).  The joiners
 * U+200C and U+200D stay: emoji and several scripts need them.  Their
 * length in bytes, 0 when s does not start with one.
 */
static size_t
text_invisible_len(const unsigned char *s, size_t n)
{
	/* their UTF-8: the leading bytes, then a range of the last */
	static const struct {
		unsigned char len, b0, b1, lo, hi;
	} inv[] = {
	    {2, 0xd8, 0, 0x9c, 0x9c}, /* U+061C */
	    {2, 0xc2, 0, 0xad, 0xad}, /* U+00AD */
	    {3, 0xe2, 0x80, 0x8b, 0x8b}, /* U+200B */
	    {3, 0xe2, 0x80, 0x8e, 0x8f}, /* U+200E, U+200F */
	    {3, 0xe2, 0x80, 0xaa, 0xae}, /* U+202A..U+202E */
	    {3, 0xe2, 0x81, 0xa0, 0xa4}, /* U+2060..U+2064 */
	    {3, 0xe2, 0x81, 0xa6, 0xa9}, /* U+2066..U+2069 */
	    {3, 0xef, 0xbb, 0xbf, 0xbf}, /* U+FEFF */
	    {3, 0xe1, 0xa0, 0x8e, 0x8e}, /* U+180E */
	};
	size_t i, k;

	for (i = 0; i < sizeof(inv) / sizeof(inv[0]); i++) {
		k = inv[i].len;
		if (n >= k && s[0] == inv[i].b0 &&
		    (k == 2 || s[1] == inv[i].b1) && s[k - 1] >= inv[i].lo &&
		    s[k - 1] <= inv[i].hi)
			return k;
	}
	return 0;
}

/* How many bytes at s[0..n) are one control (or escape sequence) that
 * text_clean() drops, 0 when s starts with a visible character. */
static size_t
text_control_len(const unsigned char *s, size_t n, unsigned flags)
{
	if (s[0] == 0x1b)
		return text_esc_len(s, n);
	if ((s[0] < 0x20 && s[0] != '\t' &&
		!((flags & TEXT_KEEP_NL) && s[0] == '\n')) ||
	    s[0] == 0x7f)
		return 1;
	/* C1 in UTF-8: U+0080..U+009F (e.g. C2 9B, the one-byte CSI) */
	if (n >= 2 && s[0] == 0xc2 && s[1] >= 0x80 && s[1] < 0xa0)
		return 2;
	return 0;
}

/* text_clean()'s output so far. */
struct clean_out {
	char *dst;
	size_t cap;
	size_t o; /* bytes in dst */
	bool gap; /* a collapsed run of spaces is due before the next */
};

/* A dropped control (or a space when collapsing): a space in its place
 * (TEXT_SPACES), or one space for the run (TEXT_COLLAPSE).  -1 when dst
 * is full. */
static int
clean_gap(struct clean_out *c, bool spaces, bool collapse)
{
	if (spaces && !collapse) {
		if (c->o + 1 >= c->cap)
			return -1;
		c->dst[c->o++] = ' ';
	}
	c->gap = collapse;
	return 0;
}

/* The k bytes of one visible character at put, after the space of a
 * gap.  -1 when dst is full. */
static int
clean_put(struct clean_out *c, const char *put, size_t k, unsigned flags)
{
	if ((flags & TEXT_TRIM) && c->o == 0 && k == 1 &&
	    text_is_blank((unsigned char)put[0]))
		return 0;
	if (c->gap && c->o > 0) {
		if (c->o + 1 >= c->cap)
			return -1;
		c->dst[c->o++] = ' ';
	}
	c->gap = false;
	if (c->o + k >= c->cap)
		return -1;
	memcpy(c->dst + c->o, put, k);
	c->o += k;
	return 0;
}

size_t
text_clean(
    char *dst, size_t cap, const char *src, size_t n, unsigned flags, bool *cut)
{
	const unsigned char *s = (const unsigned char *)src;
	bool collapse = (flags & TEXT_COLLAPSE) != 0;
	bool spaces = collapse || (flags & TEXT_SPACES) != 0;
	struct clean_out c = {dst, cap, 0, false};
	size_t i = 0, k;
	char mark[1] = {'?'};
	const char *put;

	if (cut != NULL)
		*cut = false;
	while (i < n) {
		/* invisible: dropped, never a space ("in\u200Bvisible" is one
		 * word) */
		if ((k = text_invisible_len(s + i, n - i)) > 0) {
			i += k;
			continue;
		}
		k = text_control_len(s + i, n - i, flags);
		if (k > 0 || (collapse && s[i] == ' ')) {
			i += k > 0 ? k : 1;
			if (clean_gap(&c, spaces, collapse) < 0)
				goto full;
			continue;
		}
		k = text_utf8_len(s + i, n - i);
		put = (const char *)s + i;
		if (k == 0) {
			i++;
			if (!(flags & TEXT_MARK_INVALID))
				continue;
			put = mark;
			k = 1;
		} else {
			i += k;
		}
		if (clean_put(&c, put, k, flags) < 0)
			goto full;
	}
	goto out;
full:
	if (cut != NULL)
		*cut = true;
out:
	if (flags & TEXT_TRIM)
		while (c.o > 0 && text_is_blank((unsigned char)dst[c.o - 1]))
			c.o--;
	dst[c.o] = '\0';
	return c.o;
}

/* The mark ends a cut text (U+2026, three bytes in UTF-8). */
#define CUT_MARK "\xe2\x80\xa6"

size_t
text_mark_cut(char *dst, size_t cap, size_t len)
{
	size_t at = len;

	if (cap < sizeof(CUT_MARK))
		return len;
	if (at > cap - sizeof(CUT_MARK))
		at = cap - sizeof(CUT_MARK);
	while (at > 0 && text_utf8_cont((unsigned char)dst[at]))
		at--;
	memcpy(dst + at, CUT_MARK, sizeof(CUT_MARK));
	return at + sizeof(CUT_MARK) - 1;
}

size_t
text_copy(char *dst, size_t cap, const char *src)
{
	size_t n = strlen(src);

	if (n < cap) {
		memcpy(dst, src, n + 1);
		return n;
	}
	memcpy(dst, src, cap - 1);
	dst[cap - 1] = '\0';
	return text_mark_cut(dst, cap, cap - 1);
}

size_t
text_utf8_fit(const char *s, size_t n, size_t max)
{
	if (n <= max)
		return n;
	while (max > 0 && text_utf8_cont((unsigned char)s[max]))
		max--;
	return max;
}
