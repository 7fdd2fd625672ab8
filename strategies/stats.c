/* stats.c - see stats.h; each figure is defined in docs/stats.md. */
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "strategies/stats.h"

const char *
stats_cause_name(enum stats_cause c)
{
	static const char *const names[CAUSE__COUNT] = {
	    "network", "rate_limit", "usage_limit", "backoff"};

	return (int)c >= 0 && c < CAUSE__COUNT ? names[c] : "?";
}

bool
stats_transient(enum outcome o)
{
	/* the batch breaker's transient set (docs/scheduling.md) */
	return o == OUTCOME_NETWORK || o == OUTCOME_RATE_LIMIT ||
	    o == OUTCOME_TIMEOUT || o == OUTCOME_USAGE_LIMIT;
}

int64_t
stats_percentile(const int64_t *sorted, size_t n, int p)
{
	size_t rank;

	if (n == 0 || p <= 0)
		return 0;
	/* nearest rank: ceil(p * n / 100), 1-based */
	rank = ((size_t)p * n + 99) / 100;
	if (rank < 1)
		rank = 1;
	if (rank > n)
		rank = n;
	return sorted[rank - 1];
}

static enum stats_cause
cause_of(enum outcome o)
{
	switch (o) {
	case OUTCOME_NETWORK:
		return CAUSE_NETWORK;
	case OUTCOME_RATE_LIMIT:
		return CAUSE_RATE_LIMIT;
	case OUTCOME_USAGE_LIMIT:
		return CAUSE_USAGE_LIMIT;
	default:
		return CAUSE_BACKOFF;
	}
}

static int
cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

/* The work arrays of one stats_compute(): the delays of each cause. */
struct work {
	int64_t *delays[CAUSE__COUNT];
	size_t ndelays[CAUSE__COUNT];
};

static void
runs_add(struct stats_runs *s, const struct stats_attempt *a)
{
	s->runs++;
	s->counted += a->counted ? 1 : 0;
	s->success += a->outcome == OUTCOME_SUCCESS ? 1 : 0;
	if (a->started_ms > 0 && a->ended_ms > a->started_ms)
		s->run_ms += a->ended_ms - a->started_ms;
	s->cost_usd += a->cost_usd;
}

static struct stats_agent *
agent_slot(struct stats_result *r, const char *name)
{
	struct stats_agent *p;
	size_t i;

	for (i = 0; i < r->nagents; i++)
		if (strcmp(r->agents[i].agent, name) == 0)
			return &r->agents[i];
	p = realloc(r->agents, (r->nagents + 1) * sizeof(*p));
	if (p == NULL)
		return NULL;
	r->agents = p;
	p = &r->agents[r->nagents++];
	memset(p, 0, sizeof(*p));
	memcpy(p->agent, name, strnlen(name, sizeof(p->agent) - 1));
	return p;
}

static struct stats_tries *
tries_slot(struct stats_result *r, int attempt)
{
	struct stats_tries *p;
	size_t i;

	if (attempt < 1)
		return NULL;
	if ((size_t)attempt > r->ntries) {
		p = realloc(r->tries, (size_t)attempt * sizeof(*p));
		if (p == NULL)
			return NULL;
		r->tries = p;
		for (i = r->ntries; i < (size_t)attempt; i++) {
			memset(&p[i], 0, sizeof(p[i]));
			p[i].attempt = (int)i + 1;
		}
		r->ntries = (size_t)attempt;
	}
	return &r->tries[attempt - 1];
}

/* Everything one ended row adds by itself. */
static int
row_add(struct stats_result *r, struct work *w, const struct stats_attempt *a)
{
	struct stats_agent *ag = agent_slot(r, a->agent);
	struct stats_tries *t;
	enum stats_cause c;

	if (ag == NULL)
		return SC_EOS;
	runs_add(&r->total, a);
	runs_add(&r->roles[a->role == ROLE_FALLBACK], a);
	runs_add(&ag->r, a);
	if ((int)a->outcome < OUTCOME__COUNT)
		r->outcomes[a->outcome]++;
	if (a->error_code != ERRC_NONE && (int)a->error_code < ERRC__COUNT)
		r->errcodes[a->error_code]++;
	if (a->counted) {
		if ((t = tries_slot(r, a->attempt)) == NULL && a->attempt >= 1)
			return SC_EOS;
		if (t != NULL) {
			t->tries++;
			t->success += a->outcome == OUTCOME_SUCCESS ? 1 : 0;
		}
	}
	if ((a->outcome == OUTCOME_RATE_LIMIT ||
		a->outcome == OUTCOME_USAGE_LIMIT) &&
	    a->started_ms > 0 && a->ended_ms > a->started_ms)
		r->limit_runs_ms += a->ended_ms - a->started_ms;
	if (a->decision != DECISION_RETRY && a->decision != DECISION_WAIT)
		return 0;
	c = cause_of(a->outcome);
	w->delays[c][w->ndelays[c]++] = a->delay_ms > 0 ? a->delay_ms : 0;
	return 0;
}

