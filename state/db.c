/* db.c - see db.h; the schema is described in docs/state.md. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sqlite3.h>

#include "state/db.h"

#define DB_FILE "state.db"

/*
 * Migration i takes the schema from version i to i + 1 and sets
 * user_version itself, so no SQL is ever formatted with a number.  All
 * pending ones run in one transaction.  Never edit a released entry: add
 * a new one.
 */
static const char *const db_migrations[] = {
    /* 1: the initial schema */
    "CREATE TABLE batches (\n"
    "  id INTEGER PRIMARY KEY AUTOINCREMENT,\n"
    "  created_ms INTEGER NOT NULL,\n"
    "  finished_ms INTEGER,\n"
    "  status TEXT NOT NULL DEFAULT 'running'\n"
    "    CHECK (status IN ('running', 'finished', 'stopped')),\n"
    "  story_ids TEXT NOT NULL DEFAULT '[]'\n"
    ");\n"
    "CREATE TABLE stories (\n"
    "  batch_id INTEGER NOT NULL REFERENCES batches (id),\n"
    "  id TEXT NOT NULL,\n"
    "  file TEXT NOT NULL,\n"
    "  position INTEGER NOT NULL,\n"
    "  status TEXT NOT NULL,\n"
    "  reason TEXT NOT NULL DEFAULT '',\n"
    "  tasks_completed INTEGER NOT NULL DEFAULT 0,\n"
    "  tasks_total INTEGER NOT NULL DEFAULT 0,\n"
    "  attempts INTEGER NOT NULL DEFAULT 0,\n"
    "  last_agent TEXT NOT NULL DEFAULT '',\n"
    "  last_outcome TEXT,\n"
    "  updated_ms INTEGER,\n"
    "  cost_usd REAL NOT NULL DEFAULT 0,\n"
    "  branch TEXT NOT NULL DEFAULT '',\n"
    "  seq_base INTEGER NOT NULL DEFAULT 0,\n"
    "  attempt_base INTEGER NOT NULL DEFAULT 0,\n"
    "  base_commit TEXT NOT NULL DEFAULT '',\n"
    "  PRIMARY KEY (batch_id, id)\n"
    ");\n"
    "CREATE INDEX stories_by_position ON stories (batch_id, position);\n"
    "CREATE TABLE attempts (\n"
    "  id INTEGER PRIMARY KEY,\n"
    "  batch_id INTEGER NOT NULL,\n"
    "  story_id TEXT NOT NULL,\n"
    "  attempt INTEGER NOT NULL CHECK (attempt >= 1),\n"
    "  seq INTEGER NOT NULL CHECK (seq >= 1),\n"
    "  counted INTEGER NOT NULL CHECK (counted IN (0, 1)),\n"
    "  role TEXT NOT NULL,\n"
    "  agent TEXT NOT NULL,\n"
    "  argv_json TEXT,\n"
    "  pid INTEGER,\n"
    "  pid_start INTEGER,\n"
    "  controller_pid INTEGER,\n"
    "  started_ms INTEGER,\n"
    "  ended_ms INTEGER,\n"
    "  heartbeat_ms INTEGER,\n"
    "  exit_code INTEGER,\n"
    "  signal INTEGER NOT NULL DEFAULT 0,\n"
    "  outcome TEXT NOT NULL,\n"
    "  error_code TEXT,\n"
    "  error_message TEXT NOT NULL DEFAULT '',\n"
    "  tasks_completed INTEGER NOT NULL DEFAULT 0,\n"
    "  tasks_total INTEGER NOT NULL DEFAULT 0,\n"
    "  stalled_task TEXT NOT NULL DEFAULT '',\n"
    "  delay_ms INTEGER NOT NULL DEFAULT 0,\n"
    "  decision TEXT NOT NULL DEFAULT 'none',\n"
    "  reason TEXT NOT NULL DEFAULT '',\n"
    "  log_path TEXT NOT NULL DEFAULT '',\n"
    "  timeout_factor REAL NOT NULL DEFAULT 1,\n"
    "  poll_factor REAL NOT NULL DEFAULT 1,\n"
    "  cost_usd REAL NOT NULL DEFAULT 0,\n"
    "  result_text TEXT,\n"
    "  gate TEXT NOT NULL DEFAULT '',\n"
    "  gate_exit INTEGER,\n"
    "  gate_output TEXT,\n"
    "  consensus TEXT NOT NULL DEFAULT '',\n"
    "  review_notes TEXT,\n"
    "  FOREIGN KEY (batch_id, story_id) REFERENCES stories (batch_id, id)\n"
    ");\n"
    /* seq alone is unique per story, which makes (batch_id, story_id,
     * attempt, seq) unique too; the index gives the by-seq order and
     * the next seq without a scan */
    "CREATE UNIQUE INDEX attempts_by_story\n"
    "  ON attempts (batch_id, story_id, seq);\n"
    "CREATE INDEX attempts_running ON attempts (id)\n"
    "  WHERE outcome = 'running';\n"
    "CREATE TABLE events (\n"
    "  id INTEGER PRIMARY KEY AUTOINCREMENT,\n"
    "  batch_id INTEGER NOT NULL REFERENCES batches (id),\n"
    "  ts_ms INTEGER NOT NULL,\n"
    "  story_id TEXT,\n"
    "  kind TEXT NOT NULL,\n"
    "  message TEXT NOT NULL DEFAULT ''\n"
    ");\n"
    "CREATE INDEX events_by_batch ON events (batch_id, id);\n"
    "CREATE TABLE meta (\n"
    "  key TEXT PRIMARY KEY,\n"
    "  value TEXT NOT NULL\n"
    ") WITHOUT ROWID;\n"
    "PRAGMA user_version = 1;\n",
    /* 2: the count of each batch's stories per status, kept by triggers,
     * so that a decision reads a handful of rows instead of grouping the
     * whole batch (docs/performance.md) */
    "CREATE TABLE story_counts (\n"
    "  batch_id INTEGER NOT NULL,\n"
    "  status TEXT NOT NULL,\n"
    "  n INTEGER NOT NULL,\n"
    "  PRIMARY KEY (batch_id, status)\n"
    ") WITHOUT ROWID;\n"
    "INSERT INTO story_counts (batch_id, status, n)\n"
    "  SELECT batch_id, status, count(*) FROM stories\n"
    "  GROUP BY batch_id, status;\n"
    "CREATE TRIGGER story_counts_insert AFTER INSERT ON stories BEGIN\n"
    "  INSERT INTO story_counts (batch_id, status, n)\n"
    "    VALUES (new.batch_id, new.status, 1)\n"
    "    ON CONFLICT (batch_id, status) DO UPDATE SET n = n + 1;\n"
    "END;\n"
    "CREATE TRIGGER story_counts_delete AFTER DELETE ON stories BEGIN\n"
    "  UPDATE story_counts SET n = n - 1\n"
    "    WHERE batch_id = old.batch_id AND status = old.status;\n"
    "END;\n"
    "CREATE TRIGGER story_counts_update\n"
    "  AFTER UPDATE OF batch_id, status ON stories\n"
    "  WHEN old.status IS NOT new.status\n"
    "    OR old.batch_id IS NOT new.batch_id BEGIN\n"
    "  UPDATE story_counts SET n = n - 1\n"
    "    WHERE batch_id = old.batch_id AND status = old.status;\n"
    "  INSERT INTO story_counts (batch_id, status, n)\n"
    "    VALUES (new.batch_id, new.status, 1)\n"
    "    ON CONFLICT (batch_id, status) DO UPDATE SET n = n + 1;\n"
    "END;\n"
    "PRAGMA user_version = 2;\n",
    /* 3: subtask progress per attempt and per story (docs/stories.md
     * "Subtasks"), and the agent's session id (docs/agents.md) */
    "ALTER TABLE attempts ADD COLUMN subtasks_completed INTEGER NOT NULL"
    " DEFAULT 0;\n"
    "ALTER TABLE attempts ADD COLUMN subtasks_total INTEGER NOT NULL"
    " DEFAULT 0;\n"
    "ALTER TABLE attempts ADD COLUMN session_id TEXT NOT NULL"
    " DEFAULT '';\n"
    "ALTER TABLE stories ADD COLUMN subtasks_completed INTEGER NOT NULL"
    " DEFAULT 0;\n"
    "ALTER TABLE stories ADD COLUMN subtasks_total INTEGER NOT NULL"
    " DEFAULT 0;\n"
    "PRAGMA user_version = 3;\n",
    /* 4: the decision's next attempt, stored with the attempt it was
     * made after, so that the next attempt is prepared from it instead
     * of deciding again (docs/state.md, docs/retry-strategy.md); NULL
     * when the decision leaves no next attempt */
    "ALTER TABLE attempts ADD COLUMN next_attempt INTEGER;\n"
    "ALTER TABLE attempts ADD COLUMN next_role TEXT;\n"
    "ALTER TABLE attempts ADD COLUMN not_before_ms INTEGER;\n"
    "PRAGMA user_version = 4;\n",
};

