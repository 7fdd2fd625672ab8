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

/* normalised heading text: lower case, blanks folded, numbering and a
 * trailing colon dropped */
#define PROGRESS_HEAD_MAX 128

/* The configured stories.tasks_heading normalised as a document's
 * heading would be, blanks around "/" dropped, into want (len bytes). */
void progress_heading_want(char *want, size_t len, const char *configured);

/* The heading whose section holds the tasks (progress.h), or NULL;
 * *any_heading tells whether the document has headings at all.  want:
 * progress_heading_want() of the configured name, or NULL. */
cmark_node *progress_heading_choose(
    cmark_node *doc, const char *want, bool *any_heading);

/* Heading h's text normalised (PROGRESS_HEAD_MAX bytes is enough). */
void progress_heading_norm(char *out, size_t len, cmark_node *h);

/* A heading as its author sees it: "## Tasks / Subtasks", cleaned. */
void progress_heading_written(char *out, size_t len, cmark_node *h);

/* Is heading h the end of the section that heading start opened? */
bool progress_heading_ends(cmark_node *start, cmark_node *h, const char *want);

#endif
