/*
 * report_stats.c - the report's telemetry section (docs/report.md,
 * docs/stats.md): the model's `stats` (stats --json of the same batch)
 * as a few small tables, the same rows in HTML and in markdown.
 *
 * Each table is built once as rows of cells (struct table) and then
 * written in either form, so that the two reports cannot show different
 * figures.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "controller/report/report_int.h"

#define TABLE_COLS 6
#define TABLE_ROWS 64
#define CELL 96

struct table {
	const char *id; /* the HTML id and caption's anchor */
	const char *caption;
	const char *head[TABLE_COLS];
	int ncol, nrow;
	char cell[TABLE_ROWS][TABLE_COLS][CELL];
};

static void
table_init(struct table *t, const char *id, const char *caption, int ncol,
    const char *const *head)
{
	int i;

	memset(t, 0, sizeof(*t));
	t->id = id;
	t->caption = caption;
	t->ncol = ncol;
	for (i = 0; i < ncol; i++)
		t->head[i] = head[i];
}

/* A new row, or NULL when the table is full (the rest is left out: the
 * report is a summary, stats --json has everything). */
static char (*table_row(struct table *t))[CELL]
{
	if (t->nrow == TABLE_ROWS)
		return NULL;
	return t->cell[t->nrow++];
}

static void
fmt_rate(char *buf, const json_t *r)
{
	if (json_is_number(r))
		snprintf(buf, CELL, "%.0f%%", json_number_value(r) * 100.0);
	else
		snprintf(buf, CELL, "-");
}

static void
fmt_dur(char *buf, int64_t ms)
{
	report_fmt_ms(buf, CELL, ms);
}

static void
table_agents(struct table *t, const json_t *st)
{
	static const char *const head[] = {
	    "agent", "attempts", "successes", "ran for", "cost"};
	const json_t *a,
	    *costs = json_object_get(json_object_get(st, "cost"), "by_agent"),
	    *c;
	char(*row)[CELL];
	size_t i, k;
	double usd;

	table_init(t, "t-agents", "Attempts by agent", 5, head);
	json_array_foreach(
	    json_object_get(json_object_get(st, "attempts"), "by_agent"), i, a)
	{
		if ((row = table_row(t)) == NULL)
			break;
		usd = 0;
		json_array_foreach(costs, k, c)
		{
			if (strcmp(report_str(c, "agent"),
				report_str(a, "agent")) == 0)
				usd = json_number_value(
				    json_object_get(c, "cost_usd"));
		}
		snprintf(row[0], CELL, "%s", report_str(a, "agent"));
		snprintf(
		    row[1], CELL, "%lld", (long long)report_int(a, "attempts"));
		snprintf(
		    row[2], CELL, "%lld", (long long)report_int(a, "success"));
		fmt_dur(row[3], report_int(a, "run_ms"));
		snprintf(row[4], CELL, "$%.2f", usd);
	}
}

static void
table_by_attempt(struct table *t, const json_t *st)
{
	static const char *const head[] = {
	    "attempt", "tries", "successes", "success rate"};
	const json_t *a;
	char(*row)[CELL];
	size_t i;

	table_init(t, "t-by-attempt", "Success by attempt number", 4, head);
	json_array_foreach(
	    json_object_get(json_object_get(st, "success"), "by_attempt"), i, a)
	{
		if ((row = table_row(t)) == NULL)
			break;
		snprintf(
		    row[0], CELL, "%lld", (long long)report_int(a, "attempt"));
		snprintf(
		    row[1], CELL, "%lld", (long long)report_int(a, "tries"));
		snprintf(
		    row[2], CELL, "%lld", (long long)report_int(a, "success"));
		fmt_rate(row[3], json_object_get(a, "rate"));
	}
}

static void
table_delays(struct table *t, const json_t *st)
{
	static const char *const head[] = {
	    "wait for", "count", "mean", "p50", "p95", "in all"};
	static const char *const causes[] = {
	    "network", "rate_limit", "usage_limit", "backoff"};
	const json_t *d;
	char(*row)[CELL];
	size_t i;

	table_init(t, "t-delays", "Waits by cause", 6, head);
	for (i = 0; i < 4; i++) {
		d = json_object_get(json_object_get(st, "delays"), causes[i]);
		if (report_int(d, "count") == 0 || (row = table_row(t)) == NULL)
			continue;
		snprintf(row[0], CELL, "%s", causes[i]);
		snprintf(
		    row[1], CELL, "%lld", (long long)report_int(d, "count"));
		fmt_dur(row[2], report_int(d, "mean_ms"));
		fmt_dur(row[3], report_int(d, "p50_ms"));
		fmt_dur(row[4], report_int(d, "p95_ms"));
		fmt_dur(row[5], report_int(d, "total_ms"));
	}
}

static void
table_errors(struct table *t, const json_t *st)
{
	static const char *const head[] = {
	    "error code", "outcome", "kind", "count"};
	const json_t *e;
	char(*row)[CELL];
	size_t i;

	table_init(t, "t-errors", "Error codes", 4, head);
	json_array_foreach(json_object_get(st, "error_codes"), i, e)
	{
		if ((row = table_row(t)) == NULL)
			break;
		snprintf(row[0], CELL, "%s", report_str(e, "code"));
		snprintf(row[1], CELL, "%s", report_str(e, "outcome"));
		snprintf(row[2], CELL, "%s", report_str(e, "class"));
		snprintf(
		    row[3], CELL, "%lld", (long long)report_int(e, "count"));
	}
}