_Static_assert(
    sizeof(db_migrations) / sizeof(db_migrations[0]) == DB_SCHEMA_VERSION,
    "one migration per schema version");

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

enum db_sql {
	SQL_TX_BEGIN,
	SQL_TX_SAVEPOINT,
	SQL_TX_COMMIT,
	SQL_TX_RELEASE,
	SQL_TX_ROLLBACK,
	SQL_TX_ROLLBACK_TO,
	SQL_BATCH_CURRENT,
	SQL_BATCH_LATEST,
	SQL_BATCH_CREATE,
	SQL_BATCH_SET_STATUS,
	SQL_BATCH_STORY_IDS,
	SQL_BATCH_APPEND_STORY,
	SQL_STORY_ADD,
	SQL_STORY_GET,
	SQL_STORY_UPDATE,
	SQL_STORY_LIST,
	SQL_STORY_LIST_STATUS,
	SQL_STORY_RANGE,
	SQL_STATUS_COUNTS,
	SQL_BATCH_SPEND,
	SQL_STORY_LINES,
	SQL_ATTEMPT_NEXT_SEQ,
	SQL_ATTEMPT_INSERT,
	SQL_ATTEMPT_SET_PID,
	SQL_ATTEMPT_HEARTBEAT,
	SQL_ATTEMPT_FINISH,
	SQL_ATTEMPTS_FOR_STORY,
	SQL_ATTEMPTS_RUNNING,
	SQL_ATTEMPT_LAST,
	SQL_ATTEMPT_LAST_COUNTED,
	SQL_EVENT_ADD,
	SQL_EVENTS_LIST,
	SQL_EVENTS_LIST_ALL,
	SQL_META_GET,
	SQL_META_SET,
	SQL_SEQ_BUMP,
	SQL__COUNT
};

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
    [SQL_STORY_LINES] = "SELECT id, position, status, attempts,"
			" tasks_completed, tasks_total, last_agent,"
			" last_outcome, reason, subtasks_completed,"
			" subtasks_total FROM stories"
			" WHERE batch_id = ? AND position >= ? AND position < ?"
			" ORDER BY position, id",
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
    [SQL_META_GET] = "SELECT value FROM meta WHERE key = ?",
    [SQL_META_SET] = "INSERT INTO meta (key, value) VALUES (?, ?)"
		     " ON CONFLICT (key)"
		     " DO UPDATE SET value = excluded.value",
    [SQL_SEQ_BUMP] = "INSERT INTO meta (key, value)"
		     " VALUES ('" DB_META_DECISION_SEQ "', 1)"
		     " ON CONFLICT (key) DO UPDATE"
		     " SET value = CAST(value AS INTEGER) + 1",
};

struct db {
	sqlite3 *h;
	char *path;
	int tx_depth;
	int defer_next; /* db_defer_sync(): the next attempt end */
	int unsynced; /* a commit without fsync is not yet durable */
	int changes0; /* sqlite3_total_changes() when the tx began */
	int healthy; /* opened and checked: PRAGMA optimize may run */
	sqlite3_stmt *st[SQL__COUNT];
};

/* Binds parameters 1, 2, 3 ... in order; the first failure sticks. */
struct db_bind {
	sqlite3_stmt *st;
	int i;
	int rc;
};

/*
 * Small helpers
 */

