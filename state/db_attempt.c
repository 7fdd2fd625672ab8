/* db_attempt.c - see db.h: attempts, events, meta and the decision
 * sequence (docs/state.md). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "state/db_evidence.h"
#include "state/db_int.h"

/*
 * Attempts
 */

void
attempt_row_release(struct attempt_row *r)
{
	if (r == NULL)
		return;
	free(r->argv_json);
	r->argv_json = NULL;
	free(r->result_text);
	r->result_text = NULL;
	free(r->gate_output);
	r->gate_output = NULL;
	free(r->review_notes);
	r->review_notes = NULL;
}

void
attempt_rows_free(struct attempt_row *rows, size_t n)
{
	size_t i;

	if (rows == NULL)
		return;
	for (i = 0; i < n; i++)
		attempt_row_release(&rows[i]);
	free(rows);
}

static int
db_attempt_check(struct db *db, const struct attempt_row *r, struct sc_err *err)
{
	if ((r->role != ROLE_PRIMARY && r->role != ROLE_FALLBACK) ||
	    (r->next_role != ROLE_PRIMARY && r->next_role != ROLE_FALLBACK) ||
	    (int)r->outcome < 0 || r->outcome >= OUTCOME__COUNT ||
	    (int)r->error_code < 0 || r->error_code >= ERRC__COUNT ||
	    (int)r->decision < 0 || r->decision >= DECISION__COUNT)
		return err_set(err, SC_ESOFTWARE,
		    "%s: attempt %d of story %.128s: enum out of range",
		    db->path, r->attempt, r->story_id);
	return 0;
}

/* The columns of ATTEMPT_MUT_COLS; running forces outcome "running" and
 * no end time. */
static void
db_bind_attempt(struct db_bind *b, const struct attempt_row *r, bool running)
{
	db_bind_int(b, r->counted ? 1 : 0);
	db_bind_str(b, role_name(r->role));
	db_bind_text(b, r->agent, sizeof(r->agent));
	db_bind_str(b, r->argv_json);
	db_bind_int_or_null(b, r->pid, 0);
	db_bind_int_or_null(b, r->pid_start, 0);
	db_bind_int_or_null(b, r->controller_pid, 0);
	db_bind_int_or_null(b, r->started_ms, 0);
	db_bind_int_or_null(b, running ? 0 : r->ended_ms, 0);
	db_bind_int_or_null(b, r->heartbeat_ms, 0);
	db_bind_int_or_null(b, r->exit_code, -1);
	db_bind_int(b, r->signal);
	db_bind_str(b, outcome_name(running ? OUTCOME_NONE : r->outcome));
	if (r->error_code == ERRC_NONE)
		db_bind_null(b);
	else
		db_bind_str(b, errcode_name(r->error_code));
	db_bind_text(b, r->error_message, sizeof(r->error_message));
	db_bind_int(b, r->counts.tasks_completed);
	db_bind_int(b, r->counts.tasks_total);
	db_bind_text(b, r->stalled_task, sizeof(r->stalled_task));
	db_bind_int(b, r->delay_ms);
	db_bind_str(b, decision_name(r->decision));
	db_bind_text(b, r->reason, sizeof(r->reason));
	db_bind_text(b, r->log_path, sizeof(r->log_path));
	db_bind_double(b, r->timeout_factor > 0 ? r->timeout_factor : 1);
	db_bind_double(b, r->poll_factor > 0 ? r->poll_factor : 1);
	db_bind_double(b, r->cost_usd);
	db_bind_str(b, r->result_text);
	db_bind_text(b, r->gate, sizeof(r->gate));
	if (r->gate[0] != '\0')
		db_bind_int(b, r->gate_exit);
	else
		db_bind_null(b);
	db_bind_str(b, r->gate_output);
	db_bind_text(b, r->consensus, sizeof(r->consensus));
	db_bind_str(b, r->review_notes);
	db_bind_int(b, r->counts.subtasks_completed);
	db_bind_int(b, r->counts.subtasks_total);
	db_bind_text(b, r->session_id, sizeof(r->session_id));
	db_bind_int_or_null(b, r->next_attempt, 0);
	if (r->next_attempt > 0)
		db_bind_str(b, role_name(r->next_role));
	else
		db_bind_null(b);
	db_bind_int_or_null(b, r->next_attempt > 0 ? r->not_before_ms : 0, 0);
}

