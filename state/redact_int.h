/*
 * redact_int.h - what redact.c (the patterns, the one pass over a text)
 * and redact_values.c (the values) share; not an interface.
 */
#ifndef STORYCTL_REDACT_INT_H
#define STORYCTL_REDACT_INT_H

#include <stddef.h>

#include "state/redact.h"

/* A growing output buffer; oom set once an allocation failed (then
 * everything after is dropped and the caller gives up). */
struct rbuf {
	char *p;
	size_t n;
	size_t alloc;
	int oom;
};

/* A "word" character: what provider keys and key names are made of
 * ([A-Za-z0-9_-]). */
int redact_is_word(unsigned char c);

/* Does s[0..n) end with the lower-case suffix p, ignoring case?  Is it
 * p, ignoring case? */
int redact_has_suffix_ci(const char *s, size_t n, const char *p);
int redact_equals_ci(const char *s, size_t n, const char *p);

/* Append s[0..len) to b. */
void redact_rbuf_put(struct rbuf *b, const char *s, size_t len);

/* Every value of rv in s[0..len) replaced by its mark "[REDACTED
 * NAME]", into b; *steps gets the automaton's moves (at most 2 * len). */
void redact_values_pass(struct rbuf *b, const struct redact_values *rv,
    const char *s, size_t len, size_t *steps);

#endif
