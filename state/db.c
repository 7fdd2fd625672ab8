/* db.c - see db.h: the statements, the small helpers every db_*.c file
 * shares (db_int.h) and transactions; the schema is described in
 * docs/state.md. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "state/db_int.h"

/* The attempt columns after the keys, in the order db_bind_attempt()
 * binds them and db_read_attempt() reads them. */
#define ATTEMPT_MUT_COLS \
	"counted, role, agent, argv_json, pid, pid_start, controller_pid, " \
	"started_ms, " \
	"ended_ms, heartbeat_ms, exit_code, signal, outcome, error_code, " \
	"error_message, tasks_completed, tasks_total, stalled_task, " \
	"delay_ms, decision, reason, log_path, timeout_factor, " \
	"poll_factor, cost_usd, result_text, gate, gate_exit, gate_output, " \
	"consensus, review_notes, subtasks_completed, subtasks_total, " \
	"session_id, next_attempt, next_role, not_before_ms"
#define ATTEMPT_MUT_PARAMS \
	"?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, " \
	"?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?"
#define ATTEMPT_COLS "id, batch_id, story_id, attempt, seq, " ATTEMPT_MUT_COLS

/* Likewise for stories: db_bind_story() and db_read_story(). */
#define STORY_MUT_COLS \
	"file, position, status, reason, tasks_completed, tasks_total, " \
	"attempts, last_agent, last_outcome, updated_ms, cost_usd, branch, " \
	"seq_base, attempt_base, base_commit, subtasks_completed, " \
	"subtasks_total"
#define STORY_MUT_PARAMS "?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?"
#define STORY_COLS "batch_id, id, " STORY_MUT_COLS

#define BATCH_COLS "id, created_ms, finished_ms, status"

