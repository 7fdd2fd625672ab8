/*
 * gitsandbox.h - the git directory a confined agent sees, and what is
 * taken back from it when the agent ends (docs/sandbox.md#git).
 *
 * A confined agent (docs/sandbox.md) may commit on its own story
 * branch, and on nothing else: no other ref, no object already in the
 * repository, no config, no hook.  The operating system cannot give it
 * one file of .git/refs to write and not the rest, so it never gets the
 * real git directory at all.  Before the attempt the controller makes a
 * private git directory P for it, which the sandbox mounts where the
 * tree's own git directory is (R/.git in the main tree, the worktree's
 * .git/worktrees/<name> under -j N):
 *
 *   P/HEAD, P/index        copies of the tree's own (the worktree's
 *                          under -j N)
 *   P/config, P/packed-refs, P/shallow
 *                          copies of the common directory's, when present
 *   P/refs/                a copy of the common directory's loose refs
 *                          (regular files only; symbolic links skipped)
 *   P/objects/             empty, the agent's new objects land here;
 *                          P/objects/info/alternates names
 *                          SHOWN/objects, where the sandbox shows the
 *                          real object store read-only
 *   every other entry of the common directory (info, hooks, modules,
 *   lfs, description, ...) a symbolic link to SHOWN/<entry>: read-only
 *   inside the sandbox; "worktrees" and "logs" are left out
 *
 * SHOWN is the path at which the sandbox shows the real common git
 * directory read-only (the caller's choice, e.g. <state dir>/repo.git,
 * a path that exists only inside the sandbox).
 *
 * When the agent has ended, gitsandbox_collect() takes back exactly one
 * thing: the new tip of the branch the tree's HEAD named when P was
 * made.  The objects reachable from it and not from the old tip are read
 * out of P (every one read through libgit2, which checks its hash: a
 * forged or broken object refuses the whole move) and written into the
 * real object store as one pack; then the branch is moved there and the
 * tree's index set to its tree (git reset --mixed: the files in the tree
 * are not touched).  Everything else the agent did in P (other refs,
 * HEAD pointed elsewhere, config, reflogs, stray objects) is dropped
 * with P.
 *
 * Functions return 0 or a negative SC_E* code and fill err (SC_EDATA:
 * not a repository, a bare one, a HEAD that names no branch when one
 * is needed; SC_EIO: libgit2 or the file system failed, naming the path
 * or ref; SC_EOS: out of memory).  Only state/ includes git2.h.
 */
#ifndef STORYCTL_GITSANDBOX_H
#define STORYCTL_GITSANDBOX_H

#include <stdbool.h>

#include "common/err.h"

struct gitsandbox {
	char *gitdir; /* the tree's git dir, absolute, no trailing '/':
	               * where the sandbox mounts P */
	char *commondir; /* the common git dir, absolute, no trailing '/'
	                  * (the same as gitdir in a main tree) */
	char *private_dir; /* P, absolute */
	char *branch; /* the full ref name HEAD named ("refs/heads/..."),
	               * NULL when HEAD was detached */
	char start_oid[41]; /* the branch's tip when P was made; "" when
	                     * the branch had no commit yet */
};

/*
 * Make P = private_dir (removed first if it exists; its parent is
 * created) for the tree whose root is tree, as above; shown is where
 * the sandbox shows the common git dir.  *out is filled (release with
 * gitsandbox_release()); on error *out is empty and nothing is left at
 * private_dir.
 */
int gitsandbox_prepare(struct gitsandbox *out, const char *tree,
    const char *private_dir, const char *shown, struct sc_err *err);

/*
 * Take back the branch's new tip from P, as above.  *moved is set when
 * the branch was moved (new_oid, 41 bytes, then holds its new tip; ""
 * otherwise).  The branch is not moved (0 returned, *moved false) when
 * HEAD was detached, when P no longer has the branch (deleted: the real
 * one stays), or when its tip did not change.  SC_EDATA, the branch not
 * moved and nothing written, when the new tip is not a commit or some
 * object it needs cannot be read or fails its hash check; the message
 * names the branch and the object.
 */
int gitsandbox_collect(bool *moved, char *new_oid, const struct gitsandbox *gs,
    const char *tree, struct sc_err *err);

/* Remove P from the disk and free gs's strings; gs is left empty.  A
 * no-op on an empty (zeroed or released) gs. */
void gitsandbox_release(struct gitsandbox *gs);

#endif
