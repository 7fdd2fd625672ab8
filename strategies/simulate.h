/*
 * simulate.h - feed a hypothetical attempt history through decide()
 * (`storyctl simulate`, docs/commands.md#simulate).  Pure; the CLI prints
 * the rows.
 *
 * A token is an outcome name optionally followed by ':' and the tasks
 * completed ("incomplete:5", "crash:4", "network", "success").  Without a
 * number, success means every task and any other outcome 0.
 */
#ifndef STORYCTL_SIMULATE_H
#define STORYCTL_SIMULATE_H

#include <stddef.h>

#include "strategies/decide.h"
#include "common/err.h"

struct sim_opts {
	const struct policy *policy;
	bool has_fallback;
	int tasks_total; /* >= 1 */
};

struct sim_row {
	int attempt; /* the number this row ran as */
	enum role role;
	enum outcome outcome;
	int tasks_completed;
	struct decision_out d;
};

/* Parse one token.  SC_EUSAGE naming the token when it makes no sense. */
int simulate_parse_token(enum outcome *out_outcome, int *out_tasks,
    const char *tok, int tasks_total, struct sc_err *err);

/* Run tokens[0..ntok) through the policy.  *out is a malloc'd array of
 * *out_n rows (the caller frees it); the run ends at the first terminal
 * decision (done, defer, escalate), so *out_n may be less than ntok. */
int simulate_run(struct sim_row **out, size_t *out_n, const struct sim_opts *o,
    const char *const *tokens, size_t ntok, struct sc_err *err);

#endif
