/*
 * gitstate.c - see gitstate.h and docs/state-branch.md: opening the
 * repository and the branch, and reading it back.  Commits and packing
 * are in gitstate_commit.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include <git2.h>

#include "state/gitlib.h"
#include "state/gitstate_int.h"

const char *
gitstate_git_msg(void)
{
	const git_error *e = git_error_last();

	if (e == NULL || e->message == NULL || e->message[0] == '\0')
		return "unknown libgit2 error";
	return e->message;
}

/* The libgit2 failure just seen, as SC_EIO naming the branch. */
int
gitstate_fail(const struct gitstate *gs, struct sc_err *err)
{
	return err_set(
	    err, SC_EIO, "state branch %s: %s", gs->branch, gitstate_git_msg());
}

/*
 * The tip commit cannot be read.  After a power loss without fsync (see
 * docs/state-branch.md) the ref may name an object that never reached
 * the disk; the branch is only a mirror of the database, so say how to
 * start it afresh.
 */
int
gitstate_fail_tip(const struct gitstate *gs, struct sc_err *err)
{
	return err_set(err, SC_EIO,
	    "state branch %s: cannot read the tip commit: %s (delete the "
	    "branch with 'git branch -D %s' to have it written again)",
	    gs->branch, gitstate_git_msg(), gs->branch);
}

char *
gitstate_strdup(const char *s)
{
	size_t n = strlen(s) + 1;
	char *p = malloc(n);

	if (p != NULL)
		memcpy(p, s, n);
	return p;
}

/*
 * Is path acceptable as a tree path?  Relative, '/'-separated, no empty,
 * "." or ".." component and no ".git" component (any case: it would
 * become the repository on checkout of some file systems).
 */
int
gitstate_path_ok(const char *path)
{
	const char *p = path, *slash;
	size_t n;

	if (path == NULL || *path == '\0')
		return 0;
	for (;;) {
		slash = strchr(p, '/');
		n = slash != NULL ? (size_t)(slash - p) : strlen(p);
		if (n == 0)
			return 0;
		if ((n == 1 && p[0] == '.') ||
		    (n == 2 && p[0] == '.' && p[1] == '.') ||
		    (n == 4 && strncasecmp(p, ".git", 4) == 0))
			return 0;
		if (slash == NULL)
			return 1;
		p = slash + 1;
	}
}

/*
 * Look up the branch tip.  0 with *found = 0 when the branch does not
 * exist; a branch that is a symbolic ref is refused (we would otherwise
 * move whatever it points to).
 */
int
gitstate_tip_find(
    struct gitstate *gs, git_oid *tip, int *found, struct sc_err *err)
{
	git_reference *ref = NULL;
	int rc = 0, grc;

	*found = 0;
	grc = git_reference_lookup(&ref, gs->repo, gs->refname);
	if (grc == GIT_ENOTFOUND)
		goto out;
	if (grc < 0) {
		rc = gitstate_fail(gs, err);
		goto out;
	}
	if (git_reference_type(ref) != GIT_REFERENCE_DIRECT) {
		rc = err_set(err, SC_EDATA,
		    "state branch %s: is a symbolic ref", gs->branch);
		goto out;
	}
	git_oid_cpy(tip, git_reference_target(ref));
	*found = 1;
out:
	git_reference_free(ref);
	return rc;
}

/* The tip commit, or *commit = NULL when the branch does not exist. */
static int
gs_tip_commit(struct gitstate *gs, git_commit **commit, struct sc_err *err)
{
	git_oid tip;
	int found = 0, rc;

	*commit = NULL;
	if ((rc = gitstate_tip_find(gs, &tip, &found, err)) < 0 || !found)
		return rc;
	if (git_commit_lookup(commit, gs->repo, &tip) < 0)
		return gitstate_fail_tip(gs, err);
	return 0;
}

