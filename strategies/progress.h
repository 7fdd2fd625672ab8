/*
 * progress.h - task progress of a story file (SPEC 2, docs/stories.md).
 * Pure: the caller reads the file and passes its bytes.
 *
 * The file is read as GitHub renders it (cmark-gfm and its tasklist
 * extension).  Tasks are the task-list items ("- [ ]", "- [x]", "* [X]",
 * "1. [ ]": any bullet or ordered list, any indentation CommonMark
 * allows) of the lists at the top level of the Tasks section; task items
 * nested inside them are subtasks, counted apart.  Checkboxes in code
 * blocks, HTML or block quotes never count.
 *
 * The Tasks section is the first heading that reads like BMAD's "Tasks
 * / Subtasks" (or "Tasks", "Implementation Tasks", "Task Breakdown", …;
 * numbering and a trailing colon ignored), or the configured heading;
 * without one, the first heading that mentions "task" other than a
 * level-1 title.  It runs to the next heading of the same or a higher
 * level; the same heading written again continues it.  A file with no
 * heading at all is one section (whole_file); a file with headings but
 * no tasks section has no tasks.
 * Bytes may be anything (NUL, invalid UTF-8): they are never trusted.
 */
#ifndef STORYCTL_PROGRESS_H
#define STORYCTL_PROGRESS_H

#include <stdbool.h>
#include <stddef.h>

#define PROGRESS_TASK_MAX 256

struct progress {
	int tasks_total;
	int tasks_completed;
	/* task items nested in the tasks (any depth) */
	int subtasks_total;
	int subtasks_completed;
	/* Text of the first unchecked task, cleaned, truncated to fit (at a
	 * UTF-8 boundary); "" when every task is checked. */
	char stalled_task[PROGRESS_TASK_MAX];
	/* the heading whose section was counted, normalised; "" when
	 * whole_file or when no section was found */
	char heading[128];
	bool whole_file; /* no heading at all: the whole file counted */
	/* Items in the Tasks section that look like tasks but are not
	 * counted ("- [-]", "- [~]", emoji boxes, an optional "- [ ]*"):
	 * how many, the 1-based source line of the first (0: none) and its
	 * text as written, cleaned and bounded.  check reports them. */
	int skipped_items;
	int skipped_first_line;
	char skipped_first[PROGRESS_TASK_MAX];
};

/* Fill *out from the len bytes at text.  Never fails. */
void progress_parse(struct progress *out, const char *text, size_t len);

/* The same, with the Tasks section named by tasks_heading (any case,
 * numbering and a trailing colon ignored; NULL or "": the default rule). */
void progress_parse_heading(struct progress *out, const char *text, size_t len,
    const char *tasks_heading);

/* Why a story with tasks_total == 0 has none, for its invalid reason (a
 * static string). */
const char *progress_no_tasks_reason(const struct progress *p);

#endif
