/*
 * gitwork_worktree.c - the linked worktrees of `run -j N`
 * (docs/git-work.md): their names, adding one (and undoing a half-made
 * one), checking and removing it.  See gitwork.h.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <dirent.h>
#include <unistd.h>

#include <git2.h>

#include "state/fsutil.h"
#include "state/gitwork.h"
#include "state/gitwork_int.h"

int
gitwork_worktree_name(
    char *out, size_t outlen, const char *name, struct sc_err *err)
{
	size_t i, n;
	char c;

	if (out != NULL && outlen > 0)
		out[0] = '\0';
	if (out == NULL || name == NULL || name[0] == '\0')
		return err_set(
		    err, SC_ESOFTWARE, "gitwork_worktree_name: bad arguments");
	n = strlen(name);
	if (n >= outlen || n > NAME_MAX)
		return err_set(err, SC_ESOFTWARE,
		    "worktree %s: name longer than %zu bytes", name,
		    (outlen - 1 < NAME_MAX ? outlen - 1 : (size_t)NAME_MAX));
	for (i = 0; i < n; i++) {
		c = name[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			(c >= '0' && c <= '9') || c == '_' || c == '-' ||
			(c == '.' && i > 0)))
			c = '-';
		out[i] = c;
	}
	out[n] = '\0';
	return 0;
}

/*
 * git_worktree_lookup() of libgit2 1.5 fails with an unset error for a
 * name that does not exist, so look for the admin directory first.
 * *wt = NULL when there is none.
 */
static int
gw_wt_lookup(git_worktree **wt, git_repository *repo, const char *wname,
    struct sc_err *err)
{
	char admin[PATH_MAX];
	struct stat st;

	*wt = NULL;
	if ((size_t)snprintf(admin, sizeof(admin), "%s/worktrees/%s",
		git_repository_commondir(repo), wname) >= sizeof(admin))
		return err_set(
		    err, SC_EDATA, "worktree %s: path too long", wname);
	if (stat(admin, &st) != 0 || !S_ISDIR(st.st_mode))
		return 0;
	git_error_clear();
	if (git_worktree_lookup(wt, repo, wname) == 0)
		return 0;
	/* A controller killed inside git_worktree_add leaves an admin
	 * directory without HEAD or commondir, which libgit2 cannot read
	 * and `git worktree prune` does not remove.  Nothing can be in it
	 * that matters: remove it, and the worktree is added afresh. */
	git_error_clear();
	fsutil_rm_tree(admin);
	if (stat(admin, &st) == 0)
		return err_set(err, SC_EIO,
		    "worktree %s: cannot remove the half-made %s: %s", wname,
		    admin, strerror(errno));
	*wt = NULL;
	return 0;
}

/* Is path free for a new worktree: missing (*empty = 0) or an empty
 * directory (*empty = 1), which libgit2 wants removed first. */
static int
gw_path_free(int *empty, const char *path, struct sc_err *err)
{
	struct stat st;
	DIR *d;
	struct dirent *de;

	*empty = 0;
	if (lstat(path, &st) != 0) {
		if (errno == ENOENT)
			return 0;
		return err_set(err, SC_EIO, "%s: %s", path, strerror(errno));
	}
	if (!S_ISDIR(st.st_mode))
		return err_set(err, SC_EDATA,
		    "%s: already exists and is not a directory", path);
	if ((d = opendir(path)) == NULL)
		return err_set(err, SC_EIO, "%s: %s", path, strerror(errno));
	*empty = 1;
	while (*empty && (de = readdir(d)) != NULL)
		if (strcmp(de->d_name, ".") != 0 &&
		    strcmp(de->d_name, "..") != 0)
			*empty = 0;
	closedir(d);
	if (!*empty)
		return err_set(
		    err, SC_EDATA, "%s: already exists and is not empty", path);
	return 0;
}

/*
 * The existing, valid worktree wt: is it at path with refname checked
 * out?  0 when it is, SC_EDATA saying what differs otherwise.
 */
