/*
 * db.h - the SQLite state database (docs/state.md): batches, stories, every
 * attempt, the event log and a small key/value table.
 *
 * The database is the source of truth; the state branch is rebuilt from
 * it.  docs/state.md describes the schema and the durability rules.
 *
 * Contract:
 *  - Every function that can fail returns 0 or a negative SC_E* code and
 *    fills err.  SQLite and file failures are SC_EIO with a message that
 *    names the database file and carries sqlite's own message; a caller
 *    bug (an unknown batch status, finishing an attempt without an
 *    outcome) is SC_ESOFTWARE.
 *  - Every write function is one transaction of its own (committed with
 *    synchronous=FULL before it returns), unless the caller has opened
 *    one with db_tx_begin(): then it nests as a savepoint and is durable
 *    only when the outermost db_tx_commit() returns.
 *  - Enums are stored as their model.h names, so the file reads well in
 *    the sqlite3 shell.  Times are epoch milliseconds; 0 means unknown and
 *    is stored as NULL (so are pid 0 and exit_code -1).
 *  - Strings in the fixed-size fields are truncated to fit when read.
 *  - A struct db is for one thread.
 *  - Redacting secrets is the caller's job: what is given is written.
 */
#ifndef STORYCTL_DB_H
#define STORYCTL_DB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/err.h"
#include "common/model.h"

/* The schema version this code writes (PRAGMA user_version). */
#define DB_SCHEMA_VERSION 9
/* How long a statement waits for another connection's write lock. */
#define DB_BUSY_TIMEOUT_MS 10000
/* The meta key of the committed-decision counter (db_decision_seq). */
#define DB_META_DECISION_SEQ "decision_seq"

struct db;

struct attempt_row {
	int64_t id; /* rowid, set by db_attempt_begin */
	int64_t batch_id;
	char story_id[128];
	int attempt; /* number, 1-based */
	int seq; /* the story's row sequence, set by db_attempt_begin */
	bool counted; /* false for usage_limit / interrupted reruns */
	enum role role;
	char agent[64];
	char *argv_json; /* JSON array of the expanded argv; owned (malloc) */
	int64_t pid; /* agent process group id; 0 unknown */
	int64_t pid_start; /* its start time in clock ticks since boot
			    * (/proc/PID/stat), to tell it from a reused
			    * pid; 0 unknown */
	int64_t controller_pid;
	int64_t started_ms, ended_ms, heartbeat_ms; /* epoch ms; 0 unknown */
	int exit_code; /* -1 unknown or killed by signal */
	int signal; /* 0 none */
	enum outcome outcome; /* OUTCOME_NONE while running */
	enum error_code error_code;
	char error_message[512];
	/* at the attempt's end (while running: its heartbeat's) */
	struct task_counts counts;
	char stalled_task[256];
	int64_t delay_ms; /* delay set before the next attempt */
	enum decision decision;
	char reason[512];
	char log_path[512];
	/* 1 unless D9/D10; a value <= 0 is stored as 1 */
	double timeout_factor, poll_factor;
	double cost_usd;
	char *result_text; /* the agent's final message, bounded and redacted;
			    * owned (malloc), NULL when unknown */
	char gate[64]; /* the gate that failed ("review" for the panel),
			    * "" when none did */
	int gate_exit; /* its exit status, -1 when killed or unknown */
	char *gate_output; /* its output tail, bounded, redacted; owned */
	char consensus[16]; /* the review panel's "k/n", "" when none ran */
	char *review_notes; /* the reviewers' reasons when they did not all
			    * approve; owned */
	char session_id[128]; /* the agent's own session id, "" unknown */
	/* The decision's next attempt, stored with the decision
	 * (docs/retry-strategy.md): its absolute number (0: the decision
	 * leaves none, or the row predates schema 4), its agent, and the
	 * earliest time it may start (ended_ms + delay_ms). */
	int next_attempt;
	enum role next_role;
	int64_t not_before_ms;
};

/* Free what r owns (argv_json, result_text, gate_output, review_notes)
 * and set the pointers to NULL; the struct is the caller's.  NULL ok. */
void attempt_row_release(struct attempt_row *r);
/* Release every row, then free the array.  NULL ok. */
void attempt_rows_free(struct attempt_row *rows, size_t n);

/* The longest story file path (relative to the root) the record holds,
 * with its NUL: config_load() refuses a longer one rather than have it
 * cut here (docs/configuration.md#stories). */
