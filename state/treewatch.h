/*
 * treewatch.h - which paths of a work tree changed since the last time
 * we asked, from the kernel's inotify events, so that an attempt's
 * snapshot looks at those files only instead of every file of the tree
 * (docs/evidence.md#cost).
 *
 * A watch covers every directory under root except .git, nested
 * repositories (a directory holding .git) and the directories skip()
 * names (the state dir).  treewatch_take() drains the events and gives
 * the changed paths, relative to root, or says that the changes are not
 * known ("full"): on the first call, after the event queue overflowed, a
 * directory was moved or renamed, a watch could not be added (the
 * inotify limits), or after treewatch_forget().  Then the caller must
 * look at the whole tree; the watch has already been set up again, so
 * that nothing changed after the call is missed.
 *
 * What inotify cannot see is not reported: a write through a shared
 * mapping (mmap) and changes made on another machine to a network file
 * system.  Not thread-safe; every call from one thread.
 */
#ifndef STORYCTL_TREEWATCH_H
#define STORYCTL_TREEWATCH_H

#include <stdbool.h>

#include "common/err.h"
#include "common/strlist.h"

struct treewatch;

/*
 * *out: a watch of the tree at root (an absolute path, without a
 * trailing '/'), leaving out the directory exclude (absolute, or NULL).
 * Nothing is watched until the first treewatch_take(); where inotify
 * is not available every take says "full".  Errors: SC_EOS (memory).
 * Free with treewatch_free().
 */
int treewatch_open(struct treewatch **out, const char *root,
    const char *exclude, struct sc_err *err);

/*
 * The paths changed since the last call into *paths (which must be
 * empty: sorted, without duplicates; a path may name a directory, created, moved
 * in or deleted, and then everything under it may have changed), or
 * *full = true and *paths untouched.  *gone = true when root itself was
 * removed or moved (the watch is dead; free it).  Errors: SC_EOS.
 */
int treewatch_take(struct treewatch *tw, struct strlist *paths, bool *full,
    bool *gone, struct sc_err *err);

/*
 * The caller renamed the tree's root to newroot (absolute, without a
 * trailing '/'), with nothing changing in it meanwhile: the watch goes
 * on, the paths it gives stay relative to the root, and the root's
 * move is not taken for the tree going away.  Errors: SC_EOS.
 */
int treewatch_moved(
    struct treewatch *tw, const char *newroot, struct sc_err *err);

/* The next treewatch_take() says "full": what was taken could not be
 * used (the snapshot failed). */
void treewatch_forget(struct treewatch *tw);

/* The root the watch was opened on. */
const char *treewatch_root(const struct treewatch *tw);

/* Stop watching; NULL is a no-op. */
void treewatch_free(struct treewatch *tw);

#endif /* STORYCTL_TREEWATCH_H */
