/*
 * views_stats.c - the read model's telemetry: reference 001's figures
 * over the latest batch, one batch or all of them, read once from a
 * view for `stats` and GET /v1/stats (docs/stats.md, docs/json.md#stats).
 * The figures are strategies/stats.c's; the table is cmd_stats.c's.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "controller/cli/cli.h"
#include "controller/views/view.h"
#include "controller/views/views.h"
#include "state/db.h"
#include "strategies/stats.h"
#include "strategies/number.h"

int
views_stats_select(
    int64_t *out, const char *batch, bool all, struct sc_err *err)
{
	int id = 0, rc;

	*out = 0;
	if (batch != NULL && all)
		return err_set(err, SC_EUSAGE,
		    "stats: choose one batch or all of them, not both "
		    "(--batch, --all)");
	if (all)
		*out = -1;
	if (batch == NULL)
		return 0;
	rc = number_parse_int(
	    &id, batch, "stats: a batch id", 1, INT32_MAX, err);
	if (rc == 0)
		*out = id;
	return rc;
}

/* The rows and events of the scope, as the pure computation takes them:
 * *rows and *ev are the caller's (free()). */
static int
stats_read(struct stats_attempt **rows, size_t *n, struct stats_event **ev,
    size_t *nev, struct view *v, int64_t batch, struct sc_err *err)
{
	struct attempt_brief *b = NULL;
	struct event_row *e = NULL;
	size_t i, nb = 0, ne = 0;
	int rc;

	rc = db_attempt_briefs(v->db, &b, &nb, batch, err);
	if (rc == 0)
		rc = db_events_list(v->db, &e, &ne, batch, 0, err);
	if (rc == 0 &&
	    ((*rows = calloc(nb + 1, sizeof(**rows))) == NULL ||
		(*ev = calloc(ne + 1, sizeof(**ev))) == NULL))
		rc = err_set(err, SC_EOS, "out of memory");
	for (i = 0; rc == 0 && i < nb; i++) {
		struct stats_attempt *a = &(*rows)[i];

		a->batch_id = b[i].batch_id;
		memcpy(a->story_id, b[i].story_id, sizeof(a->story_id));
		a->attempt = b[i].attempt;
		a->seq = b[i].seq;
		a->counted = b[i].counted;
		a->role = b[i].role;
		memcpy(a->agent, b[i].agent, sizeof(a->agent));
		a->started_ms = b[i].started_ms;
		a->ended_ms = b[i].ended_ms;
		a->outcome = b[i].outcome;
		a->error_code = b[i].error_code;
		a->tasks_completed = b[i].tasks_completed;
		a->tasks_total = b[i].tasks_total;
		a->delay_ms = b[i].delay_ms;
		a->decision = b[i].decision;
		a->cost_usd = b[i].cost_usd;
	}
	for (i = 0; rc == 0 && i < ne; i++) {
		(*ev)[i].batch_id = e[i].batch_id;
		memcpy((*ev)[i].kind, e[i].kind, sizeof((*ev)[i].kind));
	}
	if (rc == 0) {
		*n = nb;
		*nev = ne;
	}
	free(b);
	event_rows_free(e, ne);
	return rc;
}

/* The batch the figures cover: batch > 0 that one (it must exist), 0 the
 * latest, -1 every batch (*id 0 then). */
static int
stats_scope(int64_t *id, struct view *v, int64_t batch, struct sc_err *err)
{
	char *ids = NULL;
	int rc = 0;

	*id = batch < 0 ? 0 : batch == 0 && v->have_batch ? v->batch.id : batch;
	if (batch <= 0)
		return 0;
	if (v->db != NULL)
		rc = db_batch_story_ids(v->db, &ids, batch, err);
	if (rc == 0 && ids == NULL)
		rc = err_set(err, SC_EUSAGE, "stats: no batch %" PRId64 "%s",
		    batch,
		    v->have_batch ? "; storyctl stats --all covers them all"
				  : ": no batch has run yet");
	free(ids);
	return rc;
}

int
views_stats_read(struct stats_result *out, int64_t *id, struct view *v,
    int64_t batch, struct sc_err *err)
{
	struct stats_attempt *rows = NULL;
	struct stats_event *ev = NULL;
	size_t n = 0, nev = 0;
	int rc;

	memset(out, 0, sizeof(*out));
	rc = stats_scope(id, v, batch, err);
	if (rc < 0 || v->db == NULL || (batch == 0 && !v->have_batch))
		goto out;
	rc = stats_read(&rows, &n, &ev, &nev, v, batch < 0 ? 0 : *id, err);
	if (rc == 0 && stats_compute(out, rows, n, ev, nev) < 0)
		rc = err_set(err, SC_EOS, "out of memory");
out:
	free(rows);
	free(ev);
	return rc;
}