#define DB_FILE_MAX 512

struct story_row {
	int64_t batch_id;
	char id[128];
	char file[DB_FILE_MAX];
	int position; /* config order; lists sort by it */
	enum story_status status;
	char reason[512];
	struct task_counts counts; /* at the last reading */
	int attempts; /* counted attempts so far */
	char last_agent[64];
	enum outcome last_outcome; /* OUTCOME_NONE: no attempt ended yet */
	int64_t updated_ms;
	double cost_usd;
	char branch[256];
	/* requeue: the strategy sees only rows with seq > seq_base, and
	 * numbers them from attempt_base (the counted attempts before) */
	int seq_base;
	int attempt_base;
	/* git.commit_work: HEAD when the story started, so that a deferred
	 * story's tree can be put back (also after a crash) */
	char base_commit[48];
};

struct batch_row {
	int64_t id;
	int64_t created_ms, finished_ms; /* finished_ms 0 while running */
	char status[16]; /* "running", "finished", "stopped" */
};

struct event_row {
	int64_t id;
	int64_t batch_id;
	int64_t ts_ms;
	char story_id[128]; /* "" when the event is not about one story */
	char kind[32];
	char *message; /* owned (malloc), never NULL in a listed row */
};

/* What the connection runs with (for tests and diagnostics). */
struct db_info {
	char journal_mode[16]; /* "wal" */
	int synchronous; /* 2 = FULL */
	int foreign_keys; /* 1 */
	int user_version; /* DB_SCHEMA_VERSION */
	int busy_timeout_ms;
};

/*
 * Open (creating as needed) <state_dir>/state.db.  The state dir is
 * created with mode 0700 (missing parents 0755 & ~umask) and tightened to
 * its owner if it exists with group or other bits; state.db is created
 * 0600 and tightened likewise.  The connection uses WAL, synchronous=FULL,
 * foreign_keys=ON and DB_BUSY_TIMEOUT_MS; pending migrations are applied
 * in one transaction.  A database written by a newer schema is refused.
 * On success *out is the caller's, to db_close().
 */
int db_open(struct db **out, const char *state_dir, struct sc_err *err);
/*
 * Open <state_dir>/state.db for reading only (status, list, show, log):
 * nothing is created, tightened or migrated, and the connection is
 * query_only (no statement can write); it works on a read-only file
 * system (there the file is opened read-only with SQLite's immutable
 * flag: nobody can be writing it).  db_open() runs PRAGMA quick_check
 * and refuses a damaged database; a reader meets damage as SQLITE_CORRUPT
 * and gets the same message (docs/state.md#opening).  A database of
 * another schema version is refused with what to do.
 */
int db_open_readonly(
    struct db **out, const char *state_dir, struct sc_err *err);
/* Finalise everything and close; an open db_tx is rolled back.  NULL ok. */
void db_close(struct db *db);
/* The database file's path (for messages); owned by db. */
const char *db_path(const struct db *db);

/* Create the state dir (0700) or tighten an existing one; used by
 * db_open() and lock_acquire().  SC_EIO naming the dir on failure. */
int db_dir_prepare(const char *state_dir, struct sc_err *err);

int db_info(struct db *db, struct db_info *out, struct sc_err *err);

/*
 * Group several writes into one transaction (BEGIN IMMEDIATE at the
 * outermost level, a savepoint inside another).  Every begin needs one
 * commit or rollback.  A failed commit leaves the transaction open: roll
 * it back.
 */
int db_tx_begin(struct db *db, struct sc_err *err);
int db_tx_commit(struct db *db, struct sc_err *err);
void db_tx_rollback(struct db *db);

/* Batches.  *found is 1 when *out was filled, 0 when there is none. */
/* The newest batch that is not finished (running or stopped). */
int db_batch_current(
    struct db *db, struct batch_row *out, int *found, struct sc_err *err);
/* The newest batch of any status. */
int db_batch_latest(
    struct db *db, struct batch_row *out, int *found, struct sc_err *err);
/* A new running batch; ids are never reused. */
int db_batch_create(
    struct db *db, int64_t *out_id, int64_t now_ms, struct sc_err *err);
/* status is "running" (finished_ms cleared), "finished" or "stopped"
 * (finished_ms = now_ms); anything else is SC_ESOFTWARE, an unknown id
 * SC_EIO. */
int db_batch_set_status(struct db *db, int64_t id, const char *status,
    int64_t now_ms, struct sc_err *err);
