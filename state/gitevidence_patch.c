/*
 * gitevidence_patch.c - an attempt's diff as text, as `git diff` prints
 * it, for `storyctl diff` (docs/evidence.md#the-attempts-diff): the
 * patches of the deltas the evidence counts, bounded.  See
 * gitevidence.h.
 */
#include <stdlib.h>
#include <string.h>

#include <git2.h>

#include "state/gitevidence.h"
#include "state/gitevidence_int.h"

void
gitevidence_patch_release(struct gitevidence_patch *p)
{
	if (p == NULL)
		return;
	strbuf_release(&p->text);
	memset(p, 0, sizeof(*p));
	strbuf_init(&p->text);
}

/*
 * One line of a patch as git_patch_to_buf() puts it (libgit2's
 * diff_print_to_buffer_cb): a context, added or removed line gets its
 * origin in front, every other kind (the file's header, a hunk's, "\ No
 * newline at end of file", "Binary files ... differ") is its content.
 * Whole lines only: once one does not fit, none after it is taken, so
 * the text ends at a line's end and the cut is said there.
 */
static int
evpatch_line(const git_diff_delta *d, const git_diff_hunk *h,
    const git_diff_line *l, void *arg)
{
	struct gitevidence_patch *p = arg;
	size_t max = p->max != 0 ? p->max : GITEVIDENCE_PATCH_MAX;
	bool origin = l->origin == GIT_DIFF_LINE_CONTEXT ||
	    l->origin == GIT_DIFF_LINE_ADDITION ||
	    l->origin == GIT_DIFF_LINE_DELETION;
	size_t need = l->content_len + (origin ? 1 : 0);

	if (p->cut || p->text.len > max || need > max - p->text.len) {
		p->cut = true;
		return 0;
	}
	if (origin)
		strbuf_addch(&p->text, l->origin);
	strbuf_add(&p->text, l->content, l->content_len);
	if (p->text.oom)
		p->cut = true;
	return 0;
}

void
evpatch_add(struct gitevidence_patch *p, git_patch *patch)
{
	if (p->cut)
		return;
	/* a failure midway leaves part of this file: said as a cut */
	if (git_patch_print(patch, evpatch_line, p) < 0)
		p->cut = true;
	if (!p->cut)
		p->files++;
}

int
gitevidence_patch_path(char *out, size_t cap, const char *log_path)
{
	size_t n = strlen(log_path);

	if (n < 4 || strcmp(log_path + n - 4, ".log") != 0 || cap < n + 2)
		return -1;
	memcpy(out, log_path, n - 4);
	memcpy(out + n - 4, ".diff", sizeof(".diff"));
	return 0;
}
