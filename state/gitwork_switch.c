/*
 * gitwork_switch.c - keeping a linked worktree from one story to the
 * next (docs/git-work.md#the-life-of-a-slots-worktree): which worktree a
 * checkout is, moving it, switching it to another branch, and whether
 * git ignores a path.  See gitwork.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <git2.h>

#include "state/gitwork.h"
#include "state/gitwork_int.h"

int
gitwork_worktree_name_at(
    char *out, size_t outlen, const char *path, struct sc_err *err)
{
	char file[PATH_MAX], buf[PATH_MAX + 16];
	const char *p, *slash;
	ssize_t got;
	size_t n;
	int fd = -1, rc = 0;

	out[0] = '\0';
	if ((size_t)snprintf(file, sizeof(file), "%s/.git", path) >=
	    sizeof(file))
		return err_set(err, SC_EDATA, "%s: path too long", path);
	if ((fd = open(file, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)) < 0) {
		rc = err_set(err, SC_EDATA, "%s: %s", file, strerror(errno));
		goto out;
	}
	got = read(fd, buf, sizeof(buf) - 1);
	buf[got > 0 ? got : 0] = '\0';
	buf[strcspn(buf, "\r\n")] = '\0';
	/* libgit2 writes the admin dir with a trailing '/', git without */
	for (n = strlen(buf); n > 0 && buf[n - 1] == '/'; n--)
		buf[n - 1] = '\0';
	p = strncmp(buf, "gitdir: ", 8) == 0 ? buf + 8 : NULL;
	slash = p != NULL ? strrchr(p, '/') : NULL;
	/* ".../worktrees/<name>": anything else is no linked worktree */
	if (slash == NULL || slash - p < 10 ||
	    strncmp(slash - 10, "/worktrees", 10) != 0 || slash[1] == '\0') {
		rc = err_set(err, SC_EDATA, "%s: not a linked worktree", path);
		goto out;
	}
	n = strlen(slash + 1);
	if (n >= outlen) {
		rc = err_set(err, SC_EDATA, "%s: worktree name too long", path);
		goto out;
	}
	memcpy(out, slash + 1, n + 1);
out:
	if (fd >= 0)
		close(fd);
	return rc;
}

/* Write "<path>/.git" into the admin dir's gitdir file, through a
 * temporary file renamed over it, so that git finds it whole. */
static int
gw_write_gitdir(const char *admin, const char *path, struct sc_err *err)
{
	char file[PATH_MAX], tmp[PATH_MAX + 8], line[PATH_MAX + 8];
	int fd = -1, rc = 0, len;

	len = snprintf(line, sizeof(line), "%s/.git\n", path);
	if ((size_t)snprintf(file, sizeof(file), "%s/gitdir", admin) >=
		sizeof(file) ||
	    (size_t)snprintf(tmp, sizeof(tmp), "%s.tmp", file) >= sizeof(tmp) ||
	    len < 0 || (size_t)len >= sizeof(line))
		return err_set(err, SC_EDATA, "%s: path too long", admin);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0 || write(fd, line, (size_t)len) != len || fsync(fd) < 0 ||
	    close(fd) < 0) {
		rc = err_set(err, SC_EIO, "%s: %s", tmp, strerror(errno));
		if (fd >= 0)
			(void)close(fd);
		(void)unlink(tmp);
		goto out;
	}
	if (rename(tmp, file) < 0) {
		rc = err_set(err, SC_EIO, "%s: %s", file, strerror(errno));
		(void)unlink(tmp);
	}
out:
	return rc;
}

int
gitwork_worktree_move(const char *repo_dir, const char *name,
    const char *newpath, struct sc_err *err)
{
	git_repository *repo = NULL;
	git_worktree *wt = NULL;
	char wname[NAME_MAX + 1], admin[PATH_MAX], from[PATH_MAX];
	int rc;

	if ((rc = gitwork_worktree_name(wname, sizeof(wname), name, err)) < 0 ||
	    (rc = gitwork_open(&repo, repo_dir, err)) < 0)
		return rc;
	if ((size_t)snprintf(admin, sizeof(admin), "%s/worktrees/%s",
		git_repository_commondir(repo), wname) >= sizeof(admin)) {
		rc =
		    err_set(err, SC_EDATA, "worktree %s: path too long", wname);
		goto out;
	}
	if (git_worktree_lookup(&wt, repo, wname) < 0 ||
	    git_worktree_validate(wt) < 0) {
		rc = err_set(err, SC_EDATA, "worktree %s: cannot move: %s",
		    wname, gitwork_git_msg());
		goto out;
	}
	snprintf(from, sizeof(from), "%s", git_worktree_path(wt));
	if (access(newpath, F_OK) == 0) {
		rc = err_set(err, SC_EDATA, "worktree %s: %s is in the way",
		    wname, newpath);
		goto out;
	}
	/* the directory first: a kill before git's record follows leaves a
	 * checkout git cannot open, which start-up removes as half-made
	 * (docs/git-work.md#what-survives-a-crash) */
	if (rename(from, newpath) < 0) {
		rc = err_set(err, SC_EIO,
		    "worktree %s: cannot move %s to %s: %s", wname, from,
		    newpath, strerror(errno));
		goto out;
	}
	rc = gw_write_gitdir(admin, newpath, err);
out:
	git_worktree_free(wt);
	gitwork_close(repo);
	return rc;
}

/* refs/heads/<branch> for a switch: as it is, or made at base; refused
 * when another work tree has it checked out. */