static int
gw_worktree_same(git_worktree *wt, const char *wname, const char *path,
    const char *refname, struct sc_err *err)
{
	git_repository *wtrepo = NULL;
	git_reference *head = NULL;
	char want[PATH_MAX], have[PATH_MAX];
	const char *wtpath = git_worktree_path(wt), *on = "a detached HEAD";
	int rc = 0;

	if (git_repository_open_from_worktree(&wtrepo, wt) < 0 ||
	    git_reference_lookup(&head, wtrepo, "HEAD") < 0) {
		rc = err_set(err, SC_EIO, "worktree %s at %s: %s", wname,
		    wtpath, gitwork_git_msg());
		goto out;
	}
	if (git_reference_type(head) == GIT_REFERENCE_SYMBOLIC)
		on = git_reference_symbolic_target(head);
	if (realpath(path, want) == NULL || realpath(wtpath, have) == NULL ||
	    strcmp(want, have) != 0) {
		rc = err_set(err, SC_EDATA,
		    "worktree %s: already exists at %s (on %s), not at %s",
		    wname, wtpath, on, path);
		goto out;
	}
	if (strcmp(on, refname) != 0)
		rc = err_set(err, SC_EDATA,
		    "worktree %s at %s: has %s checked out, not %s", wname,
		    wtpath, on, refname);
out:
	git_reference_free(head);
	git_repository_free(wtrepo);
	return rc;
}

/* The branch to check out: refname as is, or made at base. */
static int
gw_worktree_branch(git_reference **out, int *made, git_repository *repo,
    const char *branch, const char *refname, const char *base, const char *dir,
    struct sc_err *err)
{
	git_commit *commit = NULL;
	int rc = 0, grc;

	*out = NULL;
	*made = 0;
	grc = git_reference_lookup(out, repo, refname);
	if (grc == 0) {
		grc = git_branch_is_checked_out(*out);
		if (grc < 0)
			rc = err_set(err, SC_EIO, "%s: branch %s: %s", dir,
			    branch, gitwork_git_msg());
		else if (grc > 0)
			rc = err_set(err, SC_EDATA,
			    "%s: branch %s: is already checked out in another "
			    "work tree",
			    dir, branch);
		goto out;
	}
	if (grc != GIT_ENOTFOUND) {
		rc = err_set(err, SC_EIO, "%s: branch %s: %s", dir, branch,
		    gitwork_git_msg());
		goto out;
	}
	if ((rc = gitwork_lookup_commit(&commit, repo, base, dir, err)) < 0) {
		err_prefix(err, "base of branch %s", branch);
		goto out;
	}
	if (git_branch_create(out, repo, branch, commit, 0) < 0) {
		rc = err_set(err, SC_EIO, "%s: cannot create branch %s: %s",
		    dir, branch, gitwork_git_msg());
		goto out;
	}
	*made = 1;
out:
	git_commit_free(commit);
	return rc;
}

/* A worktree whose directory is gone: prune its admin data so that the
 * name can be used again (what `git worktree prune` does). */
static int
gw_prune_stale(git_worktree *wt, const char *wname, struct sc_err *err)
{
	git_worktree_prune_options po;

	if (git_worktree_is_locked(NULL, wt) > 0)
		return err_set(err, SC_EDATA,
		    "worktree %s: is locked (unlock it with 'git worktree "
		    "unlock')",
		    wname);
	if (git_worktree_prune_options_init(
		&po, GIT_WORKTREE_PRUNE_OPTIONS_VERSION) < 0 ||
	    git_worktree_prune(wt, &po) < 0)
		return err_set(err, SC_EIO, "worktree %s: cannot prune: %s",
		    wname, gitwork_git_msg());
	return 0;
}

/* Undo a failed git_worktree_add(): admin data, directory, new branch. */
static void
gw_undo_add(git_repository *repo, const char *wname, const char *path,
    git_reference *bref, int made_branch)
{
	git_worktree *wt = NULL;
	git_worktree_prune_options po;
	char admin[PATH_MAX];

	if (git_worktree_lookup(&wt, repo, wname) == 0 &&
	    git_worktree_prune_options_init(
		&po, GIT_WORKTREE_PRUNE_OPTIONS_VERSION) == 0) {
		po.flags = GIT_WORKTREE_PRUNE_VALID |
		    GIT_WORKTREE_PRUNE_LOCKED | GIT_WORKTREE_PRUNE_WORKING_TREE;
		(void)git_worktree_prune(wt, &po);
	}
	git_worktree_free(wt);
	if ((size_t)snprintf(admin, sizeof(admin), "%s/worktrees/%s",
		git_repository_commondir(repo), wname) < sizeof(admin))
		fsutil_rm_tree(admin);
	/* only if empty: a directory someone else made in between stays */
	(void)rmdir(path);
	if (made_branch && bref != NULL)
		(void)git_branch_delete(bref);
}

