/*
 * views_story.c - the read model's stories: the list and one story's
 * record, read once from a view for `list`, `show`, GET /v1/stories,
 * GET /v1/stories/ID and the report (docs/json.md#list,
 * docs/json.md#show).  The text is cmd_inspect.c's.
 */
#include <stdlib.h>
#include <string.h>

#include "controller/cli/cli.h"
#include "controller/views/view.h"
#include "controller/views/views.h"
#include "state/db.h"
#include "state/story_record.h"

/* list --json: an array whose every element carries the format_version
 * (docs/json.md#list); cost_usd null when no attempt reported one. */
static int
list_build_json(
    json_t **out, const struct story_row *rows, size_t n, struct sc_err *err)
{
	json_t *arr = json_array(), *o;
	size_t i;
	int rc = 0;

	for (i = 0; arr != NULL && i < n; i++) {
		o = json_pack("{s:i, s:s, s:s, s:s, s:i, s:i, s:i, s:o, s:i, "
			      "s:i, s:o}",
		    "format_version", CLI_JSON_FORMAT_VERSION, "id", rows[i].id,
		    "file", rows[i].file, "status", status_name(rows[i].status),
		    "attempts", rows[i].attempts, "tasks_completed",
		    rows[i].counts.tasks_completed, "tasks_total",
		    rows[i].counts.tasks_total, "reason",
		    rows[i].reason[0] ? json_string(rows[i].reason)
				      : json_null(),
		    "subtasks_completed", rows[i].counts.subtasks_completed,
		    "subtasks_total", rows[i].counts.subtasks_total, "cost_usd",
		    rows[i].cost_usd > 0 ? json_real(rows[i].cost_usd)
					 : json_null());
		if (o == NULL || json_array_append_new(arr, o) < 0) {
			rc = err_set(err, SC_EOS, "out of memory");
			goto out;
		}
	}
	if (arr == NULL)
		rc = err_set(err, SC_EOS, "out of memory");
out:
	if (rc < 0) {
		json_decref(arr);
		arr = NULL;
	}
	*out = arr;
	return rc;
}

/* One builder for list --json and GET /v1/stories (docs/api.md). */
int
views_list_json(
    json_t **out, struct view *v, const char *status, struct sc_err *err)
{
	struct story_row *rows = NULL;
	size_t n = 0;
	int rc;

	*out = NULL;
	rc = view_stories(&rows, &n, v, status, err);
	if (rc == 0)
		rc = list_build_json(out, rows, n, err);
	free(rows);
	return rc;
}

void
views_story_release(struct story_record *sh)
{
	story_record_release(sh);
}

int
views_story_read(
    struct story_record *sh, struct view *v, const char *id, struct sc_err *err)
{
	struct story_row st;
	int rc;

	memset(sh, 0, sizeof(*sh));
	rc = view_find_story(&st, v, id, err);
	if (rc == 0)
		rc = story_record_read(
		    sh, v->db, v->have_batch ? v->batch.id : 0, &st, err);
	return rc;
}

/* show ID --json and GET /v1/stories/ID (docs/api.md): the record the
 * state branch keeps as stories/<id>.json (docs/state-branch.md), built
 * by the same story_record_json(), with the format_version first
 * (docs/json.md#show); the branch's copy carries none. */
int
views_show_json(
    json_t **out, struct view *v, const char *id, struct sc_err *err)
{
	struct story_record sh;
	json_t *j = NULL, *o = NULL;
	int rc;

	*out = NULL;
	rc = views_story_read(&sh, v, id, err);
	if (rc == 0)
		rc = story_record_json(&j, &sh, err);
	if (rc == 0 &&
	    ((o = json_pack("{s:i}", "format_version",
		  CLI_JSON_FORMAT_VERSION)) == NULL ||
		json_object_update(o, j) != 0)) {
		rc = err_set(err, SC_EOS, "out of memory");
		json_decref(o);
		o = NULL;
	}
	json_decref(j);
	views_story_release(&sh);
	*out = o;
	return rc;
}

const struct attempt_row *
views_story_attempt(const struct story_record *sh, int n)
{
	size_t i;

	if (sh->n > 0 && n == 0)
		return &sh->rows[sh->n - 1];
	for (i = sh->n; i > 0; i--)
		if (sh->rows[i - 1].attempt == n)
			return &sh->rows[i - 1];
	return NULL;
}

int
views_story_no_attempt(
    const struct story_record *sh, const char *cmd, int n, struct sc_err *err)
{
	int lo = 0, hi = 0;
	size_t i;

	if (sh->n == 0)
		return err_set(err, SC_EUSAGE,
		    "%s: story '%s' has no attempt yet", cmd, sh->st.id);
	for (i = 0; i < sh->n; i++) {
		if (lo == 0 || sh->rows[i].attempt < lo)
			lo = sh->rows[i].attempt;
		if (sh->rows[i].attempt > hi)
			hi = sh->rows[i].attempt;
	}
	return err_set(err, SC_EUSAGE,
	    "%s: story '%s' has no attempt %d; did you mean --attempt %d? "
	    "(it has attempts %d to %d)",
	    cmd, sh->st.id, n, n < lo ? lo : hi, lo, hi);
}