/* The plateau of the deferred row rows[i] of the story rows[first..]:
 * its tasks, its agent, and the other role's latest counted attempt
 * when it stopped at the same number (docs/stats.md#plateaus). */
static int
plateau_add(struct stats_result *r, const struct stats_attempt *rows,
    size_t first, size_t i)
{
	const struct stats_attempt *a = &rows[i];
	struct stats_plateau *p;
	size_t j;

	p = realloc(r->plateaus, (r->nplateaus + 1) * sizeof(*p));
	if (p == NULL)
		return SC_EOS;
	r->plateaus = p;
	p = &r->plateaus[r->nplateaus++];
	memset(p, 0, sizeof(*p));
	p->batch_id = a->batch_id;
	memcpy(p->story_id, a->story_id, sizeof(p->story_id) - 1);
	p->attempt = a->attempt;
	p->tasks_completed = a->tasks_completed;
	p->tasks_total = a->tasks_total;
	memcpy(p->agents[0], a->agent, sizeof(p->agents[0]) - 1);
	for (j = i; j-- > first;) {
		if (!rows[j].counted || rows[j].outcome == OUTCOME_NONE ||
		    !outcome_counts_plateau(rows[j].outcome) ||
		    rows[j].role == a->role)
			continue;
		if (rows[j].tasks_completed == a->tasks_completed &&
		    strcmp(rows[j].agent, a->agent) != 0)
			memcpy(p->agents[1], rows[j].agent,
			    sizeof(p->agents[1]) - 1);
		break;
	}
	return 0;
}

/* The figures of one story, rows[first..end): success, recovery,
 * plateaus, its cost. */
static int
story_add(struct stats_result *r, const struct stats_attempt *rows,
    size_t first, size_t end)
{
	size_t i, j;
	int ended = 0, first_success = 0, rc;
	struct stats_story_cost *sc;

	for (i = first; i < end; i++) {
		if (rows[i].outcome == OUTCOME_NONE)
			continue;
		ended++;
		if (rows[i].outcome == OUTCOME_SUCCESS && first_success == 0)
			first_success =
			    rows[i].attempt > 0 ? rows[i].attempt : 1;
		if (rows[i].decision == DECISION_DEFER &&
		    (rc = plateau_add(r, rows, first, i)) < 0)
			return rc;
		if (!stats_transient(rows[i].outcome))
			continue;
		r->recovery[rows[i].outcome].failures++;
		r->recovery_total.failures++;
		for (j = i + 1; j < end; j++)
			if (rows[j].outcome == OUTCOME_SUCCESS)
				break;
		if (j < end) {
			r->recovery[rows[i].outcome].recovered++;
			r->recovery_total.recovered++;
		}
	}
	if (ended == 0)
		return 0;
	r->stories++;
	r->stories_done += first_success > 0;
	r->done_first_try += first_success == 1;
	r->done_after_retries += first_success > 1;
	sc = &r->story_costs[r->nstory_costs++];
	memset(sc, 0, sizeof(*sc));
	memcpy(sc->story_id, rows[first].story_id, sizeof(sc->story_id) - 1);
	for (i = first; i < end; i++)
		if (rows[i].outcome != OUTCOME_NONE) {
			sc->runs++;
			sc->cost_usd += rows[i].cost_usd;
		}
	return 0;
}

static int
cmp_story_id(const void *a, const void *b)
{
	return strcmp(((const struct stats_story_cost *)a)->story_id,
	    ((const struct stats_story_cost *)b)->story_id);
}

static int
cmp_story_cost(const void *a, const void *b)
{
	const struct stats_story_cost *x = a, *y = b;

	if (x->cost_usd != y->cost_usd)
		return x->cost_usd < y->cost_usd ? 1 : -1;
	return strcmp(x->story_id, y->story_id);
}

/* One line per story id, the same id of several batches summed, the
 * dearest first. */
