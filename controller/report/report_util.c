/*
 * report_util.c - see report_int.h: reading the report's model and the
 * rules both renderers apply to it (docs/report.md#needs-you).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "controller/report/report_int.h"

int64_t
report_time_ms(const json_t *t)
{
	struct tm tm;
	const char *s = json_string_value(t), *e;

	if (s == NULL)
		return 0;
	memset(&tm, 0, sizeof(tm));
	e = strptime(s, "%Y-%m-%dT%H:%M:%SZ", &tm);
	if (e == NULL || *e != '\0')
		return 0;
	/* timegm: the model's times are UTC whatever TZ says */
	return (int64_t)timegm(&tm) * 1000;
}

const char *
report_str(const json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));

	return s != NULL ? s : "";
}

int64_t
report_int(const json_t *o, const char *key)
{
	return (int64_t)json_integer_value(json_object_get(o, key));
}

int
report_needs_rank(const char *status)
{
	static const char *const order[] = {
	    "escalated", "deferred", "blocked", "invalid"};
	int i;

	for (i = 0; i < 4; i++)
		if (strcmp(status, order[i]) == 0)
			return i;
	return -1;
}

int
report_actions(
    char buf[REPORT_ACTIONS_MAX][200], const char *status, const char *id)
{
	int n = 0;

	/* what happened first, then the way back into the batch */
	snprintf(buf[n++], 200, "storyctl show %s", id);
	if (strcmp(status, "escalated") == 0)
		snprintf(buf[n++], 200, "storyctl log %s", id);
	if (strcmp(status, "invalid") == 0)
		snprintf(buf[n++], 200, "storyctl tasks %s", id);
	else
		snprintf(buf[n++], 200, "storyctl requeue %s", id);
	return n;
}

json_t *
report_needs(const json_t *model)
{
	json_t *stories = json_object_get(model, "stories"), *out, *s;
	size_t i;
	int rank;

	if ((out = json_array()) == NULL)
		return NULL;
	for (rank = 0; rank < 4; rank++)
		json_array_foreach(stories, i, s)
		{
			if (report_needs_rank(report_str(s, "status")) == rank)
				json_array_append(out, s);
		}
	return out;
}

void
report_put_html(FILE *f, const char *s)
{
	for (; s != NULL && *s != '\0'; s++) {
		switch (*s) {
		case '&':
			fputs("&amp;", f);
			break;
		case '<':
			fputs("&lt;", f);
			break;
		case '>':
			fputs("&gt;", f);
			break;
		case '"':
			fputs("&quot;", f);
			break;
		case '\'':
			fputs("&#39;", f);
			break;
		default:
			fputc(*s, f);
		}
	}
}

void
report_fmt_ms(char *buf, size_t len, int64_t ms)
{
	int64_t s = ms / 1000;

	if (ms < 1000)
		snprintf(buf, len, "%lldms", (long long)(ms < 0 ? 0 : ms));
	else if (s < 60)
		snprintf(buf, len, "%llds", (long long)s);
	else if (s < 3600)
		snprintf(buf, len, "%lldm%02llds", (long long)(s / 60),
		    (long long)(s % 60));
	else
		snprintf(buf, len, "%lldh%02lldm", (long long)(s / 3600),
		    (long long)(s % 3600 / 60));
}

void
report_put_md(FILE *f, const char *s)
{
	for (; s != NULL && *s != '\0'; s++) {
		if (*s == '|')
			fputs("\\|", f);
		else if ((unsigned char)*s < 0x20)
			fputc(' ', f);
		else
			fputc(*s, f);
	}
}

int
report_flag_text(char *buf, size_t len, const json_t *a)
{
	const json_t *ev = json_object_get(a, "evidence"), *fl;
	size_t i;
	size_t used = 0;
	int n = 0;

	buf[0] = '\0';
	json_array_foreach(json_object_get(ev, "flags"), i, fl)
	{
		const char *f = json_string_value(fl);

		if (f == NULL || used >= len)
			continue;
		if (strcmp(f, "ticked_without_change") == 0)
			used += (size_t)snprintf(buf + used, len - used,
			    "%sticked %lld box%s without changing another file",
			    n ? "; " : "", (long long)report_int(ev, "ticked"),
			    report_int(ev, "ticked") == 1 ? "" : "es");
		else if (strcmp(f, "unticked") == 0)
			used += (size_t)snprintf(buf + used, len - used,
			    "%sunticked %lld box%s (first: %s)", n ? "; " : "",
			    (long long)report_int(ev, "unticked"),
			    report_int(ev, "unticked") == 1 ? "" : "es",
			    report_str(ev, "first_unticked"));
		else
			used += (size_t)snprintf(
			    buf + used, len - used, "%s%s", n ? "; " : "", f);
		n++;
	}
	return n;
}

void
report_fmt_change(char *buf, size_t len, const json_t *a)
{
	const json_t *ev = json_object_get(a, "evidence");

	buf[0] = '\0';
	if (!json_is_true(json_object_get(ev, "measured")))
		return;
	snprintf(buf, len, "%lld file%s +%lld \xe2\x88\x92%lld",
	    (long long)report_int(ev, "files_changed"),
	    report_int(ev, "files_changed") == 1 ? "" : "s",
	    (long long)report_int(ev, "lines_added"),
	    (long long)report_int(ev, "lines_removed"));
}

int
report_each_flag(const json_t *model, report_flag_fn fn, void *ctx)
{
	const json_t *s, *a;
	size_t i, k;
	char why[400];
	int n = 0;

	json_array_foreach(json_object_get(model, "stories"), i, s)
	    json_array_foreach(json_object_get(s, "attempts"), k, a)
	{
		if (report_flag_text(why, sizeof(why), a) > 0)
			fn(ctx, s, a, why, n++);
	}
	return n;
}