static int db_fail(struct db *db, struct sc_err *err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int db_step_done(struct db *db, sqlite3_stmt *st, struct sc_err *err,
    const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/*
 * A damaged database is never written to (docs/state.md#opening): the
 * message says so and what to do.  SC_EIO (exit 74): the state cannot be
 * used, and a person must act before anything resumes.
 */
static int
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

static int
db_fail(struct db *db, struct sc_err *err, const char *fmt, ...)
{
	va_list ap;
	int ret;

	va_start(ap, fmt);
	ret = db_vfail(db, err, fmt, ap);
	va_end(ap);
	return ret;
}

static int
db_oom(struct db *db, struct sc_err *err)
{
	return err_set(err, SC_EOS, "%s: out of memory", db->path);
}

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

static char *
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

/* The cached statement for id, prepared on first use. */
static int
db_prep(struct db *db, sqlite3_stmt **out, enum db_sql id, struct sc_err *err)
{
	int rc;

	*out = NULL;
	if (db->st[id] == NULL) {
		rc = sqlite3_prepare_v3(db->h, db_sql_text[id], -1,
		    SQLITE_PREPARE_PERSISTENT, &db->st[id], NULL);
		if (rc != SQLITE_OK)
			return db_fail(
			    db, err, "cannot prepare statement %d", (int)id);
	}
	*out = db->st[id];
	return 0;
}

/* Make a cached statement ready for the next use (and drop the pointers
 * bound with SQLITE_STATIC). */
static void
db_done(sqlite3_stmt *st)
{
	if (st == NULL)
		return;
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
}

static void
bind_int(struct db_bind *b, int64_t v)
{
	b->i++;
	if (b->rc == SQLITE_OK)
		b->rc = sqlite3_bind_int64(b->st, b->i, v);
}

static void
bind_null(struct db_bind *b)
{
	b->i++;
	if (b->rc == SQLITE_OK)
		b->rc = sqlite3_bind_null(b->st, b->i);
}

/* v, or NULL when v is the "unknown" value. */
static void
bind_int_or_null(struct db_bind *b, int64_t v, int64_t unknown)
{
	if (v == unknown)
		bind_null(b);
	else
		bind_int(b, v);
}

static void
bind_double(struct db_bind *b, double v)
{
	b->i++;
	if (b->rc == SQLITE_OK)
		b->rc = sqlite3_bind_double(b->st, b->i, v);
}

/* s (NULL binds NULL); a fixed-size field is bounded by its size. */
static void
bind_text(struct db_bind *b, const char *s, size_t size)
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

static void
bind_str(struct db_bind *b, const char *s)
{
	bind_text(b, s, s == NULL ? 0 : strlen(s));
}

/* "" and NULL both bind NULL. */
static void
bind_str_or_null(struct db_bind *b, const char *s, size_t size)
{
	bind_text(b, s != NULL && s[0] != '\0' ? s : NULL, size);
}

static int
db_bind_check(struct db *db, struct db_bind *b, struct sc_err *err)
{
	if (b->rc == SQLITE_OK)
		return 0;
	return db_fail(db, err, "cannot bind parameter %d", b->i);
}

static int64_t
col_int(sqlite3_stmt *st, int i, int64_t if_null)
{
	if (sqlite3_column_type(st, i) == SQLITE_NULL)
		return if_null;
	return sqlite3_column_int64(st, i);
}

static void
col_copy(sqlite3_stmt *st, int i, char *dst, size_t size)
{
	db_copy(dst, size, (const char *)sqlite3_column_text(st, i));
}

/* A malloc'd copy of a text column ("" for NULL); NULL when out of memory. */
static char *
col_dup(sqlite3_stmt *st, int i)
{
	const char *s = (const char *)sqlite3_column_text(st, i);

	return strdup(s == NULL ? "" : s);
}

/* One step of a statement that returns no row; fmt says what failed. */
static int
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
static int
db_exec(struct db *db, const char *sql, struct sc_err *err, const char *what)
{
	if (sqlite3_exec(db->h, sql, NULL, NULL, NULL) != SQLITE_OK)
		return db_fail(db, err, "%s", what);
	return 0;
}

static int
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

static int
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
		col_copy(st, 0, out, size);
	else
		ret = db_fail(db, err, "%s", sql);
out:
	sqlite3_finalize(st);
	return ret;
}

static int
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

/*
 * Open and close
 */

/* mkdir -p for the parents of a missing state dir. */
static int
db_mkdirs(const char *dir, mode_t mode)
{
	char *p = NULL, *slash;
	int ret = 0;

	if (mkdir(dir, mode) == 0 || errno == EEXIST)
		return 0;
	if (errno != ENOENT)
		return -1;
	if ((p = strdup(dir)) == NULL)
		return -1;
	slash = strrchr(p, '/');
	while (slash != NULL && slash > p && slash[-1] == '/')
		slash--;
	if (slash == NULL || slash == p) {
		errno = ENOENT;
		ret = -1;
		goto out;
	}
	*slash = '\0';
	if (db_mkdirs(p, 0755) < 0) {
		ret = -1;
		goto out;
	}
	if (mkdir(dir, mode) < 0 && errno != EEXIST)
		ret = -1;
out:
	free(p);
	return ret;
}

int
db_dir_prepare(const char *state_dir, struct sc_err *err)
{
	struct stat sb;

	if (state_dir == NULL || state_dir[0] == '\0')
		return err_set(err, SC_EIO, "empty state dir name");
	if (db_mkdirs(state_dir, 0700) < 0)
		return err_set(err, SC_EIO, "cannot create state dir %s: %s",
		    state_dir, strerror(errno));
	if (stat(state_dir, &sb) < 0)
		return err_set(
		    err, SC_EIO, "%s: %s", state_dir, strerror(errno));
	if (!S_ISDIR(sb.st_mode))
		return err_set(
		    err, SC_EIO, "state dir %s is not a directory", state_dir);
	/* the database holds agent argv and error excerpts: owner only */
	if ((sb.st_mode & 077) != 0 && chmod(state_dir, sb.st_mode & 0700) < 0)
		return err_set(err, SC_EIO, "cannot chmod state dir %s: %s",
		    state_dir, strerror(errno));
	return 0;
}

/*
 * Create path 0600 (or tighten it) before sqlite opens it: sqlite would
 * create it 0644 & ~umask, and gives -wal and -shm the database's mode.
 * An existing file is only chmod'ed, never opened: closing a descriptor
 * of it would drop the POSIX locks another connection of this process
 * holds on it.
 */
static int
db_file_prepare(const char *path, bool create, struct sc_err *err)
{
	struct stat sb;
	int fd, tries;

	for (tries = 0; tries < 2; tries++) {
		if (lstat(path, &sb) == 0)
			break;
		if (errno != ENOENT)
			return err_set(
			    err, SC_EIO, "%s: %s", path, strerror(errno));
		if (!create)
			return 0;
		fd = open(path,
		    O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
		if (fd >= 0) {
			close(fd);
			return 0;
		}
		if (errno != EEXIST) /* else created meanwhile: look again */
			return err_set(err, SC_EIO, "cannot create %s: %s",
			    path, strerror(errno));
	}
	if (tries == 2)
		return err_set(err, SC_EIO, "cannot create %s", path);
	if (!S_ISREG(sb.st_mode))
		return err_set(err, SC_EIO, "%s is not a regular file", path);
	if ((sb.st_mode & 077) != 0 && chmod(path, sb.st_mode & 0600) < 0)
		return err_set(
		    err, SC_EIO, "cannot chmod %s: %s", path, strerror(errno));
	return 0;
}

static int
db_prepare_files(const char *path, struct sc_err *err)
{
	static const char *const sidecars[] = {"-wal", "-shm"};
	char *side = NULL;
	size_t i;
	int ret;

	if ((ret = db_file_prepare(path, true, err)) < 0)
		return ret;
	for (i = 0; i < sizeof(sidecars) / sizeof(sidecars[0]); i++) {
		if (asprintf(&side, "%s%s", path, sidecars[i]) < 0)
			return err_set(err, SC_EOS, "%s: out of memory", path);
		ret = db_file_prepare(side, false, err);
		free(side);
		side = NULL;
		if (ret < 0)
			return ret;
	}
	return 0;
}

static int
db_migrate(struct db *db, struct sc_err *err)
{
	int version = 0, ret;

	if ((ret = db_pragma_int(db, "PRAGMA user_version", &version, err)) < 0)
		return ret;
	if (version == DB_SCHEMA_VERSION)
		return 0;
	if ((ret = db_tx_begin(db, err)) < 0)
		return ret;
	/* read again under the write lock: another process may have
	 * migrated in between */
	if ((ret = db_pragma_int(db, "PRAGMA user_version", &version, err)) < 0)
		goto out;
	if (version < 0 || version > DB_SCHEMA_VERSION) {
		ret = err_set(err, SC_EIO,
		    "%s: schema version %d is newer than this storyctl "
		    "understands (%d)",
		    db->path, version, DB_SCHEMA_VERSION);
		goto out;
	}
	for (; version < DB_SCHEMA_VERSION; version++) {
		if (sqlite3_exec(db->h, db_migrations[version], NULL, NULL,
			NULL) != SQLITE_OK) {
			ret = db_fail(db, err,
			    "cannot migrate schema to version %d", version + 1);
			goto out;
		}
	}
	ret = db_tx_commit(db, err);
out:
	if (ret < 0)
		db_tx_rollback(db);
	return ret;
}

/*
 * PRAGMA quick_check before the first write (docs/state.md#opening): a
 * damaged b-tree must not receive a new batch.  It reads every page
 * (about 0.15 s for a 100 MB database with 50,000 attempts), so only
 * the commands that write pay for it; readers meet a damaged page as
 * SQLITE_CORRUPT and report it the same way (db_vfail).
 */
static int
db_quick_check(struct db *db, struct sc_err *err)
{
	sqlite3_stmt *st = NULL;
	char first[256] = "";
	int rc, ret = 0, bad = 0;

	if (sqlite3_prepare_v2(db->h, "PRAGMA quick_check", -1, &st, NULL) !=
	    SQLITE_OK)
		return db_fail(db, err, "cannot check the database");
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *t = (const char *)sqlite3_column_text(st, 0);
		if (t != NULL && strcmp(t, "ok") != 0 && !bad++)
			snprintf(first, sizeof(first), "quick_check: %s", t);
	}
	if (rc != SQLITE_DONE)
		ret = db_fail(db, err, "cannot check the database");
	else if (bad)
		ret = db_damaged(db, err, first);
	sqlite3_finalize(st);
	return ret;
}

static int
db_configure(struct db *db, struct sc_err *err)
{
	char mode[16];
	int ret;

	sqlite3_extended_result_codes(db->h, 1);
	if (sqlite3_busy_timeout(db->h, DB_BUSY_TIMEOUT_MS) != SQLITE_OK)
		return db_fail(db, err, "cannot set the busy timeout");
	if ((ret = db_quick_check(db, err)) < 0)
		return ret;
	/* WAL: readers (status, list) never block the controller's writes;
	 * FULL: a commit is on disk (WAL fsynced) when COMMIT returns */
	if ((ret = db_pragma_text(
		 db, "PRAGMA journal_mode = WAL", mode, sizeof(mode), err)) < 0)
		return ret;
	if (strcmp(mode, "wal") != 0)
		return err_set(err, SC_EIO,
		    "%s: cannot use write-ahead logging (journal mode %s)",
		    db->path, mode);
	if ((ret = db_exec(db, "PRAGMA synchronous = FULL", err,
		 "cannot set synchronous=FULL")) < 0)
		return ret;
	if ((ret = db_exec(db, "PRAGMA foreign_keys = ON", err,
		 "cannot enable foreign keys")) < 0)
		return ret;
	/* 512 KiB of page cache instead of 2 MiB: every query is indexed
	 * and the kernel caches the file, so a larger cache only makes the
	 * controller's memory grow with the batch (docs/performance.md) */
	if ((ret = db_exec(db, "PRAGMA cache_size = -512", err,
		 "cannot set the cache size")) < 0)
		return ret;
	return db_migrate(db, err);
}

int
db_open(struct db **out, const char *state_dir, struct sc_err *err)
{
	struct db *db = NULL;
	int rc, ret;

	*out = NULL;
	if ((ret = db_dir_prepare(state_dir, err)) < 0)
		return ret;
	if ((db = calloc(1, sizeof(*db))) == NULL ||
	    (db->path = db_join(state_dir, DB_FILE)) == NULL) {
		ret = err_set(err, SC_EOS, "%s: out of memory", state_dir);
		goto out;
	}
	if ((ret = db_prepare_files(db->path, err)) < 0)
		goto out;
	rc = sqlite3_open_v2(db->path, &db->h,
	    SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOFOLLOW,
	    NULL);
	if (rc != SQLITE_OK) {
		if (db->h != NULL)
			ret = db_fail(db, err, "cannot open");
		else
			ret = err_set(err, SC_EIO, "%s: cannot open: %s",
			    db->path, sqlite3_errstr(rc));
		goto out;
	}
	ret = db_configure(db, err);
	db->healthy = ret == 0;
out:
	if (ret < 0) {
		db_close(db);
		db = NULL;
	}
	*out = db;
	return ret;
}

/* Open name with flags, query_only, and read the schema version, which
 * also reads the WAL's index. */
static int
db_open_ro_try(struct db *db, const char *name, int flags, int *version)
{
	sqlite3_stmt *st = NULL;
	int rc;

	rc = sqlite3_open_v2(name, &db->h, SQLITE_OPEN_NOFOLLOW | flags, NULL);
	if (rc == SQLITE_OK) {
		sqlite3_extended_result_codes(db->h, 1);
		sqlite3_busy_timeout(db->h, DB_BUSY_TIMEOUT_MS);
		rc = sqlite3_exec(
		    db->h, "PRAGMA query_only = 1", NULL, NULL, NULL);
	}
	if (rc == SQLITE_OK)
		rc = sqlite3_prepare_v2(
		    db->h, "PRAGMA user_version", -1, &st, NULL);
	if (rc == SQLITE_OK) {
		rc = sqlite3_step(st);
		if (rc == SQLITE_ROW) {
			*version = sqlite3_column_int(st, 0);
			rc = SQLITE_OK;
		}
	}
	sqlite3_finalize(st);
	return rc;
}

int
db_open_readonly(struct db **out, const char *state_dir, struct sc_err *err)
{
	struct db *db = NULL;
	char *uri = NULL;
	int rc, ret = 0, version = 0;

	*out = NULL;
	if ((db = calloc(1, sizeof(*db))) == NULL ||
	    (db->path = db_join(state_dir, DB_FILE)) == NULL) {
		ret = err_set(err, SC_EOS, "%s: out of memory", state_dir);
		goto out;
	}
	/* Read-write without CREATE, but query_only: no statement can
	 * write, and the connection still tidies up the -wal and -shm files
	 * at close as the controller's does (a read-only connection would
	 * leave them behind). */
	rc = db_open_ro_try(db, db->path, SQLITE_OPEN_READWRITE, &version);
	if ((rc & 0xff) == SQLITE_CANTOPEN || (rc & 0xff) == SQLITE_READONLY) {
		/* a read-only file system: WAL cannot make its -shm index
		 * there, and nobody can be writing, so the file is opened
		 * read-only as immutable */
		sqlite3_close_v2(db->h);
		db->h = NULL;
		if (asprintf(&uri, "file:%s?immutable=1", db->path) < 0) {
			uri = NULL;
			ret =
			    err_set(err, SC_EOS, "%s: out of memory", db->path);
			goto out;
		}
		rc = db_open_ro_try(
		    db, uri, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, &version);
	}
	if (rc != SQLITE_OK) {
		ret = db->h != NULL
		    ? db_fail(db, err, "cannot open for reading")
		    : err_set(err, SC_EIO, "%s: cannot open for reading: %s",
			  db->path, sqlite3_errstr(rc));
		goto out;
	}
	if (version != DB_SCHEMA_VERSION)
		ret = err_set(err, SC_EIO,
		    "%s: schema version %d, this storyctl reads %d; run "
		    "`storyctl resume` once to upgrade it",
		    db->path, version, DB_SCHEMA_VERSION);
out:
	free(uri);
	if (ret < 0) {
		db_close(db);
		db = NULL;
	}
	*out = db;
	return ret;
}

void
db_close(struct db *db)
{
	size_t i;

	if (db == NULL)
		return;
	while (db->tx_depth > 0)
		db_tx_rollback(db);
	for (i = 0; i < SQL__COUNT; i++)
		sqlite3_finalize(db->st[i]);
	if (db->h != NULL) {
		/* keeps the planner's statistics fresh over long nights (a
		 * read-only connection cannot store them) */
		if (db->healthy && !sqlite3_db_readonly(db->h, "main"))
			sqlite3_exec(
			    db->h, "PRAGMA optimize", NULL, NULL, NULL);
		sqlite3_close_v2(db->h);
	}
	free(db->path);
	free(db);
}

const char *
db_path(const struct db *db)
{
	return db->path;
}

int
db_info(struct db *db, struct db_info *out, struct sc_err *err)
{
	int ret;

	memset(out, 0, sizeof(*out));
	if ((ret = db_pragma_text(db, "PRAGMA journal_mode", out->journal_mode,
		 sizeof(out->journal_mode), err)) < 0 ||
	    (ret = db_pragma_int(
		 db, "PRAGMA synchronous", &out->synchronous, err)) < 0 ||
	    (ret = db_pragma_int(
		 db, "PRAGMA foreign_keys", &out->foreign_keys, err)) < 0 ||
	    (ret = db_pragma_int(
		 db, "PRAGMA user_version", &out->user_version, err)) < 0 ||
	    (ret = db_pragma_int(
		 db, "PRAGMA busy_timeout", &out->busy_timeout_ms, err)) < 0)
		return ret;
	return 0;
}

/*
 * Batches
 */

static void
db_read_batch(sqlite3_stmt *st, struct batch_row *out)
{
	memset(out, 0, sizeof(*out));
	out->id = sqlite3_column_int64(st, 0);
	out->created_ms = col_int(st, 1, 0);
	out->finished_ms = col_int(st, 2, 0);
	col_copy(st, 3, out->status, sizeof(out->status));
}

static int
db_batch_one(struct db *db, enum db_sql id, struct batch_row *out, int *found,
    struct sc_err *err)
{
	sqlite3_stmt *st = NULL;
	int rc, ret;

	*found = 0;
	if ((ret = db_prep(db, &st, id, err)) < 0)
		goto out;
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		db_read_batch(st, out);
		*found = 1;
	} else if (rc != SQLITE_DONE) {
		ret = db_fail(db, err, "cannot read batches");
	}
out:
	db_done(st);
	return ret;
}

