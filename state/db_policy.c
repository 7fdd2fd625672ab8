/* db_policy.c - see db.h: retry-policy overrides set over HTTP, each
 * write one short transaction with its event (docs/api.md#retry-policy). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "state/db_int.h"

int
db_policy_get(struct db *db, struct policy_row *out, int *found,
    const char *scope, struct sc_err *err)
{
	sqlite3_stmt *st = NULL;
	int rc, ret = 0;

	memset(out, 0, sizeof(*out));
	*found = 0;
	if ((ret = db_prep_sql(db, &st, SQL_POLICY_GET,
		 "SELECT scope, body, created_ms, key_name"
		 " FROM policy_overrides WHERE scope = ?1",
		 err)) < 0)
		goto out;
	if (sqlite3_bind_text(st, 1, scope, -1, SQLITE_STATIC) != SQLITE_OK) {
		ret = db_fail(db, err, "cannot read the policy override");
		goto out;
	}
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		db_col_copy(st, 0, out->scope, sizeof(out->scope));
		if ((out->body = db_col_dup(st, 1)) == NULL) {
			ret = db_oom(db, err);
			goto out;
		}
		out->created_ms = db_col_int(st, 2, 0);
		db_col_copy(st, 3, out->key_name, sizeof(out->key_name));
		*found = 1;
	} else if (rc != SQLITE_DONE) {
		ret = db_fail(db, err, "cannot read the policy override");
	}
out:
	db_done(st);
	return ret;
}

/* The event of a change, "policy override of SCOPE set by KEY: BODY". */
static int
policy_event(struct db *db, int64_t batch_id, int64_t ts_ms, const char *scope,
    const char *what, struct sc_err *err)
{
	const char *story = strcmp(scope, DB_POLICY_BATCH) == 0 ? NULL : scope;
	char msg[1200];

	if (batch_id <= 0)
		return 0;
	snprintf(msg, sizeof(msg), "retry-policy override of %s %s",
	    story ? story : "the batch", what);
	return db_event_add(db, batch_id, ts_ms, story, "policy", msg, err);
}

int
db_policy_put(struct db *db, const struct policy_row *p, int64_t batch_id,
    struct sc_err *err)
{
	sqlite3_stmt *st = NULL;
	char what[1100];
	int ret;

	if ((ret = db_tx_begin(db, err)) < 0)
		return ret;
	if (sqlite3_prepare_v2(db->h,
		"INSERT OR REPLACE INTO policy_overrides"
		" (scope, body, created_ms, key_name) VALUES (?1, ?2, ?3, ?4)",
		-1, &st, NULL) != SQLITE_OK ||
	    sqlite3_bind_text(st, 1, p->scope, -1, SQLITE_STATIC) !=
		SQLITE_OK ||
	    sqlite3_bind_text(st, 2, p->body, -1, SQLITE_STATIC) != SQLITE_OK ||
	    sqlite3_bind_int64(st, 3, p->created_ms) != SQLITE_OK ||
	    sqlite3_bind_text(st, 4, p->key_name, -1, SQLITE_STATIC) !=
		SQLITE_OK ||
	    sqlite3_step(st) != SQLITE_DONE) {
		ret = db_fail(db, err, "cannot store the policy override");
		goto out;
	}
	snprintf(
	    what, sizeof(what), "set by key %s: %.1000s", p->key_name, p->body);
	ret = policy_event(db, batch_id, p->created_ms, p->scope, what, err);
out:
	sqlite3_finalize(st);
	if (ret == 0)
		return db_tx_commit(db, err);
	db_tx_rollback(db);
	return ret;
}

int
db_policy_del(struct db *db, int *found, const char *scope, int64_t batch_id,
    int64_t now_ms, struct sc_err *err)
{
	sqlite3_stmt *st = NULL;
	int ret;

	*found = 0;
	if ((ret = db_tx_begin(db, err)) < 0)
		return ret;
	if (sqlite3_prepare_v2(db->h,
		"DELETE FROM policy_overrides WHERE scope = ?1", -1, &st,
		NULL) != SQLITE_OK ||
	    sqlite3_bind_text(st, 1, scope, -1, SQLITE_STATIC) != SQLITE_OK ||
	    sqlite3_step(st) != SQLITE_DONE) {
		ret = db_fail(db, err, "cannot remove the policy override");
		goto out;
	}
	*found = sqlite3_changes(db->h) > 0;
	if (*found)
		ret = policy_event(db, batch_id, now_ms, scope, "removed", err);
out:
	sqlite3_finalize(st);
	if (ret == 0)
		return db_tx_commit(db, err);
	db_tx_rollback(db);
	return ret;
}

int
db_policy_for_story(struct db *db, char **batch_body, char **story_body,
    const char *story_id, struct sc_err *err)
{
	sqlite3_stmt *st = NULL;
	char **dst;
	int rc, ret = 0;

	*batch_body = NULL;
	*story_body = NULL;
	if ((ret = db_prep_sql(db, &st, SQL_POLICY_FOR_STORY,
		 "SELECT scope, body FROM policy_overrides"
		 " WHERE scope IN ('*', ?1)",
		 err)) < 0)
		goto out;
	if (sqlite3_bind_text(st, 1, story_id, -1, SQLITE_STATIC) !=
	    SQLITE_OK) {
		ret = db_fail(db, err, "cannot read the policy overrides");
		goto out;
	}
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		dst = strcmp((const char *)sqlite3_column_text(st, 0),
			  DB_POLICY_BATCH) == 0
		    ? batch_body
		    : story_body;
		free(*dst);
		if ((*dst = db_col_dup(st, 1)) == NULL) {
			ret = db_oom(db, err);
			goto out;
		}
	}
	if (rc != SQLITE_DONE)
		ret = db_fail(db, err, "cannot read the policy overrides");
out:
	db_done(st);
	if (ret < 0) {
		free(*batch_body);
		free(*story_body);
		*batch_body = *story_body = NULL;
	}
	return ret;
}
