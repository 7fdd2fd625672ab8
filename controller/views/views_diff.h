/*
 * views_diff.h - what `storyctl diff STORY [--attempt N]` prints: the
 * change an attempt made in its work tree, as `git diff` prints it,
 * kept beside the attempt's log when its agent ended
 * (docs/evidence.md#the-attempts-diff), read back and redacted.
 */
#ifndef STORYCTL_VIEWS_DIFF_H
#define STORYCTL_VIEWS_DIFF_H

#include <stdbool.h>
#include <stddef.h>

#include "common/err.h"
#include "controller/views/view.h"
#include "state/story_record.h"

/* One attempt's diff, or why there is none; owned (views_diff_release()). */
struct views_diff {
	char story[128];
	int attempt; /* its number */
	/* the diff, redacted; NULL when there is none to print, and then
	 * why says why (a sentence without the story and attempt) */
	char *text;
	size_t len;
	char why[1024];
	int files_changed; /* as measured, -1 when not */
	char path[600]; /* where the diff is kept, "" when it cannot be */
};

/*
 * The diff of attempt number attempt of story id in the latest batch
 * (0: its last attempt; a number that ran more than once, a rerun after
 * a usage limit, is its last run).  An attempt that changed nothing
 * gives text "" (len 0).  SC_EUSAGE (a suggestion in the message) for
 * an unknown story, a story without attempts or an attempt it does not
 * have; SC_EIO when the kept diff cannot be read; SC_EOS; the
 * database's errors.
 */
int views_diff_read(struct views_diff *out, struct view *v, const char *id,
    int attempt, struct sc_err *err);

/* The same for attempt a of the record sh, already read (the report
 * reads each story once). */
int views_diff_of(struct views_diff *out, const struct config *cfg,
    const struct story_record *sh, const struct attempt_row *a,
    struct sc_err *err);

/* Free what d owns and zero it; a zeroed d is fine. */
void views_diff_release(struct views_diff *d);

#endif
