/*
 * report_model.c - see report.h: the report's model read from the
 * database once (docs/report.md#model).  It is made of the documents
 * the CLI already prints (status --json, show --json of every story) so
 * that the report and the commands can never disagree, and of the
 * batch's marks: the events the timeline draws as vertical lines.
 */
#include <string.h>

#include "controller/config/secrets.h"
#include "controller/report/report.h"
#include "controller/report/report_int.h"
#include "controller/views/views.h"
#include "state/db.h"
#include "state/render.h"

/* Event kinds drawn on the timeline (docs/report.md#timeline). */
static const char *const mark_kinds[] = {
    "batch", "breaker", "stopped", "interrupted", "finished"};

static bool
mark_kind(const char *kind)
{
	size_t i;

	for (i = 0; i < sizeof(mark_kinds) / sizeof(mark_kinds[0]); i++)
		if (strcmp(kind, mark_kinds[i]) == 0)
			return true;
	return false;
}

/* The marks of the latest batch, oldest first. */
static int
model_marks(json_t **out, struct view *v, struct sc_err *err)
{
	struct event_row *ev = NULL;
	json_t *arr = json_array(), *o;
	size_t n = 0, i;
	int rc = 0;

	*out = NULL;
	if (arr == NULL)
		return err_set(err, SC_EOS, "out of memory");
	if (v->db != NULL && v->have_batch)
		rc = db_events_list(v->db, &ev, &n, v->batch.id, 0, err);
	for (i = 0; rc == 0 && i < n; i++) {
		if (!mark_kind(ev[i].kind))
			continue;
		o = json_pack("{s:s, s:o, s:s}", "kind", ev[i].kind, "time",
		    render_time_json(ev[i].ts_ms), "message", ev[i].message);
		if (o == NULL || json_array_append_new(arr, o) < 0)
			rc = err_set(err, SC_EOS, "out of memory");
	}
	event_rows_free(ev, n);
	if (rc < 0)
		json_decref(arr);
	else
		*out = arr;
	return rc;
}

/* The attempts' times to the millisecond (show --json has whole
 * seconds, which would stack a fast story's attempts on one another):
 * start_ms and end_ms beside started_at in each attempt of one, from
 * the record one was built from. */
static int
model_times(json_t *one, const struct story_record *r, struct sc_err *err)
{
	json_t *atts = json_object_get(one, "attempts"), *a;
	size_t i;

	for (i = 0; i < r->n && i < json_array_size(atts); i++) {
		a = json_array_get(atts, i);
		if (json_object_set_new(a, "start_ms",
			json_integer(r->rows[i].started_ms)) < 0 ||
		    json_object_set_new(a, "end_ms",
			r->rows[i].ended_ms > 0
			    ? json_integer(r->rows[i].ended_ms)
			    : json_null()) < 0)
			return err_set(err, SC_EOS, "out of memory");
	}
	return 0;
}

/* One story of the model: show --json's record (without the
 * format_version) with the times above; appended to arr. */
static int
model_story(json_t *arr, struct view *v, const char *id,
    const struct redact_values *embed, struct sc_err *err)
{
	struct story_record r;
	json_t *one = NULL;
	int rc;

	rc = views_story_read(&r, v, id, err);
	if (rc == 0)
		rc = story_record_json(&one, &r, err);
	if (rc == 0)
		rc = model_times(one, &r, err);
	if (rc == 0 && embed != NULL)
		rc = report_attempts_embed(one, &v->cfg, &r, embed, err);
	/* json_array_append_new() takes one, on failure too */
	if (rc == 0 && json_array_append_new(arr, one) < 0)
		rc = err_set(err, SC_EOS, "out of memory");
	else if (rc < 0)
		json_decref(one);
	views_story_release(&r);
	return rc;
}

/* show --json of every story of the batch, in the batch's order; with
 * embed (the secrets to redact with), each attempt's parts. */
static int
model_stories(json_t **out, struct view *v, const struct redact_values *embed,
    struct sc_err *err)
{
	json_t *list = NULL, *arr = json_array(), *e;
	size_t i;
	int rc;

	*out = NULL;
	if (arr == NULL)
		return err_set(err, SC_EOS, "out of memory");
	rc = views_list_json(&list, v, NULL, err);
	json_array_foreach(list, i, e)
	{
		if (rc < 0)
			break;
		rc = model_story(arr, v,
		    json_string_value(json_object_get(e, "id")), embed, err);
	}
	json_decref(list);
	if (rc < 0)
		json_decref(arr);
	else
		*out = arr;
	return rc;
}

int
report_model(json_t **out, struct view *v, int64_t now_ms, bool embed,
    struct sc_err *err)
{
	json_t *status = NULL, *stories = NULL, *marks = NULL, *m = NULL;
	json_t *stats = NULL;
	struct redact_values *rv = NULL;
	int rc;

	*out = NULL;
	rc = views_status_json(&status, v, err);
	/* a report file holds each attempt's parts, redacted as show
	 * --attempt and diff redact them */
	if (rc == 0 && embed)
		rc = secrets_of_config(&rv, &v->cfg, err);
	if (rc == 0)
		rc = model_stories(&stories, v, rv, err);
	if (rc == 0)
		rc = model_marks(&marks, v, err);
	if (rc < 0)
		goto out;
	/* reference 001's telemetry of the same batch (docs/stats.md) */
	rc = views_stats_json(&stats, v, 0, err);
	if (rc < 0)
		goto out;
	json_object_del(status, "format_version");
	json_object_del(stats, "format_version");
	m = json_pack("{s:i, s:o, s:O, s:O, s:O, s:O}", "format_version", 1,
	    "generated_at", render_time_json(now_ms), "status", status,
	    "stories", stories, "marks", marks, "stats", stats);
	if (m == NULL)
		rc = err_set(err, SC_EOS, "out of memory");
out:
	json_decref(status);
	json_decref(stories);
	json_decref(marks);
	json_decref(stats);
	redact_values_free(rv);
	*out = m;
	return rc;
}