static void
table_plateaus(struct table *t, const json_t *st)
{
	static const char *const head[] = {
	    "story", "attempt", "tasks", "agents"};
	const json_t *p, *a;
	char(*row)[CELL];
	size_t i, k;
	size_t used;

	table_init(t, "t-plateaus", "Plateaus (deferred)", 4, head);
	json_array_foreach(json_object_get(st, "plateaus"), i, p)
	{
		if ((row = table_row(t)) == NULL)
			break;
		snprintf(row[0], CELL, "%s", report_str(p, "story"));
		snprintf(
		    row[1], CELL, "%lld", (long long)report_int(p, "attempt"));
		snprintf(row[2], CELL, "%lld/%lld",
		    (long long)report_int(p, "tasks_completed"),
		    (long long)report_int(p, "tasks_total"));
		used = 0;
		json_array_foreach(json_object_get(p, "agents"), k, a)
		{
			used += (size_t)snprintf(row[3] + used,
			    used < CELL ? CELL - used : 0, "%s%s",
			    k ? ", " : "",
			    json_string_value(a) ? json_string_value(a) : "");
			if (used >= CELL)
				break;
		}
	}
}

/* The one-line summary above the tables. */
static void
summary(char *buf, size_t len, const json_t *st)
{
	const json_t *s = json_object_get(st, "success"),
		     *r = json_object_get(st, "recovery"),
		     *tl = json_object_get(st, "time_lost");
	char first[CELL], rec[CELL], lost[CELL];

	fmt_rate(first, json_object_get(s, "first_try_rate"));
	fmt_rate(rec, json_object_get(r, "rate"));
	fmt_dur(lost, report_int(tl, "total_ms"));
	snprintf(buf, len,
	    "%lld of %lld stories done (%s on the first try); %lld of %lld "
	    "transient failures recovered (%s); %s lost to waits and limits; "
	    "%lld breaker pauses, %lld stops; $%.2f spent.",
	    (long long)report_int(s, "done"),
	    (long long)report_int(s, "stories"), first,
	    (long long)report_int(r, "recovered"),
	    (long long)report_int(r, "failures"), rec, lost,
	    (long long)report_int(tl, "breaker_pauses"),
	    (long long)report_int(tl, "stops"),
	    json_number_value(
		json_object_get(json_object_get(st, "cost"), "cost_usd")));
}

typedef void (*table_fill)(struct table *, const json_t *);
static const table_fill tables[] = {
    table_agents, table_by_attempt, table_delays, table_errors, table_plateaus};

static void
html_table(FILE *f, const struct table *t)
{
	int r, c;

	if (t->nrow == 0)
		return;
	fprintf(f,
	    "<div class=\"scroll\"><table class=\"stat\" id=\"%s\">"
	    "<caption>%s</caption><thead><tr>",
	    t->id, t->caption);
	for (c = 0; c < t->ncol; c++)
		fprintf(f, "<th>%s</th>", t->head[c]);
	fputs("</tr></thead><tbody>", f);
	for (r = 0; r < t->nrow; r++) {
		fputs("<tr>", f);
		for (c = 0; c < t->ncol; c++) {
			fputs("<td>", f);
			report_put_html(f, t->cell[r][c]);
			fputs("</td>", f);
		}
		fputs("</tr>", f);
	}
	fputs("</tbody></table></div>\n", f);
}

static void
md_table(FILE *f, const struct table *t)
{
	int r, c;

	if (t->nrow == 0)
		return;
	fprintf(f, "**%s**\n\n|", t->caption);
	for (c = 0; c < t->ncol; c++)
		fprintf(f, " %s |", t->head[c]);
	fputs("\n|", f);
	for (c = 0; c < t->ncol; c++)
		fputs("---|", f);
	fputc('\n', f);
	for (r = 0; r < t->nrow; r++) {
		fputc('|', f);
		for (c = 0; c < t->ncol; c++) {
			fputc(' ', f);
			report_put_md(f, t->cell[r][c]);
			fputs(" |", f);
		}
		fputc('\n', f);
	}
	fputc('\n', f);
}

/* The section in either form: the same summary and tables. */
static void
stats_write(FILE *f, const json_t *model, bool md)
{
	const json_t *st = json_object_get(model, "stats");
	struct table *t = malloc(sizeof(*t));
	char line[600];
	size_t i;

	if (t == NULL || st == NULL) {
		free(t);
		return;
	}
	summary(line, sizeof(line), st);
	if (md) {
		fprintf(f, "## Telemetry\n\n%s\n\n", line);
	} else {
		fputs("<section id=\"telemetry\" aria-labelledby=\"tm-h\"><h2 "
		      "id=\"tm-h\">Telemetry</h2><p id=\"summary\">",
		    f);
		report_put_html(f, line);
		fputs("</p><div class=\"stats\">\n", f);
	}
	for (i = 0; i < sizeof(tables) / sizeof(tables[0]); i++) {
		tables[i](t, st);
		if (md)
			md_table(f, t);
		else
			html_table(f, t);
	}
	if (!md)
		fputs("</div></section>\n", f);
	free(t);
}

void
report_stats_html(FILE *f, const json_t *model)
{
	stats_write(f, model, false);
}

void
report_stats_md(FILE *f, const json_t *model)
{
	stats_write(f, model, true);
}
