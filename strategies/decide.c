/*
 * decide.c - the strategies of docs/retry-strategy.md.  Every branch
 * names its rule in out->rule and says in out->reason which inputs made
 * it fire, because a person reads these in the morning to learn why a
 * story was deferred.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "strategies/backoff.h"
#include "strategies/decide.h"
#include "strategies/duration.h"
#include "strategies/text.h"
#include "common/err.h"

/* The plateau evidence found in a history. */
struct plateau {
	bool confirmed;
	int tasks;
	int by[2]; /* attempt numbers, two-agent rule; 0 otherwise */
	int three[3]; /* attempt numbers, single-agent rule */
	bool single;
};

enum role
decide_role_for(int n, bool has_fallback, const bool disabled[2])
{
	enum role want = ROLE_PRIMARY;
	enum role other;

	if (has_fallback && n % 2 == 0)
		want = ROLE_FALLBACK;
	if (!has_fallback)
		return ROLE_PRIMARY;
	other = want == ROLE_PRIMARY ? ROLE_FALLBACK : ROLE_PRIMARY;
	if (disabled[want] && !disabled[other])
		return other;
	return want;
}

int
decide_next_attempt(int n, bool counted)
{
	return counted ? n + 1 : n;
}

int64_t
decide_delay_with_jitter(const struct decision_out *d, double u)
{
	int64_t ms = backoff_jitter_ms(d->delay_ms, d->jitter, u);

	if (d->max_delay_ms > 0 && ms > d->max_delay_ms)
		ms = d->max_delay_ms;
	return ms;
}

static void
set_rule(struct decision_out *out, enum decision d, const char *rule)
{
	out->decision = d;
	snprintf(out->rule, sizeof(out->rule), "%s", rule);
}

/* Append to out->reason (the reasons are built in pieces). */
static void __attribute__((format(printf, 2, 3)))
reason_add(struct decision_out *out, const char *fmt, ...)
{
	size_t used = strlen(out->reason);
	va_list ap;

	if (used + 1 >= sizeof(out->reason))
		return;
	va_start(ap, fmt);
	vsnprintf(out->reason + used, sizeof(out->reason) - used, fmt, ap);
	va_end(ap);
}

/* Is attempt a evidence for a plateau (docs/retry-strategy.md#counted):
 * its outcome says so, and it is not a worktree setup's crash, in which
 * no agent ran. */
static bool
plateau_evidence(const struct attempt_rec *a)
{
	return outcome_counts_plateau(a->outcome) && !a->setup_crash;
}

static const struct attempt_rec *
last_counted_of(const struct decide_input *in, enum role r)
{
	size_t i;

	for (i = in->n; i > 0; i--) {
		const struct attempt_rec *a = &in->history[i - 1];
		if (a->role == r && plateau_evidence(a))
			return a;
	}
	return NULL;
}

static void
plateau_find(struct plateau *p, const struct decide_input *in, int total)
{
	const struct attempt_rec *pa, *fa;
	const struct attempt_rec *last3[3] = {NULL, NULL, NULL};
	size_t i;
	int found = 0;
	bool one_agent;

	memset(p, 0, sizeof(*p));
	if (in->has_fallback) {
		pa = last_counted_of(in, ROLE_PRIMARY);
		fa = last_counted_of(in, ROLE_FALLBACK);
		if (pa != NULL && fa != NULL &&
		    pa->counts.tasks_completed == fa->counts.tasks_completed &&
		    pa->counts.tasks_completed > 0 &&
		    pa->counts.tasks_completed <= total) {
			p->confirmed = true;
			p->tasks = pa->counts.tasks_completed;
			p->by[ROLE_PRIMARY] = pa->attempt;
			p->by[ROLE_FALLBACK] = fa->attempt;
			return;
		}
	}
	/* One agent configured, or one of two disabled so that only one
	 * runs: three counted attempts in a row at the same T confirm. */
	one_agent = !in->has_fallback || in->disabled[ROLE_PRIMARY] ||
	    in->disabled[ROLE_FALLBACK];
	if (!one_agent)
		return;
	for (i = in->n; i > 0 && found < 3; i--) {
		const struct attempt_rec *a = &in->history[i - 1];
		if (plateau_evidence(a))
			last3[found++] = a;
	}
	if (found < 3)
		return;
	if (last3[0]->counts.tasks_completed ==
		last3[1]->counts.tasks_completed &&
	    last3[1]->counts.tasks_completed ==
		last3[2]->counts.tasks_completed &&
	    last3[0]->counts.tasks_completed > 0 &&
	    last3[0]->counts.tasks_completed <= total) {
		p->confirmed = true;
		p->single = true;
		p->tasks = last3[0]->counts.tasks_completed;
		p->three[0] = last3[2]->attempt;
		p->three[1] = last3[1]->attempt;
		p->three[2] = last3[0]->attempt;
	}
}

