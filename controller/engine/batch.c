/*
 * batch.c - open the state (lock, database, state branch), close what a
 * dead controller left running, pick or create the batch, and run its
 * pending stories (batch_*.c, batch_run_int.h).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "controller/config/secrets.h"
#include "controller/engine/agentmark.h"
#include "controller/engine/attempt.h"
#include "controller/engine/batch_notify.h"
#include "controller/engine/batch_run_int.h"
#include "controller/engine/console.h"
#include "controller/engine/requeue.h"
#include "state/fsutil.h"
#include "state/gitevidence.h"
#include "state/gitwork.h"
#include "strategies/schedule.h"
#include "strategies/suggest.h"

const struct story *
batch_story_by_id(const struct batch_opts *o, const char *id)
{
	size_t i;

	for (i = 0; i < o->nstories; i++)
		if (strcmp(o->stories[i].id, id) == 0)
			return &o->stories[i];
	return NULL;
}

static int
mkdir_private(const char *path, struct sc_err *err)
{
	if (mkdir(path, 0700) < 0 && errno != EEXIST)
		return err_set(
		    err, SC_EIO, "cannot create %s: %s", path, strerror(errno));
	return 0;
}

/* What the batch has spent so far (its stories' attempts). */
static int
batch_spend(struct batch *b, struct sc_err *err)
{
	return db_batch_spend(b->db, &b->spend_usd, b->batch_id, err);
}

/*
 * A usage-limit pause outlives the controller: the agent's pause.<role>
 * (wall ms) is read back, so that `resume` does not start an agent that
 * is still paused (docs/retry-strategy.md#usage-limits).
 */
static int
batch_load_pauses(struct batch *b, struct sc_err *err)
{
	char key[32], *val = NULL;
	int i, rc = 0;

	for (i = 0; rc == 0 && i < 2; i++) {
		snprintf(key, sizeof(key), "pause.%s", role_name((enum role)i));
		rc = db_meta_get(b->db, key, &val, err);
		if (rc == 0 && val != NULL)
			b->pause_until[i] = strtoll(val, NULL, 10);
		free(val);
		val = NULL;
	}
	return rc;
}

static int
finish(struct batch *b, struct batch_result *res, struct sc_err *err)
{
	const char *status;
	int64_t now = b->o->clock.now_ms(b->o->clock.ctx);
	int rc;
	int i, open = 0;

	rc = db_status_counts(b->db, res->counts, b->batch_id, err);
	if (rc < 0)
		return rc;
	for (i = 0; i < STATUS__COUNT; i++)
		if (i == STATUS_PENDING || i == STATUS_RUNNING)
			open += res->counts[i];
	if (open == 0)
		status = "finished";
	else
		status = "stopped";
	rc = db_batch_set_status(b->db, b->batch_id, status, now, err);
	if (rc < 0)
		return rc;
	if (b->stop_batch)
		rc = db_event_add(b->db, b->batch_id, now, NULL, "stopped",
		    b->stop_reason, err);
	else if (b->interrupted)
		rc = db_event_add(b->db, b->batch_id, now, NULL, "interrupted",
		    "the controller was asked to stop", err);
	else if (open == 0)
		rc = db_event_add(b->db, b->batch_id, now, NULL, "finished",
		    "batch finished", err);
	return rc;
}

/* Open the state: the state dir, its lock (held until batch_run() returns),
 * the database, the state branch, the log and worktree dirs, the slots
 * and the agent seam. */
static int
batch_open(struct batch *b, const struct batch_opts *o, struct sc_err *err)
{
	int rc;

	rc = db_dir_prepare(o->cfg->state_dir, err);
	if (rc < 0)
		goto out;
	rc = lock_acquire(&b->lock, o->cfg->state_dir, err);
	if (rc < 0)
		goto out;
	rc = db_open(&b->db, o->cfg->state_dir, err);
	if (rc < 0)
		goto out;
	rc = gitstate_open(&b->gs, o->cfg->root, o->cfg->git.state_branch, err);
	if (rc < 0)
		goto out;
	/* we hold the state dir's lock: a ref lock older than now is a dead
	 * controller's */
	b->started_ms = o->clock.now_ms(o->clock.ctx);
	gitstate_set_owner_since(b->gs, b->started_ms);
	statebranch_init(&b->sb, b->db, b->gs);
	snprintf(b->logdir, sizeof(b->logdir), "%s/logs", o->cfg->state_dir);
	rc = mkdir_private(b->logdir, err);
	if (rc < 0)
		goto out;
	snprintf(b->wtdir, sizeof(b->wtdir), "%s/worktrees", o->cfg->state_dir);
	rc = agentmark_prefix(
	    b->markpfx, sizeof(b->markpfx), o->cfg->state_dir, err);
	if (rc < 0)
		goto out;
	b->nslots = o->jobs > 1 ? (size_t)o->jobs : 1;
	b->slots = calloc(b->nslots, sizeof(*b->slots));
	if (b->slots == NULL) {
		rc = err_set(err, SC_EOS, "out of memory");
		goto out;
	}
	if (batch_worktrees(b)) {
		rc = mkdir_private(b->wtdir, err);
		if (rc < 0)
			goto out;
	}
	batch_ops_init(&b->ops, o);
out:
	return rc;
}

