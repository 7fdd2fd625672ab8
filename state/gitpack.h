/*
 * gitpack.h - move objects storyctl wrote as loose files into one pack.
 *
 * Every state-branch commit writes about eight loose objects, and each
 * loose file takes at least one file-system block; packed they take a
 * hundredth of that (docs/performance.md).  gitstate.c collects the ids
 * of the objects it writes and hands them here every few hundred
 * objects and at the end of a batch.
 *
 * This header includes <git2.h> and uses libgit2 types: that is allowed
 * because only files under state/ include it, and state/ is the one
 * directory that may use libgit2.
 *
 * Nothing here touches HEAD, the index, refs or the work tree: only
 * <commondir>/objects/pack/ (a new pack and its index) and loose object
 * files under <commondir>/objects/.
 */
#ifndef STORYCTL_GITPACK_H
#define STORYCTL_GITPACK_H

#include <stddef.h>

#include <git2.h>

#include "strategies/err.h"

/*
 * Pack objects into one new pack in repo's object database, then delete
 * their loose copies.
 *
 * ids[0..n) are objects already in repo's object database, loose or
 * packed, in the order they were written (oldest first); duplicates are
 * harmless.  They are put, each on its own (nothing they reference is
 * added), into one pack written to <commondir>/objects/pack (created if
 * missing; git_repository_commondir(), so a linked worktree's handle
 * packs into the shared object database).  The new .pack, its .idx and
 * the pack directory are fsynced; only then is each id's loose file
 * <commondir>/objects/xx/yyyy... unlinked (one that is not there is
 * fine; the xx/ directories are kept).  Finally repo's odb is refreshed,
 * so this handle reads the objects from the pack at once.
 *
 * n == 0 is a no-op and returns 0.  Packing ids that are packed already
 * is harmless: they are written again (packing the same ids twice gives
 * an identical pack, which replaces itself under the same name).
 *
 * Returns 0, or SC_EIO with "<pack dir>: cannot pack <n> objects:
 * <reason>" when anything before the deletes fails, including an id
 * that is not in the object database; then no loose file is deleted and
 * no file is left in the pack directory (it may have been created).
 * SC_EIO after the deletes only when this handle still cannot read an
 * object: it is safe in the synced pack, but this handle should be
 * reopened.  SC_ESOFTWARE when repo is NULL, or ids is NULL with n > 0.
 * Not thread-safe with other users of the same repo handle.
 */
int gitpack_objects(
    git_repository *repo, const git_oid *ids, size_t n, struct sc_err *err);

#endif
