/*
 * progress.h - task progress of a story file (docs/stories.md).
 * Pure: the caller reads the file and passes its bytes.
 *
 * The file is read as GitHub renders it (cmark-gfm and its tasklist
 * extension).  Tasks are the task-list items ("- [ ]", "- [x]", "* [X]",
 * "1. [ ]": any bullet or ordered list, any indentation CommonMark
 * allows) of the lists at the top level of the Tasks section; task items
 * nested inside them are subtasks, counted apart.  Checkboxes in code
 * blocks, HTML or block quotes never count.
 *
 * The Tasks section is the first heading that names it in words of the
 * table in heading_words.c ("Tasks / Subtasks", "任务列表", "Tarefas de
 * Implementação", in a dozen languages), or the configured heading;
 * without one, the first that begins with tasks and a conjunction, then
 * the first that mentions tasks as a word; never a title, nor a
 * checklist of acceptance criteria, QA or done.  When that section is
 * all checked and another candidate has an open task, the open one is
 * counted.  It runs to the next heading of the same or a higher level;
 * the same heading written again continues it, and counts once when it
 * repeats the same tasks.  A file with no heading at all is one
 * section (whole_file); a file with headings but no tasks section has
 * no tasks (docs/stories.md).
 * Bytes may be anything (NUL, invalid UTF-8): they are never trusted.
 */
#ifndef STORYCTL_PROGRESS_H
#define STORYCTL_PROGRESS_H

#include <stdbool.h>
#include <stddef.h>

#include "common/err.h"
#include "common/model.h"

#define PROGRESS_TASK_MAX 256
#define PROGRESS_WRITTEN_MAX 96 /* a heading as written, cleaned */

struct progress {
	/* subtasks: task items nested in the tasks (any depth) */
	struct task_counts counts;
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
	/* the section's heading as written ("## Tasks / Subtasks"),
	 * cleaned, and its line (0: none) */
	char heading_written[PROGRESS_WRITTEN_MAX];
	int heading_line;
	/* The first heading passed over that mentions tasks but heads a
	 * checklist of acceptance criteria, QA or done (or sits in one),
	 * as written ("### 功能验收 - Task 模块"), and its line (0: none). */
	char rejected[PROGRESS_WRITTEN_MAX];
	int rejected_line;
	/* Two task lists disagreed: this section was all checked and was
	 * passed over for the first one with an open task, so the story
	 * is not done (docs/stories.md).  As written, its line (0: none)
	 * and how many tasks it holds. */
	char passed_over[PROGRESS_WRITTEN_MAX];
	int passed_over_line;
	int passed_over_tasks;
	/* The Tasks section written again with the same tasks (a story
	 * pasted twice): how many copies were counted once, the line of
	 * the first copy's heading (0: none). */
	int copies;
	int copy_line;
	/* a line that looks like a heading but is indented into a code
	 * block, so GitHub shows no heading there (0: none) */
	int code_heading_line;
};

/* Fill *out from the len bytes at text.  Never fails. */
void progress_parse(struct progress *out, const char *text, size_t len);

/* The same, with the Tasks section named by tasks_heading (any case,
 * numbering and a trailing colon ignored; NULL or "": the default rule). */
void progress_parse_heading(struct progress *out, const char *text, size_t len,
    const char *tasks_heading);

/* What progress_items() lists (docs/stories.md, `storyctl tasks`). */
enum progress_item_kind {
	PROGRESS_ITEM_TASK, /* a task: counted */
	PROGRESS_ITEM_SUBTASK, /* a task item nested in a task: counted */
	/* in the Tasks section, looks like a task but is not one on
	 * GitHub ("- [-]", "- ✅", "- [ ]*"): not counted, check warns */
	PROGRESS_ITEM_SKIPPED,
	PROGRESS_ITEM_OUTSIDE, /* a task item outside the Tasks section */
	/* a box in a code block, an HTML block or a block quote */
	PROGRESS_ITEM_IGNORED,
	/* a heading that starts, continues or ends the Tasks section */
	PROGRESS_ITEM_HEADING,
};

#define PROGRESS_WHY_MAX 112
/* progress_items() lists at most this many items (the counts are
 * always complete) */
#define PROGRESS_ITEMS_MAX 10000

struct progress_item {
	int line; /* 1-based source line */
	enum progress_item_kind kind;
	bool checked; /* the box reads [x] (or a check-mark emoji) */
	/* the first line of its text as written (a task's after its box;
	 * a skipped item's with its box), cleaned and bounded */
	char text[PROGRESS_TASK_MAX];
	/* why it is what it is: "task under ## Tasks / Subtasks", "subtask
	 * of line 12", "not counted: [-] is not a checkbox", ... */
	char why[PROGRESS_WHY_MAX];
};

/*
 * Every item the parser saw, in source order, for `storyctl tasks`:
 * tasks, subtasks and skipped items of the Tasks section, task items
 * outside it, boxes in code, HTML and block quotes, and the headings
 * that start, continue and end the section.  Counted exactly as
 * progress_parse_heading() counts (one walk does both); *prog (may be
 * NULL) gets its result.  *out is malloc'd (free()), NULL when *n is 0;
 * at most PROGRESS_ITEMS_MAX items.  SC_EOS when out of memory.
 */
int progress_items(struct progress_item **out, size_t *n, struct progress *prog,
    const char *text, size_t len, const char *tasks_heading,
    struct sc_err *err);

/* "task", "subtask", "skipped", "outside", "ignored", "heading" */
const char *progress_item_kind_name(enum progress_item_kind k);

/* Why a story with tasks_total == 0 has none, for its invalid reason,
 * naming the heading used or passed over, into buf (len bytes); returns
 * buf. */
const char *progress_no_tasks_reason(
    char *buf, size_t len, const struct progress *p);

#endif
