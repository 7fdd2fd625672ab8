/*
 * db_int.h - what the db_*.c files share and nothing else includes: the
 * connection, the prepared statements and the small helpers that bind,
 * read and report (db.c).  The public interface is db.h.
 */
#ifndef STORYCTL_DB_INT_H
#define STORYCTL_DB_INT_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <sqlite3.h>

#include "state/db.h"

#define DB_FILE "state.db"

/* The statements, prepared once per connection (db_sql_text in db.c). */
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
	SQL_EVENTS_PAGE,
	SQL_META_GET,
	SQL_META_SET,
	SQL_SEQ_BUMP,
	/* prepared from their own file's text (db_prep_sql()): what every
	 * decision reads or writes besides the above (docs/performance.md) */
	SQL_FAILURES_FOR_STORY,
	SQL_EVIDENCE_PUT,
	SQL_EVIDENCE_FOR_STORY,
	SQL_POLICY_GET,
	SQL_POLICY_FOR_STORY,
	SQL__COUNT
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

/* Report a sqlite failure on db (its message, the file named); a damaged
 * database is reported as such (docs/state.md#opening).  Return the
 * SC_E* code. */
int db_damaged(const struct db *db, struct sc_err *err, const char *why);
int db_fail(struct db *db, struct sc_err *err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
int db_oom(struct db *db, struct sc_err *err);

/* "dir/name", malloc'd */
char *db_join(const char *dir, const char *name);

/* The prepared statement id, reset for use; db_done() resets it.
 * db_prep_sql() is the same for the ids whose text is sql, kept next to
 * the code that reads their columns; sql must be the same text at every
 * call for one id. */
int db_prep(
    struct db *db, sqlite3_stmt **out, enum db_sql id, struct sc_err *err);
int db_prep_sql(struct db *db, sqlite3_stmt **out, enum db_sql id,
    const char *sql, struct sc_err *err);
void db_done(sqlite3_stmt *st);

/* Bind the next parameter (struct db_bind); the first failure sticks and
 * db_bind_check() reports it. */
void db_bind_int(struct db_bind *b, int64_t v);
void db_bind_null(struct db_bind *b);
void db_bind_int_or_null(struct db_bind *b, int64_t v, int64_t unknown);
void db_bind_double(struct db_bind *b, double v);
void db_bind_text(struct db_bind *b, const char *s, size_t size);
void db_bind_str(struct db_bind *b, const char *s);
void db_bind_str_or_null(struct db_bind *b, const char *s, size_t size);
int db_bind_check(struct db *db, struct db_bind *b, struct sc_err *err);

/* Read column i of the current row. */
int64_t db_col_int(sqlite3_stmt *st, int i, int64_t if_null);
void db_col_copy(sqlite3_stmt *st, int i, char *dst, size_t size);
char *db_col_dup(sqlite3_stmt *st, int i);

/* Step a statement that returns no row, reporting fmt on failure. */
int db_step_done(struct db *db, sqlite3_stmt *st, struct sc_err *err,
    const char *fmt, ...) __attribute__((format(printf, 4, 5)));
int db_exec(
    struct db *db, const char *sql, struct sc_err *err, const char *what);
int db_pragma_int(struct db *db, const char *sql, int *out, struct sc_err *err);
int db_pragma_text(
    struct db *db, const char *sql, char *out, size_t size, struct sc_err *err);
int db_seq_bump(struct db *db, struct sc_err *err);

/* Double *arr (of elem-sized items) when n items fill it. */
int db_grow(void **arr, size_t *alloc, size_t n, size_t elem);

/* The story UPDATE alone, inside a caller's transaction (db_story.c). */
int db_story_write(
    struct db *db, const struct story_row *s, struct sc_err *err);

/* Evidence row e and, when event_msg is not NULL, its "evidence"
 * event, inside a caller's transaction (db_evidence.c). */
struct evidence_row;
int db_evidence_insert(struct db *db, const struct evidence_row *e,
    int64_t batch_id, const char *story_id, int64_t ts_ms,
    const char *event_msg, struct sc_err *err);

#endif
