/*
 * report_util.c - see report_int.h: reading the report's model and the
 * rules both renderers apply to it (docs/report.md#needs-you).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "controller/report_int.h"

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