int
db_batch_current(
    struct db *db, struct batch_row *out, int *found, struct sc_err *err)
{
	return db_batch_one(db, SQL_BATCH_CURRENT, out, found, err);
}

int
db_batch_latest(
    struct db *db, struct batch_row *out, int *found, struct sc_err *err)
{
	return db_batch_one(db, SQL_BATCH_LATEST, out, found, err);
}

int
db_batch_create(
    struct db *db, int64_t *out_id, int64_t now_ms, struct sc_err *err)
{
	sqlite3_stmt *st = NULL;
	struct db_bind b = {0};
	int ret;

	*out_id = 0;
	if ((ret = db_prep(db, &st, SQL_BATCH_CREATE, err)) < 0)
		goto out;
	b.st = st;
	bind_int(&b, now_ms);
	if ((ret = db_bind_check(db, &b, err)) < 0 ||
	    (ret = db_step_done(db, st, err, "cannot create a batch")) < 0)
		goto out;
	*out_id = sqlite3_last_insert_rowid(db->h);
out:
	db_done(st);
	return ret;
}

int
db_batch_set_status(struct db *db, int64_t id, const char *status,
    int64_t now_ms, struct sc_err *err)
{
	sqlite3_stmt *st = NULL;
	struct db_bind b = {0};
	bool running;
	int ret;

	if (status == NULL ||
	    (strcmp(status, "running") != 0 &&
		strcmp(status, "finished") != 0 &&
		strcmp(status, "stopped") != 0))
		return err_set(err, SC_ESOFTWARE, "unknown batch status '%s'",
		    status == NULL ? "(null)" : status);
	running = strcmp(status, "running") == 0;
	if ((ret = db_tx_begin(db, err)) < 0)
		return ret;
	if ((ret = db_prep(db, &st, SQL_BATCH_SET_STATUS, err)) < 0)
		goto out;
	b.st = st;
	bind_str(&b, status);
	bind_int_or_null(&b, running ? 0 : now_ms, 0);
	bind_int(&b, id);
	if ((ret = db_bind_check(db, &b, err)) < 0 ||
	    (ret = db_step_done(db, st, err,
		 "cannot set the status of "
		 "batch %lld",
		 (long long)id)) < 0)
		goto out;
	if (sqlite3_changes(db->h) == 0) {
		ret = err_set(
		    err, SC_EIO, "%s: no batch %lld", db->path, (long long)id);
		goto out;
	}
	db_done(st);
	st = NULL;
	if ((ret = db_seq_bump(db, err)) < 0)
		goto out;
	ret = db_tx_commit(db, err);
out:
	db_done(st);
	if (ret < 0)
		db_tx_rollback(db);
	return ret;
}

