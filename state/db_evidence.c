/* db_evidence.c - see db_evidence.h: the attempt_evidence table
 * (docs/state.md#attempt-evidence). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "state/db_evidence.h"
#include "state/db_int.h"

#define EVIDENCE_COLS \
	"e.attempt_id, a.seq, e.measured, e.not_measured, e.base_tree, " \
	"e.files_changed, e.lines_added, e.lines_removed, e.files, " \
	"e.ticked, e.unticked, e.first_unticked, e.ticked_without_change"

static void
bind_fig(struct db_bind *b, const struct evidence_row *e, int v)
{
	if (e->measured)
		db_bind_int(b, v);
	else
		db_bind_null(b);
}

static int
ev_insert(struct db *db, const struct evidence_row *e, struct sc_err *err)
{
	sqlite3_stmt *st = NULL;
	struct db_bind b = {0};
	int ret;

	if ((ret = db_prep_sql(db, &st, SQL_EVIDENCE_PUT,
		 "INSERT OR REPLACE INTO attempt_evidence (attempt_id,"
		 " measured, not_measured, base_tree, files_changed,"
		 " lines_added, lines_removed, files, ticked, unticked,"
		 " first_unticked, ticked_without_change)"
		 " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
		 err)) < 0)
		return ret;
	b.st = st;
	db_bind_int(&b, e->attempt_id);
	db_bind_int(&b, e->measured ? 1 : 0);
	db_bind_str_or_null(&b, e->not_measured, sizeof(e->not_measured));
	db_bind_str_or_null(&b, e->base_tree, sizeof(e->base_tree));
	bind_fig(&b, e, e->files_changed);
	bind_fig(&b, e, e->lines_added);
	bind_fig(&b, e, e->lines_removed);
	db_bind_str(&b, e->files);
	db_bind_int(&b, e->ticked);
	db_bind_int(&b, e->unticked);
	db_bind_str_or_null(&b, e->first_unticked, sizeof(e->first_unticked));
	db_bind_int(&b, e->ticked_without_change ? 1 : 0);
	if ((ret = db_bind_check(db, &b, err)) == 0)
		ret = db_step_done(db, st, err,
		    "cannot record the evidence of attempt row %lld",
		    (long long)e->attempt_id);
	db_done(st);
	return ret;
}

int
db_evidence_insert(struct db *db, const struct evidence_row *e,
    int64_t batch_id, const char *story_id, int64_t ts_ms,
    const char *event_msg, struct sc_err *err)
{
	int ret;

	if ((ret = ev_insert(db, e, err)) == 0 && event_msg != NULL)
		ret = db_event_add(
		    db, batch_id, ts_ms, story_id, "evidence", event_msg, err);
	return ret;
}

/* A row of EVIDENCE_COLS into a zeroed *e. */
static int
ev_read(
    struct db *db, sqlite3_stmt *st, struct evidence_row *e, struct sc_err *err)
{
	int i = 0;

	e->attempt_id = sqlite3_column_int64(st, i++);
	e->seq = sqlite3_column_int(st, i++);
	e->measured = sqlite3_column_int(st, i++) != 0;
	db_col_copy(st, i++, e->not_measured, sizeof(e->not_measured));
	db_col_copy(st, i++, e->base_tree, sizeof(e->base_tree));
	e->files_changed = (int)db_col_int(st, i++, -1);
	e->lines_added = (int)db_col_int(st, i++, -1);
	e->lines_removed = (int)db_col_int(st, i++, -1);
	if (sqlite3_column_type(st, i) != SQLITE_NULL &&
	    (e->files = db_col_dup(st, i)) == NULL)
		return db_oom(db, err);
	i++;
	e->ticked = sqlite3_column_int(st, i++);
	e->unticked = sqlite3_column_int(st, i++);
	db_col_copy(st, i++, e->first_unticked, sizeof(e->first_unticked));
	e->ticked_without_change = sqlite3_column_int(st, i++) != 0;
	return 0;
}

int
db_evidence_for_story(struct db *db, struct evidence_row **out, size_t *n,
    int64_t batch_id, const char *story_id, struct sc_err *err)
{
	sqlite3_stmt *st = NULL;
	struct evidence_row *rows = NULL;
	size_t alloc = 0, k = 0;
	int ret = 0, rc;

	*out = NULL;
	*n = 0;
	if ((ret = db_prep_sql(db, &st, SQL_EVIDENCE_FOR_STORY,
		 "SELECT " EVIDENCE_COLS " FROM attempt_evidence e"
		 " JOIN attempts a ON a.id = e.attempt_id"
		 " WHERE a.batch_id = ?1 AND a.story_id = ?2 ORDER BY a.seq",
		 err)) < 0)
		goto out;
	if (sqlite3_bind_int64(st, 1, batch_id) != SQLITE_OK ||
	    sqlite3_bind_text(st, 2, story_id, -1, SQLITE_STATIC) !=
		SQLITE_OK) {
		ret = db_fail(
		    db, err, "cannot read the evidence of %.128s", story_id);
		goto out;
	}
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (db_grow((void **)&rows, &alloc, k, sizeof(*rows)) < 0) {
			ret = db_oom(db, err);
			goto out;
		}
		memset(&rows[k], 0, sizeof(rows[k]));
		if ((ret = ev_read(db, st, &rows[k++], err)) < 0)
			goto out;
	}
	if (rc != SQLITE_DONE)
		ret = db_fail(
		    db, err, "cannot read the evidence of %.128s", story_id);
out:
	db_done(st);
	if (ret < 0) {
		evidence_rows_free(rows, k);
		return ret;
	}
	*out = rows;
	*n = k;
	return 0;
}

void
evidence_rows_free(struct evidence_row *rows, size_t n)
{
	size_t i;

	if (rows == NULL)
		return;
	for (i = 0; i < n; i++)
		free(rows[i].files);
	free(rows);
}
