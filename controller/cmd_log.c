/*
 * cmd_log.c - `storyctl log`: the event log, once or followed
 * (docs/commands.md).
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "controller/cli.h"
#include "controller/clock.h"
#include "controller/view.h"
#include "state/db.h"
#include "state/lock.h"
#include "state/render.h"
#include "strategies/decide.h"

static json_t *
event_json(const struct event_row *e)
{
	return json_pack("{s:I, s:I, s:o, s:o, s:s, s:s}", "id",
	    (json_int_t)e->id, "batch", (json_int_t)e->batch_id, "time",
	    render_time_json(e->ts_ms), "story",
	    e->story_id[0] ? json_string(e->story_id) : json_null(), "kind",
	    e->kind, "message", e->message);
}

static void
event_line(const struct cli *cli, const struct event_row *e)
{
	char t[32];

	clock_fmt_iso(t, sizeof(t), e->ts_ms);
	fprintf(cli->out, "%s %-10s %s%s%s\n", t, e->kind, e->story_id,
	    e->story_id[0] ? " " : "", e->message);
}

int
cmd_log(struct cli *cli, int argc, char **argv, struct sc_err *err)
{
	struct view v;
	struct event_row *ev = NULL;
	size_t n = 0, i;
	int64_t after = 0;
	json_t *arr = NULL, *one;
	int json = 0, follow = 0, rc;
	char *line;

	rc = view_parse_flags(
	    "log", argc, argv, &json, &follow, NULL, NULL, err);
	if (rc < 0)
		return rc;
	rc = view_open(&v, cli, false, err);
	if (rc < 0 || !v.have_batch) {
		if (rc == 0 && json)
			fprintf(cli->out, "[]\n");
		goto out;
	}
	if (json && !follow)
		arr = json_array();
	for (;;) {
		rc = db_events_list(v.db, &ev, &n, v.batch.id, after, err);
		if (rc < 0)
			goto out;
		for (i = 0; i < n; i++) {
			after = ev[i].id;
			if (!json) {
				event_line(cli, &ev[i]);
				continue;
			}
			one = event_json(&ev[i]);
			if (arr != NULL) {
				json_array_append_new(arr, one);
				continue;
			}
			/* --follow --json: one object per line */
			line = one ? json_dumps(one, JSON_COMPACT) : NULL;
			if (line != NULL)
				fprintf(cli->out, "%s\n", line);
			free(line);
			json_decref(one);
		}
		event_rows_free(ev, n);
		ev = NULL;
		n = 0;
		if (!follow)
			break;
		fflush(cli->out);
		sleep(1);
	}
	if (arr != NULL)
		rc = cli_print_json(cli, arr, err);
out:
	json_decref(arr);
	event_rows_free(ev, n);
	view_close(&v);
	return rc;
}
