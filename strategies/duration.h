/*
 * duration.h - a duration as people read it ("850ms", "4.5s", "3m05s",
 * "2h10m"), for reasons, printed lines and tables.  Pure.
 */
#ifndef STORYCTL_DURATION_H
#define STORYCTL_DURATION_H

#include <stddef.h>
#include <stdint.h>

/* Format ms (negative counts as 0) into buf (len bytes, always
 * NUL-terminated when len > 0). */
void duration_fmt(char *buf, size_t len, int64_t ms);

#endif