/*
 * Zero progress (D6): no counted attempt ended with a task or a subtask
 * checked.  Subtasks count here because an agent that checks subtasks
 * but finishes no whole task did work the tasks count hides; blaming the
 * API for it would send the reader to the wrong place.  The plateau
 * stays defined on tasks (docs/retry-strategy.md#d6).
 */
static bool
zero_progress(const struct decide_input *in)
{
	size_t i;

	for (i = 0; i < in->n; i++) {
		const struct attempt_rec *a = &in->history[i];
		if (outcome_counts_plateau(a->outcome) &&
		    (a->counts.tasks_completed != 0 ||
			a->counts.subtasks_completed != 0))
			return false;
	}
	return true;
}

/*
 * D6's wording: "likely API or connection issue" only when the attempts
 * failed that way.  When every counted attempt ended normally
 * (incomplete: the agent exited 0) and nothing transient happened, the
 * agent answered and checked no box, and the reason says so
 * (docs/retry-strategy.md#d6).
 */
static bool
answered_normally(const struct decide_input *in)
{
	size_t i;

	for (i = 0; i < in->n; i++) {
		switch (in->history[i].outcome) {
		case OUTCOME_INCOMPLETE:
		case OUTCOME_INTERRUPTED:
			break;
		default:
			return false;
		}
	}
	return true;
}

/* What a failed attempt's message shows, for D6's reason; the words of
 * the real CLIs' refusals, context and request errors
 * (docs/retry-strategy.md#d6). */
enum showed { SHOWED_REFUSAL, SHOWED_CONTEXT, SHOWED_BAD_REQUEST, SHOWED__N };

static const struct {
	enum showed what;
	const char *words;
} showed_words[] = {
    {SHOWED_REFUSAL, "blocked due to safety"},
    {SHOWED_REFUSAL, "safety settings"},
    {SHOWED_REFUSAL, "content policy"},
    {SHOWED_REFUSAL, "refusal"},
    {SHOWED_REFUSAL, "refused to"},
    {SHOWED_REFUSAL, "declined to"},
    {SHOWED_REFUSAL, "usage policy"},
    {SHOWED_REFUSAL, "safety reasons"},
    {SHOWED_REFUSAL, "can't help with"},
    {SHOWED_REFUSAL, "cannot help with"},
    {SHOWED_REFUSAL, "can't assist"},
    {SHOWED_REFUSAL, "cannot assist"},
    {SHOWED_CONTEXT, "prompt is too long"},
    {SHOWED_CONTEXT, "context length"},
    {SHOWED_CONTEXT, "context_length"},
    {SHOWED_CONTEXT, "context window"},
    {SHOWED_CONTEXT, "maximum context"},
    {SHOWED_CONTEXT, "too many tokens"},
    {SHOWED_CONTEXT, "exceeds the maximum"},
    {SHOWED_BAD_REQUEST, "invalid_request"},
    {SHOWED_BAD_REQUEST, "invalid request"},
    {SHOWED_BAD_REQUEST, "bad request"},
    {SHOWED_BAD_REQUEST, "status 400"},
    {SHOWED_BAD_REQUEST, "status: 400"},
    {SHOWED_BAD_REQUEST, "error 400"},
    {SHOWED_BAD_REQUEST, "error: 400"},
    {SHOWED_BAD_REQUEST, "\"code\":400"},
    {SHOWED_BAD_REQUEST, "invalid_argument"},
    {SHOWED_BAD_REQUEST, "invalid argument"},
    {SHOWED_BAD_REQUEST, "\"api_error_status\":400"},
};

