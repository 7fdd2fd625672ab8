/* test_stats.c - stats_compute() over hand-made nights whose figures are
 * worked out by hand in the comments (docs/stats.md). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "strategies/stats.h"

#define P ROLE_PRIMARY
#define F ROLE_FALLBACK
/* batch, story, attempt, seq, counted, role, agent, started, ended (ms
 * after T0; an end of 0 is none: running), outcome, code, tasks, total,
 * delay, decision, cost */
#define T0 1764000000000LL
#define ROW(b, s, a, q, c, r, ag, t0, t1, o, e, tc, tt, d, dec, usd) \
	{ \
		(b), (s), (a), (q), (c), (r), (ag), T0 + (t0), \
		    (t1) ? T0 + (t1) : 0, OUTCOME_##o, ERRC_##e, (tc), (tt), \
		    (d), DECISION_##dec, (usd) \
	}

/* One night of batch 1 (docs/stats.md has the same example):
 * s1 network, then success on the fallback (recovered);
 * s2 the plateau of docs/retry-strategy.md's worked example: 5/9, 4/9 crash, 5/9, 5/9 -> deferred at 4;
 * s3 a usage-limit wait, then success on the same attempt number;
 * s4 rate limit, overloaded, timeout -> escalated (not recovered);
 * s5 running. */
static const struct stats_attempt night[] = {
    ROW(1, "s1", 1, 1, 1, P, "claude", 0, 1000, NETWORK, NETWORK_ERROR, 0, 2,
	60000, RETRY, 0),
    ROW(1, "s1", 2, 2, 1, F, "codex", 61000, 71000, SUCCESS, NONE, 2, 2, 0,
	DONE, 0.5),
    ROW(1, "s2", 1, 1, 1, P, "claude", 0, 10000, INCOMPLETE, INCOMPLETE, 5, 9,
	1000, RETRY, 0.25),
    ROW(1, "s2", 2, 2, 1, F, "codex", 11000, 20000, CRASH, CRASH, 4, 9, 2000,
	RETRY, 0.125),
    ROW(1, "s2", 3, 3, 1, P, "claude", 22000, 30000, INCOMPLETE, INCOMPLETE, 5,
	9, 4000, RETRY, 0),
    ROW(1, "s2", 4, 4, 1, F, "codex", 34000, 40000, INCOMPLETE, INCOMPLETE, 5,
	9, 0, DEFER, 0),
    ROW(1, "s3", 1, 1, 0, P, "claude", 0, 2000, USAGE_LIMIT, USAGE_LIMIT, 0, 3,
	3600000, WAIT, 0),
    ROW(1, "s3", 1, 2, 1, P, "claude", 3602000, 3700000, SUCCESS, NONE, 3, 3, 0,
	DONE, 0.25),
    ROW(1, "s4", 1, 1, 1, P, "claude", 0, 500, RATE_LIMIT, RATE_LIMIT, 0, 1,
	30000, RETRY, 0),
    ROW(1, "s4", 2, 2, 1, F, "codex", 30500, 31500, RATE_LIMIT, OVERLOADED, 0,
	1, 5000, RETRY, 0),
    ROW(1, "s4", 3, 3, 1, P, "claude", 36500, 96500, TIMEOUT, TIMEOUT, 0, 1, 0,
	ESCALATE, 0),
    ROW(1, "s5", 1, 1, 1, P, "claude", 100, 0, NONE, NONE, 0, 4, 0, NONE, 0),
};

static const struct stats_event night_events[] = {
    {1, "batch"}, {1, "breaker"}, {1, "decision"}, {1, "stopped"}};

