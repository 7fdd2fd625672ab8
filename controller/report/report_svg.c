/*
 * report_svg.c - the night as a picture (docs/report.md#timeline): one
 * row per story, each attempt a bar from its start to its end coloured
 * by outcome and labelled in text, the wait after it a dashed line, the
 * batch's breaker pauses and stops a vertical line across every row.
 *
 * Plain SVG elements styled by the page's stylesheet (report_html.c),
 * so that the colours live in one place and the picture needs nothing
 * from the network.  Every bar and line carries a <title> (the text a
 * screen reader and a hover show) and data- attributes the browser
 * tests read.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "controller/report/report_int.h"

#define SVG_W 960 /* the picture's width in user units */
#define SVG_LABEL 180 /* the story column on the left */
#define SVG_RIGHT 16
#define SVG_TOP 36 /* the time axis */
#define SVG_ROW 30
#define SVG_BAR 20
#define SVG_CHAR 6.6 /* the width of a character of a bar's label */

/* The time window the picture spans, and the scale. */
struct frame {
	int64_t t0, t1;
	double px_per_ms;
};

/* An attempt's start: start_ms of the model (docs/report.md#model),
 * else started_at to the second. */
static int64_t
attempt_start_ms(const json_t *a)
{
	int64_t ms = report_int(a, "start_ms");

	return ms > 0 ? ms : report_time_ms(json_object_get(a, "started_at"));
}

/* An attempt's end: end_ms, started + duration, or now while it runs. */
static int64_t
attempt_end_ms(const json_t *a, int64_t start, int64_t now)
{
	json_t *d = json_object_get(a, "duration_ms");

	if (report_int(a, "end_ms") > 0)
		return report_int(a, "end_ms");
	if (json_is_integer(d))
		return start + (int64_t)json_integer_value(d);
	return now > start ? now : start;
}

static void
frame_widen(struct frame *fr, int64_t t)
{
	if (t <= 0)
		return;
	if (fr->t0 == 0 || t < fr->t0)
		fr->t0 = t;
	if (t > fr->t1)
		fr->t1 = t;
}

/* The window: every attempt, the wait after it and every mark; at
 * least ten seconds, so that a tiny batch is not a smear. */
static void
frame_fit(struct frame *fr, const json_t *model, int64_t now)
{
	const json_t *s, *a, *m;
	size_t i, k;
	int64_t st;

	memset(fr, 0, sizeof(*fr));
	json_array_foreach(json_object_get(model, "stories"), i, s)
	{
		json_array_foreach(json_object_get(s, "attempts"), k, a)
		{
			st = attempt_start_ms(a);
			if (st <= 0)
				continue;
			frame_widen(fr, st);
			frame_widen(fr,
			    attempt_end_ms(a, st, now) +
				(strcmp(report_str(a, "decision"), "retry") ==
						0 ||
					    strcmp(report_str(a, "decision"),
						"wait") == 0
					? report_int(a, "delay_ms")
					: 0));
		}
	}
	json_array_foreach(json_object_get(model, "marks"), i, m)
	    frame_widen(fr, report_time_ms(json_object_get(m, "time")));
	if (fr->t1 - fr->t0 < 10000)
		fr->t1 = fr->t0 + 10000;
	fr->px_per_ms =
	    (double)(SVG_W - SVG_LABEL - SVG_RIGHT) / (double)(fr->t1 - fr->t0);
}

static double
frame_x(const struct frame *fr, int64_t t)
{
	return SVG_LABEL + (double)(t - fr->t0) * fr->px_per_ms;
}

/* Ticks every step, the smallest of a readable set giving at most 8. */
static void
svg_axis(FILE *f, const struct frame *fr, int height)
{
	static const int64_t steps[] = {1000, 2000, 5000, 10000, 15000, 30000,
	    60000, 120000, 300000, 600000, 900000, 1800000, 3600000, 7200000,
	    10800000, 21600000, 43200000, 86400000};
	int64_t step = steps[0], t;
	size_t i;
	char lbl[16];
	struct tm tm;
	time_t sec;

	for (i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		step = steps[i];
		if ((fr->t1 - fr->t0) / step <= 8)
			break;
	}
	fputs("<g class=\"axis\">", f);
	for (t = (fr->t0 + step - 1) / step * step; t <= fr->t1; t += step) {
		sec = (time_t)(t / 1000);
		gmtime_r(&sec, &tm);
		strftime(
		    lbl, sizeof(lbl), step < 60000 ? "%H:%M:%S" : "%H:%M", &tm);
		/* a label near the right edge ends at its tick instead of
		 * being cut by the edge */
		fprintf(f,
		    "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%d\" y2=\"%d\"/>"
		    "<text x=\"%.1f\" y=\"%d\" text-anchor=\"%s\">%s</text>",
		    frame_x(fr, t), frame_x(fr, t), SVG_TOP - 4, height - 4,
		    frame_x(fr, t), SVG_TOP - 10,
		    frame_x(fr, t) > SVG_W - 32 ? "end" : "middle", lbl);
	}
	fputs("<text x=\"8\" y=\"20\" class=\"axis-unit\">UTC</text></g>\n", f);
}