/* Add the work tree wname at path on bref, once everything that can be
 * refused was checked; empty says path is an empty directory to take
 * over (docs/git-work.md). */
static int
gw_worktree_create(git_worktree **added, git_repository *repo,
    const char *wname, const char *path, const char *branch,
    git_reference *bref, int empty, bool files, struct sc_err *err)
{
	git_worktree_add_options o;
	int rc = 0;

	if (empty && rmdir(path) != 0) {
		rc = err_set(err, SC_EIO, "%s: %s", path, strerror(errno));
		goto out;
	}
	/* mkdir -p dirname(path): libgit2 1.5 creates only the last part */
	if ((rc = fsutil_mkdir_parents(path, 0777, err)) < 0)
		goto out;
	if (git_worktree_add_options_init(
		&o, GIT_WORKTREE_ADD_OPTIONS_VERSION) < 0) {
		rc = err_set(err, SC_ESOFTWARE, "worktree %s: %s", wname,
		    gitwork_git_msg());
		goto out;
	}
	o.ref = bref;
	/* the same bytes without an attribute lookup per file */
	if (git_reference_target(bref) != NULL &&
	    gitwork_no_filters(repo, git_reference_target(bref)))
		o.checkout_options.disable_filters = 1;
	/* a dry run: the files come later (gitwork_worktree_fill) */
	if (!files)
		o.checkout_options.checkout_strategy = GIT_CHECKOUT_NONE;
	if (git_worktree_add(added, repo, wname, path, &o) < 0)
		rc = err_set(err, SC_EIO,
		    "worktree %s: cannot add at %s on branch %s: %s", wname,
		    path, branch, gitwork_git_msg());
out:
	return rc;
}

static int
gw_worktree_add(const char *repo_dir, const char *name, const char *path,
    const char *branch, const char *base, bool files, struct sc_err *err)
{
	git_repository *repo = NULL;
	git_worktree *wt = NULL, *added = NULL;
	git_reference *bref = NULL;
	char wname[NAME_MAX + 1], refname[GITWORK_REFMAX];
	int rc = 0, made_branch = 0, empty = 0;

	if (repo_dir == NULL || name == NULL || path == NULL ||
	    path[0] == '\0' || branch == NULL)
		return err_set(
		    err, SC_ESOFTWARE, "gitwork_worktree_add: bad arguments");
	if (base == NULL)
		base = "HEAD";
	if ((rc = gitwork_worktree_name(wname, sizeof(wname), name, err)) < 0 ||
	    (rc = gitwork_open(&repo, repo_dir, err)) < 0)
		return rc;
	if ((rc = gitwork_refname(refname, sizeof(refname), branch, err)) < 0 ||
	    (rc = gw_wt_lookup(&wt, repo, wname, err)) < 0)
		goto out;
	if (wt != NULL && git_worktree_validate(wt) == 0) {
		rc = gw_worktree_same(wt, wname, path, refname, err);
		goto out; /* already there, or in the way */
	}
	if (wt != NULL && (rc = gw_prune_stale(wt, wname, err)) < 0)
		goto out;
	/* everything that can be refused is checked before anything on
	 * disk changes */
	if ((rc = gw_path_free(&empty, path, err)) < 0 ||
	    (rc = gw_worktree_branch(&bref, &made_branch, repo, branch, refname,
		 base, repo_dir, err)) < 0)
		goto out;
	rc = gw_worktree_create(
	    &added, repo, wname, path, branch, bref, empty, files, err);
	if (rc < 0)
		gw_undo_add(repo, wname, path, bref, made_branch);
out:
	git_worktree_free(added);
	git_worktree_free(wt);
	git_reference_free(bref);
	gitwork_close(repo);
	return rc;
}