int
db_batch_story_ids(
    struct db *db, char **out_json, int64_t id, struct sc_err *err)
{
	sqlite3_stmt *st = NULL;
	struct db_bind b = {0};
	int rc, ret;

	*out_json = NULL;
	if ((ret = db_prep(db, &st, SQL_BATCH_STORY_IDS, err)) < 0)
		goto out;
	b.st = st;
	bind_int(&b, id);
	if ((ret = db_bind_check(db, &b, err)) < 0)
		goto out;
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		if ((*out_json = col_dup(st, 0)) == NULL)
			ret = db_oom(db, err);
	} else if (rc != SQLITE_DONE) {
		ret = db_fail(db, err, "cannot read batch %lld", (long long)id);
	}
out:
	db_done(st);
	return ret;
}

/* Double *arr (of elem-sized items) when n items fill it. */
static int
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

/*
 * Stories
 */

static int
db_story_check(struct db *db, const struct story_row *s, struct sc_err *err)
{
	if ((int)s->status < 0 || s->status >= STATUS__COUNT ||
	    (int)s->last_outcome < 0 || s->last_outcome >= OUTCOME__COUNT)
		return err_set(err, SC_ESOFTWARE,
		    "%s: story %.128s: status or outcome out of range",
		    db->path, s->id);
	return 0;
}

/* The columns of STORY_MUT_COLS. */
static void
db_bind_story(struct db_bind *b, const struct story_row *s)
{
	bind_text(b, s->file, sizeof(s->file));
	bind_int(b, s->position);
	bind_str(b, status_name(s->status));
	bind_text(b, s->reason, sizeof(s->reason));
	bind_int(b, s->tasks_completed);
	bind_int(b, s->tasks_total);
	bind_int(b, s->attempts);
	bind_text(b, s->last_agent, sizeof(s->last_agent));
	if (s->last_outcome == OUTCOME_NONE)
		bind_null(b);
	else
		bind_str(b, outcome_name(s->last_outcome));
	bind_int_or_null(b, s->updated_ms, 0);
	bind_double(b, s->cost_usd);
	bind_text(b, s->branch, sizeof(s->branch));
	bind_int(b, s->seq_base);
	bind_int(b, s->attempt_base);
	bind_text(b, s->base_commit, sizeof(s->base_commit));
	bind_int(b, s->subtasks_completed);
	bind_int(b, s->subtasks_total);
}

/* A row of STORY_COLS. */
static int
db_read_story(
    struct db *db, sqlite3_stmt *st, struct story_row *out, struct sc_err *err)
{
	const char *status, *outcome;

	memset(out, 0, sizeof(*out));
	out->batch_id = sqlite3_column_int64(st, 0);
	col_copy(st, 1, out->id, sizeof(out->id));
	col_copy(st, 2, out->file, sizeof(out->file));
	out->position = (int)sqlite3_column_int64(st, 3);
	status = (const char *)sqlite3_column_text(st, 4);
	if (status_parse(&out->status, status) < 0)
		return err_set(err, SC_EIO, "%s: story %s: unknown status '%s'",
		    db->path, out->id, status == NULL ? "" : status);
	col_copy(st, 5, out->reason, sizeof(out->reason));
	out->tasks_completed = (int)sqlite3_column_int64(st, 6);
	out->tasks_total = (int)sqlite3_column_int64(st, 7);
	out->attempts = (int)sqlite3_column_int64(st, 8);
	col_copy(st, 9, out->last_agent, sizeof(out->last_agent));
	outcome = (const char *)sqlite3_column_text(st, 10);
	if (outcome != NULL && outcome_parse(&out->last_outcome, outcome) < 0)
		return err_set(err, SC_EIO,
		    "%s: story %s: unknown outcome '%s'", db->path, out->id,
		    outcome);
	out->updated_ms = col_int(st, 11, 0);
	out->cost_usd = sqlite3_column_double(st, 12);
	col_copy(st, 13, out->branch, sizeof(out->branch));
	out->seq_base = (int)sqlite3_column_int64(st, 14);
	out->attempt_base = (int)sqlite3_column_int64(st, 15);
	col_copy(st, 16, out->base_commit, sizeof(out->base_commit));
	out->subtasks_completed = (int)sqlite3_column_int64(st, 17);
	out->subtasks_total = (int)sqlite3_column_int64(st, 18);
	return 0;
}

int
db_story_add(struct db *db, const struct story_row *s, struct sc_err *err)
{
	sqlite3_stmt *st = NULL;
	struct db_bind b = {0};
	int ret;

	if ((ret = db_story_check(db, s, err)) < 0)
		return ret;
	if ((ret = db_tx_begin(db, err)) < 0)
		return ret;
	if ((ret = db_prep(db, &st, SQL_STORY_ADD, err)) < 0)
		goto out;
	b.st = st;
	bind_int(&b, s->batch_id);
	bind_text(&b, s->id, sizeof(s->id));
	db_bind_story(&b, s);
	if ((ret = db_bind_check(db, &b, err)) < 0 ||
	    (ret = db_step_done(db, st, err,
		 "cannot add story %.128s to "
		 "batch %lld",
		 s->id, (long long)s->batch_id)) < 0)
		goto out;
	if (sqlite3_changes(db->h) == 0)
		goto commit; /* already there: keep it as it is */
	db_done(st);
	if ((ret = db_prep(db, &st, SQL_BATCH_APPEND_STORY, err)) < 0)
		goto out;
	b = (struct db_bind){.st = st};
	bind_text(&b, s->id, sizeof(s->id));
	bind_int(&b, s->batch_id);
	if ((ret = db_bind_check(db, &b, err)) < 0 ||
	    (ret = db_step_done(db, st, err,
		 "cannot list story %.128s in "
		 "batch %lld",
		 s->id, (long long)s->batch_id)) < 0)
		goto out;
	db_done(st);
	st = NULL;
	if ((ret = db_seq_bump(db, err)) < 0)
		goto out;
commit:
	ret = db_tx_commit(db, err);
out:
	db_done(st);
	if (ret < 0)
		db_tx_rollback(db);
	return ret;
}

