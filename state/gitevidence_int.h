/*
 * gitevidence_int.h - what gitevidence.c and gitevidence_index.c share
 * (not an interface): the index a snapshot starts from and how it is
 * brought up to date with the work tree (docs/evidence.md#cost).
 * libgit2 errors are left in git_error_last() for the caller to word.
 */
#ifndef STORYCTL_GITEVIDENCE_INT_H
#define STORYCTL_GITEVIDENCE_INT_H

#include <stdbool.h>

#include <git2.h>

#include "common/err.h"
#include "common/strlist.h"

/* *out: the index of repo's work tree a snapshot starts from, set as
 * repo's index: the snapshots' own (state_dir given: a file in their
 * store, seeded from the repository's index), else the repository's,
 * in memory.  SC_EIO, SC_EOS. */
int evindex_open(git_index **out, git_repository *repo, const char *state_dir,
    const char *dir, struct sc_err *err);

/* The paths a watch saw change into idx, one by one; skip (or NULL) is
 * left as it was.  0 or -1. */
int evindex_add_paths(git_index *idx, git_repository *repo, const char *ex,
    const struct strlist *only, const char *skip);

/* *out: a new in-memory index of src's entries for the paths in only and
 * everything under them.  0 or -1. */
int evindex_subset(git_index **out, git_index *src, const struct strlist *only);

/* *out: a new in-memory index with idx's entries, no tree cache.  0 or
 * -1. */
int evindex_copy(git_index **out, git_index *idx);

/* Whether a and b hold the same paths, contents and modes. */
bool evindex_same(git_index *a, git_index *b);

/* patch's text appended to p while it fits (state/gitevidence_patch.c);
 * what does not, and anything after it, is left out and p->cut set. */
struct gitevidence_patch;
void evpatch_add(struct gitevidence_patch *p, git_patch *patch);

#endif /* STORYCTL_GITEVIDENCE_INT_H */
