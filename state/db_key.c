/* db_key.c - see db.h: the service's API keys, only their SHA-256
 * (docs/api.md#keys). */
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "state/db_int.h"

int
db_key_add(struct db *db, const struct key_row *k, struct sc_err *err)
{
	sqlite3_stmt *st = NULL;
	int rc, ret = 0;

	if (sqlite3_prepare_v2(db->h,
		"INSERT INTO api_keys (name, sha256, scope, created_ms)"
		" VALUES (?1, ?2, ?3, ?4)",
		-1, &st, NULL) != SQLITE_OK) {
		ret = db_fail(db, err, "cannot add key %s", k->name);
		goto out;
	}
	sqlite3_bind_text(st, 1, k->name, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, k->sha256, -1, SQLITE_STATIC);
	sqlite3_bind_text(
	    st, 3, k->write ? "write" : "read", -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 4, k->created_ms);
	rc = sqlite3_step(st);
	if (rc == SQLITE_CONSTRAINT_PRIMARYKEY)
		ret = err_set(err, SC_EUSAGE,
		    "a key named %s exists; revoke it first or pick another "
		    "name",
		    k->name);
	else if (rc != SQLITE_DONE)
		ret = db_fail(db, err, "cannot add key %s", k->name);
out:
	sqlite3_finalize(st);
	return ret;
}

int
db_key_list(struct db *db, struct key_row **out, size_t *n, struct sc_err *err)
{
	sqlite3_stmt *st = NULL;
	struct key_row *rows = NULL;
	size_t alloc = 0;
	int rc, ret = 0;

	*out = NULL;
	*n = 0;
	if (sqlite3_prepare_v2(db->h,
		"SELECT name, sha256, scope, created_ms FROM api_keys"
		" ORDER BY name",
		-1, &st, NULL) != SQLITE_OK) {
		ret = db_fail(db, err, "cannot list the keys");
		goto out;
	}
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (db_grow((void **)&rows, &alloc, *n, sizeof(*rows)) < 0) {
			ret = db_oom(db, err);
			goto out;
		}
		memset(&rows[*n], 0, sizeof(rows[*n]));
		db_col_copy(st, 0, rows[*n].name, sizeof(rows[*n].name));
		db_col_copy(st, 1, rows[*n].sha256, sizeof(rows[*n].sha256));
		rows[*n].write =
		    strcmp((const char *)sqlite3_column_text(st, 2), "write") ==
		    0;
		rows[*n].created_ms = db_col_int(st, 3, 0);
		(*n)++;
	}
	if (rc != SQLITE_DONE)
		ret = db_fail(db, err, "cannot list the keys");
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

int
db_key_revoke(struct db *db, const char *name, int *found, struct sc_err *err)
{
	sqlite3_stmt *st = NULL;
	int ret = 0;

	*found = 0;
	if (sqlite3_prepare_v2(db->h, "DELETE FROM api_keys WHERE name = ?1",
		-1, &st, NULL) != SQLITE_OK ||
	    sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC) != SQLITE_OK ||
	    sqlite3_step(st) != SQLITE_DONE) {
		ret = db_fail(db, err, "cannot revoke key %s", name);
		goto out;
	}
	*found = sqlite3_changes(db->h) > 0;
out:
	sqlite3_finalize(st);
	return ret;
}
