/* db_story.c - see db.h: batches and their stories, the story lines of
 * status and list, the status counts and the spend (docs/state.md). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "state/db_int.h"

/*
 * Batches
 */

static void
db_read_batch(sqlite3_stmt *st, struct batch_row *out)
{
	memset(out, 0, sizeof(*out));
	out->id = sqlite3_column_int64(st, 0);
	out->created_ms = db_col_int(st, 1, 0);
	out->finished_ms = db_col_int(st, 2, 0);
	db_col_copy(st, 3, out->status, sizeof(out->status));
}

static int
db_batch_one(struct db *db, enum db_sql id, struct batch_row *out, int *found,
    struct sc_err *err)
{
	sqlite3_stmt *st = NULL;
	int rc, ret;

	*found = 0;
	if ((ret = db_prep(db, &st, id, err)) < 0)
		goto out;
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		db_read_batch(st, out);
		*found = 1;
	} else if (rc != SQLITE_DONE) {
		ret = db_fail(db, err, "cannot read batches");
	}
out:
	db_done(st);
	return ret;
}

int
db_batch_current(
    struct db *db, struct batch_row *out, int *found, struct sc_err *err)
{
	return db_batch_one(db, SQL_BATCH_CURRENT, out, found, err);
}

int
db_batch_latest(
    struct db *db, struct batch_row *out, int *found, struct sc_err *err)
{
	return db_batch_one(db, SQL_BATCH_LATEST, out, found, err);
}

int
db_batch_create(
    struct db *db, int64_t *out_id, int64_t now_ms, struct sc_err *err)
{
	sqlite3_stmt *st = NULL;
	struct db_bind b = {0};
	int ret;

	*out_id = 0;
	if ((ret = db_prep(db, &st, SQL_BATCH_CREATE, err)) < 0)
		goto out;
	b.st = st;
	db_bind_int(&b, now_ms);
	if ((ret = db_bind_check(db, &b, err)) < 0 ||
	    (ret = db_step_done(db, st, err, "cannot create a batch")) < 0)
		goto out;
	*out_id = sqlite3_last_insert_rowid(db->h);
out:
	db_done(st);
	return ret;
}

int
db_batch_set_status(struct db *db, int64_t id, const char *status,
    int64_t now_ms, struct sc_err *err)
{
	sqlite3_stmt *st = NULL;
	struct db_bind b = {0};
	bool running;
	int ret;

	if (status == NULL ||
	    (strcmp(status, "running") != 0 &&
		strcmp(status, "finished") != 0 &&
		strcmp(status, "stopped") != 0))
		return err_set(err, SC_ESOFTWARE, "unknown batch status '%s'",
		    status == NULL ? "(null)" : status);
	running = strcmp(status, "running") == 0;
	if ((ret = db_tx_begin(db, err)) < 0)
		return ret;
	if ((ret = db_prep(db, &st, SQL_BATCH_SET_STATUS, err)) < 0)
		goto out;
	b.st = st;
	db_bind_str(&b, status);
	db_bind_int_or_null(&b, running ? 0 : now_ms, 0);
	db_bind_int(&b, id);
	if ((ret = db_bind_check(db, &b, err)) < 0 ||
	    (ret = db_step_done(db, st, err,
		 "cannot set the status of "
		 "batch %lld",
		 (long long)id)) < 0)
		goto out;
	if (sqlite3_changes(db->h) == 0) {
		ret = err_set(
		    err, SC_EIO, "%s: no batch %lld", db->path, (long long)id);
		goto out;
	}
	db_done(st);
	st = NULL;
	if ((ret = db_seq_bump(db, err)) < 0)
		goto out;
	ret = db_tx_commit(db, err);
out:
	db_done(st);
	if (ret < 0)
		db_tx_rollback(db);
	return ret;
}

int
db_batch_story_ids(
    struct db *db, char **out_json, int64_t id, struct sc_err *err)
{
	sqlite3_stmt *st = NULL;
	struct db_bind b = {0};
	int rc, ret;

	*out_json = NULL;
	if ((ret = db_prep(db, &st, SQL_BATCH_STORY_IDS, err)) < 0)
		goto out;
	b.st = st;
	db_bind_int(&b, id);
	if ((ret = db_bind_check(db, &b, err)) < 0)
		goto out;
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		if ((*out_json = db_col_dup(st, 0)) == NULL)
			ret = db_oom(db, err);
	} else if (rc != SQLITE_DONE) {
		ret = db_fail(db, err, "cannot read batch %lld", (long long)id);
	}
