/*
 * backoff.h - retry delays (docs/retry-strategy.md#backoff).  Pure: the
 * random number is an input, so tests and simulate are deterministic.
 */
#ifndef STORYCTL_BACKOFF_H
#define STORYCTL_BACKOFF_H

#include <stdint.h>

#include "strategies/policy.h"

/* The delay before the n-th retry (n = 0 for the first), before jitter:
 * fixed = base, linear = base * (n + 1), exponential = base * 2^n,
 * none = 0; capped at max_delay_ms.  Never overflows; negative n is 0. */
int64_t backoff_delay_ms(const struct backoff *b, int n);

/* delay + a uniformly random amount in [0, jitter * delay]: u is a random
 * number in [0, 1] from the caller's source.  Positive jitter only, so
 * the result is never below delay; u and jitter are clamped to [0, 1]. */
int64_t backoff_jitter_ms(int64_t delay_ms, double jitter, double u);

#endif