static void
test_night(void **state)
{
	struct stats_result r;
	size_t i;

	(void)state;
	assert_int_equal(stats_compute(&r, night,
			     sizeof(night) / sizeof(*night), night_events, 4),
	    0);
	assert_int_equal(r.batches, 1);
	assert_int_equal(r.running, 1);
	/* 11 ended rows: claude 7 (one uncounted), codex 4 */
	assert_int_equal(r.total.runs, 11);
	assert_int_equal(r.total.counted, 10);
	assert_int_equal(r.total.success, 2);
	assert_int_equal(r.nagents, 2);
	assert_string_equal(r.agents[0].agent, "claude");
	assert_int_equal(r.agents[0].r.runs, 7);
	assert_int_equal(r.agents[0].r.counted, 6);
	assert_int_equal(r.agents[0].r.success, 1);
	assert_true(r.agents[0].r.cost_usd == 0.5);
	/* 1000 + 10000 + 8000 + 2000 + 98000 + 500 + 60000 */
	assert_int_equal(r.agents[0].r.run_ms, 179500);
	assert_string_equal(r.agents[1].agent, "codex");
	assert_int_equal(r.agents[1].r.runs, 4);
	assert_int_equal(r.agents[1].r.success, 1);
	assert_true(r.agents[1].r.cost_usd == 0.625);
	assert_int_equal(r.roles[ROLE_PRIMARY].runs, 7);
	assert_int_equal(r.roles[ROLE_FALLBACK].runs, 4);
	assert_true(r.total.cost_usd == 1.125);
	/* counted tries by number: 1: s1 s2 s3 s4 (s3 won); 2: s1 (won)
	 * s2 s4; 3: s2 s4; 4: s2 */
	assert_int_equal(r.ntries, 4);
	assert_int_equal(r.tries[0].tries, 4);
	assert_int_equal(r.tries[0].success, 1);
	assert_int_equal(r.tries[1].tries, 3);
	assert_int_equal(r.tries[1].success, 1);
	assert_int_equal(r.tries[2].tries, 2);
	assert_int_equal(r.tries[2].success, 0);
	assert_int_equal(r.tries[3].attempt, 4);
	assert_int_equal(r.tries[3].tries, 1);
	assert_int_equal(r.stories, 4);
	assert_int_equal(r.stories_done, 2);
	assert_int_equal(r.done_first_try, 1);
	assert_int_equal(r.done_after_retries, 1);
	/* transient: s1 network (won later), s3 usage (won), s4 rate x2 and
	 * timeout (never) */
	assert_int_equal(r.recovery_total.failures, 5);
	assert_int_equal(r.recovery_total.recovered, 2);
	assert_int_equal(r.recovery[OUTCOME_NETWORK].recovered, 1);
	assert_int_equal(r.recovery[OUTCOME_USAGE_LIMIT].recovered, 1);
	assert_int_equal(r.recovery[OUTCOME_RATE_LIMIT].failures, 2);
	assert_int_equal(r.recovery[OUTCOME_RATE_LIMIT].recovered, 0);
	assert_int_equal(r.recovery[OUTCOME_TIMEOUT].failures, 1);
	assert_int_equal(r.recovery[OUTCOME_CRASH].failures, 0);
	/* error codes */
	assert_int_equal(r.errcodes[ERRC_INCOMPLETE], 3);
	assert_int_equal(r.errcodes[ERRC_OVERLOADED], 1);
	assert_int_equal(r.errcodes[ERRC_NONE], 0);
	assert_int_equal(r.outcomes[OUTCOME_SUCCESS], 2);
	assert_int_equal(r.outcomes[OUTCOME_NONE], 0);
	/* waits: network 60000, rate 30000 + 5000, usage 3600000, backoff
	 * 1000 + 2000 + 4000; limit runs: 2000 + 500 + 1000 */
	assert_int_equal(r.waits_ms, 3702000);
	assert_int_equal(r.limit_waits_ms, 3635000);
	assert_int_equal(r.limit_runs_ms, 3500);
	assert_int_equal(r.breaker_pauses, 1);
	assert_int_equal(r.stops, 1);
	/* stories by cost: s1 0.5, s2 0.375, s3 0.25, s4 0 */
	assert_int_equal(r.nstory_costs, 4);
	assert_string_equal(r.story_costs[0].story_id, "s1");
	assert_string_equal(r.story_costs[1].story_id, "s2");
	assert_true(r.story_costs[1].cost_usd == 0.375);
	assert_int_equal(r.story_costs[1].runs, 4);
	assert_string_equal(r.story_costs[3].story_id, "s4");
	/* the plateau: s2 after attempt 4 at 5/9, codex and claude */
	assert_int_equal(r.nplateaus, 1);
	assert_string_equal(r.plateaus[0].story_id, "s2");
	assert_int_equal(r.plateaus[0].attempt, 4);
	assert_int_equal(r.plateaus[0].tasks_completed, 5);
	assert_int_equal(r.plateaus[0].tasks_total, 9);
	assert_string_equal(r.plateaus[0].agents[0], "codex");
	assert_string_equal(r.plateaus[0].agents[1], "claude");
	for (i = 0; i < 2; i++)
		assert_true(r.plateaus[0].batch_id == 1);
	stats_result_free(&r);
}

