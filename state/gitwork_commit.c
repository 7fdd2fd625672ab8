/*
 * gitwork_commit.c - work commits (docs/git-work.md): commit everything
 * in a work tree but the state dir, and put a tree back to a commit
 * (reset --hard and clean of what it added).  See gitwork.h.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <git2.h>

#include "state/gitstate.h"
#include "state/gitwork.h"
#include "state/gitwork_int.h"

/*
 * Where a commit goes: *current = 1 when onto HEAD (branch NULL or the
 * branch checked out here), else the branch's ref (NULL when it does not
 * exist yet).  *parent is the commit to build on (NULL for a root
 * commit).
 */
static int
gw_commit_target(int *current, git_reference **bref, git_commit **parent,
    git_repository *repo, const char *dir, const char *branch,
    const char *refname, struct sc_err *err)
{
	git_reference *head = NULL;
	int rc = 0, grc;

	*current = branch == NULL;
	*bref = NULL;
	*parent = NULL;
	if (!*current) {
		if (git_reference_lookup(&head, repo, "HEAD") < 0) {
			rc = err_set(err, SC_EIO, "%s: cannot read HEAD: %s",
			    dir, gitwork_git_msg());
			goto out;
		}
		*current = git_reference_type(head) == GIT_REFERENCE_SYMBOLIC &&
		    strcmp(git_reference_symbolic_target(head), refname) == 0;
	}
	if (*current) {
		rc = gitwork_head_commit(parent, repo, dir, err);
		goto out;
	}
	grc = git_reference_lookup(bref, repo, refname);
	if (grc == GIT_ENOTFOUND) {
		rc = gitwork_head_commit(parent, repo, dir, err);
		goto out;
	}
	if (grc < 0) {
		rc = err_set(err, SC_EIO, "%s: branch %s: %s", dir, branch,
		    gitwork_git_msg());
		goto out;
	}
	if (git_reference_type(*bref) != GIT_REFERENCE_DIRECT) {
		rc = err_set(err, SC_EDATA, "%s: branch %s: is a symbolic ref",
		    dir, branch);
		goto out;
	}
	grc = git_branch_is_checked_out(*bref);
	if (grc != 0) {
		rc = grc < 0 ? err_set(err, SC_EIO, "%s: branch %s: %s", dir,
				   branch, gitwork_git_msg())
			     : err_set(err, SC_EDATA,
				   "%s: branch %s: is checked out in another "
				   "work tree",
				   dir, branch);
		goto out;
	}
	if (git_commit_lookup(parent, repo, git_reference_target(*bref)) < 0)
		rc = err_set(err, SC_EIO,
		    "%s: branch %s: cannot read the tip commit: %s", dir,
		    branch, gitwork_git_msg());
out:
	git_reference_free(head);
	return rc;
}

/*
 * `git add -A` into idx: one diff of idx against the work tree, each
 * new, changed or deleted file applied, the state dir and nested
 * repositories (the only directories the diff reports, with a trailing
 * '/') left out as in a work commit (docs/git-work.md#safety-rules).
 * The diff also refreshes the stat data of files whose content turned
 * out unchanged (GIT_DIFF_UPDATE_INDEX, as `git status` does): libgit2's
 * git_index_add_all() does not, so a file merely touched, copied or
 * rewritten with the same bytes was hashed again by every snapshot, and
 * it diffed the tree twice (add_all, then update_all for deletions).
 * only: just those paths (relative to the work tree), or NULL.
 */
