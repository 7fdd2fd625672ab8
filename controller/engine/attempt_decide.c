/*
 * attempt_decide.c - after an attempt: read the story's history once,
 * decide once, and record the decision (SQLite, then the state branch)
 * before anything else happens (docs/retry-strategy.md#where-the-decision-lives);
 * and closing a story that runs nothing.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "controller/engine/attempt_decide.h"
#include "controller/engine/batch_int.h"
#include "controller/engine/batch_notify.h"
#include "controller/engine/console.h"
#include "controller/clock.h"
#include "state/db_evidence.h"
#include "strategies/text.h"

/* The attempts of a story the strategy sees (since its last requeue). */
static int
story_history(struct batch *b, struct attempt_row **rows, size_t *n,
    size_t *first, const struct story_row *st, struct sc_err *err)
{
	size_t i;
	int rc;

	rc = db_attempts_for_story(b->db, rows, n, b->batch_id, st->id, err);
	if (rc < 0)
		return rc;
	for (i = 0; i < *n && (*rows)[i].seq <= st->seq_base; i++)
		;
	*first = i;
	return 0;
}

/* The strategy's view of rows[first..n), numbers relative to the last
 * requeue; replace (when non-NULL) stands in for the row with its id. */
static struct attempt_rec *
to_recs(const struct attempt_row *rows, size_t first, size_t n,
    const struct attempt_row *replace, int base)
{
	struct attempt_rec *h = calloc(n - first + 1, sizeof(*h));
	size_t i;

	if (h == NULL)
		return NULL;
	for (i = first; i < n; i++) {
		const struct attempt_row *a = &rows[i];
		struct attempt_rec *x = &h[i - first];
		if (replace != NULL && a->id == replace->id)
			a = replace;
		x->attempt = a->attempt - base;
		x->role = a->role;
		x->outcome = a->outcome;
		x->counts = a->counts;
		x->started_ms = a->started_ms;
		x->hint_ms = -1;
		x->message = a->error_message;
		x->setup_crash = a->outcome == OUTCOME_CRASH &&
		    strcmp(a->gate, "setup") == 0;
	}
	return h;
}

static enum story_status
status_of(enum decision d)
{
	switch (d) {
	case DECISION_DONE:
		return STATUS_DONE;
	case DECISION_DEFER:
		return STATUS_DEFERRED;
	case DECISION_ESCALATE:
		return STATUS_ESCALATED;
	default:
		return STATUS_PENDING;
	}
}

/* The decision's word in every text that tells it (the console line,
 * the event, the state branch's commit): "stop" for an attempt after
 * which nothing was decided (D4, docs/retry-strategy.md), which the
 * record keeps as no decision (decision: null). */
static const char *
decision_word(const struct decision_out *d)
{
	return d->decision == DECISION_NONE ? "stop"
					    : decision_name(d->decision);
}

static void
print_decision(struct batch *b, const struct attempt_row *r,
    const struct story_row *st, const struct decision_out *d)
{
	char dur[32], delay[32];

	clock_fmt_duration(dur, sizeof(dur), r->ended_ms - r->started_ms);
	clock_fmt_duration(delay, sizeof(delay), r->delay_ms);
	console_line(b,
	    "%s: attempt %d %s (%s): %s %d/%d after %s%s%s -> %s%s%s "
	    "[%s]",
	    st->id, r->attempt, role_name(r->role), r->agent,
	    outcome_name(r->outcome), r->counts.tasks_completed,
	    r->counts.tasks_total, dur,
	    r->error_code != ERRC_NONE && r->error_code != ERRC_INCOMPLETE ? " "
									   : "",
	    r->error_code != ERRC_NONE && r->error_code != ERRC_INCOMPLETE
		? errcode_name(r->error_code)
		: "",
	    decision_word(d),
	    d->decision == DECISION_RETRY || d->decision == DECISION_WAIT
		? " in "
		: "",
	    d->decision == DECISION_RETRY || d->decision == DECISION_WAIT
		? delay
		: "",
	    d->reason);
	if (d->disable_role >= 0)
		console_line(b,
		    "%s: %s agent (%s) disabled for the rest of this "
		    "run: %s",
		    st->id, role_name((enum role)d->disable_role),
		    b->cfg->agents[d->disable_role].name, r->error_message);
	if (d->decision == DECISION_DEFER)
		console_line(b,
		    "Story %s deferred - dev-story hit complexity "
		    "limit at %d/%d",
		    st->id, st->counts.tasks_completed, st->counts.tasks_total);
	else if (d->decision == DECISION_ESCALATE)
		console_line(b, "Story %s escalated - %s", st->id, d->reason);
	else if (d->decision == DECISION_DONE)
		console_line(b,
		    "Story %s done - %d/%d tasks at attempt %d (%s)", st->id,
		    st->counts.tasks_completed, st->counts.tasks_total,
		    r->attempt, r->agent);
}

