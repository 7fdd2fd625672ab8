/* breaker.c - see breaker.h. */
#include "strategies/breaker.h"

bool
breaker_transient_zero(const struct attempt_rec *h, size_t n)
{
	size_t i;

	if (n == 0)
		return false;
	for (i = 0; i < n; i++) {
		/* a checked subtask is progress too, as for D6
		 * (docs/scheduling.md) */
		if (h[i].counts.tasks_completed != 0 ||
		    h[i].counts.subtasks_completed != 0)
			return false;
		switch (h[i].outcome) {
		case OUTCOME_NETWORK:
		case OUTCOME_RATE_LIMIT:
		case OUTCOME_TIMEOUT:
		case OUTCOME_USAGE_LIMIT:
			break;
		default:
			return false;
		}
	}
	return true;
}

enum breaker_action
breaker_story_ended(
    struct breaker_state *b, int after, int story, bool transient_zero)
{
	if (after <= 0)
		return BREAKER_NONE;
	if (!transient_zero) {
		b->run = 0;
		b->ncounted = 0;
		b->probing = false;
		return BREAKER_NONE;
	}
	b->run++;
	if (b->ncounted < BREAKER_MAX_COUNTED)
		b->counted[b->ncounted++] = story;
	if (b->probing)
		return BREAKER_STOP;
	if (b->run >= after) {
		b->probing = true;
		return BREAKER_PAUSE;
	}
	return BREAKER_NONE;
}