static const char *const db_sql_text[SQL__COUNT] = {
    /* IMMEDIATE takes the write lock up front, so a busy database is
     * waited for (busy timeout) instead of failing at the first write */
    [SQL_TX_BEGIN] = "BEGIN IMMEDIATE",
    [SQL_TX_SAVEPOINT] = "SAVEPOINT sc",
    [SQL_TX_COMMIT] = "COMMIT",
    [SQL_TX_RELEASE] = "RELEASE sc",
    [SQL_TX_ROLLBACK] = "ROLLBACK",
    [SQL_TX_ROLLBACK_TO] = "ROLLBACK TO sc",
    [SQL_BATCH_CURRENT] = "SELECT " BATCH_COLS " FROM batches"
			  " WHERE status <> 'finished'"
			  " ORDER BY id DESC LIMIT 1",
    [SQL_BATCH_LATEST] = "SELECT " BATCH_COLS " FROM batches"
			 " ORDER BY id DESC LIMIT 1",
    [SQL_BATCH_CREATE] = "INSERT INTO batches (created_ms, status)"
			 " VALUES (?, 'running')",
    [SQL_BATCH_SET_STATUS] = "UPDATE batches SET status = ?,"
			     " finished_ms = ? WHERE id = ?",
    [SQL_BATCH_STORY_IDS] = "SELECT story_ids FROM batches WHERE id = ?",
    [SQL_BATCH_APPEND_STORY] = "UPDATE batches"
			       " SET story_ids = json_insert(story_ids,"
			       " '$[#]', ?) WHERE id = ?",
    [SQL_STORY_ADD] = "INSERT INTO stories (batch_id, id, " STORY_MUT_COLS
		      ") VALUES (?, ?, " STORY_MUT_PARAMS ")"
		      " ON CONFLICT (batch_id, id) DO NOTHING",
    [SQL_STORY_GET] = "SELECT " STORY_COLS " FROM stories"
		      " WHERE batch_id = ? AND id = ?",
    [SQL_STORY_UPDATE] =
	"UPDATE stories SET (" STORY_MUT_COLS ") = (" STORY_MUT_PARAMS
	") WHERE batch_id = ? AND id = ?",
    [SQL_STORY_LIST] = "SELECT " STORY_COLS " FROM stories"
		       " WHERE batch_id = ? ORDER BY position, id",
    [SQL_STORY_LIST_STATUS] = "SELECT " STORY_COLS " FROM stories"
			      " WHERE batch_id = ? AND status = ?"
			      " ORDER BY position, id",
    [SQL_STORY_RANGE] = "SELECT " STORY_COLS " FROM stories"
			" WHERE batch_id = ? AND position >= ? AND position < ?"
			" ORDER BY position, id",
    [SQL_STATUS_COUNTS] = "SELECT status, n FROM story_counts"
			  " WHERE batch_id = ? AND n > 0",
    /* in the index's order: db_story_lines() puts stories that share a
     * position in id order itself, which sqlite would do by sorting
     * every row of the page each decision */
    [SQL_STORY_LINES] = "SELECT id, position, status, attempts,"
			" tasks_completed, tasks_total, last_agent,"
			" last_outcome, reason, subtasks_completed,"
			" subtasks_total FROM stories"
			" WHERE batch_id = ? AND position >= ? AND position < ?"
			" ORDER BY position",
    [SQL_BATCH_SPEND] = "SELECT coalesce(sum(cost_usd), 0) FROM stories"
			" WHERE batch_id = ?",
    [SQL_ATTEMPT_NEXT_SEQ] = "SELECT coalesce(max(seq), 0) + 1"
			     " FROM attempts"
			     " WHERE batch_id = ? AND story_id = ?",
    [SQL_ATTEMPT_INSERT] = "INSERT INTO attempts (batch_id, story_id,"
			   " attempt, seq, " ATTEMPT_MUT_COLS ")"
			   " VALUES (?, ?, ?, ?, " ATTEMPT_MUT_PARAMS ")",
    [SQL_ATTEMPT_SET_PID] = "UPDATE attempts SET pid = ?, pid_start = ?"
			    " WHERE id = ?",
    [SQL_ATTEMPT_HEARTBEAT] = "UPDATE attempts SET heartbeat_ms = ?,"
			      " tasks_completed = ?, tasks_total = ?,"
			      " subtasks_completed = ?, subtasks_total = ?"
			      " WHERE id = ? AND outcome = 'running'",
    [SQL_ATTEMPT_FINISH] =
	"UPDATE attempts SET (" ATTEMPT_MUT_COLS ") = (" ATTEMPT_MUT_PARAMS ")"
	" WHERE id = ? AND outcome = 'running'",
    [SQL_ATTEMPTS_FOR_STORY] = "SELECT " ATTEMPT_COLS " FROM attempts"
			       " WHERE batch_id = ? AND story_id = ?"
			       " ORDER BY seq",
    [SQL_ATTEMPTS_RUNNING] = "SELECT " ATTEMPT_COLS " FROM attempts"
			     " WHERE outcome = 'running' ORDER BY id",
    [SQL_ATTEMPT_LAST] = "SELECT " ATTEMPT_COLS " FROM attempts"
			 " WHERE batch_id = ? AND story_id = ? AND seq > ?"
			 " ORDER BY seq DESC LIMIT 1",
    [SQL_ATTEMPT_LAST_COUNTED] = "SELECT " ATTEMPT_COLS " FROM attempts"
				 " WHERE batch_id = ? AND story_id = ?"
				 " AND seq > ? AND counted = 1"
				 " ORDER BY seq DESC LIMIT 1",
    [SQL_EVENT_ADD] = "INSERT INTO events (batch_id, ts_ms, story_id,"
		      " kind, message) VALUES (?, ?, ?, ?, ?)",
    [SQL_EVENTS_LIST] = "SELECT id, batch_id, ts_ms, story_id, kind,"
			" message FROM events"
			" WHERE batch_id = ? AND id > ? ORDER BY id",
    [SQL_EVENTS_LIST_ALL] = "SELECT id, batch_id, ts_ms, story_id, kind,"
			    " message FROM events"
			    " WHERE id > ? ORDER BY id",
    /* by id (the primary key) from ?1: the service's pages and stream */
    [SQL_EVENTS_PAGE] = "SELECT id, batch_id, ts_ms, story_id, kind,"
			" message FROM events WHERE id > ?1"
			" AND (?2 <= 0 OR batch_id = ?2)"
			" AND (?3 IS NULL OR story_id = ?3)"
			" ORDER BY id LIMIT ?4",
    [SQL_META_GET] = "SELECT value FROM meta WHERE key = ?",
    [SQL_META_SET] = "INSERT INTO meta (key, value) VALUES (?, ?)"
		     " ON CONFLICT (key)"
		     " DO UPDATE SET value = excluded.value",
    [SQL_SEQ_BUMP] = "INSERT INTO meta (key, value)"
		     " VALUES ('" DB_META_DECISION_SEQ "', 1)"
		     " ON CONFLICT (key) DO UPDATE"
		     " SET value = CAST(value AS INTEGER) + 1",
};