/* --- JSON (docs/json.md#stats) --------------------------------------- */

/* num / den rounded to 4 places; null when den is 0. */
static json_t *
rate_json(int num, int den)
{
	if (den <= 0)
		return json_null();
	return json_real(round((double)num / den * 10000.0) / 10000.0);
}

/* An agent's (name first) or a role's (name NULL) runs. */
static json_t *
runs_json(const char *name, const struct stats_runs *r)
{
	json_t *o = name ? json_pack("{s:s}", "agent", name) : json_object();

	if (o != NULL &&
	    json_object_update_new(o,
		json_pack("{s:i, s:i, s:i, s:I}", "attempts", r->runs,
		    "counted", r->counted, "success", r->success, "run_ms",
		    (json_int_t)r->run_ms)) < 0) {
		json_decref(o);
		o = NULL;
	}
	return o;
}

static json_t *
attempts_json(const struct stats_result *r)
{
	json_t *agents = json_array();
	size_t i;

	for (i = 0; agents != NULL && i < r->nagents; i++)
		json_array_append_new(
		    agents, runs_json(r->agents[i].agent, &r->agents[i].r));
	return json_pack("{s:i, s:i, s:i, s:i, s:I, s:{s:o, s:o}, s:o}",
	    "total", r->total.runs, "counted", r->total.counted, "success",
	    r->total.success, "running", r->running, "run_ms",
	    (json_int_t)r->total.run_ms, "by_role", "primary",
	    runs_json(NULL, &r->roles[ROLE_PRIMARY]), "fallback",
	    runs_json(NULL, &r->roles[ROLE_FALLBACK]), "by_agent", agents);
}

static json_t *
success_json(const struct stats_result *r)
{
	json_t *by = json_array();
	size_t i;

	for (i = 0; by != NULL && i < r->ntries; i++)
		json_array_append_new(by,
		    json_pack("{s:i, s:i, s:i, s:o}", "attempt",
			r->tries[i].attempt, "tries", r->tries[i].tries,
			"success", r->tries[i].success, "rate",
			rate_json(r->tries[i].success, r->tries[i].tries)));
	return json_pack("{s:i, s:i, s:i, s:i, s:o, s:o, s:o}", "stories",
	    r->stories, "done", r->stories_done, "first_try", r->done_first_try,
	    "after_retries", r->done_after_retries, "first_try_rate",
	    rate_json(r->done_first_try, r->stories), "done_rate",
	    rate_json(r->stories_done, r->stories), "by_attempt", by);
}

static json_t *
recovery_json(const struct stats_result *r)
{
	static const enum outcome order[] = {OUTCOME_NETWORK,
	    OUTCOME_RATE_LIMIT, OUTCOME_TIMEOUT, OUTCOME_USAGE_LIMIT};
	json_t *by = json_object();
	const struct stats_recovery *x;
	size_t i;

	for (i = 0; by != NULL && i < sizeof(order) / sizeof(*order); i++) {
		x = &r->recovery[order[i]];
		json_object_set_new(by, outcome_name(order[i]),
		    json_pack("{s:i, s:i, s:o}", "failures", x->failures,
			"recovered", x->recovered, "rate",
			rate_json(x->recovered, x->failures)));
	}
	return json_pack("{s:i, s:i, s:o, s:o}", "failures",
	    r->recovery_total.failures, "recovered",
	    r->recovery_total.recovered, "rate",
	    rate_json(r->recovery_total.recovered, r->recovery_total.failures),
	    "by_outcome", by);
}

static json_t *
delays_json(const struct stats_result *r)
{
	json_t *o = json_object();
	const struct stats_delay *d;
	int c;

	for (c = 0; o != NULL && c < CAUSE__COUNT; c++) {
		d = &r->delays[c];
		json_object_set_new(o, stats_cause_name((enum stats_cause)c),
		    json_pack("{s:i, s:I, s:I, s:I, s:I, s:I}", "count",
			d->count, "total_ms", (json_int_t)d->total_ms,
			"mean_ms", (json_int_t)d->mean_ms, "p50_ms",
			(json_int_t)d->p50_ms, "p95_ms", (json_int_t)d->p95_ms,
			"max_ms", (json_int_t)d->max_ms));
	}
	return o;
}

/* "transient", "permanent" or "other" (docs/stats.md#error-codes). */
static const char *
errcode_class(enum error_code c)
{
	enum outcome o = errcode_outcome(c);

	if (stats_transient(o))
		return "transient";
	return o == OUTCOME_PERMANENT ? "permanent" : "other";
}

