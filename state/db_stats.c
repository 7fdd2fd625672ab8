/* db_stats.c - see db.h: the attempt rows the telemetry reads
 * (docs/stats.md), light and in one ordered scan. */
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "state/db_int.h"

/* The names of one row; -1 when one is not a known name. */
static int
brief_names(struct attempt_brief *b, sqlite3_stmt *st, int i)
{
	const char *role = (const char *)sqlite3_column_text(st, i);
	const char *outcome = (const char *)sqlite3_column_text(st, i + 1);
	const char *code = (const char *)sqlite3_column_text(st, i + 2);
	const char *decision = (const char *)sqlite3_column_text(st, i + 3);

	if (role_parse(&b->role, role) < 0)
		return -1;
	/* the running outcome's name is not a parseable outcome */
	if (outcome != NULL && strcmp(outcome, outcome_name(OUTCOME_NONE)) == 0)
		b->outcome = OUTCOME_NONE;
	else if (outcome_parse(&b->outcome, outcome) < 0)
		return -1;
	if (code != NULL && errcode_parse(&b->error_code, code) < 0)
		return -1;
	if (decision != NULL && decision_parse(&b->decision, decision) < 0)
		return -1;
	return 0;
}

static int
brief_read(struct db *db, sqlite3_stmt *st, struct attempt_brief *b,
    struct sc_err *err)
{
	memset(b, 0, sizeof(*b));
	b->batch_id = sqlite3_column_int64(st, 0);
	db_col_copy(st, 1, b->story_id, sizeof(b->story_id));
	b->attempt = sqlite3_column_int(st, 2);
	b->seq = sqlite3_column_int(st, 3);
	b->counted = sqlite3_column_int(st, 4) != 0;
	db_col_copy(st, 5, b->agent, sizeof(b->agent));
	b->started_ms = db_col_int(st, 6, 0);
	b->ended_ms = db_col_int(st, 7, 0);
	b->tasks_completed = sqlite3_column_int(st, 8);
	b->tasks_total = sqlite3_column_int(st, 9);
	b->delay_ms = db_col_int(st, 10, 0);
	b->cost_usd = sqlite3_column_double(st, 11);
	if (brief_names(b, st, 12) < 0)
		return err_set(err, SC_EIO,
		    "%s: an attempt of story %.128s in batch %lld: unknown "
		    "role, outcome, error code or decision name",
		    db->path, b->story_id, (long long)b->batch_id);
	return 0;
}

#define BRIEF_SQL \
	"SELECT batch_id, story_id, attempt, seq, counted, agent," \
	" started_ms, ended_ms, tasks_completed, tasks_total, delay_ms," \
	" cost_usd, role, outcome, error_code, decision FROM attempts"
#define BRIEF_ORDER " ORDER BY batch_id, story_id, seq"

int
db_attempt_briefs(struct db *db, struct attempt_brief **out, size_t *n,
    int64_t batch_id, struct sc_err *err)
{
	sqlite3_stmt *st = NULL;
	struct attempt_brief *rows = NULL;
	size_t alloc = 0;
	int rc, ret = 0;

	*out = NULL;
	*n = 0;
	/* the attempts_by_story index gives this order without a sort,
	 * and one batch's rows without a scan of the others */
	if (sqlite3_prepare_v2(db->h,
		batch_id > 0 ? BRIEF_SQL " WHERE batch_id = ?1" BRIEF_ORDER
			     : BRIEF_SQL BRIEF_ORDER,
		-1, &st, NULL) != SQLITE_OK) {
		ret = db_fail(db, err, "cannot read attempts");
		goto out;
	}
	if (batch_id > 0)
		sqlite3_bind_int64(st, 1, batch_id);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (db_grow((void **)&rows, &alloc, *n, sizeof(*rows)) < 0) {
			ret = db_oom(db, err);
			goto out;
		}
		if ((ret = brief_read(db, st, &rows[*n], err)) < 0)
			goto out;
		(*n)++;
	}
	if (rc != SQLITE_DONE)
		ret = db_fail(db, err, "cannot read attempts");
out:
	sqlite3_finalize(st);
	if (ret < 0) {
		free(rows);
		rows = NULL;
		*n = 0;
	}
	*out = rows;
	return ret;
}
