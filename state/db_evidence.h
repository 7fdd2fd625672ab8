/*
 * db_evidence.h - an attempt's evidence in the database (docs/state.md,
 * docs/evidence.md): what it changed in its work tree besides the story
 * file and its boxes' flags, one row per measured attempt in the
 * attempt_evidence table.  The contract of db.h holds.
 */
#ifndef STORYCTL_DB_EVIDENCE_H
#define STORYCTL_DB_EVIDENCE_H

#include "state/db.h"

struct evidence_row {
	int64_t attempt_id; /* attempts.id */
	int seq; /* read back: the attempt's seq in its story */
	/* the change was measured; when not, why (not_measured) and the
	 * change figures are -1 */
	bool measured;
	char not_measured[256];
	char base_tree[48]; /* the snapshot at the attempt's start */
	int files_changed, lines_added, lines_removed;
	/* the files by name, a JSON array (render_evidence_files()); owned
	 * (malloc), NULL when none */
	char *files;
	int ticked, unticked; /* boxes newly checked, boxes opened again */
	char first_unticked[256];
	bool ticked_without_change;
};

/* An attempt's evidence as its decision stores it: the row (its
 * attempt_id set) and the text of its "evidence" event, NULL when no
 * flag was raised (docs/evidence.md). */
struct evidence_note {
	const struct evidence_row *row;
	const char *event_msg;
};

/*
 * db_attempt_finish() with ev (NULL: none) in the same transaction: its
 * row, and its event timed like the decision's and before it.  The
 * evidence and the decision it informed are written together or not at
 * all, one commit a decision (docs/state.md#attempt-evidence).
 */
int db_attempt_finish_noted(struct db *db, const struct attempt_row *r,
    const struct story_row *s, const char *event_kind, const char *event_msg,
    const struct evidence_note *ev, struct sc_err *err);

/* The evidence rows of one story's attempts in a batch, by seq; *out the
 * caller's: evidence_rows_free().  Attempts with none have no row. */
int db_evidence_for_story(struct db *db, struct evidence_row **out, size_t *n,
    int64_t batch_id, const char *story_id, struct sc_err *err);

/* Free what the rows own, then the array.  NULL ok. */
void evidence_rows_free(struct evidence_row *rows, size_t n);

#endif