/* The delays of the night, cause by cause (nearest rank). */
struct dcase {
	enum stats_cause cause;
	int count;
	int64_t total, mean, p50, p95, max;
};

static const struct dcase night_delays[] = {
    {CAUSE_NETWORK, 1, 60000, 60000, 60000, 60000, 60000},
    /* 5000, 30000: p50 rank ceil(1.0) = 1, p95 rank ceil(1.9) = 2 */
    {CAUSE_RATE_LIMIT, 2, 35000, 17500, 5000, 30000, 30000},
    {CAUSE_USAGE_LIMIT, 1, 3600000, 3600000, 3600000, 3600000, 3600000},
    /* 1000, 2000, 4000: mean 2333.3 -> 2333; p50 rank 2, p95 rank 3 */
    {CAUSE_BACKOFF, 3, 7000, 2333, 2000, 4000, 4000},
};

static void
test_night_delays(void **state)
{
	struct stats_result r;
	const struct stats_delay *d;
	size_t i;

	(void)state;
	assert_int_equal(
	    stats_compute(&r, night, sizeof(night) / sizeof(*night), NULL, 0),
	    0);
	for (i = 0; i < sizeof(night_delays) / sizeof(*night_delays); i++) {
		d = &r.delays[night_delays[i].cause];
		assert_int_equal(d->count, night_delays[i].count);
		assert_int_equal(d->total_ms, night_delays[i].total);
		assert_int_equal(d->mean_ms, night_delays[i].mean);
		assert_int_equal(d->p50_ms, night_delays[i].p50);
		assert_int_equal(d->p95_ms, night_delays[i].p95);
		assert_int_equal(d->max_ms, night_delays[i].max);
	}
	assert_int_equal(r.breaker_pauses, 0);
	stats_result_free(&r);
}

/* Nearest rank: rank = ceil(p / 100 * n), 1-based. */
struct pcase {
	int64_t v[20];
	size_t n;
	int p;
	int64_t want;
};

static const struct pcase pcases[] = {
    {{0}, 0, 50, 0},
    {{7}, 1, 50, 7},
    {{7}, 1, 95, 7},
    {{10, 20, 30, 40, 50}, 5, 50, 30}, /* rank 3 */
    {{10, 20, 30, 40, 50}, 5, 95, 50}, /* rank ceil(4.75) = 5 */
    {{10, 20, 30, 40}, 4, 50, 20}, /* rank 2: no averaging */
    {{10, 20, 30, 40}, 4, 75, 30}, /* rank 3 */
    {{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20},
	20, 95, 19}, /* rank 19 */
    {{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20},
	20, 100, 20},
    {{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20},
	20, 1, 1},
};

static void
test_percentiles(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(pcases) / sizeof(*pcases); i++)
		assert_int_equal(
		    stats_percentile(pcases[i].v, pcases[i].n, pcases[i].p),
		    pcases[i].want);
}

