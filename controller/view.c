/*
 * view.c - what the inspect commands start from (view.h).
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "controller/clock.h"
#include "controller/serve_config.h"
#include "controller/stories.h"
#include "controller/view.h"
#include "strategies/suggest.h"
/* write: the command changes the record (requeue); the others open the
 * database read-only (docs/state.md#opening). */
int
view_open(struct view *v, const struct cli *cli, bool write, struct sc_err *err)
{
	struct stat sb;
	char path[4096];
	int rc;

	if (!write && cli->serve != NULL && serve_config_can_lend(cli->serve))
		return serve_config_view_open(v, cli->serve, cli, err);
	memset(v, 0, sizeof(*v));
	rc = cli_load_config(&v->cfg, cli, false, err);
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
		serve_config_view_close(v->lender, v);
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
		snprintf(r->reason, sizeof(r->reason), "%s",
		    s[i].reason != NULL ? s[i].reason : "");
		r->tasks_completed = s[i].tasks_completed;
		r->tasks_total = s[i].tasks_total;
		r->subtasks_completed = s[i].subtasks_completed;
		r->subtasks_total = s[i].subtasks_total;
		if (status == NULL ||
		    strcmp(status, status_name(r->status)) == 0)
			k++;
	}
	stories_free(s, ns);
	*out = rows;
	*n = k;
	return 0;
}

int
view_parse_flags(const char *cmd, int argc, char **argv, int *json, int *follow,
    const char **status, const char **story, struct sc_err *err)
{
	enum story_status st;
	int i, r;

	for (i = 1; i < argc; i++) {
		if (json != NULL && strcmp(argv[i], "--json") == 0) {
			*json = 1;
			continue;
		}
		if (follow != NULL &&
		    (strcmp(argv[i], "--follow") == 0 ||
			strcmp(argv[i], "-f") == 0)) {
			*follow = 1;
			continue;
		}
		if (status != NULL) {
			r = cli_opt_value(
			    status, argc, argv, &i, "--status", err);
			if (r < 0)
				return r;
			if (r == 1) {
				if (status_parse(&st, *status) < 0)
					return err_set(err, SC_EUSAGE,
					    "%s: "
					    "unknown status '%s' (pending, "
					    "running, done, deferred, "
					    "escalated, "
					    "blocked, invalid)",
					    cmd, *status);
				continue;
			}
		}
		if (argv[i][0] == '-')
			return err_set(err, SC_EUSAGE,
			    "%s: unknown option '%s'", cmd, argv[i]);
		if (story != NULL && *story == NULL) {
			*story = argv[i];
			continue;
		}
		return err_set(err, SC_EUSAGE, "%s: unexpected argument '%s'",
		    cmd, argv[i]);
	}
	if (story != NULL && *story == NULL)
		return err_set(err, SC_EUSAGE,
		    "%s: which story? (storyctl %s "
		    "STORY)",
		    cmd, cmd);
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
