/* serve_failures.c - see serve_failures.h: a story's failures as
 * reference 003's records, failures reported from outside (one short
 * transaction each, with the reopening of a done story), and requeue
 * (docs/api.md#failure-records, docs/api.md#requeue). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "controller/config/secrets.h"
#include "controller/engine/requeue.h"
#include "controller/serve/serve_failures.h"
#include "controller/views/view.h"
#include "controller/views/views.h"
#include "state/redact.h"
#include "state/render.h"
#include "strategies/failure.h"

/* The answer's status and JSON (NULL when it could not be built). */
struct answer {
	int status;
	json_t *j;
};

static void
answer_error(struct answer *a, int status, const char *code, const char *msg)
{
	a->status = status;
	json_decref(a->j);
	a->j =
	    json_pack("{s:{s:s, s:s}}", "error", "code", code, "message", msg);
}

static json_t *
int_or_null(int v, int unknown)
{
	return v == unknown ? json_null() : json_integer(v);
}

static json_t *
str_or_null(const char *s)
{
	return s == NULL || s[0] == '\0' ? json_null() : json_string(s);
}

/* The RFC's record around its metadata m (consumed). */
static json_t *
record(const char *id, const char *story, const char *agent, int attempt,
    enum error_code code, const char *msg, int64_t retry_ms,
    int64_t resolved_ms, json_t *m)
{
	return json_pack("{s:s, s:s, s:o, s:o, s:s, s:s, s:o, s:o, s:o}", "id",
	    id, "intent_id", story, "agent_id", str_or_null(agent),
	    "attempt_number", int_or_null(attempt, 0), "error_code",
	    errcode_name(code), "error_message", msg ? msg : "",
	    "retry_scheduled_at", render_time_json(retry_ms), "resolved_at",
	    render_time_json(resolved_ms), "metadata", m);
}

/* Attempt rows[i] (ended, not a success) as a record; resolved by the
 * first later success of the story. */
static json_t *
attempt_record(const struct attempt_row *rows, size_t n, size_t i)
{
	const struct attempt_row *a = &rows[i];
	enum error_code code = a->error_code != ERRC_NONE
	    ? a->error_code
	    : outcome_default_errcode(a->outcome);
	bool retry =
	    a->decision == DECISION_RETRY || a->decision == DECISION_WAIT;
	int64_t resolved = 0, retry_ms = 0;
	char id[40];
	size_t k;
	json_t *m;

	for (k = i + 1; k < n && resolved == 0; k++)
		if (rows[k].outcome == OUTCOME_SUCCESS)
			resolved = rows[k].ended_ms;
	if (retry)
		retry_ms = a->not_before_ms > 0 ? a->not_before_ms
						: a->ended_ms + a->delay_ms;
	snprintf(id, sizeof(id), "attempt-%" PRId64, a->id);
	m = json_pack("{s:s, s:o, s:o, s:n, s:i, s:i, s:s, s:o, s:o, s:n}",
	    "outcome", outcome_name(a->outcome), "exit_code",
	    int_or_null(a->exit_code, -1), "signal", int_or_null(a->signal, 0),
	    "http_status", "tasks_completed", a->counts.tasks_completed,
	    "tasks_total", a->counts.tasks_total, "source", "storyctl",
	    "decision",
	    a->decision == DECISION_NONE
		? json_null()
		: json_string(decision_name(a->decision)),
	    "recorded_at", render_time_json(a->ended_ms), "reported_by");
	return record(id, a->story_id, a->agent, a->attempt, code,
	    a->error_message, retry_ms, resolved, m);
}

static json_t *
external_record(const struct failure_row *f)
{
	char id[40];
	json_t *m;

	snprintf(id, sizeof(id), "external-%" PRId64, f->id);
	m = json_pack("{s:s, s:o, s:o, s:o, s:n, s:n, s:s, s:n, s:o, s:s}",
	    "outcome", outcome_name(errcode_outcome(f->error_code)),
	    "exit_code", int_or_null(f->exit_code, -1), "signal",
	    int_or_null(f->signal, 0), "http_status",
	    int_or_null(f->http_status, 0), "tasks_completed", "tasks_total",
	    "source", "external", "decision", "recorded_at",
	    render_time_json(f->created_ms), "reported_by", f->key_name);
	return record(id, f->story_id, f->agent_id, f->attempt_number,
	    f->error_code, f->error_message, f->retry_scheduled_ms,
	    f->resolved_ms, m);
}

