/* db_failure.c - see db.h: failures recorded from outside storyctl
 * (docs/api.md#failure-records) and the counter by which a running
 * controller sees a story reopened by another process
 * (docs/api.md#while-a-batch-runs). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "state/db_int.h"

/* The columns db_failures_for_story() reads, in read_row()'s order; the
 * last is when the first successful attempt after the failure ended. */
#define FAILURE_COLS \
	"f.id, f.batch_id, f.story_id, f.after_seq, f.created_ms," \
	" f.key_name, f.agent_id, f.attempt_number, f.error_code," \
	" f.error_message, f.retry_scheduled_ms, f.http_status," \
	" f.exit_code, f.signal," \
	" (SELECT a.ended_ms FROM attempts a" \
	"   WHERE a.batch_id = f.batch_id AND a.story_id = f.story_id" \
	"   AND a.seq > f.after_seq AND a.outcome = 'success'" \
	"   ORDER BY a.seq LIMIT 1) AS resolved_ms"

void
failure_rows_free(struct failure_row *rows, size_t n)
{
	size_t i;

	if (rows == NULL)
		return;
	for (i = 0; i < n; i++)
		free(rows[i].error_message);
	free(rows);
}

/* The story's last attempt row (0: none yet), which the failure comes
 * after. */
static int
last_seq(
    struct db *db, int *out, const struct failure_row *f, struct sc_err *err)
{
	sqlite3_stmt *st = NULL;
	int ret = 0;

	*out = 0;
	if (sqlite3_prepare_v2(db->h,
		"SELECT coalesce(max(seq), 0) FROM attempts"
		" WHERE batch_id = ?1 AND story_id = ?2",
		-1, &st, NULL) != SQLITE_OK ||
	    sqlite3_bind_int64(st, 1, f->batch_id) != SQLITE_OK ||
	    sqlite3_bind_text(st, 2, f->story_id, -1, SQLITE_STATIC) !=
		SQLITE_OK ||
	    sqlite3_step(st) != SQLITE_ROW)
		ret = db_fail(db, err, "cannot read the attempts of story %s",
		    f->story_id);
	else
		*out = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	return ret;
}

static int
insert_row(struct db *db, struct failure_row *f, struct sc_err *err)
{
	sqlite3_stmt *st = NULL;
	struct db_bind b = {0};
	int ret;

	if (sqlite3_prepare_v2(db->h,
		"INSERT INTO external_failures (batch_id, story_id,"
		" after_seq, created_ms, key_name, agent_id, attempt_number,"
		" error_code, error_message, retry_scheduled_ms, http_status,"
		" exit_code, signal)"
		" VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
		-1, &st, NULL) != SQLITE_OK) {
		ret = db_fail(db, err, "cannot record the failure of story %s",
		    f->story_id);
		goto out;
	}
	b.st = st;
	db_bind_int(&b, f->batch_id);
	db_bind_str(&b, f->story_id);
	db_bind_int(&b, f->after_seq);
	db_bind_int(&b, f->created_ms);
	db_bind_str(&b, f->key_name);
	db_bind_str_or_null(&b, f->agent_id, sizeof(f->agent_id));
	db_bind_int_or_null(&b, f->attempt_number, 0);
	db_bind_str(&b, errcode_name(f->error_code));
	db_bind_str(&b, f->error_message ? f->error_message : "");
	db_bind_int_or_null(&b, f->retry_scheduled_ms, 0);
	db_bind_int_or_null(&b, f->http_status, 0);
	db_bind_int_or_null(&b, f->exit_code, -1);
	db_bind_int_or_null(&b, f->signal, 0);
	if ((ret = db_bind_check(db, &b, err)) < 0)
		goto out;
	if (sqlite3_step(st) != SQLITE_DONE) {
		ret = db_fail(db, err, "cannot record the failure of story %s",
		    f->story_id);
		goto out;
	}
	f->id = sqlite3_last_insert_rowid(db->h);
out:
	sqlite3_finalize(st);
	return ret;
}

int
db_failure_add(struct db *db, struct failure_row *f, struct sc_err *err)
{
	int ret;

	f->resolved_ms = 0;
	if ((ret = db_tx_begin(db, err)) < 0)
		return ret;
	ret = last_seq(db, &f->after_seq, f, err);
	if (ret == 0)
		ret = insert_row(db, f, err);
	/* stories/<id>.json shows the failure (docs/state-branch.md) */
	if (ret == 0)
		ret = db_seq_bump(db, err);
	if (ret == 0)
		return db_tx_commit(db, err);
	db_tx_rollback(db);
	return ret;
}

