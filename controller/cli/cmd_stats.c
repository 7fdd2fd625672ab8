/*
 * cmd_stats.c - `storyctl stats`: reference 001's telemetry over the
 * latest batch, one batch or all of them, as a table or JSON; the JSON
 * is built once here for the CLI and GET /v1/stats (docs/stats.md,
 * docs/json.md#stats).  The figures are strategies/stats.c's.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "controller/cli/cli.h"
#include "controller/clock.h"
#include "controller/cli/help.h"
#include "controller/cli/opts.h"
#include "controller/views/view.h"
#include "controller/views/views.h"
#include "state/db.h"
#include "strategies/stats.h"

/* How many stories the text lists by cost: the dearest ones. */
#define STATS_TEXT_STORIES 10

/* --- text (docs/commands.md#stats) ----------------------------------- */

/* "25.0%", or "-" when den is 0. */
static const char *
pct(char *buf, size_t len, int num, int den)
{
	if (den <= 0)
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, "%.1f%%", 100.0 * num / den);
	return buf;
}

static const char *
dur(char *buf, size_t len, int64_t ms)
{
	clock_fmt_duration(buf, len, ms);
	return buf;
}

static void
text_head(FILE *f, const struct stats_result *r, int64_t id, int64_t batch)
{
	if (batch < 0)
		fprintf(f, "all batches (%d with attempts)\n", r->batches);
	else if (id > 0)
		fprintf(f, "batch %" PRId64 "\n", id);
	else
		fprintf(f, "no batch has run yet\n");
	fprintf(f,
	    "attempts: %d ended (%d counted), %d succeeded, %d running; "
	    "%d stories with attempts, %d done\n",
	    r->total.runs, r->total.counted, r->total.success, r->running,
	    r->stories, r->stories_done);
}

static void
text_agents(FILE *f, const struct stats_result *r)
{
	char b1[32], b2[32];
	size_t i;
	int k;

	fprintf(f, "\n%-20s %8s %8s %8s %10s %10s\n", "agent", "attempts",
	    "counted", "success", "run time", "cost");
	for (i = 0; i < r->nagents; i++) {
		snprintf(b2, sizeof(b2), "$%.2f", r->agents[i].r.cost_usd);
		fprintf(f, "%-20s %8d %8d %8d %10s %10s\n", r->agents[i].agent,
		    r->agents[i].r.runs, r->agents[i].r.counted,
		    r->agents[i].r.success,
		    dur(b1, sizeof(b1), r->agents[i].r.run_ms), b2);
	}
	for (k = 0; k < 2; k++)
		fprintf(f, "%-20s %8d %8d %8d %10s\n",
		    k == 0 ? "(primary role)" : "(fallback role)",
		    r->roles[k].runs, r->roles[k].counted, r->roles[k].success,
		    dur(b1, sizeof(b1), r->roles[k].run_ms));
}

static void
text_success(FILE *f, const struct stats_result *r)
{
	char b[32];
	size_t i;

	fprintf(
	    f, "\n%-8s %8s %8s %8s\n", "attempt", "tries", "success", "rate");
	for (i = 0; i < r->ntries; i++)
		fprintf(f, "%-8d %8d %8d %8s\n", r->tries[i].attempt,
		    r->tries[i].tries, r->tries[i].success,
		    pct(b, sizeof(b), r->tries[i].success, r->tries[i].tries));
	fprintf(f, "done first try: %d of %d stories (%s); after retries: %d\n",
	    r->done_first_try, r->stories,
	    pct(b, sizeof(b), r->done_first_try, r->stories),
	    r->done_after_retries);
}

static void
text_recovery(FILE *f, const struct stats_result *r)
{
	char b[32];
	const char *sep = ":";
	int o;

	fprintf(f, "\ntransient failures: %d, recovered %d (%s)",
	    r->recovery_total.failures, r->recovery_total.recovered,
	    pct(b, sizeof(b), r->recovery_total.recovered,
		r->recovery_total.failures));
	for (o = 0; o < OUTCOME__COUNT; o++)
		if (stats_transient((enum outcome)o) &&
		    r->recovery[o].failures > 0) {
			fprintf(f, "%s %s %d/%d", sep,
			    outcome_name((enum outcome)o),
			    r->recovery[o].recovered, r->recovery[o].failures);
			sep = ",";
		}
	fprintf(f, "\n");
}