static void
story_costs_merge(struct stats_result *r)
{
	size_t i, k = 0;

	if (r->nstory_costs == 0)
		return;
	qsort(r->story_costs, r->nstory_costs, sizeof(*r->story_costs),
	    cmp_story_id);
	for (i = 1; i < r->nstory_costs; i++) {
		if (strcmp(r->story_costs[k].story_id,
			r->story_costs[i].story_id) == 0) {
			r->story_costs[k].runs += r->story_costs[i].runs;
			r->story_costs[k].cost_usd +=
			    r->story_costs[i].cost_usd;
		} else {
			r->story_costs[++k] = r->story_costs[i];
		}
	}
	r->nstory_costs = k + 1;
	qsort(r->story_costs, r->nstory_costs, sizeof(*r->story_costs),
	    cmp_story_cost);
}

static void
delays_finish(struct stats_result *r, struct work *w)
{
	struct stats_delay *d;
	size_t c, i;

	for (c = 0; c < CAUSE__COUNT; c++) {
		d = &r->delays[c];
		qsort(w->delays[c], w->ndelays[c], sizeof(int64_t), cmp_i64);
		d->count = (int)w->ndelays[c];
		for (i = 0; i < w->ndelays[c]; i++)
			d->total_ms += w->delays[c][i];
		if (d->count == 0)
			continue;
		/* the mean in whole ms, rounded half up */
		d->mean_ms = (d->total_ms + d->count / 2) / d->count;
		d->p50_ms = stats_percentile(w->delays[c], w->ndelays[c], 50);
		d->p95_ms = stats_percentile(w->delays[c], w->ndelays[c], 95);
		d->max_ms = w->delays[c][w->ndelays[c] - 1];
		r->waits_ms += d->total_ms;
		if (c == CAUSE_RATE_LIMIT || c == CAUSE_USAGE_LIMIT)
			r->limit_waits_ms += d->total_ms;
	}
}

static void
events_add(struct stats_result *r, const struct stats_event *ev, size_t nev)
{
	size_t i;

	for (i = 0; i < nev; i++) {
		r->breaker_pauses += strcmp(ev[i].kind, "breaker") == 0;
		r->stops += strcmp(ev[i].kind, "stopped") == 0;
	}
}

static bool
same_story(const struct stats_attempt *a, const struct stats_attempt *b)
{
	return a->batch_id == b->batch_id &&
	    strcmp(a->story_id, b->story_id) == 0;
}

/* Every row by itself, then every story (a run of rows of one story). */
static int
rows_walk(struct stats_result *r, struct work *w,
    const struct stats_attempt *rows, size_t n)
{
	size_t i, first = 0;
	int rc = 0;

	for (i = 0; i < n && rc == 0; i++) {
		if (i == 0 || rows[i].batch_id != rows[i - 1].batch_id)
			r->batches++;
		if (i > 0 && !same_story(&rows[i], &rows[first])) {
			rc = story_add(r, rows, first, i);
			first = i;
		}
		if (rows[i].outcome == OUTCOME_NONE)
			r->running++;
		else if (rc == 0)
			rc = row_add(r, w, &rows[i]);
	}
	if (rc == 0 && n > 0)
		rc = story_add(r, rows, first, n);
	return rc;
}

int
stats_compute(struct stats_result *out, const struct stats_attempt *rows,
    size_t n, const struct stats_event *events, size_t nev)
{
	struct work w;
	size_t c;
	int rc = 0;

	memset(out, 0, sizeof(*out));
	memset(&w, 0, sizeof(w));
	for (c = 0; c < CAUSE__COUNT && rc == 0; c++)
		if ((w.delays[c] = malloc((n + 1) * sizeof(int64_t))) == NULL)
			rc = SC_EOS;
	if (rc == 0 &&
	    (out->story_costs = malloc((n + 1) * sizeof(*out->story_costs))) ==
		NULL)
		rc = SC_EOS;
	if (rc == 0)
		rc = rows_walk(out, &w, rows, n);
	if (rc == 0) {
		delays_finish(out, &w);
		story_costs_merge(out);
		events_add(out, events, nev);
	}
	for (c = 0; c < CAUSE__COUNT; c++)
		free(w.delays[c]);
	if (rc < 0)
		stats_result_free(out);
	return rc;
}

void
stats_result_free(struct stats_result *r)
{
	if (r == NULL)
		return;
	free(r->agents);
	free(r->tries);
	free(r->story_costs);
	free(r->plateaus);
	memset(r, 0, sizeof(*r));
}
