/*
 * gitstate.h - the storyctl state branch (docs/state-branch.md), written
 * with libgit2 straight into the object database and one ref.
 *
 * A struct gitstate is an open repository plus the name of the state
 * branch (default "storyctl/state", i.e. refs/heads/storyctl/state).
 * Nothing here ever touches HEAD, the index or the working tree: commits
 * are built from blobs and trees and only refs/heads/<branch> moves.  See
 * docs/state-branch.md for the layout and the durability choice.
 *
 * All functions return 0 or a negative SC_E* code and fill err:
 *   SC_EDATA     not a repository, bare repository, bad branch name, bad
 *                path, or the state branch is checked out somewhere;
 *   SC_EIO       libgit2 failed reading or writing ("state branch <name>:
 *                <libgit2 message>");
 *   SC_ESOFTWARE a bad argument (a bug in the caller).
 *
 * Not thread-safe: one struct gitstate belongs to one thread.  libgit2
 * types never appear here; only state/ includes git2.h.
 */
#ifndef STORYCTL_GITSTATE_H
#define STORYCTL_GITSTATE_H

#include <stddef.h>
#include <stdint.h>

#include "common/err.h"

struct gitstate;

/*
 * Open the git repository containing dir (searching upward like git)
 * for the state branch named branch (without "refs/heads/").  Calls
 * git_libgit2_init(), balanced by gitstate_free().  Fails with SC_EDATA
 * naming dir when dir is in no repository or the repository is bare,
 * naming branch when it is not a valid branch name or is checked out in
 * the main work tree or a linked worktree (updating it would make that
 * work tree look modified).  On success *out is owned by the caller.
 */
int gitstate_open(struct gitstate **out, const char *dir, const char *branch,
    struct sc_err *err);

/*
 * The controller holding the state dir's lock started at since_ms (wall
 * clock): a ref lock file of the branch older than that was left by a
 * controller that died inside a commit (only one works on a state dir
 * at a time) and is removed at once instead of after the few seconds a
 * lock of unknown origin is given (docs/state-branch.md).  0: unknown.
 */
void gitstate_set_owner_since(struct gitstate *gs, int64_t since_ms);

/* Close the repository.  NULL is a no-op. */
void gitstate_free(struct gitstate *gs);

/* One file to write: path relative to the branch root, '/'-separated
 * ("progress.md", "stories/1-1.json"); len bytes at data (any bytes). */
struct gitstate_file {
	const char *path;
	const char *data;
	size_t len;
};

/*
 * Make one commit on refs/heads/<branch> whose tree is the branch's
 * current tree with files[0..nfiles) added or replaced (every other file
 * kept; intermediate directories created).  The first commit creates the
 * branch as a root commit.  Author and committer are
 * "storyctl <storyctl@localhost>" at now_s (seconds since the epoch, the
 * controller's clock) with offset +0000.  message is stored with
 * trailing blank space trimmed and one final newline, as git does.
 *
 * When the new tree equals the tip's tree (or there is no tip and
 * nfiles == 0) nothing is written: *out_committed = 0.  Otherwise
 * *out_committed = 1.
 *
 * The ref moves only if it still holds the tip the commit was built on
 * (compare-and-swap under the ref's lock file); if another writer moved
 * or locked it in between, the commit is rebuilt on the new tip (up to
 * 100 times, then SC_EIO; a stale lock file is named).  No update is ever
 * lost.  Paths must be relative, without empty, "." or ".." parts or
 * a ".git" part, each at most once per call (else SC_EDATA).  Replacing
 * a directory by a file or the other way round fails with SC_EIO.
 */
int gitstate_commit(struct gitstate *gs, int *out_committed,
    const struct gitstate_file *files, size_t nfiles, const char *message,
    int64_t now_s, struct sc_err *err);

/*
 * The same commit built file by file, so that a commit of thousands of
 * files never holds them all in memory: gitstate_tx_begin(), then
 * gitstate_tx_add() for each file (its blob is written at once; path and
 * data are copied or consumed before it returns), then
 * gitstate_tx_commit() with the rules of gitstate_commit() (a path
 * given twice is found there).  With replace, the new tree holds only
 * the files added (nothing is carried over from the tip); otherwise it
 * is the tip's tree with the files added or replaced.  *out and the
 * transaction are the caller's, freed with gitstate_tx_free() (NULL is
 * a no-op) after a commit or instead of one.  A transaction abandoned
 * leaves unreferenced blobs, which git gc drops.
 */
struct gitstate_tx;
int gitstate_tx_begin(struct gitstate *gs, struct gitstate_tx **out,
    int replace, struct sc_err *err);
int gitstate_tx_add(struct gitstate_tx *tx, const char *path, const char *data,
    size_t len, struct sc_err *err);
int gitstate_tx_commit(struct gitstate_tx *tx, int *out_committed,
    const char *message, int64_t now_s, struct sc_err *err);
void gitstate_tx_free(struct gitstate_tx *tx);

/*
 * Pack the objects the commits of this handle wrote as loose files, and
 * those an earlier writer left loose (every commit lists what it wrote
 * in <commondir>storyctl/loose until it is packed, and a handle's first
 * commit takes the list over: docs/state-branch.md#carried-over)
 * (state/gitobjects.c: libgit2's packbuilder, then the loose copies go),
 * as commits also do by themselves once GS_PACK_AT objects are loose
 * (state/gitstate_commit.c; tests set another threshold with
 * gitstate_pack_at(), 0 for the default).  On failure (SC_EIO) the
 * objects stay loose and readable; nothing is lost.
 */
int gitstate_flush(struct gitstate *gs, struct sc_err *err);
void gitstate_pack_at(struct gitstate *gs, size_t nobjects);

/*
 * Read path at the tip of the branch.  *found = 0 (and *out = NULL)
 * when the branch does not exist or has no file at path (a directory or
 * submodule entry does not count as a file).  Otherwise *found = 1 and
 * *out is a malloc'd copy of the len bytes plus a terminating NUL, owned
 * by the caller.  out_len may be NULL.
 */
int gitstate_read(struct gitstate *gs, char **out, size_t *out_len, int *found,
    const char *path, struct sc_err *err);

/*
 * The tip commit's message without its trailing newline(s), malloc'd
 * and owned by the caller; *found = 0 and *out = NULL when the branch
 * does not exist.
 */
int gitstate_tip_message(
    struct gitstate *gs, char **out, int *found, struct sc_err *err);

/* Number of commits reachable from the branch tip (0 when the branch
 * does not exist).  Walks the whole history: for tests and sync, not for
 * the per-decision path. */
int gitstate_count(struct gitstate *gs, size_t *out, struct sc_err *err);

/* The tip commit id as 40 hex digits plus NUL into hex (at least 41
 * bytes); *found = 0 and hex = "" when the branch does not exist. */
int gitstate_tip_id(
    struct gitstate *gs, char *hex, int *found, struct sc_err *err);

/* Absolute path of the work tree root, without a trailing slash (except
 * for "/" itself).  Valid until gitstate_free(). */
const char *gitstate_workdir(const struct gitstate *gs);

/* message as git stores a commit message: trailing blank space trimmed
 * and one '\n' appended.  malloc'd (the caller's), NULL on OOM.  Also
 * used by state/gitwork.c for work commits. */
char *gitstate_clean_message(const char *message);

/* The branch name as given to gitstate_open().  Valid until
 * gitstate_free(). */
const char *gitstate_branch(const struct gitstate *gs);

#endif