/* Error codes by count, the most frequent first (ties in the order of
 * docs/design.md#words). */
static json_t *
errcodes_json(const struct stats_result *r)
{
	json_t *arr = json_array();
	int c, best, done[ERRC__COUNT] = {0};

	for (;;) {
		best = -1;
		for (c = 1; c < ERRC__COUNT; c++)
			if (!done[c] && r->errcodes[c] > 0 &&
			    (best < 0 || r->errcodes[c] > r->errcodes[best]))
				best = c;
		if (best < 0 || arr == NULL)
			break;
		done[best] = 1;
		json_array_append_new(arr,
		    json_pack("{s:s, s:s, s:s, s:i}", "code",
			errcode_name((enum error_code)best), "outcome",
			outcome_name(errcode_outcome((enum error_code)best)),
			"class", errcode_class((enum error_code)best), "count",
			r->errcodes[best]));
	}
	return arr;
}

static json_t *
cost_json(const struct stats_result *r)
{
	json_t *agents = json_array(), *stories = json_array();
	size_t i;

	for (i = 0; agents != NULL && i < r->nagents; i++)
		json_array_append_new(agents,
		    json_pack("{s:s, s:f}", "agent", r->agents[i].agent,
			"cost_usd", r->agents[i].r.cost_usd));
	for (i = 0; stories != NULL && i < r->nstory_costs; i++)
		json_array_append_new(stories,
		    json_pack("{s:s, s:i, s:f}", "story",
			r->story_costs[i].story_id, "attempts",
			r->story_costs[i].runs, "cost_usd",
			r->story_costs[i].cost_usd));
	return json_pack("{s:f, s:o, s:o}", "cost_usd", r->total.cost_usd,
	    "by_agent", agents, "by_story", stories);
}

static json_t *
plateaus_json(const struct stats_result *r)
{
	json_t *arr = json_array(), *agents;
	const struct stats_plateau *p;
	size_t i;

	for (i = 0; arr != NULL && i < r->nplateaus; i++) {
		p = &r->plateaus[i];
		agents = json_pack("[s]", p->agents[0]);
		if (p->agents[1][0] != '\0')
			json_array_append_new(
			    agents, json_string(p->agents[1]));
		json_array_append_new(arr,
		    json_pack("{s:I, s:s, s:i, s:i, s:i, s:o}", "batch",
			(json_int_t)p->batch_id, "story", p->story_id,
			"attempt", p->attempt, "tasks_completed",
			p->tasks_completed, "tasks_total", p->tasks_total,
			"agents", agents));
	}
	return arr;
}

static json_t *
outcomes_json(const struct stats_result *r)
{
	json_t *o = json_object();
	int i;

	for (i = 1; o != NULL && i < OUTCOME__COUNT; i++)
		json_object_set_new(o, outcome_name((enum outcome)i),
		    json_integer(r->outcomes[i]));
	return o;
}

static json_t *
time_lost_json(const struct stats_result *r)
{
	return json_pack("{s:I, s:I, s:I, s:I, s:i, s:i}", "total_ms",
	    (json_int_t)(r->waits_ms + r->limit_runs_ms), "waits_ms",
	    (json_int_t)r->waits_ms, "limit_waits_ms",
	    (json_int_t)r->limit_waits_ms, "limit_runs_ms",
	    (json_int_t)r->limit_runs_ms, "breaker_pauses", r->breaker_pauses,
	    "stops", r->stops);
}

/* One builder for stats --json and GET /v1/stats (docs/api.md). */
int
views_stats_json(
    json_t **out, struct view *v, int64_t batch, struct sc_err *err)
{
	struct stats_result r;
	int64_t id = 0;
	json_t *o = NULL;
	int rc;

	*out = NULL;
	rc = views_stats_read(&r, &id, v, batch, err);
	if (rc < 0)
		goto out;
	o = json_pack("{s:i, s:s, s:o, s:i, s:o, s:o, s:o, s:o, s:o, s:o, "
		      "s:o, s:o, s:o}",
	    "format_version", CLI_JSON_FORMAT_VERSION, "scope",
	    batch < 0 ? "all" : "batch", "batch",
	    id > 0 ? json_integer(id) : json_null(), "batches", r.batches,
	    "attempts", attempts_json(&r), "outcomes", outcomes_json(&r),
	    "success", success_json(&r), "recovery", recovery_json(&r),
	    "delays", delays_json(&r), "error_codes", errcodes_json(&r),
	    "time_lost", time_lost_json(&r), "cost", cost_json(&r), "plateaus",
	    plateaus_json(&r));
	if (o == NULL)
		rc = err_set(err, SC_EOS, "out of memory");
	*out = o;
out:
	stats_result_free(&r);
	return rc;
}
