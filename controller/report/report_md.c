/*
 * report_md.c - see report.h: the report as markdown (docs/report.md),
 * for a pull request, an issue or a chat message: the same sections as
 * the page, with the timeline as each story's attempts in text.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "controller/report/report.h"
#include "controller/report/report_int.h"

/* One attempt under Boxes to check (report_each_flag()). */
static void
md_flag(void *ctx, const json_t *s, const json_t *a, const char *why, int n)
{
	FILE *f = ctx;

	if (n == 0)
		fputs("### Boxes to check\n\n", f);
	fputs("- **", f);
	report_put_md(f, report_str(s, "id"));
	fprintf(f, "** attempt %lld (", (long long)report_int(a, "attempt"));
	report_put_md(f, report_str(a, "agent"));
	fputs("): ", f);
	report_put_md(f, why);
	fprintf(f, " · `storyctl show %s`\n", report_str(s, "id"));
}

/* Attempts whose boxes do not match their work (docs/evidence.md). */
static void
md_flagged(FILE *f, const json_t *model)
{
	if (report_each_flag(model, md_flag, f) > 0)
		fputc('\n', f);
}

static void
md_needs(FILE *f, const json_t *model)
{
	json_t *needs = report_needs(model), *s;
	char act[REPORT_ACTIONS_MAX][200];
	size_t i;
	int k, n;

	fprintf(f, "## Needs you (%zu)\n\n", json_array_size(needs));
	if (json_array_size(needs) == 0)
		fputs("Nothing needs you: every story is done or still in the "
		      "batch.\n",
		    f);
	json_array_foreach(needs, i, s)
	{
		fputs("- **", f);
		report_put_md(f, report_str(s, "id"));
		fprintf(f, "** (%s, %lld/%lld tasks, %zu attempts): ",
		    report_str(s, "status"),
		    (long long)report_int(s, "tasks_completed"),
		    (long long)report_int(s, "tasks_total"),
		    json_array_size(json_object_get(s, "attempts")));
		report_put_md(f, report_str(s, "reason"));
		fputs("\n  ", f);
		n = report_actions(
		    act, report_str(s, "status"), report_str(s, "id"));
		for (k = 0; k < n; k++)
			fprintf(f, "%s`%s`", k ? " · " : "", act[k]);
		fputc('\n', f);
	}
	fputc('\n', f);
	md_flagged(f, model);
	json_decref(needs);
}

static void
md_attempts(FILE *f, const json_t *s)
{
	const json_t *a;
	size_t k;
	char d[64], why[400];

	json_array_foreach(json_object_get(s, "attempts"), k, a)
	{
		fprintf(f, "%s%lld ", k ? "; " : "",
		    (long long)report_int(a, "attempt"));
		report_put_md(f, report_str(a, "agent"));
		fprintf(f, " %s",
		    json_is_string(json_object_get(a, "outcome"))
			? report_str(a, "outcome")
			: "running");
		if (json_is_integer(json_object_get(a, "duration_ms"))) {
			report_fmt_ms(
			    d, sizeof(d), report_int(a, "duration_ms"));
			fprintf(f, " %s", d);
		}
		if (json_is_string(json_object_get(a, "decision")))
			fprintf(f, " → %s", report_str(a, "decision"));
		report_fmt_change(d, sizeof(d), a);
		if (d[0] != '\0')
			fprintf(f, " (%s)", d);
		if (report_flag_text(why, sizeof(why), a) > 0) {
			fputs(" ⚑ ", f);
			report_put_md(f, why);
		}
	}
}

static void
md_stories(FILE *f, const json_t *model)
{
	const json_t *s, *m;
	size_t i;

	fputs("## Stories\n\n| story | status | tasks | attempts | cost | "
	      "reason |\n|---|---|---|---|---|---|\n",
	    f);
	json_array_foreach(json_object_get(model, "stories"), i, s)
	{
		fputs("| ", f);
		report_put_md(f, report_str(s, "id"));
		fprintf(f, " | %s | %lld/%lld | ", report_str(s, "status"),
		    (long long)report_int(s, "tasks_completed"),
		    (long long)report_int(s, "tasks_total"));
		md_attempts(f, s);
		fprintf(f, " | $%.2f | ",
		    json_number_value(json_object_get(s, "cost_usd")));
		report_put_md(f, report_str(s, "reason"));
		fputs(" |\n", f);
	}
	fputc('\n', f);
	if (json_array_size(json_object_get(model, "marks")) == 0)
		return;
	fputs("## Marks\n\n", f);
	json_array_foreach(json_object_get(model, "marks"), i, m)
	{
		fprintf(f, "- %s %s: ", report_str(m, "time"),
		    report_str(m, "kind"));
		report_put_md(f, report_str(m, "message"));
		fputc('\n', f);
	}
	fputc('\n', f);
}

int
report_md(char **out, const json_t *model, struct sc_err *err)
{
	const json_t *st = json_object_get(model, "status"), *v;
	const char *k;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	*out = NULL;
	if (f == NULL)
		return err_set(err, SC_EOS, "out of memory");
	if (json_is_integer(json_object_get(st, "batch")))
		fprintf(f, "# storyctl: batch %lld\n\nstate **%s** · ",
		    (long long)report_int(st, "batch"),
		    report_str(st, "state"));
	else
		fputs("# storyctl: no batch yet\n\n", f);
	fprintf(f, "%lld stor%s · $%.2f spent · generated %s\n\n",
	    (long long)report_int(st, "stories"),
	    report_int(st, "stories") == 1 ? "y" : "ies",
	    json_number_value(json_object_get(st, "cost_usd")),
	    report_str(model, "generated_at"));
	if (strcmp(report_str(st, "state"), "stopped") == 0)
		fputs("**The batch stopped before the end:** `storyctl "
		      "resume` goes on.\n\n",
		    f);
	md_needs(f, model);
	fputs("## Counts\n\n| status | stories |\n|---|---|\n", f);
	json_object_foreach(json_object_get(st, "counts"), k, v)
	    fprintf(f, "| %s | %lld |\n", k, (long long)json_integer_value(v));
	fputc('\n', f);
	report_stats_md(f, model);
	md_stories(f, model);
	if (fclose(f) != 0) {
		free(buf);
		return err_set(err, SC_EOS, "out of memory");
	}
	*out = buf;
	return 0;
}