int
gitwork_add_all(git_index *idx, git_repository *repo, const char *ex,
    const struct strlist *only)
{
	git_diff_options o;
	git_diff *diff = NULL;
	const git_diff_delta *d;
	const char *path;
	size_t i, n, len;
	int rc = 0;

	if (git_diff_options_init(&o, GIT_DIFF_OPTIONS_VERSION) < 0)
		return -1;
	o.flags = GIT_DIFF_INCLUDE_TYPECHANGE | GIT_DIFF_INCLUDE_UNTRACKED |
	    GIT_DIFF_RECURSE_UNTRACKED_DIRS | GIT_DIFF_UPDATE_INDEX;
	if (only != NULL) {
		/* the paths a watch saw change, literally: a directory
		 * stands for all under it, nothing else is read or stat'ed */
		o.flags |= GIT_DIFF_DISABLE_PATHSPEC_MATCH;
		o.pathspec.strings = only->items;
		o.pathspec.count = only->n;
	}
	if (git_diff_index_to_workdir(&diff, repo, idx, &o) < 0)
		return -1;
	n = git_diff_num_deltas(diff);
	for (i = 0; rc == 0 && i < n; i++) {
		d = git_diff_get_delta(diff, i);
		path = d->status == GIT_DELTA_DELETED ? d->old_file.path
						      : d->new_file.path;
		len = strlen(path);
		if ((len > 0 && path[len - 1] == '/') ||
		    gitwork_excluded(path, ex))
			continue;
		if (d->status == GIT_DELTA_DELETED)
			rc = git_index_remove_bypath(idx, path);
		else
			rc = git_index_add_bypath(idx, path);
	}
	git_diff_free(diff);
	return rc < 0 ? -1 : 0;
}

/* Does only name a .gitignore?  Then a file it no longer ignores is
 * new to git without having changed. */
static bool
gw_names_ignore_file(const struct strlist *only)
{
	const char *base;
	size_t i;

	for (i = 0; only != NULL && i < only->n; i++) {
		base = strrchr(only->items[i], '/');
		base = base != NULL ? base + 1 : only->items[i];
		if (strcmp(base, ".gitignore") == 0)
			return true;
	}
	return false;
}

/* Stage everything like `git add -A`, skipping the excluded dir: all of
 * the tree, or (only not NULL) the paths a watch saw change. */
static int
gw_stage_all(git_index *idx, const char *ex, const struct strlist *only,
    const char *dir, struct sc_err *err)
{
	if (gw_names_ignore_file(only))
		only = NULL;
	/* one diff of the tree, not add_all's walk and update_all's
	 * (docs/performance.md#worktrees-kept-per-slot) */
	if (git_index_read(idx, 0) < 0 ||
	    gitwork_add_all(idx, git_index_owner(idx), ex, only) < 0)
		return err_set(err, SC_EIO, "%s: cannot stage changes: %s", dir,
		    gitwork_git_msg());
	return 0;
}

/* Is there nothing to commit: tree_id equals the parent's tree, or the
 * tree is empty with no parent? */
static int
gw_nothing_to_commit(int *out, git_repository *repo, const git_oid *tree_id,
    git_commit *parent, const char *dir, struct sc_err *err)
{
	git_tree *tree = NULL;

	if (parent != NULL) {
		*out = git_oid_equal(tree_id, git_commit_tree_id(parent));
		return 0;
	}
	if (git_tree_lookup(&tree, repo, tree_id) < 0)
		return err_set(err, SC_EIO, "%s: %s", dir, gitwork_git_msg());
	*out = git_tree_entrycount(tree) == 0;
	git_tree_free(tree);
	return 0;
}

/*
 * Stage everything but the excluded dir ex into idx and write its tree
 * into *tree_id.  An untracked file that head's or parent's tree holds
 * is refused first (gitwork_check_untracked).
 */
static int
gw_index_tree(git_oid *tree_id, git_index *idx, git_commit *head,
    git_commit *parent, const char *ex, const struct strlist *only,
    const char *dir, struct sc_err *err)
{
	git_tree *trees[2] = {NULL, NULL};
	int rc = 0;

	if ((head != NULL && git_commit_tree(&trees[0], head) < 0) ||
	    (parent != NULL && git_commit_tree(&trees[1], parent) < 0)) {
		rc = err_set(err, SC_EIO, "%s: %s", dir, gitwork_git_msg());
		goto out;
	}
	if ((rc = gitwork_check_untracked(idx, trees, 2, ex, dir, err)) < 0 ||
	    (rc = gw_stage_all(idx, ex, only, dir, err)) < 0)
		goto out;
	if (git_index_write_tree(tree_id, idx) < 0)
		rc = err_set(err, SC_EIO, "%s: cannot write a tree: %s", dir,
		    gitwork_git_msg());
out:
	git_tree_free(trees[0]);
	git_tree_free(trees[1]);
	return rc;
}