/* The batch's story ids in the order they were added, as a JSON array
 * text; *out_json is the caller's to free (NULL when there is no such
 * batch). */
int db_batch_story_ids(
    struct db *db, char **out_json, int64_t id, struct sc_err *err);

/* Stories.  The batch must exist. */
/* Insert s, or keep the existing row of (s->batch_id, s->id) unchanged.
 * A new story is appended to the batch's story id list. */
int db_story_add(struct db *db, const struct story_row *s, struct sc_err *err);
int db_story_get(struct db *db, struct story_row *out, int *found,
    int64_t batch_id, const char *id, struct sc_err *err);
/* Overwrite every field of the existing row (SC_EIO if there is none). */
int db_story_update(
    struct db *db, const struct story_row *s, struct sc_err *err);
/* The batch's stories by position, all or those with one status name.
 * *out (malloc, NULL when *n == 0) is the caller's to free(). */
int db_story_list(struct db *db, struct story_row **out, size_t *n,
    int64_t batch_id, const char *status_or_null, struct sc_err *err);
/* counts[s] = the number of the batch's stories with status s. */
/* The stories at positions [from, from + count), by position. */
int db_story_range(struct db *db, struct story_row **out, size_t *n,
    int64_t batch_id, int from, int count, struct sc_err *err);
int db_status_counts(struct db *db, int counts[STATUS__COUNT], int64_t batch_id,
    struct sc_err *err);

/* One row of the progress table: only what it shows.  The strings point
 * into the text block of the db_story_lines() call that made it. */
struct story_line {
	const char *id;
	int position;
	enum story_status status;
	int attempts;
	struct task_counts counts;
	const char *last_agent;
	enum outcome last_outcome;
	const char *reason;
};
/*
 * The table rows of the stories at positions [from, from + count), by
 * position: the light read a decision's commit makes of its page (a
 * story_row is 1.5 kB; a line is the few columns the table shows).
 * *out and *text (malloc, NULL when *n == 0) are the caller's to free().
 */
int db_story_lines(struct db *db, struct story_line **out, char **text,
    size_t *n, int64_t batch_id, int from, int count, struct sc_err *err);
/* *out = the sum of the batch's stories' cost_usd (0 when none). */
int db_batch_spend(
    struct db *db, double *out, int64_t batch_id, struct sc_err *err);

/*
 * Attempts.  The story must exist in the batch.
 * Insert r as running (outcome NONE whatever r->outcome says, no end
 * time) and COMMIT durably before the agent starts; sets r->id and
 * r->seq (one more than the story's last row in the batch).  A rerun of
 * an uncounted attempt is a new row with the same attempt number.
 */
int db_attempt_begin(struct db *db, struct attempt_row *r, struct sc_err *err);
/* Record the agent's process group and its start time (SC_EIO if no
 * such attempt). */
int db_attempt_set_pid(struct db *db, int64_t attempt_id, int64_t pid,
    int64_t pid_start, struct sc_err *err);
/* The story file's progress as a heartbeat records it: the tasks and the
 * subtasks under them (docs/stories.md). */
/* Liveness and live progress of a running attempt (SC_EIO if the attempt
 * is unknown or has ended). */
int db_attempt_heartbeat(struct db *db, int64_t attempt_id, int64_t now_ms,
    const struct task_counts *p, struct sc_err *err);
/*
 * The per-decision durable write, in ONE transaction: the ended attempt r
 * (found by r->id; every field but the keys is rewritten), the story row
 * s (skipped when NULL) and an event (kind, message; skipped when kind is
 * NULL; timed r->ended_ms, else s->updated_ms).  r->outcome must not be
 * OUTCOME_NONE (SC_ESOFTWARE).  An attempt that has already ended is not
 * rewritten (SC_EIO), so nothing is counted twice; on any failure nothing
 * of the three is written.  Bumps db_decision_seq().
 */
int db_attempt_finish(struct db *db, const struct attempt_row *r,
    const struct story_row *s, const char *event_kind, const char *event_msg,
    struct sc_err *err);
/* One story's rows by seq.  *out is the caller's: attempt_rows_free(). */
int db_attempts_for_story(struct db *db, struct attempt_row **out, size_t *n,
    int64_t batch_id, const char *story_id, struct sc_err *err);
/* The story's last row with seq > after_seq (its last counted one when
 * counted_only): one indexed row, not the history.  *found 0 when there
 * is none; *out is the caller's: attempt_row_release(). */