/* What the run says of itself beyond the counts finish() filled. */
static void
result_fill(struct batch_result *out, const struct batch *b)
{
	/* "stopped before its end" only while stories remain to run */
	out->stopped = b->stop_batch &&
	    out->counts[STATUS_PENDING] + out->counts[STATUS_RUNNING] > 0;
	out->interrupted = b->interrupted;
	out->spend_usd = b->spend_usd;
	out->jobs = (int)b->nslots;
	snprintf(
	    out->stop_reason, sizeof(out->stop_reason), "%s", b->stop_reason);
}

/* The batch chosen, before its first attempt: the main tree checked
 * for changes that are no story's, the worktrees of stories already
 * decided settled, the pauses and the spend read back, the state branch
 * brought up to date, the evidence of earlier runs dropped. */
static int
batch_ready(struct batch *b, struct sc_err *err)
{
	int rc;

	rc = batch_work_check(b, err);
	if (rc < 0)
		goto out;
	rc = batch_worktree_sweep(b, err);
	if (rc < 0)
		goto out;
	rc = batch_load_pauses(b, err);
	if (rc < 0)
		goto out;
	rc = batch_spend(b, err);
	if (rc < 0)
		goto out;
	rc = statebranch_sync(&b->sb, b->batch_id, batch_now_ms(b), err);
	if (rc < 0)
		goto out;
	/* we hold the lock and no attempt runs yet: the evidence
	 * snapshots of earlier runs are needed no more (docs/evidence.md);
	 * here, not earlier, so that a run refused for its arguments
	 * changes nothing in the state dir */
	gitevidence_forget(b->o->cfg->state_dir);
	/* best effort: without it every snapshot looks at the whole tree */
	(void)gitevidence_watches_new(&b->evw, err);
	err_clear(err);
out:
	return rc;
}

int
batch_run(
    struct batch_result *out, const struct batch_opts *o, struct sc_err *err)
{
	struct batch b;
	int rc;

	memset(out, 0, sizeof(*out));
	memset(&b, 0, sizeof(b));
	b.o = o;
	b.cfg = o->cfg;
	/* before anything is read back or stored: reconcile stores the
	 * messages of attempts a dead controller left */
	rc = secrets_of_config(&b.secrets, o->cfg, err);
	if (rc < 0)
		goto out;
	snprintf(
	    out->state_dir, sizeof(out->state_dir), "%s", o->cfg->state_dir);
	snprintf(
	    out->branch, sizeof(out->branch), "%s", o->cfg->git.state_branch);
	rc = batch_open(&b, o, err);
	if (rc < 0)
		goto out;
	batch_notify_open(&b);
	rc = batch_reconcile(&b, err);
	if (rc < 0)
		goto out;
	rc = batch_select(&b, out, err);
	if (rc < 0 || out->nothing)
		goto out;
	out->batch_id = b.batch_id;
	rc = batch_ready(&b, err);
	if (rc < 0)
		goto out;
	rc = batch_run_stories(&b, err);
	if (rc < 0)
		goto out;
	rc = finish(&b, out, err);
	if (rc < 0)
		goto out;
	rc = statebranch_sync(&b.sb, b.batch_id, batch_now_ms(&b), err);
	result_fill(out, &b);
	if (rc == 0)
		batch_notify_end(&b, out);
out:
	/* attempts this stop could not close are recorded as this stop,
	 * not as a crash, by the next start (reconcile) */
	if (rc < 0)
		lock_note_stop(b.lock, err->msg);
	batch_notify_close(&b);
	console_clear(&b);
	gitevidence_watches_free(b.evw);
	free(b.slots);
	statebranch_release(&b.sb);
	gitstate_free(b.gs);
	db_close(b.db);
	lock_release(b.lock);
	redact_values_free(b.secrets);
	return rc;
}