int
gitwork_worktree_add(const char *repo_dir, const char *name, const char *path,
    const char *branch, const char *base, struct sc_err *err)
{
	return gw_worktree_add(repo_dir, name, path, branch, base, true, err);
}

int
gitwork_worktree_add_detached(const char *repo_dir, const char *name,
    const char *path, const char *base, struct sc_err *err)
{
	git_repository *wt = NULL;
	git_reference *ref = NULL;
	char branch[GITWORK_REFMAX];
	git_oid id;
	int rc;

	if (name == NULL ||
	    (size_t)snprintf(branch, sizeof(branch), "storyctl/slot/%s",
		name) >= sizeof(branch))
		return err_set(err, SC_ESOFTWARE,
		    "gitwork_worktree_add_detached: bad arguments");
	if ((rc = gw_worktree_add(
		 repo_dir, name, path, branch, base, false, err)) < 0 ||
	    (rc = gitwork_open(&wt, path, err)) < 0)
		return rc;
	/* the ref alone goes: git_branch_delete() would also look for the
	 * branch's config section, which a branch made here has none of,
	 * and libgit2 1.5 leaks a regex match for every key it passes */
	if (git_reference_name_to_id(&id, wt, "HEAD") < 0 ||
	    git_repository_set_head_detached(wt, &id) < 0 ||
	    git_branch_lookup(&ref, wt, branch, GIT_BRANCH_LOCAL) < 0 ||
	    git_reference_delete(ref) < 0)
		rc = err_set(err, SC_EIO, "%s: cannot detach HEAD: %s", path,
		    gitwork_git_msg());
	git_reference_free(ref);
	gitwork_close(wt);
	return rc;
}

int
gitwork_worktree_fill(const char *path, struct sc_err *err)
{
	git_repository *repo = NULL;
	git_index *none = NULL;
	git_checkout_options co;
	git_oid head;
	int rc;

	if ((rc = gitwork_open(&repo, path, err)) < 0)
		return rc;
	git_checkout_options_init(&co, GIT_CHECKOUT_OPTIONS_VERSION);
	/* against an empty baseline every file of HEAD is new: written */
	co.checkout_strategy = GIT_CHECKOUT_FORCE;
	if (git_reference_name_to_id(&head, repo, "HEAD") < 0 ||
	    git_index_new(&none) < 0) {
		rc = err_set(err, SC_EIO, "%s: %s", path, gitwork_git_msg());
		goto out;
	}
	co.baseline_index = none;
	co.disable_filters = gitwork_no_filters(repo, &head);
	if (git_checkout_head(repo, &co) < 0)
		rc = err_set(err, SC_EIO, "%s: cannot check out HEAD: %s", path,
		    gitwork_git_msg());
out:
	git_index_free(none);
	gitwork_close(repo);
	return rc;
}

int
gitwork_worktrees_prune_gone(int *out_pruned, const char *repo_dir,
    const char *under, struct sc_err *err)
{
	git_repository *repo = NULL;
	git_strarray names = {NULL, 0};
	git_worktree *wt = NULL;
	size_t i, n = strlen(under);
	const char *p;
	int rc;

	*out_pruned = 0;
	if ((rc = gitwork_open(&repo, repo_dir, err)) < 0)
		return rc;
	if (git_worktree_list(&names, repo) < 0) {
		rc = err_set(err, SC_EIO, "%s: cannot list the worktrees: %s",
		    repo_dir, gitwork_git_msg());
		goto out;
	}
	for (i = 0; i < names.count && rc == 0; i++) {
		/* a record libgit2 cannot read is removed there */
		if ((rc = gw_wt_lookup(&wt, repo, names.strings[i], err)) < 0 ||
		    wt == NULL)
			continue;
		p = git_worktree_path(wt);
		if (p != NULL && strncmp(p, under, n) == 0 && p[n] == '/' &&
		    access(p, F_OK) != 0 && errno == ENOENT &&
		    git_worktree_is_locked(NULL, wt) == 0 &&
		    (rc = gw_prune_stale(wt, names.strings[i], err)) == 0)
			(*out_pruned)++;
		git_worktree_free(wt);
		wt = NULL;
	}
out:
	git_strarray_dispose(&names);
	gitwork_close(repo);
	return rc;
}

