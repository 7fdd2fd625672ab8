/* story_record.c - see story_record.h. */
#include <stdlib.h>
#include <string.h>

#include "state/render.h"
#include "state/render_evidence.h"
#include "state/story_record.h"

void
story_record_release(struct story_record *r)
{
	if (r == NULL)
		return;
	attempt_rows_free(r->rows, r->n);
	failure_rows_free(r->fl, r->nf);
	evidence_rows_free(r->ev, r->nev);
	free(r->override);
	memset(r, 0, sizeof(*r));
}

int
story_record_read(struct story_record *out, struct db *db, int64_t batch_id,
    const struct story_row *st, struct sc_err *err)
{
	struct policy_row pol = {0};
	int found = 0, rc = 0;

	memset(out, 0, sizeof(*out));
	out->st = *st;
	if (batch_id > 0)
		rc = db_attempts_for_story(
		    db, &out->rows, &out->n, batch_id, st->id, err);
	if (rc == 0 && batch_id > 0)
		rc = db_failures_for_story(
		    db, &out->fl, &out->nf, batch_id, st->id, false, err);
	if (rc == 0 && batch_id > 0)
		rc = db_evidence_for_story(
		    db, &out->ev, &out->nev, batch_id, st->id, err);
	/* a story listed before the first run has no database yet */
	if (rc == 0 && db != NULL)
		rc = db_policy_get(db, &pol, &found, st->id, err);
	if (rc == 0 && found)
		out->override = pol.body;
	if (rc < 0)
		story_record_release(out);
	return rc;
}

int
story_record_json(
    json_t **out, const struct story_record *r, struct sc_err *err)
{
	json_t *j = render_story_json(&r->st, r->rows, r->n, r->override);
	int rc = 0;

	if (j != NULL && render_story_add_evidence(j, r->ev, r->nev) < 0) {
		json_decref(j);
		j = NULL;
	}
	/* only while there is one, so that a story without keeps its
	 * bytes (docs/json.md#show) */
	if (j != NULL && r->nf > 0 &&
	    json_object_set_new(j, "external_failures",
		render_failures_json(r->fl, r->nf)) != 0) {
		json_decref(j);
		j = NULL;
	}
	if (j == NULL)
		rc = err_set(
		    err, SC_EOS, "out of memory rendering story %s", r->st.id);
	*out = j;
	return rc;
}
