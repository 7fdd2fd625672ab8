/*
 * attempt.c - one story, attempt after attempt: choose the agent, wait
 * the delay the last decision set, start the agent with its attempt row
 * already committed as running, classify how it ended, decide, and
 * record the decision (SQLite, then the state branch) before anything
 * else happens.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "controller/argv.h"
#include "controller/attempt.h"
#include "controller/attempt_run.h"
#include "controller/pgroup.h"
#include "controller/checks.h"
#include "controller/console.h"
#include "strategies/adapter.h"
#include "controller/prompt.h"
#include "controller/tz.h"
#include "state/redact.h"
#include "strategies/reader.h"

static void
copy_redacted(char *dst, size_t len, const char *src)
{
	/* cut at a character boundary: the marks redaction puts in can
	 * make the text longer than dst */
	redact_copy(dst, len, src);
}

/* The tree slot sl's story must stay in: its worktree, or the project. */
static const char *
slot_root(const struct batch *b, const struct slot *sl)
{
	return sl->worktree != NULL ? sl->worktree : b->cfg->root;
}

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
		x->tasks_completed = a->tasks_completed;
		x->tasks_total = a->tasks_total;
		x->subtasks_completed = a->subtasks_completed;
		x->subtasks_total = a->subtasks_total;
		x->started_ms = a->started_ms;
		x->hint_ms = -1;
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
	    outcome_name(r->outcome), r->tasks_completed, r->tasks_total, dur,
	    r->error_code != ERRC_NONE && r->error_code != ERRC_INCOMPLETE ? " "
									   : "",
	    r->error_code != ERRC_NONE && r->error_code != ERRC_INCOMPLETE
		? errcode_name(r->error_code)
		: "",
	    d->decision == DECISION_NONE ? "stop" : decision_name(d->decision),
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
		    st->id, st->tasks_completed, st->tasks_total);
	else if (d->decision == DECISION_ESCALATE)
		console_line(b, "Story %s escalated - %s", st->id, d->reason);
	else if (d->decision == DECISION_DONE)
		console_line(b,
		    "Story %s done - %d/%d tasks at attempt %d (%s)", st->id,
		    st->tasks_completed, st->tasks_total, r->attempt, r->agent);
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