out:
	db_done(st);
	return ret;
}

/*
 * Stories
 */

static int
db_story_check(struct db *db, const struct story_row *s, struct sc_err *err)
{
	if ((int)s->status < 0 || s->status >= STATUS__COUNT ||
	    (int)s->last_outcome < 0 || s->last_outcome >= OUTCOME__COUNT)
		return err_set(err, SC_ESOFTWARE,
		    "%s: story %.128s: status or outcome out of range",
		    db->path, s->id);
	return 0;
}

/* The columns of STORY_MUT_COLS. */
static void
db_bind_story(struct db_bind *b, const struct story_row *s)
{
	db_bind_text(b, s->file, sizeof(s->file));
	db_bind_int(b, s->position);
	db_bind_str(b, status_name(s->status));
	db_bind_text(b, s->reason, sizeof(s->reason));
	db_bind_int(b, s->counts.tasks_completed);
	db_bind_int(b, s->counts.tasks_total);
	db_bind_int(b, s->attempts);
	db_bind_text(b, s->last_agent, sizeof(s->last_agent));
	if (s->last_outcome == OUTCOME_NONE)
		db_bind_null(b);
	else
		db_bind_str(b, outcome_name(s->last_outcome));
	db_bind_int_or_null(b, s->updated_ms, 0);
	db_bind_double(b, s->cost_usd);
	db_bind_text(b, s->branch, sizeof(s->branch));
	db_bind_int(b, s->seq_base);
	db_bind_int(b, s->attempt_base);
	db_bind_text(b, s->base_commit, sizeof(s->base_commit));
	db_bind_int(b, s->counts.subtasks_completed);
	db_bind_int(b, s->counts.subtasks_total);
}

/* A row of STORY_COLS. */
static int
db_read_story(
    struct db *db, sqlite3_stmt *st, struct story_row *out, struct sc_err *err)
{
	const char *status, *outcome;

	memset(out, 0, sizeof(*out));
	out->batch_id = sqlite3_column_int64(st, 0);
	db_col_copy(st, 1, out->id, sizeof(out->id));
	db_col_copy(st, 2, out->file, sizeof(out->file));
	out->position = (int)sqlite3_column_int64(st, 3);
	status = (const char *)sqlite3_column_text(st, 4);
	if (status_parse(&out->status, status) < 0)
		return err_set(err, SC_EIO, "%s: story %s: unknown status '%s'",
		    db->path, out->id, status == NULL ? "" : status);
	db_col_copy(st, 5, out->reason, sizeof(out->reason));
	out->counts.tasks_completed = (int)sqlite3_column_int64(st, 6);
	out->counts.tasks_total = (int)sqlite3_column_int64(st, 7);
	out->attempts = (int)sqlite3_column_int64(st, 8);
	db_col_copy(st, 9, out->last_agent, sizeof(out->last_agent));
	outcome = (const char *)sqlite3_column_text(st, 10);
	if (outcome != NULL && outcome_parse(&out->last_outcome, outcome) < 0)
		return err_set(err, SC_EIO,
		    "%s: story %s: unknown outcome '%s'", db->path, out->id,
		    outcome);
	out->updated_ms = db_col_int(st, 11, 0);
	out->cost_usd = sqlite3_column_double(st, 12);
	db_col_copy(st, 13, out->branch, sizeof(out->branch));
	out->seq_base = (int)sqlite3_column_int64(st, 14);
	out->attempt_base = (int)sqlite3_column_int64(st, 15);
	db_col_copy(st, 16, out->base_commit, sizeof(out->base_commit));
	out->counts.subtasks_completed = (int)sqlite3_column_int64(st, 17);
	out->counts.subtasks_total = (int)sqlite3_column_int64(st, 18);
	return 0;
}

