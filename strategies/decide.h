/*
 * decide.h - what happens after an attempt (docs/retry-strategy.md):
 * the adaptive, retry and none strategies.  Pure: the history, the
 * policy, the agents' state and the time are inputs; the decision is the
 * output.  The batch loop and `storyctl simulate` both call decide(), so
 * what simulate prints is exactly what a night would do.
 */
#ifndef STORYCTL_DECIDE_H
#define STORYCTL_DECIDE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/model.h"
#include "strategies/policy.h"

/* One ended attempt of the story, as the strategy sees it. */
struct attempt_rec {
	int attempt; /* its number (uncounted reruns repeat it) */
	enum role role; /* the agent that actually ran it */
	enum outcome outcome;
	/* the subtasks (docs/stories.md): D6 reads them, the plateau does
	 * not; 0 when unknown (simulate) */
	struct task_counts counts;
	int64_t started_ms; /* wall clock, for the max_time_s budget */
	int64_t hint_ms; /* wait the output asked for, resolved; -1 none */
	/* the row's error message (borrowed; NULL when unknown, as in
	 * simulate): D6 says what the attempts showed */
	const char *message;
	/* a crash of the worktree's setup, not of the agent: counted, but
	 * no evidence of a plateau (docs/git-work.md#setup) */
	bool setup_crash;
};

struct decide_input {
	const struct policy *policy;
	/* Every attempt of the story since it was (re)queued, oldest first;
	 * the last one is the attempt that just ended.  n >= 1. */
	const struct attempt_rec *history;
	size_t n;
	bool has_fallback; /* a fallback agent is configured */
	bool disabled[2]; /* agents disabled (D2) before this attempt */
	int64_t now_ms; /* wall clock now (same origin as started_ms) */
	bool retry_on_matched; /* the failure matched policy.retry_on */
	bool budget_spent; /* the story's cost budget is spent
			     (docs/scheduling.md#cost-and-budgets) */
	/* usage-limit pauses of the agents (wall ms, 0 none): an agent is
	 * paused while now_ms < paused_until[role] (D3) */
	int64_t paused_until[2];
};

#define DECIDE_REASON_MAX 512

struct decision_out {
	enum decision decision; /* DECISION_NONE after D4 (interrupted) */
	char rule[8]; /* "D8", "R3", "N1" ... */
	char reason[DECIDE_REASON_MAX];
	bool counted; /* the attempt used up its number */
	int next_attempt; /* number the next attempt runs as */
	enum role next_role; /* agent of the next attempt */
	int64_t delay_ms; /* before the next attempt, before jitter */
	double jitter; /* fraction of delay_ms the caller may add */
	int64_t max_delay_ms; /* cap after jitter (usage-limit waits); 0 none */
	double timeout_factor; /* for the next attempt: D9 */
	double poll_factor; /* for the next attempt: D10 */
	int disable_role; /* -1, or the role D2 disables now */
	bool stop_batch; /* no agent can run: the batch stops */
	/* when stop_batch after a usage limit: when resuming makes sense
	 * (wall ms, the earliest reset of an enabled agent); 0 otherwise */
	int64_t resume_after_ms;
	/* policy.max_wait_s cut the wait short: what was asked */
	bool wait_capped;
	int64_t uncapped_delay_ms;
	/* The plateau, when one was confirmed (D5/D8). */
	int plateau_tasks;
	int plateau_attempt[2]; /* by role; 0 when unused */
};

/* Decide after the last attempt of in->history.  Returns 0, or
 * SC_ESOFTWARE (with a message in out->reason) on an empty history. */
int decide(struct decision_out *out, const struct decide_input *in);

/* The number the attempt after attempt n runs as: n + 1 when n was
 * counted, n again when it was not (a usage-limit wait, an interrupt:
 * docs/retry-strategy.md).  The one place this rule lives: decide(),
 * the controller and `storyctl status` call it. */
int decide_next_attempt(int n, bool counted);

/* The role of attempt number n: odd primary, even fallback
 * (docs/retry-strategy.md#1-the-adaptive-strategy-default);
 * always primary without a fallback; a disabled agent is skipped. */
enum role decide_role_for(int n, bool has_fallback, const bool disabled[2]);

/* The final delay: jitter applied with the random number u in [0, 1],
 * then the cap.  What the batch loop sleeps. */
int64_t decide_delay_with_jitter(const struct decision_out *d, double u);

/* Default wait when a usage limit gives no reset time (1 hour, capped by
 * policy.max_wait_s like every wait). */
#define DECIDE_USAGE_WAIT_DEFAULT_MS (3600 * 1000LL)

#endif
