/*
 * progress.h - task progress of a story file (SPEC 2).  Pure: the caller
 * reads the file and passes its bytes.
 *
 * Tasks are unindented markdown checkbox items ("- [ ]", "- [x]", "- [X]",
 * with "-", "*" or "+" bullets).  Indented ones are subtasks and do not
 * count.  If a heading's text contains "tasks" (any case), only the items
 * under the first such heading, up to the next heading of the same or a
 * higher level, count; otherwise every unindented checkbox in the file.
 * Checkboxes inside fenced code blocks (``` or ~~~) never count.
 * Bytes may be anything (NUL, invalid UTF-8): they are never trusted.
 */
#ifndef STORYCTL_PROGRESS_H
#define STORYCTL_PROGRESS_H

#include <stddef.h>

#define PROGRESS_TASK_MAX 256

struct progress {
	int tasks_total;
	int tasks_completed;
	/* Text of the first unchecked task, trimmed, truncated to fit (at a
	 * UTF-8 boundary); "" when every task is checked. */
	char stalled_task[PROGRESS_TASK_MAX];
};

/* Fill *out from the len bytes at text.  Never fails. */
void progress_parse(struct progress *out, const char *text, size_t len);

#endif
