/* batch_select.c - see batch_run_int.h: pick the unfinished batch or
 * create one from the config's stories (docs/stories.md). */
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

#include "controller/engine/attempt.h"
#include "controller/engine/batch_run_int.h"
#include "controller/engine/console.h"
#include "controller/engine/requeue.h"
#include "state/fsutil.h"
#include "state/gitwork.h"
#include "strategies/schedule.h"
#include "strategies/suggest.h"

static bool
wanted(const struct batch_opts *o, const char *id)
{
	size_t i;

	if (o->nonly == 0)
		return true;
	for (i = 0; i < o->nonly; i++)
		if (strcmp(o->only[i], id) == 0)
			return true;
	return false;
}

/* `run STORY...` names a story the config does not have: the error,
 * with the nearest id (docs/stories.md "Ids"). */
static int
no_such_story(const struct batch *b, const char *id, struct sc_err *err)
{
	const struct batch_opts *o = b->o;
	struct suggest sg;
	size_t i;
	int best;

	suggest_init(&sg, id);
	for (i = 0; i < o->nstories && i < INT_MAX; i++)
		suggest_add(&sg, o->stories[i].id, (int)i);
	best = suggest_best(&sg);
	return err_set(err, SC_EUSAGE, "no story '%s' in %s%s%s%s", id,
	    b->cfg->path ? b->cfg->path : "the config",
	    best >= 0 ? "; did you mean " : "",
	    best >= 0 ? o->stories[best].id : "", best >= 0 ? "?" : "");
}

/* What a new batch leaves out, one line each (docs/stories.md
 * "Drafts"): drafts (story_skipped()), and the sprint status's entries
 * that have no story file. */
static void
skipped_lines(struct batch *b, const struct story *s)
{
	const struct config *cfg = b->cfg;
	size_t i;

	if (s != NULL) {
		console_line(b,
		    "skipping %s: Status: %s (run --include-drafts to run "
		    "it)",
		    s->id, s->status_line);
		return;
	}
	for (i = 0; b->o->nonly == 0 && i < cfg->stories_skipped.n; i++)
		console_line(b, "skipping %s", cfg->stories_skipped.items[i]);
}

/* Run the unfinished batch br again; `run STORY...` may only name
 * stories it has. */
static int
select_current(struct batch *b, const struct batch_row *br, struct sc_err *err)
{
	const struct batch_opts *o = b->o;
	struct story_row st;
	size_t i;
	int ok, rc = 0;

	b->batch_id = br->id;
	if (strcmp(br->status, "running") != 0)
		rc = db_batch_set_status(b->db, br->id, "running",
		    o->clock.now_ms(o->clock.ctx), err);
	for (i = 0; rc == 0 && i < o->nonly; i++) {
		rc = db_story_get(b->db, &st, &ok, br->id, o->only[i], err);
		if (rc == 0 && !ok)
			rc = err_set(err, SC_EUSAGE,
			    "story '%s' is not "
			    "in the unfinished batch %lld; finish it "
			    "with 'storyctl resume' first",
			    o->only[i], (long long)br->id);
	}
	return rc;
}

/* A new batch of the wanted stories in the config's order, drafts left
 * out, in one transaction; its start is an event and a state-branch
 * commit. */
static int
select_new(struct batch *b, struct sc_err *err)
{
	const struct batch_opts *o = b->o;
	struct story_row st;
	size_t k, pos = 0;
	size_t *order = NULL;
	int rc;

	rc = stories_order(&order, b->cfg, err);
	if (rc < 0)
		return rc;
	rc = db_tx_begin(b->db, err);
	if (rc < 0) {
		free(order);
		return rc;
	}
	rc = db_batch_create(
	    b->db, &b->batch_id, o->clock.now_ms(o->clock.ctx), err);
	for (k = 0; rc == 0 && k < o->nstories; k++) {
		const struct story *s = &o->stories[order[k]];
		if (!wanted(o, s->id))
			continue;
		if (story_skipped(s, b->cfg)) {
			skipped_lines(b, s);
			continue;
		}
		memset(&st, 0, sizeof(st));
		st.batch_id = b->batch_id;
		snprintf(st.id, sizeof(st.id), "%s", s->id);
		snprintf(st.file, sizeof(st.file), "%s", s->file);
		st.position = (int)pos++;
		st.status = STATUS_PENDING;
		st.counts = s->counts;
		st.updated_ms = o->clock.now_ms(o->clock.ctx);
		rc = db_story_add(b->db, &st, err);
	}
	free(order);
	if (rc == 0)
		skipped_lines(b, NULL);
	if (rc == 0)
		rc = db_tx_commit(b->db, err);
	if (rc < 0) {
		db_tx_rollback(b->db);
		return rc;
	}
	rc = db_event_add(b->db, b->batch_id, o->clock.now_ms(o->clock.ctx),
	    NULL, "batch", "batch started", err);
	if (rc == 0) {
		char subject[128];
		snprintf(subject, sizeof(subject),
		    "storyctl: batch %lld "
		    "started with %zu stor%s",
		    (long long)b->batch_id, pos, pos == 1 ? "y" : "ies");
		rc = statebranch_commit_batch(
		    &b->sb, b->batch_id, subject, "", batch_now_ms(b), err);
	}
	return rc;
}

int
batch_select(struct batch *b, struct batch_result *res, struct sc_err *err)
{
	const struct batch_opts *o = b->o;
	struct batch_row br;
	int found = 0;
	size_t i;
	int rc;

	for (i = 0; i < o->nonly; i++)
		if (batch_story_by_id(o, o->only[i]) == NULL)
			return no_such_story(b, o->only[i], err);
	rc = db_batch_current(b->db, &br, &found, err);
	if (rc < 0)
		return rc;
	if (found)
		return select_current(b, &br, err);
	if (o->mode == BATCH_RESUME) {
		res->nothing = true;
		/* nothing to run, but the branch may lag the last batch */
		rc = db_batch_latest(b->db, &br, &found, err);
		if (rc == 0 && found) {
			b->batch_id = br.id;
			rc = statebranch_sync(
			    &b->sb, b->batch_id, batch_now_ms(b), err);
		}
		return rc;
	}
	return select_new(b, err);
}
