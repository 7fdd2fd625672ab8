/*
 * gitwork.h - libgit2 primitives on the user's work trees: is a tree
 * clean, commit everything in it, put it back, and linked worktrees for
 * `run -j N` (docs/scheduling.md#parallel-stories-run--j-n) and
 * git.commit_work
 * (docs/verification.md#committing-verified-work-gitcommit_work).
 * See docs/git-work.md for what each call does in git terms and how the
 * controller uses them.
 *
 * Every call opens the repository afresh from a directory (searching
 * upward like git, so any directory inside a work tree will do; inside
 * a linked worktree the call works on that worktree) and closes it
 * before returning: no handle to keep, safe to call from a child's
 * point of view at any time.  Not thread-safe with respect to the same
 * work tree.
 *
 * Safety rules kept by every call:
 *   - files ignored by .gitignore are never added, removed or changed
 *     (tracked files stay tracked even when a pattern matches them, as
 *     in git);
 *   - nothing under exclude_dir (the state dir, ".storyctl") is ever
 *     staged, committed, reset or removed.  A call that would have to
 *     (because git tracks something there) fails with SC_EDATA instead;
 *     NULL or "" means no excluded directory;
 *   - refusing to start on a dirty tree is the caller's job
 *     (gitwork_is_dirty()).
 *
 * exclude_dir is relative to the work tree root ("./" and trailing '/'
 * allowed); an absolute path inside the work tree is made relative, one
 * outside it excludes nothing.  It must not name the root itself or
 * contain "..".
 *
 * All functions return 0 or a negative SC_E* code and fill err:
 *   SC_EDATA     not a repository, a bare one, a bad branch, ref or
 *                worktree name, a branch checked out elsewhere, a path
 *                in the way, a tracked exclude_dir;
 *   SC_EIO       libgit2 or the file system failed ("<dir>: <libgit2
 *                message>", naming the branch or path involved);
 *   SC_EOS       out of memory;
 *   SC_ESOFTWARE a bad argument (a bug in the caller).
 *
 * libgit2 types never appear here; only state/ includes git2.h.
 */
#ifndef STORYCTL_GITWORK_H
#define STORYCTL_GITWORK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/err.h"
#include "common/strlist.h"

/* Bytes for a commit id in hex plus the NUL. */
#define GITWORK_HEXSZ 41

/* Whether branch is a valid branch name, by libgit2's rules (git
 * check-ref-format --branch): the one check of branch names, for
 * git.state_branch as for the worktrees' branches. */
bool gitwork_branch_valid(const char *branch);

/*
 * Is the work tree containing repo_dir clean?  *out_dirty = 1 when a
 * file is modified, deleted, staged or untracked (not counting what
 * .gitignore ignores nor anything under exclude_dir), else 0.  When
 * dirty and why != NULL, why receives a short description of the first
 * few dirty paths ("modified a.c, untracked new.txt and 3 more"),
 * truncated to whylen; it is "" when clean.  Untracked directories are
 * looked into, so a directory holding only excluded or ignored files
 * does not count.
 */
int gitwork_is_dirty(int *out_dirty, char *why, size_t whylen,
    const char *repo_dir, const char *exclude_dir, struct sc_err *err);

/*
 * HEAD of the work tree containing repo_dir: the commit id as 40 hex
 * digits into hex (GITWORK_HEXSZ bytes) and the branch's full ref name
 * ("refs/heads/main") into ref (reflen bytes, SC_ESOFTWARE when too
 * small).  ref is "" when HEAD is detached; hex is "" when the branch
 * has no commit yet (unborn; ref still names it).
 */
int gitwork_head(char *hex, char *ref, size_t reflen, const char *repo_dir,
    struct sc_err *err);

/*
 * `git add -A && git commit` for the work tree containing dir: stage
 * every new, modified and deleted file (ignored files skipped, nothing
 * under exclude_dir) and commit the result with author and committer
 * "storyctl <storyctl@localhost>" at now_s (+0000) and message msg
 * (trailing blank space trimmed, one final newline; must not be empty).
 *
 * branch == NULL (or the branch checked out here): commit on top of
 * HEAD, move HEAD's branch (or a detached HEAD; an unborn branch gets
 * its root commit) and write the index, so the tree is clean afterwards.
 * The ref moves only if HEAD still holds the parent (else SC_EIO).
 *
 * branch != NULL ("storyctl/wip/1-2", without "refs/heads/"): commit onto
 * refs/heads/<branch> with parent = its tip, or = HEAD when the branch
 * does not exist yet (which creates it).  HEAD, the index file and the
 * work tree are left exactly as they were.  A branch checked out in
 * another work tree is refused (SC_EDATA).
 *
 * *out_committed = 1 when a commit was made; 0 when the staged tree
 * equals the parent's (nothing to commit; no branch is created).
 * out_hex (GITWORK_HEXSZ bytes) receives the new commit id, or "" when
 * nothing was committed; it may be NULL.
 */
