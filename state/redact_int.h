/*
 * redact_int.h - what redact.c (the patterns, the one pass over a text)
 * and redact_values.c (the values) share; not an interface.
 */
#ifndef STORYCTL_REDACT_INT_H
#define STORYCTL_REDACT_INT_H

#include <stddef.h>

#include "common/strbuf.h"
#include "state/redact.h"

/* A "word" character: what provider keys and key names are made of
 * ([A-Za-z0-9_-]). */
int redact_is_word(unsigned char c);

/* Does s[0..n) end with the lower-case suffix p, ignoring case?  Is it
 * p, ignoring case? */
int redact_has_suffix_ci(const char *s, size_t n, const char *p);
int redact_equals_ci(const char *s, size_t n, const char *p);

/* Every value of rv in s[0..len) replaced by its mark "[REDACTED
 * NAME]", into b; *steps gets the automaton's moves (at most 2 * len). */
void redact_values_pass(struct strbuf *b, const struct redact_values *rv,
    const char *s, size_t len, size_t *steps);

#endif
