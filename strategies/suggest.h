/*
 * suggest.h - "did you mean ...?" for a name the user typed that is not
 * known: a story id given to show, requeue or run, a depends_on entry,
 * a config key (docs/stories.md "Ids").  Pure.
 *
 * The word is first read as a story file would name it: the directory,
 * ".md" and a trailing ".story" are dropped ("docs/stories/1.1.story.md"
 * and "1.1.story" both mean "1.1").  Then, best first:
 *   1. a candidate equal to it (any case);
 *   2. the one candidate it is a prefix of, or that is a prefix of it,
 *      at a separator ('.', '-', '_'): "1-1" for "1-1-user-auth";
 *      none when several are;
 *   3. the candidate nearest by edit distance, if within
 *      min(3, 1 + len / 4) edits of the word (ties: the first added).
 */
#ifndef STORYCTL_SUGGEST_H
#define STORYCTL_SUGGEST_H

#include <stddef.h>

#define SUGGEST_WORD_MAX 128

struct suggest {
	char word[SUGGEST_WORD_MAX]; /* normalised, lower case */
	int exact; /* index of an equal candidate, -1 */
	int prefix; /* index of the prefix match, -1 */
	int nprefix; /* how many prefix matches */
	int near; /* index of the nearest candidate, -1 */
	size_t near_d; /* its distance */
};

/* Start looking for word (NULL: nothing is close). */
void suggest_init(struct suggest *s, const char *word);

/* Consider candidate cand, known to the caller as index. */
void suggest_add(struct suggest *s, const char *cand, int index);

/* The index of the best candidate added, or -1 when none is close. */
int suggest_best(const struct suggest *s);

/* The same over an array: the index into cands[0..n), or -1. */
int suggest_closest(const char *word, const char *const *cands, size_t n);

/* Levenshtein distance of a and b (bytes); SIZE_MAX when either is
 * longer than SUGGEST_WORD_MAX - 1 bytes. */
size_t suggest_distance(const char *a, const char *b);

#endif