int
attempt_decide_record(bool *transient_zero, struct batch *b,
    struct attempt_row *r, struct story_row *st,
    const struct classification *cls, int64_t hint_ms, struct sc_err *err)
{
	struct attempt_row *rows = NULL;
	struct attempt_rec *recs = NULL;
	struct decide_input in;
	struct decision_out d;
	size_t n = 0, first = 0;
	char *msg = NULL, *event = NULL;
	const char *kind = "decision";
	int rc;

	rc = story_history(b, &rows, &n, &first, st, err);
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
	memset(&in, 0, sizeof(in));
	in.policy = &b->cfg->policy;
	in.history = recs;
	in.n = n - first;
	in.has_fallback = b->cfg->agents[ROLE_FALLBACK].configured;
	in.disabled[0] = b->disabled[0];
	in.disabled[1] = b->disabled[1];
	in.now_ms = r->ended_ms;
	in.retry_on_matched = cls == NULL || cls->retry_on_matched;
	in.budget_spent = b->cfg->budget.story_max_cost_usd > 0 &&
	    st->cost_usd >= b->cfg->budget.story_max_cost_usd;
	if (r->outcome == OUTCOME_USAGE_LIMIT)
		pause_agent(b, r, hint_ms);
	in.paused_until[0] = b->pause_until[0];
	in.paused_until[1] = b->pause_until[1];
	rc = decide(&d, &in);
	if (rc < 0) {
		err_set(err, rc, "%s", d.reason);
		goto out;
	}
	r->decision = d.decision;
	r->counted = d.counted;
	snprintf(r->reason, sizeof(r->reason), "%s", d.reason);
	r->delay_ms =
	    d.decision == DECISION_RETRY || d.decision == DECISION_WAIT
	    ? decide_delay_with_jitter(
		  &d, b->o->clock.random01(b->o->clock.ctx))
	    : 0;
	r->timeout_factor = d.timeout_factor;
	r->poll_factor = d.poll_factor;
	/* the decision's next attempt is stored with it, and the next
	 * attempt is prepared from it (next_attempt()); a decision that
	 * ends the story leaves none */
	r->next_attempt = 0;
	r->next_role = ROLE_PRIMARY;
	r->not_before_ms = 0;
	if (status_of(d.decision) == STATUS_PENDING) {
		r->next_attempt = st->attempt_base + d.next_attempt;
		r->next_role = d.next_role;
		r->not_before_ms = r->ended_ms + r->delay_ms;
	}
	if (d.disable_role >= 0)
		b->disabled[d.disable_role] = true;
	if (r->outcome == OUTCOME_USAGE_LIMIT) {
		/* a usage limit is the agent's, not the story's: no attempt
		 * of that agent anywhere in the batch before the reset, and
		 * a restart honours it (batch_load_pauses) */
		char key[32], val[32];
		snprintf(key, sizeof(key), "pause.%s", role_name(r->role));
		snprintf(val, sizeof(val), "%lld",
		    (long long)b->pause_until[r->role]);
		rc = db_meta_set(b->db, key, val, err);
		if (rc < 0)
			goto out;
	}
	if (d.stop_batch) {
		char when[40];
		b->stop_batch = true;
		if (d.resume_after_ms > 0) {
			clock_fmt_iso(when, sizeof(when), d.resume_after_ms);
			snprintf(b->stop_reason, sizeof(b->stop_reason),
			    "%.400s (resume after %s)", d.reason, when);
		} else {
			snprintf(b->stop_reason, sizeof(b->stop_reason), "%s",
			    d.reason);
		}
	}
	st->status = status_of(d.decision);
	snprintf(st->reason, sizeof(st->reason), "%s", d.reason);
	st->tasks_completed = r->tasks_completed;
	st->tasks_total = r->tasks_total;
	st->subtasks_completed = r->subtasks_completed;
	st->subtasks_total = r->subtasks_total;
	st->attempts = r->counted ? r->attempt : r->attempt - 1;
	snprintf(st->last_agent, sizeof(st->last_agent), "%s", r->agent);
	st->last_outcome = r->outcome;
	st->updated_ms = r->ended_ms;
	if (d.decision == DECISION_DEFER) {
		kind = "deferred";
		rc = asprintf(&event,
		    "Story %s deferred - dev-story hit "
		    "complexity limit at %d/%d",
		    st->id, st->tasks_completed, st->tasks_total);
	} else {
		if (d.decision == DECISION_ESCALATE)
			kind = "escalated";
		else if (d.decision == DECISION_DONE)
			kind = "done";
		rc = asprintf(&event, "attempt %d %s (%s): %s %d/%d -> %s: %s",
		    r->attempt, role_name(r->role), r->agent,
		    outcome_name(r->outcome), r->tasks_completed,
		    r->tasks_total,
		    d.decision == DECISION_NONE ? "none"
						: decision_name(d.decision),
		    d.reason);
	}
	if (rc < 0) {
		event = NULL;
		rc = err_set(err, SC_EOS, "out of memory");
		goto out;
	}
	/* group commit: this transaction's fsync is the next attempt's
	 * (statebranch_defer_story) */
	db_defer_sync(b->db);
	rc = db_attempt_finish(b->db, r, st, kind, event, err);
	if (rc < 0)
		goto out;
	if (asprintf(&msg, "%s: attempt %d (%s %s) %s -> %s\n%s", st->id,
		r->attempt, role_name(r->role), r->agent,
		outcome_name(r->outcome),
		d.decision == DECISION_NONE ? "none"
					    : decision_name(d.decision),
		d.reason) < 0) {
		msg = NULL;
		rc = err_set(err, SC_EOS, "out of memory");
		goto out;
	}
	rc = statebranch_defer_story(
	    &b->sb, b->batch_id, st, msg, batch_now_ms(b), err);
	if (rc < 0)
		goto out;
	print_decision(b, r, st, &d);
out:
	free(msg);
	free(event);
	free(recs);
	attempt_rows_free(rows, n);
	return rc;
}

static int
on_start(void *ctx, int pid)
{
	struct attempt_run *ar = ctx;
	uint64_t ticks = 0;

	ar->r.pid = pid;
	if (pgroup_starttime(&ticks, pid) < 0)
		ticks = 0;
	ar->r.pid_start = (int64_t)ticks;
	ar->rc = db_attempt_set_pid(
	    ar->b->db, ar->r.id, pid, ar->r.pid_start, &ar->err);
	return ar->rc;
}

static int
on_poll(void *ctx, int64_t elapsed_ms, int pgid)
{
	struct attempt_run *ar = ctx;
	struct batch *b = ar->b;
	struct progress pr;
	struct db_progress hb;
	int64_t now = b->o->clock.now_ms(b->o->clock.ctx);

	(void)elapsed_ms;
	(void)pgid;
	if (now - ar->last_read_ms >= ar->poll_ms) {
		ar->last_read_ms = now;
		if (story_read_progress(&pr, ar->sl->abspath,
			slot_root(ar->b, ar->sl), b->cfg->tasks_heading,
			NULL) == 0) {
			ar->token = pr.tasks_completed;
			ar->r.tasks_completed = pr.tasks_completed;
			ar->r.tasks_total = pr.tasks_total;
			ar->r.subtasks_completed = pr.subtasks_completed;
			ar->r.subtasks_total = pr.subtasks_total;
			hb.tasks_completed = pr.tasks_completed;
			hb.tasks_total = pr.tasks_total;
			hb.subtasks_completed = pr.subtasks_completed;
			hb.subtasks_total = pr.subtasks_total;
			/* a failed heartbeat is not worth killing the agent */
			db_attempt_heartbeat(b->db, ar->r.id, now, &hb, NULL);
		}
	}
	console_status(b);
	return ar->token;
}