static const char *const showed_name[SHOWED__N] = {"refusals",
    "the prompt too long for the model's context", "bad requests (400)"};

/*
 * D6's wording: what the attempts showed.  Refusals, context and request
 * errors are named (the model or the request is the problem, not the
 * connection); an agent that answered and checked nothing is told so;
 * any other failure keeps "likely API or connection issue".  Writes into
 * buf.
 */
static void
zero_progress_why(char *buf, size_t len, const struct decide_input *in)
{
	int count[SHOWED__N] = {0};
	size_t i, k, off = 0;
	bool any = false;

	if (answered_normally(in)) {
		snprintf(
		    buf, len, "the agent ran to the end and checked no box");
		return;
	}
	for (i = 0; i < in->n; i++) {
		const struct attempt_rec *a = &in->history[i];
		size_t mlen;

		if (!outcome_counted(a->outcome))
			continue;
		/* a refused connection is no refusal: only what the API or
		 * the model answered is read */
		if (a->message == NULL || a->outcome == OUTCOME_NETWORK)
			continue;
		mlen = strlen(a->message);
		for (k = 0; k < sizeof(showed_words) / sizeof(showed_words[0]);
		     k++)
			if (text_ci_has(a->message, mlen, showed_words[k].words,
				false)) {
				count[showed_words[k].what]++;
				any = true;
				break;
			}
	}
	buf[0] = '\0';
	if (!any) {
		snprintf(buf, len, "likely API or connection issue");
		return;
	}
	for (k = 0; k < SHOWED__N && off < len; k++)
		if (count[k] > 0)
			off +=
			    (size_t)snprintf(buf + off, len - off, "%s%s (%d)",
				off > 0 ? ", " : "the attempts showed ",
				showed_name[k], count[k]);
}

/* The counted attempt numbered n (the last row with that number). */
static const struct attempt_rec *
attempt_numbered(const struct decide_input *in, int n)
{
	size_t i;

	for (i = in->n; i > 0; i--) {
		const struct attempt_rec *a = &in->history[i - 1];
		if (a->attempt == n && outcome_counted(a->outcome))
			return a;
	}
	return NULL;
}

static void
plateau_describe(struct decision_out *out, const struct plateau *p, int total)
{
	out->plateau_tasks = p->tasks;
	if (p->single) {
		reason_add(out,
		    "plateau confirmed at %d/%d by the last three "
		    "counted attempts (a%d, a%d, a%d)",
		    p->tasks, total, p->three[0], p->three[1], p->three[2]);
		return;
	}
	out->plateau_attempt[ROLE_PRIMARY] = p->by[ROLE_PRIMARY];
	out->plateau_attempt[ROLE_FALLBACK] = p->by[ROLE_FALLBACK];
	reason_add(out,
	    "plateau confirmed at %d/%d by primary (a%d) and "
	    "fallback (a%d)",
	    p->tasks, total, p->by[ROLE_PRIMARY], p->by[ROLE_FALLBACK]);
}

/* The delay before a retry after last (docs/retry-strategy.md#delays);
 * n is the zero-based index of the retry. */