/* The text inside a bar that fits its width w: "#2 codex incomplete",
 * "#2 incomplete", "#2" or nothing (the <title> still says it all). */
static void
bar_label(char *buf, size_t len, const json_t *a, double w)
{
	int n = (int)report_int(a, "attempt");
	const char *out = json_is_string(json_object_get(a, "outcome"))
	    ? report_str(a, "outcome")
	    : "running";

	snprintf(buf, len, "#%d %s %s", n, report_str(a, "agent"), out);
	if ((double)strlen(buf) * SVG_CHAR + 6 <= w)
		return;
	snprintf(buf, len, "#%d %s", n, out);
	if ((double)strlen(buf) * SVG_CHAR + 6 <= w)
		return;
	snprintf(buf, len, "#%d", n);
	if ((double)strlen(buf) * SVG_CHAR + 4 <= w)
		return;
	buf[0] = '\0';
}

/* The wait after attempt a, from x to its end, when it waited. */
static void
svg_wait(
    FILE *f, const struct frame *fr, const json_t *a, int64_t end, double ymid)
{
	const char *dec = report_str(a, "decision");
	int64_t delay = report_int(a, "delay_ms");
	bool limit = strcmp(report_str(a, "outcome"), "usage_limit") == 0;
	char d[32];

	if (delay <= 0 ||
	    (strcmp(dec, "retry") != 0 && strcmp(dec, "wait") != 0))
		return;
	report_fmt_ms(d, sizeof(d), delay);
	fprintf(f,
	    "<g class=\"%s\"><title>%s %s after attempt %lld</title>"
	    "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\"/>",
	    limit ? "limit" : "wait", limit ? "usage-limit pause" : "wait", d,
	    (long long)report_int(a, "attempt"), frame_x(fr, end),
	    frame_x(fr, end + delay), ymid, ymid);
	if (limit)
		fprintf(f, "<text x=\"%.1f\" y=\"%.1f\">limit %s</text>",
		    frame_x(fr, end) + 3, ymid - 4, d);
	fputs("</g>", f);
}

static void
svg_bar(FILE *f, const struct frame *fr, const json_t *s, const json_t *a,
    int64_t now, int row)
{
	int64_t st = attempt_start_ms(a), end;
	double x, w, y = SVG_TOP + row * SVG_ROW + (SVG_ROW - SVG_BAR) / 2.0;
	const char *out = json_is_string(json_object_get(a, "outcome"))
	    ? report_str(a, "outcome")
	    : "running";
	char lbl[160], dur[32], why[400];
	bool flagged;

	if (st <= 0)
		return;
	end = attempt_end_ms(a, st, now);
	x = frame_x(fr, st);
	w = (double)(end - st) * fr->px_per_ms;
	if (w < 3)
		w = 3;
	report_fmt_ms(dur, sizeof(dur), end - st);
	flagged = report_flag_text(why, sizeof(why), a) > 0;
	fputs("<g class=\"bar o-", f);
	report_put_html(f, out);
	if (flagged)
		fputs(" flagged", f);
	fputs("\" data-story=\"", f);
	report_put_html(f, report_str(s, "id"));
	fprintf(f, "\" data-attempt=\"%lld\" data-outcome=\"",
	    (long long)report_int(a, "attempt"));
	report_put_html(f, out);
	fputs("\" data-agent=\"", f);
	report_put_html(f, report_str(a, "agent"));
	fputs("\"><title>", f);
	report_put_html(f, report_str(s, "id"));
	fprintf(f, " attempt %lld: ", (long long)report_int(a, "attempt"));
	report_put_html(f, report_str(a, "agent"));
	fputs(" (", f);
	report_put_html(f, report_str(a, "role"));
	fputs("), ", f);
	report_put_html(f, out);
	fprintf(f, ", %lld/%lld tasks, %s",
	    (long long)report_int(a, "tasks_completed"),
	    (long long)report_int(a, "tasks_total"), dur);
	if (json_is_string(json_object_get(a, "error_code"))) {
		fputs(", ", f);
		report_put_html(f, report_str(a, "error_code"));
	}
	if (flagged) {
		fputs("; flagged: ", f);
		report_put_html(f, why);
	}
	fprintf(f,
	    "</title><rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
	    "height=\"%d\" rx=\"2\"/>",
	    x, y, w, SVG_BAR);
	bar_label(lbl, sizeof(lbl), a, w);
	if (lbl[0] != '\0') {
		fprintf(f, "<text x=\"%.1f\" y=\"%.1f\">", x + 3,
		    y + SVG_BAR / 2.0 + 4);
		report_put_html(f, lbl);
		fputs("</text>", f);
	}
	fputs("</g>", f);
	svg_wait(f, fr, a, end, y + SVG_BAR / 2.0);
}