static int
argv_json(char **out, const struct strlist *argv)
{
	json_t *arr = json_array();
	char *text = NULL;
	size_t i;

	*out = NULL;
	for (i = 0; arr != NULL && i < argv->n; i++)
		json_array_append_new(arr, json_string(argv->items[i]));
	if (arr != NULL)
		text = json_dumps(arr, JSON_COMPACT);
	json_decref(arr);
	if (text == NULL)
		return SC_EOS;
	*out = redact_secrets(text, strlen(text));
	free(text);
	return *out == NULL ? SC_EOS : 0;
}

/* Where the next attempt stands: its number, agent, factors and the
 * earliest time it may start (the last decision's delay). */
struct next {
	int attempt; /* absolute number */
	enum role role;
	double timeout_factor, poll_factor;
	int64_t not_before_ms;
	const struct attempt_row *prev; /* &last, NULL before the first */
	struct attempt_row last; /* owned: attempt_row_release() */
};

/* The D9/D10 factors of the decision made after row a. */
static void
next_factors(struct next *nx, const struct attempt_row *a)
{
	nx->timeout_factor = a->timeout_factor > 0 ? a->timeout_factor : 1;
	nx->poll_factor = a->poll_factor > 0 ? a->poll_factor : 1;
}

/*
 * The next attempt of story st, read back from the decision stored with
 * its last attempt since the last requeue (docs/retry-strategy.md "Where
 * the decision lives"): nothing is decided again here.  The story's last
 * row (and, after an uncounted one, its last counted row, for the
 * factors) is one indexed read each, not the history.
 */
static int
next_attempt(struct next *nx, struct batch *b, const struct story_row *st,
    struct sc_err *err)
{
	const struct attempt_row *last;
	struct attempt_row counted;
	bool fb = b->cfg->agents[ROLE_FALLBACK].configured;
	int found = 0;
	int rc;

	memset(nx, 0, sizeof(*nx));
	nx->timeout_factor = 1;
	nx->poll_factor = 1;
	rc = db_attempt_last(b->db, &nx->last, &found, b->batch_id, st->id,
	    st->seq_base, false, err);
	if (rc < 0)
		goto out;
	if (!found) {
		/* the first attempt, or the first since a requeue */
		nx->attempt = st->attempt_base + 1;
		nx->role = decide_role_for(1, fb, b->disabled);
		goto out;
	}
	last = &nx->last;
	nx->prev = last;
	/* D9/D10 factors come from the last counted attempt's decision: a
	 * rerun after a usage limit or an interrupt keeps them */
	if (last->counted) {
		next_factors(nx, last);
	} else {
		rc = db_attempt_last(b->db, &counted, &found, b->batch_id,
		    st->id, st->seq_base, true, err);
		if (rc < 0)
			goto out;
		if (found)
			next_factors(nx, &counted);
		attempt_row_release(&counted);
	}
	if (last->next_attempt > 0) {
		nx->attempt = last->next_attempt;
		nx->role = last->next_role;
		nx->not_before_ms = last->not_before_ms;
	} else {
		/* a row written before schema 4 stored the decision: the
		 * same number rule, the same agent for a rerun */
		nx->attempt = decide_next_attempt(last->attempt, last->counted);
		nx->role = last->counted
		    ? decide_role_for(
			  nx->attempt - st->attempt_base, fb, b->disabled)
		    : last->role;
		nx->not_before_ms = last->ended_ms + last->delay_ms;
	}
out:
	/* an agent disabled since the decision (D2 in another story) is
	 * skipped while the other one can run */
	if (b->disabled[nx->role] && fb && !b->disabled[!nx->role])
		nx->role = (enum role) !nx->role;
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
	snprintf(st->reason, sizeof(st->reason), "%s", reason);
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
out:
	free(msg);
	return rc;
}

/* include_dependency_result (docs/scheduling.md#the-dependencys-result):
 * the final agent message of each dependency of s, for the prompt; *out
 * NULL when not wanted. */
