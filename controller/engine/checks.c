/*
 * checks.c - what an attempt must pass after it checked every box: the
 * gates (argv commands such as ["make", "test"], in order, the first
 * failure decides) and the review panel (several agents in parallel,
 * transient failures retried with backoff, then full or degraded
 * consensus).  They run as jobs of the supervision loop, like agents,
 * so a gate never blocks the stories in other slots.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "controller/config/argv.h"
#include "controller/engine/attempt_run.h"
#include "controller/engine/checks.h"
#include "controller/engine/console.h"
#include "state/redact.h"
#include "strategies/classify.h"
#include "strategies/backoff.h"

#define GATE_OUTPUT_MAX 2048

/* The last max bytes of s, redacted; malloc'd. */
static char *
tail_redacted(const struct batch *b, const char *s, size_t len, size_t max)
{
	if (s == NULL)
		return NULL;
	if (len > max) {
		s += len - max;
		len = max;
	}
	return redact_text(b->secrets, s, len, NULL);
}

static void
job_release(struct batch *b, struct check_job *j)
{
	struct sc_err ignore;

	if (j->handle != NULL) {
		runner_result_release(&j->res);
		if (b->ops.finish(b->ops.ctx, j->handle, &j->res, &ignore) == 0)
			runner_result_release(&j->res);
		j->handle = NULL;
	}
	runner_result_release(&j->res);
	strlist_release(&j->argv);
}

void
checks_free(struct batch *b, struct attempt_run *ar)
{
	size_t i;

	for (i = 0; i < ar->njobs; i++)
		job_release(b, &ar->jobs[i]);
	free(ar->jobs);
	ar->jobs = NULL;
	ar->njobs = 0;
}

static void
vars_for(struct argv_vars *v, const struct attempt_run *ar, const char *prompt)
{
	memset(v, 0, sizeof(*v));
	v->prompt = prompt;
	v->story_file = ar->sl->s->file;
	v->story_id = ar->sl->s->id;
	v->role = role_name(ar->r.role);
	v->stalled_task = ar->end.stalled_task;
	v->repo = ar->sl->cwd;
	v->attempt = ar->r.attempt - ar->sl->st->attempt_base;
	v->max_attempts = ar->b->cfg->policy.max_attempts;
}

/* Start job j (argv already expanded). */
static int
job_start(struct batch *b, struct attempt_run *ar, struct check_job *j,
    double timeout_s, struct sc_err *err)
{
	struct runner_opts *ro = &j->ro;

	runner_result_release(&j->res);
	memset(ro, 0, sizeof(*ro));
	snprintf(j->log_path, sizeof(j->log_path), "%.500s.%s.log",
	    ar->r.log_path, j->name);
	ro->argv = (const char *const *)j->argv.items;
	ro->cwd = ar->sl->cwd;
	ro->log_path = j->log_path;
	/* a gate or a reviewer works in the attempt's tree: it carries the
	 * attempt's mark, so a dead controller's is ended too */
	ro->mark = ar->mark[0] != '\0' ? ar->mark : NULL;
	ro->timeout_ms = (int64_t)(timeout_s * 1000.0);
	batch_side_opts(ro, b);
	j->tries++;
	return b->ops.start(b->ops.ctx, &j->handle, ro, err);
}

static int
gate_start(struct batch *b, struct attempt_run *ar, struct sc_err *err)
{
	const struct gate_conf *g = &b->cfg->gates[ar->gate];
	struct check_job *j = &ar->jobs[0];
	struct argv_vars v;
	int rc;

	job_release(b, j);
	memset(j, 0, sizeof(*j));
	j->ar = ar;
	snprintf(j->name, sizeof(j->name), "gate-%s", g->name);
	vars_for(&v, ar, "");
	rc = argv_expand(&j->argv, &g->command, &v, err);
	if (rc < 0)
		return err_prefix(err, "gate %s", g->name);
	if (!b->o->tty)
		console_line(b, "%s: attempt %d: gate %s", ar->r.story_id,
		    ar->r.attempt, g->name);
	return job_start(b, ar, j, g->timeout_s, err);
}

static int
review_start(struct batch *b, struct attempt_run *ar, struct sc_err *err)
{
	const struct review_conf *rv = &b->cfg->review;
	struct strlist t = {0}, one = {0};
	struct argv_vars v;
	size_t i;
	int rc;

	/* the review prompt, with the story's placeholders */
	vars_for(&v, ar, "");
	if (strlist_push(&t, rv->prompt ? rv->prompt : review_default_prompt) <
	    0)
		return err_set(err, SC_EOS, "out of memory");
	rc = argv_expand(&one, &t, &v, err);
	strlist_release(&t);
	if (rc < 0)
		return err_prefix(err, "review.prompt");
	free(ar->review_prompt);
	ar->review_prompt = strdup(one.items[0]);
	strlist_release(&one);
	if (ar->review_prompt == NULL)
		return err_set(err, SC_EOS, "out of memory");
	ar->phase = PH_REVIEW;
	checks_free(b, ar);
	ar->jobs = calloc(rv->nagents, sizeof(*ar->jobs));
	if (ar->jobs == NULL)
		return err_set(err, SC_EOS, "out of memory");
	ar->njobs = rv->nagents;
	if (!b->o->tty)
		console_line(b, "%s: attempt %d: review panel of %zu",
		    ar->r.story_id, ar->r.attempt, rv->nagents);
	vars_for(&v, ar, ar->review_prompt);
	for (i = 0; i < rv->nagents; i++) {
		struct check_job *j = &ar->jobs[i];
		j->ar = ar;
		snprintf(j->name, sizeof(j->name), "review%zu", i + 1);
		rc = argv_expand(&j->argv, &rv->agents[i], &v, err);
		if (rc < 0)
			return err_prefix(err, "review.agents[%zu]", i);
		rc = job_start(
		    b, ar, j, b->cfg->agents[ROLE_PRIMARY].timeout_s, err);
		if (rc < 0)
			return rc;
	}
	return 0;
}