/* The story's row: its label and its attempts. */
static void
svg_row(FILE *f, const struct frame *fr, const json_t *s, int64_t now, int row)
{
	const json_t *a;
	size_t k;
	char id[32];
	const char *sid = report_str(s, "id");
	int y = SVG_TOP + row * SVG_ROW;

	/* a long id is cut in the picture; the <title> keeps it whole */
	snprintf(id, sizeof(id), "%s", sid);
	if (strlen(sid) > 22)
		memcpy(id + 21, "\xe2\x80\xa6", 4);
	fprintf(
	    f, "<g class=\"row st-%s\" data-story=\"", report_str(s, "status"));
	report_put_html(f, sid);
	fprintf(f,
	    "\"><rect class=\"band\" x=\"0\" y=\"%d\" width=\"%d\" "
	    "height=\"%d\"/><text class=\"label\" x=\"8\" y=\"%d\">"
	    "<title>",
	    y, SVG_W, SVG_ROW, y + SVG_ROW / 2 + 5);
	report_put_html(f, sid);
	fputs(": ", f);
	report_put_html(f, report_str(s, "status"));
	fputs("</title>", f);
	report_put_html(f, id);
	fputs(" <tspan class=\"st\">", f);
	report_put_html(f, report_str(s, "status"));
	fputs("</tspan></text>", f);
	json_array_foreach(json_object_get(s, "attempts"), k, a)
	    svg_bar(f, fr, s, a, now, row);
	fputs("</g>\n", f);
}

/* Breaker pauses and stops: a line across every row. */
static void
svg_marks(FILE *f, const struct frame *fr, const json_t *model, int height)
{
	const json_t *m;
	const char *kind;
	size_t i;
	double x;

	json_array_foreach(json_object_get(model, "marks"), i, m)
	{
		kind = report_str(m, "kind");
		if (strcmp(kind, "breaker") != 0 &&
		    strcmp(kind, "stopped") != 0 &&
		    strcmp(kind, "interrupted") != 0)
			continue;
		x = frame_x(fr, report_time_ms(json_object_get(m, "time")));
		fprintf(f, "<g class=\"mark m-%s\" data-kind=\"%s\"><title>",
		    kind, kind);
		report_put_html(f, report_str(m, "message"));
		fprintf(f,
		    "</title><line x1=\"%.1f\" x2=\"%.1f\" y1=\"%d\" "
		    "y2=\"%d\"/><text x=\"%.1f\" y=\"%d\">%s</text></g>\n",
		    x, x, SVG_TOP - 2, height - 2, x + 3, SVG_TOP + 10, kind);
	}
}

void
report_svg(FILE *f, const json_t *model)
{
	const json_t *stories = json_object_get(model, "stories"), *s;
	int64_t now = report_time_ms(json_object_get(model, "generated_at"));
	struct frame fr;
	size_t i, n = json_array_size(stories);
	int height = SVG_TOP + (int)n * SVG_ROW + 8;

	frame_fit(&fr, model, now);
	fprintf(f,
	    "<svg class=\"timeline\" xmlns=\"http://www.w3.org/2000/svg\" "
	    "viewBox=\"0 0 %d %d\" width=\"%d\" height=\"%d\" role=\"img\" "
	    "aria-labelledby=\"tl-title\">"
	    "<title id=\"tl-title\">Timeline: one row per story, one bar per "
	    "attempt, coloured and labelled by outcome</title>\n",
	    SVG_W, height, SVG_W, height);
	if (fr.t0 == 0) {
		fprintf(f,
		    "<text x=\"8\" y=\"%d\">No attempt has started yet.</text>",
		    SVG_TOP);
	} else {
		svg_axis(f, &fr, height);
		json_array_foreach(stories, i, s)
		    svg_row(f, &fr, s, now, (int)i);
		svg_marks(f, &fr, model, height);
	}
	fputs("</svg>\n", f);
}