static void
retry_delay(struct decision_out *out, const struct decide_input *in,
    const struct attempt_rec *last, int n, bool network_sleeps)
{
	const struct policy *p = in->policy;
	int64_t b = backoff_delay_ms(&p->backoff, n);

	out->jitter = p->backoff.jitter;
	if (last->outcome == OUTCOME_NETWORK && network_sleeps) {
		out->delay_ms = (int64_t)(p->network_sleep_s * 1000.0);
		out->jitter = 0;
	} else if (last->outcome == OUTCOME_RATE_LIMIT && last->hint_ms > b) {
		out->delay_ms = last->hint_ms;
	} else {
		out->delay_ms = b;
	}
}

/* The other agent when it can take the attempt now: configured,
 * enabled and not paused itself; -1 otherwise. */
static int
free_other(const struct decide_input *in, const bool disabled[2], enum role r)
{
	enum role o = r == ROLE_PRIMARY ? ROLE_FALLBACK : ROLE_PRIMARY;

	if (!in->has_fallback || disabled[o] ||
	    in->paused_until[o] > in->now_ms)
		return -1;
	return (int)o;
}

/*
 * The wait for a usage limit's reset: the hint, or the default without
 * one.  A reset time already past (a wrong clock, a stale banner) must
 * not turn into a tight loop: it waits at least the backoff of the
 * reruns of this attempt so far, counted into *reruns
 * (docs/retry-strategy.md#usage-limits).
 */
static int64_t
usage_wait_floor(
    const struct decide_input *in, const struct attempt_rec *last, int *reruns)
{
	int64_t d =
	    last->hint_ms >= 0 ? last->hint_ms : DECIDE_USAGE_WAIT_DEFAULT_MS;
	int64_t floor_ms;
	size_t i;

	*reruns = 0;
	for (i = in->n; i > 1; i--) {
		const struct attempt_rec *a = &in->history[i - 2];
		if (a->attempt != last->attempt ||
		    a->outcome != OUTCOME_USAGE_LIMIT)
			break;
		(*reruns)++;
	}
	floor_ms = backoff_delay_ms(&in->policy->backoff, *reruns);
	if (floor_ms <= 0)
		floor_ms = 1000;
	return d < floor_ms ? floor_ms : d;
}

/*
 * D3 (docs/retry-strategy.md#usage-limits): the agent waits for its reset
 * (or hands the attempt to the other agent with on_usage_limit
 * "switch"); the batch stops instead when no enabled agent can run
 * within policy.max_wait_s, or when this attempt has waited
 * max_limit_waits times in a row already.
 */
static void
usage_wait(struct decision_out *out, const struct decide_input *in,
    const struct attempt_rec *last, const bool disabled[2])
{
	const struct policy *p = in->policy;
	int64_t cap = (int64_t)(p->max_wait_s * 1000.0);
	int64_t d, until, other_until = 0;
	enum role o = last->role == ROLE_PRIMARY ? ROLE_FALLBACK : ROLE_PRIMARY;
	bool other_on = in->has_fallback && !disabled[o];
	char w[32], w2[32];
	int reruns, sw;

	d = usage_wait_floor(in, last, &reruns);
	until = in->now_ms + d;
	set_rule(out, DECISION_WAIT, "D3");
	out->next_role = last->role;
	duration_fmt(w, sizeof(w), d);
	sw = free_other(in, disabled, last->role);
	if (p->on_usage_limit == ON_LIMIT_SWITCH && sw >= 0) {
		out->next_role = (enum role)sw;
		reason_add(out,
		    "D3: usage limit of %s (reset in %s); on_usage_limit "
		    "switch: attempt %d runs again at once with %s (not "
		    "counted)",
		    role_name(last->role), w, last->attempt,
		    role_name((enum role)sw));
		return;
	}
	if (other_on)
		other_until = in->paused_until[o];
	if (p->max_limit_waits > 0 && reruns >= p->max_limit_waits) {
		out->stop_batch = true;
		out->resume_after_ms = until;
		reason_add(out,
		    "D3: usage limit again after %d waits in a row on "
		    "attempt %d (policy.max_limit_waits %d): the batch "
		    "stops; resume in %s, after the reset",
		    reruns, last->attempt, p->max_limit_waits, w);
		return;
	}
	if (cap > 0 && d > cap &&
	    (!other_on || other_until > in->now_ms + cap)) {
		out->stop_batch = true;
		out->resume_after_ms = until;
		if (other_on && other_until < until)
			out->resume_after_ms = other_until;
		duration_fmt(w2, sizeof(w2), cap);
		reason_add(out,
		    "D3: usage limit of %s, reset in %s; every enabled agent "
		    "is paused past policy.max_wait_s (%s): the batch stops; "
		    "resume after the reset",
		    role_name(last->role), w, w2);
		return;
	}
	out->delay_ms = d;
	out->jitter = p->backoff.jitter;
	reason_add(out,
	    "D3: usage limit; wait %s %s, then attempt %d "
	    "runs again (not counted)",
	    w, last->hint_ms >= 0 ? "until the reset" : "(no reset time given)",
	    last->attempt);
}

