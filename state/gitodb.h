/*
 * gitodb.h - the object database the state writer reads and writes
 * through (docs/state-branch.md#the-object-database).
 *
 * libgit2's own, with two differences: writing a new object does not
 * rescan objects/pack (reads that miss rescan as before, so a pack
 * another git process wrote meanwhile is still found), and new objects
 * are kept in memory too until the writer packs them.
 */
#ifndef STORYCTL_GITODB_H
#define STORYCTL_GITODB_H

#include <stddef.h>

#include <git2.h>

#include "common/err.h"

/*
 * Give repo that object database, keeping a copy of each new object it
 * writes (loose, as libgit2 would) in memory, the newest cache_bytes of
 * them (a full cache is emptied and fills again): the next commit, and
 * the pack that follows, read them from there.
 * The copies go with repo's handle.  A repository whose objects have
 * alternates (objects/info/alternates), or whose configuration asks
 * for fsynced loose objects (core.fsyncObjectFiles), keeps libgit2's:
 * only libgit2 knows how it sets those up.  0, or SC_EIO naming the
 * repository with repo's database left as it was (the writer works on
 * with it, only slower).
 */
int gitodb_install(
    git_repository *repo, size_t cache_bytes, struct sc_err *err);

/* The bytes of new objects repo's database holds in memory (0 when
 * gitodb_install() is not in place). */
size_t gitodb_cached(git_repository *repo);

/* Empty the copies of new objects (nothing when gitodb_install() is not
 * in place): once a pack holds them, the copies only take memory, and
 * later reads find the objects in the pack (or, until its loose files
 * are deleted, in them). */
void gitodb_drop(git_repository *repo);

/* How many times repo's pack directories were rescanned since
 * gitodb_install() (0 when it is not installed): for the tests. */
size_t gitodb_rescans(git_repository *repo);

#endif
