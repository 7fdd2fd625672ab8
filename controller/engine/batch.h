/*
 * batch.h - the batch loop (docs/scheduling.md; an attempt's path is
 * docs/design.md#life): run every pending story of the batch, attempt
 * after attempt, record each decision durably (SQLite, then one commit on
 * the state branch, docs/state.md#what-one-decision-writes) and stop
 * cleanly when asked.
 *
 * Side effects go through seams so that tests drive the loop with a fake
 * clock and a scripted fake runner: the clock (now, sleep, random) and
 * the agent runner (runner_run() in production).
 */
#ifndef STORYCTL_BATCH_H
#define STORYCTL_BATCH_H

#include <signal.h>
#include <stdbool.h>
#include <stdio.h>

#include "controller/clock.h"
#include "controller/config/config.h"
#include "controller/engine/notifier.h"
#include "controller/engine/runner.h"
#include "controller/config/stories.h"
#include "common/err.h"

enum batch_mode {
	BATCH_RUN, /* continue the unfinished batch, or start one */
	BATCH_RESUME /* continue the unfinished batch; none is an error */
};

/*
 * The agent seam: start an attempt, wait for any of several, collect
 * one.  Handles are opaque.  Production uses runner_start() and friends
 * (batch_real_ops()); when start is NULL the loop wraps the blocking
 * run_agent below instead, which is what the unit tests script.
 */
struct batch_agent_ops {
	int (*start)(void *ctx, void **handle, const struct runner_opts *o,
	    struct sc_err *err);
	int (*wait)(void *ctx, void *const *handles, size_t n,
	    int64_t timeout_ms, int wake_fd, struct sc_err *err);
	bool (*done)(void *ctx, const void *handle);
	int (*finish)(void *ctx, void *handle, struct runner_result *out,
	    struct sc_err *err);
	void *ctx;
};

struct sandbox_host;

struct batch_opts {
	const struct config *cfg;
	const struct story *stories; /* loaded from cfg, config order */
	size_t nstories;
	char *const *only; /* `run STORY...`: ids, or NULL */
	size_t nonly;
	enum batch_mode mode;
	struct sc_clock clock;
	/* The agent seam (see above), or a blocking runner. */
	struct batch_agent_ops agent_ops;
	int (*run_agent)(void *ctx, struct runner_result *out,
	    const struct runner_opts *o, struct sc_err *err);
	void *run_ctx;
	int jobs; /* run -j N: stories at once (>= 1) */
	FILE *out; /* progress lines */
	bool tty; /* live status line instead of lines */
	bool color;
	const volatile sig_atomic_t *stop; /* set by SIGINT/SIGTERM */
	int wake_fd; /* readable when *stop changes, or -1 */
	int64_t kill_grace_ms_override; /* tests: < 0 = use the policy */
	/* The notifier seam (controller/engine/notifier.h): post NULL = the real
	 * notifier, started when cfg has "notify" targets. */
	struct notify_ops notify_ops;
	/* Agents confined to their tree (docs/sandbox.md): the machine's
	 * bubblewrap, and which roles run inside it (sandbox_decide());
	 * NULL and false: none (the tests' scripted agents) */
	const struct sandbox_host *sandbox;
	bool confined[2];
};

struct batch_result {
	int64_t batch_id;
	int counts[STATUS__COUNT];
	bool stopped; /* stopped before its end (no agent left): exit 75 */
	bool interrupted; /* *stop was raised */
	bool nothing; /* resume found nothing to do */
	char stop_reason[512];
	double spend_usd; /* what the batch's attempts cost, as reported */
	int jobs; /* the -j it ran with */
	char state_dir[512];
	char branch[256];
};

/* Run the batch.  Returns 0 when the loop ended (look at *out for how),
 * or a negative SC_E* code (SC_ETEMPFAIL when another controller holds
 * the state dir, SC_EIO when state cannot be written, ...). */
int batch_run(
    struct batch_result *out, const struct batch_opts *o, struct sc_err *err);

/* The adapter that makes runner_run() fit the run_agent seam. */
int batch_real_runner(void *ctx, struct runner_result *out,
    const struct runner_opts *o, struct sc_err *err);
/* The real asynchronous agent seam (runner_start() and friends). */
void batch_real_ops(struct batch_agent_ops *out);

#endif