/* What one commit is made of (gitwork_commit_all). */
struct gw_commit {
	git_repository *repo;
	git_index *idx;
	git_reference *bref; /* the other branch's ref, or NULL */
	git_commit *parent;
	const char *dir, *branch, *refname, *cmsg;
	int current; /* onto HEAD, else onto branch */
};

/* Move the branch that is not checked out to id, only if it still points
 * where it did (compare-and-swap), with git's reflog message. */
static int
gw_move_branch(const struct gw_commit *c, const git_oid *id, struct sc_err *err)
{
	git_reference *newref = NULL;
	git_oid expect;
	char rlmsg[256];
	int rc = 0, grc;

	snprintf(rlmsg, sizeof(rlmsg), "commit: %.*s",
	    (int)strcspn(c->cmsg, "\n"), c->cmsg);
	/* the zero id means "must not exist" */
	if (c->bref != NULL)
		git_oid_cpy(&expect, git_reference_target(c->bref));
	else
		memset(&expect, 0, sizeof(expect));
	grc = git_reference_create_matching(
	    &newref, c->repo, c->refname, id, 1, &expect, rlmsg);
	if (grc < 0)
		rc = err_set(err, SC_EIO, "%s: branch %s: %s%s", c->dir,
		    c->branch, gitwork_git_msg(),
		    grc == GIT_EMODIFIED || grc == GIT_EEXISTS
			? " (moved by another writer)"
			: "");
	git_reference_free(newref);
	return rc;
}

/* Commit tree_id on c's parent into *id and move the branch to it. */
static int
gw_commit_create(git_oid *id, const struct gw_commit *c, const git_oid *tree_id,
    int64_t now_s, struct sc_err *err)
{
	git_tree *tree = NULL;
	git_signature *sig = NULL;
	const git_commit *parents[1] = {c->parent};
	int rc = 0;

	if (git_tree_lookup(&tree, c->repo, tree_id) < 0 ||
	    git_signature_new(
		&sig, GITWORK_NAME, GITWORK_EMAIL, (git_time_t)now_s, 0) < 0) {
		rc = err_set(err, SC_EIO, "%s: %s", c->dir, gitwork_git_msg());
		goto out;
	}
	/* onto HEAD, libgit2 moves HEAD only if it still points at
	 * parents[0] and writes git's own "commit: ..." reflog entry */
	if (git_commit_create(id, c->repo, c->current ? "HEAD" : NULL, sig, sig,
		NULL, c->cmsg, tree, c->parent != NULL ? 1 : 0, parents) < 0) {
		rc = c->current ? err_set(err, SC_EIO, "%s: cannot commit: %s",
				      c->dir, gitwork_git_msg())
				: err_set(err, SC_EIO, "%s: branch %s: %s",
				      c->dir, c->branch, gitwork_git_msg());
		goto out;
	}
	if (!c->current) {
		rc = gw_move_branch(c, id, err);
		goto out;
	}
	/* after the ref moved: a failure here leaves the work staged
	 * against the new commit, i.e. clean */
	if (git_index_write(c->idx) < 0)
		rc = err_set(err, SC_EIO,
		    "%s: committed but cannot write the index: %s", c->dir,
		    gitwork_git_msg());
out:
	git_signature_free(sig);
	git_tree_free(tree);
	return rc;
}

/*
 * Open c->dir's repository and find where the commit goes: the branch's
 * ref name into refname, the excluded dir into ex, c's target and
 * parent, HEAD's commit into *head (NULL on an unborn branch) and the
 * index.
 */
