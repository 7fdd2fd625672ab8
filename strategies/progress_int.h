/*
 * progress_int.h - what progress.c (the walk that counts tasks) and
 * progress_heading.c (which heading opens the Tasks section) share; not
 * an interface.  Pure.
 */
#ifndef STORYCTL_PROGRESS_INT_H
#define STORYCTL_PROGRESS_INT_H

#include <stdbool.h>
#include <stddef.h>

#include <cmark-gfm.h>

#include "strategies/progress.h"

/* normalised heading text: lower case, blanks folded, numbering and a
 * trailing colon dropped */
#define PROGRESS_HEAD_MAX 128

/* The configured stories.tasks_heading as words (heading_words.h), as
 * a document's heading is read, into want (len bytes). */
void progress_heading_want(char *want, size_t len, const char *configured);

/* How strongly a heading reads as the Tasks section
 * (docs/stories.md#the-tasks-section). */
enum head_rank {
	HEAD_NONE,
	HEAD_MENTION, /* mentions tasks: "## Next Developer Tasks" */
	HEAD_LEADS, /* tasks and a conjunction: "## Tasks & Acceptance" */
	HEAD_NAMED, /* names it: "## Tasks / Subtasks", "## 任务列表" */
};

struct head_read {
	int rank; /* enum head_rank */
	/* it heads a checklist: acceptance criteria, QA, done */
	bool checklist;
	/* the words of the part that names the section (HEAD_NAMED) */
	char key[PROGRESS_HEAD_MAX];
	char norm[PROGRESS_HEAD_MAX]; /* progress_heading_norm() */
	int level;
};

/* How heading h reads; want as for progress_heading_scan(). */
void progress_heading_read(
    struct head_read *r, cmark_node *h, const char *want);

/* At most this many headings are kept as candidates; past it a higher
 * rank replaces a lower one. */
#define PROGRESS_CANDS_MAX 32

/* The headings of a document that may open its Tasks section, in
 * document order. */
struct progress_cands {
	cmark_node *node[PROGRESS_CANDS_MAX];
	int rank[PROGRESS_CANDS_MAX];
	size_t n;
	/* the first heading passed over that mentions tasks but heads a
	 * checklist (or sits in one), or NULL */
	cmark_node *rejected;
	/* the document has headings other than a level-1 title */
	bool any_heading;
};

/* Fill *c from doc's top-level headings.  want: progress_heading_want()
 * of the configured name (then only that name is a candidate), or NULL. */
void progress_heading_scan(
    struct progress_cands *c, cmark_node *doc, const char *want);

/* Append the plain text of n's inlines to buf (len bytes, NUL-ended). */
void progress_inline_text(char *buf, size_t len, cmark_node *n);

/* Heading h's text normalised (PROGRESS_HEAD_MAX bytes is enough). */
void progress_heading_norm(char *out, size_t len, cmark_node *h);

/* A heading as its author sees it: "## Tasks / Subtasks", cleaned. */
void progress_heading_written(char *out, size_t len, cmark_node *h);

/* Is heading h the end of the section that the heading read as *start
 * opened (docs/stories.md#the-tasks-section)? */
bool progress_heading_ends(
    const struct head_read *start, cmark_node *h, const char *want);

/* Does heading h head a checklist of acceptance criteria, QA or done
 * (hwords_checklist())?  Inside the Tasks section such a subsection is
 * not counted (docs/stories.md#the-tasks-section). */
bool progress_heading_checklist(cmark_node *h);

/* Whether an item whose text begins with s[0..n) looks like a task to
 * its author though GitHub shows no checkbox ("[-]", "✅", "[ ]*", "[]",
 * ...); fills why (wlen bytes) and *checked when so (progress_box.c). */
bool progress_box_like(
    char *why, size_t wlen, bool *checked, const char *s, size_t n);

/* Is n a task-list item?  Is its box checked? */
bool progress_is_task(cmark_node *n);
bool progress_item_checked(cmark_node *n);

/* The heading whose section holds the tasks among the candidates c, or
 * NULL; a section passed over because it is all checked while another
 * is open is noted in *p (progress_section.c). */
cmark_node *progress_section_choose(
    struct progress *p, const struct progress_cands *c, const char *want);

/* Mark the blocks of start's section that repeat an earlier block's
 * tasks (a story pasted twice): the copy's heading gets the original's
 * heading as user data, and a task checked only in the copy gets mark;
 * p->copies and p->copy_line are set. */
void progress_section_copies(
    struct progress *p, cmark_node *start, const char *want, void *mark);

#endif