/* A usage limit pauses agent r->role until its reset: the hint, or
 * D3's default wait when the output named none. */
static void
pause_agent(struct batch *b, const struct attempt_row *r, int64_t hint_ms)
{
	int64_t until = r->ended_ms +
	    (hint_ms >= 0 ? hint_ms : DECIDE_USAGE_WAIT_DEFAULT_MS);

	if (until > b->pause_until[r->role])
		b->pause_until[r->role] = until;
}

/* Read at every decision (one indexed read), so a running batch
 * follows a change without a restart (docs/api.md#retry-policy). */
int
attempt_story_policy(struct policy *out, struct batch *b,
    const struct story_row *st, bool say, struct sc_err *err)
{
	struct sc_err perr = {0};
	char *bb = NULL, *sb = NULL;
	int rc;

	*out = b->cfg->policy;
	rc = db_policy_for_story(b->db, &bb, &sb, st->id, err);
	if (rc == 0 && (bb != NULL || sb != NULL) &&
	    config_policy_effective(out, b->cfg, bb, sb, &perr) < 0 && say)
		console_line(b, "%s: retry-policy override left out: %s",
		    st->id, perr.msg);
	free(bb);
	free(sb);
	return rc;
}

/* decide()'s input after attempt r of st, over its history recs[0..n).
 * A usage limit pauses the agent first: the decision sees the pause. */
static void
decide_input_fill(struct decide_input *in, struct batch *b,
    const struct attempt_row *r, const struct story_row *st,
    const struct attempt_rec *recs, size_t n, const struct classification *cls)
{
	memset(in, 0, sizeof(*in));
	in->history = recs;
	in->n = n;
	in->has_fallback = b->cfg->agents[ROLE_FALLBACK].configured;
	in->disabled[0] = b->disabled[0];
	in->disabled[1] = b->disabled[1];
	in->now_ms = r->ended_ms;
	in->retry_on_matched = cls == NULL || cls->retry_on_matched;
	in->budget_spent = b->cfg->budget.story_max_cost_usd > 0 &&
	    st->cost_usd >= b->cfg->budget.story_max_cost_usd;
	in->paused_until[0] = b->pause_until[0];
	in->paused_until[1] = b->pause_until[1];
}

/* r's decision fields from d, with the next attempt stored with it: the
 * next attempt is prepared from it (attempt_next()); a decision that
 * ends the story leaves none. */
static void
decision_store(struct attempt_row *r, struct batch *b,
    const struct story_row *st, const struct decision_out *d)
{
	r->decision = d->decision;
	r->counted = d->counted;
	snprintf(r->reason, sizeof(r->reason), "%s", d->reason);
	r->delay_ms =
	    d->decision == DECISION_RETRY || d->decision == DECISION_WAIT
	    ? decide_delay_with_jitter(d, b->o->clock.random01(b->o->clock.ctx))
	    : 0;
	r->timeout_factor = d->timeout_factor;
	r->poll_factor = d->poll_factor;
	r->next_attempt = 0;
	r->next_role = ROLE_PRIMARY;
	r->not_before_ms = 0;
	if (status_of(d->decision) == STATUS_PENDING) {
		r->next_attempt = st->attempt_base + d->next_attempt;
		r->next_role = d->next_role;
		r->not_before_ms = r->ended_ms + r->delay_ms;
	}
}

/* What decision d does to the batch: an agent disabled, a usage limit's
 * pause persisted, the batch stopped. */