static int
dependency_result(
    char **out, struct batch *b, const struct story *s, struct sc_err *err)
{
	const struct story_conf *sc = &b->cfg->stories[s - b->o->stories];
	struct attempt_row *rows = NULL;
	const char *text;
	char *buf = NULL;
	size_t size = 0, n = 0, i, k;
	FILE *f = NULL;
	int rc = 0;

	*out = NULL;
	if (!sc->include_dependency_result || sc->depends_on.n == 0)
		return 0;
	f = open_memstream(&buf, &size);
	if (f == NULL)
		return err_set(err, SC_EOS, "out of memory");
	for (k = 0; k < sc->depends_on.n; k++) {
		rc = db_attempts_for_story(b->db, &rows, &n, b->batch_id,
		    sc->depends_on.items[k], err);
		if (rc < 0)
			goto out;
		text = NULL;
		for (i = n; i > 0 && text == NULL; i--)
			if (rows[i - 1].result_text != NULL &&
			    rows[i - 1].result_text[0] != '\0')
				text = rows[i - 1].result_text;
		if (sc->depends_on.n > 1)
			fprintf(f, "%s(%s)\n", k ? "\n" : "",
			    sc->depends_on.items[k]);
		fprintf(f, "%s",
		    text != NULL ? text : "(no final message was recorded)");
		attempt_rows_free(rows, n);
		rows = NULL;
		n = 0;
	}
out:
	if (fclose(f) != 0 && rc == 0)
		rc = err_set(err, SC_EOS, "out of memory");
	attempt_rows_free(rows, n);
	if (rc < 0)
		free(buf);
	else
		*out = buf;
	return rc;
}

static void
attempt_run_free(struct attempt_run *ar)
{
	if (ar == NULL)
		return;
	checks_free(ar->b, ar);
	runner_result_release(&ar->agent_res);
	free(ar->review_prompt);
	attempt_row_release(&ar->r);
	strlist_release(&ar->argv);
	free(ar->prompt);
	free(ar->prompt_file);
	free(ar->depres);
	free(ar);
}

/* Begin attempt nx of the story in sl: the prompt, the argv, the row
 * committed as running, then the agent started. */
