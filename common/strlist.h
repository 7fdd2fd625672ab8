/*
 * strlist.h - a growable list of owned C strings (config pattern lists,
 * argv templates, depends_on ids).
 *
 * A zeroed struct strlist is an empty list.  strlist_release() frees the
 * strings and the array and leaves an empty list; it is a no-op on an
 * empty one.  items[] is NULL-terminated whenever n > 0, so a list can be
 * handed to execvp() as argv.
 */
#ifndef STORYCTL_STRLIST_H
#define STORYCTL_STRLIST_H

#include <stddef.h>

struct strlist {
	char **items;
	size_t n;
	size_t alloc;
};

/* Append a copy of s.  Returns 0, or -1 when out of memory. */
int strlist_push(struct strlist *l, const char *s);
/* Append a copy of the first len bytes of s. */
int strlist_pushn(struct strlist *l, const char *s, size_t len);
/* Deep copy of src into dst (dst must be empty).  0 or -1. */
int strlist_copy(struct strlist *dst, const struct strlist *src);
void strlist_release(struct strlist *l);
/* Index of the first item equal to s, or -1. */
/* Sort l by strcmp() and drop the duplicates. */
void strlist_sort_unique(struct strlist *l);

int strlist_find(const struct strlist *l, const char *s);

#endif
