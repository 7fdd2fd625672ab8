/*
 * render_evidence.h - an attempt's evidence as `show --json` and the
 * state branch's stories/<id>.json spell it (docs/json.md#show,
 * docs/evidence.md), one function for both like render.h.
 */
#ifndef STORYCTL_RENDER_EVIDENCE_H
#define STORYCTL_RENDER_EVIDENCE_H

#include <jansson.h>

#include "state/db_evidence.h"
#include "state/gitevidence.h"

/* The listed files of d as a JSON array text ([{"path", "status",
 * "added", "removed", "binary"}]); malloc'd, NULL on OOM. */
char *render_evidence_files(const struct gitevidence_diff *d);

/* {"measured", "not_measured", "files_changed", "lines_added",
 *  "lines_removed", "files", "ticked", "unticked", "first_unticked",
 *  "flags", "base_tree"}; new reference, NULL on OOM. */
json_t *render_evidence_json(const struct evidence_row *e);

/* Set "evidence" on every attempt of story (render_story_json()'s
 * object): the row of e[0..n) with its seq, or null.  SC_EOS on OOM. */
int render_story_add_evidence(
    json_t *story, const struct evidence_row *e, size_t n);

#endif
