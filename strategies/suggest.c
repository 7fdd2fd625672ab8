/* suggest.c - see suggest.h. */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "strategies/suggest.h"
#include "strategies/text.h"

size_t
suggest_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), i, j, best;
	size_t prev[SUGGEST_WORD_MAX], cur[SUGGEST_WORD_MAX];

	if (la >= SUGGEST_WORD_MAX || lb >= SUGGEST_WORD_MAX)
		return SIZE_MAX;
	for (j = 0; j <= lb; j++)
		prev[j] = j;
	for (i = 1; i <= la; i++) {
		cur[0] = i;
		for (j = 1; j <= lb; j++) {
			best = prev[j - 1] + (a[i - 1] != b[j - 1]);
			if (prev[j] + 1 < best)
				best = prev[j] + 1;
			if (cur[j - 1] + 1 < best)
				best = cur[j - 1] + 1;
			cur[j] = best;
		}
		memcpy(prev, cur, (lb + 1) * sizeof(*prev));
	}
	return prev[lb];
}

/* s lower-cased into out (cap bytes); false when it does not fit. */
static bool
lower_copy(char *out, size_t cap, const char *s, size_t len)
{
	size_t i;

	if (len >= cap)
		return false;
	for (i = 0; i < len; i++)
		out[i] = (char)text_lower((unsigned char)s[i]);
	out[len] = '\0';
	return true;
}

static bool
ends_with(const char *s, size_t len, const char *suffix)
{
	size_t n = strlen(suffix);

	return len > n && strncmp(s + len - n, suffix, n) == 0;
}

void
suggest_init(struct suggest *s, const char *word)
{
	const char *base;
	size_t len;

	memset(s, 0, sizeof(*s));
	s->exact = s->prefix = s->near = -1;
	s->near_d = SIZE_MAX;
	if (word == NULL)
		return;
	/* a path or a file name means the story it names */
	base = strrchr(word, '/');
	base = base != NULL ? base + 1 : word;
	len = strlen(base);
	if (ends_with(base, len, ".md"))
		len -= 3;
	if (ends_with(base, len, ".story"))
		len -= 6;
	if (!lower_copy(s->word, sizeof(s->word), base, len))
		s->word[0] = '\0';
}

static bool
is_sep(char c)
{
	return c == '.' || c == '-' || c == '_';
}

/* a is a prefix of b that ends where b has a separator */
static bool
boundary_prefix(const char *a, const char *b)
{
	size_t n = strlen(a);

	return n > 0 && strncmp(a, b, n) == 0 && is_sep(b[n]);
}

void
suggest_add(struct suggest *s, const char *cand, int index)
{
	char c[SUGGEST_WORD_MAX];
	size_t d, lw = strlen(s->word), lc, limit;

	if (s->word[0] == '\0' || cand == NULL ||
	    !lower_copy(c, sizeof(c), cand, strlen(cand)))
		return;
	if (strcmp(c, s->word) == 0) {
		if (s->exact < 0)
			s->exact = index;
		return;
	}
	if (boundary_prefix(s->word, c) || boundary_prefix(c, s->word)) {
		if (s->nprefix++ == 0)
			s->prefix = index;
	}
	limit = 1 + lw / 4;
	if (limit > 3)
		limit = 3;
	lc = strlen(c);
	/* the distance is at least the difference in length */
	if ((lc > lw ? lc - lw : lw - lc) > limit)
		return;
	d = suggest_distance(s->word, c);
	if (d <= limit && d < s->near_d) {
		s->near_d = d;
		s->near = index;
	}
}

int
suggest_best(const struct suggest *s)
{
	if (s->exact >= 0)
		return s->exact;
	if (s->nprefix == 1)
		return s->prefix;
	return s->near;
}

int
suggest_closest(const char *word, const char *const *cands, size_t n)
{
	struct suggest s;
	size_t i;

	suggest_init(&s, word);
	for (i = 0; i < n && i < INT32_MAX; i++)
		suggest_add(&s, cands[i], (int)i);
	return suggest_best(&s);
}
