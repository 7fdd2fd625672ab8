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

/* Whether the JSON text s[0..n) nests at most max_depth deep (strings
 * skipped), checked before jansson parses it so that a hostile line
 * cannot recurse the parser deep. */
bool text_json_depth_ok(const char *s, size_t n, int max_depth);

#endif
