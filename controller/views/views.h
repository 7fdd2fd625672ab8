/*
 * views.h - the read model: every view of the record (status, list,
 * show, stats, an event) read and built in one place, from a view
 * opened with view_open() (a config and a database), for the CLI, the
 * service, the report and the dashboard (docs/design.md#the-read-model,
 * docs/api.md, docs/json.md).
 *
 * A *_read() fills the facts a view shows, once, for the text printed
 * by a command and for the JSON built here; release them with the
 * matching *_release() (which takes zeroed facts too).  A *_json()
 * fills *out (the caller's, json_decref()).
 */
#ifndef STORYCTL_VIEWS_H
#define STORYCTL_VIEWS_H

#include <jansson.h>

#include "common/err.h"
#include "controller/views/view.h"
#include "state/db.h"
#include "state/story_record.h"
#include "strategies/stats.h"

/* What status shows (controller/views/views_status.c). */
struct views_status {
	struct story_row *rows;
	size_t n;
	int counts[STATUS__COUNT];
	double cost;
	struct attempt_row *run; /* the running rows of every batch */
	size_t nrun;
	const struct attempt_row *cur; /* this batch's, or NULL */
	struct attempt_row last; /* owned: the waiting story's last row */
	int64_t pid, now, wait_until;
	int64_t pause_until[2];
	const char *wait_story;
	int wait_attempt;
};
int views_status_read(
    struct views_status *out, struct view *v, struct sc_err *err);
void views_status_release(struct views_status *sf);

/* What show reads of a story: its record (state/story_record.h), the
 * attempts and failures of the latest batch (none before one); no such
 * story is SC_EUSAGE from view_find_story()
 * (controller/views/views_story.c). */
int views_story_read(struct story_record *out, struct view *v, const char *id,
    struct sc_err *err);
void views_story_release(struct story_record *sh);

/* Attempt number n of sh (0: its last) for show --attempt N and diff
 * --attempt N; a number that ran more than once (a rerun after a usage
 * limit) is its last run.  NULL when it has none such: then
 * views_story_no_attempt() is the error (SC_EUSAGE naming cmd, with the
 * nearest number). */
const struct attempt_row *views_story_attempt(
    const struct story_record *sh, int n);
int views_story_no_attempt(
    const struct story_record *sh, const char *cmd, int n, struct sc_err *err);

/* The figures of stats for batch (as views_stats_json() takes it), and
 * the batch they cover in *id (0: all); *out is released with
 * stats_result_free() (controller/views/views_stats.c). */
int views_stats_read(struct stats_result *out, int64_t *id, struct view *v,
    int64_t batch, struct sc_err *err);

/* status --json (controller/views/views_status.c). */
int views_status_json(json_t **out, struct view *v, struct sc_err *err);
/* list --json, status NULL for every story (controller/views/views_story.c). */
int views_list_json(
    json_t **out, struct view *v, const char *status, struct sc_err *err);
/* show ID --json; no such story is SC_EUSAGE from view_find_story()
 * (controller/views/views_story.c). */
int views_show_json(
    json_t **out, struct view *v, const char *id, struct sc_err *err);
/* One event of the log, a line of log --json and of the service's
 * /v1/events and its stream (controller/views/views_event.c, docs/json.md#log);
 * NULL when out of memory. */
json_t *views_event_json(const struct event_row *e);

/* stats --json [--batch ID | --all] (controller/views/views_stats.c): batch 0
 * the latest, > 0 that one (none such is SC_EUSAGE), -1 every batch. */
int views_stats_json(
    json_t **out, struct view *v, int64_t batch, struct sc_err *err);
/* The batch of stats' --batch ID (NULL: none) and --all, as
 * views_stats_json() takes it; SC_EUSAGE for a bad id or both. */
int views_stats_select(
    int64_t *out, const char *batch, bool all, struct sc_err *err);

#endif
