/*
 * views_status.c - the read model's status: what `status` shows and
 * GET /v1/status answers, read once from a view (docs/commands.md#status,
 * docs/json.md#status).  The text is cmd_status.c's.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "controller/cli/cli.h"
#include "controller/views/view.h"
#include "controller/views/views.h"
#include "state/db.h"
#include "state/lock.h"
#include "state/render.h"
#include "strategies/decide.h"

/* The next attempt after row a waits until *until (> now): the decision
 * stored with a (docs/state.md), or for a row from before schema 4 the
 * same rules read from it. */
static bool
next_wait(
    int64_t *until, int *attempt, const struct attempt_row *a, int64_t now)
{
	int64_t t =
	    a->next_attempt > 0 ? a->not_before_ms : a->ended_ms + a->delay_ms;

	if (t <= now)
		return false;
	*until = t;
	*attempt = a->next_attempt > 0
	    ? a->next_attempt
	    : decide_next_attempt(a->attempt, a->counted);
	return true;
}

/* The story that waits for its next attempt: the decision stored with
 * each pending story's last row since its requeue, one indexed row, not
 * the history (a story whose only attempt was not counted waits too). */
static int
status_find_wait(
    struct views_status *sf, const struct view *v, struct sc_err *err)
{
	size_t i;
	int found, rc;

	for (i = 0; i < sf->n && sf->cur == NULL && sf->pid > 0; i++) {
		if (sf->rows[i].status != STATUS_PENDING)
			continue;
		attempt_row_release(&sf->last);
		found = 0;
		rc = db_attempt_last(v->db, &sf->last, &found, v->batch.id,
		    sf->rows[i].id, sf->rows[i].seq_base, false, err);
		if (rc < 0)
			return rc;
		if (found &&
		    next_wait(&sf->wait_until, &sf->wait_attempt, &sf->last,
			sf->now)) {
			sf->wait_story = sf->rows[i].id;
			break;
		}
	}
	return 0;
}

/* The usage-limit pauses still in force (docs/retry-strategy.md#usage-limits). */
static void
status_read_pauses(struct views_status *sf, const struct view *v)
{
	char key[32], *val;
	int i;

	for (i = 0; i < 2; i++) {
		val = NULL;
		snprintf(key, sizeof(key), "pause.%s", role_name((enum role)i));
		if (db_meta_get(v->db, key, &val, NULL) == 0 && val != NULL)
			sf->pause_until[i] = strtoll(val, NULL, 10);
		free(val);
		if (sf->pause_until[i] <= sf->now)
			sf->pause_until[i] = 0;
	}
}

int
views_status_read(struct views_status *sf, struct view *v, struct sc_err *err)
{
	size_t i;
	int rc;

	memset(sf, 0, sizeof(*sf));
	sf->now = view_now_ms();
	rc = view_stories(&sf->rows, &sf->n, v, NULL, err);
	if (rc < 0)
		return rc;
	for (i = 0; i < sf->n; i++) {
		sf->counts[sf->rows[i].status]++;
		sf->cost += sf->rows[i].cost_usd;
	}
	if (!v->have_batch)
		return 0;
	lock_holder_pid(v->cfg.state_dir, &sf->pid);
	rc = db_attempts_running(v->db, &sf->run, &sf->nrun, err);
	if (rc < 0)
		return rc;
	for (i = 0; i < sf->nrun; i++)
		if (sf->run[i].batch_id == v->batch.id)
			sf->cur = &sf->run[i];
	rc = status_find_wait(sf, v, err);
	if (rc < 0)
		return rc;
	status_read_pauses(sf, v);
	return 0;
}

/* One running attempt as status --json shows it (docs/json.md#status). */
static json_t *
status_running_json(const struct attempt_row *a, bool alive)
{
	return json_pack("{s:s, s:i, s:s, s:s, s:i, s:i, s:o, s:b, s:i, s:i}",
	    "story", a->story_id, "attempt", a->attempt, "role",
	    role_name(a->role), "agent", a->agent, "tasks_completed",
	    a->counts.tasks_completed, "tasks_total", a->counts.tasks_total,
	    "started_at", render_time_json(a->started_ms), "controller_alive",
	    alive, "subtasks_completed", a->counts.subtasks_completed,
	    "subtasks_total", a->counts.subtasks_total);
}

/* status --json: `running` is an array, one entry per slot at work
 * (docs/json.md#status). */
static int
status_build_json(json_t **out, const struct view *v,
    const struct views_status *sf, struct sc_err *err)
{
	json_t *o = NULL, *c = NULL, *running = json_array(),
	       *wait = json_null();
	size_t i;

	for (i = 0; running != NULL && i < sf->nrun; i++)
		if (v->have_batch && sf->run[i].batch_id == v->batch.id)
			json_array_append_new(running,
			    status_running_json(&sf->run[i], sf->pid > 0));
	if (sf->wait_story != NULL)
		wait = json_pack("{s:s, s:i, s:o, s:I}", "story",
		    sf->wait_story, "attempt", sf->wait_attempt, "until",
		    render_time_json(sf->wait_until), "delay_ms",
		    (json_int_t)(sf->wait_until - sf->now));
	c = json_object();
	for (i = 0; c != NULL && i < STATUS__COUNT; i++)
		json_object_set_new(c, status_name((enum story_status)i),
		    json_integer(sf->counts[i]));
	o = json_pack("{s:i, s:o, s:o, s:o, s:o, s:i, s:O, s:O, s:f}",
	    "format_version", CLI_JSON_FORMAT_VERSION, "batch",
	    v->have_batch ? json_integer(v->batch.id) : json_null(), "state",
	    v->have_batch ? json_string(v->batch.status) : json_null(),
	    "controller_pid", sf->pid > 0 ? json_integer(sf->pid) : json_null(),
	    "counts", c, "stories", (int)sf->n, "running", running, "next_wait",
	    wait, "cost_usd", sf->cost);
	if (o != NULL)
		json_object_set_new(o, "paused",
		    json_pack("{s:o, s:o}", "primary",
			render_time_json(sf->pause_until[0]), "fallback",
			render_time_json(sf->pause_until[1])));
	json_decref(running);
	json_decref(wait);
	*out = o;
	return o ? 0 : err_set(err, SC_EOS, "out of memory");
}

void
views_status_release(struct views_status *sf)
{
	free(sf->rows);
	attempt_rows_free(sf->run, sf->nrun);
	attempt_row_release(&sf->last);
}

/* One builder for status --json and GET /v1/status (docs/api.md). */
int
views_status_json(json_t **out, struct view *v, struct sc_err *err)
{
	struct views_status sf;
	int rc;

	*out = NULL;
	rc = views_status_read(&sf, v, err);
	if (rc == 0)
		rc = status_build_json(out, v, &sf, err);
	views_status_release(&sf);
	return rc;
}