/* Two batches (--all): one agent only, the same story in both. */
static const struct stats_attempt two[] = {
    ROW(1, "a", 1, 1, 1, P, "solo", 0, 10, INCOMPLETE, INCOMPLETE, 2, 4, 10,
	RETRY, 0.5),
    ROW(1, "a", 2, 2, 1, P, "solo", 20, 30, INCOMPLETE, INCOMPLETE, 2, 4, 10,
	RETRY, 0.5),
    ROW(1, "a", 3, 3, 1, P, "solo", 40, 50, INCOMPLETE, INCOMPLETE, 2, 4, 0,
	DEFER, 0.5),
    ROW(2, "a", 1, 1, 1, P, "solo", 100, 110, SUCCESS, NONE, 4, 4, 0, DONE,
	0.25),
    ROW(2, "b", 1, 1, 0, P, "solo", 100, 200, INTERRUPTED, INTERRUPTED, 0, 1, 0,
	NONE, 0),
    ROW(2, "b", 1, 2, 1, P, "solo", 300, 400, SUCCESS, NONE, 1, 1, 0, DONE,
	1.0),
};

static void
test_two_batches(void **state)
{
	struct stats_result r;

	(void)state;
	assert_int_equal(
	    stats_compute(&r, two, sizeof(two) / sizeof(*two), NULL, 0), 0);
	assert_int_equal(r.batches, 2);
	assert_int_equal(r.nagents, 1);
	assert_int_equal(r.agents[0].r.runs, 6);
	assert_int_equal(r.roles[ROLE_FALLBACK].runs, 0);
	/* stories are per batch: a (1) deferred, a (2) and b done at 1 */
	assert_int_equal(r.stories, 3);
	assert_int_equal(r.stories_done, 2);
	assert_int_equal(r.done_first_try, 2);
	/* story cost merges the id across batches: a 1.75, b 1.0 */
	assert_int_equal(r.nstory_costs, 2);
	assert_string_equal(r.story_costs[0].story_id, "a");
	assert_true(r.story_costs[0].cost_usd == 1.75);
	assert_int_equal(r.story_costs[0].runs, 4);
	assert_string_equal(r.story_costs[1].story_id, "b");
	/* one agent: the plateau names it alone */
	assert_int_equal(r.nplateaus, 1);
	assert_string_equal(r.plateaus[0].agents[0], "solo");
	assert_string_equal(r.plateaus[0].agents[1], "");
	assert_int_equal(r.plateaus[0].attempt, 3);
	/* interrupted is not transient and decided nothing: no delay */
	assert_int_equal(r.recovery_total.failures, 0);
	assert_int_equal(r.delays[CAUSE_BACKOFF].count, 2);
	assert_int_equal(r.delays[CAUSE_BACKOFF].p95_ms, 10);
	assert_int_equal(r.waits_ms, 20);
	stats_result_free(&r);
}

static void
test_empty(void **state)
{
	struct stats_result r;
	size_t c;

	(void)state;
	assert_int_equal(stats_compute(&r, NULL, 0, NULL, 0), 0);
	assert_int_equal(r.batches, 0);
	assert_int_equal(r.total.runs, 0);
	assert_int_equal(r.nagents, 0);
	assert_int_equal(r.ntries, 0);
	assert_int_equal(r.nstory_costs, 0);
	for (c = 0; c < CAUSE__COUNT; c++) {
		assert_int_equal(r.delays[c].count, 0);
		assert_int_equal(r.delays[c].mean_ms, 0);
	}
	stats_result_free(&r);
	stats_result_free(&r);
	stats_result_free(NULL);
	assert_string_equal(stats_cause_name(CAUSE_USAGE_LIMIT), "usage_limit");
	assert_string_equal(stats_cause_name(CAUSE__COUNT), "?");
	assert_true(stats_transient(OUTCOME_TIMEOUT));
	assert_false(stats_transient(OUTCOME_CRASH));
	assert_false(stats_transient(OUTCOME_PERMANENT));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_night),
	    cmocka_unit_test(test_night_delays),
	    cmocka_unit_test(test_percentiles),
	    cmocka_unit_test(test_two_batches),
	    cmocka_unit_test(test_empty),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
