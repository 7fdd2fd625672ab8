/*
 * gitstate_int.h - what the two parts of gitstate share (gitstate.c:
 * opening the repository and reading the branch; gitstate_commit.c:
 * commits and packing); not an interface.  Includes git2.h, so only
 * state/ may include it (docs/state-branch.md).
 */
#ifndef STORYCTL_GITSTATE_INT_H
#define STORYCTL_GITSTATE_INT_H

#include <stddef.h>
#include <stdint.h>

#include <git2.h>

#include "common/err.h"
#include "state/gitstate.h"

/* who the state branch's commits and reflog entries name */
#define GITSTATE_NAME "storyctl"
#define GITSTATE_EMAIL "storyctl@localhost"

struct gitstate {
	git_repository *repo;
	char *branch; /* "storyctl/state" */
	char *refname; /* "refs/heads/storyctl/state" */
	char *workdir; /* absolute, no trailing slash */
	int stale_removed; /* a dead writer's ref lock was removed once */
	int64_t since_ms; /* gitstate_set_owner_since(), or 0 */
	/* objects written since the last pack (gitobjects_pack), with the
	 * path each was written at (NULL for a commit) */
	git_oid *fresh;
	char **fresh_path;
	size_t nfresh, afresh;
	size_t pack_at; /* pack once nfresh reaches it (GS_PACK_AT) */
	size_t nlisted; /* fresh[0..nlisted) are in the list of loose ones */
	int loose_taken; /* the list of an earlier writer is in fresh */
};

/* libgit2's last error message, never NULL or empty. */
const char *gitstate_git_msg(void);
/* SC_EIO "state branch <branch>: <libgit2's message>" into err. */
int gitstate_fail(const struct gitstate *gs, struct sc_err *err);
/* SC_EIO: the tip commit cannot be read (says how to start afresh). */
int gitstate_fail_tip(const struct gitstate *gs, struct sc_err *err);
/* strdup(), NULL when out of memory. */
char *gitstate_strdup(const char *s);
/* 1 when path is relative, '/'-separated, without an empty, ".", ".."
 * or ".git" component; else 0. */
int gitstate_path_ok(const char *path);
/* The branch's tip into *tip; *found = 0 when the branch does not
 * exist; SC_EDATA when it is a symbolic ref. */
int gitstate_tip_find(
    struct gitstate *gs, git_oid *tip, int *found, struct sc_err *err);
/* Forget the objects noted since the last pack. */
void gitstate_forget(struct gitstate *gs);
/* Note an object written (or left loose by an earlier writer) for the
 * next pack, with its path (NULL for a commit); path is copied.  0, or
 * -1 when out of memory: the object then simply stays loose. */
int gitstate_note(struct gitstate *gs, const git_oid *id, const char *path);

/*
 * gitstate_loose.c: the objects written and not yet packed, listed in
 * <commondir>storyctl/loose for the next writer
 * (docs/state-branch.md#carried-over).  _load() notes the listed objects
 * whose loose file is still there; _append() adds fresh[nlisted..nfresh)
 * to the list; _clear() removes it (they are packed).  All best effort:
 * an object the list misses only stays loose, for git gc.
 */
void gitstate_loose_load(struct gitstate *gs);
void gitstate_loose_append(struct gitstate *gs);
void gitstate_loose_clear(struct gitstate *gs);

#endif