static int
decision_apply_batch(struct batch *b, const struct attempt_row *r,
    const struct decision_out *d, struct sc_err *err)
{
	char key[32], val[32], when[40];
	int rc;

	if (d->disable_role >= 0)
		b->disabled[d->disable_role] = true;
	if (r->outcome == OUTCOME_USAGE_LIMIT) {
		/* a usage limit is the agent's, not the story's: no attempt
		 * of that agent anywhere in the batch before the reset, and
		 * a restart honours it (batch_load_pauses) */
		snprintf(key, sizeof(key), "pause.%s", role_name(r->role));
		snprintf(val, sizeof(val), "%lld",
		    (long long)b->pause_until[r->role]);
		rc = db_meta_set(b->db, key, val, err);
		if (rc < 0)
			return rc;
	}
	if (!d->stop_batch)
		return 0;
	b->stop_batch = true;
	if (d->resume_after_ms > 0) {
		clock_fmt_iso(when, sizeof(when), d->resume_after_ms);
		snprintf(b->stop_reason, sizeof(b->stop_reason),
		    "%.400s (resume after %s)", d->reason, when);
	} else {
		snprintf(
		    b->stop_reason, sizeof(b->stop_reason), "%s", d->reason);
	}
	return 0;
}

/* Story st after attempt r and its decision d. */
static void
story_from_attempt(struct story_row *st, const struct attempt_row *r,
    const struct decision_out *d)
{
	st->status = status_of(d->decision);
	snprintf(st->reason, sizeof(st->reason), "%s", d->reason);
	st->counts = r->counts;
	st->attempts = r->counted ? r->attempt : r->attempt - 1;
	snprintf(st->last_agent, sizeof(st->last_agent), "%s", r->agent);
	st->last_outcome = r->outcome;
	st->updated_ms = r->ended_ms;
}

/* The event the decision adds (*event malloc'd) and its kind. */
static int
decision_event(char **event, const char **kind, const struct attempt_row *r,
    const struct story_row *st, const struct decision_out *d,
    struct sc_err *err)
{
	int rc;

	*kind = "decision";
	if (d->decision == DECISION_DEFER) {
		*kind = "deferred";
		rc = asprintf(event,
		    "Story %s deferred - dev-story hit "
		    "complexity limit at %d/%d",
		    st->id, st->counts.tasks_completed, st->counts.tasks_total);
	} else {
		if (d->decision == DECISION_ESCALATE)
			*kind = "escalated";
		else if (d->decision == DECISION_DONE)
			*kind = "done";
		rc = asprintf(event, "attempt %d %s (%s): %s %d/%d -> %s: %s",
		    r->attempt, role_name(r->role), r->agent,
		    outcome_name(r->outcome), r->counts.tasks_completed,
		    r->counts.tasks_total, decision_word(d), d->reason);
	}
	if (rc < 0) {
		*event = NULL;
		return err_set(err, SC_EOS, "out of memory");
	}
	return 0;
}

/* Story st has just ended escalated or deferred (anything else: no-op):
 * a person may want to hear it (docs/notifications.md#events); error is
 * its last agent's error message, or NULL. */
static void
notify_story_end(struct batch *b, const struct story_row *st, const char *error)
{
	struct notify_msg m = {0};

	if (st->status != STATUS_ESCALATED && st->status != STATUS_DEFERRED)
		return;
	m.event =
	    st->status == STATUS_DEFERRED ? NOTIFY_DEFERRED : NOTIFY_ESCALATED;
	m.story_id = st->id;
	m.reason = st->reason;
	m.error = error;
	batch_notify(b, &m, NULL);
}

/* The decision in SQLite (one transaction with the attempt and the
 * story), then on the state branch, then on the console. */
static int
decision_record(struct batch *b, const struct attempt_row *r,
    struct story_row *st, const struct decision_out *d,
    const struct evidence_note *ev, struct sc_err *err)
{
	char *msg = NULL, *event = NULL;
	const char *kind;
	int rc;

	rc = decision_event(&event, &kind, r, st, d, err);
	if (rc < 0)
		goto out;
	/* group commit: this transaction's fsync is the next attempt's
	 * (statebranch_defer_story) */
	db_defer_sync(b->db);
	rc = db_attempt_finish_noted(b->db, r, st, kind, event, ev, err);
	if (rc < 0)
		goto out;
	if (asprintf(&msg, "%s: attempt %d (%s %s) %s -> %s\n%s", st->id,
		r->attempt, role_name(r->role), r->agent,
		outcome_name(r->outcome), decision_word(d), d->reason) < 0) {
		msg = NULL;
		rc = err_set(err, SC_EOS, "out of memory");
		goto out;
	}
	rc = statebranch_defer_story(
	    &b->sb, b->batch_id, st, msg, batch_now_ms(b), err);
	if (rc < 0)
		goto out;
	print_decision(b, r, st, d);
	notify_story_end(b, st, r->error_message);
out:
	free(msg);
	free(event);
	return rc;
}

