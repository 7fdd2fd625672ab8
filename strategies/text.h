/*
 * text.h - byte-level text helpers (pure), the one home for them: ASCII
 * classes and case folding that do not depend on the locale (the
 * <ctype.h> ones do), case-insensitive search, trimming, UTF-8 and
 * terminal escapes, and the one cleaner of agent text.
 */
#ifndef STORYCTL_TEXT_H
#define STORYCTL_TEXT_H

#include <stdbool.h>
#include <stddef.h>

/* ASCII only, whatever the locale: bytes >= 0x80 are none of these. */
static inline int
text_lower(int c)
{
	return c >= 'A' && c <= 'Z' ? c + ('a' - 'A') : c;
}

static inline bool
text_is_digit(int c)
{
	return c >= '0' && c <= '9';
}

static inline bool
text_is_alpha(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static inline bool
text_is_alnum(int c)
{
	return text_is_alpha(c) || text_is_digit(c);
}

/* [A-Za-z0-9_]: what a word match must not touch */
static inline bool
text_is_ident(int c)
{
	return text_is_alnum(c) || c == '_';
}

/* space, tab, newline, carriage return, vertical tab, form feed */
static inline bool
text_is_space(int c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' ||
	    c == '\f';
}

/* space or tab: the blanks inside a line */
static inline bool
text_is_blank(int c)
{
	return c == ' ' || c == '\t';
}

/* a UTF-8 continuation byte (10xxxxxx) */
static inline bool
text_utf8_cont(int c)
{
	return (c & 0xc0) == 0x80;
}

/* Drop text_is_space() bytes from both ends of (*s, *n). */
void text_trim(const char **s, size_t *n);

/* Whether s[0..n) equals the first n bytes of the lowercase w, ignoring
 * the case of s (w must have n bytes). */
bool text_ci_eq(const char *s, const char *w, size_t n);

/* Offset of the first occurrence of the lowercase needle in s[0..n) at
 * or after from, ignoring case, or n when there is none.  word: the
 * match must not touch a text_is_ident() byte on either side. */
size_t text_ci_find(
    const char *s, size_t n, size_t from, const char *needle, bool word);

/* text_ci_find() from 0 found something. */
bool text_ci_has(const char *s, size_t n, const char *needle, bool word);

/* Whether pat (any case; NULL or "" never matches) occurs in s[0..n),
 * ignoring case on both sides. */
bool text_ci_contains(const char *s, size_t n, const char *pat);

/* Length of the well-formed UTF-8 character at s[0..n) (1..4), or 0
 * when the bytes there are not one (overlong, surrogate, cut off). */
size_t text_utf8_len(const unsigned char *s, size_t n);

/* Length of the terminal escape sequence (ECMA-48) that starts with the
 * ESC at s: CSI "ESC [ params intermediates final", a control string
 * (OSC, DCS, SOS, PM, APC) up to BEL or ST, or a short nF/Fp/Fe/Fs
 * escape.  A sequence cut off by the end of the input ends there. */
size_t text_esc_len(const unsigned char *s, size_t n);

/* text_clean() flags */
enum {
	TEXT_KEEP_NL = 1, /* keep newlines (else they are controls) */
	TEXT_SPACES = 2, /* a control or escape becomes a space, not nothing */
	TEXT_COLLAPSE = 4, /* runs of spaces and controls become one space,
			    * none at the start (implies TEXT_SPACES) */
	TEXT_MARK_INVALID = 8, /* a byte that is not UTF-8 becomes '?' */
	TEXT_TRIM = 16, /* no blanks at the start or the end */
};

/*
 * The one cleaner of agent text before it is stored or shown
 * (docs/reliability.md "control characters"): copy the visible text of
 * src[0..n) to dst (at most cap - 1 bytes and a NUL; cap > 0).  Escape
 * sequences (text_esc_len), C0 controls other than tab (and newline
 * with TEXT_KEEP_NL), DEL, the C1 controls U+0080..U+009F, the bidi
 * controls and the invisible format characters (U+202E, U+200B,
 * U+FEFF, ...; docs/reliability.md) are dropped (or
 * spaced, see the flags); a byte that is not well-formed
 * UTF-8 is dropped (or '?').  Only whole characters are copied.  *cut
 * (may be NULL) tells whether visible text was left out for want of
 * room.  Returns the length written.
 */
size_t text_clean(char *dst, size_t cap, const char *src, size_t n,
    unsigned flags, bool *cut);

/* The length of the longest prefix of s[0..n) of at most max bytes that
 * ends at a character boundary (s valid UTF-8). */
size_t text_utf8_fit(const char *s, size_t n, size_t max);

/* The text of a fixed field of the record (a reason, an error message:
 * docs/state.md#text-fields) from src: copied whole when it fits in
 * cap - 1 bytes; otherwise cut at a character boundary and ended with
 * "…", so that a cut is never silent.  cap >= 4.  Returns the length
 * written. */
size_t text_copy(char *dst, size_t cap, const char *src);

/* dst, of len bytes written into cap by a copy that left text out (as
 * text_clean() says with *cut): its end replaced by "…" at a character
 * boundary.  Returns the new length. */
size_t text_mark_cut(char *dst, size_t cap, size_t len);

/* Whether the JSON text s[0..n) nests at most max_depth deep (strings
 * skipped), checked before jansson parses it so that a hostile line
 * cannot recurse the parser deep. */
bool text_json_depth_ok(const char *s, size_t n, int max_depth);

#endif
