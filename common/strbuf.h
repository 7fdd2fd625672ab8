/*
 * strbuf.h - a growable string, for text that is built a piece at a time
 * (an argument with its placeholders expanded, redacted output, a
 * message of unknown length), after git's strbuf.h
 * (docs/design.md#conventions).
 *
 * buf is always NUL-terminated (an empty strbuf's buf is "", never
 * NULL, without allocating).  Running out of memory does not end the
 * program, as git's does: the strbuf keeps what it had, says so in oom,
 * and every later add does nothing, so a caller that builds in many
 * steps checks once at the end.  A fixed char[] stays right for text
 * whose bound is a rule (an id of under 128 bytes); text without one is
 * built here, so that nothing is cut silently.
 */
#ifndef STORYCTL_STRBUF_H
#define STORYCTL_STRBUF_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

struct strbuf {
	char *buf; /* len bytes and a NUL */
	size_t len;
	size_t alloc; /* 0 while buf is the shared "" */
	bool oom; /* an add ran out of memory: buf is what came before */
};

extern char strbuf_empty[];
#define STRBUF_INIT \
	{ \
		strbuf_empty, 0, 0, false \
	}

void strbuf_init(struct strbuf *sb);
/* Free the text and make sb empty again (NULL ok). */
void strbuf_release(struct strbuf *sb);
/* The text, the caller's to free(); sb is empty again.  NULL when sb
 * ran out of memory (its text is freed). */
char *strbuf_detach(struct strbuf *sb, size_t *len);
/* Keep the first len bytes. */
void strbuf_setlen(struct strbuf *sb, size_t len);

/* Room for extra more bytes; 0, or -1 (oom set) when there is none. */
int strbuf_grow(struct strbuf *sb, size_t extra);
/* Append; each returns 0, or -1 when sb is out of memory. */
int strbuf_add(struct strbuf *sb, const void *data, size_t len);
int strbuf_addstr(struct strbuf *sb, const char *s);
int strbuf_addch(struct strbuf *sb, char c);
int strbuf_addf(struct strbuf *sb, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
int strbuf_vaddf(struct strbuf *sb, const char *fmt, va_list ap)
    __attribute__((format(printf, 2, 0)));

#endif