int
db_story_get(struct db *db, struct story_row *out, int *found, int64_t batch_id,
    const char *id, struct sc_err *err)
{
	sqlite3_stmt *st = NULL;
	struct db_bind b = {0};
	int rc, ret;

	*found = 0;
	if ((ret = db_prep(db, &st, SQL_STORY_GET, err)) < 0)
		goto out;
	b.st = st;
	bind_int(&b, batch_id);
	bind_str(&b, id);
	if ((ret = db_bind_check(db, &b, err)) < 0)
		goto out;
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		if ((ret = db_read_story(db, st, out, err)) == 0)
			*found = 1;
	} else if (rc != SQLITE_DONE) {
		ret = db_fail(db, err, "cannot read story %s", id);
	}
out:
	db_done(st);
	return ret;
}

/* The UPDATE alone, for use inside a transaction. */
static int
db_story_write(struct db *db, const struct story_row *s, struct sc_err *err)
{
	sqlite3_stmt *st = NULL;
	struct db_bind b = {0};
	int ret;

	if ((ret = db_story_check(db, s, err)) < 0)
		return ret;
	if ((ret = db_prep(db, &st, SQL_STORY_UPDATE, err)) < 0)
		goto out;
	b.st = st;
	db_bind_story(&b, s);
	bind_int(&b, s->batch_id);
	bind_text(&b, s->id, sizeof(s->id));
	if ((ret = db_bind_check(db, &b, err)) < 0 ||
	    (ret = db_step_done(
		 db, st, err, "cannot update story %.128s", s->id)) < 0)
		goto out;
	if (sqlite3_changes(db->h) == 0)
		ret = err_set(err, SC_EIO, "%s: no story %.128s in batch %lld",
		    db->path, s->id, (long long)s->batch_id);
out:
	db_done(st);
	return ret;
}

int
db_story_update(struct db *db, const struct story_row *s, struct sc_err *err)
{
	int ret;

	if ((ret = db_tx_begin(db, err)) < 0)
		return ret;
	if ((ret = db_story_write(db, s, err)) < 0 ||
	    (ret = db_seq_bump(db, err)) < 0)
		goto out;
	ret = db_tx_commit(db, err);
out:
	if (ret < 0)
		db_tx_rollback(db);
	return ret;
}

/* Step the bound statement st over story rows into a malloc'd array. */
static int
db_story_rows(struct db *db, sqlite3_stmt *st, struct story_row **out,
    size_t *n, int64_t batch_id, struct sc_err *err)
{
	struct story_row *rows = NULL;
	size_t count = 0, alloc = 0;
	int rc, ret = 0;

	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (db_grow((void **)&rows, &alloc, count, sizeof(*rows)) < 0) {
			ret = db_oom(db, err);
			goto out;
		}
		if ((ret = db_read_story(db, st, &rows[count], err)) < 0)
			goto out;
		count++;
	}
	if (rc != SQLITE_DONE) {
		ret = db_fail(db, err, "cannot list the stories of batch %lld",
		    (long long)batch_id);
		goto out;
	}
	*out = rows;
	*n = count;
	rows = NULL;
out:
	free(rows);
	return ret;
}

int
db_story_range(struct db *db, struct story_row **out, size_t *n,
    int64_t batch_id, int from, int count, struct sc_err *err)
{
	sqlite3_stmt *st = NULL;
	struct db_bind b = {0};
	int ret;

	*out = NULL;
	*n = 0;
	if ((ret = db_prep(db, &st, SQL_STORY_RANGE, err)) < 0)
		goto out;
	b.st = st;
	bind_int(&b, batch_id);
	bind_int(&b, from);
	bind_int(&b, (int64_t)from + count);
	if ((ret = db_bind_check(db, &b, err)) == 0)
		ret = db_story_rows(db, st, out, n, batch_id, err);
out:
	db_done(st);
	return ret;
}

/* Append the column's text and its NUL to the block; its offset. */
static int
db_text_put(char **block, size_t *used, size_t *alloc, sqlite3_stmt *st,
    int col, size_t *off)
{
	const char *t = (const char *)sqlite3_column_text(st, col);
	size_t len = t == NULL ? 0 : (size_t)sqlite3_column_bytes(st, col);
	size_t want;
	void *p;

	if (*used + len + 1 > *alloc) {
		want = *alloc ? *alloc : 4096;
		while (want < *used + len + 1)
			want *= 2;
		if ((p = realloc(*block, want)) == NULL)
			return -1;
		*block = p;
		*alloc = want;
	}
	if (len > 0)
		memcpy(*block + *used, t, len);
	(*block)[*used + len] = '\0';
	*off = *used;
	*used += len + 1;
	return 0;
}

int
db_story_lines(struct db *db, struct story_line **out, char **text, size_t *n,
    int64_t batch_id, int from, int count, struct sc_err *err)
{
	sqlite3_stmt *st = NULL;
	struct db_bind b = {0};
	struct story_line *v = NULL;
	/* offsets into the block until it stops moving */
	size_t(*offs)[3] = NULL;
	char *block = NULL;
	const char *name;
	size_t k = 0, alloc = 0, used = 0, balloc = 0, i;
	int rc, ret;

	*out = NULL;
	*text = NULL;
	*n = 0;
	if ((ret = db_prep(db, &st, SQL_STORY_LINES, err)) < 0)
		goto out;
	b.st = st;
	bind_int(&b, batch_id);
	bind_int(&b, from);
	bind_int(&b, (int64_t)from + count);
	if ((ret = db_bind_check(db, &b, err)) < 0)
		goto out;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (k == alloc) {
			void *p1, *p2;
			alloc = alloc ? alloc * 2 : 64;
			p1 = realloc(v, alloc * sizeof(*v));
			if (p1 != NULL)
				v = p1;
			p2 = realloc(offs, alloc * sizeof(*offs));
			if (p2 != NULL)
				offs = p2;
			if (p1 == NULL || p2 == NULL) {
				ret = db_oom(db, err);
				goto out;
			}
		}
		memset(&v[k], 0, sizeof(v[k]));
		v[k].position = sqlite3_column_int(st, 1);
		name = (const char *)sqlite3_column_text(st, 2);
		if (status_parse(&v[k].status, name) < 0) {
			ret = err_set(err, SC_EIO,
			    "%s: batch %lld: unknown story status '%s'",
			    db->path, (long long)batch_id,
			    name == NULL ? "" : name);
			goto out;
		}
		v[k].attempts = sqlite3_column_int(st, 3);
		v[k].tasks_completed = sqlite3_column_int(st, 4);
		v[k].tasks_total = sqlite3_column_int(st, 5);
		v[k].subtasks_completed = sqlite3_column_int(st, 9);
		v[k].subtasks_total = sqlite3_column_int(st, 10);
		name = (const char *)sqlite3_column_text(st, 7);
		if (name != NULL &&
		    outcome_parse(&v[k].last_outcome, name) < 0) {
			ret = err_set(err, SC_EIO,
			    "%s: batch %lld: unknown outcome '%s'", db->path,
			    (long long)batch_id, name);
			goto out;
		}
		if (db_text_put(&block, &used, &balloc, st, 0, &offs[k][0]) <
			0 ||
		    db_text_put(&block, &used, &balloc, st, 6, &offs[k][1]) <
			0 ||
		    db_text_put(&block, &used, &balloc, st, 8, &offs[k][2]) <
			0) {
			ret = db_oom(db, err);
			goto out;
		}
		k++;
	}
	if (rc != SQLITE_DONE) {
		ret = db_fail(db, err, "cannot list the stories of batch %lld",
		    (long long)batch_id);
		goto out;
	}
	for (i = 0; i < k; i++) {
		v[i].id = block + offs[i][0];
		v[i].last_agent = block + offs[i][1];
		v[i].reason = block + offs[i][2];
	}
	if (k > 0) {
		*out = v;
		*text = block;
		*n = k;
		v = NULL;
		block = NULL;
	}
out:
	db_done(st);
	free(offs);
	free(v);
	free(block);
	return ret;
}