/* A column that may be NULL into *dst (NULL then); -1 when out of
 * memory. */
static int
col_dup_opt(char **dst, sqlite3_stmt *st, int i)
{
	if (sqlite3_column_type(st, i) == SQLITE_NULL)
		return 0;
	*dst = db_col_dup(st, i);
	return *dst == NULL ? -1 : 0;
}

/* The names an attempt row stores, parsed into *out; -1 when one is not
 * a name this version knows (docs/state.md#attempts). */
static int
attempt_names(struct attempt_row *out, const char *role, const char *outcome,
    const char *code, const char *decision, const char *next_role)
{
	int rc = 0;

	/* the running outcome's name is not a parseable outcome */
	if (outcome != NULL && strcmp(outcome, outcome_name(OUTCOME_NONE)) == 0)
		out->outcome = OUTCOME_NONE;
	else if (outcome_parse(&out->outcome, outcome) < 0)
		rc = -1;
	if ((code != NULL && errcode_parse(&out->error_code, code) < 0) ||
	    role_parse(&out->role, role) < 0 ||
	    decision_parse(&out->decision, decision) < 0 ||
	    (next_role != NULL && role_parse(&out->next_role, next_role) < 0))
		rc = -1;
	return rc;
}

/* A row of ATTEMPT_COLS into a zeroed *out. */
static int
db_read_attempt(struct db *db, sqlite3_stmt *st, struct attempt_row *out,
    struct sc_err *err)
{
	const char *role, *outcome, *code, *decision, *next_role;
	int i = 0;

	out->id = sqlite3_column_int64(st, i++);
	out->batch_id = sqlite3_column_int64(st, i++);
	db_col_copy(st, i++, out->story_id, sizeof(out->story_id));
	out->attempt = sqlite3_column_int(st, i++);
	out->seq = sqlite3_column_int(st, i++);
	out->counted = sqlite3_column_int(st, i++) != 0;
	role = (const char *)sqlite3_column_text(st, i++);
	db_col_copy(st, i++, out->agent, sizeof(out->agent));
	if (col_dup_opt(&out->argv_json, st, i++) < 0)
		goto oom;
	out->pid = db_col_int(st, i++, 0);
	out->pid_start = db_col_int(st, i++, 0);
	out->controller_pid = db_col_int(st, i++, 0);
	out->started_ms = db_col_int(st, i++, 0);
	out->ended_ms = db_col_int(st, i++, 0);
	out->heartbeat_ms = db_col_int(st, i++, 0);
	out->exit_code = (int)db_col_int(st, i++, -1);
	out->signal = sqlite3_column_int(st, i++);
	outcome = (const char *)sqlite3_column_text(st, i++);
	code = (const char *)sqlite3_column_text(st, i++);
	db_col_copy(st, i++, out->error_message, sizeof(out->error_message));
	out->counts.tasks_completed = sqlite3_column_int(st, i++);
	out->counts.tasks_total = sqlite3_column_int(st, i++);
	db_col_copy(st, i++, out->stalled_task, sizeof(out->stalled_task));
	out->delay_ms = sqlite3_column_int64(st, i++);
	decision = (const char *)sqlite3_column_text(st, i++);
	db_col_copy(st, i++, out->reason, sizeof(out->reason));
	db_col_copy(st, i++, out->log_path, sizeof(out->log_path));
	out->timeout_factor = sqlite3_column_double(st, i++);
	out->poll_factor = sqlite3_column_double(st, i++);
	out->cost_usd = sqlite3_column_double(st, i++);
	if (col_dup_opt(&out->result_text, st, i++) < 0)
		goto oom;
	db_col_copy(st, i++, out->gate, sizeof(out->gate));
	out->gate_exit = (int)db_col_int(st, i++, -1);
	if (col_dup_opt(&out->gate_output, st, i++) < 0)
		goto oom;
	db_col_copy(st, i++, out->consensus, sizeof(out->consensus));
	if (col_dup_opt(&out->review_notes, st, i++) < 0)
		goto oom;
	out->counts.subtasks_completed = sqlite3_column_int(st, i++);
	out->counts.subtasks_total = sqlite3_column_int(st, i++);
	db_col_copy(st, i++, out->session_id, sizeof(out->session_id));
	out->next_attempt = (int)db_col_int(st, i++, 0);
	next_role = (const char *)sqlite3_column_text(st, i++);
	out->not_before_ms = db_col_int(st, i++, 0);

