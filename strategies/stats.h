/*
 * stats.h - the night's telemetry (docs/stats.md): attempts per agent and
 * role, success by attempt number, recovery of transient failures, delays
 * by cause, error codes, time lost to limits and waits, cost, plateaus.
 * Pure: rows in, figures out; `storyctl stats` and GET /v1/stats read the
 * rows from the database and print the result (controller/cli/cmd_stats.c).
 *
 * Ownership: stats_compute() fills *out with arrays it allocates; the
 * caller releases them with stats_result_free() (which takes a zeroed or
 * NULL result too).  The input is only read.
 */
#ifndef STORYCTL_STATS_H
#define STORYCTL_STATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/model.h"

/* One attempt row, as much of it as the figures need.  The rows come
 * grouped by (batch_id, story_id), each story's rows in seq order (as the
 * database stores them: docs/state.md#attempts). */
struct stats_attempt {
	int64_t batch_id;
	char story_id[128];
	int attempt; /* its number; uncounted reruns repeat it */
	int seq;
	bool counted;
	enum role role;
	char agent[64];
	int64_t started_ms, ended_ms; /* 0 unknown */
	enum outcome outcome; /* OUTCOME_NONE: still running */
	enum error_code error_code;
	int tasks_completed, tasks_total;
	int64_t delay_ms; /* the delay the decision set before the next */
	enum decision decision;
	double cost_usd;
};

/* One event of the event log: only its batch and kind are read. */
struct stats_event {
	int64_t batch_id;
	char kind[32];
};

/* What a delay before the next attempt waited for
 * (docs/stats.md#delays-by-cause). */
enum stats_cause {
	CAUSE_NETWORK = 0, /* after a network failure (network_sleep_s) */
	CAUSE_RATE_LIMIT, /* after a rate limit: the hint or the backoff */
	CAUSE_USAGE_LIMIT, /* a usage-limit wait until the reset (D3) */
	CAUSE_BACKOFF, /* after any other failure: the backoff */
	CAUSE__COUNT
};
const char *stats_cause_name(enum stats_cause c);

/* Runs of an agent or a role. */
struct stats_runs {
	int runs; /* ended attempts, counted or not */
	int counted; /* of which counted */
	int success;
	int64_t run_ms; /* time they ran (ended - started) */
	double cost_usd;
};

struct stats_agent {
	char agent[64];
	struct stats_runs r;
};

/* Counted attempts with one attempt number. */
struct stats_tries {
	int attempt;
	int tries;
	int success;
};

struct stats_recovery {
	int failures; /* attempts that ended this way */
	int recovered; /* of which the story later succeeded */
};

/* A percentile is the nearest rank: the value at rank ceil(p/100 * n)
 * of the sorted values (docs/stats.md#percentiles). */
struct stats_delay {
	int count;
	int64_t total_ms, mean_ms, p50_ms, p95_ms, max_ms;
};

struct stats_story_cost {
	char story_id[128];
	int runs;
	double cost_usd;
};

struct stats_plateau {
	int64_t batch_id;
	char story_id[128];
	int attempt; /* the attempt after which the story was deferred */
	int tasks_completed, tasks_total;
	char agents[2][64]; /* the agents that stopped there; [1] "" when
			     * one agent confirmed it */
};

struct stats_result {
	int batches; /* distinct batches with an attempt */
	int running; /* attempts still running (left out of the rest) */
	int outcomes[OUTCOME__COUNT]; /* ended attempts by outcome */
	struct stats_runs total, roles[2];
	struct stats_agent *agents; /* by name */
	size_t nagents;
	struct stats_tries *tries; /* by attempt number, 1 up */
	size_t ntries;
	/* stories: those with an ended attempt; done: with a success;
	 * first_try: whose success was attempt 1 */
	int stories, stories_done, done_first_try, done_after_retries;
	struct stats_recovery recovery[OUTCOME__COUNT]; /* transient only */
	struct stats_recovery recovery_total;
	struct stats_delay delays[CAUSE__COUNT];
	int errcodes[ERRC__COUNT];
	int64_t waits_ms; /* every delay */
	int64_t limit_waits_ms; /* rate- and usage-limit delays */
	int64_t limit_runs_ms; /* attempts that ended on a rate/usage limit */
	int breaker_pauses, stops; /* "breaker" and "stopped" events */
	struct stats_story_cost *story_costs; /* cost desc, then id */
	size_t nstory_costs;
	struct stats_plateau *plateaus; /* in row order */
	size_t nplateaus;
};

/* Whether an outcome is a transient failure: one that a later attempt
 * of the same story may get past with nothing changed (network,
 * rate_limit, timeout, usage_limit: docs/stats.md#recovery). */
bool stats_transient(enum outcome o);

/* The nearest-rank p-th percentile (0 < p <= 100) of n sorted values;
 * 0 when n == 0. */
int64_t stats_percentile(const int64_t *sorted, size_t n, int p);

/* Compute every figure over rows[0..n) and events[0..nev).  Returns 0,
 * or SC_EOS when memory runs out (with *out released). */
int stats_compute(struct stats_result *out, const struct stats_attempt *rows,
    size_t n, const struct stats_event *events, size_t nev);

void stats_result_free(struct stats_result *r);

#endif
