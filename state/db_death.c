/* db_death.c - see db.h: the attempts start-up closed because their
 * controller died (docs/reliability.md#controller-deaths). */
#include <stdbool.h>
#include <stdint.h>

#include <sqlite3.h>

#include "state/db_int.h"

int
db_death_add(struct db *db, int64_t attempt_id, int64_t controller_pid,
    bool stopped, int64_t ts_ms, struct sc_err *err)
{
	sqlite3_stmt *st = NULL;
	int ret = 0;

	if (sqlite3_prepare_v2(db->h,
		"INSERT INTO controller_deaths"
		" (attempt_id, controller_pid, stopped, ts_ms)"
		" VALUES (?1, ?2, ?3, ?4) ON CONFLICT DO NOTHING",
		-1, &st, NULL) != SQLITE_OK ||
	    sqlite3_bind_int64(st, 1, attempt_id) != SQLITE_OK ||
	    sqlite3_bind_int64(st, 2, controller_pid) != SQLITE_OK ||
	    sqlite3_bind_int(st, 3, stopped ? 1 : 0) != SQLITE_OK ||
	    sqlite3_bind_int64(st, 4, ts_ms) != SQLITE_OK ||
	    sqlite3_step(st) != SQLITE_DONE)
		ret = db_fail(db, err,
		    "cannot record the controller's death for attempt row "
		    "%lld",
		    (long long)attempt_id);
	sqlite3_finalize(st);
	return ret;
}

int
db_deaths_before(struct db *db, int *n, int64_t *last_pid,
    const struct attempt_row *r, struct sc_err *err)
{
	sqlite3_stmt *st = NULL;
	int rc, ret = 0;

	*n = 0;
	*last_pid = 0;
	if (sqlite3_prepare_v2(db->h,
		"SELECT d.controller_pid FROM controller_deaths d"
		" JOIN attempts a ON a.id = d.attempt_id"
		" WHERE a.batch_id = ?1 AND a.story_id = ?2"
		" AND a.attempt = ?3 AND a.id <> ?4"
		" ORDER BY a.seq",
		-1, &st, NULL) != SQLITE_OK ||
	    sqlite3_bind_int64(st, 1, r->batch_id) != SQLITE_OK ||
	    sqlite3_bind_text(st, 2, r->story_id, -1, SQLITE_STATIC) !=
		SQLITE_OK ||
	    sqlite3_bind_int(st, 3, r->attempt) != SQLITE_OK ||
	    sqlite3_bind_int64(st, 4, r->id) != SQLITE_OK) {
		ret = db_fail(db, err,
		    "cannot read the controller deaths of "
		    "story %s",
		    r->story_id);
		goto out;
	}
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		(*n)++;
		*last_pid = sqlite3_column_int64(st, 0);
	}
	if (rc != SQLITE_DONE)
		ret = db_fail(db, err,
		    "cannot read the controller deaths of "
		    "story %s",
		    r->story_id);
out:
	sqlite3_finalize(st);
	return ret;
}
