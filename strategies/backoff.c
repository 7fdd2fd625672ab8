/* backoff.c - see backoff.h. */
#include "strategies/backoff.h"

int64_t
backoff_delay_ms(const struct backoff *b, int n)
{
	int64_t base = b->base_delay_ms > 0 ? b->base_delay_ms : 0;
	int64_t cap = b->max_delay_ms > 0 ? b->max_delay_ms : 0;
	int64_t d = 0;
	int i;

	if (n < 0)
		n = 0;
	switch (b->kind) {
	case BACKOFF_NONE:
		d = 0;
		break;
	case BACKOFF_FIXED:
		d = base;
		break;
	case BACKOFF_LINEAR:
		/* base * (n + 1) without overflow: stop once past the cap */
		d = (base != 0 && (int64_t)n + 1 > INT64_MAX / base)
		    ? INT64_MAX
		    : base * ((int64_t)n + 1);
		break;
	case BACKOFF_EXPONENTIAL:
		d = base;
		for (i = 0; i < n && d < cap && d <= INT64_MAX / 2; i++)
			d *= 2;
		break;
	}
	if (d > cap)
		d = cap;
	return d;
}

int64_t
backoff_jitter_ms(int64_t delay_ms, double jitter, double u)
{
	double extra;

	if (delay_ms <= 0)
		return 0;
	if (!(jitter > 0))
		return delay_ms;
	if (jitter > 1)
		jitter = 1;
	if (!(u > 0))
		u = 0;
	if (u > 1)
		u = 1;
	extra = (double)delay_ms * jitter * u;
	return delay_ms + (int64_t)extra;
}