static int
gw_commit_open(struct gw_commit *c, git_commit **head, char *ex, size_t excap,
    char *refname, size_t refcap, const char *exclude_dir, struct sc_err *err)
{
	int rc;

	/* libgit2 is initialised before any git_* call, even a name check */
	if ((rc = gitwork_open(&c->repo, c->dir, err)) < 0 ||
	    (c->branch != NULL &&
		(rc = gitwork_refname(refname, refcap, c->branch, err)) < 0) ||
	    (rc = gitwork_exclude(ex, excap, git_repository_workdir(c->repo),
		 exclude_dir, err)) < 0 ||
	    (rc = gw_commit_target(&c->current, &c->bref, &c->parent, c->repo,
		 c->dir, c->branch, refname, err)) < 0 ||
	    (rc = gitwork_head_commit(head, c->repo, c->dir, err)) < 0)
		goto out;
	if (git_repository_index(&c->idx, c->repo) < 0)
		rc = err_set(err, SC_EIO, "%s: %s", c->dir, gitwork_git_msg());
out:
	return rc;
}

static int
gw_commit_all(int *out_committed, char *out_hex, const char *dir,
    const char *branch, const struct strlist *only, const char *exclude_dir,
    const char *msg, int64_t now_s, struct sc_err *err)
{
	struct gw_commit c = {0};
	git_commit *head = NULL;
	git_oid tree_id, id;
	char ex[PATH_MAX], refname[GITWORK_REFMAX];
	char *cmsg = NULL;
	int rc = 0, nothing = 0;

	if (out_committed != NULL)
		*out_committed = 0;
	if (out_hex != NULL)
		out_hex[0] = '\0';
	if (out_committed == NULL || dir == NULL || msg == NULL)
		return err_set(
		    err, SC_ESOFTWARE, "gitwork_commit_all: bad arguments");
	if ((cmsg = gitstate_clean_message(msg)) == NULL)
		return err_set(err, SC_EOS, "%s: out of memory", dir);
	if (cmsg[0] == '\n') {
		rc =
		    err_set(err, SC_ESOFTWARE, "%s: empty commit message", dir);
		goto out;
	}
	refname[0] = '\0';
	c.dir = dir;
	c.branch = branch;
	c.refname = refname;
	c.cmsg = cmsg;
	if ((rc = gw_commit_open(&c, &head, ex, sizeof(ex), refname,
		 sizeof(refname), exclude_dir, err)) < 0 ||
	    (rc = gw_index_tree(
		 &tree_id, c.idx, head, c.parent, ex, only, dir, err)) < 0 ||
	    (rc = gw_nothing_to_commit(
		 &nothing, c.repo, &tree_id, c.parent, dir, err)) < 0)
		goto out;
	if (nothing) {
		/* keep the refreshed stat data, as `git add -A` would */
		if (c.current && git_index_write(c.idx) < 0)
			rc = err_set(err, SC_EIO,
			    "%s: cannot write the index: %s", dir,
			    gitwork_git_msg());
		goto out;
	}
	if ((rc = gw_commit_create(&id, &c, &tree_id, now_s, err)) < 0)
		goto out;
	*out_committed = 1;
	if (out_hex != NULL)
		git_oid_tostr(out_hex, GITWORK_HEXSZ, &id);
out:
	git_commit_free(head);
	git_commit_free(c.parent);
	git_reference_free(c.bref);
	git_index_free(c.idx);
	gitwork_close(
	    c.repo); /* NULL when gitwork_open() was not reached or failed */
	free(cmsg);
	return rc;
}

int
gitwork_commit_all(int *out_committed, char *out_hex, const char *dir,
    const char *branch, const char *exclude_dir, const char *msg, int64_t now_s,
    struct sc_err *err)
{
	return gw_commit_all(out_committed, out_hex, dir, branch, NULL,
	    exclude_dir, msg, now_s, err);
}

int
gitwork_commit_changed(int *out_committed, const char *dir,
    const struct strlist *only, const char *msg, int64_t now_s,
    struct sc_err *err)
{
	return gw_commit_all(
	    out_committed, NULL, dir, NULL, only, NULL, msg, now_s, err);
}

/* Remove the now empty directories from dirname(full) up to, but not
 * including, the work tree root (root length rootlen, no '/'). */
