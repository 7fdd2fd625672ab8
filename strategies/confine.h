/*
 * confine.h - the bubblewrap command line that confines one agent
 * attempt to its tree (docs/sandbox.md#the-mounts).  Pure: paths in,
 * argv out; what exists on the disk, which tool is there and whether it
 * works are the controller's to find out (controller/engine/sandbox.c).
 *
 * The sandbox the argv builds, in the order bubblewrap applies it (a
 * later mount covers an earlier one):
 *
 *   every namespace of its own (pid, ipc, uts, cgroup, user where the
 *   caller is not root, and net unless network is on), a new session
 *   (no terminal to push keystrokes into), every capability dropped,
 *   killed with its parent, the agent its pid 1 (no process inside
 *   that the seccomp program does not hold);
 *   the whole file system read-only; a fresh /dev, /proc (its own pids
 *   only), /tmp and /var/tmp;
 *   the hidden paths (secrets, sockets) covered: a directory by an empty
 *   read-only tmpfs, a file by /dev/null;
 *   readable paths shown read-only again (under a hidden one, say);
 *   writable paths (and the CLI's own state) bound read-write;
 *   the tree bound read-write;
 *   the state directory covered by an empty tmpfs (its database, logs,
 *   and every other story's worktree gone), the tree bound again inside
 *   it when it lies there (a worktree under -j N), the files of shown[]
 *   (the attempt's prompt file) read-only, the real common git
 *   directory read-only at shown_common, then the tmpfs made read-only;
 *   the private git directory (state/gitsandbox.h) bound read-write
 *   where the tree's git directory is.
 */
#ifndef STORYCTL_CONFINE_H
#define STORYCTL_CONFINE_H

#include <stdbool.h>
#include <stddef.h>

#include "common/err.h"
#include "common/strlist.h"

/* A path to cover, and whether it is a directory. */
struct confine_hide {
	const char *path;
	bool is_dir;
};

struct confine_plan {
	const char *bwrap; /* the bubblewrap program (a path) */
	const char *tree; /* read-write: the attempt's tree, absolute */
	const char *cwd; /* where the agent starts; NULL = tree */
	const char *state_dir; /* hidden: absolute */
	/* the private git dir and where it is mounted (the tree's git
	 * dir); both NULL for a tree with no git dir to confine */
	const char *private_git;
	const char *gitdir;
	/* the real common git dir, shown read-only at shown_common (a
	 * path under state_dir); NULL for none */
	const char *commondir;
	const char *shown_common;
	const struct confine_hide *hide;
	size_t nhide;
	const char *const *readable; /* absolute; missing ones skipped */
	size_t nreadable;
	const char *const *writable; /* absolute; missing ones skipped */
	size_t nwritable;
	const char *const *shown; /* files under state_dir shown read-only */
	size_t nshown;
	/* where the agent's program lies when that is in /tmp or
	 * /var/tmp, which the sandbox replaces: the entry right under
	 * them that holds it (/tmp/x for /tmp/x/node_modules/.bin/claude,
	 * and the same for where that link leads), shown read-only so that
	 * a program kept there still runs with its files; NULL for none */
	const char *const *program_tops;
	size_t nprogram_tops;
	/* NAME, VALUE pairs set inside; NULL-terminated, may be NULL */
	const char *const *setenv;
	/* names removed from the environment inside; NULL-terminated,
	 * may be NULL */
	const char *const *unsetenv;
	bool network; /* false: a network namespace of its own, empty */
	bool var_tmp; /* /var/tmp exists: give it a private one */
	int seccomp_fd; /* > 2: the seccomp program's descriptor; else none */
};

/*
 * The argv that runs agent (NULL-terminated) inside the sandbox p
 * describes, into out (which must be empty; release it with
 * strlist_release()).  SC_ESOFTWARE for a plan without bwrap, tree or
 * state_dir, a relative path, or a private_git without its gitdir;
 * SC_EOS when out of memory.  On error out is left empty.
 */
int confine_argv(struct strlist *out, const struct confine_plan *p,
    const char *const *agent, struct sc_err *err);

/*
 * The secrets under $HOME no agent reads (NULL-terminated, relative to
 * $HOME): keys, tokens and credential stores of ssh, gpg, cloud and
 * package tools.  docs/sandbox.md#what-is-hidden lists them.
 */
extern const char *const confine_home_secrets[];

/*
 * Sockets and directories of sockets outside $HOME that would let an
 * agent act as the user (NULL-terminated, absolute; "%u" stands for the
 * user's uid): the docker daemon, the user's session bus and agents.
 */
extern const char *const confine_host_sockets[];

/* Whether path is dir or lies under it (both absolute, normalised). */
bool confine_path_under(const char *path, const char *dir);

/*
 * The entry right under /tmp or /var/tmp that holds path (absolute,
 * normalised), into top (len bytes): "/tmp/x" for "/tmp/x/a/b" and
 * for "/tmp/x"; false (top "") when path lies in neither, is one of
 * them, or does not fit.
 */
bool confine_tmp_top(char *top, size_t len, const char *path);

#endif