int
gitwork_worktree_valid(int *out_valid, const char *repo_dir, const char *name,
    const char *path, struct sc_err *err)
{
	git_repository *repo = NULL;
	git_worktree *wt = NULL;
	char wname[NAME_MAX + 1], a[PATH_MAX], b[PATH_MAX];
	const char *wtpath;
	int rc;

	*out_valid = 0;
	if ((rc = gitwork_worktree_name(wname, sizeof(wname), name, err)) < 0)
		return rc;
	if ((rc = gitwork_open(&repo, repo_dir, err)) < 0)
		return rc;
	if ((rc = gw_wt_lookup(&wt, repo, wname, err)) < 0 || wt == NULL)
		goto out; /* an error, or git does not know it */
	wtpath = git_worktree_path(wt);
	if (git_worktree_validate(wt) == 0 && wtpath != NULL &&
	    realpath(wtpath, a) != NULL && realpath(path, b) != NULL &&
	    strcmp(a, b) == 0)
		*out_valid = 1;
	git_error_clear();
out:
	git_worktree_free(wt);
	gitwork_close(repo);
	return rc;
}

int
gitwork_worktree_remove(
    const char *repo_dir, const char *name, struct sc_err *err)
{
	git_repository *repo = NULL;
	git_worktree *wt = NULL;
	git_worktree_prune_options po;
	git_buf reason = GIT_BUF_INIT;
	char wname[NAME_MAX + 1], wtreal[PATH_MAX], common[PATH_MAX];
	char files[PATH_MAX];
	const char *wtpath;
	int rc = 0, grc;

	if (repo_dir == NULL || name == NULL)
		return err_set(err, SC_ESOFTWARE,
		    "gitwork_worktree_remove: bad arguments");
	if ((rc = gitwork_worktree_name(wname, sizeof(wname), name, err)) < 0)
		return rc;
	if ((rc = gitwork_open(&repo, repo_dir, err)) < 0)
		return rc;
	if ((rc = gw_wt_lookup(&wt, repo, wname, err)) < 0 || wt == NULL)
		goto out; /* an error, or already gone */
	wtpath = git_worktree_path(wt);
	grc = git_worktree_is_locked(&reason, wt);
	if (grc != 0) {
		rc = grc < 0
		    ? err_set(err, SC_EIO, "worktree %s: %s", wname,
			  gitwork_git_msg())
		    : err_set(err, SC_EDATA,
			  "worktree %s at %s: is locked (%s)", wname, wtpath,
			  reason.ptr != NULL && reason.ptr[0] != '\0'
			      ? reason.ptr
			      : "no reason given");
		goto out;
	}
	/* Corrupt admin data must never make us delete the repository
	 * itself: refuse a "work tree" that contains the git dir. */
	if (wtpath != NULL && realpath(wtpath, wtreal) != NULL &&
	    realpath(git_repository_commondir(repo), common) != NULL &&
	    gitwork_strip_root(common, wtreal) != NULL) {
		rc = err_set(err, SC_EDATA,
		    "worktree %s: its path %s contains the repository; "
		    "not removing it",
		    wname, wtpath);
		goto out;
	}
	if (git_worktree_prune_options_init(
		&po, GIT_WORKTREE_PRUNE_OPTIONS_VERSION) < 0) {
		rc = err_set(err, SC_ESOFTWARE, "worktree %s: %s", wname,
		    gitwork_git_msg());
		goto out;
	}
	/* git's record first, then the files: a kill in between leaves a
	 * checkout git cannot open, which start-up removes as half-made
	 * (docs/git-work.md#what-survives-a-crash); the files go through
	 * fsutil_rm_tree(), which costs half of libgit2's removal */
	snprintf(files, sizeof(files), "%s", wtpath != NULL ? wtpath : "");
	po.flags = GIT_WORKTREE_PRUNE_VALID;
	if (git_worktree_prune(wt, &po) < 0)
		rc = err_set(err, SC_EIO,
		    "worktree %s at %s: cannot remove: %s", wname,
		    files[0] != '\0' ? files : "?", gitwork_git_msg());
	else if (files[0] != '\0')
		fsutil_rm_tree(files);
out:
	git_buf_dispose(&reason);
	git_worktree_free(wt);
	gitwork_close(repo);
	return rc;
}