/*
 * A damaged database is never written to (docs/state.md#opening): the
 * message says so and what to do.  SC_EIO (exit 74): the state cannot be
 * used, and a person must act before anything resumes.
 */
int
db_damaged(const struct db *db, struct sc_err *err, const char *why)
{
	return err_set(err, SC_EIO,
	    "%s: the database is damaged (%.200s); storyctl will not use it: "
	    "move it aside (with its -wal and -shm files) and run `storyctl "
	    "run` to start a new record, or restore it from a backup; the "
	    "state branch still holds the record of every decision",
	    db->path, why);
}

/* SC_EIO "<file>: <what>: <sqlite's message>"; call it right where the
 * sqlite call failed, before anything else touches the connection.  A
 * corrupt file gets db_damaged()'s message instead. */
static int
db_vfail(struct db *db, struct sc_err *err, const char *fmt, va_list ap)
{
	char what[512];
	int code = sqlite3_errcode(db->h);

	if (code == SQLITE_CORRUPT || code == SQLITE_NOTADB)
		return db_damaged(db, err, sqlite3_errmsg(db->h));
	vsnprintf(what, sizeof(what), fmt, ap);
	return err_set(
	    err, SC_EIO, "%s: %s: %s", db->path, what, sqlite3_errmsg(db->h));
}

int
db_fail(struct db *db, struct sc_err *err, const char *fmt, ...)
{
	va_list ap;
	int ret;

	va_start(ap, fmt);
	ret = db_vfail(db, err, fmt, ap);
	va_end(ap);
	return ret;
}

int
db_oom(struct db *db, struct sc_err *err)
{
	return err_set(err, SC_EOS, "%s: out of memory", db->path);
}

/* A bounded copy of a column's text (NULL reads as ""). */
static void
db_copy(char *dst, size_t size, const char *src)
{
	size_t len = src == NULL ? 0 : strlen(src);

	if (len >= size)
		len = size - 1;
	if (len > 0)
		memcpy(dst, src, len);
	dst[len] = '\0';
}

char *
db_join(const char *dir, const char *name)
{
	char *p = NULL;
	size_t len = strlen(dir);

	while (len > 1 && dir[len - 1] == '/')
		len--;
	if (asprintf(&p, "%.*s/%s", (int)len, dir, name) < 0)
		return NULL;
	return p;
}

/* The cached statement for id, prepared on first use: parsing and
 * planning a statement costs far more than running these ones. */
int
db_prep_sql(struct db *db, sqlite3_stmt **out, enum db_sql id, const char *sql,
    struct sc_err *err)
{
	int rc;

	*out = NULL;
	if (db->st[id] == NULL) {
		rc = sqlite3_prepare_v3(db->h, sql, -1,
		    SQLITE_PREPARE_PERSISTENT, &db->st[id], NULL);
		if (rc != SQLITE_OK)
			return db_fail(
			    db, err, "cannot prepare statement %d", (int)id);
	}
	*out = db->st[id];
	return 0;
}

int
db_prep(struct db *db, sqlite3_stmt **out, enum db_sql id, struct sc_err *err)
{
	return db_prep_sql(db, out, id, db_sql_text[id], err);
}

/* Make a cached statement ready for the next use (and drop the pointers
 * bound with SQLITE_STATIC). */
void
db_done(sqlite3_stmt *st)
{
	if (st == NULL)
		return;
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
}

void
db_bind_int(struct db_bind *b, int64_t v)
{
	b->i++;
	if (b->rc == SQLITE_OK)
		b->rc = sqlite3_bind_int64(b->st, b->i, v);
}

void
db_bind_null(struct db_bind *b)
{
	b->i++;
	if (b->rc == SQLITE_OK)
		b->rc = sqlite3_bind_null(b->st, b->i);
}

