/*
 * gitevidence_int.h - what gitevidence.c, gitevidence_tree.c and
 * gitevidence_index.c share (not an interface): a kept work tree, the
 * index a snapshot starts from and how it is brought up to date with the
 * work tree (docs/evidence.md#cost).
 * libgit2 errors are left in git_error_last() for the caller to word.
 */
#ifndef STORYCTL_GITEVIDENCE_INT_H
#define STORYCTL_GITEVIDENCE_INT_H

#include <limits.h>
#include <stdbool.h>

#include <git2.h>

#include "common/err.h"
#include "common/strlist.h"
#include "state/gitevidence.h"
#include "state/gitwork.h"

struct treewatch;

/*
 * A work tree as snapshots see it: its repository (the snapshots' store
 * in front), the index a snapshot starts from and, while a
 * gitevidence_watches keeps it, the watch that says which of its files
 * changed since the last snapshot (state/treewatch.h).
 */
struct ev_tree {
	char *dir; /* as the caller named it: the key */
	git_repository *repo;
	git_index *idx;
	struct treewatch *tw; /* NULL: the whole tree every time */
	bool own_index; /* the snapshots' own, written after a full look */
	bool kept; /* in a gitevidence_watches, its index in memory only */
	bool have_start; /* idx is the tree as the last snapshot saw it, */
	char start[GITWORK_HEXSZ]; /* which that snapshot named so */
	unsigned long nsnap; /* snapshots taken: the names' numbers */
	char *store; /* the snapshots' store (state_dir/evidence-objects) */
	git_repository *scratch; /* the small trees of a diff: in memory */
	git_odb_backend *mempack; /* scratch's, emptied after each diff */
	char ex[PATH_MAX]; /* the state dir, relative to the work tree */
	char *state_dir; /* as given: the tree is opened again after a move */
	/* what gitevidence_changed() took from the watch, for the next
	 * snapshot (pending_full: look at the whole tree) */
	struct strlist pending;
	bool pending_full;
	/* the paths changed since gitevidence_mark(), since_known false
	 * when they are not known (no mark, the watch lost track, too
	 * many) */
	struct strlist since;
	bool since_known;
};

struct gitevidence_watches {
	struct ev_tree *t[GITEVIDENCE_WATCH_MAX]; /* [0] the oldest */
	size_t n;
};

/*
 * *out: the work tree containing dir, kept in w (w NULL: opened for
 * this call only; evtree_put() closes it), and in *only what changed
 * in it since the last snapshot, or *only NULL when not known (the
 * whole tree is looked at).  Errors: SC_EOS, SC_EIO.
 * (state/gitevidence_tree.c)
 */
int evtree_get(struct ev_tree **out, struct strlist *changed,
    const struct strlist **only, struct gitevidence_watches *w, const char *dir,
    const char *state_dir, struct sc_err *err);

/* Done with t: closed unless w keeps it; a failed snapshot makes the
 * next one look at the whole tree (what the watch said is spent). */
void evtree_put(struct gitevidence_watches *w, struct ev_tree *t, bool failed);

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
