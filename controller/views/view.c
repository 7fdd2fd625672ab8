/*
 * view.c - what the inspect commands start from (view.h).
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "controller/clock.h"
#include "controller/config/stories.h"
#include "controller/views/view.h"
#include "strategies/suggest.h"
#include "strategies/text.h"
/* write: the command changes the record (requeue); the others open the
 * database read-only (docs/state.md#opening). */
int
view_open(struct view *v, const char *config_path,
    const struct view_lender *lender, bool write, struct sc_err *err)
{
	struct stat sb;
	char path[4096];
	int rc;

	if (!write && lender != NULL) {
		rc = lender->lend(v, lender->arg, config_path, err);
		if (rc != 0)
			return rc < 0 ? rc : 0;
	}
	memset(v, 0, sizeof(*v));
	rc = config_locate_load(&v->cfg, config_path, false, err);
	if (rc < 0)
		return rc;
	snprintf(path, sizeof(path), "%s/state.db", v->cfg.state_dir);
	if (stat(path, &sb) < 0)
		return 0; /* nothing has run yet */
	rc = write ? db_open(&v->db, v->cfg.state_dir, err)
		   : db_open_readonly(&v->db, v->cfg.state_dir, err);
	if (rc < 0)
		return rc;
	return db_batch_latest(v->db, &v->batch, &v->have_batch, err);
}

void
view_close(struct view *v)
{
	if (v->lender != NULL) {
		v->lender->give_back(v, v->lender->arg);
		return;
	}
	db_close(v->db);
	config_release(&v->cfg);
}

int64_t
view_now_ms(void)
{
	struct sc_clock c;

	clock_real(&c);
	return c.now_ms(c.ctx);
}

/* Stories of the latest batch; before the first batch, the config's
 * stories as they stand (pending, or invalid without tasks). */
int
view_stories(struct story_row **out, size_t *n, struct view *v,
    const char *status, struct sc_err *err)
{
	struct story *s = NULL;
	struct story_row *rows = NULL;
	size_t ns = 0, i, k = 0;
	int rc;

	*out = NULL;
	*n = 0;
	if (v->have_batch)
		return db_story_list(v->db, out, n, v->batch.id, status, err);
	rc = stories_load(&s, &ns, &v->cfg, err);
	if (rc < 0)
		return rc;
	rows = calloc(ns + 1, sizeof(*rows));
	if (rows == NULL) {
		stories_free(s, ns);
		return err_set(err, SC_EOS, "out of memory");
	}
	for (i = 0; i < ns; i++) {
		struct story_row *r = &rows[k];
		snprintf(r->id, sizeof(r->id), "%s", s[i].id);
		snprintf(r->file, sizeof(r->file), "%s", s[i].file);
		r->position = (int)i;
		r->status = s[i].load_status;
		text_copy(r->reason, sizeof(r->reason),
		    s[i].reason != NULL ? s[i].reason : "");
		r->counts = s[i].counts;
		if (status == NULL ||
		    strcmp(status, status_name(r->status)) == 0)
			k++;
	}
	stories_free(s, ns);
	*out = rows;
	*n = k;
	return 0;
}

/* "no story ID in ...; did you mean X?" (docs/stories.md "Ids"): the
 * nearest of the stories the command could have meant. */
static int
view_no_such_story(struct view *v, const char *id, struct sc_err *err)
{
	struct story_row *rows = NULL;
	struct suggest sg;
	size_t n = 0, i;
	int best = -1;

	if (view_stories(&rows, &n, v, NULL, err) == 0) {
		suggest_init(&sg, id);
		for (i = 0; i < n && i < INT_MAX; i++)
			suggest_add(&sg, rows[i].id, (int)i);
		best = suggest_best(&sg);
	}
	err_set(err, SC_EUSAGE, "no story '%s'%s%s%s%s", id,
	    v->have_batch ? " in the latest batch" : " in the config",
	    best >= 0 ? "; did you mean " : "", best >= 0 ? rows[best].id : "",
	    best >= 0 ? "?" : "");
	free(rows);
	return SC_EUSAGE;
}

int
view_find_story(
    struct story_row *st, struct view *v, const char *id, struct sc_err *err)
{
	struct story_row *rows = NULL;
	size_t n = 0, i;
	int found = 0, rc;

	if (v->have_batch) {
		rc = db_story_get(v->db, st, &found, v->batch.id, id, err);
		if (rc < 0)
			return rc;
	} else {
		rc = view_stories(&rows, &n, v, NULL, err);
		if (rc < 0)
			return rc;
		for (i = 0; i < n && !found; i++) {
			if (strcmp(rows[i].id, id) == 0) {
				*st = rows[i];
				found = 1;
			}
		}
		free(rows);
	}
	if (!found)
		return view_no_such_story(v, id, err);
	return 0;
}
