/*
 * text.h - byte-level helpers for reading what agents print (pure):
 * shared by the output parsers (agentout.c, review.c).
 */
#ifndef STORYCTL_TEXT_H
#define STORYCTL_TEXT_H

#include <stdbool.h>
#include <stddef.h>

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
 * with TEXT_KEEP_NL), DEL and the C1 controls U+0080..U+009F are
 * dropped (or spaced, see the flags); a byte that is not well-formed
 * UTF-8 is dropped (or '?').  Only whole characters are copied.  *cut
 * (may be NULL) tells whether visible text was left out for want of
 * room.  Returns the length written.
 */
size_t text_clean(char *dst, size_t cap, const char *src, size_t n,
    unsigned flags, bool *cut);

/* Whether the JSON text s[0..n) nests at most max_depth deep (strings
 * skipped), checked before jansson parses it so that a hostile line
 * cannot recurse the parser deep. */
bool text_json_depth_ok(const char *s, size_t n, int max_depth);

#endif
