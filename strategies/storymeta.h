/*
 * storymeta.h - what a story says about itself besides its tasks: its
 * status as BMAD writes it (docs/stories.md "Drafts").  Pure: the caller
 * reads the file and passes its bytes.
 *
 * The file is read with cmark-gfm, as GitHub renders it, so a "Status:"
 * inside a code block, an HTML block or a block quote is not the story's
 * status.  Two shapes:
 *   - BMAD v6 (and most templates): a line "Status: ready-for-dev"
 *     ("**Status:** Draft", any case) in the story's preamble, the
 *     blocks before its first heading below the title;
 *   - BMAD v4: a heading "Status" ("## Status") whose next block is the
 *     value ("Draft", "Approved", "InProgress", "Review", "Done"); also
 *     a heading that carries it ("## Status: Draft").
 * The first one in the document wins.
 */
#ifndef STORYCTL_STORYMETA_H
#define STORYCTL_STORYMETA_H

#include <stdbool.h>
#include <stddef.h>

#define STORYMETA_STATUS_MAX 32

struct storymeta {
	/* the status as written, cleaned of control characters, blanks
	 * folded, cut at a character boundary; "" when the story has
	 * none */
	char status[STORYMETA_STATUS_MAX];
	bool draft; /* storymeta_is_draft(status) */
};

/* Fill *out from the len bytes at text.  Never fails. */
void storymeta_parse(struct storymeta *out, const char *text, size_t len);

/* Whether a status means the story is still a draft: its first word is
 * "Draft" (BMAD v4) or "drafted" (BMAD v6), in any case. */
bool storymeta_is_draft(const char *status);

#endif
