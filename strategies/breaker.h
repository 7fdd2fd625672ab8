/*
 * breaker.h - the batch breaker (docs/scheduling.md#the-batch-breaker).
 * Pure.
 *
 * When `after` stories in a row end with zero progress and only
 * transient failures (network, rate limit, timeout), the outage is not
 * the stories' fault: the batch pauses for the cooldown, then runs the
 * next story as a probe.  If the probe ends the same way, the batch
 * stops (exit 75) instead of escalating every story of the night, and
 * the stories the breaker counted go back to pending.
 */
#ifndef STORYCTL_BREAKER_H
#define STORYCTL_BREAKER_H

#include <stdbool.h>
#include <stddef.h>

#include "strategies/decide.h"

#define BREAKER_MAX_COUNTED 64

struct breaker_state {
	int run; /* stories in a row that ended "transient zero" */
	bool probing; /* the cooldown was taken; the next story probes */
	int counted[BREAKER_MAX_COUNTED]; /* their indexes (first ones) */
	int ncounted;
};

enum breaker_action {
	BREAKER_NONE, /* go on */
	BREAKER_PAUSE, /* sleep the cooldown, then probe with the next story */
	BREAKER_STOP /* stop the batch; put the counted stories back */
};

/* Did a story that ended with this history end "transient zero": every
 * counted-or-not attempt failed with network, rate_limit or timeout, and
 * no attempt checked a box? */
bool breaker_transient_zero(const struct attempt_rec *h, size_t n);

/* A story (index story) just reached a final status; after = 0 is off. */
enum breaker_action breaker_story_ended(
    struct breaker_state *b, int after, int story, bool transient_zero);

#endif
