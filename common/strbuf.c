/* strbuf.c - see strbuf.h. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/strbuf.h"

/* The text of every empty strbuf that has not allocated: writable so
 * that buf need not be const, and only ever holding its NUL. */
char strbuf_empty[1];

void
strbuf_init(struct strbuf *sb)
{
	sb->buf = strbuf_empty;
	sb->len = 0;
	sb->alloc = 0;
	sb->oom = false;
}

void
strbuf_release(struct strbuf *sb)
{
	if (sb == NULL)
		return;
	if (sb->alloc > 0)
		free(sb->buf);
	strbuf_init(sb);
}

char *
strbuf_detach(struct strbuf *sb, size_t *len)
{
	char *out = NULL;

	if (len != NULL)
		*len = 0;
	if (sb->oom) {
		strbuf_release(sb);
		return NULL;
	}
	if (sb->alloc == 0)
		out = calloc(1, 1);
	else
		out = sb->buf;
	if (out != NULL && len != NULL)
		*len = sb->len;
	strbuf_init(sb);
	return out;
}

void
strbuf_setlen(struct strbuf *sb, size_t len)
{
	if (len > sb->len)
		return;
	sb->len = len;
	if (sb->alloc > 0)
		sb->buf[len] = '\0';
}

int
strbuf_grow(struct strbuf *sb, size_t extra)
{
	size_t want, n;
	char *p;

	if (sb->oom)
		return -1;
	/* no object may be larger than PTRDIFF_MAX (C11 6.5.6); malloc
	 * refuses more anyway, and the sanitizers abort on asking */
	if (extra > (size_t)PTRDIFF_MAX - sb->len - 1)
		goto oom;
	want = sb->len + extra + 1;
	if (want <= sb->alloc)
		return 0;
	n = sb->alloc > 0 ? sb->alloc : 64;
	while (n < want)
		n = n > (size_t)PTRDIFF_MAX / 2 ? want : n * 2;
	p = realloc(sb->alloc > 0 ? sb->buf : NULL, n);
	if (p == NULL)
		goto oom;
	if (sb->alloc == 0)
		p[0] = '\0';
	sb->buf = p;
	sb->alloc = n;
	return 0;
oom:
	sb->oom = true;
	return -1;
}

int
strbuf_add(struct strbuf *sb, const void *data, size_t len)
{
	if (strbuf_grow(sb, len) < 0)
		return -1;
	if (len > 0)
		memcpy(sb->buf + sb->len, data, len);
	sb->len += len;
	sb->buf[sb->len] = '\0';
	return 0;
}

int
strbuf_addstr(struct strbuf *sb, const char *s)
{
	return strbuf_add(sb, s, strlen(s));
}

int
strbuf_addch(struct strbuf *sb, char c)
{
	return strbuf_add(sb, &c, 1);
}

int
strbuf_vaddf(struct strbuf *sb, const char *fmt, va_list ap)
{
	va_list again;
	int n;

	if (sb->oom)
		return -1;
	va_copy(again, ap);
	n = vsnprintf(NULL, 0, fmt, ap);
	if (n < 0 || strbuf_grow(sb, (size_t)n) < 0) {
		va_end(again);
		sb->oom = true;
		return -1;
	}
	vsnprintf(sb->buf + sb->len, (size_t)n + 1, fmt, again);
	va_end(again);
	sb->len += (size_t)n;
	return 0;
}

int
strbuf_addf(struct strbuf *sb, const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = strbuf_vaddf(sb, fmt, ap);
	va_end(ap);
	return rc;
}