/* Every failed attempt and every reported failure, in the order they
 * happened: a reported one after the attempt rows it came after. */
static json_t *
records_json(const struct attempt_row *rows, size_t n,
    const struct failure_row *fl, size_t nf)
{
	json_t *arr = json_array(), *one;
	size_t i, k = 0;

	for (i = 0; arr != NULL && i <= n; i++) {
		for (; k < nf && (i == n || fl[k].after_seq < rows[i].seq);
		     k++) {
			one = external_record(&fl[k]);
			if (one == NULL || json_array_append_new(arr, one) < 0)
				goto fail;
		}
		if (i == n || rows[i].outcome == OUTCOME_NONE ||
		    rows[i].outcome == OUTCOME_SUCCESS)
			continue;
		one = attempt_record(rows, n, i);
		if (one == NULL || json_array_append_new(arr, one) < 0)
			goto fail;
	}
	return arr;
fail:
	json_decref(arr);
	return NULL;
}

static void
answer_get(struct answer *a, struct view *v, const char *id)
{
	struct sc_err err = {0};
	struct attempt_row *rows = NULL;
	struct failure_row *fl = NULL;
	size_t n = 0, nf = 0;
	int rc = 0;

	/* before the first batch, nothing has failed */
	if (v->have_batch)
		rc = db_attempts_for_story(
		    v->db, &rows, &n, v->batch.id, id, &err);
	if (rc == 0 && v->have_batch)
		rc = db_failures_for_story(
		    v->db, &fl, &nf, v->batch.id, id, false, &err);
	if (rc < 0) {
		answer_error(a, 500, "internal", err.msg);
		goto out;
	}
	a->status = 200;
	a->j = records_json(rows, n, fl, nf);
out:
	attempt_rows_free(rows, n);
	failure_rows_free(fl, nf);
}

/* The row of report r for story st, its message redacted: by pattern,
 * and by value with the secrets of cfg's agents and of this process's
 * environment, as a batch redacts (docs/reliability.md#redaction).  The
 * set is built for the one POST and wiped: a failure is rare, and the
 * config may have changed since the last one. */
static int
row_of(struct failure_row *f, const struct failure_report *r,
    const struct story_row *st, const char *key_name, const struct config *cfg)
{
	struct redact_values *secrets = NULL;
	struct sc_err err;

	memset(f, 0, sizeof(*f));
	if (secrets_of_config(&secrets, cfg, &err) < 0)
		return SC_EOS;
	f->batch_id = st->batch_id;
	snprintf(f->story_id, sizeof(f->story_id), "%s", st->id);
	f->created_ms = view_now_ms();
	snprintf(f->key_name, sizeof(f->key_name), "%s", key_name);
	snprintf(f->agent_id, sizeof(f->agent_id), "%s", r->agent_id);
	f->attempt_number = r->attempt_number;
	f->error_code = r->error_code;
	f->retry_scheduled_ms = r->retry_scheduled_ms;
	f->http_status = r->http_status;
	f->exit_code = r->exit_code;
	f->signal = r->signal;
	/* a CI log excerpt may carry a token */
	f->error_message = redact_text(
	    secrets, r->error_message, strlen(r->error_message), NULL);
	redact_values_free(secrets);
	return f->error_message != NULL ? 0 : SC_EOS;
}

/* One transaction: the failure, its event and, for a done story, the
 * story back to pending and its batch reopened (docs/api.md#failure-records). */
static int
record_failure(struct view *v, struct failure_row *f, struct story_row *st,
    struct sc_err *err)
{
	const char *m = f->error_message;
	/* the event log and a story's reason are one line each: the
	 * message's first line, at most 300 bytes (the record has it all) */
	int len = (int)strcspn(m, "\n");
	const char *more = len > 300 || m[len] != '\0' ? " ..." : "";
	char msg[600];
	int rc;

