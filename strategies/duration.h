/*
 * duration.h - a duration as people read it ("850ms", "4.5s", "3m05s",
 * "2h10m"), for reasons, printed lines and tables, and one typed on a
 * command line.  Pure.
 */
#ifndef STORYCTL_DURATION_H
#define STORYCTL_DURATION_H

#include <stddef.h>
#include <stdint.h>

/* Format ms (negative counts as 0) into buf (len bytes, always
 * NUL-terminated when len > 0). */
void duration_fmt(char *buf, size_t len, int64_t ms);

/* Read a duration as people type it on a command line: one or more
 * whole numbers each followed by a unit, ms, s, m, h or d ("30m", "2h",
 * "1h30m", "90s"), into *out_ms.  Returns 0, or -1 (and *out_ms = 0)
 * for anything else: no unit, an unknown unit, a sign, a fraction, an
 * empty string or more than 100 years (`storyctl log --since`,
 * docs/commands.md#log). */
int duration_parse(int64_t *out_ms, const char *s);

#endif
