/*
 * views_event.c - the read model's event: one event of the log as a
 * line of `log --json`, of GET /v1/events and of its stream
 * (docs/json.md#log).
 */
#include "controller/cli/cli.h"
#include "controller/views/views.h"
#include "state/db.h"
#include "state/render.h"

json_t *
views_event_json(const struct event_row *e)
{
	/* each line carries the version (docs/json.md#versions) */
	return json_pack("{s:i, s:I, s:I, s:o, s:o, s:s, s:s}",
	    "format_version", CLI_JSON_FORMAT_VERSION, "id", (json_int_t)e->id,
	    "batch", (json_int_t)e->batch_id, "time",
	    render_time_json(e->ts_ms), "story",
	    e->story_id[0] ? json_string(e->story_id) : json_null(), "kind",
	    e->kind, "message", e->message);
}
