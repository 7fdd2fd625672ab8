/*
 * attempt.c - one story in one slot, attempt after attempt: whether it
 * runs at all, the wait the last decision set, then the attempt started
 * (attempt_start.c), supervised with its checks (checks.c), ended
 * (attempt_end.c) and decided (attempt_decide.c), and on to the next
 * (docs/design.md#life).
 */
#include <stdio.h>
#include <string.h>

#include "controller/engine/attempt.h"
#include "controller/engine/attempt_decide.h"
#include "controller/engine/attempt_end.h"
#include "controller/engine/attempt_evidence.h"
#include "controller/engine/attempt_run.h"
#include "controller/engine/attempt_start.h"
#include "controller/engine/checks.h"
#include "controller/engine/console.h"
#include "controller/engine/remote.h"
#include "controller/clock.h"
#include "state/db_evidence.h"

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

/* The story of slot sl runs nothing when its file cannot be read or has
 * no task (docs/stories.md): *settled, the story invalid. */
static int
prepare_read(bool *settled, struct story_look *look, struct batch *b,
    struct slot *sl, struct sc_err *err)
{
	const struct progress *pr = &look->pr;
	char why[400];
	int rc;

	*settled = true;
	rc = story_read_seen(look, &sl->seen, sl->abspath, slot_root(b, sl),
	    b->cfg->tasks_heading, err);
	if (rc < 0) {
		/* one unreadable story must not end the night */
		snprintf(why, sizeof(why), "cannot read the story: %.200s",
		    err->msg);
		err_clear(err);
		return attempt_settle(
		    b, sl->st, STATUS_INVALID, why, "invalid", err);
	}
	if (pr->counts.tasks_total == 0)
		return attempt_settle(b, sl->st, STATUS_INVALID,
		    progress_no_tasks_reason(why, sizeof(why), pr), "invalid",
		    err);
	*settled = false;
	return 0;
}

/* Every box checked before the first attempt: done, nothing runs. */
static int
prepare_done(struct batch *b, struct story_row *st, const struct progress *pr,
    struct sc_err *err)
{
	char why[300];

	st->counts = pr->counts;
	snprintf(why, sizeof(why),
	    "all %d tasks were already checked; nothing to run",
	    pr->counts.tasks_total);
	return attempt_settle(b, st, STATUS_DONE, why, "done", err);
}

/* *open: a failure reported from outside storyctl waits for an attempt
 * (docs/api.md#failure-records): a story reopened by one has every box
 * checked, and must run all the same. */
static int
reported(
    bool *open, struct batch *b, const struct story_row *st, struct sc_err *err)
{
	struct failure_row *rows = NULL;
	size_t n = 0;
	int rc;

	rc = db_failures_for_story(
	    b->db, &rows, &n, b->batch_id, st->id, true, err);
	*open = n > 0;
	failure_rows_free(rows, n);
	return rc;
}

/* May a new attempt of agent role start (docs/scheduling.md)?  No when
 * the budget is spent, no agent is left, or every agent is paused past
 * max_wait_s: b->stop_batch and its reason set.  *now: the time read. */
static bool
prepare_may_start(int64_t *now, struct batch *b, enum role role)
{
	if (b->cfg->budget.max_cost_usd > 0 &&
	    b->spend_usd >= b->cfg->budget.max_cost_usd) {
		b->stop_batch = true;
		snprintf(b->stop_reason, sizeof(b->stop_reason),
		    "budget.max_cost_usd reached: $%.4f spent of $%.4f; no new "
		    "attempt starts",
		    b->spend_usd, b->cfg->budget.max_cost_usd);
		return false;
	}
	if (b->disabled[role]) {
		b->stop_batch = true;
		snprintf(b->stop_reason, sizeof(b->stop_reason),
		    "no enabled agent remains");
		return false;
	}
	*now = b->o->clock.now_ms(b->o->clock.ctx);
	if (paused_past_cap(b, role, *now)) {
		b->stop_batch = true;
		paused_reason(b, *now);
		return false;
	}
	return true;
}

/* Slot sl waits for attempt nx until its not-before time. */
static void
prepare_wait(struct batch *b, struct slot *sl, const struct next_attempt *nx,
    int64_t now)
{
	char wait[32];

	sl->state = SLOT_WAITING;
	sl->until_ms = nx->not_before_ms;
	sl->next_attempt = nx->attempt;
	clock_fmt_duration(wait, sizeof(wait), nx->not_before_ms - now);
	if (b->o->tty)
		console_status(b);
	else
		console_line(b, "%s: waiting %s before attempt %d", sl->st->id,
		    wait, nx->attempt);
}