static int
gw_switch_branch(git_commit **tip, git_repository *repo, const char *branch,
    const char *refname, const char *base, const char *dir, struct sc_err *err)
{
	git_reference *ref = NULL, *made = NULL;
	int rc = 0, grc;

	*tip = NULL;
	grc = git_reference_lookup(&ref, repo, refname);
	if (grc == GIT_ENOTFOUND) {
		if ((rc = gitwork_lookup_commit(tip, repo, base, dir, err)) < 0)
			goto out;
		if (git_branch_create(&made, repo, branch, *tip, 0) < 0)
			rc = err_set(err, SC_EIO,
			    "%s: cannot create branch %s: %s", dir, branch,
			    gitwork_git_msg());
		goto out;
	}
	if (grc == 0)
		grc = git_branch_is_checked_out(ref);
	if (grc != 0) {
		rc = grc < 0 ? err_set(err, SC_EIO, "%s: branch %s: %s", dir,
				   branch, gitwork_git_msg())
			     : err_set(err, SC_EDATA,
				   "%s: branch %s: is already checked out in "
				   "another work tree",
				   dir, branch);
		goto out;
	}
	rc = gitwork_lookup_commit(tip, repo, refname, dir, err);
out:
	git_reference_free(made);
	git_reference_free(ref);
	return rc;
}

/* Into *paths: the paths that differ between HEAD's tree and tip's
 * (both sides of a rename, as two paths). */
static int
gw_switch_paths(struct strlist *paths, git_repository *repo, git_commit *tip,
    const char *dir, struct sc_err *err)
{
	git_commit *head = NULL;
	git_tree *from = NULL, *to = NULL;
	git_diff *diff = NULL;
	const git_diff_delta *d;
	size_t i, n;
	int rc = 0;

	if ((rc = gitwork_head_commit(&head, repo, dir, err)) < 0)
		goto out;
	if ((head != NULL && git_commit_tree(&from, head) < 0) ||
	    git_commit_tree(&to, tip) < 0 ||
	    git_diff_tree_to_tree(&diff, repo, from, to, NULL) < 0) {
		rc = err_set(err, SC_EIO, "%s: %s", dir, gitwork_git_msg());
		goto out;
	}
	n = git_diff_num_deltas(diff);
	for (i = 0; i < n && rc == 0; i++) {
		d = git_diff_get_delta(diff, i);
		if (strlist_push(paths, d->old_file.path) < 0 ||
		    (strcmp(d->old_file.path, d->new_file.path) != 0 &&
			strlist_push(paths, d->new_file.path) < 0))
			rc = err_set(err, SC_EOS, "%s: out of memory", dir);
	}
out:
	git_diff_free(diff);
	git_tree_free(from);
	git_tree_free(to);
	git_commit_free(head);
	return rc;
}

int
gitwork_worktree_switch(const char *dir, const char *branch, const char *base,
    const struct strlist *dirty, struct sc_err *err)
{
	git_repository *repo = NULL;
	git_commit *tip = NULL;
	git_checkout_options co;
	struct strlist paths = {0};
	char refname[GITWORK_REFMAX];
	int rc;

	if (dir == NULL || branch == NULL || base == NULL)
		return err_set(err, SC_ESOFTWARE,
		    "gitwork_worktree_switch: bad arguments");
	if ((rc = gitwork_open(&repo, dir, err)) < 0)
		return rc;
	if ((rc = gitwork_refname(refname, sizeof(refname), branch, err)) < 0 ||
	    (rc = gw_switch_branch(
		 &tip, repo, branch, refname, base, dir, err)) < 0)
		goto out;
	/* against HEAD's tree as the baseline only the files that differ
	 * are written; untracked files that are not ignored go, ignored
	 * ones (node_modules, .env) stay (docs/git-work.md#switching) */
	git_checkout_options_init(&co, GIT_CHECKOUT_OPTIONS_VERSION);
	co.checkout_strategy =
	    GIT_CHECKOUT_FORCE | GIT_CHECKOUT_REMOVE_UNTRACKED;
	if (dirty != NULL) {
		/* the rest of the tree is HEAD's: it need not be looked at
		 * (docs/git-work.md#what-a-switch-looks-at) */
		if ((rc = gw_switch_paths(&paths, repo, tip, dir, err)) < 0 ||
		    (rc = strlist_copy(&paths, dirty) < 0
			    ? err_set(err, SC_EOS, "%s: out of memory", dir)
			    : 0) < 0)
			goto out;
		strlist_sort_unique(&paths);
		co.checkout_strategy |= GIT_CHECKOUT_DISABLE_PATHSPEC_MATCH;
		co.paths.strings = paths.items;
		co.paths.count = paths.n;
	}
	/* no path to look at: an empty list would mean every path */
	if ((dirty == NULL || paths.n > 0) &&
	    git_checkout_tree(repo, (const git_object *)tip, &co) < 0)
		rc = -1;
	if (rc == 0 && git_repository_set_head(repo, refname) < 0)
		rc = -1;
	if (rc < 0)
		rc = err_set(err, SC_EIO, "%s: cannot switch to branch %s: %s",
		    dir, branch, gitwork_git_msg());
out:
	strlist_release(&paths);
	git_commit_free(tip);
	gitwork_close(repo);
	return rc;
}

int
gitwork_path_ignored(
    int *out_ignored, const char *dir, const char *relpath, struct sc_err *err)
{
	git_repository *repo = NULL;
	int rc, ign = 0;

	*out_ignored = 0;
	if ((rc = gitwork_open(&repo, dir, err)) < 0)
		return rc;
	if (git_ignore_path_is_ignored(&ign, repo, relpath) < 0)
		rc = err_set(
		    err, SC_EIO, "%s: %s: %s", dir, relpath, gitwork_git_msg());
	else
		*out_ignored = ign;
	gitwork_close(repo);
	return rc;
}
