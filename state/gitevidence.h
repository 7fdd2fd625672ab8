/*
 * gitevidence.h - what an attempt changed in its work tree
 * (docs/evidence.md#how-it-is-measured): a snapshot of the work tree
 * taken when the attempt starts, and the diff of the tree as the agent
 * left it against that snapshot, file by file, with lines added and
 * removed.
 *
 * A snapshot is what `git add -A && git write-tree` would give, written
 * into an object database only: HEAD, the index file and the work tree
 * are never touched (as `git stash create` does).  Its objects go to
 * exclude_dir/evidence-objects (the state dir's own store), never into
 * the repository's .git, where no ref would hold them and `git gc`
 * would leave them loose.  It holds tracked and
 * untracked files; ignored files, nested repositories and everything
 * under exclude_dir (the state dir) are left out, as gitwork.h's
 * commits leave them out.  So what the agent committed itself counts as
 * well as what it left uncommitted, and what earlier attempts left in
 * the tree does not count again.
 *
 * Without a gitevidence_watches, every call opens the repository
 * containing dir afresh and closes it (like gitwork.h); errors are SC_EDATA (not a repository, bare),
 * SC_EIO (libgit2, the snapshot's objects gone), SC_EOS, SC_ESOFTWARE.
 */
#ifndef STORYCTL_GITEVIDENCE_H
#define STORYCTL_GITEVIDENCE_H

#include <stdbool.h>
#include <stddef.h>

#include "common/err.h"
#include "common/strbuf.h"
#include "common/strlist.h"
#include "state/gitwork.h"

/* How many files a diff lists by name; the totals count them all. */
#define GITEVIDENCE_LIST_MAX 20

struct gitevidence_file {
	char path[256]; /* work-tree relative, the new name of a rename */
	char status; /* 'A' added, 'M' modified, 'D' deleted, 'R' renamed,
		      * 'T' type changed */
	bool binary; /* lines are 0 for a binary file */
	int added, removed;
};

struct gitevidence_diff {
	int files_changed;
	int lines_added, lines_removed;
	/* the first GITEVIDENCE_LIST_MAX files in path order */
	size_t nlisted;
	struct gitevidence_file listed[GITEVIDENCE_LIST_MAX];
};

/* The snapshots' object store, under the state dir. */
#define GITEVIDENCE_ODB "evidence-objects"

/*
 * The work trees a batch snapshots, kept open from one snapshot to the
 * next with a watch of their files (state/treewatch.h), so that a
 * snapshot reads and hashes only the files changed since the last one
 * instead of stat'ing every file of the tree (docs/evidence.md#cost).
 * At most GITEVIDENCE_WATCH_MAX trees are kept (the oldest goes first).
 * Every call below takes one, or NULL to open the tree for that call
 * and look at all of it.  Free with gitevidence_watches_free() (NULL is
 * a no-op).
 */
struct gitevidence_watches;
#define GITEVIDENCE_WATCH_MAX 16
int gitevidence_watches_new(
    struct gitevidence_watches **out, struct sc_err *err);
void gitevidence_watches_free(struct gitevidence_watches *w);
/* Forget the tree dir (as the calls named it): it is about to be
 * removed (a story's worktree once the story is final). */
void gitevidence_watches_drop(struct gitevidence_watches *w, const char *dir);

/*
 * The tree dir (as the calls name it) was renamed to newdir by the
 * caller, nothing in it changing meanwhile: what w keeps of it (its
 * watch, its index) goes on under the new name.  A tree w does not keep
 * is no error.  On an error the tree is forgotten (the next snapshot
 * looks at all of it).  Errors: SC_EOS, SC_EIO (newdir cannot be
 * opened).
 */
int gitevidence_watches_move(struct gitevidence_watches *w, const char *dir,
    const char *newdir, struct sc_err *err);

/*
 * Changes of the tree dir are counted from now for gitevidence_changed()
 * (docs/git-work.md#what-a-switch-looks-at): w keeps the tree and
 * watches it (opened and watched now when it did not), and what its
 * watch saw before is left to the next snapshot.  w NULL or no
 * state_dir: nothing.  Errors: as gitevidence_snapshot().
 */