/* Refuse a branch that is checked out in any work tree of the repo. */
static int
gs_check_not_checked_out(struct gitstate *gs, struct sc_err *err)
{
	git_reference *ref = NULL;
	int rc = 0, grc;

	grc = git_reference_lookup(&ref, gs->repo, gs->refname);
	if (grc == GIT_ENOTFOUND)
		goto out;
	if (grc < 0) {
		rc = gitstate_fail(gs, err);
		goto out;
	}
	grc = git_branch_is_checked_out(ref);
	if (grc < 0)
		rc = gitstate_fail(gs, err);
	else if (grc > 0)
		rc = err_set(err, SC_EDATA,
		    "state branch %s: is checked out; switch to another "
		    "branch first",
		    gs->branch);
out:
	git_reference_free(ref);
	return rc;
}

/*
 * libgit2 reads packs only from an objects/pack directory that existed
 * when the repository's object database was loaded (state/gitobjects.h),
 * so make it before anything reads an object, as `git init` does, when
 * a repository lacks it.  Failing is not an error here: the objects then
 * stay loose, since packing needs that directory.
 */
static void
gs_make_pack_dir(struct gitstate *gs)
{
	char path[4096];

	if ((size_t)snprintf(path, sizeof(path), "%sobjects/pack",
		git_repository_commondir(gs->repo)) < sizeof(path))
		(void)mkdir(path, 0777);
}

/* libgit2 for the state writer: initialised once more (the caller
 * shuts it down), with the process-wide settings it relies on. */
static int
gs_lib_init(struct sc_err *err)
{
	if (gitlib_init() < 0)
		return err_set(err, SC_EIO, "cannot initialise libgit2: %s",
		    gitstate_git_msg());
	/* Every object a state commit points to was written by this commit
	 * a moment earlier: checking that it exists (and rehashing what we
	 * read back) makes libgit2 rescan the pack directory for each one,
	 * which was most of a decision's cost.  These are process-wide
	 * settings; nothing else in storyctl reads foreign objects. */
	git_libgit2_opts(GIT_OPT_ENABLE_STRICT_OBJECT_CREATION, 0);
	git_libgit2_opts(GIT_OPT_ENABLE_STRICT_HASH_VERIFICATION, 0);
	/* The state branch never reads back what it wrote except its tip:
	 * a small object cache keeps the controller's memory flat over a
	 * night of decisions (the default allows 256 MiB). */
	git_libgit2_opts(GIT_OPT_SET_CACHE_MAX_SIZE, (ssize_t)(128 * 1024));
	/* Packs are read through mmap'd windows, which count as resident
	 * while mapped; the defaults (1 GiB windows, 8 GiB in all) would
	 * keep every pack the night wrote mapped.  The state writer reads
	 * only what the last decisions wrote, so a small working set does
	 * (docs/performance.md, memory).  Windows of 64 KiB, 256 KiB in
	 * all, saved 0.25 MiB more at N=5000, but a pack failed in some
	 * runs (docs/performance.md#ssh-start). */
	git_libgit2_opts(GIT_OPT_SET_MWINDOW_SIZE, (size_t)(256 * 1024));
	git_libgit2_opts(
	    GIT_OPT_SET_MWINDOW_MAPPED_LIMIT, (size_t)(1024 * 1024));
	return 0;
}

/* gs->branch and gs->refname, checked by libgit2's rules. */
static int
gs_names(struct gitstate *gs, const char *branch, struct sc_err *err)
{
	size_t n;
	int valid = 0;

	if ((gs->branch = gitstate_strdup(branch)) == NULL)
		return err_set(
		    err, SC_EOS, "state branch %s: out of memory", branch);
	n = strlen("refs/heads/") + strlen(branch) + 1;
	if ((gs->refname = malloc(n)) == NULL)
		return err_set(
		    err, SC_EOS, "state branch %s: out of memory", branch);
	snprintf(gs->refname, n, "refs/heads/%s", branch);
	if (git_branch_name_is_valid(&valid, branch) < 0 || !valid ||
	    git_reference_name_is_valid(&valid, gs->refname) < 0 || !valid)
		return err_set(err, SC_EDATA,
		    "state branch %s: not a valid branch name", branch);
	return 0;
}