	if (attempt_names(out, role, outcome, code, decision, next_role) < 0)
		return err_set(err, SC_EIO,
		    "%s: attempt row %lld: unknown role, outcome, error code "
		    "or "
		    "decision name",
		    db->path, (long long)out->id);
	return 0;
oom:
	return db_oom(db, err);
}

int
db_attempt_begin(struct db *db, struct attempt_row *r, struct sc_err *err)
{
	sqlite3_stmt *st = NULL;
	struct db_bind b = {0};
	int64_t id = 0;
	int seq = 0, ret;

	if ((ret = db_attempt_check(db, r, err)) < 0)
		return ret;
	if ((ret = db_tx_begin(db, err)) < 0)
		return ret;
	if ((ret = db_prep(db, &st, SQL_ATTEMPT_NEXT_SEQ, err)) < 0)
		goto out;
	b.st = st;
	db_bind_int(&b, r->batch_id);
	db_bind_text(&b, r->story_id, sizeof(r->story_id));
	if ((ret = db_bind_check(db, &b, err)) < 0)
		goto out;
	if (sqlite3_step(st) != SQLITE_ROW) {
		ret = db_fail(db, err,
		    "cannot number attempt %d of story "
		    "%.128s",
		    r->attempt, r->story_id);
		goto out;
	}
	seq = sqlite3_column_int(st, 0);
	db_done(st);
	if ((ret = db_prep(db, &st, SQL_ATTEMPT_INSERT, err)) < 0)
		goto out;
	b = (struct db_bind){.st = st};
	db_bind_int(&b, r->batch_id);
	db_bind_text(&b, r->story_id, sizeof(r->story_id));
	db_bind_int(&b, r->attempt);
	db_bind_int(&b, seq);
	db_bind_attempt(&b, r, true);
	if ((ret = db_bind_check(db, &b, err)) < 0 ||
	    (ret = db_step_done(db, st, err,
		 "cannot record attempt %d of "
		 "story %.128s in batch %lld",
		 r->attempt, r->story_id, (long long)r->batch_id)) < 0)
		goto out;
	id = sqlite3_last_insert_rowid(db->h);
	db_done(st);
	st = NULL;
	if ((ret = db_tx_commit(db, err)) < 0)
		goto out;
	r->id = id;
	r->seq = seq;
out:
	db_done(st);
	if (ret < 0)
		db_tx_rollback(db);
	return ret;
}

static int
db_attempt_set_pid_write(struct db *db, int64_t attempt_id, int64_t pid,
    int64_t pid_start, struct sc_err *err)
{
	sqlite3_stmt *st = NULL;
	struct db_bind b = {0};
	int ret;

	if ((ret = db_prep(db, &st, SQL_ATTEMPT_SET_PID, err)) < 0)
		goto out;
	b.st = st;
	db_bind_int_or_null(&b, pid, 0);
	db_bind_int_or_null(&b, pid_start, 0);
	db_bind_int(&b, attempt_id);
	if ((ret = db_bind_check(db, &b, err)) < 0 ||
	    (ret = db_step_done(db, st, err,
		 "cannot record the pid of "
		 "attempt row %lld",
		 (long long)attempt_id)) < 0)
		goto out;
	if (sqlite3_changes(db->h) == 0)
		ret = err_set(err, SC_EIO, "%s: no attempt row %lld", db->path,
		    (long long)attempt_id);
out:
	db_done(st);
	return ret;
}

static int
db_attempt_heartbeat_write(struct db *db, int64_t attempt_id, int64_t now_ms,
    const struct task_counts *p, struct sc_err *err)
{
	sqlite3_stmt *st = NULL;
	struct db_bind b = {0};
	int ret;

	if ((ret = db_prep(db, &st, SQL_ATTEMPT_HEARTBEAT, err)) < 0)
		goto out;
	b.st = st;
	db_bind_int_or_null(&b, now_ms, 0);
	db_bind_int(&b, p->tasks_completed);
	db_bind_int(&b, p->tasks_total);
	db_bind_int(&b, p->subtasks_completed);
	db_bind_int(&b, p->subtasks_total);
	db_bind_int(&b, attempt_id);
	if ((ret = db_bind_check(db, &b, err)) < 0 ||
	    (ret = db_step_done(db, st, err,
		 "cannot record the heartbeat "
		 "of attempt row %lld",
		 (long long)attempt_id)) < 0)
		goto out;
	if (sqlite3_changes(db->h) == 0)
		ret = err_set(err, SC_EIO, "%s: no running attempt row %lld",
		    db->path, (long long)attempt_id);
out:
	db_done(st);
	return ret;
}

