/*
 * views.h - the JSON of status, list and show --json, built in one place
 * for the CLI and for the service's read views (docs/api.md,
 * docs/json.md).  Each fills *out (the caller's, json_decref()) from a
 * view opened with view_open().  One event of the log too.
 */
#ifndef STORYCTL_VIEWS_H
#define STORYCTL_VIEWS_H

#include <jansson.h>

#include "common/err.h"
#include "controller/view.h"

/* status --json (controller/cmd_status.c). */
int views_status_json(json_t **out, struct view *v, struct sc_err *err);
/* list --json, status NULL for every story (controller/cmd_inspect.c). */
int views_list_json(
    json_t **out, struct view *v, const char *status, struct sc_err *err);
/* show ID --json; no such story is SC_EUSAGE from view_find_story()
 * (controller/cmd_inspect.c). */
int views_show_json(
    json_t **out, struct view *v, const char *id, struct sc_err *err);
/* One event of the log, a line of log --json and of the service's
 * /v1/events and its stream (controller/cmd_log.c, docs/json.md#log);
 * NULL when out of memory. */
json_t *views_event_json(const struct event_row *e);

/* stats --json [--batch ID | --all] (controller/cmd_stats.c): batch 0
 * the latest, > 0 that one (none such is SC_EUSAGE), -1 every batch. */
int views_stats_json(
    json_t **out, struct view *v, int64_t batch, struct sc_err *err);
/* The batch of stats' --batch ID (NULL: none) and --all, as
 * views_stats_json() takes it; SC_EUSAGE for a bad id or both. */
int views_stats_select(
    int64_t *out, const char *batch, bool all, struct sc_err *err);

#endif