int
db_story_add(struct db *db, const struct story_row *s, struct sc_err *err)
{
	sqlite3_stmt *st = NULL;
	struct db_bind b = {0};
	int ret;

	if ((ret = db_story_check(db, s, err)) < 0)
		return ret;
	if ((ret = db_tx_begin(db, err)) < 0)
		return ret;
	if ((ret = db_prep(db, &st, SQL_STORY_ADD, err)) < 0)
		goto out;
	b.st = st;
	db_bind_int(&b, s->batch_id);
	db_bind_text(&b, s->id, sizeof(s->id));
	db_bind_story(&b, s);
	if ((ret = db_bind_check(db, &b, err)) < 0 ||
	    (ret = db_step_done(db, st, err,
		 "cannot add story %.128s to "
		 "batch %lld",
		 s->id, (long long)s->batch_id)) < 0)
		goto out;
	if (sqlite3_changes(db->h) == 0)
		goto commit; /* already there: keep it as it is */
	db_done(st);
	if ((ret = db_prep(db, &st, SQL_BATCH_APPEND_STORY, err)) < 0)
		goto out;
	b = (struct db_bind){.st = st};
	db_bind_text(&b, s->id, sizeof(s->id));
	db_bind_int(&b, s->batch_id);
	if ((ret = db_bind_check(db, &b, err)) < 0 ||
	    (ret = db_step_done(db, st, err,
		 "cannot list story %.128s in "
		 "batch %lld",
		 s->id, (long long)s->batch_id)) < 0)
		goto out;
	db_done(st);
	st = NULL;
	if ((ret = db_seq_bump(db, err)) < 0)
		goto out;
commit:
	ret = db_tx_commit(db, err);
out:
	db_done(st);
	if (ret < 0)
		db_tx_rollback(db);
	return ret;
}

int
db_story_get(struct db *db, struct story_row *out, int *found, int64_t batch_id,
    const char *id, struct sc_err *err)
{
	sqlite3_stmt *st = NULL;
	struct db_bind b = {0};
	int rc, ret;

	*found = 0;
	if ((ret = db_prep(db, &st, SQL_STORY_GET, err)) < 0)
		goto out;
	b.st = st;
	db_bind_int(&b, batch_id);
	db_bind_str(&b, id);
	if ((ret = db_bind_check(db, &b, err)) < 0)
		goto out;
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		if ((ret = db_read_story(db, st, out, err)) == 0)
			*found = 1;
	} else if (rc != SQLITE_DONE) {
		ret = db_fail(db, err, "cannot read story %s", id);
	}
out:
	db_done(st);
	return ret;
}

/* The UPDATE alone, for use inside a transaction. */
int
db_story_write(struct db *db, const struct story_row *s, struct sc_err *err)
{
	sqlite3_stmt *st = NULL;
	struct db_bind b = {0};
	int ret;

	if ((ret = db_story_check(db, s, err)) < 0)
		return ret;
	if ((ret = db_prep(db, &st, SQL_STORY_UPDATE, err)) < 0)
		goto out;
	b.st = st;
	db_bind_story(&b, s);
	db_bind_int(&b, s->batch_id);
	db_bind_text(&b, s->id, sizeof(s->id));
	if ((ret = db_bind_check(db, &b, err)) < 0 ||
	    (ret = db_step_done(
		 db, st, err, "cannot update story %.128s", s->id)) < 0)
		goto out;
	if (sqlite3_changes(db->h) == 0)
		ret = err_set(err, SC_EIO, "%s: no story %.128s in batch %lld",
		    db->path, s->id, (long long)s->batch_id);
out:
	db_done(st);
	return ret;
}

int
db_story_update(struct db *db, const struct story_row *s, struct sc_err *err)
{
	int ret;

	if ((ret = db_tx_begin(db, err)) < 0)
		return ret;
	if ((ret = db_story_write(db, s, err)) < 0 ||
	    (ret = db_seq_bump(db, err)) < 0)
		goto out;
	ret = db_tx_commit(db, err);
out:
	if (ret < 0)
		db_tx_rollback(db);
	return ret;
}

/* Step the bound statement st over story rows into a malloc'd array. */
static int
db_story_rows(struct db *db, sqlite3_stmt *st, struct story_row **out,
    size_t *n, int64_t batch_id, struct sc_err *err)
{
	struct story_row *rows = NULL;
	size_t count = 0, alloc = 0;
	int rc, ret = 0;

	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (db_grow((void **)&rows, &alloc, count, sizeof(*rows)) < 0) {
			ret = db_oom(db, err);
			goto out;
		}
		if ((ret = db_read_story(db, st, &rows[count], err)) < 0)
			goto out;
		count++;
	}
	if (rc != SQLITE_DONE) {
		ret = db_fail(db, err, "cannot list the stories of batch %lld",
		    (long long)batch_id);
		goto out;
	}
	*out = rows;
	*n = count;
	rows = NULL;