static int
attempt_begin(struct batch *b, struct slot *sl, const struct next *nx,
    const struct progress *now_pr, struct sc_err *err)
{
	const struct config *cfg = b->cfg;
	const struct agent_conf *ag = &cfg->agents[nx->role];
	struct story_row *st = sl->st;
	struct attempt_run *ar = NULL;
	struct argv_vars vars;
	struct prompt_prev prev;
	struct runner_opts *ro;
	char attempt_s[16];
	int rc;

	ar = calloc(1, sizeof(*ar));
	if (ar == NULL)
		return err_set(err, SC_EOS, "out of memory");
	ar->b = b;
	ar->sl = sl;
	ar->start = *now_pr;
	memset(&prev, 0, sizeof(prev));
	memset(&vars, 0, sizeof(vars));
	vars.story_file = sl->s->file;
	vars.story_id = sl->s->id;
	vars.role = role_name(nx->role);
	vars.stalled_task = now_pr->stalled_task;
	vars.repo = sl->cwd;
	vars.attempt = nx->attempt - st->attempt_base;
	vars.max_attempts = cfg->policy.max_attempts;
	if (nx->prev != NULL && vars.attempt >= 2) {
		prev.attempt = nx->prev->attempt - st->attempt_base;
		if (prev.attempt < 1)
			prev.attempt = 0;
		prev.tasks_completed = now_pr->tasks_completed;
		prev.tasks_total = now_pr->tasks_total;
		prev.stalled_task = now_pr->stalled_task;
		prev.outcome = outcome_name(nx->prev->outcome);
	}
	rc = dependency_result(&ar->depres, b, sl->s, err);
	if (rc < 0)
		goto out;
	prev.dependency_result = ar->depres;
	if (nx->prev != NULL && vars.attempt >= 2) {
		ar->review_prompt = checks_note(nx->prev);
		prev.check_note = ar->review_prompt;
	}
	rc = prompt_render(&ar->prompt, cfg->prompt, &vars, &prev, err);
	if (rc < 0)
		goto out;
	vars.prompt = ar->prompt;
	ar->r.started_ms = b->o->clock.now_ms(b->o->clock.ctx);
	if (argv_uses(&ag->command, "prompt_file")) {
		/* next to the attempt's log, 0600 like it */
		if (asprintf(&ar->prompt_file, "%s/%s.a%d.%lld.prompt",
			b->logdir, st->id, nx->attempt,
			(long long)ar->r.started_ms) < 0) {
			ar->prompt_file = NULL;
			rc = err_set(err, SC_EOS, "out of memory");
			goto out;
		}
		rc = prompt_write_file(ar->prompt_file, ar->prompt, err);
		if (rc < 0)
			goto out;
		vars.prompt_file = ar->prompt_file;
	}
	rc = argv_expand(&ar->argv, &ag->command, &vars, err);
	if (rc < 0) {
		err_prefix(err, "agent %s", role_name(nx->role));
		goto out;
	}
	if (argv_fits(&ar->argv, environ, err) < 0) {
		/* execve would fail with E2BIG on every attempt: no attempt
		 * runs, and the story says why (docs/configuration.md) */
		char why[600];
		snprintf(why, sizeof(why),
		    "agent %s (%s) cannot be started: %.500s",
		    role_name(nx->role), ag->name, err->msg);
		err_clear(err);
		rc = attempt_settle(
		    b, st, STATUS_ESCALATED, why, "escalated", err);
		goto out;
	}
	ar->r.batch_id = b->batch_id;
	snprintf(ar->r.story_id, sizeof(ar->r.story_id), "%s", st->id);
	ar->r.attempt = nx->attempt;
	ar->r.counted = true;
	ar->r.role = nx->role;
	snprintf(ar->r.agent, sizeof(ar->r.agent), "%s", ag->name);
	if (argv_json(&ar->r.argv_json, &ar->argv) < 0) {
		rc = err_set(err, SC_EOS, "out of memory");
		goto out;
	}
	ar->r.controller_pid = getpid();
	ar->r.exit_code = -1;
	ar->r.tasks_completed = now_pr->tasks_completed;
	ar->r.tasks_total = now_pr->tasks_total;
	ar->r.subtasks_completed = now_pr->subtasks_completed;
	ar->r.subtasks_total = now_pr->subtasks_total;
	ar->r.timeout_factor = 1;
	ar->r.poll_factor = 1;
	snprintf(attempt_s, sizeof(attempt_s), "%d", ar->r.attempt);
	if ((size_t)snprintf(ar->r.log_path, sizeof(ar->r.log_path),
		"%s/%s.a%s.%lld.log", b->logdir, st->id, attempt_s,
		(long long)ar->r.started_ms) >= sizeof(ar->r.log_path)) {
		rc = err_set(
		    err, SC_EIO, "log path too long under %s", b->logdir);
		goto out;
	}
	st->status = STATUS_RUNNING;
	st->updated_ms = ar->r.started_ms;
	/* one durable transaction: the story running and its attempt row */
	rc = db_tx_begin(b->db, err);
	if (rc == 0)
		rc = db_story_update(b->db, st, err);
	if (rc == 0)
		rc = db_attempt_begin(b->db, &ar->r, err);
	if (rc == 0)
		rc = db_tx_commit(b->db, err);
	if (rc < 0) {
		db_tx_rollback(b->db);
		goto out;
	}
	/* that commit's fsync made the last decision durable too: now the
	 * branch may show it */
	rc = statebranch_flush(&b->sb, batch_now_ms(b), err);
	if (rc < 0) {
		/* its agent never started: closed as interrupted, not
		 * counted, so that resume runs it again */
		sl->run = ar;
		sl->state = SLOT_RUNNING;
		ar = NULL;
		slot_abandon(b, sl);
		goto out;
	}
	if (!b->o->tty)
		console_line(b, "%s: attempt %d %s (%s) started, %d/%d tasks",
		    st->id, ar->r.attempt, role_name(ar->r.role), ag->name,
		    ar->r.tasks_completed, ar->r.tasks_total);

	ro = &ar->ro;
	ro->argv = (const char *const *)ar->argv.items;
	ro->cwd = sl->cwd;
	ro->env_add = &ag->env;
	ro->log_path = ar->r.log_path;
	ro->timeout_ms = (int64_t)(ag->timeout_s * nx->timeout_factor * 1000.0);
	ro->stall_timeout_ms =
	    (int64_t)((ag->stall_timeout_s >= 0 ? ag->stall_timeout_s
						: cfg->policy.stall_timeout_s) *
		1000.0);
	ro->kill_grace_ms = b->o->kill_grace_ms_override >= 0
	    ? b->o->kill_grace_ms_override
	    : (int64_t)(cfg->policy.kill_grace_s * 1000.0);
	ar->poll_ms =
	    (int64_t)(cfg->policy.poll_interval_s * nx->poll_factor * 1000.0);
	ar->last_read_ms = ar->r.started_ms;
	ar->token = ar->r.tasks_completed;
	ro->poll_interval_ms = ar->poll_ms < 1000 ? ar->poll_ms : 1000;
	ro->on_poll = on_poll;
	ro->on_start = on_start;
	ro->ctx = ar;
	ro->stop = b->o->stop;
	ro->wake_fd = b->o->wake_fd;
	ro->tail_max = 64 * 1024;
	rc = b->ops.start(b->ops.ctx, &ar->handle, ro, err);
	if (rc < 0) {
		if (ar->rc < 0) {
			*err = ar->err;
			rc = ar->rc;
		}
		goto out;
	}
	sl->run = ar;
	sl->state = SLOT_RUNNING;
	ar = NULL;
out:
	attempt_run_free(ar);
	return rc;
}

/* policy.max_wait_s from now, or until when no cap is set. */
static int64_t
capped_wait(const struct batch *b, int64_t until, int64_t now)
{
	int64_t cap = (int64_t)(b->cfg->policy.max_wait_s * 1000.0);

	return cap > 0 && until > now + cap ? now + cap : until;
}