/*
 * The pid and the heartbeat are written without an fsync of their own
 * (synchronous=NORMAL for that one statement): in WAL mode they become
 * durable with the next FULL commit, the attempt's end.  Losing them in
 * a power cut costs nothing (the watchdog kills orphaned agents; the
 * heartbeat is only a live view), and a decision then costs two fsyncs,
 * not one per poll.
 */
static int
db_relaxed(struct db *db, int normal)
{
	return sqlite3_exec(db->h,
		   normal ? "PRAGMA synchronous = NORMAL"
			  : "PRAGMA synchronous = FULL",
		   NULL, NULL, NULL) == SQLITE_OK
	    ? 0
	    : -1;
}

int
db_attempt_set_pid(struct db *db, int64_t attempt_id, int64_t pid,
    int64_t pid_start, struct sc_err *err)
{
	int ret;

	db_relaxed(db, 1);
	ret = db_attempt_set_pid_write(db, attempt_id, pid, pid_start, err);
	if (db_relaxed(db, 0) < 0 && ret == 0)
		ret = db_fail(db, err, "cannot set synchronous=FULL");
	return ret;
}

int
db_attempt_heartbeat(struct db *db, int64_t attempt_id, int64_t now_ms,
    const struct task_counts *p, struct sc_err *err)
{
	int ret;

	db_relaxed(db, 1);
	ret = db_attempt_heartbeat_write(db, attempt_id, now_ms, p, err);
	if (db_relaxed(db, 0) < 0 && ret == 0)
		ret = db_fail(db, err, "cannot set synchronous=FULL");
	return ret;
}

/* The INSERT alone, for use inside a transaction. */
static int
db_event_insert(struct db *db, int64_t batch_id, int64_t ts_ms,
    const char *story_id, const char *kind, const char *msg, struct sc_err *err)
{
	sqlite3_stmt *st = NULL;
	struct db_bind b = {0};
	int ret;

	if (kind == NULL || kind[0] == '\0')
		return err_set(
		    err, SC_ESOFTWARE, "%s: event without a kind", db->path);
	if ((ret = db_prep(db, &st, SQL_EVENT_ADD, err)) < 0)
		goto out;
	b.st = st;
	db_bind_int(&b, batch_id);
	db_bind_int(&b, ts_ms);
	db_bind_str_or_null(
	    &b, story_id, story_id == NULL ? 0 : strlen(story_id));
	db_bind_str(&b, kind);
	db_bind_str(&b, msg == NULL ? "" : msg);
	if ((ret = db_bind_check(db, &b, err)) < 0 ||
	    (ret = db_step_done(db, st, err,
		 "cannot log event %s of batch "
		 "%lld",
		 kind, (long long)batch_id)) < 0)
		goto out;
out:
	db_done(st);
	return ret;
}

/* The UPDATE of a running attempt's row with its end; refused when the
 * row is not running
 * (docs/state.md#what-one-decision-writes). */
static int
db_attempt_end_row(
    struct db *db, const struct attempt_row *r, struct sc_err *err)
{
	sqlite3_stmt *st = NULL;
	struct db_bind b = {0};
	int ret;

	if ((ret = db_prep(db, &st, SQL_ATTEMPT_FINISH, err)) < 0)
		goto out;
	b.st = st;
	db_bind_attempt(&b, r, false);
	db_bind_int(&b, r->id);
	if ((ret = db_bind_check(db, &b, err)) < 0 ||
	    (ret = db_step_done(db, st, err,
		 "cannot record the end of "
		 "attempt %d of story %.128s",
		 r->attempt, r->story_id)) < 0)
		goto out;
	if (sqlite3_changes(db->h) == 0)
		/* ended already (or never begun): writing it again could
		 * count it twice */
		ret = err_set(err, SC_EIO,
		    "%s: attempt %d of story %.128s "
		    "(row %lld) is not running",
		    db->path, r->attempt, r->story_id, (long long)r->id);
out:
	db_done(st);
	return ret;
}