out:
	free(rows);
	return ret;
}

int
db_story_range(struct db *db, struct story_row **out, size_t *n,
    int64_t batch_id, int from, int count, struct sc_err *err)
{
	sqlite3_stmt *st = NULL;
	struct db_bind b = {0};
	int ret;

	*out = NULL;
	*n = 0;
	if ((ret = db_prep(db, &st, SQL_STORY_RANGE, err)) < 0)
		goto out;
	b.st = st;
	db_bind_int(&b, batch_id);
	db_bind_int(&b, from);
	db_bind_int(&b, (int64_t)from + count);
	if ((ret = db_bind_check(db, &b, err)) == 0)
		ret = db_story_rows(db, st, out, n, batch_id, err);
out:
	db_done(st);
	return ret;
}

/* The columns of a story line but its texts (db_story_lines() keeps
 * those in one block). */
static int
db_read_line(struct db *db, struct story_line *out, sqlite3_stmt *st,
    int64_t batch_id, struct sc_err *err)
{
	const char *name;
	int ret = 0;

	memset(out, 0, sizeof(*out));
	out->position = sqlite3_column_int(st, 1);
	name = (const char *)sqlite3_column_text(st, 2);
	if (status_parse(&out->status, name) < 0) {
		ret = err_set(err, SC_EIO,
		    "%s: batch %lld: unknown story status '%s'", db->path,
		    (long long)batch_id, name == NULL ? "" : name);
		goto out;
	}
	out->attempts = sqlite3_column_int(st, 3);
	out->counts.tasks_completed = sqlite3_column_int(st, 4);
	out->counts.tasks_total = sqlite3_column_int(st, 5);
	out->counts.subtasks_completed = sqlite3_column_int(st, 9);
	out->counts.subtasks_total = sqlite3_column_int(st, 10);
	name = (const char *)sqlite3_column_text(st, 7);
	if (name != NULL && outcome_parse(&out->last_outcome, name) < 0)
		ret =
		    err_set(err, SC_EIO, "%s: batch %lld: unknown outcome '%s'",
			db->path, (long long)batch_id, name);
out:
	return ret;
}

/* Append the column's text and its NUL to the block; its offset. */
static int
db_text_put(char **block, size_t *used, size_t *alloc, sqlite3_stmt *st,
    int col, size_t *off)
{
	const char *t = (const char *)sqlite3_column_text(st, col);
	size_t len = t == NULL ? 0 : (size_t)sqlite3_column_bytes(st, col);
	size_t want;
	void *p;

	if (*used + len + 1 > *alloc) {
		want = *alloc ? *alloc : 4096;
		while (want < *used + len + 1)
			want *= 2;
		if ((p = realloc(*block, want)) == NULL)
			return -1;
		*block = p;
		*alloc = want;
	}
	if (len > 0)
		memcpy(*block + *used, t, len);
	(*block)[*used + len] = '\0';
	*off = *used;
	*used += len + 1;
	return 0;
}

static int
line_id_cmp(const void *a, const void *b)
{
	return strcmp(((const struct story_line *)a)->id,
	    ((const struct story_line *)b)->id);
}

/* v (position order) in (position, id) order: each run of one position
 * sorted by id, as sqlite's BINARY collation orders them (bytes, as
 * strcmp does; an id is unique in its batch). */
static void
lines_order_ties(struct story_line *v, size_t n)
{
	size_t i = 0, j;

	while (i < n) {
		for (j = i + 1; j < n && v[j].position == v[i].position; j++)
			;
		if (j - i > 1)
			qsort(v + i, j - i, sizeof(*v), line_id_cmp);
		i = j;
	}
}