/* gs->repo and gs->workdir: the repository at or above dir, which must
 * have a work tree. */
static int
gs_repo_open(struct gitstate *gs, const char *dir, struct sc_err *err)
{
	const char *wd;
	size_t n;
	int grc;

	grc = git_repository_open_ext(&gs->repo, dir, 0, NULL);
	if (grc == GIT_ENOTFOUND)
		return err_set(err, SC_EDATA,
		    "%s: not a git repository (or "
		    "any of the parent directories)",
		    dir);
	if (grc < 0)
		return err_set(err, SC_EIO,
		    "%s: cannot open git repository: %s", dir,
		    gitstate_git_msg());
	if (git_repository_is_bare(gs->repo) ||
	    (wd = git_repository_workdir(gs->repo)) == NULL)
		return err_set(err, SC_EDATA,
		    "%s: bare git repository has no work tree", dir);
	gs_make_pack_dir(gs);
	if ((gs->workdir = gitstate_strdup(wd)) == NULL)
		return err_set(err, SC_EOS, "%s: out of memory", dir);
	n = strlen(gs->workdir);
	while (n > 1 && gs->workdir[n - 1] == '/')
		gs->workdir[--n] = '\0';
	return 0;
}

int
gitstate_open(struct gitstate **out, const char *dir, const char *branch,
    struct sc_err *err)
{
	struct gitstate *gs = NULL;
	int rc = 0, inited = 0;

	if (out == NULL || dir == NULL || branch == NULL)
		return err_set(
		    err, SC_ESOFTWARE, "gitstate_open: bad arguments");
	*out = NULL;
	if ((rc = gs_lib_init(err)) < 0)
		goto out;
	inited = 1;
	if ((gs = calloc(1, sizeof(*gs))) == NULL) {
		rc = err_set(
		    err, SC_EOS, "state branch %s: out of memory", branch);
		goto out;
	}
	if ((rc = gs_names(gs, branch, err)) < 0 ||
	    (rc = gs_repo_open(gs, dir, err)) < 0)
		goto out;
	/* The reflog of the branch names storyctl, not the user. */
	if (git_repository_set_ident(gs->repo, GITSTATE_NAME, GITSTATE_EMAIL) <
	    0) {
		rc = gitstate_fail(gs, err);
		goto out;
	}
	if ((rc = gs_check_not_checked_out(gs, err)) < 0)
		goto out;
	*out = gs;
	gs = NULL;
	inited = 0;
out:
	if (gs != NULL) {
		git_repository_free(gs->repo);
		free(gs->branch);
		free(gs->refname);
		free(gs->workdir);
		free(gs);
	}
	if (inited)
		git_libgit2_shutdown();
	return rc;
}

void
gitstate_free(struct gitstate *gs)
{
	if (gs == NULL)
		return;
	git_repository_free(gs->repo);
	gitstate_forget(gs);
	free(gs->fresh_path);
	free(gs->fresh);
	free(gs->branch);
	free(gs->refname);
	free(gs->workdir);
	free(gs);
	git_libgit2_shutdown();
}

const char *
gitstate_workdir(const struct gitstate *gs)
{
	return gs != NULL ? gs->workdir : NULL;
}

const char *
gitstate_branch(const struct gitstate *gs)
{
	return gs != NULL ? gs->branch : NULL;
}