int
checks_begin(
    struct batch *b, struct attempt_run *ar, bool *none, struct sc_err *err)
{
	*none = b->cfg->ngates == 0 && b->cfg->review.nagents == 0;
	if (*none)
		return 0;
	if (b->cfg->ngates == 0)
		return review_start(b, ar, err);
	ar->phase = PH_GATE;
	ar->gate = 0;
	ar->jobs = calloc(1, sizeof(*ar->jobs));
	if (ar->jobs == NULL)
		return err_set(err, SC_EOS, "out of memory");
	ar->njobs = 1;
	return gate_start(b, ar, err);
}

void
checks_handles(
    const struct attempt_run *ar, void **handles, size_t *nh, int64_t *next_ms)
{
	size_t i;

	for (i = 0; i < ar->njobs; i++) {
		const struct check_job *j = &ar->jobs[i];
		if (j->handle != NULL)
			handles[(*nh)++] = j->handle;
		else if (!j->resolved && j->next_ms > 0 &&
		    j->next_ms < *next_ms)
			*next_ms = j->next_ms;
	}
}

/* Collect job j if its process is done; 1 when it was. */
static int
job_collect(struct batch *b, struct check_job *j, struct sc_err *err)
{
	int rc;

	if (j->handle == NULL || !b->ops.done(b->ops.ctx, j->handle))
		return 0;
	runner_result_release(&j->res);
	rc = b->ops.finish(b->ops.ctx, j->handle, &j->res, err);
	j->handle = NULL;
	return rc < 0 ? rc : 1;
}

static int
gate_service(
    struct batch *b, struct attempt_run *ar, int *verdict, struct sc_err *err)
{
	const struct gate_conf *g = &b->cfg->gates[ar->gate];
	struct check_job *j = &ar->jobs[0];
	const struct runner_result *res = &j->res;
	int rc = job_collect(b, j, err);

	if (rc <= 0)
		return rc;
	if (res->exit_code == 0 && res->term_signal == 0 && !res->timed_out &&
	    !res->interrupted && !res->spawn_failed) {
		if (++ar->gate < b->cfg->ngates)
			return gate_start(b, ar, err);
		if (b->cfg->review.nagents > 0)
			return review_start(b, ar, err);
		*verdict = 1;
		return 0;
	}
	snprintf(ar->r.gate, sizeof(ar->r.gate), "%s", g->name);
	ar->r.gate_exit =
	    res->term_signal || res->timed_out ? -1 : res->exit_code;
	free(ar->r.gate_output);
	ar->r.gate_output =
	    tail_redacted(b, res->tail, res->tail_len, GATE_OUTPUT_MAX);
	console_line(b, "%s: attempt %d: gate %s failed (%s %d)",
	    ar->r.story_id, ar->r.attempt, g->name,
	    res->timed_out ? "timed out," : "exit",
	    res->term_signal ? res->term_signal : res->exit_code);
	*verdict = -1;
	return 0;
}

/* A reviewer's failure worth another try: the network, a rate limit, a
 * timeout, judged like an agent's attempt. */
static bool
reviewer_transient(const struct batch *b, const struct runner_result *res)
{
	struct classify_input ci;
	struct classification cls;

	memset(&ci, 0, sizeof(ci));
	ci.exit_code = res->term_signal ? -1 : res->exit_code;
	ci.term_signal = res->term_signal;
	ci.timed_out = res->timed_out;
	ci.stalled = res->stalled;
	ci.tasks_completed = 1;
	ci.tasks_total = 1;
	ci.tail = res->tail;
	ci.tail_len = res->tail_len;
	ci.network_on = &b->cfg->policy.network_on;
	ci.permanent_on = &b->cfg->policy.permanent_on;
	classify_attempt(&cls, &ci);
	return cls.outcome == OUTCOME_NETWORK ||
	    cls.outcome == OUTCOME_RATE_LIMIT || cls.outcome == OUTCOME_TIMEOUT;
}

/* Reviewer j (number i + 1) after a wait at time now (stopped: the
 * batch is stopping): start its retry
 * when due, collect it when done, and retry a transient failure with
 * backoff before it counts as "no" (docs/verification.md).  *open: it
 * is still running or will run again. */
