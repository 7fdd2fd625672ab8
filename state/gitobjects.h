/*
 * gitobjects.h - move the objects storyctl wrote as loose files into
 * one pack, through libgit2's packbuilder (docs/state-branch.md,
 * packing).
 *
 * Every state-branch commit writes about eight loose objects, and each
 * loose file takes at least one file-system block and an inode.
 * gitstate.c collects the ids of the objects it writes and hands them
 * here every couple of thousand objects; libgit2 finds deltas between a
 * page's successive versions, so a decision takes about a kilobyte
 * packed instead of forty loose (docs/performance.md).
 *
 * This header includes <git2.h> and uses libgit2 types: that is allowed
 * because only files under state/ include it, and state/ is the one
 * directory that may use libgit2.
 *
 * Nothing here touches HEAD, the index, refs or the work tree: only
 * <commondir>/objects/pack/ (a new pack and its index) and loose object
 * files under <commondir>/objects/.
 */
#ifndef STORYCTL_GITOBJECTS_H
#define STORYCTL_GITOBJECTS_H

#include <stddef.h>

#include <git2.h>

#include "common/err.h"

/*
 * Pack ids[0..n) into one new pack in repo's object database, then
 * delete their loose copies.
 *
 * ids[0..n) are objects already in repo's object database, loose or
 * packed; duplicates are harmless.  paths, when not NULL, gives the
 * path each was written at ("" for the root tree, NULL for a commit or
 * when unknown): the packer tries deltas between objects of the same
 * path first.  They are put, each on its own
 * (nothing they reference is added), into one pack that libgit2's
 * packbuilder writes, with deltas, into <commondir>/objects/pack
 * (git_repository_commondir(), so a linked worktree's handle packs into
 * the shared object database): pack-<checksum>.pack and its .idx, mode
 * 0444 as git writes them.  Both files and the pack directory are
 * fsynced; only then is each id's loose file
 * <commondir>/objects/xx/yyyy... unlinked (one that is not there is
 * fine; the xx/ directories are kept).  Finally repo's odb is refreshed,
 * so this handle reads the objects from the pack at once.
 *
 * The pack directory must exist when repo's object database is first
 * used (git creates it, and gitstate_open() does when it is missing):
 * libgit2 never looks for packs in a directory that was not there.
 *
 * n == 0 is a no-op and returns 0.  Packing ids that are packed already
 * is harmless: they are written again.
 *
 * Returns 0, or SC_EIO with "<pack dir>: cannot pack <n> objects:
 * <reason>" when anything before the deletes fails, including an id
 * that is not in the object database or a missing pack directory; then
 * no loose file is deleted.  No file is left in the pack directory,
 * except when only an fsync failed ("fsync <file>: <reason>"): the
 * complete pack then stays where it is (it may have replaced one of the
 * same name, which must not be removed), and the objects are in it and
 * loose.
 * SC_EIO after the deletes only when the odb cannot be refreshed: the
 * objects are safe in the synced pack, but this handle should be
 * reopened.  SC_ESOFTWARE when repo is NULL, or ids is NULL with n > 0.
 * Not thread-safe with other users of the same repo handle.
 */
int gitobjects_pack(git_repository *repo, const git_oid *ids,
    const char *const *paths, size_t n, struct sc_err *err);

/* The loose file of id under objdir ("<objdir>/xx/yyyy...", git's
 * layout) into buf; 0, or -1 when it does not fit in size bytes. */
/*
 * Make the pack named name (its 40 hex digits) in packdir, its index
 * and their names durable (fsync of the two files and the directory):
 * a ref moved onto its objects next must never name objects that did
 * not reach the disk.  SC_EIO "fsync PATH: why" otherwise.
 */
int gitobjects_sync_pack(
    const char *packdir, const char *name, struct sc_err *err);

int gitobjects_loose_path(
    char *buf, size_t size, const char *objdir, const git_oid *id);

#endif
