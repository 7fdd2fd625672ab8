/* requeue.c - see requeue.h. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "controller/engine/requeue.h"
#include "strategies/text.h"

int
requeue_story(struct db *db, struct story_row *st, const char *reason,
    int64_t now_ms, struct sc_err *err)
{
	struct attempt_row *rows = NULL;
	size_t n = 0;
	int rc;

	rc = db_attempts_for_story(db, &rows, &n, st->batch_id, st->id, err);
	if (rc < 0)
		goto out;
	/* history kept; the strategy starts counting again after it */
	st->seq_base = n > 0 ? rows[n - 1].seq : 0;
	st->attempt_base = st->attempts;
	st->status = STATUS_PENDING;
	text_copy(st->reason, sizeof(st->reason), reason);
	st->updated_ms = now_ms;
	rc = db_story_update(db, st, err);
	if (rc == 0)
		rc = db_event_add(
		    db, st->batch_id, now_ms, st->id, "requeued", reason, err);
	/* a controller running the batch reads the statuses again
	 * (docs/api.md#while-a-batch-runs) */
	if (rc == 0)
		rc = db_reopen_bump(db, err);
out:
	attempt_rows_free(rows, n);
	return rc;
}

static bool
depends_on(const struct config *cfg, const char *story, const char *dep)
{
	int i = config_story_index(cfg, story);

	return i >= 0 && strlist_find(&cfg->stories[i].depends_on, dep) >= 0;
}

/* Every blocked story of the batch that depends on id, directly or
 * through other blocked stories, back to pending (their blocking reason
 * is gone).  *out_n counts them. */
static int
requeue_dependents(struct db *db, const struct config *cfg, int64_t batch_id,
    const char *id, int64_t now_ms, int *out_n, struct sc_err *err)
{
	struct story_row *rows = NULL;
	bool *freed = NULL;
	size_t n = 0, i, k;
	bool more = true;
	char reason[300];
	int rc;

	*out_n = 0;
	rc = db_story_list(db, &rows, &n, batch_id, NULL, err);
	if (rc < 0)
		goto out;
	freed = calloc(n + 1, sizeof(*freed));
	if (freed == NULL) {
		rc = err_set(err, SC_EOS, "out of memory");
		goto out;
	}
	/* a fixed point: blocked stories that depend on id or on a story
	 * freed already */
	while (more) {
		more = false;
		for (i = 0; i < n; i++) {
			bool hit;
			if (freed[i] || rows[i].status != STATUS_BLOCKED)
				continue;
			hit = depends_on(cfg, rows[i].id, id);
			for (k = 0; k < n && !hit; k++)
				hit = freed[k] &&
				    depends_on(cfg, rows[i].id, rows[k].id);
			if (!hit)
				continue;
			snprintf(reason, sizeof(reason),
			    "requeued with its dependency %.128s", id);
			rc = requeue_story(db, &rows[i], reason, now_ms, err);
			if (rc < 0)
				goto out;
			freed[i] = true;
			(*out_n)++;
			more = true;
		}
	}
out:
	free(freed);
	free(rows);
	return rc;
}

int
requeue_batch_reopen(struct db *db, const struct batch_row *batch,
    int64_t now_ms, struct sc_err *err)
{
	if (strcmp(batch->status, "finished") != 0)
		return 0;
	return db_batch_set_status(db, batch->id, "stopped", now_ms, err);
}

int
requeue_by_user(struct db *db, const struct config *cfg,
    const struct batch_row *batch, struct story_row *st, int64_t now_ms,
    int *freed, struct sc_err *err)
{
	char msg[500];
	int rc;

	*freed = 0;
	if (st->status != STATUS_DEFERRED && st->status != STATUS_ESCALATED &&
	    st->status != STATUS_BLOCKED)
		return err_set(err, SC_EUSAGE,
		    "requeue: story %s is %s; only a "
		    "deferred, escalated or blocked story can be requeued",
		    st->id, status_name(st->status));
	snprintf(msg, sizeof(msg), "requeued from %s (%.400s)",
	    status_name(st->status), st->reason);
	/* all of it or nothing: a dependent left blocked behind a
	 * requeued story would wait for nothing */
	rc = db_tx_begin(db, err);
	if (rc < 0)
		return rc;
	rc = requeue_story(db, st, msg, now_ms, err);
	if (rc == 0)
		rc = requeue_dependents(
		    db, cfg, batch->id, st->id, now_ms, freed, err);
	if (rc == 0)
		rc = requeue_batch_reopen(db, batch, now_ms, err);
	if (rc == 0)
		rc = db_tx_commit(db, err);
	if (rc < 0)
		db_tx_rollback(db);
	return rc;
}