/* A usage limit paused agent r->role: say until when. */
static void
notify_usage_limit(
    struct batch *b, const struct attempt_row *r, const struct story_row *st)
{
	struct notify_msg m = {0};
	char when[40], msg[400];

	clock_fmt_iso(when, sizeof(when), b->pause_until[r->role]);
	snprintf(msg, sizeof(msg),
	    "%s agent %s hit its usage limit: no attempt of it before %s",
	    role_name(r->role), r->agent, when);
	m.event = NOTIFY_USAGE_LIMIT;
	m.story_id = st->id;
	m.reason = msg;
	m.agent = r->agent;
	batch_notify(b, &m, NULL);
}

int
attempt_decide_record(bool *transient_zero, struct batch *b,
    struct attempt_row *r, struct story_row *st,
    const struct classification *cls, int64_t hint_ms,
    const struct evidence_note *ev, struct sc_err *err)
{
	struct attempt_row *rows = NULL;
	struct attempt_rec *recs = NULL;
	struct decide_input in;
	struct decision_out d;
	struct policy pol;
	size_t n = 0, first = 0;
	int rc;

	rc = story_history(b, &rows, &n, &first, st, err);
	if (rc < 0)
		goto out;
	rc = attempt_story_policy(&pol, b, st, true, err);
	if (rc < 0)
		goto out;
	recs = to_recs(rows, first, n, r, st->attempt_base);
	if (recs == NULL || n == first) {
		rc = err_set(err, SC_ESOFTWARE,
		    "attempt %d of %s is missing "
		    "from the database",
		    r->attempt, st->id);
		goto out;
	}
	recs[n - first - 1].hint_ms = hint_ms;
	if (transient_zero != NULL)
		*transient_zero = breaker_transient_zero(recs, n - first);
	st->cost_usd += r->cost_usd;
	b->spend_usd += r->cost_usd;
	if (r->outcome == OUTCOME_USAGE_LIMIT)
		pause_agent(b, r, hint_ms);
	decide_input_fill(&in, b, r, st, recs, n - first, cls);
	in.policy = &pol;
	rc = decide(&d, &in);
	if (rc < 0) {
		err_set(err, rc, "%s", d.reason);
		goto out;
	}
	decision_store(r, b, st, &d);
	rc = decision_apply_batch(b, r, &d, err);
	if (rc < 0)
		goto out;
	story_from_attempt(st, r, &d);
	rc = decision_record(b, r, st, &d, ev, err);
	if (rc == 0 && r->outcome == OUTCOME_USAGE_LIMIT)
		notify_usage_limit(b, r, st);
out:
	free(recs);
	attempt_rows_free(rows, n);
	return rc;
}

int
attempt_transient_zero(
    struct batch *b, const struct story_row *st, bool *out, struct sc_err *err)
{
	struct attempt_row *rows = NULL;
	struct attempt_rec *recs = NULL;
	size_t n = 0, first = 0;
	int rc;

	*out = false;
	rc = story_history(b, &rows, &n, &first, st, err);
	if (rc < 0)
		return rc;
	if (n > first) {
		recs = to_recs(rows, first, n, NULL, st->attempt_base);
		if (recs == NULL)
			rc = err_set(err, SC_EOS, "out of memory");
		else
			*out = breaker_transient_zero(recs, n - first);
	}
	free(recs);
	attempt_rows_free(rows, n);
	return rc;
}

int
attempt_settle(struct batch *b, struct story_row *st, enum story_status status,
    const char *reason, const char *kind, struct sc_err *err)
{
	char *msg = NULL;
	int rc;

	st->status = status;
	text_copy(st->reason, sizeof(st->reason), reason);
	st->updated_ms = b->o->clock.now_ms(b->o->clock.ctx);
	rc = db_story_update(b->db, st, err);
	if (rc < 0)
		goto out;
	rc = db_event_add(
	    b->db, b->batch_id, st->updated_ms, st->id, kind, reason, err);
	if (rc < 0)
		goto out;
	if (asprintf(&msg, "%s: %s\n%s", st->id, status_name(status), reason) <
	    0) {
		msg = NULL;
		rc = err_set(err, SC_EOS, "out of memory");
		goto out;
	}
	rc = statebranch_commit_story(
	    &b->sb, b->batch_id, st, msg, batch_now_ms(b), err);
	console_line(
	    b, "Story %s %s - %s", st->id, status_name(status), reason);
	notify_story_end(b, st, NULL);
out:
	free(msg);
	return rc;
}