static void
interrupted(struct decision_out *out, const struct attempt_rec *last)
{
	set_rule(out, DECISION_NONE, "D4");
	out->next_role = last->role;
	reason_add(out,
	    "D4: interrupted; attempt %d runs again on resume "
	    "(not counted)",
	    last->attempt);
}

/* D2 for every strategy: disable the agent; true when none remains. */
static bool
disable_agent(struct decision_out *out, const struct decide_input *in,
    const struct attempt_rec *last, bool disabled[2])
{
	disabled[last->role] = true;
	out->disable_role = last->role;
	if (!disabled[ROLE_PRIMARY])
		return false;
	if (in->has_fallback && !disabled[ROLE_FALLBACK])
		return false;
	set_rule(out, DECISION_ESCALATE, "D2");
	out->stop_batch = true;
	reason_add(out,
	    "D2: permanent failure of %s (a%d) and no enabled "
	    "agent remains; the batch stops",
	    role_name(last->role), last->attempt);
	return true;
}

static bool
budget_spent(const struct decide_input *in, int k, char *why, size_t whylen)
{
	const struct policy *p = in->policy;
	int64_t elapsed = in->now_ms - in->history[0].started_ms;

	if (k >= p->max_attempts) {
		snprintf(why, whylen, "attempts used up (%d/%d)", k,
		    p->max_attempts);
		return true;
	}
	if (p->max_time_s > 0 && elapsed >= (int64_t)(p->max_time_s * 1000)) {
		snprintf(why, whylen, "time budget spent (%lld s of %g s)",
		    (long long)(elapsed / 1000), p->max_time_s);
		return true;
	}
	if (in->budget_spent) {
		snprintf(why, whylen, "cost budget spent");
		return true;
	}
	return false;
}

static void
decide_adaptive(
    struct decision_out *out, const struct decide_input *in, bool disabled[2])
{
	const struct attempt_rec *last = &in->history[in->n - 1];
	const struct attempt_rec *a1, *a2;
	int k = last->attempt;
	int total = last->counts.tasks_total;
	struct plateau pl;
	char why[128] = "";
	char what[256];