int
db_story_list(struct db *db, struct story_row **out, size_t *n,
    int64_t batch_id, const char *status_or_null, struct sc_err *err)
{
	sqlite3_stmt *st = NULL;
	struct db_bind b = {0};
	int ret;

	*out = NULL;
	*n = 0;
	if ((ret = db_prep(db, &st,
		 status_or_null == NULL ? SQL_STORY_LIST
					: SQL_STORY_LIST_STATUS,
		 err)) < 0)
		goto out;
	b.st = st;
	bind_int(&b, batch_id);
	if (status_or_null != NULL)
		bind_str(&b, status_or_null);
	if ((ret = db_bind_check(db, &b, err)) == 0)
		ret = db_story_rows(db, st, out, n, batch_id, err);
out:
	db_done(st);
	return ret;
}

int
db_status_counts(struct db *db, int counts[STATUS__COUNT], int64_t batch_id,
    struct sc_err *err)
{
	sqlite3_stmt *st = NULL;
	struct db_bind b = {0};
	enum story_status s;
	const char *name;
	int rc, ret;

	memset(counts, 0, STATUS__COUNT * sizeof(counts[0]));
	if ((ret = db_prep(db, &st, SQL_STATUS_COUNTS, err)) < 0)
		goto out;
	b.st = st;
	bind_int(&b, batch_id);
	if ((ret = db_bind_check(db, &b, err)) < 0)
		goto out;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		name = (const char *)sqlite3_column_text(st, 0);
		if (status_parse(&s, name) < 0) {
			ret = err_set(err, SC_EIO,
			    "%s: batch %lld: unknown story status '%s'",
			    db->path, (long long)batch_id,
			    name == NULL ? "" : name);
			goto out;
		}
		counts[s] = sqlite3_column_int(st, 1);
	}
	if (rc != SQLITE_DONE)
		ret = db_fail(db, err, "cannot count the stories of batch %lld",
		    (long long)batch_id);
out:
	db_done(st);
	return ret;
}

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
	bind_int(b, r->counted ? 1 : 0);
	bind_str(b, role_name(r->role));
	bind_text(b, r->agent, sizeof(r->agent));
	bind_str(b, r->argv_json);
	bind_int_or_null(b, r->pid, 0);
	bind_int_or_null(b, r->pid_start, 0);
	bind_int_or_null(b, r->controller_pid, 0);
	bind_int_or_null(b, r->started_ms, 0);
	bind_int_or_null(b, running ? 0 : r->ended_ms, 0);
	bind_int_or_null(b, r->heartbeat_ms, 0);
	bind_int_or_null(b, r->exit_code, -1);
	bind_int(b, r->signal);
	bind_str(b, outcome_name(running ? OUTCOME_NONE : r->outcome));
	if (r->error_code == ERRC_NONE)
		bind_null(b);
	else
		bind_str(b, errcode_name(r->error_code));
	bind_text(b, r->error_message, sizeof(r->error_message));
	bind_int(b, r->tasks_completed);
	bind_int(b, r->tasks_total);
	bind_text(b, r->stalled_task, sizeof(r->stalled_task));
	bind_int(b, r->delay_ms);
	bind_str(b, decision_name(r->decision));
	bind_text(b, r->reason, sizeof(r->reason));
	bind_text(b, r->log_path, sizeof(r->log_path));
	bind_double(b, r->timeout_factor > 0 ? r->timeout_factor : 1);
	bind_double(b, r->poll_factor > 0 ? r->poll_factor : 1);
	bind_double(b, r->cost_usd);
	bind_str(b, r->result_text);
	bind_text(b, r->gate, sizeof(r->gate));
	if (r->gate[0] != '\0')
		bind_int(b, r->gate_exit);
	else
		bind_null(b);
	bind_str(b, r->gate_output);
	bind_text(b, r->consensus, sizeof(r->consensus));
	bind_str(b, r->review_notes);
	bind_int(b, r->subtasks_completed);
	bind_int(b, r->subtasks_total);
	bind_text(b, r->session_id, sizeof(r->session_id));
	bind_int_or_null(b, r->next_attempt, 0);
	if (r->next_attempt > 0)
		bind_str(b, role_name(r->next_role));
	else
		bind_null(b);
	bind_int_or_null(b, r->next_attempt > 0 ? r->not_before_ms : 0, 0);
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
	col_copy(st, i++, out->story_id, sizeof(out->story_id));
	out->attempt = sqlite3_column_int(st, i++);
	out->seq = sqlite3_column_int(st, i++);
	out->counted = sqlite3_column_int(st, i++) != 0;
	role = (const char *)sqlite3_column_text(st, i++);
	col_copy(st, i++, out->agent, sizeof(out->agent));
	if (sqlite3_column_type(st, i) != SQLITE_NULL &&
	    (out->argv_json = col_dup(st, i)) == NULL)
		return db_oom(db, err);
	i++;
	out->pid = col_int(st, i++, 0);
	out->pid_start = col_int(st, i++, 0);
	out->controller_pid = col_int(st, i++, 0);
	out->started_ms = col_int(st, i++, 0);
	out->ended_ms = col_int(st, i++, 0);
	out->heartbeat_ms = col_int(st, i++, 0);
	out->exit_code = (int)col_int(st, i++, -1);
	out->signal = sqlite3_column_int(st, i++);
	outcome = (const char *)sqlite3_column_text(st, i++);
	code = (const char *)sqlite3_column_text(st, i++);
	col_copy(st, i++, out->error_message, sizeof(out->error_message));
	out->tasks_completed = sqlite3_column_int(st, i++);
	out->tasks_total = sqlite3_column_int(st, i++);
	col_copy(st, i++, out->stalled_task, sizeof(out->stalled_task));
	out->delay_ms = sqlite3_column_int64(st, i++);
	decision = (const char *)sqlite3_column_text(st, i++);
	col_copy(st, i++, out->reason, sizeof(out->reason));
	col_copy(st, i++, out->log_path, sizeof(out->log_path));
	out->timeout_factor = sqlite3_column_double(st, i++);
	out->poll_factor = sqlite3_column_double(st, i++);
	out->cost_usd = sqlite3_column_double(st, i++);
	if (sqlite3_column_type(st, i) != SQLITE_NULL &&
	    (out->result_text = col_dup(st, i)) == NULL)
		return db_oom(db, err);
	i++;
	col_copy(st, i++, out->gate, sizeof(out->gate));
	out->gate_exit = (int)col_int(st, i++, -1);
	if (sqlite3_column_type(st, i) != SQLITE_NULL &&
	    (out->gate_output = col_dup(st, i)) == NULL)
		return db_oom(db, err);
	i++;
	col_copy(st, i++, out->consensus, sizeof(out->consensus));
	if (sqlite3_column_type(st, i) != SQLITE_NULL &&
	    (out->review_notes = col_dup(st, i)) == NULL)
		return db_oom(db, err);
	i++;
	out->subtasks_completed = sqlite3_column_int(st, i++);
	out->subtasks_total = sqlite3_column_int(st, i++);
	col_copy(st, i++, out->session_id, sizeof(out->session_id));
	out->next_attempt = (int)col_int(st, i++, 0);
	next_role = (const char *)sqlite3_column_text(st, i++);
	out->not_before_ms = col_int(st, i++, 0);

	/* the running outcome's name is not a parseable outcome */
	if (outcome != NULL && strcmp(outcome, outcome_name(OUTCOME_NONE)) == 0)
		out->outcome = OUTCOME_NONE;
	else if (outcome_parse(&out->outcome, outcome) < 0)
		goto bad;
	if (code != NULL && errcode_parse(&out->error_code, code) < 0)
		goto bad;
	if (role_parse(&out->role, role) < 0 ||
	    decision_parse(&out->decision, decision) < 0)
		goto bad;
	if (next_role != NULL && role_parse(&out->next_role, next_role) < 0)
		goto bad;
	return 0;