int gitwork_commit_all(int *out_committed, char *out_hex, const char *dir,
    const char *branch, const char *exclude_dir, const char *msg, int64_t now_s,
    struct sc_err *err);

/*
 * gitwork_commit_all() onto HEAD, no dir excluded, staging only the
 * paths in only (relative to the work tree; a directory stands for
 * everything under it) when it is not NULL: the paths a watch saw
 * change since the tree was last clean
 * (docs/git-work.md#what-a-switch-looks-at).  A .gitignore among them
 * stages the whole tree, since a file it no longer ignores is new to
 * git without having changed.
 */
int gitwork_commit_changed(int *out_committed, const char *dir,
    const struct strlist *only, const char *msg, int64_t now_s,
    struct sc_err *err);

/*
 * `git reset --hard <hex> && git clean -fd` for the work tree containing
 * dir, without ever touching ignored files or exclude_dir: HEAD (its
 * branch, or a detached HEAD) moves to commit hex (40 hex digits; any
 * revision git understands is accepted), the index and the tracked
 * files are made to match it, and untracked files that are neither
 * ignored nor under exclude_dir are removed, together with directories
 * this leaves empty.  Nested repositories are left alone (as git clean
 * does without -ff), as are empty directories git never saw.
 * Fails with SC_EDATA, before changing anything, when hex is not a
 * commit or exclude_dir is tracked in HEAD, the index or hex.
 */
int gitwork_reset_hard(const char *dir, const char *hex,
    const char *exclude_dir, struct sc_err *err);

/*
 * The admin name git keeps a worktree under (.git/worktrees/<name>)
 * for a name such as a branch: every byte other than [A-Za-z0-9._-]
 * becomes '-', and so does a leading '.'.  "storyctl/story/1-2" gives
 * "storyctl-story-1-2".  SC_ESOFTWARE when name is empty or out (outlen
 * bytes) is too small.
 */
int gitwork_worktree_name(
    char *out, size_t outlen, const char *name, struct sc_err *err);

/*
 * `git worktree add <path> <branch>` (or `-b <branch> <path> <base>`):
 * add a linked work tree at path with refs/heads/<branch> checked out.
 * The branch is created at base (a ref name such as
 * "refs/heads/storyctl/story/a" or "HEAD", or a commit id) when it does
 * not exist; an existing branch is checked out as it is and base is not
 * used.  name is sanitised with gitwork_worktree_name().  Missing parent
 * directories of path are created; path itself must not exist or be an
 * empty directory.
 *
 * Idempotent: when worktree name already exists at path with the branch
 * checked out, nothing happens.  A worktree of that name whose directory
 * is gone is pruned and added again.  SC_EDATA when the name is in use
 * at another path or on another branch, when the branch is checked out
 * in another work tree, when path is in the way or base is not found.
 */
int gitwork_worktree_add(const char *repo_dir, const char *name,
    const char *path, const char *branch, const char *base, struct sc_err *err);

/*
 * A worktree name at path with a detached HEAD at base (as in
 * gitwork_worktree_add()), its files not yet written: for a slot's
 * worktree made before it has a story (docs/git-work.md#made-ahead).
 * libgit2 1.5 makes a new worktree on a branch only: it is made on a
 * branch "storyctl/slot/<name>", deleted once HEAD is detached (a kill
 * in between leaves the branch; nothing reads it).  Not to be run
 * beside another worktree's add: libgit2 reads every worktree's admin
 * data while it adds one, and a half-written one fails it.
 */
int gitwork_worktree_add_detached(const char *repo_dir, const char *name,
    const char *path, const char *base, struct sc_err *err);

/*
 * `git worktree prune` limited to the worktrees under the directory
 * under (absolute, as the worktrees were added): git's record of each
 * whose directory is gone (a controller killed while it made or removed
 * one) is removed, unless it is locked; *out_pruned counts them.
 */
int gitwork_worktrees_prune_gone(int *out_pruned, const char *repo_dir,
    const char *under, struct sc_err *err);

/*
 * Write every file of HEAD into the worktree at path, made by
 * gitwork_worktree_add_detached(), and its index.  Thread-safe beside
 * other fills and adds: it opens the repository itself and writes only
 * the worktree's files and its own index.
 */