	if (len > 300)
		for (len = 300;
		     len > 0 && ((unsigned char)m[len] & 0xc0) == 0x80;)
			len--;
	rc = db_tx_begin(v->db, err);
	if (rc < 0)
		return rc;
	rc = db_failure_add(v->db, f, err);
	snprintf(msg, sizeof(msg),
	    "external failure %s reported by key %s%s%.*s%s",
	    errcode_name(f->error_code), f->key_name, m[0] ? ": " : "", len, m,
	    more);
	if (rc == 0)
		rc = db_event_add(v->db, f->batch_id, f->created_ms, st->id,
		    "failure", msg, err);
	snprintf(msg, sizeof(msg),
	    "reopened by an external failure (%s%s%.*s%s)",
	    errcode_name(f->error_code), m[0] ? ": " : "", len, m, more);
	if (rc == 0 && st->status == STATUS_DONE) {
		rc = requeue_story(v->db, st, msg, f->created_ms, err);
		if (rc == 0)
			rc = requeue_batch_reopen(
			    v->db, &v->batch, f->created_ms, err);
	}
	if (rc == 0)
		rc = db_tx_commit(v->db, err);
	if (rc < 0)
		db_tx_rollback(v->db);
	return rc;
}

static void
answer_post(struct answer *a, struct view *v, struct story_row *st,
    const char *body, size_t len, const char *key_name)
{
	struct sc_err err = {0};
	struct failure_report rep;
	struct failure_row f;
	int rc;

	memset(&f, 0, sizeof(f));
	rc = failure_parse(&rep, body, len, st->id, &err);
	if (rc < 0) {
		answer_error(a, rc == SC_EUSAGE ? 400 : 422,
		    rc == SC_EUSAGE ? "bad_json" : "invalid", err.msg);
		goto out;
	}
	if (!v->have_batch) {
		answer_error(a, 409, "conflict",
		    "no batch has run yet: a failure is recorded against a "
		    "story of a batch (storyctl run)");
		goto out;
	}
	if (row_of(&f, &rep, st, key_name, &v->cfg) < 0) {
		answer_error(a, 500, "internal", "out of memory");
		goto out;
	}
	if (record_failure(v, &f, st, &err) < 0) {
		answer_error(a, 500, "internal", err.msg);
		goto out;
	}
	a->status = 201;
	a->j = external_record(&f);
out:
	free(f.error_message);
}

int
serve_failures_answer(json_t **out, int *status, const struct cli *cli,
    const char *method, const char *id, const char *body, size_t len,
    const char *key_name)
{
	struct answer a = {500, NULL};
	struct sc_err err = {0};
	struct story_row st;
	struct view v;
	bool get = strcmp(method, "GET") == 0 || strcmp(method, "HEAD") == 0;
	int rc;

	/* a write opens the database for writing: busy timeout, short
	 * transactions, WAL (docs/state.md#opening) */
	rc = view_open(&v, cli->config_path, cli->lender, !get, &err);
	if (rc < 0)
		answer_error(&a, 500, "internal", err.msg);
	else if ((rc = view_find_story(&st, &v, id, &err)) < 0)
		answer_error(&a, rc == SC_EUSAGE ? 404 : 500,
		    rc == SC_EUSAGE ? "not_found" : "internal", err.msg);
	else if (get)
		answer_get(&a, &v, id);
	else
		answer_post(&a, &v, &st, body, len, key_name);
	view_close(&v);
	*out = a.j;
	*status = a.status;
	return a.j != NULL ? 0 : SC_EOS;
}

int
serve_requeue_answer(
    json_t **out, int *status, const struct cli *cli, const char *id)
{
	struct answer a = {500, NULL};
	struct sc_err err = {0};
	struct story_row st;
	struct view v;
	int freed = 0, rc;

	rc = view_open(&v, cli->config_path, cli->lender, true, &err);
	if (rc < 0)
		answer_error(&a, 500, "internal", err.msg);
	else if ((rc = view_find_story(&st, &v, id, &err)) < 0)
		answer_error(&a, rc == SC_EUSAGE ? 404 : 500,
		    rc == SC_EUSAGE ? "not_found" : "internal", err.msg);
	else if (!v.have_batch)
		answer_error(
		    &a, 409, "conflict", "requeue: no batch has run yet");
	else if ((rc = requeue_by_user(v.db, &v.cfg, &v.batch, &st,
		      view_now_ms(), &freed, &err)) < 0)
		answer_error(&a, rc == SC_EUSAGE ? 409 : 500,
		    rc == SC_EUSAGE ? "conflict" : "internal", err.msg);
	else if (views_show_json(&a.j, &v, id, &err) < 0)
		answer_error(&a, 500, "internal", err.msg);
	else
		a.status = 200;
	view_close(&v);
	*out = a.j;
	*status = a.status;
	return a.j != NULL ? 0 : SC_EOS;
}