	plateau_find(&pl, in, total);
	if (budget_spent(in, k, why, sizeof(why))) {
		if (pl.confirmed) {
			set_rule(out, DECISION_DEFER, "D5");
			reason_add(out, "D5: ");
			plateau_describe(out, &pl, total);
			reason_add(out, "; %s", why);
		} else if (zero_progress(in)) {
			set_rule(out, DECISION_ESCALATE, "D6");
			zero_progress_why(what, sizeof(what), in);
			reason_add(out,
			    "D6: zero progress on all attempts: %s; %s", what,
			    why);
		} else {
			set_rule(out, DECISION_ESCALATE, "D7");
			reason_add(out, "D7: retries exhausted at %d/%d",
			    last->counts.tasks_completed, total);
			if (last->counts.subtasks_total > 0)
				reason_add(out, " (subtasks %d/%d)",
				    last->counts.subtasks_completed,
				    last->counts.subtasks_total);
			reason_add(out, "; %s", why);
		}
		return;
	}
	if (k >= 4 && pl.confirmed) {
		set_rule(out, DECISION_DEFER, "D8");
		reason_add(out, "D8: ");
		plateau_describe(out, &pl, total);
		return;
	}
	set_rule(out, DECISION_RETRY, "D11");
	if (k == 4) {
		set_rule(out, DECISION_RETRY, "D9");
		out->timeout_factor = in->policy->extended_timeout_factor;
		reason_add(out,
		    "D9: no plateau confirmed after 4 attempts "
		    "(variable progress); one more attempt with timeout x%g",
		    out->timeout_factor);
	} else if (k == 2 && (a1 = attempt_numbered(in, 1)) != NULL &&
	    (a2 = attempt_numbered(in, 2)) != NULL &&
	    a2->counts.tasks_completed > a1->counts.tasks_completed) {
		set_rule(out, DECISION_RETRY, "D10");
		out->poll_factor = 2;
		reason_add(out,
		    "D10: attempt 2 made more progress (%d) than "
		    "attempt 1 (%d); retry with the poll interval doubled",
		    a2->counts.tasks_completed, a1->counts.tasks_completed);
	} else {
		reason_add(out, "D11: %s at %d/%d; retry",
		    outcome_name(last->outcome), last->counts.tasks_completed,
		    total);
	}
	retry_delay(out, in, last, k - 1, true);
	out->next_role =
	    decide_role_for(out->next_attempt, in->has_fallback, disabled);
}

/* Attempts and start time of the phase (the run of one role) that the
 * last attempt belongs to, for the retry strategy. */
static int
phase_attempts(const struct decide_input *in, enum role r, int64_t *first_start)
{
	size_t i;
	int used = 0;

	*first_start = in->history[in->n - 1].started_ms;
	for (i = 0; i < in->n; i++) {
		const struct attempt_rec *a = &in->history[i];
		if (a->role != r || !outcome_counted(a->outcome))
			continue;
		if (used == 0)
			*first_start = a->started_ms;
		used++;
	}
	return used;
}

static void
decide_retry(struct decision_out *out, const struct decide_input *in,
    bool disabled[2], bool permanent)
{
	const struct policy *p = in->policy;
	const struct attempt_rec *last = &in->history[in->n - 1];
	int64_t start = 0, left = -1;
	int used = phase_attempts(in, last->role, &start);
	int budget = 1 + p->retry_count;
	bool can_fallback = in->has_fallback && last->role == ROLE_PRIMARY &&
	    !disabled[ROLE_FALLBACK];

	if (p->retry_max_time_ms > 0)
		left = p->retry_max_time_ms - (in->now_ms - start);
	if (!permanent && !in->budget_spent && used < budget &&
	    (p->retry_max_time_ms == 0 || left > 0)) {
		set_rule(out, DECISION_RETRY, "R2");
		retry_delay(out, in, last, used - 1, false);
		if (left > 0 && out->delay_ms >= left) {
			/* a delay never sleeps past the deadline */
			out->delay_ms = left;
			out->jitter = 0;
		}
		out->next_role = last->role;
		reason_add(out, "R2: %s; retry %d of %d with %s",
		    outcome_name(last->outcome), used, p->retry_count,
		    role_name(last->role));
		return;
	}
	if (can_fallback) {
		set_rule(out, DECISION_RETRY, "R3");
		retry_delay(out, in, last, 0, false);
		out->next_role = ROLE_FALLBACK;
		reason_add(out,
		    "R3: %s retries exhausted (%d attempts%s); the "
		    "fallback gets the same budget",
		    role_name(last->role), used,
		    permanent ? ", permanent failure" : "");
		return;
	}
	set_rule(out, DECISION_ESCALATE, "R4");
	reason_add(out, "R4: retries exhausted (%d attempts of %s%s)", used,
	    role_name(last->role), permanent ? ", permanent failure" : "");
}

