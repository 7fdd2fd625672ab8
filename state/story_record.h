/*
 * story_record.h - one story's record as `show --json`, GET
 * /v1/stories/ID and the state branch's stories/<id>.json carry it
 * (docs/json.md#show, docs/state-branch.md#layout): read once from the
 * database by story_record_read() and built once by story_record_json(),
 * so that the three never drift apart (docs/design.md#the-read-model).
 */
#ifndef STORYCTL_STORY_RECORD_H
#define STORYCTL_STORY_RECORD_H

#include <jansson.h>

#include "common/err.h"
#include "state/db.h"
#include "state/db_evidence.h"

/* The facts of one story; everything is owned (story_record_release()). */
struct story_record {
	struct story_row st;
	struct attempt_row *rows; /* its attempts in the batch */
	size_t n;
	struct failure_row *fl; /* reported from outside storyctl */
	size_t nf;
	struct evidence_row *ev; /* each attempt's (docs/evidence.md) */
	size_t nev;
	char *override; /* its retry-policy override's JSON, or NULL */
};

/* Fill *out for the story st of batch batch_id (0: no batch yet, so
 * only the row and the override; db NULL: only the row); st is
 * copied.  On error *out holds
 * nothing to release.  SC_EOS or the database's error. */
int story_record_read(struct story_record *out, struct db *db, int64_t batch_id,
    const struct story_row *st, struct sc_err *err);

/* Free what r owns and zero it; a zeroed record is fine. */
void story_record_release(struct story_record *r);

/* The record's JSON (render_story_json() with each attempt's evidence
 * and, only while there is one, "external_failures"); *out is a new
 * reference.  SC_EOS on OOM. */
int story_record_json(
    json_t **out, const struct story_record *r, struct sc_err *err);

#endif