/*
 * D3 at the start of an attempt (a pause read back after a restart, or
 * left by another story): the agent role is paused past max_wait_s and
 * so is every other enabled agent.  Nothing can run within the longest
 * wait the policy allows: the batch stops (exit 75) instead of starting
 * an agent that is still paused.
 */
static bool
paused_past_cap(const struct batch *b, enum role role, int64_t now)
{
	int64_t cap = (int64_t)(b->cfg->policy.max_wait_s * 1000.0);
	enum role o = role == ROLE_PRIMARY ? ROLE_FALLBACK : ROLE_PRIMARY;
	bool other_on =
	    b->cfg->agents[ROLE_FALLBACK].configured && !b->disabled[o];

	if (b->pause_until[role] <= now ||
	    (cap > 0 && b->pause_until[role] <= now + cap))
		return false;
	if (cap <= 0)
		return false; /* no cap: the wait is simply the pause */
	return !other_on || b->pause_until[o] > now + cap;
}

/* b->stop_reason for paused_past_cap(): every pause and when to resume. */
static void
paused_reason(struct batch *b, int64_t now)
{
	char when[40], wait[32];
	int64_t first = 0;
	int i;

	for (i = 0; i < 2; i++)
		if (b->pause_until[i] > now && !b->disabled[i] &&
		    (first == 0 || b->pause_until[i] < first))
			first = b->pause_until[i];
	clock_fmt_iso(when, sizeof(when), first);
	clock_fmt_duration(wait, sizeof(wait), first - now);
	snprintf(b->stop_reason, sizeof(b->stop_reason),
	    "D3: every enabled agent is paused by a usage limit past "
	    "policy.max_wait_s; the batch stops: resume after %s (in %s)",
	    when, wait);
}

/* Where the story of slot sl stands before its next attempt. */
int
slot_prepare(struct batch *b, struct slot *sl, struct sc_err *err)
{
	struct story_row *st = sl->st;
	struct progress pr;
	struct next nx;
	char wait[32], why[300];
	int64_t now;
	int rc = 0;

	memset(&nx, 0, sizeof(nx));
	sl->state = SLOT_FREE;
	rc = story_read_progress(
	    &pr, sl->abspath, slot_root(b, sl), b->cfg->tasks_heading, err);
	if (rc < 0) {
		/* one unreadable story must not end the night */
		snprintf(why, sizeof(why), "cannot read the story: %.200s",
		    err->msg);
		err_clear(err);
		rc = attempt_settle(b, st, STATUS_INVALID, why, "invalid", err);
		goto out;
	}
	if (pr.tasks_total == 0) {
		rc = attempt_settle(b, st, STATUS_INVALID,
		    progress_no_tasks_reason(&pr), "invalid", err);
		goto out;
	}
	rc = next_attempt(&nx, b, st, err);
	if (rc < 0)
		goto out;
	if (nx.prev == NULL && pr.tasks_completed == pr.tasks_total) {
		st->tasks_completed = pr.tasks_completed;
		st->tasks_total = pr.tasks_total;
		st->subtasks_completed = pr.subtasks_completed;
		st->subtasks_total = pr.subtasks_total;
		snprintf(why, sizeof(why),
		    "all %d tasks were already checked; nothing to run",
		    pr.tasks_total);
		rc = attempt_settle(b, st, STATUS_DONE, why, "done", err);
		goto out;
	}
	if (b->cfg->budget.max_cost_usd > 0 &&
	    b->spend_usd >= b->cfg->budget.max_cost_usd) {
		b->stop_batch = true;
		snprintf(b->stop_reason, sizeof(b->stop_reason),
		    "budget.max_cost_usd reached: $%.4f spent of $%.4f; no new "
		    "attempt starts",
		    b->spend_usd, b->cfg->budget.max_cost_usd);
		goto out;
	}
	if (b->disabled[nx.role]) {
		b->stop_batch = true;
		snprintf(b->stop_reason, sizeof(b->stop_reason),
		    "no enabled agent remains");
		goto out;
	}
	now = b->o->clock.now_ms(b->o->clock.ctx);
	if (paused_past_cap(b, nx.role, now)) {
		b->stop_batch = true;
		paused_reason(b, now);
		goto out;
	}
	/* the pause holds no story longer than max_wait_s after its last
	 * decision (or from now for its first attempt) */
	if (b->pause_until[nx.role] > nx.not_before_ms)
		nx.not_before_ms = capped_wait(b, b->pause_until[nx.role],
		    nx.prev != NULL ? nx.prev->ended_ms : now);
	if (nx.not_before_ms > now) {
		sl->state = SLOT_WAITING;
		sl->until_ms = nx.not_before_ms;
		sl->next_attempt = nx.attempt;
		clock_fmt_duration(wait, sizeof(wait), nx.not_before_ms - now);
		if (b->o->tty)
			console_status(b);
		else
			console_line(b, "%s: waiting %s before attempt %d",
			    st->id, wait, nx.attempt);
		goto out;
	}
	rc = attempt_begin(b, sl, &nx, &pr, err);
out:
	attempt_row_release(&nx.last);
	return rc;
}