int db_attempt_last(struct db *db, struct attempt_row *out, int *found,
    int64_t batch_id, const char *story_id, int after_seq, bool counted_only,
    struct sc_err *err);
/* Rows still running (outcome NONE) in any batch, oldest first. */
int db_attempts_running(
    struct db *db, struct attempt_row **out, size_t *n, struct sc_err *err);

/* An attempt as the telemetry reads it (docs/stats.md): the figures'
 * columns, no text.  Times 0 unknown; outcome NONE while running. */
struct attempt_brief {
	int64_t batch_id;
	char story_id[128];
	int attempt, seq;
	bool counted;
	enum role role;
	char agent[64];
	int64_t started_ms, ended_ms;
	enum outcome outcome;
	enum error_code error_code;
	int tasks_completed, tasks_total;
	int64_t delay_ms;
	enum decision decision;
	double cost_usd;
};
/* The attempts of batch batch_id (every batch when <= 0) by batch, story
 * and seq.  *out is the caller's (free()). */
int db_attempt_briefs(struct db *db, struct attempt_brief **out, size_t *n,
    int64_t batch_id, struct sc_err *err);

/* Events.  story_id_or_null "" is the same as NULL; msg NULL is "". */
int db_event_add(struct db *db, int64_t batch_id, int64_t ts_ms,
    const char *story_id_or_null, const char *kind, const char *msg,
    struct sc_err *err);
/* The batch's events with id > after_id, oldest first; batch_id <= 0
 * lists every batch.  *out is the caller's: event_rows_free(). */
int db_events_list(struct db *db, struct event_row **out, size_t *n,
    int64_t batch_id, int64_t after_id, struct sc_err *err);
/* A page of the event log (docs/api.md#events): the events with id >
 * after_id, oldest first, of batch batch_id (<= 0: every batch) and
 * story story_id (NULL: every event), at most limit (0: all). */
struct event_query {
	int64_t after_id;
	int64_t batch_id;
	const char *story_id;
	size_t limit;
};
/* *out is the caller's: event_rows_free(). */
int db_events_page(struct db *db, struct event_row **out, size_t *n,
    const struct event_query *q, struct sc_err *err);
/* Free every message, then the array.  NULL ok. */
void event_rows_free(struct event_row *rows, size_t n);

/* The service's API keys (docs/api.md#keys): a name, the SHA-256 of the
 * key in lowercase hex (never the key), the scope, the creation time. */
#define DB_KEY_NAME_MAX 64
struct key_row {
	char name[DB_KEY_NAME_MAX];
	char sha256[65];
	bool write; /* scope write; false: read */
	int64_t created_ms;
};
/* Add k; SC_EUSAGE "a key named NAME exists" when the name is taken. */
int db_key_add(struct db *db, const struct key_row *k, struct sc_err *err);
/* Every key, by name.  *out is the caller's (free()). */
int db_key_list(
    struct db *db, struct key_row **out, size_t *n, struct sc_err *err);
/* Remove the key named name; *found 0 when there is none. */
int db_key_revoke(
    struct db *db, const char *name, int *found, struct sc_err *err);

/* Retry-policy overrides (docs/api.md#retry-policy): scope
 * DB_POLICY_BATCH or a story id; body the JSON as validated.  get: *body
 * the caller's (free()), NULL when none.  put replaces and del removes
 * (*found 0 when there was none); each is one short transaction that
 * also adds a "policy" event to batch_id when batch_id > 0. */
#define DB_POLICY_BATCH "*"
struct policy_row {
	char scope[128];
	char *body;
	int64_t created_ms;
	char key_name[DB_KEY_NAME_MAX];
};
int db_policy_get(struct db *db, struct policy_row *out, int *found,
    const char *scope, struct sc_err *err);
int db_policy_put(struct db *db, const struct policy_row *p, int64_t batch_id,
    struct sc_err *err);
int db_policy_del(struct db *db, int *found, const char *scope,
    int64_t batch_id, int64_t now_ms, struct sc_err *err);
/* The batch's and the story's override bodies in one indexed read;
 * each the caller's (free()), NULL when none. */
int db_policy_for_story(struct db *db, char **batch_body, char **story_body,
    const char *story_id, struct sc_err *err);

/* Failures recorded from outside storyctl (docs/api.md#failure-records),
 * e.g. a CI run that failed after the story was done.  A failure comes
 * after the story's attempt rows up to after_seq; it is resolved by the
 * first later attempt that succeeds. */
