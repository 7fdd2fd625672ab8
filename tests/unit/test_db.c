/* test_db.c - the SQLite state layer (state/db.c). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sqlite3.h>

#include "state/db.h"

/* DB_SCHEMA_VERSION as the text PRAGMA user_version reads back */
#define STR_(x) #x
#define STR(x) STR_(x)
#define SCHEMA_TEXT STR(DB_SCHEMA_VERSION)

struct fx {
	char root[64]; /* mkdtemp dir, removed afterwards */
	char state[128]; /* root/state, made by db_open */
	char file[160]; /* state/state.db */
	struct db *db;
	int64_t batch;
};

static int
rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	return remove(path);
}

static int
setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	struct sc_err err = {0};

	assert_non_null(f);
	strcpy(f->root, "/tmp/db-test-XXXXXX");
	assert_non_null(mkdtemp(f->root));
	snprintf(f->state, sizeof(f->state), "%s/state", f->root);
	snprintf(f->file, sizeof(f->file), "%s/state.db", f->state);
	assert_int_equal(db_open(&f->db, f->state, &err), 0);
	assert_int_equal(db_batch_create(f->db, &f->batch, 1000, &err), 0);
	*state = f;
	return 0;
}

static int
teardown(void **state)
{
	struct fx *f = *state;

	db_close(f->db);
	nftw(f->root, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	free(f);
	return 0;
}

/* A fixture without an open database, for the open tests. */
static int
setup_bare(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	strcpy(f->root, "/tmp/db-test-XXXXXX");
	assert_non_null(mkdtemp(f->root));
	snprintf(f->state, sizeof(f->state), "%s/state", f->root);
	snprintf(f->file, sizeof(f->file), "%s/state.db", f->state);
	*state = f;
	return 0;
}

static void
story_init(struct story_row *s, int64_t batch, const char *id, int pos)
{
	memset(s, 0, sizeof(*s));
	s->batch_id = batch;
	snprintf(s->id, sizeof(s->id), "%s", id);
	snprintf(s->file, sizeof(s->file), "docs/stories/%s.md", id);
	s->position = pos;
	s->status = STATUS_PENDING;
	s->counts.tasks_total = 9;
	s->updated_ms = 1000;
}

static void
add_story(struct fx *f, const char *id, int pos)
{
	struct story_row s;
	struct sc_err err = {0};

	story_init(&s, f->batch, id, pos);
	assert_int_equal(db_story_add(f->db, &s, &err), 0);
}

static void
attempt_init(struct attempt_row *r, int64_t batch, const char *story, int n)
{
	memset(r, 0, sizeof(*r));
	r->batch_id = batch;
	snprintf(r->story_id, sizeof(r->story_id), "%s", story);
	r->attempt = n;
	r->counted = true;
	r->role = n % 2 == 1 ? ROLE_PRIMARY : ROLE_FALLBACK;
	snprintf(r->agent, sizeof(r->agent), "%s",
	    r->role == ROLE_PRIMARY ? "claude" : "codex");
	r->controller_pid = 4242;
	r->started_ms = 2000 + n;
	r->exit_code = -1;
	r->timeout_factor = 1;
	r->poll_factor = 1;
}

/* End r with outcome o at tasks done, deciding d. */
static void
attempt_end(struct attempt_row *r, enum outcome o, int done, enum decision d)
{
	r->outcome = o;
	r->error_code = outcome_default_errcode(o);
	r->counted = outcome_counted(o);
	r->counts.tasks_completed = done;
	r->counts.tasks_total = 9;
	r->ended_ms = r->started_ms + 100;
	r->exit_code = o == OUTCOME_SUCCESS ? 0 : 1;
	r->decision = d;
}

static void
run_attempt(struct fx *f, const char *story, int n, enum outcome o, int done)
{
	struct attempt_row r;
	struct sc_err err = {0};

	attempt_init(&r, f->batch, story, n);
	assert_int_equal(db_attempt_begin(f->db, &r, &err), 0);
	attempt_end(&r, o, done, DECISION_RETRY);
	assert_int_equal(
	    db_attempt_finish(f->db, &r, NULL, NULL, NULL, &err), 0);
}

/* One text or integer value from a separate, raw connection. */
static char *
raw_text(const char *file, const char *sql)
{
	sqlite3 *h = NULL;
	sqlite3_stmt *st = NULL;
	char *out = NULL;
	const unsigned char *t;

	assert_int_equal(
	    sqlite3_open_v2(file, &h, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_prepare_v2(h, sql, -1, &st, NULL), SQLITE_OK);
	if (sqlite3_step(st) == SQLITE_ROW) {
		t = sqlite3_column_text(st, 0);
		out = strdup(t == NULL ? "(null)" : (const char *)t);
	}
	sqlite3_finalize(st);
	sqlite3_close(h);
	return out;
}

static void
assert_raw(const char *file, const char *sql, const char *want)
{
	char *got = raw_text(file, sql);

	assert_non_null(got);
	assert_string_equal(got, want);
	free(got);
}

/* The file's user_version is DB_SCHEMA_VERSION (no number written
 * here, so a new migration changes no test). */
static void
assert_schema_current(const char *file)
{
	char want[16];

	snprintf(want, sizeof(want), "%d", DB_SCHEMA_VERSION);
	assert_raw(file, "PRAGMA user_version", want);
}

/* The EXPLAIN QUERY PLAN details of sql, one per line (malloc). */
static char *
raw_plan(const char *file, const char *sql)
{
	sqlite3 *h = NULL;
	sqlite3_stmt *st = NULL;
	char *q = NULL, *out = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&out, &len);

	assert_non_null(mem);
	assert_true(asprintf(&q, "EXPLAIN QUERY PLAN %s", sql) > 0);
	assert_int_equal(
	    sqlite3_open_v2(file, &h, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_prepare_v2(h, q, -1, &st, NULL), SQLITE_OK);
	while (sqlite3_step(st) == SQLITE_ROW)
		fprintf(mem, "%s\n", (const char *)sqlite3_column_text(st, 3));
	sqlite3_finalize(st);
	sqlite3_close(h);
	fclose(mem);
	free(q);
	return out;
}

static void
raw_exec(const char *file, const char *sql)
{
	sqlite3 *h = NULL;

	assert_int_equal(sqlite3_open(file, &h), SQLITE_OK);
	assert_int_equal(sqlite3_exec(h, sql, NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(h);
}

static int
count_events(struct fx *f)
{
	struct event_row *ev = NULL;
	size_t n = 0;
	struct sc_err err = {0};

	assert_int_equal(db_events_list(f->db, &ev, &n, f->batch, 0, &err), 0);
	event_rows_free(ev, n);
	return (int)n;
}

/*
 * Opening
 */

static void
test_open_creates_private_files(void **state)
{
	struct fx *f = *state;
	struct sc_err err = {0};
	struct stat sb;
	char wal[200];

	assert_int_equal(db_open(&f->db, f->state, &err), 0);
	assert_int_equal(stat(f->state, &sb), 0);
	assert_true(S_ISDIR(sb.st_mode));
	assert_int_equal(sb.st_mode & 0777, 0700);
	assert_int_equal(stat(f->file, &sb), 0);
	assert_int_equal(sb.st_mode & 0777, 0600);
	assert_string_equal(db_path(f->db), f->file);
	/* the write-ahead log gets the database's mode */
	assert_int_equal(db_batch_create(f->db, &f->batch, 1, &err), 0);
	snprintf(wal, sizeof(wal), "%s-wal", f->file);
	assert_int_equal(stat(wal, &sb), 0);
	assert_int_equal(sb.st_mode & 0777, 0600);
}

/* A missing state dir is made with its missing parents: they get 0755
 * (before the umask), the state dir itself 0700 (docs/state.md). */
static void
test_dir_prepare_parents(void **state)
{
	struct fx *f = *state;
	struct sc_err err = {0};
	char deep[200], mid[180], file[200];
	struct stat sb;
	mode_t old = umask(022);
	int fd;

	snprintf(mid, sizeof(mid), "%s/a/b", f->root);
	snprintf(deep, sizeof(deep), "%s/state", mid);
	assert_int_equal(db_dir_prepare(deep, &err), 0);
	assert_int_equal(stat(deep, &sb), 0);
	assert_int_equal(sb.st_mode & 0777, 0700);
	assert_int_equal(stat(mid, &sb), 0);
	assert_int_equal(sb.st_mode & 0777, 0755);
	/* a parent that is a file: the message names the state dir */
	snprintf(file, sizeof(file), "%s/plain", f->root);
	fd = open(file, O_CREAT | O_WRONLY, 0600);
	assert_true(fd >= 0);
	close(fd);
	snprintf(deep, sizeof(deep), "%s/plain/x/state", f->root);
	assert_int_equal(db_dir_prepare(deep, &err), SC_EIO);
	assert_non_null(strstr(err.msg, "cannot create state dir"));
	assert_non_null(strstr(err.msg, deep));
	umask(old);
}

static void
test_open_tightens_loose_modes(void **state)
{
	struct fx *f = *state;
	struct sc_err err = {0};
	struct stat sb;
	int fd;

	assert_int_equal(mkdir(f->state, 0700), 0);
	assert_int_equal(chmod(f->state, 0755), 0);
	fd = open(f->file, O_CREAT | O_WRONLY, 0600);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(chmod(f->file, 0644), 0);
	assert_int_equal(db_open(&f->db, f->state, &err), 0);
	assert_int_equal(stat(f->state, &sb), 0);
	assert_int_equal(sb.st_mode & 0777, 0700);
	assert_int_equal(stat(f->file, &sb), 0);
	assert_int_equal(sb.st_mode & 0777, 0600);
}

static void
test_open_settings(void **state)
{
	struct fx *f = *state;
	struct sc_err err = {0};
	struct db_info info;

	assert_int_equal(db_info(f->db, &info, &err), 0);
	assert_string_equal(info.journal_mode, "wal");
	assert_int_equal(info.synchronous, 2); /* FULL */
	assert_int_equal(info.foreign_keys, 1);
	assert_int_equal(info.user_version, DB_SCHEMA_VERSION);
	assert_int_equal(info.busy_timeout_ms, DB_BUSY_TIMEOUT_MS);
	/* WAL and the version are in the file, seen by any connection */
	assert_raw(f->file, "PRAGMA journal_mode", "wal");
	assert_schema_current(f->file);
}

static void
test_reopen_keeps_data(void **state)
{
	struct fx *f = *state;
	struct sc_err err = {0};
	struct story_row s;
	struct db_info info;
	int64_t next = 0;
	int found = 0;

	add_story(f, "s1", 0);
	run_attempt(f, "s1", 1, OUTCOME_CRASH, 3);
	db_close(f->db);
	f->db = NULL;
	/* twice: the migration must not run again on a current schema */
	assert_int_equal(db_open(&f->db, f->state, &err), 0);
	db_close(f->db);
	assert_int_equal(db_open(&f->db, f->state, &err), 0);
	assert_int_equal(db_info(f->db, &info, &err), 0);
	assert_int_equal(info.user_version, DB_SCHEMA_VERSION);
	assert_int_equal(
	    db_story_get(f->db, &s, &found, f->batch, "s1", &err), 0);
	assert_int_equal(found, 1);
	assert_string_equal(s.file, "docs/stories/s1.md");
	assert_int_equal(db_batch_create(f->db, &next, 5, &err), 0);
	assert_int_equal(next, f->batch + 1);
	assert_int_equal(db_integrity_check(f->db, &err), 0);
}

static void
test_open_refuses_newer_schema(void **state)
{
	struct fx *f = *state;
	struct sc_err err = {0};

	db_close(f->db);
	f->db = NULL;
	raw_exec(f->file, "PRAGMA user_version = 99");
	assert_int_equal(db_open(&f->db, f->state, &err), SC_EIO);
	assert_null(f->db);
	assert_non_null(strstr(err.msg, f->file));
	assert_non_null(strstr(err.msg, "schema version 99 is newer"));
}

static void
test_open_errors_name_the_file(void **state)
{
	struct fx *f = *state;
	struct sc_err err = {0};
	char junk[4096];
	int fd;

	/* not a database: sqlite's own message comes through */
	assert_int_equal(mkdir(f->state, 0700), 0);
	fd = open(f->file, O_CREAT | O_WRONLY, 0600);
	assert_true(fd >= 0);
	memset(junk, 'x', sizeof(junk));
	assert_int_equal(write(fd, junk, sizeof(junk)), (ssize_t)sizeof(junk));
	close(fd);
	assert_int_equal(db_open(&f->db, f->state, &err), SC_EIO);
	assert_null(f->db);
	assert_non_null(strstr(err.msg, f->file));
	assert_non_null(strstr(err.msg, "not a database"));

	/* the state dir is a file */
	err_clear(&err);
	assert_int_equal(db_open(&f->db, f->file, &err), SC_EIO);
	assert_non_null(strstr(err.msg, f->file));
	assert_non_null(strstr(err.msg, "not a directory"));
}

/*
 * Batches and stories
 */

static void
test_batch_lifecycle(void **state)
{
	struct fx *f = *state;
	struct sc_err err = {0};
	struct batch_row b;
	int64_t second = 0;
	int found = 0;

	assert_int_equal(db_batch_current(f->db, &b, &found, &err), 0);
	assert_int_equal(found, 1);
	assert_int_equal(b.id, f->batch);
	assert_int_equal(b.created_ms, 1000);
	assert_int_equal(b.finished_ms, 0);
	assert_string_equal(b.status, "running");

	/* stopped is unfinished: resume continues it */
	assert_int_equal(
	    db_batch_set_status(f->db, f->batch, "stopped", 1500, &err), 0);
	assert_int_equal(db_batch_current(f->db, &b, &found, &err), 0);
	assert_int_equal(found, 1);
	assert_string_equal(b.status, "stopped");
	assert_int_equal(b.finished_ms, 1500);

	assert_int_equal(
	    db_batch_set_status(f->db, f->batch, "finished", 2000, &err), 0);
	assert_int_equal(db_batch_current(f->db, &b, &found, &err), 0);
	assert_int_equal(found, 0);
	assert_int_equal(db_batch_latest(f->db, &b, &found, &err), 0);
	assert_int_equal(found, 1);
	assert_string_equal(b.status, "finished");
	assert_int_equal(b.finished_ms, 2000);

	assert_int_equal(db_batch_create(f->db, &second, 3000, &err), 0);
	assert_true(second > f->batch);
	assert_int_equal(db_batch_current(f->db, &b, &found, &err), 0);
	assert_int_equal(b.id, second);

	assert_int_equal(
	    db_batch_set_status(f->db, second, "done", 1, &err), SC_ESOFTWARE);
	assert_int_equal(
	    db_batch_set_status(f->db, 999, "finished", 1, &err), SC_EIO);
	assert_non_null(strstr(err.msg, "no batch 999"));
}

static void
test_story_add_keeps_existing(void **state)
{
	struct fx *f = *state;
	struct sc_err err = {0};
	struct story_row s, got;
	char *ids = NULL;
	int found = 0;

	add_story(f, "b-2", 1);
	add_story(f, "a.1", 0);
	/* adding again (a resumed run) keeps the row as it is */
	story_init(&s, f->batch, "b-2", 7);
	snprintf(s.file, sizeof(s.file), "other.md");
	assert_int_equal(db_story_add(f->db, &s, &err), 0);
	assert_int_equal(
	    db_story_get(f->db, &got, &found, f->batch, "b-2", &err), 0);
	assert_int_equal(found, 1);
	assert_int_equal(got.position, 1);
	assert_string_equal(got.file, "docs/stories/b-2.md");
	assert_int_equal(got.status, STATUS_PENDING);
	assert_int_equal(got.last_outcome, OUTCOME_NONE);
	/* the batch lists its ids once each, in the order added */
	assert_int_equal(db_batch_story_ids(f->db, &ids, f->batch, &err), 0);
	assert_non_null(ids);
	assert_string_equal(ids, "[\"b-2\",\"a.1\"]");
	free(ids);
	/* a story needs its batch */
	story_init(&s, 77, "x", 0);
	assert_int_equal(db_story_add(f->db, &s, &err), SC_EIO);
	assert_non_null(strstr(err.msg, "FOREIGN KEY"));
}

static void
test_story_get_update(void **state)
{
	struct fx *f = *state;
	struct sc_err err = {0};
	struct story_row s, got;
	int found = 1;

	assert_int_equal(
	    db_story_get(f->db, &got, &found, f->batch, "nope", &err), 0);
	assert_int_equal(found, 0);
	add_story(f, "s1", 0);
	story_init(&s, f->batch, "s1", 0);
	s.status = STATUS_DEFERRED;
	snprintf(s.reason, sizeof(s.reason), "plateau at 5/9");
	s.counts.tasks_completed = 5;
	s.attempts = 4;
	snprintf(s.last_agent, sizeof(s.last_agent), "codex");
	s.last_outcome = OUTCOME_INCOMPLETE;
	s.updated_ms = 9999;
	s.cost_usd = 1.25;
	snprintf(s.branch, sizeof(s.branch), "story/s1");
	assert_int_equal(db_story_update(f->db, &s, &err), 0);
	assert_int_equal(
	    db_story_get(f->db, &got, &found, f->batch, "s1", &err), 0);
	assert_int_equal(found, 1);
	assert_int_equal(got.status, STATUS_DEFERRED);
	assert_string_equal(got.reason, "plateau at 5/9");
	assert_int_equal(got.counts.tasks_completed, 5);
	assert_int_equal(got.counts.tasks_total, 9);
	assert_int_equal(got.attempts, 4);
	assert_string_equal(got.last_agent, "codex");
	assert_int_equal(got.last_outcome, OUTCOME_INCOMPLETE);
	assert_int_equal(got.updated_ms, 9999);
	assert_true(got.cost_usd > 1.24 && got.cost_usd < 1.26);
	assert_string_equal(got.branch, "story/s1");
	/* names, not numbers, in the file */
	assert_raw(f->file, "SELECT status || ' ' || last_outcome FROM stories",
	    "deferred incomplete");

	story_init(&s, f->batch, "ghost", 0);
	assert_int_equal(db_story_update(f->db, &s, &err), SC_EIO);
	assert_non_null(strstr(err.msg, "no story ghost"));
}

static void
test_story_list_and_counts(void **state)
{
	struct fx *f = *state;
	struct sc_err err = {0};
	static const struct {
		const char *id;
		int pos;
		enum story_status status;
	} rows[] = {
	    {"c", 2, STATUS_DONE},
	    {"a", 0, STATUS_DEFERRED},
	    {"d", 3, STATUS_PENDING},
	    {"b", 1, STATUS_DONE},
	};
	struct story_row s, *list = NULL;
	int counts[STATUS__COUNT];
	size_t i, n = 0;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		story_init(&s, f->batch, rows[i].id, rows[i].pos);
		s.status = rows[i].status;
		assert_int_equal(db_story_add(f->db, &s, &err), 0);
	}
	assert_int_equal(
	    db_story_list(f->db, &list, &n, f->batch, NULL, &err), 0);
	assert_int_equal(n, 4);
	assert_string_equal(list[0].id, "a");
	assert_string_equal(list[1].id, "b");
	assert_string_equal(list[2].id, "c");
	assert_string_equal(list[3].id, "d");
	free(list);
	assert_int_equal(
	    db_story_list(f->db, &list, &n, f->batch, "done", &err), 0);
	assert_int_equal(n, 2);
	assert_string_equal(list[0].id, "b");
	assert_string_equal(list[1].id, "c");
	free(list);
	assert_int_equal(
	    db_story_list(f->db, &list, &n, f->batch, "escalated", &err), 0);
	assert_int_equal(n, 0);
	assert_null(list);

	assert_int_equal(db_status_counts(f->db, counts, f->batch, &err), 0);
	assert_int_equal(counts[STATUS_DONE], 2);
	assert_int_equal(counts[STATUS_DEFERRED], 1);
	assert_int_equal(counts[STATUS_PENDING], 1);
	assert_int_equal(counts[STATUS_RUNNING], 0);
	assert_int_equal(counts[STATUS_ESCALATED], 0);
}

/*
 * Attempts
 */

static void
test_attempt_begin_durable_and_visible(void **state)
{
	struct fx *f = *state;
	struct sc_err err = {0};
	struct attempt_row r, *rows = NULL;
	struct db *other = NULL;
	size_t n = 0;
	char sql[128];

	add_story(f, "s1", 0);
	attempt_init(&r, f->batch, "s1", 1);
	r.outcome = OUTCOME_SUCCESS; /* ignored: a new row is running */
	r.ended_ms = 5;
	assert_int_equal(db_attempt_begin(f->db, &r, &err), 0);
	assert_true(r.id > 0);
	assert_int_equal(r.seq, 1);

	/* committed: a second connection (another process, in life) sees
	 * it before the agent even starts */
	snprintf(sql, sizeof(sql),
	    "SELECT outcome || ',' || "
	    "coalesce(ended_ms, 'null') FROM attempts WHERE id = %lld",
	    (long long)r.id);
	assert_raw(f->file, sql, "running,null");
	assert_int_equal(db_open(&other, f->state, &err), 0);
	assert_int_equal(db_attempts_running(other, &rows, &n, &err), 0);
	assert_int_equal(n, 1);
	assert_int_equal(rows[0].id, r.id);
	assert_int_equal(rows[0].outcome, OUTCOME_NONE);
	assert_int_equal(rows[0].ended_ms, 0);
	assert_int_equal(rows[0].controller_pid, 4242);
	attempt_rows_free(rows, n);
	db_close(other);
	/* and the first connection still works after the second closed */
	assert_int_equal(db_integrity_check(f->db, &err), 0);
}

static void
test_attempt_finish_writes_all_three(void **state)
{
	struct fx *f = *state;
	struct sc_err err = {0};
	struct attempt_row r, *rows = NULL;
	struct story_row s, got;
	struct event_row *ev = NULL;
	int64_t seq0 = 0, seq1 = 0;
	size_t n = 0;
	int found = 0;

	add_story(f, "s1", 0);
	attempt_init(&r, f->batch, "s1", 1);
	assert_int_equal(db_attempt_begin(f->db, &r, &err), 0);
	assert_int_equal(db_decision_seq(f->db, &seq0, &err), 0);

	attempt_end(&r, OUTCOME_INCOMPLETE, 5, DECISION_RETRY);
	snprintf(r.reason, sizeof(r.reason), "5/9 tasks, retry with fallback");
	story_init(&s, f->batch, "s1", 0);
	s.status = STATUS_PENDING;
	s.counts.tasks_completed = 5;
	s.attempts = 1;
	s.last_outcome = OUTCOME_INCOMPLETE;
	s.updated_ms = r.ended_ms;
	assert_int_equal(db_attempt_finish(f->db, &r, &s, "attempt",
			     "s1 attempt 1 incomplete 5/9 -> retry", &err),
	    0);

	assert_int_equal(
	    db_attempts_for_story(f->db, &rows, &n, f->batch, "s1", &err), 0);
	assert_int_equal(n, 1);
	assert_int_equal(rows[0].outcome, OUTCOME_INCOMPLETE);
	assert_int_equal(rows[0].decision, DECISION_RETRY);
	assert_int_equal(rows[0].counts.tasks_completed, 5);
	assert_string_equal(rows[0].reason, "5/9 tasks, retry with fallback");
	attempt_rows_free(rows, n);
	assert_int_equal(
	    db_story_get(f->db, &got, &found, f->batch, "s1", &err), 0);
	assert_int_equal(got.attempts, 1);
	assert_int_equal(got.last_outcome, OUTCOME_INCOMPLETE);
	assert_int_equal(db_events_list(f->db, &ev, &n, f->batch, 0, &err), 0);
	assert_int_equal(n, 1);
	assert_string_equal(ev[0].kind, "attempt");
	assert_string_equal(ev[0].story_id, "s1");
	assert_int_equal(ev[0].ts_ms, r.ended_ms);
	assert_string_equal(
	    ev[0].message, "s1 attempt 1 incomplete 5/9 -> retry");
	event_rows_free(ev, n);
	assert_int_equal(db_decision_seq(f->db, &seq1, &err), 0);
	assert_int_equal(seq1, seq0 + 1);
	assert_int_equal(db_attempts_running(f->db, &rows, &n, &err), 0);
	assert_int_equal(n, 0);
}

static void
test_attempt_finish_is_atomic(void **state)
{
	struct fx *f = *state;
	struct sc_err err = {0};
	struct attempt_row r, *rows = NULL;
	struct story_row s, got;
	int64_t seq0 = 0, seq1 = 0;
	size_t n = 0;
	int found = 0;

	add_story(f, "s1", 0);
	attempt_init(&r, f->batch, "s1", 1);
	assert_int_equal(db_attempt_begin(f->db, &r, &err), 0);
	assert_int_equal(db_decision_seq(f->db, &seq0, &err), 0);

	/* the story write fails: the attempt stays running, no event */
	attempt_end(&r, OUTCOME_CRASH, 2, DECISION_RETRY);
	story_init(&s, f->batch, "ghost", 0);
	assert_int_equal(
	    db_attempt_finish(f->db, &r, &s, "attempt", "x", &err), SC_EIO);
	assert_int_equal(db_attempts_running(f->db, &rows, &n, &err), 0);
	assert_int_equal(n, 1);
	assert_int_equal(rows[0].outcome, OUTCOME_NONE);
	attempt_rows_free(rows, n);
	assert_int_equal(count_events(f), 0);
	assert_int_equal(db_decision_seq(f->db, &seq1, &err), 0);
	assert_int_equal(seq1, seq0);

	/* once finished, a second finish (a replayed recovery) is refused
	 * and writes nothing: nothing is counted twice */
	story_init(&s, f->batch, "s1", 0);
	s.attempts = 1;
	assert_int_equal(
	    db_attempt_finish(f->db, &r, &s, "attempt", "x", &err), 0);
	s.attempts = 2;
	assert_int_equal(
	    db_attempt_finish(f->db, &r, &s, "attempt", "x", &err), SC_EIO);
	assert_non_null(strstr(err.msg, "is not running"));
	assert_int_equal(
	    db_story_get(f->db, &got, &found, f->batch, "s1", &err), 0);
	assert_int_equal(got.attempts, 1);
	assert_int_equal(count_events(f), 1);

	/* no outcome is a caller bug */
	r.outcome = OUTCOME_NONE;
	assert_int_equal(
	    db_attempt_finish(f->db, &r, NULL, NULL, NULL, &err), SC_ESOFTWARE);
}

static void
test_attempt_rerun_same_number(void **state)
{
	struct fx *f = *state;
	struct sc_err err = {0};
	struct attempt_row *rows = NULL;
	size_t n = 0;
	static const struct {
		int attempt;
		enum outcome outcome;
		int seq;
		bool counted;
	} want[] = {
	    {1, OUTCOME_INCOMPLETE, 1, true},
	    {2, OUTCOME_USAGE_LIMIT, 2, false}, /* D3: rerun as 2 */
	    {2, OUTCOME_INTERRUPTED, 3, false}, /* D4: rerun as 2 */
	    {2, OUTCOME_CRASH, 4, true},
	    {3, OUTCOME_SUCCESS, 5, true},
	};
	size_t i;

	add_story(f, "s1", 0);
	add_story(f, "s2", 1);
	run_attempt(f, "s2", 1, OUTCOME_CRASH, 0); /* its own seq */
	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		run_attempt(f, "s1", want[i].attempt, want[i].outcome, 4);
	assert_int_equal(
	    db_attempts_for_story(f->db, &rows, &n, f->batch, "s1", &err), 0);
	assert_int_equal(n, 5);
	for (i = 0; i < n; i++) {
		assert_int_equal(rows[i].attempt, want[i].attempt);
		assert_int_equal(rows[i].seq, want[i].seq);
		assert_int_equal(rows[i].outcome, want[i].outcome);
		assert_int_equal(rows[i].counted, want[i].counted);
	}
	attempt_rows_free(rows, n);
	assert_int_equal(
	    db_attempts_for_story(f->db, &rows, &n, f->batch, "s2", &err), 0);
	assert_int_equal(n, 1);
	assert_int_equal(rows[0].seq, 1);
	attempt_rows_free(rows, n);
	assert_int_equal(
	    db_attempts_for_story(f->db, &rows, &n, f->batch, "none", &err), 0);
	assert_int_equal(n, 0);
	assert_null(rows);
}

static void
test_attempt_fields_round_trip(void **state)
{
	struct fx *f = *state;
	struct sc_err err = {0};
	struct attempt_row r, *rows = NULL;
	size_t n = 0;

	add_story(f, "s1", 0);
	attempt_init(&r, f->batch, "s1", 2);
	r.argv_json = strdup("[\"codex\",\"exec\",\"--story\",\"s1\"]");
	assert_non_null(r.argv_json);
	snprintf(r.log_path, sizeof(r.log_path), ".storyctl/logs/s1-2.log");
	assert_int_equal(db_attempt_begin(f->db, &r, &err), 0);
	r.pid = 31337;
	r.heartbeat_ms = 2100;
	r.ended_ms = 2600;
	r.exit_code = -1;
	r.signal = 9;
	r.outcome = OUTCOME_TIMEOUT;
	r.error_code = ERRC_STALLED;
	snprintf(r.error_message, sizeof(r.error_message), "no progress 600s");
	r.counts.tasks_completed = 4;
	r.counts.tasks_total = 9;
	snprintf(r.stalled_task, sizeof(r.stalled_task), "Task 5: wire it");
	r.delay_ms = 4000;
	r.decision = DECISION_RETRY;
	snprintf(r.reason, sizeof(r.reason), "variable progress");
	r.timeout_factor = 2;
	r.poll_factor = 0; /* meaningless: stored as 1 */
	r.cost_usd = 0.5;
	assert_int_equal(
	    db_attempt_finish(f->db, &r, NULL, NULL, NULL, &err), 0);
	assert_int_equal(
	    db_attempts_for_story(f->db, &rows, &n, f->batch, "s1", &err), 0);
	assert_int_equal(n, 1);
	assert_int_equal(rows[0].id, r.id);
	assert_int_equal(rows[0].batch_id, f->batch);
	assert_int_equal(rows[0].attempt, 2);
	assert_int_equal(rows[0].role, ROLE_FALLBACK);
	assert_string_equal(rows[0].agent, "codex");
	assert_string_equal(rows[0].argv_json, r.argv_json);
	assert_int_equal(rows[0].pid, 31337);
	assert_int_equal(rows[0].controller_pid, 4242);
	assert_int_equal(rows[0].started_ms, 2002);
	assert_int_equal(rows[0].ended_ms, 2600);
	assert_int_equal(rows[0].heartbeat_ms, 2100);
	assert_int_equal(rows[0].exit_code, -1);
	assert_int_equal(rows[0].signal, 9);
	assert_int_equal(rows[0].outcome, OUTCOME_TIMEOUT);
	assert_int_equal(rows[0].error_code, ERRC_STALLED);
	assert_string_equal(rows[0].error_message, "no progress 600s");
	assert_int_equal(rows[0].counts.tasks_completed, 4);
	assert_int_equal(rows[0].counts.tasks_total, 9);
	assert_string_equal(rows[0].stalled_task, "Task 5: wire it");
	assert_int_equal(rows[0].delay_ms, 4000);
	assert_int_equal(rows[0].decision, DECISION_RETRY);
	assert_string_equal(rows[0].reason, "variable progress");
	assert_string_equal(rows[0].log_path, ".storyctl/logs/s1-2.log");
	assert_true(rows[0].timeout_factor == 2.0);
	assert_true(rows[0].poll_factor == 1.0);
	assert_true(rows[0].cost_usd == 0.5);
	attempt_rows_free(rows, n);
	/* readable names in the file; unknown values are NULL */
	assert_raw(f->file,
	    "SELECT role || ' ' || outcome || ' ' || "
	    "error_code || ' ' || decision || ' ' || "
	    "coalesce(exit_code, 'null') FROM attempts",
	    "fallback timeout STALLED retry null");
	attempt_row_release(&r);
	assert_null(r.argv_json);
}

static void
test_attempt_needs_story(void **state)
{
	struct fx *f = *state;
	struct sc_err err = {0};
	struct attempt_row r;

	attempt_init(&r, f->batch, "ghost", 1);
	assert_int_equal(db_attempt_begin(f->db, &r, &err), SC_EIO);
	assert_int_equal(r.id, 0);
	assert_non_null(strstr(err.msg, f->file));
	assert_non_null(strstr(err.msg, "attempt 1 of story ghost"));
	assert_non_null(strstr(err.msg, "FOREIGN KEY constraint failed"));
}

static void
test_attempts_running_any_batch(void **state)
{
	struct fx *f = *state;
	struct sc_err err = {0};
	struct attempt_row a, b, c, *rows = NULL;
	struct story_row s;
	int64_t second = 0;
	size_t n = 0;

	add_story(f, "s1", 0);
	add_story(f, "s2", 1);
	assert_int_equal(db_batch_create(f->db, &second, 2000, &err), 0);
	story_init(&s, second, "s1", 0);
	assert_int_equal(db_story_add(f->db, &s, &err), 0);
	attempt_init(&a, f->batch, "s1", 1);
	attempt_init(&b, f->batch, "s2", 1);
	attempt_init(&c, second, "s1", 1);
	assert_int_equal(db_attempt_begin(f->db, &a, &err), 0);
	assert_int_equal(db_attempt_begin(f->db, &b, &err), 0);
	assert_int_equal(db_attempt_begin(f->db, &c, &err), 0);
	attempt_end(&b, OUTCOME_SUCCESS, 9, DECISION_DONE);
	assert_int_equal(
	    db_attempt_finish(f->db, &b, NULL, NULL, NULL, &err), 0);
	assert_int_equal(db_attempts_running(f->db, &rows, &n, &err), 0);
	assert_int_equal(n, 2);
	assert_int_equal(rows[0].id, a.id);
	assert_int_equal(rows[0].batch_id, f->batch);
	assert_int_equal(rows[1].id, c.id);
	assert_int_equal(rows[1].batch_id, second);
	assert_int_equal(rows[1].seq, 1); /* seq is per batch too */
	attempt_rows_free(rows, n);
}

/* The telemetry's rows (docs/stats.md): by batch, story id and seq, one
 * batch or all of them, the figures' columns read back. */
static void
test_attempt_briefs(void **state)
{
	struct fx *f = *state;
	struct sc_err err = {0};
	struct attempt_row a, b, c;
	struct attempt_brief *rows = NULL;
	struct story_row s;
	int64_t second = 0;
	size_t n = 0;

	add_story(f, "s2", 0);
	add_story(f, "s1", 1);
	assert_int_equal(db_batch_create(f->db, &second, 2000, &err), 0);
	story_init(&s, second, "s1", 0);
	assert_int_equal(db_story_add(f->db, &s, &err), 0);
	attempt_init(&a, f->batch, "s2", 1);
	attempt_init(&b, f->batch, "s1", 1);
	attempt_init(&c, second, "s1", 1);
	assert_int_equal(db_attempt_begin(f->db, &a, &err), 0);
	assert_int_equal(db_attempt_begin(f->db, &b, &err), 0);
	assert_int_equal(db_attempt_begin(f->db, &c, &err), 0);
	attempt_end(&a, OUTCOME_RATE_LIMIT, 0, DECISION_RETRY);
	a.error_code = ERRC_OVERLOADED;
	a.delay_ms = 1500;
	a.cost_usd = 0.25;
	assert_int_equal(
	    db_attempt_finish(f->db, &a, NULL, NULL, NULL, &err), 0);
	assert_int_equal(
	    db_attempt_briefs(f->db, &rows, &n, f->batch, &err), 0);
	assert_int_equal(n, 2);
	assert_string_equal(rows[0].story_id, "s1");
	assert_int_equal(rows[0].outcome, OUTCOME_NONE); /* running */
	assert_string_equal(rows[1].story_id, "s2");
	assert_int_equal(rows[1].outcome, OUTCOME_RATE_LIMIT);
	assert_int_equal(rows[1].error_code, ERRC_OVERLOADED);
	assert_int_equal(rows[1].decision, DECISION_RETRY);
	assert_int_equal(rows[1].delay_ms, 1500);
	assert_true(rows[1].cost_usd == 0.25);
	assert_int_equal(rows[1].ended_ms, a.ended_ms);
	assert_string_equal(rows[1].agent, "claude");
	free(rows);
	assert_int_equal(db_attempt_briefs(f->db, &rows, &n, 0, &err), 0);
	assert_int_equal(n, 3);
	assert_int_equal(rows[2].batch_id, second);
	free(rows);
	assert_int_equal(db_attempt_briefs(f->db, &rows, &n, 99, &err), 0);
	assert_int_equal(n, 0);
	assert_null(rows);
}

static void
test_attempt_pid_and_heartbeat(void **state)
{
	struct fx *f = *state;
	struct sc_err err = {0};
	struct attempt_row r, *rows = NULL;
	struct task_counts hb = {3, 9, 7, 12};
	size_t n = 0;

	add_story(f, "s1", 0);
	attempt_init(&r, f->batch, "s1", 1);
	assert_int_equal(db_attempt_begin(f->db, &r, &err), 0);
	assert_int_equal(db_attempt_set_pid(f->db, r.id, 777, 4242, &err), 0);
	assert_int_equal(db_attempt_heartbeat(f->db, r.id, 2500, &hb, &err), 0);
	assert_int_equal(db_attempts_running(f->db, &rows, &n, &err), 0);
	assert_int_equal(n, 1);
	assert_int_equal(rows[0].pid, 777);
	assert_int_equal(rows[0].heartbeat_ms, 2500);
	assert_int_equal(rows[0].counts.tasks_completed, 3);
	assert_int_equal(rows[0].counts.tasks_total, 9);
	assert_int_equal(rows[0].counts.subtasks_completed, 7);
	assert_int_equal(rows[0].counts.subtasks_total, 12);
	attempt_rows_free(rows, n);

	assert_int_equal(
	    db_attempt_set_pid(f->db, r.id + 100, 1, 0, &err), SC_EIO);
	assert_non_null(strstr(err.msg, "no attempt row"));
	attempt_end(&r, OUTCOME_CRASH, 3, DECISION_RETRY);
	assert_int_equal(
	    db_attempt_finish(f->db, &r, NULL, NULL, NULL, &err), 0);
	/* a late heartbeat must not touch an ended attempt */
	hb.tasks_completed = 8;
	assert_int_equal(
	    db_attempt_heartbeat(f->db, r.id, 2600, &hb, &err), SC_EIO);
	assert_int_equal(
	    db_attempts_for_story(f->db, &rows, &n, f->batch, "s1", &err), 0);
	assert_int_equal(rows[0].counts.tasks_completed, 3);
	attempt_rows_free(rows, n);
}

/*
 * Events, meta, counters, integrity
 */

static void
test_events_after_id(void **state)
{
	struct fx *f = *state;
	struct sc_err err = {0};
	struct event_row *ev = NULL;
	int64_t second = 0, last;
	size_t n = 0;

	add_story(f, "s1", 0);
	assert_int_equal(db_event_add(f->db, f->batch, 10, NULL, "batch",
			     "batch started", &err),
	    0);
	assert_int_equal(
	    db_event_add(f->db, f->batch, 11, "s1", "story", NULL, &err), 0);
	assert_int_equal(db_batch_create(f->db, &second, 12, &err), 0);
	assert_int_equal(
	    db_event_add(f->db, second, 13, "", "batch", "b2", &err), 0);
	assert_int_equal(
	    db_event_add(f->db, f->batch, 14, NULL, "batch", "stopped", &err),
	    0);
	assert_int_equal(
	    db_event_add(f->db, f->batch, 15, NULL, NULL, "x", &err),
	    SC_ESOFTWARE);

	assert_int_equal(db_events_list(f->db, &ev, &n, f->batch, 0, &err), 0);
	assert_int_equal(n, 3);
	assert_string_equal(ev[0].message, "batch started");
	assert_string_equal(ev[0].story_id, "");
	assert_string_equal(ev[1].story_id, "s1");
	assert_string_equal(ev[1].message, "");
	assert_string_equal(ev[2].message, "stopped");
	assert_true(ev[0].id < ev[1].id && ev[1].id < ev[2].id);
	last = ev[1].id;
	event_rows_free(ev, n);

	/* log --follow: only what came after the last one seen */
	assert_int_equal(
	    db_events_list(f->db, &ev, &n, f->batch, last, &err), 0);
	assert_int_equal(n, 1);
	assert_string_equal(ev[0].message, "stopped");
	assert_int_equal(ev[0].ts_ms, 14);
	event_rows_free(ev, n);
	/* every batch */
	assert_int_equal(db_events_list(f->db, &ev, &n, 0, 0, &err), 0);
	assert_int_equal(n, 4);
	assert_int_equal(ev[2].batch_id, second);
	event_rows_free(ev, n);
}

/* The service's pages (docs/api.md#events): after, batch, story and
 * limit, each alone and together, in id order across batches. */
static void
test_events_page(void **state)
{
	struct fx *f = *state;
	struct sc_err err = {0};
	struct event_row *ev = NULL;
	struct event_query q = {0, 0, NULL, 0};
	int64_t second = 0, first_id;
	size_t n = 0;

	add_story(f, "s1", 0);
	assert_int_equal(
	    db_event_add(f->db, f->batch, 10, NULL, "batch", "b1", &err), 0);
	assert_int_equal(
	    db_event_add(f->db, f->batch, 11, "s1", "decision", "d1", &err), 0);
	assert_int_equal(db_batch_create(f->db, &second, 12, &err), 0);
	assert_int_equal(
	    db_event_add(f->db, second, 13, "s1", "decision", "d2", &err), 0);
	assert_int_equal(
	    db_event_add(f->db, second, 14, "s2", "decision", "d3", &err), 0);

	assert_int_equal(db_events_page(f->db, &ev, &n, &q, &err), 0);
	assert_int_equal(n, 4);
	assert_true(
	    ev[0].id < ev[1].id && ev[1].id < ev[2].id && ev[2].id < ev[3].id);
	assert_int_equal(ev[2].batch_id, second);
	first_id = ev[0].id;
	event_rows_free(ev, n);

	q.after_id = first_id;
	q.limit = 2;
	assert_int_equal(db_events_page(f->db, &ev, &n, &q, &err), 0);
	assert_int_equal(n, 2);
	assert_string_equal(ev[0].message, "d1");
	assert_string_equal(ev[1].message, "d2");
	event_rows_free(ev, n);

	q = (struct event_query){0, second, NULL, 0};
	assert_int_equal(db_events_page(f->db, &ev, &n, &q, &err), 0);
	assert_int_equal(n, 2);
	assert_string_equal(ev[0].message, "d2");
	event_rows_free(ev, n);

	q = (struct event_query){0, 0, "s1", 0};
	assert_int_equal(db_events_page(f->db, &ev, &n, &q, &err), 0);
	assert_int_equal(n, 2);
	assert_string_equal(ev[0].message, "d1");
	assert_string_equal(ev[1].message, "d2");
	event_rows_free(ev, n);

	q = (struct event_query){first_id, second, "s1", 1};
	assert_int_equal(db_events_page(f->db, &ev, &n, &q, &err), 0);
	assert_int_equal(n, 1);
	assert_string_equal(ev[0].message, "d2");
	event_rows_free(ev, n);

	q = (struct event_query){first_id + 10, 0, NULL, 0};
	assert_int_equal(db_events_page(f->db, &ev, &n, &q, &err), 0);
	assert_int_equal(n, 0);
	assert_null(ev);
}

static void
test_meta_get_set(void **state)
{
	struct fx *f = *state;
	struct sc_err err = {0};
	char *v = (char *)"sentinel";

	assert_int_equal(db_meta_get(f->db, "state_branch_seq", &v, &err), 0);
	assert_null(v);
	assert_int_equal(db_meta_set(f->db, "state_branch_seq", "3", &err), 0);
	assert_int_equal(db_meta_set(f->db, "state_branch_seq", "4", &err), 0);
	assert_int_equal(db_meta_get(f->db, "state_branch_seq", &v, &err), 0);
	assert_non_null(v);
	assert_string_equal(v, "4");
	free(v);
}

static void
test_decision_seq_grows(void **state)
{
	struct fx *f = *state;
	struct sc_err err = {0};
	struct story_row s;
	int64_t a = -1, b = 0, c = 0, d = 0;

	assert_int_equal(db_decision_seq(f->db, &a, &err), 0);
	assert_int_equal(a, 0); /* a new batch alone is not shown */
	add_story(f, "s1", 0);
	assert_int_equal(db_decision_seq(f->db, &b, &err), 0);
	assert_true(b > a);
	add_story(f, "s1", 0); /* kept as is: nothing changed */
	assert_int_equal(db_decision_seq(f->db, &c, &err), 0);
	assert_int_equal(c, b);
	story_init(&s, f->batch, "s1", 0);
	s.status = STATUS_RUNNING;
	assert_int_equal(db_story_update(f->db, &s, &err), 0);
	run_attempt(f, "s1", 1, OUTCOME_CRASH, 0);
	assert_int_equal(
	    db_batch_set_status(f->db, f->batch, "stopped", 5, &err), 0);
	assert_int_equal(db_decision_seq(f->db, &d, &err), 0);
	assert_int_equal(d, c + 3);
}

static void
test_integrity_check(void **state)
{
	struct fx *f = *state;
	struct sc_err err = {0};

	add_story(f, "s1", 0);
	run_attempt(f, "s1", 1, OUTCOME_CRASH, 0);
	assert_int_equal(db_integrity_check(f->db, &err), 0);
	/* a row written behind our back without foreign keys */
	raw_exec(f->file,
	    "PRAGMA foreign_keys = OFF;"
	    "INSERT INTO events (batch_id, ts_ms, kind) VALUES (99, 1, 'x')");
	assert_int_equal(db_integrity_check(f->db, &err), SC_EIO);
	assert_non_null(strstr(err.msg, "integrity check failed"));
	assert_non_null(strstr(err.msg, "events"));
}

static void
test_tx_nesting(void **state)
{
	struct fx *f = *state;
	struct sc_err err = {0};
	struct story_row got;
	int found = 1;

	/* a rolled-back outer transaction takes the nested writes along */
	assert_int_equal(db_tx_begin(f->db, &err), 0);
	add_story(f, "s1", 0);
	run_attempt(f, "s1", 1, OUTCOME_CRASH, 0);
	db_tx_rollback(f->db);
	assert_int_equal(
	    db_story_get(f->db, &got, &found, f->batch, "s1", &err), 0);
	assert_int_equal(found, 0);
	/* a failed nested write does not spoil the outer transaction */
	assert_int_equal(db_tx_begin(f->db, &err), 0);
	add_story(f, "s2", 0);
	assert_int_equal(
	    db_batch_set_status(f->db, 999, "stopped", 1, &err), SC_EIO);
	assert_int_equal(db_tx_commit(f->db, &err), 0);
	assert_int_equal(
	    db_story_get(f->db, &got, &found, f->batch, "s2", &err), 0);
	assert_int_equal(found, 1);
	assert_int_equal(db_tx_commit(f->db, &err), SC_ESOFTWARE);
}

static void
test_fifty_thousand_attempts(void **state)
{
	struct fx *f = *state;
	struct sc_err err = {0};
	enum { STORIES = 500, PER = 100 };
	struct attempt_row r, *rows = NULL;
	struct story_row *list = NULL;
	char id[32], *plan;
	size_t n = 0;
	int i, k;

	assert_int_equal(db_tx_begin(f->db, &err), 0);
	for (i = 0; i < STORIES; i++) {
		snprintf(id, sizeof(id), "story-%03d", i);
		add_story(f, id, i);
		for (k = 1; k <= PER; k++) {
			attempt_init(&r, f->batch, id, k);
			assert_int_equal(db_attempt_begin(f->db, &r, &err), 0);
			attempt_end(
			    &r, OUTCOME_INCOMPLETE, k % 9, DECISION_RETRY);
			assert_int_equal(db_attempt_finish(
					     f->db, &r, NULL, NULL, NULL, &err),
			    0);
		}
	}
	assert_int_equal(db_tx_commit(f->db, &err), 0);
	assert_raw(f->file, "SELECT count(*) FROM attempts", "50000");

	assert_int_equal(
	    db_story_list(f->db, &list, &n, f->batch, NULL, &err), 0);
	assert_int_equal(n, STORIES);
	assert_string_equal(list[0].id, "story-000");
	assert_string_equal(list[STORIES - 1].id, "story-499");
	free(list);
	assert_int_equal(db_attempts_for_story(
			     f->db, &rows, &n, f->batch, "story-250", &err),
	    0);
	assert_int_equal(n, PER);
	for (k = 0; k < PER; k++) {
		assert_int_equal(rows[k].seq, k + 1);
		assert_int_equal(rows[k].attempt, k + 1);
		assert_string_equal(rows[k].story_id, "story-250");
	}
	attempt_rows_free(rows, n);
	/* the per-decision lookups use the (batch_id, story_id) index */
	plan = raw_plan(f->file,
	    "SELECT * FROM attempts WHERE batch_id = 1 "
	    "AND story_id = 'x' ORDER BY seq");
	assert_non_null(strstr(plan,
	    "USING INDEX attempts_by_story "
	    "(batch_id=? AND story_id=?)"));
	assert_null(strstr(plan, "TEMP B-TREE")); /* no sort */
	free(plan);
	assert_int_equal(db_integrity_check(f->db, &err), 0);
}

static void
test_free_null(void **state)
{
	db_close(NULL);
	attempt_row_release(NULL);
	attempt_rows_free(NULL, 3);
	event_rows_free(NULL, 3);
	db_tx_rollback(NULL);
	assert_true(1);
}

/* counts[] of batch f->batch, as a "pending/running/done" string */
static void
assert_counts(struct fx *f, int pending, int running, int done)
{
	int counts[STATUS__COUNT];
	struct sc_err err = {0};

	assert_int_equal(db_status_counts(f->db, counts, f->batch, &err), 0);
	assert_int_equal(counts[STATUS_PENDING], pending);
	assert_int_equal(counts[STATUS_RUNNING], running);
	assert_int_equal(counts[STATUS_DONE], done);
}

static void
test_status_counts_follow_updates(void **state)
{
	struct fx *f = *state;
	struct sc_err err = {0};
	struct story_row s;
	int found = 0;

	add_story(f, "a", 0);
	add_story(f, "b", 1);
	add_story(f, "a", 0); /* already there: not counted twice */
	assert_counts(f, 2, 0, 0);
	assert_int_equal(
	    db_story_get(f->db, &s, &found, f->batch, "a", &err), 0);
	s.status = STATUS_RUNNING;
	assert_int_equal(db_story_update(f->db, &s, &err), 0);
	assert_counts(f, 1, 1, 0);
	/* an update that keeps the status changes no count */
	s.counts.tasks_completed = 3;
	assert_int_equal(db_story_update(f->db, &s, &err), 0);
	assert_counts(f, 1, 1, 0);
	s.status = STATUS_DONE;
	assert_int_equal(db_story_update(f->db, &s, &err), 0);
	assert_counts(f, 1, 0, 1);
	/* a rolled-back change leaves the counts as they were */
	assert_int_equal(db_tx_begin(f->db, &err), 0);
	s.status = STATUS_PENDING;
	assert_int_equal(db_story_update(f->db, &s, &err), 0);
	db_tx_rollback(f->db);
	assert_counts(f, 1, 0, 1);
	/* the same as counting the rows */
	assert_raw(f->file,
	    "SELECT group_concat(status || '=' || n, ',') FROM (SELECT status,"
	    " count(*) AS n FROM stories GROUP BY status ORDER BY status)",
	    "done=1,pending=1");
}

static void
test_migration_2_counts_existing_stories(void **state)
{
	struct fx *f = *state;
	struct sc_err err = {0};
	struct story_row s;
	int found = 0;

	add_story(f, "a", 0);
	add_story(f, "b", 1);
	add_story(f, "c", 2);
	assert_int_equal(
	    db_story_get(f->db, &s, &found, f->batch, "c", &err), 0);
	s.status = STATUS_DONE;
	assert_int_equal(db_story_update(f->db, &s, &err), 0);
	db_close(f->db);
	f->db = NULL;
	/* back to a version 1 database, as an older storyctl left it */
	raw_exec(f->file,
	    "DROP TRIGGER story_counts_insert; DROP TRIGGER "
	    "story_counts_delete;"
	    " DROP TRIGGER story_counts_update; DROP TABLE story_counts;"
	    " ALTER TABLE attempts DROP COLUMN subtasks_completed;"
	    " ALTER TABLE attempts DROP COLUMN subtasks_total;"
	    " ALTER TABLE attempts DROP COLUMN session_id;"
	    " ALTER TABLE stories DROP COLUMN subtasks_completed;"
	    " ALTER TABLE stories DROP COLUMN subtasks_total;"
	    " ALTER TABLE attempts DROP COLUMN next_attempt;"
	    " ALTER TABLE attempts DROP COLUMN next_role;"
	    " ALTER TABLE attempts DROP COLUMN not_before_ms;"
	    " DROP TABLE api_keys; DROP TABLE policy_overrides;"
	    " PRAGMA user_version = 1;");
	assert_int_equal(db_open(&f->db, f->state, &err), 0);
	assert_schema_current(f->file);
	assert_counts(f, 2, 0, 1);
	add_story(f, "d", 3);
	assert_counts(f, 3, 0, 1);
}

/* Schema 3 adds subtask progress and the session id; a version 2
 * database keeps its rows, which read 0/0 and "" for the new columns,
 * and the new fields round-trip. */
static void
test_migration_3_subtasks_session(void **state)
{
	struct fx *f = *state;
	struct sc_err err = {0};
	struct story_row s;
	int found = 0;

	add_story(f, "a", 0);
	db_close(f->db);
	f->db = NULL;
	raw_exec(f->file,
	    "ALTER TABLE attempts DROP COLUMN subtasks_completed;"
	    " ALTER TABLE attempts DROP COLUMN subtasks_total;"
	    " ALTER TABLE attempts DROP COLUMN session_id;"
	    " ALTER TABLE stories DROP COLUMN subtasks_completed;"
	    " ALTER TABLE stories DROP COLUMN subtasks_total;"
	    " ALTER TABLE attempts DROP COLUMN next_attempt;"
	    " ALTER TABLE attempts DROP COLUMN next_role;"
	    " ALTER TABLE attempts DROP COLUMN not_before_ms;"
	    " DROP TABLE api_keys; DROP TABLE policy_overrides;"
	    " PRAGMA user_version = 2;");
	assert_int_equal(db_open(&f->db, f->state, &err), 0);
	assert_schema_current(f->file);
	assert_int_equal(
	    db_story_get(f->db, &s, &found, f->batch, "a", &err), 0);
	assert_int_equal(found, 1);
	assert_int_equal(s.counts.subtasks_completed, 0);
	assert_int_equal(s.counts.subtasks_total, 0);
	s.counts.subtasks_completed = 4;
	s.counts.subtasks_total = 9;
	assert_int_equal(db_story_update(f->db, &s, &err), 0);
	memset(&s, 0, sizeof(s));
	assert_int_equal(
	    db_story_get(f->db, &s, &found, f->batch, "a", &err), 0);
	assert_int_equal(s.counts.subtasks_completed, 4);
	assert_int_equal(s.counts.subtasks_total, 9);
	assert_raw(f->file,
	    "SELECT subtasks_completed || '/' || subtasks_total FROM stories"
	    " WHERE id = 'a'",
	    "4/9");
}

/* Schema 5 adds the service's keys: a version 4 database keeps its
 * rows and gets an empty api_keys table; a key round-trips, a taken name
 * is SC_EUSAGE and revoke removes it (docs/api.md#keys). */
static void
test_migration_5_api_keys(void **state)
{
	struct fx *f = *state;
	struct sc_err err = {0};
	struct key_row k, *rows = NULL;
	size_t n = 9;
	int found = 0;

	add_story(f, "a", 0);
	db_close(f->db);
	f->db = NULL;
	raw_exec(f->file,
	    "DROP TABLE api_keys; DROP TABLE policy_overrides;"
	    " PRAGMA user_version = 4;");
	assert_int_equal(db_open(&f->db, f->state, &err), 0);
	assert_schema_current(f->file);
	assert_raw(f->file, "SELECT count(*) FROM stories", "1");
	assert_int_equal(db_key_list(f->db, &rows, &n, &err), 0);
	assert_int_equal(n, 0);
	free(rows);
	memset(&k, 0, sizeof(k));
	strcpy(k.name, "ci");
	memset(k.sha256, 'a', 64);
	k.write = true;
	k.created_ms = 1234;
	assert_int_equal(db_key_add(f->db, &k, &err), 0);
	k.sha256[0] = 'b'; /* another key, the same name */
	assert_int_equal(db_key_add(f->db, &k, &err), SC_EUSAGE);
	assert_non_null(strstr(err.msg, "a key named ci exists"));
	assert_raw(f->file,
	    "SELECT name || '/' || scope || '/' || created_ms"
	    " FROM api_keys",
	    "ci/write/1234");
	assert_int_equal(db_key_list(f->db, &rows, &n, &err), 0);
	assert_int_equal(n, 1);
	assert_string_equal(rows[0].name, "ci");
	assert_int_equal(rows[0].write, 1);
	assert_int_equal(strlen(rows[0].sha256), 64);
	free(rows);
	assert_int_equal(db_key_revoke(f->db, "ci", &found, &err), 0);
	assert_int_equal(found, 1);
	assert_int_equal(db_key_revoke(f->db, "ci", &found, &err), 0);
	assert_int_equal(found, 0);
	assert_raw(f->file, "SELECT count(*) FROM api_keys", "0");
}

/* Schema 6 adds the retry-policy overrides; a version 5 database keeps
 * its rows, and put/get/del round-trip with their events. */
static void
test_migration_6_policy_overrides(void **state)
{
	struct fx *f = *state;
	struct sc_err err = {0};
	struct policy_row p, got;
	char *bb = NULL, *sb = NULL;
	int found = 9;

	add_story(f, "a", 0);
	db_close(f->db);
	f->db = NULL;
	raw_exec(
	    f->file, "DROP TABLE policy_overrides; PRAGMA user_version = 5;");
	assert_int_equal(db_open(&f->db, f->state, &err), 0);
	assert_schema_current(f->file);
	assert_raw(f->file, "SELECT count(*) FROM stories", "1");
	assert_int_equal(db_policy_get(f->db, &got, &found, "a", &err), 0);
	assert_int_equal(found, 0);
	memset(&p, 0, sizeof(p));
	strcpy(p.scope, "a");
	p.body = "{\"max_retries\":0}";
	p.created_ms = 77;
	strcpy(p.key_name, "ci");
	assert_int_equal(db_policy_put(f->db, &p, f->batch, &err), 0);
	strcpy(p.scope, DB_POLICY_BATCH);
	p.body = "{\"base_delay_ms\":5}";
	assert_int_equal(db_policy_put(f->db, &p, f->batch, &err), 0);
	assert_int_equal(db_policy_get(f->db, &got, &found, "a", &err), 0);
	assert_int_equal(found, 1);
	assert_string_equal(got.body, "{\"max_retries\":0}");
	assert_string_equal(got.key_name, "ci");
	assert_int_equal(got.created_ms, 77);
	free(got.body);
	assert_int_equal(db_policy_for_story(f->db, &bb, &sb, "a", &err), 0);
	assert_string_equal(bb, "{\"base_delay_ms\":5}");
	assert_string_equal(sb, "{\"max_retries\":0}");
	free(bb);
	free(sb);
	assert_raw(
	    f->file, "SELECT count(*) FROM events WHERE kind = 'policy'", "2");
	assert_int_equal(
	    db_policy_del(f->db, &found, "a", f->batch, 78, &err), 0);
	assert_int_equal(found, 1);
	assert_int_equal(
	    db_policy_del(f->db, &found, "a", f->batch, 79, &err), 0);
	assert_int_equal(found, 0);
	assert_int_equal(db_policy_for_story(f->db, &bb, &sb, "a", &err), 0);
	assert_non_null(bb);
	assert_null(sb);
	free(bb);
	assert_raw(
	    f->file, "SELECT count(*) FROM events WHERE kind = 'policy'", "3");
}

/* A failure reported from outside storyctl, as the service stores it. */
static void
failure_init(struct failure_row *f, int64_t batch, const char *story,
    int64_t at, const char *msg)
{
	memset(f, 0, sizeof(*f));
	f->batch_id = batch;
	snprintf(f->story_id, sizeof(f->story_id), "%s", story);
	f->created_ms = at;
	strcpy(f->key_name, "ci");
	f->error_code = ERRC_CRASH;
	f->error_message = (char *)msg;
	f->exit_code = -1;
}

/* Schema 7 adds the failures reported from outside storyctl; a version
 * 6 database keeps its rows, and a failure round-trips with its place
 * among the attempts, its unknowns as NULL and the decision counter
 * bumped. */
static void
test_migration_7_external_failures(void **state)
{
	struct fx *f = *state;
	struct sc_err err = {0};
	struct failure_row x, *rows = NULL;
	int64_t seq0 = 0, seq1 = 0;
	size_t n = 9;

	add_story(f, "a", 0);
	run_attempt(f, "a", 1, OUTCOME_CRASH, 2);
	db_close(f->db);
	f->db = NULL;
	raw_exec(
	    f->file, "DROP TABLE external_failures; PRAGMA user_version = 6;");
	assert_int_equal(db_open(&f->db, f->state, &err), 0);
	assert_raw(f->file, "PRAGMA user_version", SCHEMA_TEXT);
	assert_raw(f->file, "SELECT count(*) FROM attempts", "1");
	assert_int_equal(
	    db_failures_for_story(f->db, &rows, &n, f->batch, "a", false, &err),
	    0);
	assert_int_equal(n, 0);
	assert_null(rows);
	assert_int_equal(db_decision_seq(f->db, &seq0, &err), 0);
	failure_init(&x, f->batch, "a", 5000, "CI run 7 failed");
	x.http_status = 502;
	x.signal = 9;
	strcpy(x.agent_id, "ci-bot");
	assert_int_equal(db_failure_add(f->db, &x, &err), 0);
	assert_true(x.id > 0);
	assert_int_equal(x.after_seq, 1);
	assert_int_equal(db_decision_seq(f->db, &seq1, &err), 0);
	assert_int_equal(seq1, seq0 + 1);
	assert_raw(f->file,
	    "SELECT coalesce(attempt_number, 'null') || '/' ||"
	    " coalesce(exit_code, 'null') || '/' || http_status || '/' ||"
	    " signal || '/' || error_code || '/' || key_name"
	    " FROM external_failures",
	    "null/null/502/9/CRASH/ci");
	assert_int_equal(
	    db_failures_for_story(f->db, &rows, &n, f->batch, "a", false, &err),
	    0);
	assert_int_equal(n, 1);
	assert_int_equal(rows[0].id, x.id);
	assert_string_equal(rows[0].error_message, "CI run 7 failed");
	assert_string_equal(rows[0].agent_id, "ci-bot");
	assert_int_equal(rows[0].error_code, ERRC_CRASH);
	assert_int_equal(rows[0].exit_code, -1);
	assert_int_equal(rows[0].attempt_number, 0);
	assert_int_equal(rows[0].created_ms, 5000);
	assert_int_equal(rows[0].resolved_ms, 0);
	failure_rows_free(rows, n);
	/* a story the batch does not have is refused (foreign key) */
	failure_init(&x, f->batch, "nope", 5001, "");
	assert_int_equal(db_failure_add(f->db, &x, &err), SC_EIO);
	assert_raw(f->file, "SELECT count(*) FROM external_failures", "1");
}

/* A reported failure is resolved by the first later attempt that
 * succeeds, not by an earlier one nor a later failure; open_only lists
 * the unresolved ones. */
static void
test_failure_resolved_by_later_success(void **state)
{
	struct fx *f = *state;
	struct sc_err err = {0};
	struct failure_row x, y, *rows = NULL;
	struct attempt_row r;
	size_t n = 0;

	add_story(f, "a", 0);
	run_attempt(f, "a", 1, OUTCOME_SUCCESS, 9);
	failure_init(&x, f->batch, "a", 6000, "first");
	assert_int_equal(db_failure_add(f->db, &x, &err), 0);
	run_attempt(f, "a", 2, OUTCOME_CRASH, 9);
	assert_int_equal(
	    db_failures_for_story(f->db, &rows, &n, f->batch, "a", true, &err),
	    0);
	assert_int_equal(n, 1);
	failure_rows_free(rows, n);
	attempt_init(&r, f->batch, "a", 3);
	assert_int_equal(db_attempt_begin(f->db, &r, &err), 0);
	attempt_end(&r, OUTCOME_SUCCESS, 9, DECISION_DONE);
	r.ended_ms = 7777;
	assert_int_equal(
	    db_attempt_finish(f->db, &r, NULL, NULL, NULL, &err), 0);
	failure_init(&y, f->batch, "a", 8000, "second");
	assert_int_equal(db_failure_add(f->db, &y, &err), 0);
	assert_int_equal(y.after_seq, 3);
	assert_int_equal(
	    db_failures_for_story(f->db, &rows, &n, f->batch, "a", false, &err),
	    0);
	assert_int_equal(n, 2);
	assert_int_equal(rows[0].resolved_ms, 7777);
	assert_int_equal(rows[1].resolved_ms, 0);
	failure_rows_free(rows, n);
	assert_int_equal(
	    db_failures_for_story(f->db, &rows, &n, f->batch, "a", true, &err),
	    0);
	assert_int_equal(n, 1);
	assert_string_equal(rows[0].error_message, "second");
	failure_rows_free(rows, n);
}

/* The failures and policy overrides every decision reads come from
 * statements kept prepared across calls: each read is of its own story
 * and sees what another connection (the service) wrote since the last
 * one, and a read that stopped early does not stick to the next. */
static void
test_kept_statements_read_fresh(void **state)
{
	struct fx *f = *state;
	struct sc_err err = {0};
	struct db *other = NULL;
	struct failure_row x, *rows = NULL;
	struct policy_row p, got;
	char *bb = NULL, *sb = NULL;
	size_t n = 9;
	int found = 9;

	add_story(f, "a", 0);
	add_story(f, "b", 1);
	assert_int_equal(db_open(&other, f->state, &err), 0);
	assert_int_equal(
	    db_failures_for_story(f->db, &rows, &n, f->batch, "a", false, &err),
	    0);
	assert_int_equal(n, 0);
	failure_init(&x, f->batch, "a", 5000, "from the service");
	assert_int_equal(db_failure_add(other, &x, &err), 0);
	failure_init(&x, f->batch, "a", 5001, "again");
	assert_int_equal(db_failure_add(other, &x, &err), 0);
	assert_int_equal(
	    db_failures_for_story(f->db, &rows, &n, f->batch, "a", false, &err),
	    0);
	assert_int_equal(n, 2);
	assert_string_equal(rows[1].error_message, "again");
	failure_rows_free(rows, n);
	assert_int_equal(
	    db_failures_for_story(f->db, &rows, &n, f->batch, "b", false, &err),
	    0);
	assert_int_equal(n, 0);
	assert_int_equal(db_policy_get(f->db, &got, &found, "a", &err), 0);
	assert_int_equal(found, 0);
	memset(&p, 0, sizeof(p));
	strcpy(p.scope, "a");
	p.body = "{\"max_retries\":1}";
	strcpy(p.key_name, "ci");
	assert_int_equal(db_policy_put(other, &p, f->batch, &err), 0);
	assert_int_equal(db_policy_get(f->db, &got, &found, "a", &err), 0);
	assert_int_equal(found, 1);
	assert_string_equal(got.body, "{\"max_retries\":1}");
	free(got.body);
	assert_int_equal(db_policy_for_story(f->db, &bb, &sb, "b", &err), 0);
	assert_null(bb);
	assert_null(sb);
	/* the get above stopped at its row: left so, it would keep this
	 * connection's read snapshot from before the next write */
	p.body = "{\"max_retries\":2}";
	assert_int_equal(db_policy_put(other, &p, f->batch, &err), 0);
	assert_int_equal(db_policy_for_story(f->db, &bb, &sb, "a", &err), 0);
	assert_null(bb);
	assert_string_equal(sb, "{\"max_retries\":2}");
	free(sb);
	db_close(other);
}

/* The reopen counter counts from 0, one step per bump. */
static void
test_reopen_counter(void **state)
{
	struct fx *f = *state;
	struct sc_err err = {0};
	int64_t v = -1;

	assert_int_equal(db_reopen_seq(f->db, &v, &err), 0);
	assert_int_equal(v, 0);
	assert_int_equal(db_reopen_bump(f->db, &err), 0);
	assert_int_equal(db_reopen_bump(f->db, &err), 0);
	assert_int_equal(db_reopen_seq(f->db, &v, &err), 0);
	assert_int_equal(v, 2);
}

/* Schema 4 stores the decision's next attempt with the attempt; a
 * version 3 database keeps its rows, which read "no stored decision"
 * (0), and the new fields round-trip, NULL when there is no next. */
static void
test_migration_4_next_attempt(void **state)
{
	struct fx *f = *state;
	struct sc_err err = {0};
	struct attempt_row r, *rows = NULL, last;
	size_t n = 0;
	int found = 0;

	add_story(f, "a", 0);
	run_attempt(f, "a", 1, OUTCOME_CRASH, 2);
	db_close(f->db);
	f->db = NULL;
	raw_exec(f->file,
	    "ALTER TABLE attempts DROP COLUMN next_attempt;"
	    " ALTER TABLE attempts DROP COLUMN next_role;"
	    " ALTER TABLE attempts DROP COLUMN not_before_ms;"
	    " DROP TABLE api_keys; DROP TABLE policy_overrides;"
	    " PRAGMA user_version = 3;");
	assert_int_equal(db_open(&f->db, f->state, &err), 0);
	assert_schema_current(f->file);
	assert_raw(f->file,
	    "SELECT coalesce(next_attempt, 'null') || coalesce(next_role, "
	    "'null') || coalesce(not_before_ms, 'null') FROM attempts",
	    "nullnullnull");
	assert_int_equal(
	    db_attempts_for_story(f->db, &rows, &n, f->batch, "a", &err), 0);
	assert_int_equal(n, 1);
	assert_int_equal(rows[0].next_attempt, 0);
	assert_int_equal(rows[0].not_before_ms, 0);
	attempt_rows_free(rows, n);

	/* a retry decision carries its next attempt */
	attempt_init(&r, f->batch, "a", 2);
	assert_int_equal(db_attempt_begin(f->db, &r, &err), 0);
	attempt_end(&r, OUTCOME_TIMEOUT, 3, DECISION_RETRY);
	r.ended_ms = 5000;
	r.delay_ms = 700;
	r.next_attempt = 3;
	r.next_role = ROLE_FALLBACK;
	r.not_before_ms = 5700;
	assert_int_equal(
	    db_attempt_finish(f->db, &r, NULL, NULL, NULL, &err), 0);
	assert_raw(f->file,
	    "SELECT next_attempt || '/' || next_role || '/' || not_before_ms"
	    " FROM attempts WHERE attempt = 2",
	    "3/fallback/5700");
	assert_int_equal(db_attempt_last(f->db, &last, &found, f->batch, "a", 0,
			     false, &err),
	    0);
	assert_int_equal(found, 1);
	assert_int_equal(last.attempt, 2);
	assert_int_equal(last.next_attempt, 3);
	assert_int_equal(last.next_role, ROLE_FALLBACK);
	assert_int_equal(last.not_before_ms, 5700);
	attempt_row_release(&last);
	/* after the last row's seq there is none */
	assert_int_equal(db_attempt_last(f->db, &last, &found, f->batch, "a", 2,
			     false, &err),
	    0);
	assert_int_equal(found, 0);
	/* an uncounted rerun: the last counted row is read past it */
	attempt_init(&r, f->batch, "a", 3);
	assert_int_equal(db_attempt_begin(f->db, &r, &err), 0);
	attempt_end(&r, OUTCOME_INTERRUPTED, 3, DECISION_NONE);
	assert_int_equal(
	    db_attempt_finish(f->db, &r, NULL, NULL, NULL, &err), 0);
	assert_raw(f->file,
	    "SELECT coalesce(next_role, 'null') FROM attempts WHERE attempt = "
	    "3",
	    "null");
	assert_int_equal(
	    db_attempt_last(f->db, &last, &found, f->batch, "a", 0, true, &err),
	    0);
	assert_int_equal(found, 1);
	assert_int_equal(last.attempt, 2);
	attempt_row_release(&last);
}

static void
test_group_commit_flags(void **state)
{
	struct fx *f = *state;
	struct sc_err err = {0};
	struct attempt_row r;
	struct db_info info;

	add_story(f, "a", 0);
	attempt_init(&r, f->batch, "a", 1);
	assert_int_equal(db_attempt_begin(f->db, &r, &err), 0);
	assert_false(db_unsynced(f->db));
	attempt_end(&r, OUTCOME_CRASH, 1, DECISION_RETRY);
	db_defer_sync(f->db);
	assert_int_equal(
	    db_attempt_finish(f->db, &r, NULL, NULL, NULL, &err), 0);
	assert_true(db_unsynced(f->db));
	/* back to FULL for everything else */
	assert_int_equal(db_info(f->db, &info, &err), 0);
	assert_int_equal(info.synchronous, 2);
	assert_int_equal(db_flush(f->db, &err), 0);
	assert_false(db_unsynced(f->db));
	assert_int_equal(db_flush(f->db, &err), 0);

	/* the next FULL commit that writes makes it durable too */
	attempt_init(&r, f->batch, "a", 2);
	assert_int_equal(db_attempt_begin(f->db, &r, &err), 0);
	attempt_end(&r, OUTCOME_CRASH, 1, DECISION_RETRY);
	db_defer_sync(f->db);
	assert_int_equal(
	    db_attempt_finish(f->db, &r, NULL, NULL, NULL, &err), 0);
	assert_true(db_unsynced(f->db));
	/* an empty transaction writes nothing and syncs nothing */
	assert_int_equal(db_tx_begin(f->db, &err), 0);
	assert_int_equal(db_tx_commit(f->db, &err), 0);
	assert_true(db_unsynced(f->db));
	attempt_init(&r, f->batch, "a", 3);
	assert_int_equal(db_attempt_begin(f->db, &r, &err), 0);
	assert_false(db_unsynced(f->db));
	/* a plain finish is FULL, and a defer is used up by one finish */
	attempt_end(&r, OUTCOME_CRASH, 1, DECISION_RETRY);
	assert_int_equal(
	    db_attempt_finish(f->db, &r, NULL, NULL, NULL, &err), 0);
	assert_false(db_unsynced(f->db));
	assert_raw(f->file,
	    "SELECT count(*) FROM attempts WHERE outcome = 'crash'", "3");
}

static void
test_batch_spend(void **state)
{
	struct fx *f = *state;
	struct sc_err err = {0};
	struct story_row s;
	double usd = -1;

	assert_int_equal(db_batch_spend(f->db, &usd, f->batch, &err), 0);
	assert_true(usd == 0);
	story_init(&s, f->batch, "a", 0);
	s.cost_usd = 0.25;
	assert_int_equal(db_story_add(f->db, &s, &err), 0);
	story_init(&s, f->batch, "b", 1);
	s.cost_usd = 1.5;
	assert_int_equal(db_story_add(f->db, &s, &err), 0);
	assert_int_equal(db_batch_spend(f->db, &usd, f->batch, &err), 0);
	assert_true(usd > 1.7499 && usd < 1.7501);
	assert_int_equal(db_batch_spend(f->db, &usd, f->batch + 7, &err), 0);
	assert_true(usd == 0);
}

static void
test_story_lines(void **state)
{
	struct fx *f = *state;
	struct sc_err err = {0};
	struct story_line *l = NULL;
	struct story_row s;
	char *text = NULL;
	size_t n = 9;
	int found = 0;

	add_story(f, "c", 2);
	add_story(f, "a", 0);
	add_story(f, "b", 1);
	assert_int_equal(
	    db_story_get(f->db, &s, &found, f->batch, "b", &err), 0);
	s.status = STATUS_DEFERRED;
	s.attempts = 4;
	s.counts.tasks_completed = 5;
	s.counts.subtasks_completed = 11;
	s.counts.subtasks_total = 20;
	snprintf(s.reason, sizeof(s.reason), "D8: plateau | at 5/9");
	snprintf(s.last_agent, sizeof(s.last_agent), "codex");
	s.last_outcome = OUTCOME_INCOMPLETE;
	assert_int_equal(db_story_update(f->db, &s, &err), 0);
	/* positions 1 and 2 only, in position order */
	assert_int_equal(
	    db_story_lines(f->db, &l, &text, &n, f->batch, 1, 2, &err), 0);
	assert_int_equal(n, 2);
	assert_string_equal(l[0].id, "b");
	assert_int_equal(l[0].position, 1);
	assert_int_equal(l[0].status, STATUS_DEFERRED);
	assert_int_equal(l[0].attempts, 4);
	assert_int_equal(l[0].counts.tasks_completed, 5);
	assert_int_equal(l[0].counts.tasks_total, 9);
	assert_int_equal(l[0].counts.subtasks_completed, 11);
	assert_int_equal(l[0].counts.subtasks_total, 20);
	assert_string_equal(l[0].last_agent, "codex");
	assert_int_equal(l[0].last_outcome, OUTCOME_INCOMPLETE);
	assert_string_equal(l[0].reason, "D8: plateau | at 5/9");
	assert_string_equal(l[1].id, "c");
	assert_int_equal(l[1].status, STATUS_PENDING);
	assert_int_equal(l[1].last_outcome, OUTCOME_NONE);
	assert_string_equal(l[1].last_agent, "");
	assert_int_equal(l[1].counts.subtasks_total, 0);
	free(l);
	free(text);
	/* an empty range */
	assert_int_equal(
	    db_story_lines(f->db, &l, &text, &n, f->batch, 3, 200, &err), 0);
	assert_int_equal(n, 0);
	assert_null(l);
	assert_null(text);
}

/* Stories that share a position come in id order (bytes, as sqlite's
 * ORDER BY position, id has them), whatever order they were added in,
 * between the positions before and after them. */
static void
test_story_lines_ties_by_id(void **state)
{
	struct fx *f = *state;
	struct sc_err err = {0};
	struct story_line *l = NULL;
	char *text = NULL, got[128] = "";
	size_t n = 0, i;

	add_story(f, "y2", 2);
	add_story(f, "a\xc3\xa9", 1);
	add_story(f, "b", 1);
	add_story(f, "c2", 2);
	add_story(f, "z0", 0);
	add_story(f, "ab", 1);
	add_story(f, "a3", 3);
	assert_int_equal(
	    db_story_lines(f->db, &l, &text, &n, f->batch, 0, 10, &err), 0);
	assert_int_equal(n, 7);
	for (i = 0; i < n; i++) {
		strcat(got, i > 0 ? "," : "");
		strcat(got, l[i].id);
	}
	assert_string_equal(got, "z0,ab,a\xc3\xa9,b,c2,y2,a3");
	assert_raw(f->file,
	    "SELECT group_concat(id, ',') FROM (SELECT id FROM stories"
	    " ORDER BY position, id)",
	    got);
	free(l);
	free(text);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(
		test_open_creates_private_files, setup_bare, teardown),
	    cmocka_unit_test_setup_teardown(
		test_open_tightens_loose_modes, setup_bare, teardown),
	    cmocka_unit_test_setup_teardown(
		test_dir_prepare_parents, setup_bare, teardown),
	    cmocka_unit_test_setup_teardown(
		test_open_settings, setup, teardown),
	    cmocka_unit_test_setup_teardown(
		test_reopen_keeps_data, setup, teardown),
	    cmocka_unit_test_setup_teardown(
		test_open_refuses_newer_schema, setup, teardown),
	    cmocka_unit_test_setup_teardown(
		test_open_errors_name_the_file, setup_bare, teardown),
	    cmocka_unit_test_setup_teardown(
		test_batch_lifecycle, setup, teardown),
	    cmocka_unit_test_setup_teardown(
		test_story_add_keeps_existing, setup, teardown),
	    cmocka_unit_test_setup_teardown(
		test_story_get_update, setup, teardown),
	    cmocka_unit_test_setup_teardown(
		test_story_list_and_counts, setup, teardown),
	    cmocka_unit_test_setup_teardown(
		test_attempt_begin_durable_and_visible, setup, teardown),
	    cmocka_unit_test_setup_teardown(
		test_attempt_finish_writes_all_three, setup, teardown),
	    cmocka_unit_test_setup_teardown(
		test_attempt_finish_is_atomic, setup, teardown),
	    cmocka_unit_test_setup_teardown(
		test_attempt_rerun_same_number, setup, teardown),
	    cmocka_unit_test_setup_teardown(
		test_attempt_fields_round_trip, setup, teardown),
	    cmocka_unit_test_setup_teardown(
		test_attempt_needs_story, setup, teardown),
	    cmocka_unit_test_setup_teardown(
		test_attempts_running_any_batch, setup, teardown),
	    cmocka_unit_test_setup_teardown(
		test_attempt_briefs, setup, teardown),
	    cmocka_unit_test_setup_teardown(
		test_attempt_pid_and_heartbeat, setup, teardown),
	    cmocka_unit_test_setup_teardown(
		test_events_after_id, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_events_page, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_meta_get_set, setup, teardown),
	    cmocka_unit_test_setup_teardown(
		test_decision_seq_grows, setup, teardown),
	    cmocka_unit_test_setup_teardown(
		test_integrity_check, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_tx_nesting, setup, teardown),
	    cmocka_unit_test_setup_teardown(
		test_fifty_thousand_attempts, setup, teardown),
	    cmocka_unit_test_setup_teardown(
		test_status_counts_follow_updates, setup, teardown),
	    cmocka_unit_test_setup_teardown(
		test_migration_2_counts_existing_stories, setup, teardown),
	    cmocka_unit_test_setup_teardown(
		test_migration_3_subtasks_session, setup, teardown),
	    cmocka_unit_test_setup_teardown(
		test_migration_4_next_attempt, setup, teardown),
	    cmocka_unit_test_setup_teardown(
		test_migration_5_api_keys, setup, teardown),
	    cmocka_unit_test_setup_teardown(
		test_migration_6_policy_overrides, setup, teardown),
	    cmocka_unit_test_setup_teardown(
		test_migration_7_external_failures, setup, teardown),
	    cmocka_unit_test_setup_teardown(
		test_failure_resolved_by_later_success, setup, teardown),
	    cmocka_unit_test_setup_teardown(
		test_kept_statements_read_fresh, setup, teardown),
	    cmocka_unit_test_setup_teardown(
		test_story_lines_ties_by_id, setup, teardown),
	    cmocka_unit_test_setup_teardown(
		test_reopen_counter, setup, teardown),
	    cmocka_unit_test_setup_teardown(
		test_group_commit_flags, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_batch_spend, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_story_lines, setup, teardown),
	    cmocka_unit_test(test_free_null),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
