/*
 * fsutil.h - the one home of file-system helpers: joining paths,
 * `mkdir -p`, `rm -rf`.  In state/ because the git work trees need them
 * and controller/ may call down into state/ (docs/design.md#layout).
 */
#ifndef STORYCTL_FSUTIL_H
#define STORYCTL_FSUTIL_H

#include <sys/types.h>

#include "common/err.h"

/* "a/b", with no second '/' when a ends in one; malloc'd, NULL when out
 * of memory. */
char *fsutil_path_join(const char *a, const char *b);

/* mkdir -p of every directory above path (not path itself), each made
 * with mode (before the umask). */
int fsutil_mkdir_parents(const char *path, mode_t mode, struct sc_err *err);

/* rm -rf path, not following symbolic links; best effort and quiet:
 * what is left shows when the caller looks again. */
void fsutil_rm_tree(const char *path);

#endif
