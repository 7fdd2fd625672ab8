/* db_open.c - see db.h: the schema and its migrations, opening
 * (read-write and read-only), closing and the integrity check
 * (docs/state.md#opening). */
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "state/db_int.h"
#include "state/fsutil.h"

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
    /* 5: the service's API keys (docs/api.md#keys): only a key's
     * SHA-256, never the key itself */
    "CREATE TABLE api_keys (\n"
    "  name TEXT PRIMARY KEY,\n"
    "  sha256 TEXT NOT NULL UNIQUE,\n"
    "  scope TEXT NOT NULL CHECK (scope IN ('read', 'write')),\n"
    "  created_ms INTEGER NOT NULL\n"
    ") WITHOUT ROWID;\n"
    "PRAGMA user_version = 5;\n",
    /* 6: retry-policy overrides set over HTTP (docs/api.md#retry-policy):
     * scope '*' is the batch's, any other scope a story id; the body is
     * the validated JSON as sent, applied at each decision */
    "CREATE TABLE policy_overrides (\n"
    "  scope TEXT PRIMARY KEY,\n"
    "  body TEXT NOT NULL,\n"
    "  created_ms INTEGER NOT NULL,\n"
    "  key_name TEXT NOT NULL\n"
    ") WITHOUT ROWID;\n"
    "PRAGMA user_version = 6;\n",
    /* 7: what each attempt changed in its work tree besides the story
     * file, and its boxes' flags (docs/evidence.md, docs/state.md);
     * one row per measured attempt, in a table of its own so that the
     * attempts' columns stay as they were.  When renumbered, only the
     * user_version below changes; IF NOT EXISTS lets the tests that
     * rebuild an older schema leave the table in place. */
    "CREATE TABLE IF NOT EXISTS attempt_evidence (\n"
    "  attempt_id INTEGER PRIMARY KEY REFERENCES attempts(id),\n"
    "  measured INTEGER NOT NULL CHECK (measured IN (0, 1)),\n"
    "  not_measured TEXT,\n"
    "  base_tree TEXT,\n"
    "  files_changed INTEGER,\n"
    "  lines_added INTEGER,\n"
    "  lines_removed INTEGER,\n"
    "  files TEXT,\n"
    "  ticked INTEGER NOT NULL,\n"
    "  unticked INTEGER NOT NULL,\n"
    "  first_unticked TEXT,\n"
    "  ticked_without_change INTEGER NOT NULL\n"
    "    CHECK (ticked_without_change IN (0, 1))\n"
    ");\n"
    "PRAGMA user_version = 7;\n",
    /* 8: failures recorded from outside storyctl over HTTP
     * (docs/api.md#failure-records); after_seq places one among the
     * story's attempt rows.  IF NOT EXISTS: the migration tests take a
     * database back to an older version by dropping only what they know
     * of, and the tables of later versions stay */
    "CREATE TABLE IF NOT EXISTS external_failures (\n"
    "  id INTEGER PRIMARY KEY AUTOINCREMENT,\n"
    "  batch_id INTEGER NOT NULL,\n"
    "  story_id TEXT NOT NULL,\n"
    "  after_seq INTEGER NOT NULL,\n"
    "  created_ms INTEGER NOT NULL,\n"
    "  key_name TEXT NOT NULL,\n"
    "  agent_id TEXT,\n"
    "  attempt_number INTEGER,\n"
    "  error_code TEXT NOT NULL,\n"
    "  error_message TEXT NOT NULL DEFAULT '',\n"
    "  retry_scheduled_ms INTEGER,\n"
    "  http_status INTEGER,\n"
    "  exit_code INTEGER,\n"
    "  signal INTEGER,\n"
    "  FOREIGN KEY (batch_id, story_id) REFERENCES stories (batch_id, id)\n"
    ");\n"
    "CREATE INDEX IF NOT EXISTS external_failures_by_story\n"
    "  ON external_failures (batch_id, story_id, id);\n"
    "PRAGMA user_version = 8;\n",
    /* 9: the attempts start-up closed because their controller died
     * (docs/reliability.md#controller-deaths): the second death of the
     * same attempt number counts it.  A table of its own, IF NOT
     * EXISTS, for the reason given at 8 */
    "CREATE TABLE IF NOT EXISTS controller_deaths (\n"
    "  attempt_id INTEGER PRIMARY KEY REFERENCES attempts (id),\n"
    "  controller_pid INTEGER NOT NULL,\n"
    "  stopped INTEGER NOT NULL CHECK (stopped IN (0, 1)),\n"
    "  ts_ms INTEGER NOT NULL\n"
    ");\n"
    "PRAGMA user_version = 9;\n",
};

_Static_assert(
    sizeof(db_migrations) / sizeof(db_migrations[0]) == DB_SCHEMA_VERSION,
    "one migration per schema version");

/*
 * Open and close
 */

/* mkdir dir with mode, and its missing parents 0755 (only the state
 * dir itself is private, docs/state.md). */
static int
db_mkdirs(const char *dir, mode_t mode, struct sc_err *err)
{
	struct sc_err why = {0};
	int ret = 0;

	if (mkdir(dir, mode) == 0 || errno == EEXIST)
		goto out;
	if (errno != ENOENT || fsutil_mkdir_parents(dir, 0755, &why) < 0 ||
	    (mkdir(dir, mode) < 0 && errno != EEXIST))
		ret = err_set(err, SC_EIO, "cannot create state dir %s: %s",
		    dir, why.msg[0] != '\0' ? why.msg : strerror(errno));
out:
	return ret;
}

int
db_dir_prepare(const char *state_dir, struct sc_err *err)
{
	struct stat sb;
	int rc;

	if (state_dir == NULL || state_dir[0] == '\0')
		return err_set(err, SC_EIO, "empty state dir name");
	if ((rc = db_mkdirs(state_dir, 0700, err)) < 0)
		return rc;
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
	/* 256 KiB of page cache instead of 2 MiB: every query is indexed
	 * and the kernel caches the file, so a larger cache only makes the
	 * controller's memory grow with the batch (512 KiB was 0.2 MiB more
	 * at N=5000, docs/performance.md#ssh-start) */
	if ((ret = db_exec(db, "PRAGMA cache_size = -256", err,
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
