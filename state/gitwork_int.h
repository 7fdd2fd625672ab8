/*
 * gitwork_int.h - what the three parts of gitwork share (gitwork.c:
 * opening, the excluded dir, the clean check; gitwork_commit.c: work
 * commits; gitwork_worktree.c: linked worktrees); not an interface.
 * Includes git2.h, so only state/ may include it.
 */
#ifndef STORYCTL_GITWORK_INT_H
#define STORYCTL_GITWORK_INT_H

#include <stdbool.h>
#include <stddef.h>

#include <git2.h>

#include "common/err.h"
#include "common/strlist.h"

/* who storyctl's reflog entries and work commits name */
#define GITWORK_NAME "storyctl"
#define GITWORK_EMAIL "storyctl@localhost"
#define GITWORK_REFMAX 1024 /* "refs/heads/<branch>" */

/* libgit2's last error message, never NULL or empty. */
const char *gitwork_git_msg(void);

/* Whether a checkout of commit in repo would run no filter, so that it
 * may be made with disable_filters (gitwork_filters.c,
 * docs/git-work.md#checkout-filters).  false when unsure. */
bool gitwork_no_filters(git_repository *repo, const git_oid *commit);

/*
 * Open the repository containing dir, which must have a work tree.
 * Initialises libgit2; on success gitwork_close() balances it, on
 * failure nothing is left to undo.
 */
int gitwork_open(git_repository **out, const char *dir, struct sc_err *err);

/* Free repo and balance gitwork_open()'s libgit2 init; NULL is a no-op. */
void gitwork_close(git_repository *repo);

/* The part of the absolute path abs below root: "" for root itself,
 * NULL when abs is not in root. */
const char *gitwork_strip_root(const char *abs, const char *root);

/* Normalise exclude_dir into ex (exlen bytes): relative to workdir, no
 * "./" in front, no '/' at the end; "" when there is nothing to
 * exclude. */
int gitwork_exclude(char *ex, size_t exlen, const char *workdir,
    const char *exclude_dir, struct sc_err *err);

/* Is the work-tree-relative path ex itself or below it? */
int gitwork_excluded(const char *path, const char *ex);

/* `git add -A` into idx in one diff of the work tree (only: just those
 * paths, or NULL); ex, the state dir relative to the work tree, and
 * nested repositories are left out (gitwork_commit.c).  For a work
 * commit and an evidence snapshot alike.  0 or -1 (libgit2's error). */
int gitwork_add_all(git_index *idx, git_repository *repo, const char *ex,
    const struct strlist *only);

/* "refs/heads/<branch>" into ref after checking the name with libgit2. */
int gitwork_refname(
    char *ref, size_t len, const char *branch, struct sc_err *err);

/* HEAD's commit, or *out = NULL when the branch is unborn. */
int gitwork_head_commit(git_commit **out, git_repository *repo, const char *dir,
    struct sc_err *err);

/* SC_EDATA when git tracks the excluded dir ex in idx or one of trees. */
int gitwork_check_untracked(git_index *idx, git_tree *const *trees,
    size_t ntrees, const char *ex, const char *dir, struct sc_err *err);

/* Status of the work tree against the index and HEAD, untracked
 * directories listed file by file, ignored files left out. */
int gitwork_status(git_status_list **out, git_repository *repo, const char *dir,
    struct sc_err *err);

/* The commit named by rev (hex, ref or any revision). */
int gitwork_lookup_commit(git_commit **out, git_repository *repo,
    const char *rev, const char *dir, struct sc_err *err);

#endif