int
db_attempt_finish(struct db *db, const struct attempt_row *r,
    const struct story_row *s, const char *event_kind, const char *event_msg,
    struct sc_err *err)
{
	return db_attempt_finish_noted(
	    db, r, s, event_kind, event_msg, NULL, err);
}

/* The writes of an attempt's end, inside the caller's transaction: the
 * row, the story, the evidence and the event, then the sequence bump
 * that tells readers something changed. */
static int
db_attempt_end_writes(struct db *db, const struct attempt_row *r,
    const struct story_row *s, const char *event_kind, const char *event_msg,
    const struct evidence_note *ev, struct sc_err *err)
{
	int64_t ts;
	int ret;

	if ((ret = db_attempt_end_row(db, r, err)) < 0)
		return ret;
	if (s != NULL && (ret = db_story_write(db, s, err)) < 0)
		return ret;
	ts = r->ended_ms != 0 ? r->ended_ms : s != NULL ? s->updated_ms : 0;
	if (ev != NULL && ev->row != NULL &&
	    (ret = db_evidence_insert(db, ev->row, r->batch_id, r->story_id, ts,
		 ev->event_msg, err)) < 0)
		return ret;
	if (event_kind != NULL) {
		if ((ret = db_event_insert(db, r->batch_id, ts, r->story_id,
			 event_kind, event_msg, err)) < 0)
			return ret;
	}
	return db_seq_bump(db, err);
}

int
db_attempt_finish_noted(struct db *db, const struct attempt_row *r,
    const struct story_row *s, const char *event_kind, const char *event_msg,
    const struct evidence_note *ev, struct sc_err *err)
{
	int ret, lazy = 0, defer = db->defer_next;

	db->defer_next = 0;
	if (r->outcome == OUTCOME_NONE)
		return err_set(err, SC_ESOFTWARE,
		    "%s: attempt %d of story %.128s finished without an "
		    "outcome",
		    db->path, r->attempt, r->story_id);
	if ((ret = db_attempt_check(db, r, err)) < 0)
		return ret;
	/* group commit: no fsync of its own (synchronous may only change
	 * outside a transaction) */
	lazy = defer && db->tx_depth == 0 && db_relaxed(db, 1) == 0;
	if ((ret = db_tx_begin(db, err)) < 0)
		goto out;
	if ((ret = db_attempt_end_writes(
		 db, r, s, event_kind, event_msg, ev, err)) < 0)
		goto out;
	ret = db_tx_commit(db, err);
	if (ret == 0 && lazy)
		db->unsynced = 1;
out:
	if (ret < 0)
		db_tx_rollback(db);
	if (lazy && db_relaxed(db, 0) < 0 && ret == 0)
		ret = db_fail(db, err, "cannot set synchronous=FULL");
	return ret;
}

static int
db_attempts_query(struct db *db, struct attempt_row **out, size_t *n,
    enum db_sql id, int64_t batch_id, const char *story_id, struct sc_err *err)
{
	sqlite3_stmt *st = NULL;
	struct db_bind b = {0};
	struct attempt_row *rows = NULL;
	size_t count = 0, alloc = 0;
	int rc, ret;

	*out = NULL;
	*n = 0;
	if ((ret = db_prep(db, &st, id, err)) < 0)
		goto out;
	b.st = st;
	if (story_id != NULL) {
		db_bind_int(&b, batch_id);
		db_bind_str(&b, story_id);
	}
	if ((ret = db_bind_check(db, &b, err)) < 0)
		goto out;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (db_grow((void **)&rows, &alloc, count, sizeof(*rows)) < 0) {
			ret = db_oom(db, err);
			goto out;
		}
		/* zeroed and counted first, so that a half-read row is
		 * freed too */
		memset(&rows[count], 0, sizeof(rows[count]));
		count++;
		if ((ret = db_read_attempt(db, st, &rows[count - 1], err)) < 0)
			goto out;
	}
	if (rc != SQLITE_DONE) {
		ret = db_fail(db, err, "cannot read attempts");
		goto out;
	}
	*out = rows;
	*n = count;
	rows = NULL;