int
gitstate_read(struct gitstate *gs, char **out, size_t *out_len, int *found,
    const char *path, struct sc_err *err)
{
	git_commit *commit = NULL;
	git_tree *tree = NULL;
	git_tree_entry *entry = NULL;
	git_blob *blob = NULL;
	git_object_size_t size;
	char *buf = NULL;
	int rc = 0, grc;

	if (out != NULL)
		*out = NULL;
	if (out_len != NULL)
		*out_len = 0;
	if (found != NULL)
		*found = 0;
	if (gs == NULL || out == NULL || found == NULL || path == NULL)
		return err_set(
		    err, SC_ESOFTWARE, "gitstate_read: bad arguments");
	if ((rc = gs_tip_commit(gs, &commit, err)) < 0 || commit == NULL)
		goto out;
	if (git_commit_tree(&tree, commit) < 0) {
		rc = gitstate_fail(gs, err);
		goto out;
	}
	grc = git_tree_entry_bypath(&entry, tree, path);
	if (grc == GIT_ENOTFOUND)
		goto out;
	if (grc < 0) {
		rc = gitstate_fail(gs, err);
		goto out;
	}
	if (git_tree_entry_type(entry) != GIT_OBJECT_BLOB)
		goto out;
	if (git_blob_lookup(&blob, gs->repo, git_tree_entry_id(entry)) < 0) {
		rc = gitstate_fail(gs, err);
		goto out;
	}
	size = git_blob_rawsize(blob);
	if (size >= SIZE_MAX || (buf = malloc((size_t)size + 1)) == NULL) {
		rc = err_set(err, SC_EOS, "state branch %s: %s: out of memory",
		    gs->branch, path);
		goto out;
	}
	if (size > 0)
		memcpy(buf, git_blob_rawcontent(blob), (size_t)size);
	buf[size] = '\0';
	*out = buf;
	if (out_len != NULL)
		*out_len = (size_t)size;
	*found = 1;
out:
	git_blob_free(blob);
	git_tree_entry_free(entry);
	git_tree_free(tree);
	git_commit_free(commit);
	return rc;
}

int
gitstate_tip_message(
    struct gitstate *gs, char **out, int *found, struct sc_err *err)
{
	git_commit *commit = NULL;
	const char *m;
	size_t n;
	int rc = 0;

	if (out != NULL)
		*out = NULL;
	if (found != NULL)
		*found = 0;
	if (gs == NULL || out == NULL || found == NULL)
		return err_set(
		    err, SC_ESOFTWARE, "gitstate_tip_message: bad arguments");
	if ((rc = gs_tip_commit(gs, &commit, err)) < 0 || commit == NULL)
		goto out;
	m = git_commit_message(commit);
	if (m == NULL)
		m = "";
	n = strlen(m);
	while (n > 0 && m[n - 1] == '\n')
		n--;
	if ((*out = malloc(n + 1)) == NULL) {
		rc = err_set(
		    err, SC_EOS, "state branch %s: out of memory", gs->branch);
		goto out;
	}
	memcpy(*out, m, n);
	(*out)[n] = '\0';
	*found = 1;
out:
	git_commit_free(commit);
	return rc;
}

int
gitstate_count(struct gitstate *gs, size_t *out, struct sc_err *err)
{
	git_revwalk *walk = NULL;
	git_oid tip, id;
	size_t n = 0;
	int rc = 0, found = 0, grc;

	if (out != NULL)
		*out = 0;
	if (gs == NULL || out == NULL)
		return err_set(
		    err, SC_ESOFTWARE, "gitstate_count: bad arguments");
	if ((rc = gitstate_tip_find(gs, &tip, &found, err)) < 0 || !found)
		goto out;
	if (git_revwalk_new(&walk, gs->repo) < 0 ||
	    git_revwalk_push(walk, &tip) < 0) {
		rc = gitstate_fail(gs, err);
		goto out;
	}
	while ((grc = git_revwalk_next(&id, walk)) == 0)
		n++;
	if (grc != GIT_ITEROVER) {
		rc = gitstate_fail(gs, err);
		goto out;
	}
	*out = n;
out:
	git_revwalk_free(walk);
	return rc;
}

int
gitstate_tip_id(struct gitstate *gs, char *hex, int *found, struct sc_err *err)
{
	git_oid tip;
	int rc;

	if (hex != NULL)
		hex[0] = '\0';
	if (found != NULL)
		*found = 0;
	if (gs == NULL || hex == NULL || found == NULL)
		return err_set(
		    err, SC_ESOFTWARE, "gitstate_tip_id: bad arguments");
	if ((rc = gitstate_tip_find(gs, &tip, found, err)) < 0 || !*found)
		return rc;
	git_oid_tostr(hex, GIT_OID_HEXSZ + 1, &tip);
	return 0;
}
