/* simulate.c - see simulate.h. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "strategies/simulate.h"

int
simulate_parse_token(enum outcome *out_outcome, int *out_tasks, const char *tok,
    int tasks_total, struct sc_err *err)
{
	char name[32];
	const char *colon = strchr(tok, ':');
	size_t len = colon ? (size_t)(colon - tok) : strlen(tok);
	enum outcome o = OUTCOME_NONE;
	char *end = NULL;
	long t;

	if (len == 0 || len >= sizeof(name))
		return err_set(err, SC_EUSAGE,
		    "bad simulate token '%s': "
		    "expected OUTCOME[:TASKS]",
		    tok);
	memcpy(name, tok, len);
	name[len] = '\0';
	if (outcome_parse(&o, name) < 0)
		return err_set(err, SC_EUSAGE,
		    "bad simulate token '%s': "
		    "unknown outcome '%s' (success, incomplete, gate_failed, "
		    "crash, timeout, network, rate_limit, usage_limit, "
		    "permanent, interrupted)",
		    tok, name);
	if (colon == NULL) {
		*out_tasks = o == OUTCOME_SUCCESS ? tasks_total : 0;
		*out_outcome = o;
		return 0;
	}
	if (colon[1] < '0' || colon[1] > '9')
		return err_set(err, SC_EUSAGE,
		    "bad simulate token '%s': "
		    "tasks must be a whole number",
		    tok);
	t = strtol(colon + 1, &end, 10);
	if (*end != '\0' || t > INT_MAX)
		return err_set(err, SC_EUSAGE,
		    "bad simulate token '%s': "
		    "tasks must be a whole number",
		    tok);
	if (t > tasks_total)
		return err_set(err, SC_EUSAGE,
		    "bad simulate token '%s': %ld "
		    "tasks completed but tasks_total is %d",
		    tok, t, tasks_total);
	if (o == OUTCOME_SUCCESS && t != tasks_total)
		return err_set(err, SC_EUSAGE,
		    "bad simulate token '%s': "
		    "success means all %d tasks are checked",
		    tok, tasks_total);
	*out_outcome = o;
	*out_tasks = (int)t;
	return 0;
}

int
simulate_run(struct sim_row **out, size_t *out_n, const struct sim_opts *o,
    const char *const *tokens, size_t ntok, struct sc_err *err)
{
	struct attempt_rec *hist = NULL;
	struct sim_row *rows = NULL;
	struct decide_input in;
	bool disabled[2] = {false, false};
	int attempt = 1;
	enum role role = ROLE_PRIMARY;
	size_t i, n = 0;
	int rc = 0;

	*out = NULL;
	*out_n = 0;
	if (o->tasks_total < 1) {
		rc = err_set(err, SC_EUSAGE, "--tasks must be at least 1");
		goto out;
	}
	hist = calloc(ntok ? ntok : 1, sizeof(*hist));
	rows = calloc(ntok ? ntok : 1, sizeof(*rows));
	if (hist == NULL || rows == NULL) {
		rc = err_set(err, SC_EOS, "out of memory");
		goto out;
	}
	/* parse everything first: a bad token anywhere is a usage error */
	for (i = 0; i < ntok; i++) {
		rc = simulate_parse_token(&hist[i].outcome,
		    &hist[i].counts.tasks_completed, tokens[i], o->tasks_total,
		    err);
		if (rc < 0)
			goto out;
	}
	role = decide_role_for(1, o->has_fallback, disabled);
	for (i = 0; i < ntok; i++) {
		struct sim_row *r = &rows[n];

		hist[i].attempt = attempt;
		hist[i].role = role;
		hist[i].counts.tasks_total = o->tasks_total;
		hist[i].started_ms = 0;
		hist[i].hint_ms = -1;
		memset(&in, 0, sizeof(in));
		in.policy = o->policy;
		in.history = hist;
		in.n = i + 1;
		in.has_fallback = o->has_fallback;
		in.disabled[0] = disabled[0];
		in.disabled[1] = disabled[1];
		in.now_ms = 0;
		in.retry_on_matched = true;
		rc = decide(&r->d, &in);
		if (rc < 0) {
			err_set(err, rc, "%s", r->d.reason);
			goto out;
		}
		r->attempt = attempt;
		r->role = role;
		r->outcome = hist[i].outcome;
		r->tasks_completed = hist[i].counts.tasks_completed;
		n++;
		if (r->d.disable_role >= 0)
			disabled[r->d.disable_role] = true;
		if (r->d.decision == DECISION_DONE ||
		    r->d.decision == DECISION_DEFER ||
		    r->d.decision == DECISION_ESCALATE)
			break;
		attempt = r->d.next_attempt;
		role = r->d.next_role;
	}
	*out = rows;
	*out_n = n;
	rows = NULL;
out:
	free(hist);
	free(rows);
	return rc;
}