out:
	db_done(st);
	attempt_rows_free(rows, count);
	return ret;
}

int
db_attempts_for_story(struct db *db, struct attempt_row **out, size_t *n,
    int64_t batch_id, const char *story_id, struct sc_err *err)
{
	return db_attempts_query(db, out, n, SQL_ATTEMPTS_FOR_STORY, batch_id,
	    story_id == NULL ? "" : story_id, err);
}

int
db_attempts_running(
    struct db *db, struct attempt_row **out, size_t *n, struct sc_err *err)
{
	return db_attempts_query(
	    db, out, n, SQL_ATTEMPTS_RUNNING, 0, NULL, err);
}

int
db_attempt_last(struct db *db, struct attempt_row *out, int *found,
    int64_t batch_id, const char *story_id, int after_seq, bool counted_only,
    struct sc_err *err)
{
	sqlite3_stmt *st = NULL;
	struct db_bind b = {0};
	int rc, ret;

	memset(out, 0, sizeof(*out));
	*found = 0;
	if ((ret = db_prep(db, &st,
		 counted_only ? SQL_ATTEMPT_LAST_COUNTED : SQL_ATTEMPT_LAST,
		 err)) < 0)
		goto out;
	b.st = st;
	db_bind_int(&b, batch_id);
	db_bind_str(&b, story_id == NULL ? "" : story_id);
	db_bind_int(&b, after_seq);
	if ((ret = db_bind_check(db, &b, err)) < 0)
		goto out;
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		*found = 1;
		ret = db_read_attempt(db, st, out, err);
	} else if (rc != SQLITE_DONE) {
		ret = db_fail(db, err, "cannot read attempts");
	}
out:
	db_done(st);
	if (ret < 0) {
		attempt_row_release(out);
		*found = 0;
	}
	return ret;
}

/*
 * Events
 */

int
db_event_add(struct db *db, int64_t batch_id, int64_t ts_ms,
    const char *story_id_or_null, const char *kind, const char *msg,
    struct sc_err *err)
{
	return db_event_insert(
	    db, batch_id, ts_ms, story_id_or_null, kind, msg, err);
}

/*
 * Meta
 */

int
db_meta_get(
    struct db *db, const char *key, char **out_value, struct sc_err *err)
{
	sqlite3_stmt *st = NULL;
	struct db_bind b = {0};
	int rc, ret;

	*out_value = NULL;
	if ((ret = db_prep(db, &st, SQL_META_GET, err)) < 0)
		goto out;
	b.st = st;
	db_bind_str(&b, key);
	if ((ret = db_bind_check(db, &b, err)) < 0)
		goto out;
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		if ((*out_value = db_col_dup(st, 0)) == NULL)
			ret = db_oom(db, err);
	} else if (rc != SQLITE_DONE) {
		ret = db_fail(db, err, "cannot read meta key %s", key);
	}
out:
	db_done(st);
	return ret;
}

int
db_meta_set(
    struct db *db, const char *key, const char *value, struct sc_err *err)
{
	sqlite3_stmt *st = NULL;
	struct db_bind b = {0};
	int ret;

	if ((ret = db_prep(db, &st, SQL_META_SET, err)) < 0)
		goto out;
	b.st = st;
	db_bind_str(&b, key);
	db_bind_str(&b, value == NULL ? "" : value);
	if ((ret = db_bind_check(db, &b, err)) < 0)
		goto out;
	ret = db_step_done(db, st, err, "cannot write meta key %s", key);
out:
	db_done(st);
	return ret;
}

int
db_decision_seq(struct db *db, int64_t *out, struct sc_err *err)
{
	sqlite3_stmt *st = NULL;
	struct db_bind b = {0};
	int rc, ret;

	*out = 0;
	if ((ret = db_prep(db, &st, SQL_META_GET, err)) < 0)
		goto out;
	b.st = st;
	db_bind_str(&b, DB_META_DECISION_SEQ);
	if ((ret = db_bind_check(db, &b, err)) < 0)
		goto out;
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		*out = sqlite3_column_int64(st, 0);
	else if (rc != SQLITE_DONE)
		ret = db_fail(db, err, "cannot read the decision counter");
out:
	db_done(st);
	return ret;
}
