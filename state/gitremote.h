/*
 * gitremote.h - a story's branch to and from a git remote, and a fresh
 * clone of it, through libgit2 (docs/cluster.md#how-an-attempt-runs-remotely):
 * what the remote executor needs so that nothing assumes a file system
 * shared with the worker.  url is anything libgit2 can push to and fetch
 * from: a path, file://, ssh:// or https:// (credentials are the
 * transport's own; none are asked for here).  Every call opens and closes
 * what it uses.  Errors: SC_EDATA for a bad branch name or a missing
 * branch, SC_EIO when libgit2 or the transport failed ("<url>: <libgit2
 * message>"), SC_EOS when out of memory.
 */
#ifndef STORYCTL_GITREMOTE_H
#define STORYCTL_GITREMOTE_H

#include <stdbool.h>

#include "common/err.h"

/*
 * `git push [--force] url refs/heads/<branch>:refs/heads/<branch>` from
 * the repository containing dir (a linked worktree will do).  force: the
 * remote's branch is replaced whatever it holds (the controller's branch
 * is the truth, docs/cluster.md#crashes-and-cancellation); otherwise only
 * a fast-forward is accepted.
 */
int gitremote_push(const char *dir, const char *url, const char *branch,
    bool force, struct sc_err *err);

/*
 * `git fetch url +refs/heads/<branch>:refs/storyctl/remote/<branch>` into
 * the repository containing dir; hex (41 bytes) receives the fetched
 * tip's id.  The fetched ref is private: no branch moves.
 */
int gitremote_fetch(char *hex, const char *dir, const char *url,
    const char *branch, struct sc_err *err);

/*
 * Lay commit hex's files into the work tree containing dir while HEAD
 * and the index stay where they are (`git checkout hex -- . && git
 * reset`, with files hex deleted removed): what changed since HEAD shows
 * as uncommitted changes, as if it had been made in this work tree.
 */
int gitremote_apply(const char *dir, const char *hex, struct sc_err *err);

/* `git clone --branch <branch> url dir`: dir must not
 * exist or be empty. */
int gitremote_clone(
    const char *dir, const char *url, const char *branch, struct sc_err *err);

#endif
