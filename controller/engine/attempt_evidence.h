/*
 * attempt_evidence.h - an attempt's evidence (docs/evidence.md): the
 * work tree and the story's boxes taken when it starts, what changed
 * measured when its agent ends (with verify.require_diff, unbacked
 * ticks taken back before the gates), recorded before the decision.
 * Best effort: a tree that cannot be measured is recorded as not
 * measured and flags nothing; only a database failure is an error.
 */
#ifndef STORYCTL_ATTEMPT_EVIDENCE_H
#define STORYCTL_ATTEMPT_EVIDENCE_H

#include <stddef.h>

#include "common/err.h"

struct attempt_run; /* controller/engine/attempt_run.h */
struct story_look; /* controller/config/stories.h */
struct evidence_note; /* state/db_evidence.h */

/* Before the agent starts: snapshot its tree, keep the story's boxes,
 * now's items (taken: now->items NULL after; now NULL: the file could
 * not be read, no boxes are compared). */
void attempt_evidence_start(struct attempt_run *ar, struct story_look *now);

/* After the agent ended, ar->end read from now (NULL: the file could
 * not be read): measure and judge; under require_diff, boxes checked
 * with no other change are opened again in the story file and ar->end
 * is read again. */
void attempt_evidence_end(struct attempt_run *ar, const struct story_look *now);

/* Attempt ar->r has its id and end time: *out is its evidence as the
 * decision stores it (out->row NULL: nothing was measured), its event's
 * text in msg (of size len) when a flag is raised, said on the console
 * too.  out points into ar and msg. */
void attempt_evidence_note(
    struct evidence_note *out, char *msg, size_t len, struct attempt_run *ar);

/* Free what ar's evidence holds; the struct is ar's. */
void attempt_evidence_release(struct attempt_run *ar);

#endif