static void
gw_prune_dirs(char *full, size_t rootlen)
{
	char *slash;

	for (;;) {
		slash = strrchr(full, '/');
		if (slash == NULL || (size_t)(slash - full) <= rootlen)
			return;
		*slash = '\0';
		if (rmdir(full) != 0)
			return; /* not empty (ignored or excluded files) */
	}
}

/* `git clean -fd` without touching ignored files or the excluded dir. */
static int
gw_clean(
    git_repository *repo, const char *ex, const char *dir, struct sc_err *err)
{
	git_status_list *list = NULL;
	const git_status_entry *e;
	const char *wd = git_repository_workdir(repo), *path;
	char full[PATH_MAX];
	size_t i, n, rootlen = strlen(wd);
	int rc;

	while (rootlen > 1 && wd[rootlen - 1] == '/')
		rootlen--;
	if ((rc = gitwork_status(&list, repo, dir, err)) < 0)
		return rc;
	n = git_status_list_entrycount(list);
	for (i = 0; i < n; i++) {
		e = git_status_byindex(list, i);
		if (e == NULL || (e->status & GIT_STATUS_WT_NEW) == 0 ||
		    e->index_to_workdir == NULL)
			continue;
		path = e->index_to_workdir->new_file.path;
		/* a directory entry is a nested repository: git clean
		 * keeps those without -ff, and so do we */
		if (gitwork_excluded(path, ex) || path[0] == '\0' ||
		    path[strlen(path) - 1] == '/')
			continue;
		if ((size_t)snprintf(full, sizeof(full), "%.*s/%s",
			(int)rootlen, wd, path) >= sizeof(full)) {
			rc = err_set(
			    err, SC_EIO, "%s: %s: path too long", dir, path);
			break;
		}
		if (unlink(full) != 0 && errno != ENOENT) {
			rc = err_set(err, SC_EIO, "%s: cannot remove: %s", full,
			    strerror(errno));
			break;
		}
		gw_prune_dirs(full, rootlen);
	}
	git_status_list_free(list);
	return rc;
}

int
gitwork_reset_hard(const char *dir, const char *hex, const char *exclude_dir,
    struct sc_err *err)
{
	git_repository *repo = NULL;
	git_commit *target = NULL, *head = NULL;
	git_tree *trees[2] = {NULL, NULL};
	git_index *idx = NULL;
	char ex[PATH_MAX];
	int rc = 0;

	if (dir == NULL || hex == NULL)
		return err_set(
		    err, SC_ESOFTWARE, "gitwork_reset_hard: bad arguments");
	if ((rc = gitwork_open(&repo, dir, err)) < 0)
		return rc;
	if ((rc = gitwork_exclude(ex, sizeof(ex), git_repository_workdir(repo),
		 exclude_dir, err)) < 0 ||
	    (rc = gitwork_lookup_commit(&target, repo, hex, dir, err)) < 0 ||
	    (rc = gitwork_head_commit(&head, repo, dir, err)) < 0)
		goto out;
	if (git_repository_index(&idx, repo) < 0 ||
	    git_commit_tree(&trees[0], target) < 0 ||
	    (head != NULL && git_commit_tree(&trees[1], head) < 0)) {
		rc = err_set(err, SC_EIO, "%s: %s", dir, gitwork_git_msg());
		goto out;
	}
	if ((rc = gitwork_check_untracked(idx, trees, 2, ex, dir, err)) < 0)
		goto out;
	/* git_reset() forces the checkout for a hard reset; it never
	 * removes untracked or ignored files */
	if (git_reset(repo, (const git_object *)target, GIT_RESET_HARD, NULL) <
	    0) {
		rc = err_set(err, SC_EIO, "%s: cannot reset to %s: %s", dir,
		    hex, gitwork_git_msg());
		goto out;
	}
	rc = gw_clean(repo, ex, dir, err);
out:
	git_index_free(idx);
	git_tree_free(trees[0]);
	git_tree_free(trees[1]);
	git_commit_free(head);
	git_commit_free(target);
	gitwork_close(repo);
	return rc;
}