struct failure_row {
	int64_t id; /* rowid, set by db_failure_add */
	int64_t batch_id;
	char story_id[128];
	int after_seq; /* set by db_failure_add: the story's last row then */
	int64_t created_ms;
	char key_name[DB_KEY_NAME_MAX]; /* the key that sent it, not the key */
	char agent_id[64]; /* "" unknown */
	int attempt_number; /* 0 unknown */
	enum error_code error_code;
	char *error_message; /* owned (malloc), never NULL in a listed row */
	int64_t retry_scheduled_ms; /* 0 none */
	int http_status; /* 0 unknown */
	int exit_code; /* -1 unknown */
	int signal; /* 0 none */
	int64_t resolved_ms; /* read only: when the first successful attempt
			      * after it ended; 0 while none has */
};
/* Insert f (the story must exist in f->batch_id), setting f->id and
 * f->after_seq; one transaction (or a savepoint of the caller's) that
 * also bumps db_decision_seq(), since stories/<id>.json shows it. */
int db_failure_add(struct db *db, struct failure_row *f, struct sc_err *err);
/* The story's recorded failures, oldest first; open_only: those no
 * later attempt has resolved.  *out is the caller's:
 * failure_rows_free(). */
int db_failures_for_story(struct db *db, struct failure_row **out, size_t *n,
    int64_t batch_id, const char *story_id, bool open_only, struct sc_err *err);
/* Free every message, then the array.  NULL ok. */
void failure_rows_free(struct failure_row *rows, size_t n);

/* Controller deaths (docs/reliability.md#controller-deaths): one row per
 * attempt that start-up closed because the controller that ran it died
 * or stopped on an error.  Written before the attempt's row is closed,
 * so a start that dies in between counts the death all the same. */
/* Record that attempt attempt_id was cut short by its controller's death
 * (controller_pid, stopped: it left a stop note); a second call for the
 * same attempt changes nothing. */
int db_death_add(struct db *db, int64_t attempt_id, int64_t controller_pid,
    bool stopped, int64_t ts_ms, struct sc_err *err);
/* How many deaths were recorded for the other rows of r's story with
 * r's attempt number in r's batch (*n), and the controller pid of the
 * latest of them (*last_pid, 0 when none). */
int db_deaths_before(struct db *db, int *n, int64_t *last_pid,
    const struct attempt_row *r, struct sc_err *err);

/* A counter bumped each time a story is put back to pending
 * (controller/engine/requeue.c), by any process: a running controller that sees
 * it change reads its stories' statuses again
 * (docs/api.md#while-a-batch-runs).  0 before the first bump. */
#define DB_META_REOPEN_SEQ "reopen_seq"
int db_reopen_bump(struct db *db, struct sc_err *err);
int db_reopen_seq(struct db *db, int64_t *out, struct sc_err *err);

/* Meta key/value.  *out_value is the caller's to free(), NULL if absent. */
int db_meta_get(
    struct db *db, const char *key, char **out_value, struct sc_err *err);
int db_meta_set(
    struct db *db, const char *key, const char *value, struct sc_err *err);

/*
 * A counter that grows with every committed write the state branch shows
 * (db_attempt_finish, db_story_update, a new db_story_add,
 * db_batch_set_status, db_failure_add); it is bumped inside the same transaction.  The
 * branch syncer stores the value it has committed (in meta) and compares.
 * 0 before the first such write.
 */
int db_decision_seq(struct db *db, int64_t *out, struct sc_err *err);

/*
 * Group commit.  db_defer_sync(): the next db_attempt_finish() commits
 * with synchronous=NORMAL, i.e. without an fsync; in WAL mode it becomes
 * durable with the next FULL commit (which syncs the whole log) or with
 * db_flush().  db_unsynced() says whether such a commit is still
 * waiting; db_flush() fsyncs the write-ahead log when one is (a no-op
 * otherwise; SC_EIO naming the database when the sync fails).  The
 * caller must not show a deferred decision anywhere durable (the state
 * branch) before db_flush() or a later FULL commit.
 */
void db_defer_sync(struct db *db);
int db_unsynced(const struct db *db);
int db_flush(struct db *db, struct sc_err *err);

/* PRAGMA integrity_check says "ok" and PRAGMA foreign_key_check finds
 * nothing; otherwise SC_EIO with the first problem. */
int db_integrity_check(struct db *db, struct sc_err *err);

#endif