/* Where the story of slot sl stands before its next attempt. */
int
slot_prepare(struct batch *b, struct slot *sl, struct sc_err *err)
{
	struct story_look look;
	const struct progress *pr = &look.pr;
	struct next_attempt nx;
	bool settled = false, open = false;
	int64_t now = 0;
	int rc = 0;

	memset(&nx, 0, sizeof(nx));
	sl->state = SLOT_FREE;
	rc = prepare_read(&settled, &look, b, sl, err);
	if (rc < 0 || settled)
		goto out;
	rc = attempt_next(&nx, b, sl->st, err);
	if (rc < 0)
		goto out;
	if (nx.prev == NULL &&
	    pr->counts.tasks_completed == pr->counts.tasks_total &&
	    (rc = reported(&open, b, sl->st, err)) == 0 && !open) {
		rc = prepare_done(b, sl->st, pr, err);
		goto out;
	}
	if (rc < 0)
		goto out;
	if (!prepare_may_start(&now, b, nx.role))
		goto out;
	/* the pause holds no story longer than max_wait_s after its last
	 * decision (or from now for its first attempt) */
	if (b->pause_until[nx.role] > nx.not_before_ms)
		nx.not_before_ms = capped_wait(b, b->pause_until[nx.role],
		    nx.prev != NULL ? nx.prev->ended_ms : now);
	if (nx.not_before_ms > now) {
		prepare_wait(b, sl, &nx, now);
		goto out;
	}
	rc = attempt_begin(b, sl, &nx, &look, err);
out:
	story_look_release(&look);
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
	if (sl->state == SLOT_RUNNING && sl->run != NULL)
		attempt_abandon(b, sl->run);
	sl->run = NULL;
	sl->state = SLOT_FREE;
}

/* The attempt is over (agent, gates, reviewers): read and classify,
 * decide, record, then on to the story's next attempt or a free slot. */
static int
attempt_complete(
    struct batch *b, struct slot *sl, bool gate_failed, struct sc_err *err)
{
	struct attempt_run *ar = sl->run;
	struct attempt_row *r = &ar->r;
	struct agent_report rep;
	struct evidence_note note;
	char note_msg[900];
	bool stopped = b->o->stop != NULL && *b->o->stop;
	bool tz = false;
	int64_t hint_ms = -1;
	int rc;

	sl->run = NULL;
	sl->state = SLOT_FREE;
	attempt_end_read(&rep, &hint_ms, ar, gate_failed, stopped);
	attempt_evidence_note(&note, note_msg, sizeof(note_msg), ar);
	rc = attempt_decide_record(
	    &tz, b, r, sl->st, &rep.verdict, hint_ms, &note, err);
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

/* The agent of ar ended with every box checked and nothing stopped it:
 * "all boxes checked" is the agent's claim, the gates and the review
 * panel check it before the story is done (docs/verification.md). */
static bool
agent_claims_done(const struct batch *b, const struct attempt_run *ar)
{
	const struct runner_result *res = &ar->agent_res;

	return res->exit_code == 0 && res->term_signal == 0 &&
	    !res->timed_out && !res->stalled && !res->interrupted &&
	    !res->dead_end && ar->end.counts.tasks_total > 0 &&
	    ar->end.counts.tasks_completed == ar->end.counts.tasks_total &&
	    !(b->o->stop != NULL && *b->o->stop);
}

/* A confined agent's commits on its branch taken back from its private
 * git dir (docs/sandbox.md#git), before anything reads the tree.  A
 * branch that cannot be taken back (a forged object, say) stays where
 * it was; the work in the tree is measured and kept as always. */
static void
collect_confined(struct batch *b, struct slot *sl, struct attempt_run *ar)
{
	struct sc_err e = {0};
	char oid[41];
	bool moved = false;

	if (sandbox_end(&ar->sbx, &moved, oid, slot_root(b, sl), &e) < 0)
		console_line(b,
		    "%s: sandbox: the agent's branch is not taken "
		    "back: %s",
		    sl->st->id, e.msg);
	sandbox_run_release(&ar->sbx);
}

/* The agent of slot sl is done: collect it, then its checks or its
 * end. */
static int
service_agent(struct batch *b, struct slot *sl, struct sc_err *err)
{
	struct attempt_run *ar = sl->run;
	struct story_look look;
	bool none = false, read;
	int rc;

	rc = b->ops.finish(b->ops.ctx, ar->handle, &ar->agent_res, err);
	ar->handle = NULL;
	if (rc < 0)
		return rc;
	if (ar->rc < 0) {
		*err = ar->err;
		return ar->rc;
	}
	remote_collect(b, sl, ar->r.attempt, &ar->agent_res, ar->r.log_path);
	collect_confined(b, sl, ar);
	read = story_read_seen(&look, &sl->seen, sl->abspath, slot_root(b, sl),
		   b->cfg->tasks_heading, NULL) == 0;
	ar->end = read ? look.pr : ar->start;
	/* before the gates: under verify.require_diff unbacked ticks are
	 * no claim to check (docs/evidence.md#require-diff) */
	attempt_evidence_end(ar, read ? &look : NULL);
	story_look_release(&look);
	if (agent_claims_done(b, ar)) {
		rc = checks_begin(b, ar, &none, err);
		if (rc < 0)
			return rc;
		if (!none)
			return 0;
	}
	return attempt_complete(b, sl, false, err);
}

int
slot_service(struct batch *b, struct slot *sl, struct sc_err *err)
{
	struct attempt_run *ar = sl->run;
	int verdict = 0;
	int rc;

	if (sl->state != SLOT_RUNNING || ar == NULL)
		return 0;
	if (ar->phase == PH_AGENT) {
		if (!b->ops.done(b->ops.ctx, ar->handle))
			return 0;
		return service_agent(b, sl, err);
	}
	rc = checks_service(b, ar, &verdict, err);
	if (rc < 0 || verdict == 0)
		return rc;
	return attempt_complete(b, sl, verdict < 0, err);
}