static void
text_delays(FILE *f, const struct stats_result *r)
{
	char b[5][32];
	const struct stats_delay *d;
	int c;

	fprintf(f, "\n%-12s %6s %10s %10s %10s %10s %10s\n", "delay cause",
	    "count", "mean", "p50", "p95", "max", "total");
	for (c = 0; c < CAUSE__COUNT; c++) {
		d = &r->delays[c];
		if (d->count == 0)
			continue;
		fprintf(f, "%-12s %6d %10s %10s %10s %10s %10s\n",
		    stats_cause_name((enum stats_cause)c), d->count,
		    dur(b[0], 32, d->mean_ms), dur(b[1], 32, d->p50_ms),
		    dur(b[2], 32, d->p95_ms), dur(b[3], 32, d->max_ms),
		    dur(b[4], 32, d->total_ms));
	}
}

static void
text_codes(FILE *f, const struct stats_result *r)
{
	int c;

	fprintf(f, "\nerror codes:");
	for (c = 1; c < ERRC__COUNT; c++)
		if (r->errcodes[c] > 0)
			fprintf(f, " %s %d", errcode_name((enum error_code)c),
			    r->errcodes[c]);
	fprintf(f, "%s\n", r->total.runs == r->total.success ? " none" : "");
}

static void
text_lost_cost(FILE *f, const struct stats_result *r)
{
	char b[3][32];
	size_t i;

	fprintf(f,
	    "time lost: %s waiting (%s of it for rate and usage limits), "
	    "%s in attempts that hit a limit; %d breaker pause%s, %d "
	    "stop%s\n",
	    dur(b[0], 32, r->waits_ms), dur(b[1], 32, r->limit_waits_ms),
	    dur(b[2], 32, r->limit_runs_ms), r->breaker_pauses,
	    r->breaker_pauses == 1 ? "" : "s", r->stops,
	    r->stops == 1 ? "" : "s");
	fprintf(f, "cost: $%.2f", r->total.cost_usd);
	for (i = 0; i < r->nstory_costs && i < STATS_TEXT_STORIES; i++)
		fprintf(f, "%s %s $%.2f", i == 0 ? "; dearest stories:" : ",",
		    r->story_costs[i].story_id, r->story_costs[i].cost_usd);
	fprintf(f, "\n");
	for (i = 0; i < r->nplateaus; i++)
		fprintf(f,
		    "plateau: %s (batch %" PRId64
		    ") deferred after attempt %d at %d/%d tasks (%s%s%s)\n",
		    r->plateaus[i].story_id, r->plateaus[i].batch_id,
		    r->plateaus[i].attempt, r->plateaus[i].tasks_completed,
		    r->plateaus[i].tasks_total, r->plateaus[i].agents[0],
		    r->plateaus[i].agents[1][0] ? ", " : "",
		    r->plateaus[i].agents[1]);
}

static void
stats_print_text(
    FILE *f, const struct stats_result *r, int64_t id, int64_t batch)
{
	text_head(f, r, id, batch);
	if (r->total.runs == 0)
		return;
	text_agents(f, r);
	text_success(f, r);
	text_recovery(f, r);
	text_delays(f, r);
	text_codes(f, r);
	text_lost_cost(f, r);
}

static int
stats_parse(
    int *json, int64_t *batch, int argc, char **argv, struct sc_err *err)
{
	struct opts o;
	int rc;

	rc = opts_parse(&o, "stats", help_stats.options, argc, argv, err);
	if (rc == 0 && o.nargs > 0)
		rc = err_set(err, SC_EUSAGE, "stats: unexpected argument '%s'",
		    o.args[0]);
	if (rc == 0) {
		*json = opts_has(&o, "--json");
		rc = views_stats_select(batch, opts_value(&o, "--batch"),
		    opts_has(&o, "--all"), err);
	}
	opts_release(&o);
	return rc;
}

int
cmd_stats(struct cli *cli, int argc, char **argv, struct sc_err *err)
{
	struct view v;
	struct stats_result r;
	json_t *j = NULL;
	int64_t batch = 0, id = 0;
	int json = 0, rc;

	memset(&r, 0, sizeof(r));
	rc = stats_parse(&json, &batch, argc, argv, err);
	if (rc < 0)
		return rc;
	rc = view_open(&v, cli->config_path, cli->lender, false, err);
	if (rc < 0)
		goto out;
	if (json) {
		rc = views_stats_json(&j, &v, batch, err);
		if (rc == 0)
			rc = cli_print_json(cli, j, err);
		goto out;
	}
	rc = views_stats_read(&r, &id, &v, batch, err);
	if (rc == 0)
		stats_print_text(cli->out, &r, id, batch);
out:
	json_decref(j);
	stats_result_free(&r);
	view_close(&v);
	return rc;
}