int gitevidence_mark(struct gitevidence_watches *w, const char *dir,
    const char *state_dir, struct sc_err *err);

/*
 * *paths (empty before): the paths of the tree dir that changed since
 * its gitevidence_mark() (sorted, unique, relative to the tree; a
 * directory stands for everything under it), and *known = true; or
 * *known = false and *paths untouched when that is not known (no mark,
 * a tree w does not keep, the watch lost track, more than
 * GITEVIDENCE_SINCE_MAX paths): then look at the whole tree.  What is
 * taken from the watch here is still given to the next snapshot.
 * Errors: SC_EOS.
 */
#define GITEVIDENCE_SINCE_MAX 4096
int gitevidence_changed(struct strlist *paths, bool *known,
    struct gitevidence_watches *w, const char *dir, struct sc_err *err);

/* Remove the snapshots' objects under state_dir: when no attempt of the
 * batch runs (its start), since a snapshot is needed only from an
 * attempt's start to its end. */
void gitevidence_forget(const char *state_dir);

/* What a watched tree's snapshot is named (then a number). */
#define GITEVIDENCE_WATCHED "watched:"

/*
 * Snapshot the work tree containing dir: its name into tree_hex
 * (GITWORK_HEXSZ bytes), to give gitevidence_diff() at the attempt's
 * end.  Without w, the tree object written into the snapshots' store,
 * and the name its id.  With w, the snapshot is the index w keeps of
 * the tree, brought up to date, and the name GITEVIDENCE_WATCHED and a
 * number: writing the tree would store every directory the changed
 * files are in, each time (docs/evidence.md#cost).  Nothing under
 * exclude_dir (NULL or "": nothing) is in it.
 */
int gitevidence_snapshot(char *tree_hex, struct gitevidence_watches *w,
    const char *dir, const char *exclude_dir, struct sc_err *err);

/*
 * *out: the change from the snapshot named base_tree_hex (the last
 * snapshot of a watched tree, or a tree object in the store) to the work
 * tree
 * containing dir now (snapshotted the same way), leaving out
 * exclude_file (a path, absolute or relative to the work tree: the
 * story file) and everything under exclude_dir.  A rename is one file.
 */
int gitevidence_diff(struct gitevidence_diff *out,
    struct gitevidence_watches *w, const char *dir, const char *base_tree_hex,
    const char *exclude_dir, const char *exclude_file, struct sc_err *err);

/*
 * The attempt's diff as text (docs/evidence.md#the-attempts-diff): the
 * patch of the same deltas gitevidence_diff() counts, as `git diff -M`
 * prints it (a binary file as "Binary files a/X and b/X differ"), in
 * text, at most max bytes: a line that would go past max is left out
 * with everything after it, and cut says so.  files: the files the
 * patch holds in full; the others (files_changed - files) were cut.
 */
#define GITEVIDENCE_PATCH_MAX (8u << 20)
struct gitevidence_patch {
	struct strbuf text;
	size_t max; /* 0: GITEVIDENCE_PATCH_MAX */
	bool cut;
	int files;
};
/* Free p's text and zero it; a zeroed p is fine. */
void gitevidence_patch_release(struct gitevidence_patch *p);

/* gitevidence_diff() that also puts the patch into *patch (NULL: none,
 * as gitevidence_diff()). */
int gitevidence_diff_patch(struct gitevidence_diff *out,
    struct gitevidence_patch *patch, struct gitevidence_watches *w,
    const char *dir, const char *base_tree_hex, const char *exclude_dir,
    const char *exclude_file, struct sc_err *err);

/*
 * Where an attempt's diff is kept: beside its log, the log's name with
 * ".diff" for its ".log" (logs/<id>.a<N>.<ms>.diff), as the prompt file
 * is, so that no column records it.  -1 when log_path does not end in
 * ".log" or out (cap bytes) is too small.
 */
int gitevidence_patch_path(char *out, size_t cap, const char *log_path);

#endif