int
slot_start(struct batch *b, struct slot *sl, struct sc_err *err)
{
	/* the wait is over: the same preparation, now with no delay left */
	return slot_prepare(b, sl, err);
}

void
slot_handles(
    const struct slot *sl, void **handles, size_t *nh, int64_t *next_ms)
{
	const struct attempt_run *ar = sl->run;

	if (sl->state != SLOT_RUNNING || ar == NULL)
		return;
	if (ar->phase == PH_AGENT) {
		if (ar->handle != NULL)
			handles[(*nh)++] = ar->handle;
		return;
	}
	checks_handles(ar, handles, nh, next_ms);
}

void
slot_abandon(struct batch *b, struct slot *sl)
{
	struct runner_result res;
	struct sc_err ignore;
	struct attempt_run *ar = sl->run;

	if (sl->state == SLOT_RUNNING && ar != NULL) {
		if (ar->handle != NULL) {
			memset(&res, 0, sizeof(res));
			if (b->ops.finish(
				b->ops.ctx, ar->handle, &res, &ignore) == 0)
				runner_result_release(&res);
			ar->handle = NULL;
		}
		/* The controller stops on an error while this attempt runs:
		 * record it as interrupted (not counted), best effort, so
		 * that the failure does not use up one of its attempts. */
		ar->r.ended_ms = b->o->clock.now_ms(b->o->clock.ctx);
		ar->r.outcome = OUTCOME_INTERRUPTED;
		ar->r.error_code = ERRC_INTERRUPTED;
		ar->r.counted = false;
		ar->r.decision = DECISION_NONE;
		/* what D4 decides: the same attempt, the same agent */
		ar->r.next_attempt = ar->r.attempt;
		ar->r.next_role = ar->r.role;
		ar->r.not_before_ms = ar->r.ended_ms;
		snprintf(ar->r.reason, sizeof(ar->r.reason),
		    "D4: the controller stopped on an error; attempt %d runs "
		    "again on resume (not counted)",
		    ar->r.attempt);
		sl->st->status = STATUS_PENDING;
		db_attempt_finish(b->db, &ar->r, sl->st, "interrupted",
		    ar->r.reason, &ignore);
		attempt_run_free(ar);
	}
	sl->run = NULL;
	sl->state = SLOT_FREE;
}

/* The attempt is over (agent, gates, reviewers): classify, decide,
 * record, then on to the story's next attempt or a free slot. */
static int
attempt_complete(
    struct batch *b, struct slot *sl, bool gate_failed, struct sc_err *err)
{
	const struct config *cfg = b->cfg;
	struct attempt_run *ar = sl->run;
	struct attempt_row *r = &ar->r;
	struct runner_result *res = &ar->agent_res;
	struct classify_input ci;
	struct agent_report rep;
	struct classification *cls = &rep.verdict;
	const struct agent_output *ao = &rep.output;
	bool stopped = b->o->stop != NULL && *b->o->stop;
	bool tz = false;
	int64_t hint_ms = -1;
	int rc;

	sl->run = NULL;
	sl->state = SLOT_FREE;
	r->ended_ms = b->o->clock.now_ms(b->o->clock.ctx);
	r->exit_code = res->term_signal ? -1 : res->exit_code;
	r->signal = res->term_signal;
	r->tasks_completed = ar->end.tasks_completed;
	r->tasks_total = ar->end.tasks_total;
	r->subtasks_completed = ar->end.subtasks_completed;
	r->subtasks_total = ar->end.subtasks_total;
	copy_redacted(
	    r->stalled_task, sizeof(r->stalled_task), ar->end.stalled_task);