/* v, or NULL when v is the "unknown" value. */
void
db_bind_int_or_null(struct db_bind *b, int64_t v, int64_t unknown)
{
	if (v == unknown)
		db_bind_null(b);
	else
		db_bind_int(b, v);
}

void
db_bind_double(struct db_bind *b, double v)
{
	b->i++;
	if (b->rc == SQLITE_OK)
		b->rc = sqlite3_bind_double(b->st, b->i, v);
}

/* s (NULL binds NULL); a fixed-size field is bounded by its size. */
void
db_bind_text(struct db_bind *b, const char *s, size_t size)
{
	b->i++;
	if (b->rc != SQLITE_OK)
		return;
	if (s == NULL)
		b->rc = sqlite3_bind_null(b->st, b->i);
	else
		b->rc = sqlite3_bind_text(
		    b->st, b->i, s, (int)strnlen(s, size), SQLITE_STATIC);
}

void
db_bind_str(struct db_bind *b, const char *s)
{
	db_bind_text(b, s, s == NULL ? 0 : strlen(s));
}

/* "" and NULL both bind NULL. */
void
db_bind_str_or_null(struct db_bind *b, const char *s, size_t size)
{
	db_bind_text(b, s != NULL && s[0] != '\0' ? s : NULL, size);
}

int
db_bind_check(struct db *db, struct db_bind *b, struct sc_err *err)
{
	if (b->rc == SQLITE_OK)
		return 0;
	return db_fail(db, err, "cannot bind parameter %d", b->i);
}

int64_t
db_col_int(sqlite3_stmt *st, int i, int64_t if_null)
{
	if (sqlite3_column_type(st, i) == SQLITE_NULL)
		return if_null;
	return sqlite3_column_int64(st, i);
}

void
db_col_copy(sqlite3_stmt *st, int i, char *dst, size_t size)
{
	db_copy(dst, size, (const char *)sqlite3_column_text(st, i));
}

/* A malloc'd copy of a text column ("" for NULL); NULL when out of memory. */
char *
db_col_dup(sqlite3_stmt *st, int i)
{
	const char *s = (const char *)sqlite3_column_text(st, i);

	return strdup(s == NULL ? "" : s);
}

/* One step of a statement that returns no row; fmt says what failed. */
int
db_step_done(
    struct db *db, sqlite3_stmt *st, struct sc_err *err, const char *fmt, ...)
{
	va_list ap;
	int ret = 0;

	if (sqlite3_step(st) != SQLITE_DONE) {
		va_start(ap, fmt);
		ret = db_vfail(db, err, fmt, ap);
		va_end(ap);
	}
	return ret;
}

/* Run SQL text without values (transaction control, pragmas). */
int
db_exec(struct db *db, const char *sql, struct sc_err *err, const char *what)
{
	if (sqlite3_exec(db->h, sql, NULL, NULL, NULL) != SQLITE_OK)
		return db_fail(db, err, "%s", what);
	return 0;
}

int
db_pragma_int(struct db *db, const char *sql, int *out, struct sc_err *err)
{
	sqlite3_stmt *st = NULL;
	int ret = 0;

	*out = 0;
	if (sqlite3_prepare_v2(db->h, sql, -1, &st, NULL) != SQLITE_OK) {
		ret = db_fail(db, err, "%s", sql);
		goto out;
	}
	if (sqlite3_step(st) == SQLITE_ROW)
		*out = sqlite3_column_int(st, 0);
	else
		ret = db_fail(db, err, "%s", sql);
out:
	sqlite3_finalize(st);
	return ret;
}

int
db_pragma_text(
    struct db *db, const char *sql, char *out, size_t size, struct sc_err *err)
{
	sqlite3_stmt *st = NULL;
	int ret = 0;

	out[0] = '\0';
	if (sqlite3_prepare_v2(db->h, sql, -1, &st, NULL) != SQLITE_OK) {
		ret = db_fail(db, err, "%s", sql);
		goto out;
	}
	if (sqlite3_step(st) == SQLITE_ROW)
		db_col_copy(st, 0, out, size);
	else
		ret = db_fail(db, err, "%s", sql);
out:
	sqlite3_finalize(st);
	return ret;
}

