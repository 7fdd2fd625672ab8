/*
 * gitsandbox_int.h - what gitsandbox.c (making P) and
 * gitsandbox_collect.c (taking its branch back) share; not an
 * interface.
 */
#ifndef STORYCTL_GITSANDBOX_INT_H
#define STORYCTL_GITSANDBOX_INT_H

#include <limits.h>

#include "common/err.h"

/* below refs/: the stories' branches (storyctl/story/<id>), one a story
 * of the batch, which no agent needs but its own */
#define GS_STORY_REFS "heads/storyctl/story"
#define GS_COPY_BUF (64 * 1024)
/* git writes packs and their indexes read-only for everyone */
#define GS_PACK_MODE 0444
/* below the real object store's own backends (loose 1, packed 2):
 * an object both have is read from the real one */
#define GS_ODB_PRIORITY 0
/* P's config while libgit2 reads P: the agent's could include any
 * file, a FIFO that blocks the controller among them */
#define GS_CONFIG "[core]\n\trepositoryformatversion = 0\n\tbare = true\n"

/*
 * A directory walk below the common dir's refs (copying them into P)
 * or P's objects (only checking them).  src and dst name the two
 * directories in messages and are extended in place while the walk is
 * below them; the copy buffer lives here, not on the stack.
 */
struct gs_walk {
	char src[PATH_MAX];
	char dst[PATH_MAX];
	/* a directory the copy leaves out (absolute, under src), or "" */
	char skip[PATH_MAX];
	char buf[GS_COPY_BUF];
};

/* dir + "/" + name into buf (PATH_MAX bytes). */
int gs_path(char *buf, const char *dir, const char *name, struct sc_err *err);

/* Write text to a new file name under directory dfd (dir names it in
 * messages). */
int gs_write_at(int dfd, const char *dir, const char *name, const char *text,
    struct sc_err *err);

/*
 * Copy directory sfd's regular files and directories into directory dfd
 * recursively, or, with dfd < 0, check that sfd holds nothing else.
 * sfd is consumed (closed).
 */
int gs_walk_dir(struct gs_walk *w, int sfd, int dfd, struct sc_err *err);

#endif
