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

size_t
text_esc_len(const unsigned char *s, size_t n)
{
	size_t i;

	if (n < 2)
		return n;
	switch (s[1]) {
	case '[':
		i = 2;
		while (i < n && s[i] >= 0x30 && s[i] <= 0x3f)
			i++;
		while (i < n && s[i] >= 0x20 && s[i] <= 0x2f)
			i++;
		if (i < n && s[i] >= 0x40 && s[i] <= 0x7e)
			i++;
		return i;
	case ']':
	case 'P':
	case 'X':
	case '^':
	case '_':
		for (i = 2; i < n; i++) {
			if (s[i] == 0x07)
				return i + 1;
			if (s[i] == 0x1b)
				return i + 1 < n && s[i + 1] == '\\' ? i + 2
								     : i;
			if (s[i] == '\n')
				return i;
		}
		return n;
	default:
		i = 1;
		while (i < n && s[i] >= 0x20 && s[i] <= 0x2f)
			i++;
		if (i < n && s[i] >= 0x30 && s[i] <= 0x7e)
			i++;
		return i;
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
	if (n >= 2 &&
	    ((s[0] == 0xd8 && s[1] == 0x9c) || (s[0] == 0xc2 && s[1] == 0xad)))
		return 2;
	if (n < 3)
		return 0;
	if (s[0] == 0xe2 && s[1] == 0x80 &&
	    (s[2] == 0x8b || s[2] == 0x8e || s[2] == 0x8f ||
		(s[2] >= 0xaa && s[2] <= 0xae)))
		return 3;
	if (s[0] == 0xe2 && s[1] == 0x81 &&
	    ((s[2] >= 0xa0 && s[2] <= 0xa4) || (s[2] >= 0xa6 && s[2] <= 0xa9)))
		return 3;
	if ((s[0] == 0xef && s[1] == 0xbb && s[2] == 0xbf) ||
	    (s[0] == 0xe1 && s[1] == 0xa0 && s[2] == 0x8e))
		return 3;
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

size_t
text_clean(
    char *dst, size_t cap, const char *src, size_t n, unsigned flags, bool *cut)
{
	const unsigned char *s = (const unsigned char *)src;
	bool collapse = (flags & TEXT_COLLAPSE) != 0;
	bool spaces = collapse || (flags & TEXT_SPACES) != 0;
	bool gap = false;
	size_t i = 0, o = 0, k;
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
			if (spaces && !collapse) {
				if (o + 1 >= cap)
					goto full;
				dst[o++] = ' ';
			}
			gap = collapse;
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
		if ((flags & TEXT_TRIM) && o == 0 && k == 1 &&
		    text_is_blank((unsigned char)put[0]))
			continue;
		if (gap && o > 0) {
			if (o + 1 >= cap)
				goto full;
			dst[o++] = ' ';
		}
		gap = false;
		if (o + k >= cap)
			goto full;
		memcpy(dst + o, put, k);
		o += k;
	}
	goto out;
full:
	if (cut != NULL)
		*cut = true;
out:
	if (flags & TEXT_TRIM)
		while (o > 0 && text_is_blank((unsigned char)dst[o - 1]))
			o--;
	dst[o] = '\0';
	return o;
}