int
db_seq_bump(struct db *db, struct sc_err *err)
{
	sqlite3_stmt *st = NULL;
	int ret;

	if ((ret = db_prep(db, &st, SQL_SEQ_BUMP, err)) < 0)
		goto out;
	ret = db_step_done(db, st, err, "cannot bump the decision counter");
out:
	db_done(st);
	return ret;
}

/*
 * Transactions
 */

/* Run a cached statement that returns no row (transaction control). */
static int
db_run(struct db *db, enum db_sql id, struct sc_err *err, const char *what)
{
	sqlite3_stmt *st = NULL;
	int ret;

	if ((ret = db_prep(db, &st, id, err)) < 0)
		goto out;
	ret = db_step_done(db, st, err, "%s", what);
out:
	db_done(st);
	return ret;
}

int
db_tx_begin(struct db *db, struct sc_err *err)
{
	int ret;

	if (db->tx_depth == 0) {
		db->changes0 = sqlite3_total_changes(db->h);
		ret =
		    db_run(db, SQL_TX_BEGIN, err, "cannot begin a transaction");
	} else {
		ret = db_run(
		    db, SQL_TX_SAVEPOINT, err, "cannot begin a savepoint");
	}
	if (ret == 0)
		db->tx_depth++;
	return ret;
}

int
db_tx_commit(struct db *db, struct sc_err *err)
{
	int ret;

	if (db->tx_depth <= 0)
		return err_set(err, SC_ESOFTWARE,
		    "%s: commit without a transaction", db->path);
	if (db->tx_depth == 1)
		ret = db_run(db, SQL_TX_COMMIT, err, "cannot commit");
	else
		ret = db_run(
		    db, SQL_TX_RELEASE, err, "cannot release a savepoint");
	if (ret == 0)
		db->tx_depth--;
	/* a FULL commit that wrote something syncs the whole WAL, earlier
	 * frames included */
	if (ret == 0 && db->tx_depth == 0 && sqlite3_get_autocommit(db->h) &&
	    sqlite3_total_changes(db->h) != db->changes0)
		db->unsynced = 0;
	return ret;
}

void
db_defer_sync(struct db *db)
{
	if (db != NULL)
		db->defer_next = 1;
}

int
db_unsynced(const struct db *db)
{
	return db != NULL && db->unsynced;
}

int
db_flush(struct db *db, struct sc_err *err)
{
	sqlite3_file *wal = NULL;
	int rc;

	if (db == NULL || !db->unsynced)
		return 0;
	/* fsync the write-ahead log: what a FULL commit would have done */
	rc = sqlite3_file_control(
	    db->h, "main", SQLITE_FCNTL_JOURNAL_POINTER, &wal);
	if (rc == SQLITE_OK && wal != NULL && wal->pMethods != NULL)
		rc = wal->pMethods->xSync(wal, SQLITE_SYNC_NORMAL);
	else
		rc = sqlite3_wal_checkpoint_v2(
		    db->h, "main", SQLITE_CHECKPOINT_PASSIVE, NULL, NULL);
	if (rc != SQLITE_OK)
		return err_set(err, SC_EIO,
		    "%s: cannot sync the write-ahead log: %s", db->path,
		    sqlite3_errstr(rc));
	db->unsynced = 0;
	return 0;
}

void
db_tx_rollback(struct db *db)
{
	if (db == NULL || db->tx_depth <= 0)
		return;
	/* sqlite may already have rolled back on its own (disk full, I/O
	 * error); then the statements below fail harmlessly */
	if (db->tx_depth == 1) {
		if (!sqlite3_get_autocommit(db->h))
			db_run(db, SQL_TX_ROLLBACK, NULL, "rollback");
	} else {
		db_run(db, SQL_TX_ROLLBACK_TO, NULL, "rollback");
		db_run(db, SQL_TX_RELEASE, NULL, "rollback");
	}
	db->tx_depth--;
}

/* Double *arr (of elem-sized items) when n items fill it. */
int
db_grow(void **arr, size_t *alloc, size_t n, size_t elem)
{
	size_t want;
	void *p;

	if (n < *alloc)
		return 0;
	want = *alloc == 0 ? 16 : *alloc * 2;
	if ((p = realloc(*arr, want * elem)) == NULL)
		return -1;
	*arr = p;
	*alloc = want;
	return 0;
}
