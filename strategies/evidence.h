/*
 * evidence.h - are an attempt's checked boxes backed by a change
 * (docs/evidence.md)?  Pure: the boxes of the story file before and
 * after the attempt (progress_items()), the number of other files the
 * attempt changed (state/gitevidence.h measures it), the setting; out
 * come the counts and the flags, and the story text with unbacked
 * ticks taken back.
 *
 * A box is known by its text: a box after the attempt is the box before
 * it with the same text (the same kind does not matter: a task moved
 * under another is still the same box), boxes with the same text paired
 * in order.  Tasks and subtasks count alike; skipped items, boxes
 * outside the Tasks section and boxes in code do not.
 */
#ifndef STORYCTL_EVIDENCE_H
#define STORYCTL_EVIDENCE_H

#include <stdbool.h>
#include <stddef.h>

#include "common/err.h"
#include "strategies/progress.h"

/* How many newly checked boxes' lines are kept (for evidence_untick). */
#define EVIDENCE_LINES_MAX 64

struct evidence_boxes {
	/* boxes checked after the attempt that were open before it, or
	 * that it added already checked */
	int ticked;
	/* boxes checked before the attempt and open after it */
	int unticked;
	/* the first unticked box's text, "" when none */
	char first_unticked[PROGRESS_TASK_MAX];
	/* the 1-based lines, in the text after the attempt, of the first
	 * EVIDENCE_LINES_MAX newly checked boxes */
	size_t nlines;
	int lines[EVIDENCE_LINES_MAX];
};

/* Compare the boxes of before[0..nb) with after[0..na).  SC_EOS when
 * out of memory (*out zeroed). */
int evidence_compare(struct evidence_boxes *out,
    const struct progress_item *before, size_t nb,
    const struct progress_item *after, size_t na, struct sc_err *err);

struct evidence_verdict {
	/* boxes were checked and no other file changed */
	bool ticked_without_change;
	/* boxes checked before are open now */
	bool unticked;
	/* verify.require_diff holds and ticked_without_change: the attempt
	 * is incomplete / NO_EVIDENCE and its ticks are taken back */
	bool no_evidence;
};

/* The flags of boxes b with files_changed other files (< 0: not
 * measured, so nothing is flagged as unbacked). */
void evidence_judge(struct evidence_verdict *out,
    const struct evidence_boxes *b, int files_changed, bool require_diff);

/*
 * text (len bytes) with the boxes on lines[0..n) (1-based) opened
 * again: the first "[x]" or "[X]" on each such line becomes "[ ]",
 * every other byte as it was.  *out malloc'd (free()), *outlen bytes
 * (== len), NUL-ended; *nchanged the boxes opened.  SC_EOS when out of
 * memory.
 */
int evidence_untick(char **out, size_t *outlen, int *nchanged, const char *text,
    size_t len, const int *lines, size_t n, struct sc_err *err);

/* "ticked_without_change" and "unticked": the flags' names in the
 * database, JSON and the event log. */
#define EVIDENCE_FLAG_TICKED "ticked_without_change"
#define EVIDENCE_FLAG_UNTICKED "unticked"

#endif