int gitwork_worktree_fill(const char *path, struct sc_err *err);

/*
 * *out_valid = 1 when path is the checkout of worktree name (sanitised
 * as above) and git can open it (git_worktree_validate: its admin data
 * and its .git file point at each other); 0 when it is a half-made or
 * half-removed checkout (a kill inside git's add or remove), which must
 * never be opened as a repository: with no .git file, opening it would
 * find the main work tree above it.  Errors only for I/O.
 */
int gitwork_worktree_valid(int *out_valid, const char *repo_dir,
    const char *name, const char *path, struct sc_err *err);

/*
 * `git worktree remove --force` + `git worktree prune` for worktree name
 * (sanitised as above): delete its directory with everything in it and
 * its admin data.  The branch stays.  Uncommitted work in it is lost:
 * commit first.  No such worktree is not an error; a locked one is
 * (SC_EDATA with the lock reason).
 */
int gitwork_worktree_remove(
    const char *repo_dir, const char *name, struct sc_err *err);

/*
 * Does refs/heads/<branch> exist: *found = 1 and its tip's id in hex
 * (GITWORK_HEXSZ bytes), or *found = 0 and hex = "".
 */
int gitwork_branch_tip(char *hex, int *found, const char *repo_dir,
    const char *branch, struct sc_err *err);

/*
 * The lock file of refs/heads/<branch> (git's "<ref>.lock"), left by a
 * controller killed while it created or moved the branch, would fail
 * every later update of it ("failed to lock file").  When it is older
 * than since_ms (wall clock: the start of the controller that now holds
 * the state dir's lock, so no other storyctl can be writing) it is
 * removed (*out_removed = 1); a newer one is a live writer's and stays.
 */
int gitwork_clear_stale_lock(int *out_removed, const char *repo_dir,
    const char *branch, int64_t since_ms, struct sc_err *err);

/*
 * The index lock of the linked worktree at worktree (git's
 * "index.lock" in its own git dir), left by a process killed while it
 * wrote the index: a controller killed in a work commit, or an agent
 * killed inside `git add`.  Called when no agent runs in that worktree
 * (its story is being settled), so any lock there is stale: removed
 * (*out_removed = 1).  A main checkout's index is never touched.
 */
int gitwork_clear_worktree_index_lock(
    int *out_removed, const char *worktree, struct sc_err *err);

/*
 * Keeping a worktree from one story to the next (gitwork_switch.c,
 * docs/git-work.md#the-life-of-a-slots-worktree).
 *
 * gitwork_worktree_name_at: the admin name of the linked worktree
 * checked out at path, as its .git file says ("gitdir:
 * <common>/worktrees/<name>"), into out (outlen bytes); SC_EDATA when
 * path holds no such file.
 */
int gitwork_worktree_name_at(
    char *out, size_t outlen, const char *path, struct sc_err *err);

/*
 * `git worktree move`: the checkout of worktree name (sanitised as
 * above) is renamed to newpath, on the same file system, then git's
 * record of where it is follows.  newpath must not exist.  A kill in
 * between leaves a checkout gitwork_worktree_valid() calls half-made.
 */
int gitwork_worktree_move(const char *repo_dir, const char *name,
    const char *newpath, struct sc_err *err);

/*
 * `git switch -f` plus `git clean -fd` in the linked worktree at dir:
 * refs/heads/<branch> (made at base, a commit id or ref resolved in
 * that worktree, when it does not exist) is checked out with HEAD's
 * tree as the baseline, so only the files that differ are written;
 * uncommitted changes to tracked files are overwritten and untracked
 * files that are not ignored are removed; ignored files stay.  SC_EDATA
 * when the branch is checked out in another work tree or base is not a
 * commit.  Commit what must be kept first.  dirty NULL: every file of
 * the tree is looked at; else the paths that may differ from HEAD's
 * tree (what a watch saw change since it was committed; a directory
 * stands for everything under it), and then only those and the files
 * that differ between the two commits are looked at
 * (docs/git-work.md#what-a-switch-looks-at).
 */
int gitwork_worktree_switch(const char *dir, const char *branch,
    const char *base, const struct strlist *dirty, struct sc_err *err);

/* *out_ignored = 1 when .gitignore (or info/exclude) of the work tree
 * containing dir ignores relpath, else 0. */
int gitwork_path_ignored(
    int *out_ignored, const char *dir, const char *relpath, struct sc_err *err);

#endif