/*
 * Every wait, whatever its cause (backoff, network sleep, a rate limit's
 * hint, a usage limit's reset), is capped by policy.max_wait_s, after
 * the jitter too; the reason says when the cap cut a wait short, so that
 * `show` tells it (docs/retry-strategy.md#delays).
 */
static void
cap_wait(struct decision_out *out, const struct decide_input *in)
{
	int64_t cap = (int64_t)(in->policy->max_wait_s * 1000.0);
	char a[32], c[32];

	if (cap <= 0 ||
	    (out->decision != DECISION_RETRY && out->decision != DECISION_WAIT))
		return;
	out->max_delay_ms = cap;
	if (out->delay_ms <= cap)
		return;
	out->wait_capped = true;
	out->uncapped_delay_ms = out->delay_ms;
	out->delay_ms = cap;
	duration_fmt(a, sizeof(a), out->uncapped_delay_ms);
	duration_fmt(c, sizeof(c), cap);
	reason_add(
	    out, "; wait capped at %s by policy.max_wait_s (%s asked)", c, a);
}

int
decide(struct decision_out *out, const struct decide_input *in)
{
	const struct attempt_rec *last;
	bool disabled[2];
	bool permanent;

	memset(out, 0, sizeof(*out));
	out->disable_role = -1;
	out->timeout_factor = 1;
	out->poll_factor = 1;
	if (in->n == 0 || in->history == NULL || in->policy == NULL) {
		snprintf(out->reason, sizeof(out->reason),
		    "decide: empty attempt history");
		return SC_ESOFTWARE;
	}
	last = &in->history[in->n - 1];
	disabled[0] = in->disabled[0];
	disabled[1] = in->disabled[1];
	out->counted = outcome_counted(last->outcome);
	out->next_attempt = decide_next_attempt(last->attempt, out->counted);
	out->next_role =
	    decide_role_for(out->next_attempt, in->has_fallback, disabled);

	/* D1, D3, D4: the same under every strategy. */
	if (last->outcome == OUTCOME_SUCCESS) {
		set_rule(out, DECISION_DONE, "D1");
		reason_add(out, "D1: success, %d/%d tasks checked",
		    last->counts.tasks_completed, last->counts.tasks_total);
		return 0;
	}
	permanent = last->outcome == OUTCOME_PERMANENT;
	if (permanent) {
		if (disable_agent(out, in, last, disabled))
			return 0;
		reason_add(out, "D2: %s disabled after a permanent failure; ",
		    role_name(last->role));
	}
	if (last->outcome == OUTCOME_USAGE_LIMIT) {
		usage_wait(out, in, last, disabled);
		cap_wait(out, in);
		return 0;
	}
	if (last->outcome == OUTCOME_INTERRUPTED) {
		interrupted(out, last);
		return 0;
	}
	if (in->policy->retry_on.n > 0 && !in->retry_on_matched) {
		set_rule(out, DECISION_ESCALATE, "F1");
		reason_add(out,
		    "%s matches none of policy.retry_on; not "
		    "retried",
		    outcome_name(last->outcome));
		return 0;
	}
	switch (in->policy->strategy) {
	case STRATEGY_ADAPTIVE:
		decide_adaptive(out, in, disabled);
		break;
	case STRATEGY_RETRY:
		decide_retry(out, in, disabled, permanent);
		break;
	case STRATEGY_NONE:
		set_rule(out, DECISION_ESCALATE, "N1");
		reason_add(out, "N1: %s at %d/%d; strategy none never retries",
		    outcome_name(last->outcome), last->counts.tasks_completed,
		    last->counts.tasks_total);
		break;
	}
	cap_wait(out, in);
	if (out->decision == DECISION_RETRY && disabled[out->next_role]) {
		/* cannot happen while an agent remains; keep it loud */
		snprintf(out->reason, sizeof(out->reason),
		    "decide: next agent %s is disabled",
		    role_name(out->next_role));
		return SC_ESOFTWARE;
	}
	return 0;
}