bad:
	return err_set(err, SC_EIO,
	    "%s: attempt row %lld: unknown role, outcome, error code or "
	    "decision name",
	    db->path, (long long)out->id);
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
	bind_int(&b, r->batch_id);
	bind_text(&b, r->story_id, sizeof(r->story_id));
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
	bind_int(&b, r->batch_id);
	bind_text(&b, r->story_id, sizeof(r->story_id));
	bind_int(&b, r->attempt);
	bind_int(&b, seq);
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
	bind_int_or_null(&b, pid, 0);
	bind_int_or_null(&b, pid_start, 0);
	bind_int(&b, attempt_id);
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
    const struct db_progress *p, struct sc_err *err)
{
	sqlite3_stmt *st = NULL;
	struct db_bind b = {0};
	int ret;

	if ((ret = db_prep(db, &st, SQL_ATTEMPT_HEARTBEAT, err)) < 0)
		goto out;
	b.st = st;
	bind_int_or_null(&b, now_ms, 0);
	bind_int(&b, p->tasks_completed);
	bind_int(&b, p->tasks_total);
	bind_int(&b, p->subtasks_completed);
	bind_int(&b, p->subtasks_total);
	bind_int(&b, attempt_id);
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
    const struct db_progress *p, struct sc_err *err)
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
	bind_int(&b, batch_id);
	bind_int(&b, ts_ms);
	bind_str_or_null(&b, story_id, story_id == NULL ? 0 : strlen(story_id));
	bind_str(&b, kind);
	bind_str(&b, msg == NULL ? "" : msg);
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

int
db_attempt_finish(struct db *db, const struct attempt_row *r,
    const struct story_row *s, const char *event_kind, const char *event_msg,
    struct sc_err *err)
{
	sqlite3_stmt *st = NULL;
	struct db_bind b = {0};
	int64_t ts;
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
	if ((ret = db_prep(db, &st, SQL_ATTEMPT_FINISH, err)) < 0)
		goto out;
	b.st = st;
	db_bind_attempt(&b, r, false);
	bind_int(&b, r->id);
	if ((ret = db_bind_check(db, &b, err)) < 0 ||
	    (ret = db_step_done(db, st, err,
		 "cannot record the end of "
		 "attempt %d of story %.128s",
		 r->attempt, r->story_id)) < 0)
		goto out;
	if (sqlite3_changes(db->h) == 0) {
		/* ended already (or never begun): writing it again could
		 * count it twice */
		ret = err_set(err, SC_EIO,
		    "%s: attempt %d of story %.128s "
		    "(row %lld) is not running",
		    db->path, r->attempt, r->story_id, (long long)r->id);
		goto out;
	}
	db_done(st);
	st = NULL;
	if (s != NULL && (ret = db_story_write(db, s, err)) < 0)
		goto out;
	if (event_kind != NULL) {
		ts = r->ended_ms != 0 ? r->ended_ms
		    : s != NULL	      ? s->updated_ms
				      : 0;
		if ((ret = db_event_insert(db, r->batch_id, ts, r->story_id,
			 event_kind, event_msg, err)) < 0)
			goto out;
	}
	if ((ret = db_seq_bump(db, err)) < 0)
		goto out;
	ret = db_tx_commit(db, err);
	if (ret == 0 && lazy)
		db->unsynced = 1;
out:
	db_done(st);
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
		bind_int(&b, batch_id);
		bind_str(&b, story_id);
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
	bind_int(&b, batch_id);
	bind_str(&b, story_id == NULL ? "" : story_id);
	bind_int(&b, after_seq);
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

void
event_rows_free(struct event_row *rows, size_t n)
{
	size_t i;

	if (rows == NULL)
		return;
	for (i = 0; i < n; i++)
		free(rows[i].message);
	free(rows);
}

int
db_events_list(struct db *db, struct event_row **out, size_t *n,
    int64_t batch_id, int64_t after_id, struct sc_err *err)
{
	sqlite3_stmt *st = NULL;
	struct db_bind b = {0};
	struct event_row *rows = NULL, *e;
	size_t count = 0, alloc = 0;
	int rc, ret;

	*out = NULL;
	*n = 0;
	if ((ret = db_prep(db, &st,
		 batch_id > 0 ? SQL_EVENTS_LIST : SQL_EVENTS_LIST_ALL, err)) <
	    0)
		goto out;
	b.st = st;
	if (batch_id > 0)
		bind_int(&b, batch_id);
	bind_int(&b, after_id);
	if ((ret = db_bind_check(db, &b, err)) < 0)
		goto out;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (db_grow((void **)&rows, &alloc, count, sizeof(*rows)) < 0) {
			ret = db_oom(db, err);
			goto out;
		}
		e = &rows[count++];
		memset(e, 0, sizeof(*e));
		e->id = sqlite3_column_int64(st, 0);
		e->batch_id = sqlite3_column_int64(st, 1);
		e->ts_ms = sqlite3_column_int64(st, 2);
		col_copy(st, 3, e->story_id, sizeof(e->story_id));
		col_copy(st, 4, e->kind, sizeof(e->kind));
		if ((e->message = col_dup(st, 5)) == NULL) {
			ret = db_oom(db, err);
			goto out;
		}
	}
	if (rc != SQLITE_DONE) {
		ret = db_fail(db, err, "cannot read events");
		goto out;
	}
	*out = rows;
	*n = count;
	rows = NULL;
out:
	db_done(st);
	event_rows_free(rows, count);
	return ret;
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
	bind_str(&b, key);
	if ((ret = db_bind_check(db, &b, err)) < 0)
		goto out;
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		if ((*out_value = col_dup(st, 0)) == NULL)
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
	bind_str(&b, key);
	bind_str(&b, value == NULL ? "" : value);
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
	bind_str(&b, DB_META_DECISION_SEQ);
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

int
db_batch_spend(struct db *db, double *out, int64_t batch_id, struct sc_err *err)
{
	sqlite3_stmt *st = NULL;
	struct db_bind b = {0};
	int rc, ret;

	*out = 0;
	if ((ret = db_prep(db, &st, SQL_BATCH_SPEND, err)) < 0)
		goto out;
	b.st = st;
	bind_int(&b, batch_id);
	if ((ret = db_bind_check(db, &b, err)) < 0)
		goto out;
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		*out = sqlite3_column_double(st, 0);
	else if (rc != SQLITE_DONE)
		ret = db_fail(db, err, "cannot sum the spend of batch %lld",
		    (long long)batch_id);
out:
	db_done(st);
	return ret;
}

int
db_integrity_check(struct db *db, struct sc_err *err)
{
	sqlite3_stmt *st = NULL;
	const char *msg, *child, *parent;
	int rc, ret = 0;

	if (sqlite3_prepare_v2(
		db->h, "PRAGMA integrity_check", -1, &st, NULL) != SQLITE_OK ||
	    sqlite3_step(st) != SQLITE_ROW) {
		ret = db_fail(db, err, "cannot check integrity");
		goto out;
	}
	msg = (const char *)sqlite3_column_text(st, 0);
	if (msg == NULL || strcmp(msg, "ok") != 0) {
		ret = err_set(err, SC_EIO, "%s: integrity check failed: %s",
		    db->path, msg == NULL ? "?" : msg);
		goto out;
	}
	sqlite3_finalize(st);
	st = NULL;
	/* columns: table, rowid, parent table, foreign key index */
	if (sqlite3_prepare_v2(db->h, "PRAGMA foreign_key_check", -1, &st,
		NULL) != SQLITE_OK) {
		ret = db_fail(db, err, "cannot check foreign keys");
		goto out;
	}
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		child = (const char *)sqlite3_column_text(st, 0);
		parent = (const char *)sqlite3_column_text(st, 2);
		ret = err_set(err, SC_EIO,
		    "%s: integrity check failed: row "
		    "%lld of %s refers to a missing row of %s",
		    db->path, (long long)sqlite3_column_int64(st, 1),
		    child == NULL ? "?" : child, parent == NULL ? "?" : parent);
	} else if (rc != SQLITE_DONE)
		ret = db_fail(db, err, "cannot check foreign keys");
out:
	sqlite3_finalize(st);
	return ret;
}
