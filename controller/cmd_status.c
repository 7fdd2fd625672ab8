/*
 * cmd_status.c - `storyctl status`: the batch at a glance, as text or
 * JSON (docs/commands.md).
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

/* What status shows, read once for the text and for --json. */
struct status_facts {
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

/* The story that waits for its next attempt: the decision stored with
 * each pending story's last row since its requeue, one indexed row, not
 * the history (a story whose only attempt was not counted waits too). */
static int
status_find_wait(
    struct status_facts *sf, const struct view *v, struct sc_err *err)
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
status_read_pauses(struct status_facts *sf, const struct view *v)
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

static int
status_gather(struct status_facts *sf, struct view *v, struct sc_err *err)
{
	size_t i;
	int rc;

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

/* status --json (docs/commands.md). */
static int
status_print_json(struct cli *cli, const struct view *v,
    const struct status_facts *sf, struct sc_err *err)
{
	const struct attempt_row *cur = sf->cur;
	json_t *o = NULL, *c = NULL, *running = json_null(),
	       *wait = json_null();
	size_t i;
	int rc;

	if (cur != NULL)
		running = json_pack("{s:s, s:i, s:s, s:s, s:i, s:i, s:o, s:b, "
				    "s:i, s:i}",
		    "story", cur->story_id, "attempt", cur->attempt, "role",
		    role_name(cur->role), "agent", cur->agent,
		    "tasks_completed", cur->tasks_completed, "tasks_total",
		    cur->tasks_total, "started_at",
		    render_time_json(cur->started_ms), "controller_alive",
		    sf->pid > 0, "subtasks_completed", cur->subtasks_completed,
		    "subtasks_total", cur->subtasks_total);
	if (sf->wait_story != NULL)
		wait = json_pack("{s:s, s:i, s:o, s:I}", "story",
		    sf->wait_story, "attempt", sf->wait_attempt, "until",
		    render_time_json(sf->wait_until), "delay_ms",
		    (json_int_t)(sf->wait_until - sf->now));
	c = json_object();
	for (i = 0; i < STATUS__COUNT; i++)
		json_object_set_new(c, status_name((enum story_status)i),
		    json_integer(sf->counts[i]));
	o = json_pack("{s:o, s:o, s:o, s:o, s:i, s:O, s:O, s:f}", "batch",
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
	rc = o ? cli_print_json(cli, o, err)
	       : err_set(err, SC_EOS, "out of memory");
	json_decref(o);
	json_decref(running);
	json_decref(wait);
	return rc;
}

/* status's "now:" line: the attempt running in this batch. */
static void
status_print_running(struct cli *cli, const struct status_facts *sf)
{
	const struct attempt_row *cur = sf->cur;
	char buf[64], sub[48] = "";

	clock_fmt_duration(buf, sizeof(buf), sf->now - cur->started_ms);
	if (cur->subtasks_total > 0)
		snprintf(sub, sizeof(sub), " (%d/%d subtasks)",
		    cur->subtasks_completed, cur->subtasks_total);
	fprintf(cli->out,
	    "now: %s attempt %d, %s (%s), %d/%d tasks%s, "
	    "%s%s\n",
	    cur->story_id, cur->attempt, role_name(cur->role), cur->agent,
	    cur->tasks_completed, cur->tasks_total, sub, buf,
	    sf->pid > 0 ? "" : " (controller gone: resume closes it)");
}

static void
status_print_text(
    struct cli *cli, const struct view *v, const struct status_facts *sf)
{
	char buf[64];
	size_t i;

	if (!v->have_batch)
		fprintf(cli->out, "no batch has run yet\n");
	else
		fprintf(cli->out, "batch %lld: %s%s\n", (long long)v->batch.id,
		    v->batch.status,
		    sf->pid > 0 ? " (controller running)" : "");
	fprintf(cli->out, "stories: %zu", sf->n);
	for (i = 0; i < STATUS__COUNT; i++)
		if (sf->counts[i])
			fprintf(cli->out, ", %d %s", sf->counts[i],
			    status_name((enum story_status)i));
	fprintf(cli->out, "\n");
	if (sf->cur != NULL)
		status_print_running(cli, sf);
	for (i = 0; i < 2; i++) {
		if (sf->pause_until[i] == 0)
			continue;
		clock_fmt_iso(buf, sizeof(buf), sf->pause_until[i]);
		fprintf(cli->out,
		    "%s agent paused by its usage limit until %s\n",
		    role_name((enum role)i), buf);
	}
	if (sf->wait_story != NULL) {
		clock_fmt_duration(buf, sizeof(buf), sf->wait_until - sf->now);
		fprintf(cli->out, "next wait: %s attempt %d in %s\n",
		    sf->wait_story, sf->wait_attempt, buf);
	}
}

int
cmd_status(struct cli *cli, int argc, char **argv, struct sc_err *err)
{
	struct view v;
	struct status_facts sf;
	int json = 0, rc;

	memset(&sf, 0, sizeof(sf));
	sf.now = view_now_ms();
	rc = view_parse_flags(
	    "status", argc, argv, &json, NULL, NULL, NULL, err);
	if (rc < 0)
		return rc;
	rc = view_open(&v, cli, false, err);
	if (rc == 0)
		rc = status_gather(&sf, &v, err);
	if (rc < 0)
		goto out;
	if (json)
		rc = status_print_json(cli, &v, &sf, err);
	else
		status_print_text(cli, &v, &sf);
out:
	free(sf.rows);
	attempt_rows_free(sf.run, sf.nrun);
	attempt_row_release(&sf.last);
	view_close(&v);
	return rc;
}
