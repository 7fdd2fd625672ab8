/*
 * db_event.c - reading the event log: a batch's events (log), and a
 * page of them after a sequence number with optional filters (the
 * service's /v1/events and its stream, docs/api.md#events).  Events are
 * written by db_attempt.c, inside the transactions of the decisions.
 */
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "state/db_int.h"

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

/* Step st (bound) to the end, collecting its rows (id, batch_id, ts_ms,
 * story_id, kind, message) into *out. */
static int
events_read(struct db *db, sqlite3_stmt *st, struct event_row **out, size_t *n,
    struct sc_err *err)
{
	struct event_row *rows = NULL, *e;
	size_t count = 0, alloc = 0;
	int rc, ret = 0;

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
		db_col_copy(st, 3, e->story_id, sizeof(e->story_id));
		db_col_copy(st, 4, e->kind, sizeof(e->kind));
		if ((e->message = db_col_dup(st, 5)) == NULL) {
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
	event_rows_free(rows, count);
	return ret;
}

int
db_events_list(struct db *db, struct event_row **out, size_t *n,
    int64_t batch_id, int64_t after_id, struct sc_err *err)
{
	sqlite3_stmt *st = NULL;
	struct db_bind b = {0};
	int ret;

	*out = NULL;
	*n = 0;
	if ((ret = db_prep(db, &st,
		 batch_id > 0 ? SQL_EVENTS_LIST : SQL_EVENTS_LIST_ALL, err)) <
	    0)
		goto out;
	b.st = st;
	if (batch_id > 0)
		db_bind_int(&b, batch_id);
	db_bind_int(&b, after_id);
	if ((ret = db_bind_check(db, &b, err)) == 0)
		ret = events_read(db, st, out, n, err);
out:
	db_done(st);
	return ret;
}

int
db_events_page(struct db *db, struct event_row **out, size_t *n,
    const struct event_query *q, struct sc_err *err)
{
	sqlite3_stmt *st = NULL;
	struct db_bind b = {0};
	int ret;

	*out = NULL;
	*n = 0;
	if ((ret = db_prep(db, &st, SQL_EVENTS_PAGE, err)) < 0)
		goto out;
	b.st = st;
	db_bind_int(&b, q->after_id);
	db_bind_int(&b, q->batch_id);
	db_bind_str_or_null(
	    &b, q->story_id, q->story_id != NULL ? strlen(q->story_id) : 0);
	/* LIMIT -1 is no limit */
	db_bind_int(&b, q->limit > 0 ? (int64_t)q->limit : -1);
	if ((ret = db_bind_check(db, &b, err)) == 0)
		ret = events_read(db, st, out, n, err);
out:
	db_done(st);
	return ret;
}
