/*
 * fuzz_review.c - libFuzzer target for review_parse() and
 * review_reasons(): the input is a reviewer's output.  Checks review.h's
 * promises on the reason text (valid UTF-8, no control characters but
 * tab and newline, bounded, "" without a verdict) and that the reasons
 * of a panel of two such votes fit any buffer size.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "strategies/review.h"
#include "tests/fuzz/fuzz_utf8.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const names[] = {"claude", NULL};
	struct review_vote votes[2];
	struct review_tally t;
	char *out = NULL;
	size_t cap;

	memset(votes, 0xa5, sizeof(votes));
	review_parse(&votes[0], (const char *)data, size);
	if (memchr(votes[0].reason, '\0', sizeof(votes[0].reason)) == NULL)
		abort();
	if (!fuzz_clean_utf8(votes[0].reason))
		abort();
	if (votes[0].verdict == REVIEW_NONE && votes[0].reason[0] != '\0')
		abort();
	if (votes[0].verdict != REVIEW_NONE &&
	    votes[0].verdict != REVIEW_APPROVE &&
	    votes[0].verdict != REVIEW_REJECT)
		abort();
	votes[1] = votes[0];

	/* an exactly sized buffer (size derived from the input) so that
	 * ASan sees any overrun */
	cap = size % 512;
	out = malloc(cap ? cap : 1);
	if (out == NULL)
		return 0;
	review_reasons(out, cap, votes, names, 2);
	if (cap > 0 &&
	    (memchr(out, '\0', cap) == NULL || !fuzz_clean_utf8(out)))
		abort();
	review_tally(&t, votes, 2, 1 + (int)(size % 3));
	if (t.approve < 0 || t.approve > t.total || t.total != 2)
		abort();
	free(out);
	return 0;
}
