/* test_backoff.c - the formulas of docs/retry-strategy.md#backoff, the cap
 * and the jitter bounds. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "strategies/backoff.h"

static struct backoff
mk(enum backoff_kind k, int64_t base, int64_t max, double jitter)
{
	struct backoff b;

	b.kind = k;
	b.base_delay_ms = base;
	b.max_delay_ms = max;
	b.jitter = jitter;
	return b;
}

static void
test_formulas(void **state)
{
	static const struct {
		enum backoff_kind kind;
		int n;
		int64_t want;
	} rows[] = {
	    {BACKOFF_NONE, 0, 0},
	    {BACKOFF_NONE, 5, 0},
	    {BACKOFF_FIXED, 0, 1000},
	    {BACKOFF_FIXED, 7, 1000},
	    {BACKOFF_LINEAR, 0, 1000},
	    {BACKOFF_LINEAR, 1, 2000},
	    {BACKOFF_LINEAR, 4, 5000},
	    {BACKOFF_EXPONENTIAL, 0, 1000},
	    {BACKOFF_EXPONENTIAL, 1, 2000},
	    {BACKOFF_EXPONENTIAL, 2, 4000},
	    {BACKOFF_EXPONENTIAL, 5, 32000},
	    {BACKOFF_EXPONENTIAL, 6, 60000}, /* capped */
	    {BACKOFF_LINEAR, 100, 60000},
	    {BACKOFF_EXPONENTIAL, -3, 1000},
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct backoff b = mk(rows[i].kind, 1000, 60000, 0.5);
		assert_int_equal(backoff_delay_ms(&b, rows[i].n), rows[i].want);
	}
}

static void
test_no_overflow(void **state)
{
	struct backoff b = mk(BACKOFF_EXPONENTIAL, INT64_MAX / 4, INT64_MAX, 0);
	struct backoff l = mk(BACKOFF_LINEAR, INT64_MAX / 2, INT64_MAX, 0);

	(void)state;
	assert_true(backoff_delay_ms(&b, 1000) > 0);
	assert_true(backoff_delay_ms(&l, 1000000) > 0);
	b = mk(BACKOFF_EXPONENTIAL, 1000, 60000, 0);
	assert_int_equal(backoff_delay_ms(&b, 2000000000), 60000);
}

static void
test_cap_below_base(void **state)
{
	struct backoff b = mk(BACKOFF_FIXED, 5000, 2000, 0);

	(void)state;
	assert_int_equal(backoff_delay_ms(&b, 0), 2000);
}

/* A small deterministic generator: the test owns its randomness. */
static uint64_t
lcg(uint64_t *s)
{
	*s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
	return *s >> 11;
}

static void
test_jitter_bounds_over_samples(void **state)
{
	uint64_t seed = 42;
	int64_t lo = INT64_MAX, hi = 0, d;
	int i, distinct_low = 0, distinct_high = 0;

	(void)state;
	for (i = 0; i < 100000; i++) {
		double u = (double)lcg(&seed) / (double)(1ULL << 53);
		d = backoff_jitter_ms(4000, 0.5, u);
		assert_true(d >= 4000 && d <= 6000);
		if (d < lo)
			lo = d;
		if (d > hi)
			hi = d;
		if (d < 4500)
			distinct_low++;
		if (d > 5500)
			distinct_high++;
	}
	/* the whole range is used: retries do not move in lockstep */
	assert_true(lo < 4050);
	assert_true(hi > 5950);
	assert_true(distinct_low > 20000 && distinct_high > 20000);
}

static void
test_jitter_edges(void **state)
{
	(void)state;
	assert_int_equal(backoff_jitter_ms(1000, 0, 0.9), 1000);
	assert_int_equal(backoff_jitter_ms(1000, 0.5, 0), 1000);
	assert_int_equal(backoff_jitter_ms(1000, 0.5, 1), 1500);
	assert_int_equal(backoff_jitter_ms(1000, 1, 1), 2000);
	assert_int_equal(backoff_jitter_ms(1000, 7, 1), 2000); /* clamped */
	assert_int_equal(backoff_jitter_ms(1000, 0.5, -3), 1000);
	assert_int_equal(backoff_jitter_ms(0, 0.5, 0.7), 0);
	assert_int_equal(backoff_jitter_ms(-5, 0.5, 0.7), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_formulas),
	    cmocka_unit_test(test_no_overflow),
	    cmocka_unit_test(test_cap_below_base),
	    cmocka_unit_test(test_jitter_bounds_over_samples),
	    cmocka_unit_test(test_jitter_edges),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