	memset(&ci, 0, sizeof(ci));
	ci.exit_code = res->term_signal ? -1 : res->exit_code;
	ci.term_signal = res->term_signal;
	ci.timed_out = res->timed_out;
	ci.stalled = res->stalled;
	/* a stop during the gates or the review interrupts the attempt too */
	ci.interrupted = res->interrupted ||
	    (ar->phase != PH_AGENT && stopped && gate_failed);
	ci.gate_failed = gate_failed;
	ci.tasks_completed = ar->end.tasks_completed;
	ci.tasks_total = ar->end.tasks_total;
	ci.tail = res->tail;
	ci.tail_len = res->tail_len;
	ci.network_on = &cfg->policy.network_on;
	ci.permanent_on = &cfg->policy.permanent_on;
	ci.retry_on = &cfg->policy.retry_on;
	ci.adapter = adapter_for(cfg->agents[r->role].preset);
	/* the one reader: outcome, code, message, wait hint, cost, final
	 * message and session id from one walk over the tail */
	adapter_read(&rep, &ci);
	if (res->spawn_failed && !res->interrupted) {
		cls->outcome = OUTCOME_CRASH;
		cls->code = ERRC_CRASH;
		snprintf(cls->message, sizeof(cls->message),
		    "cannot run %s: %s", ar->argv.items[0],
		    res->spawn_detail[0] != '\0' ? res->spawn_detail
						 : strerror(res->spawn_errno));
		/* over execve's limits: every attempt of this agent would
		 * fail the same way, so permanent (D2 disables the agent)
		 * rather than a crash that burns every attempt; the kernel
		 * refused to run the command, the nearest permanent code */
		if (res->spawn_errno == E2BIG) {
			cls->outcome = OUTCOME_PERMANENT;
			cls->code = ERRC_PERMISSION_DENIED;
		}
	}
	if (cls->outcome == OUTCOME_GATE_FAILED && r->gate[0] != '\0')
		snprintf(cls->message, sizeof(cls->message), "%s %s",
		    strcmp(r->gate, "review") == 0 ? "review panel" : "gate",
		    strcmp(r->gate, "review") == 0 ? r->consensus : r->gate);
	if (cls->hint.kind != WAITHINT_NONE &&
	    waithint_resolve(&hint_ms, &cls->hint, r->ended_ms, NULL) < 0)
		hint_ms = -1;
	if (ao->has_cost)
		r->cost_usd = ao->cost_usd;
	if (ao->result_text[0] != '\0')
		r->result_text =
		    redact_secrets(ao->result_text, strlen(ao->result_text));
	copy_redacted(r->session_id, sizeof(r->session_id), ao->session_id);
	r->outcome = cls->outcome;
	r->error_code = cls->code;
	copy_redacted(r->error_message, sizeof(r->error_message), cls->message);
	if (r->error_message[0] == '\0' && res->term_signal != 0)
		snprintf(r->error_message, sizeof(r->error_message),
		    "killed by signal %d (%s)", res->term_signal,
		    strsignal(res->term_signal));
	if (res->log_errno != 0) {
		size_t used = strlen(r->error_message);
		snprintf(r->error_message + used,
		    sizeof(r->error_message) - used,
		    "%swriting the attempt log failed: %s", used ? "; " : "",
		    strerror(res->log_errno));
	}
	rc = attempt_decide_record(&tz, b, r, sl->st, cls, hint_ms, err);
	if (rc < 0)
		goto out;
	/* one read of the history per decision: the breaker (when the
	 * story ended) takes what the decision saw */
	sl->tz_known = sl->st->status != STATUS_PENDING &&
	    sl->st->status != STATUS_RUNNING;
	sl->tz = tz;
	if (r->outcome == OUTCOME_INTERRUPTED)
		b->interrupted = true;
	if (b->interrupted || b->stop_batch || stopped)
		goto out;
	if (sl->st->status == STATUS_PENDING ||
	    sl->st->status == STATUS_RUNNING)
		rc = slot_prepare(b, sl, err);
out:
	attempt_run_free(ar);
	return rc;
}

int
slot_service(struct batch *b, struct slot *sl, struct sc_err *err)
{
	struct attempt_run *ar = sl->run;
	bool none = false;
	int verdict = 0;
	int rc;

	if (sl->state != SLOT_RUNNING || ar == NULL)
		return 0;
	if (ar->phase == PH_AGENT) {
		if (!b->ops.done(b->ops.ctx, ar->handle))
			return 0;
		rc = b->ops.finish(b->ops.ctx, ar->handle, &ar->agent_res, err);
		ar->handle = NULL;
		if (rc < 0)
			return rc;
		if (ar->rc < 0) {
			*err = ar->err;
			return ar->rc;
		}
		if (story_read_progress(&ar->end, sl->abspath, slot_root(b, sl),
			b->cfg->tasks_heading, NULL) < 0)
			ar->end = ar->start;
		/* "all boxes checked" is the agent's claim: the gates and
		 * the review panel check it before the story is done */
		if (ar->agent_res.exit_code == 0 &&
		    ar->agent_res.term_signal == 0 &&
		    !ar->agent_res.timed_out && !ar->agent_res.stalled &&
		    !ar->agent_res.interrupted && ar->end.tasks_total > 0 &&
		    ar->end.tasks_completed == ar->end.tasks_total &&
		    !(b->o->stop != NULL && *b->o->stop)) {
			rc = checks_begin(b, ar, &none, err);
			if (rc < 0)
				return rc;
			if (!none)
				return 0;
		}
		return attempt_complete(b, sl, false, err);
	}
	rc = checks_service(b, ar, &verdict, err);
	if (rc < 0 || verdict == 0)
		return rc;
	return attempt_complete(b, sl, verdict < 0, err);
}