int
db_story_lines(struct db *db, struct story_line **out, char **text, size_t *n,
    int64_t batch_id, int from, int count, struct sc_err *err)
{
	sqlite3_stmt *st = NULL;
	struct db_bind b = {0};
	struct story_line *v = NULL;
	/* offsets into the block until it stops moving */
	size_t(*offs)[3] = NULL;
	char *block = NULL;
	size_t k = 0, alloc = 0, used = 0, balloc = 0, i;
	int rc, ret;

	*out = NULL;
	*text = NULL;
	*n = 0;
	if ((ret = db_prep(db, &st, SQL_STORY_LINES, err)) < 0)
		goto out;
	b.st = st;
	db_bind_int(&b, batch_id);
	db_bind_int(&b, from);
	db_bind_int(&b, (int64_t)from + count);
	if ((ret = db_bind_check(db, &b, err)) < 0)
		goto out;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (k == alloc) {
			void *p1, *p2;
			alloc = alloc ? alloc * 2 : 64;
			p1 = realloc(v, alloc * sizeof(*v));
			if (p1 != NULL)
				v = p1;
			p2 = realloc(offs, alloc * sizeof(*offs));
			if (p2 != NULL)
				offs = p2;
			if (p1 == NULL || p2 == NULL) {
				ret = db_oom(db, err);
				goto out;
			}
		}
		if ((ret = db_read_line(db, &v[k], st, batch_id, err)) < 0)
			goto out;
		if (db_text_put(&block, &used, &balloc, st, 0, &offs[k][0]) <
			0 ||
		    db_text_put(&block, &used, &balloc, st, 6, &offs[k][1]) <
			0 ||
		    db_text_put(&block, &used, &balloc, st, 8, &offs[k][2]) <
			0) {
			ret = db_oom(db, err);
			goto out;
		}
		k++;
	}
	if (rc != SQLITE_DONE) {
		ret = db_fail(db, err, "cannot list the stories of batch %lld",
		    (long long)batch_id);
		goto out;
	}
	for (i = 0; i < k; i++) {
		v[i].id = block + offs[i][0];
		v[i].last_agent = block + offs[i][1];
		v[i].reason = block + offs[i][2];
	}
	lines_order_ties(v, k);
	if (k > 0) {
		*out = v;
		*text = block;
		*n = k;
		v = NULL;
		block = NULL;
	}
out:
	db_done(st);
	free(offs);
	free(v);
	free(block);
	return ret;
}

int
db_story_list(struct db *db, struct story_row **out, size_t *n,
    int64_t batch_id, const char *status_or_null, struct sc_err *err)
{
	sqlite3_stmt *st = NULL;
	struct db_bind b = {0};
	int ret;

	*out = NULL;
	*n = 0;
	if ((ret = db_prep(db, &st,
		 status_or_null == NULL ? SQL_STORY_LIST
					: SQL_STORY_LIST_STATUS,
		 err)) < 0)
		goto out;
	b.st = st;
	db_bind_int(&b, batch_id);
	if (status_or_null != NULL)
		db_bind_str(&b, status_or_null);
	if ((ret = db_bind_check(db, &b, err)) == 0)
		ret = db_story_rows(db, st, out, n, batch_id, err);
out:
	db_done(st);
	return ret;
}

int
db_status_counts(struct db *db, int counts[STATUS__COUNT], int64_t batch_id,
    struct sc_err *err)
{
	sqlite3_stmt *st = NULL;
	struct db_bind b = {0};
	enum story_status s;
	const char *name;
	int rc, ret;

	memset(counts, 0, STATUS__COUNT * sizeof(counts[0]));
	if ((ret = db_prep(db, &st, SQL_STATUS_COUNTS, err)) < 0)
		goto out;
	b.st = st;
	db_bind_int(&b, batch_id);
	if ((ret = db_bind_check(db, &b, err)) < 0)
		goto out;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		name = (const char *)sqlite3_column_text(st, 0);
		if (status_parse(&s, name) < 0) {
			ret = err_set(err, SC_EIO,
			    "%s: batch %lld: unknown story status '%s'",
			    db->path, (long long)batch_id,
			    name == NULL ? "" : name);
			goto out;
		}
		counts[s] = sqlite3_column_int(st, 1);
	}
	if (rc != SQLITE_DONE)
		ret = db_fail(db, err, "cannot count the stories of batch %lld",
		    (long long)batch_id);
out:
	db_done(st);
	return ret;
}

int
db_batch_spend(struct db *db, double *out, int64_t batch_id, struct sc_err *err)
{
	sqlite3_stmt *st = NULL;
	struct db_bind b = {0};
	int rc, ret;

	*out = 0;
	if ((ret = db_prep(db, &st, SQL_BATCH_SPEND, err)) < 0)
		goto out;
	b.st = st;
	db_bind_int(&b, batch_id);
	if ((ret = db_bind_check(db, &b, err)) < 0)
		goto out;
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		*out = sqlite3_column_double(st, 0);
	else if (rc != SQLITE_DONE)
		ret = db_fail(db, err, "cannot sum the spend of batch %lld",
		    (long long)batch_id);
out:
	db_done(st);
	return ret;
}