/* Row st into *f; SC_EIO for an error code this storyctl does not
 * know (the file is not its own). */
static int
read_row(
    struct db *db, sqlite3_stmt *st, struct failure_row *f, struct sc_err *err)
{
	const char *code = (const char *)sqlite3_column_text(st, 8);

	memset(f, 0, sizeof(*f));
	f->id = sqlite3_column_int64(st, 0);
	f->batch_id = sqlite3_column_int64(st, 1);
	db_col_copy(st, 2, f->story_id, sizeof(f->story_id));
	f->after_seq = (int)db_col_int(st, 3, 0);
	f->created_ms = db_col_int(st, 4, 0);
	db_col_copy(st, 5, f->key_name, sizeof(f->key_name));
	db_col_copy(st, 6, f->agent_id, sizeof(f->agent_id));
	f->attempt_number = (int)db_col_int(st, 7, 0);
	f->retry_scheduled_ms = db_col_int(st, 10, 0);
	f->http_status = (int)db_col_int(st, 11, 0);
	f->exit_code = (int)db_col_int(st, 12, -1);
	f->signal = (int)db_col_int(st, 13, 0);
	f->resolved_ms = db_col_int(st, 14, 0);
	if (code == NULL || errcode_parse(&f->error_code, code) < 0)
		return err_set(err, SC_EIO,
		    "%s: failure %" PRId64 " has an unknown error code",
		    db->path, f->id);
	if ((f->error_message = db_col_dup(st, 9)) == NULL)
		return db_oom(db, err);
	return 0;
}

int
db_failures_for_story(struct db *db, struct failure_row **out, size_t *n,
    int64_t batch_id, const char *story_id, bool open_only, struct sc_err *err)
{
	sqlite3_stmt *st = NULL;
	struct failure_row *rows = NULL;
	size_t alloc = 0, got = 0;
	int rc, ret = 0;

	*out = NULL;
	*n = 0;
	/* every decision reads them (the state branch, the next start) */
	if ((ret = db_prep_sql(db, &st, SQL_FAILURES_FOR_STORY,
		 "SELECT * FROM (SELECT " FAILURE_COLS
		 " FROM external_failures f"
		 " WHERE f.batch_id = ?1 AND f.story_id = ?2)"
		 " WHERE ?3 = 0 OR resolved_ms IS NULL ORDER BY 1",
		 err)) < 0)
		goto out;
	if (sqlite3_bind_int64(st, 1, batch_id) != SQLITE_OK ||
	    sqlite3_bind_text(st, 2, story_id, -1, SQLITE_STATIC) !=
		SQLITE_OK ||
	    sqlite3_bind_int(st, 3, open_only) != SQLITE_OK) {
		ret = db_fail(
		    db, err, "cannot read the failures of story %s", story_id);
		goto out;
	}
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (db_grow((void **)&rows, &alloc, got, sizeof(*rows)) < 0) {
			ret = db_oom(db, err);
			goto out;
		}
		ret = read_row(db, st, &rows[got], err);
		got++;
		if (ret < 0)
			goto out;
	}
	if (rc != SQLITE_DONE)
		ret = db_fail(
		    db, err, "cannot read the failures of story %s", story_id);
out:
	db_done(st);
	if (ret < 0) {
		failure_rows_free(rows, got);
		rows = NULL;
		got = 0;
	}
	*out = rows;
	*n = got;
	return ret;
}

int
db_reopen_bump(struct db *db, struct sc_err *err)
{
	sqlite3_stmt *st = NULL;
	int ret = 0;

	/* one statement, so that two writers at once both count */
	if (sqlite3_prepare_v2(db->h,
		"INSERT INTO meta (key, value) VALUES ('" DB_META_REOPEN_SEQ
		"', '1') ON CONFLICT (key) DO UPDATE"
		" SET value = CAST(value AS INTEGER) + 1",
		-1, &st, NULL) != SQLITE_OK ||
	    sqlite3_step(st) != SQLITE_DONE)
		ret = db_fail(db, err, "cannot bump the reopen counter");
	sqlite3_finalize(st);
	return ret;
}

int
db_reopen_seq(struct db *db, int64_t *out, struct sc_err *err)
{
	char *val = NULL;
	int ret;

	*out = 0;
	ret = db_meta_get(db, DB_META_REOPEN_SEQ, &val, err);
	if (ret == 0 && val != NULL)
		*out = strtoll(val, NULL, 10);
	free(val);
	return ret;
}