static int
reviewer_service(bool *open, struct batch *b, struct attempt_run *ar,
    struct check_job *j, size_t i, int64_t now, bool stopped,
    struct sc_err *err)
{
	const struct review_conf *rv = &b->cfg->review;
	int64_t d;
	int rc;

	*open = false;
	if (j->handle == NULL && j->next_ms > 0 && j->next_ms <= now &&
	    !stopped) {
		j->next_ms = 0;
		rc = job_start(
		    b, ar, j, b->cfg->agents[ROLE_PRIMARY].timeout_s, err);
		if (rc < 0)
			return rc;
	}
	rc = job_collect(b, j, err);
	if (rc < 0)
		return rc;
	if (rc == 0) {
		if (j->handle == NULL && stopped)
			j->resolved = true;
		*open = !j->resolved;
		return 0;
	}
	review_parse(&j->vote, j->res.tail, j->res.tail_len);
	if (j->vote.verdict == REVIEW_NONE &&
	    (j->res.exit_code != 0 || j->res.term_signal != 0 ||
		j->res.timed_out) &&
	    reviewer_transient(b, &j->res) && j->tries <= rv->retries &&
	    !stopped) {
		d = backoff_delay_ms(&b->cfg->policy.backoff, j->tries - 1);
		d = backoff_jitter_ms(d, b->cfg->policy.backoff.jitter,
		    b->o->clock.random01(b->o->clock.ctx));
		j->next_ms = now + (d > 0 ? d : 1);
		console_line(b,
		    "%s: attempt %d: reviewer %zu failed "
		    "(transient), retry %d of %d",
		    ar->r.story_id, ar->r.attempt, i + 1, j->tries,
		    rv->retries);
		*open = true;
		return 0;
	}
	j->resolved = true;
	return 0;
}

/* Every reviewer has voted: the panel's consensus, and on a "no" its
 * reasons for the next attempt's prompt. */
static int
review_conclude(
    struct batch *b, struct attempt_run *ar, int *verdict, struct sc_err *err)
{
	struct review_vote *votes = NULL;
	struct review_tally t;
	char reasons[2048];
	size_t i;

	votes = calloc(ar->njobs, sizeof(*votes));
	if (votes == NULL)
		return err_set(err, SC_EOS, "out of memory");
	for (i = 0; i < ar->njobs; i++)
		votes[i] = ar->jobs[i].vote;
	review_tally(&t, votes, ar->njobs, b->cfg->review.quorum);
	snprintf(ar->r.consensus, sizeof(ar->r.consensus), "%s", t.consensus);
	console_line(b, "%s: attempt %d: review %s (%s)", ar->r.story_id,
	    ar->r.attempt, t.consensus,
	    t.pass ? (t.degraded ? "degraded consensus" : "full consensus")
		   : "not approved");
	if (t.pass) {
		*verdict = 1;
	} else {
		review_reasons(
		    reasons, sizeof(reasons), votes, NULL, ar->njobs);
		snprintf(ar->r.gate, sizeof(ar->r.gate), "review");
		ar->r.gate_exit = -1;
		free(ar->r.review_notes);
		ar->r.review_notes =
		    redact_text(b->secrets, reasons, strlen(reasons), NULL);
		*verdict = -1;
	}
	free(votes);
	return 0;
}

static int
review_service(
    struct batch *b, struct attempt_run *ar, int *verdict, struct sc_err *err)
{
	int64_t now = b->o->clock.now_ms(b->o->clock.ctx);
	bool stopped = b->o->stop != NULL && *b->o->stop;
	size_t i, nopen = 0;
	bool open;
	int rc;

	for (i = 0; i < ar->njobs; i++) {
		if (ar->jobs[i].resolved)
			continue;
		rc = reviewer_service(
		    &open, b, ar, &ar->jobs[i], i, now, stopped, err);
		if (rc < 0)
			return rc;
		nopen += open;
	}
	if (nopen > 0)
		return 0;
	return review_conclude(b, ar, verdict, err);
}

int
checks_service(
    struct batch *b, struct attempt_run *ar, int *verdict, struct sc_err *err)
{
	*verdict = 0;
	if (ar->phase == PH_GATE)
		return gate_service(b, ar, verdict, err);
	if (ar->phase == PH_REVIEW)
		return review_service(b, ar, verdict, err);
	return 0;
}

char *
checks_note(const struct attempt_row *prev)
{
	char *out = NULL;

	if (prev->gate[0] == '\0')
		return NULL;
	if (strcmp(prev->gate, "review") == 0) {
		if (asprintf(&out,
			"Every box was checked, but the review panel "
			"did not approve (%s). What the reviewers said:\n%s",
			prev->consensus,
			prev->review_notes ? prev->review_notes : "(nothing)") <
		    0)
			out = NULL;
		return out;
	}
	if (asprintf(&out,
		"Every box was checked, but the gate \"%s\" failed "
		"(exit %d). The end of its output:\n%s",
		prev->gate, prev->gate_exit,
		prev->gate_output ? prev->gate_output : "") < 0)
		out = NULL;
	return out;
}
