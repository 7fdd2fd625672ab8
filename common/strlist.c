/* strlist.c - see strlist.h. */
#include <stdlib.h>
#include <string.h>

#include "common/strlist.h"

int
strlist_pushn(struct strlist *l, const char *s, size_t len)
{
	char *copy = NULL;
	char **grown = NULL;
	size_t want;

	if (l->n + 2 > l->alloc) {
		want = l->alloc ? l->alloc * 2 : 8;
		grown = realloc(l->items, want * sizeof(*grown));
		if (grown == NULL)
			return -1;
		l->items = grown;
		l->alloc = want;
	}
	copy = malloc(len + 1);
	if (copy == NULL)
		return -1;
	memcpy(copy, s, len);
	copy[len] = '\0';
	l->items[l->n++] = copy;
	l->items[l->n] = NULL;
	return 0;
}

int
strlist_push(struct strlist *l, const char *s)
{
	return strlist_pushn(l, s, strlen(s));
}

int
strlist_copy(struct strlist *dst, const struct strlist *src)
{
	size_t i;

	for (i = 0; i < src->n; i++) {
		if (strlist_push(dst, src->items[i]) < 0) {
			strlist_release(dst);
			return -1;
		}
	}
	return 0;
}

void
strlist_release(struct strlist *l)
{
	size_t i;

	if (l == NULL)
		return;
	for (i = 0; i < l->n; i++)
		free(l->items[i]);
	free(l->items);
	l->items = NULL;
	l->n = 0;
	l->alloc = 0;
}

int
strlist_find(const struct strlist *l, const char *s)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		if (strcmp(l->items[i], s) == 0)
			return (int)i;
	return -1;
}

static int
strlist_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

void
strlist_sort_unique(struct strlist *l)
{
	size_t i, j = 0;

	if (l->n == 0)
		return;
	qsort(l->items, l->n, sizeof(*l->items), strlist_cmp);
	for (i = 1; i < l->n; i++) {
		if (strcmp(l->items[i], l->items[j]) == 0)
			free(l->items[i]);
		else
			l->items[++j] = l->items[i];
	}
	l->n = j + 1;
	l->items[l->n] = NULL;
}
