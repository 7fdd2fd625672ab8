/*
 * gitwork.c - see gitwork.h and docs/git-work.md: opening the
 * repository, the excluded state dir, the clean check, HEAD and branch
 * tips; work commits are in gitwork_commit.c, linked worktrees in
 * gitwork_worktree.c.
 *
 * Each call opens the repository, does what the matching git commands
 * would do through libgit2, and closes it again.  The one thing git
 * cannot be told through libgit2 is "everything except this directory"
 * (libgit2 pathspecs have no exclude magic), so the state dir is kept
 * out by hand: callbacks skip it when staging, status entries under it
 * are dropped, and the calls that could overwrite or delete it (reset,
 * commit) refuse to run when git tracks anything there.
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <git2.h>

#include "state/gitlib.h"
#include "state/gitwork.h"
#include "state/gitwork_int.h"

#define GW_WHY_PATHS 3 /* dirty paths named in gitwork_is_dirty()'s why */

const char *
gitwork_git_msg(void)
{
	const git_error *e = git_error_last();

	if (e == NULL || e->message == NULL || e->message[0] == '\0')
		return "unknown libgit2 error";
	return e->message;
}

/* Append printf output to the NUL-terminated buf of size len,
 * truncating. */
static void __attribute__((format(printf, 3, 4)))
gw_append(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;
	size_t n;

	if (buf == NULL || len == 0)
		return;
	n = strlen(buf);
	if (n + 1 >= len)
		return;
	va_start(ap, fmt);
	vsnprintf(buf + n, len - n, fmt, ap);
	va_end(ap);
}

/*
 * Open the repository containing dir, which must have a work tree.
 * Initialises libgit2; on success gitwork_close() balances it, on failure
 * nothing is left to undo.
 */
int
gitwork_open(git_repository **out, const char *dir, struct sc_err *err)
{
	git_repository *repo = NULL;
	struct stat st;
	int rc = 0, grc;

	*out = NULL;
	if (gitlib_init() < 0)
		return err_set(err, SC_EIO, "cannot initialise libgit2: %s",
		    gitwork_git_msg());
	git_error_clear(); /* no stale message from an earlier call */
	if (stat(dir, &st) != 0) {
		rc = err_set(err, SC_EDATA, "%s: %s", dir, strerror(errno));
		goto out;
	}
	grc = git_repository_open_ext(&repo, dir, 0, NULL);
	if (grc == GIT_ENOTFOUND) {
		rc = err_set(err, SC_EDATA,
		    "%s: not a git repository (or any of the parent "
		    "directories)",
		    dir);
		goto out;
	}
	if (grc < 0) {
		rc = err_set(err, SC_EIO, "%s: cannot open git repository: %s",
		    dir, gitwork_git_msg());
		goto out;
	}
	if (git_repository_is_bare(repo) ||
	    git_repository_workdir(repo) == NULL) {
		rc = err_set(err, SC_EDATA,
		    "%s: bare git repository has no work tree", dir);
		goto out;
	}
	/* reflog entries name storyctl, not whoever runs it */
	if (git_repository_set_ident(repo, GITWORK_NAME, GITWORK_EMAIL) < 0) {
		rc = err_set(err, SC_EIO, "%s: %s", dir, gitwork_git_msg());
		goto out;
	}
	*out = repo;
	repo = NULL;
out:
	if (rc < 0) {
		git_repository_free(repo);
		git_libgit2_shutdown();
	}
	return rc;
}

void
gitwork_close(git_repository *repo)
{
	if (repo == NULL)
		return;
	git_repository_free(repo);
	git_libgit2_shutdown();
}

/*
 * The part of the absolute path abs below root (a directory, with or
 * without a trailing '/'): "" for root itself, NULL when abs is not in
 * root.
 */
const char *
gitwork_strip_root(const char *abs, const char *root)
{
	size_t n = strlen(root);

	while (n > 1 && root[n - 1] == '/')
		n--;
	if (n == 1 && root[0] == '/')
		return abs[0] == '/' ? abs + 1 : NULL;
	if (strncmp(abs, root, n) != 0)
		return NULL;
	if (abs[n] == '\0')
		return abs + n;
	if (abs[n] == '/')
		return abs + n + 1;
	return NULL;
}

/* exclude_dir p relative to workdir, without "./" or '/' in front
 * (real, PATH_MAX bytes, holds p resolved when it has to be); NULL when
 * it is outside the work tree. */
static const char *
exclude_relative(char *real, const char *p, const char *workdir)
{
	const char *c;

	if (p[0] == '/') {
		c = gitwork_strip_root(p, workdir);
		if (c == NULL && realpath(p, real) != NULL)
			c = gitwork_strip_root(real, workdir);
		p = c;
	}
	while (p != NULL) {
		if (p[0] == '.' && p[1] == '/')
			p += 2;
		else if (p[0] == '/')
			p++;
		else
			break;
	}
	return p;
}

/* Whether every '/'-separated part of ex is a name: not empty, "." or
 * "..". */
static bool
exclude_parts_ok(const char *ex)
{
	const char *c, *slash;
	size_t k;

	for (c = ex;; c = slash + 1) {
		slash = strchr(c, '/');
		k = slash != NULL ? (size_t)(slash - c) : strlen(c);
		if (k == 0 || (k == 1 && c[0] == '.') ||
		    (k == 2 && c[0] == '.' && c[1] == '.'))
			return false;
		if (slash == NULL)
			return true;
	}
}

/*
 * Normalise exclude_dir into ex (exlen bytes): relative to workdir, no
 * "./" in front, no '/' at the end; "" when there is nothing to exclude
 * (docs/git-work.md).
 */
int
gitwork_exclude(char *ex, size_t exlen, const char *workdir,
    const char *exclude_dir, struct sc_err *err)
{
	char real[PATH_MAX];
	const char *p;
	size_t n;
	int rc = 0;

	ex[0] = '\0';
	if (exclude_dir == NULL || *exclude_dir == '\0')
		goto out;
	p = exclude_relative(real, exclude_dir, workdir);
	if (p == NULL)
		goto out; /* outside the work tree: nothing to do */
	n = strlen(p);
	while (n > 0 && p[n - 1] == '/')
		n--;
	if (n == 0 || (n == 1 && p[0] == '.')) {
		rc = err_set(err, SC_EDATA,
		    "exclude dir %s: names the whole work tree", exclude_dir);
		goto out;
	}
	if (n >= exlen) {
		rc = err_set(
		    err, SC_EDATA, "exclude dir %s: too long", exclude_dir);
		goto out;
	}
	memcpy(ex, p, n);
	ex[n] = '\0';
	if (!exclude_parts_ok(ex)) {
		ex[0] = '\0';
		rc = err_set(err, SC_EDATA,
		    "exclude dir %s: must not contain empty, '.' or '..' parts",
		    exclude_dir);
	}
out:
	return rc;
}

/* Is the work-tree-relative path (a directory may end in '/') ex itself
 * or below it? */
int
gitwork_excluded(const char *path, const char *ex)
{
	size_t n = strlen(ex);

	return n > 0 && strncmp(path, ex, n) == 0 &&
	    (path[n] == '\0' || path[n] == '/');
}

bool
gitwork_branch_valid(const char *branch)
{
	char *ref = NULL;
	int valid = 0;
	bool ok = false;

	if (branch == NULL || gitlib_init() < 0)
		return false;
	if (asprintf(&ref, "refs/heads/%s", branch) < 0)
		ref = NULL;
	ok = ref != NULL && git_branch_name_is_valid(&valid, branch) == 0 &&
	    valid && git_reference_name_is_valid(&valid, ref) == 0 && valid;
	free(ref);
	git_libgit2_shutdown();
	return ok;
}

/* "refs/heads/<branch>" into ref after checking the name. */
int
gitwork_refname(char *ref, size_t len, const char *branch, struct sc_err *err)
{
	int n;

	if (!gitwork_branch_valid(branch))
		return err_set(err, SC_EDATA,
		    "branch %s: not a valid branch name", branch);
	n = snprintf(ref, len, "refs/heads/%s", branch);
	if (n < 0 || (size_t)n >= len)
		return err_set(
		    err, SC_EDATA, "branch %s: name too long", branch);
	return 0;
}

/* HEAD's commit, or *out = NULL when the branch is unborn. */
int
gitwork_head_commit(
    git_commit **out, git_repository *repo, const char *dir, struct sc_err *err)
{
	git_oid id;
	int grc;

	*out = NULL;
	grc = git_reference_name_to_id(&id, repo, "HEAD");
	if (grc == GIT_ENOTFOUND || grc == GIT_EUNBORNBRANCH)
		return 0;
	if (grc < 0 || git_commit_lookup(out, repo, &id) < 0)
		return err_set(err, SC_EIO, "%s: cannot read HEAD: %s", dir,
		    gitwork_git_msg());
	return 0;
}

/*
 * Does tree hold something at ex, or a non-directory at one of ex's
 * parents (which a checkout would replace by deleting the directory)?
 */
static int
gw_tree_touches(int *out, git_tree *tree, const char *ex, const char *dir,
    struct sc_err *err)
{
	git_tree_entry *e = NULL;
	char buf[PATH_MAX];
	size_t i, n = strlen(ex);
	int grc, rc = 0;

	*out = 0;
	if (tree == NULL || n == 0)
		return 0;
	memcpy(buf, ex, n + 1);
	for (i = 0; i <= n; i++) {
		if (ex[i] != '/' && ex[i] != '\0')
			continue;
		buf[i] = '\0';
		grc = git_tree_entry_bypath(&e, tree, buf);
		buf[i] = ex[i];
		if (grc == GIT_ENOTFOUND)
			break;
		if (grc < 0) {
			rc = err_set(
			    err, SC_EIO, "%s: %s", dir, gitwork_git_msg());
			break;
		}
		if (i == n || git_tree_entry_type(e) != GIT_OBJECT_TREE) {
			*out = 1;
			break;
		}
		git_tree_entry_free(e);
		e = NULL;
	}
	git_tree_entry_free(e);
	return rc;
}

/* Does the index hold ex, something below it, or a file at a parent? */
static int
gw_index_touches(git_index *idx, const char *ex)
{
	char buf[PATH_MAX];
	size_t i, n = strlen(ex), pos;

	if (n == 0 || n + 2 > sizeof(buf))
		return 0;
	memcpy(buf, ex, n + 1);
	for (i = 0; i < n; i++) {
		if (ex[i] != '/')
			continue;
		buf[i] = '\0';
		if (git_index_find(&pos, idx, buf) == 0)
			return 1;
		buf[i] = '/';
	}
	if (git_index_find(&pos, idx, ex) == 0)
		return 1;
	buf[n] = '/';
	buf[n + 1] = '\0';
	return git_index_find_prefix(&pos, idx, buf) == 0;
}

/*
 * Refuse to work when git tracks the excluded directory in the index or
 * one of the trees: staging, resetting or checking out could then change
 * the state dir under the controller's feet.
 */
int
gitwork_check_untracked(git_index *idx, git_tree *const *trees, size_t ntrees,
    const char *ex, const char *dir, struct sc_err *err)
{
	size_t i;
	int touches = 0, rc = 0;

	if (ex[0] == '\0')
		return 0;
	if (idx != NULL)
		touches = gw_index_touches(idx, ex);
	for (i = 0; i < ntrees && !touches && rc == 0; i++)
		rc = gw_tree_touches(&touches, trees[i], ex, dir, err);
	if (rc == 0 && touches)
		rc = err_set(err, SC_EDATA,
		    "%s: %s is tracked by git and storyctl never touches it "
		    "(untrack it with 'git rm -r --cached %s' and list it in "
		    ".gitignore)",
		    dir, ex, ex);
	return rc;
}

/* Status of the work tree against the index and HEAD, untracked
 * directories listed file by file, ignored files left out. */
int
gitwork_status(git_status_list **out, git_repository *repo, const char *dir,
    struct sc_err *err)
{
	git_status_options so;

	*out = NULL;
	if (git_status_options_init(&so, GIT_STATUS_OPTIONS_VERSION) < 0)
		return err_set(
		    err, SC_ESOFTWARE, "%s: %s", dir, gitwork_git_msg());
	so.show = GIT_STATUS_SHOW_INDEX_AND_WORKDIR;
	so.flags = GIT_STATUS_OPT_INCLUDE_UNTRACKED |
	    GIT_STATUS_OPT_RECURSE_UNTRACKED_DIRS;
	if (git_status_list_new(out, repo, &so) < 0)
		return err_set(err, SC_EIO, "%s: cannot read the status: %s",
		    dir, gitwork_git_msg());
	return 0;
}

static const char *
gw_status_path(const git_status_entry *e)
{
	if (e->index_to_workdir != NULL)
		return e->index_to_workdir->new_file.path;
	if (e->head_to_index != NULL)
		return e->head_to_index->new_file.path;
	return "";
}

/* One word for an entry, like the letters of `git status --short`. */
static const char *
gw_status_word(unsigned int s)
{
	if (s & GIT_STATUS_CONFLICTED)
		return "conflicted";
	if (s & GIT_STATUS_INDEX_NEW)
		return "added";
	if (s &
	    (GIT_STATUS_INDEX_MODIFIED | GIT_STATUS_INDEX_DELETED |
		GIT_STATUS_INDEX_RENAMED | GIT_STATUS_INDEX_TYPECHANGE))
		return "staged";
	if (s & GIT_STATUS_WT_NEW)
		return "untracked";
	if (s & GIT_STATUS_WT_DELETED)
		return "deleted";
	return "modified";
}

int
gitwork_is_dirty(int *out_dirty, char *why, size_t whylen, const char *repo_dir,
    const char *exclude_dir, struct sc_err *err)
{
	git_repository *repo = NULL;
	git_status_list *list = NULL;
	const git_status_entry *e;
	const char *path;
	char ex[PATH_MAX];
	size_t i, n, shown = 0, more = 0;
	int rc = 0;

	if (out_dirty != NULL)
		*out_dirty = 0;
	if (why != NULL && whylen > 0)
		why[0] = '\0';
	if (out_dirty == NULL || repo_dir == NULL)
		return err_set(
		    err, SC_ESOFTWARE, "gitwork_is_dirty: bad arguments");
	if ((rc = gitwork_open(&repo, repo_dir, err)) < 0)
		return rc;
	if ((rc = gitwork_exclude(ex, sizeof(ex), git_repository_workdir(repo),
		 exclude_dir, err)) < 0 ||
	    (rc = gitwork_status(&list, repo, repo_dir, err)) < 0)
		goto out;
	n = git_status_list_entrycount(list);
	for (i = 0; i < n; i++) {
		e = git_status_byindex(list, i);
		if (e == NULL || e->status == GIT_STATUS_CURRENT ||
		    (e->status & GIT_STATUS_IGNORED) != 0)
			continue;
		path = gw_status_path(e);
		if (gitwork_excluded(path, ex))
			continue;
		*out_dirty = 1;
		if (shown < GW_WHY_PATHS) {
			gw_append(why, whylen, "%s%s %s", shown > 0 ? ", " : "",
			    gw_status_word(e->status), path);
			shown++;
		} else {
			more++;
		}
	}
	if (more > 0)
		gw_append(why, whylen, " and %zu more", more);
out:
	git_status_list_free(list);
	gitwork_close(repo);
	return rc;
}

int
gitwork_head(char *hex, char *ref, size_t reflen, const char *repo_dir,
    struct sc_err *err)
{
	git_repository *repo = NULL;
	git_reference *head = NULL;
	const char *target;
	git_oid id;
	int rc = 0, grc;

	if (hex != NULL)
		hex[0] = '\0';
	if (ref != NULL && reflen > 0)
		ref[0] = '\0';
	if (hex == NULL || ref == NULL || reflen == 0 || repo_dir == NULL)
		return err_set(
		    err, SC_ESOFTWARE, "gitwork_head: bad arguments");
	if ((rc = gitwork_open(&repo, repo_dir, err)) < 0)
		return rc;
	if (git_reference_lookup(&head, repo, "HEAD") < 0) {
		rc = err_set(err, SC_EIO, "%s: cannot read HEAD: %s", repo_dir,
		    gitwork_git_msg());
		goto out;
	}
	if (git_reference_type(head) == GIT_REFERENCE_SYMBOLIC) {
		target = git_reference_symbolic_target(head);
		if (strlen(target) >= reflen) {
			rc = err_set(err, SC_ESOFTWARE,
			    "%s: branch %s: name longer than %zu bytes",
			    repo_dir, target, reflen - 1);
			goto out;
		}
		memcpy(ref, target, strlen(target) + 1);
	}
	grc = git_reference_name_to_id(&id, repo, "HEAD");
	if (grc == GIT_ENOTFOUND || grc == GIT_EUNBORNBRANCH)
		goto out; /* unborn: no commit yet */
	if (grc < 0) {
		rc = err_set(err, SC_EIO, "%s: cannot resolve HEAD: %s",
		    repo_dir, gitwork_git_msg());
		goto out;
	}
	git_oid_tostr(hex, GITWORK_HEXSZ, &id);
out:
	if (rc < 0)
		ref[0] = '\0';
	git_reference_free(head);
	gitwork_close(repo);
	return rc;
}

/* The commit named by rev (hex, ref or any revision). */
int
gitwork_lookup_commit(git_commit **out, git_repository *repo, const char *rev,
    const char *dir, struct sc_err *err)
{
	git_object *obj = NULL, *peeled = NULL;
	int rc = 0, grc;

	*out = NULL;
	grc = git_revparse_single(&obj, repo, rev);
	if (grc == GIT_ENOTFOUND || grc == GIT_EAMBIGUOUS ||
	    grc == GIT_EINVALIDSPEC) {
		rc = err_set(err, SC_EDATA, "%s: %s: no such commit (%s)", dir,
		    rev, gitwork_git_msg());
		goto out;
	}
	if (grc < 0) {
		rc = err_set(
		    err, SC_EIO, "%s: %s: %s", dir, rev, gitwork_git_msg());
		goto out;
	}
	if (git_object_peel(&peeled, obj, GIT_OBJECT_COMMIT) < 0) {
		rc = err_set(err, SC_EDATA, "%s: %s: not a commit", dir, rev);
		goto out;
	}
	*out = (git_commit *)peeled;
	peeled = NULL;
out:
	git_object_free(peeled);
	git_object_free(obj);
	return rc;
}

int
gitwork_branch_tip(char *hex, int *found, const char *repo_dir,
    const char *branch, struct sc_err *err)
{
	git_repository *repo = NULL;
	char refname[GITWORK_REFMAX];
	git_oid id;
	int rc = 0, grc;

	if (hex != NULL)
		hex[0] = '\0';
	if (found != NULL)
		*found = 0;
	if (hex == NULL || found == NULL || repo_dir == NULL || branch == NULL)
		return err_set(
		    err, SC_ESOFTWARE, "gitwork_branch_tip: bad arguments");
	if ((rc = gitwork_open(&repo, repo_dir, err)) < 0)
		return rc;
	if ((rc = gitwork_refname(refname, sizeof(refname), branch, err)) < 0)
		goto out;
	grc = git_reference_name_to_id(&id, repo, refname);
	if (grc == GIT_ENOTFOUND)
		goto out;
	if (grc < 0) {
		rc = err_set(err, SC_EIO, "%s: branch %s: %s", repo_dir, branch,
		    gitwork_git_msg());
		goto out;
	}
	git_oid_tostr(hex, GITWORK_HEXSZ, &id);
	*found = 1;
out:
	gitwork_close(repo);
	return rc;
}

int
gitwork_clear_stale_lock(int *out_removed, const char *repo_dir,
    const char *branch, int64_t since_ms, struct sc_err *err)
{
	git_repository *repo = NULL;
	char refname[GITWORK_REFMAX], path[PATH_MAX];
	struct stat st;
	int rc = 0;

	if (out_removed != NULL)
		*out_removed = 0;
	if (repo_dir == NULL || branch == NULL)
		return err_set(err, SC_ESOFTWARE,
		    "gitwork_clear_stale_lock: bad arguments");
	if ((rc = gitwork_open(&repo, repo_dir, err)) < 0)
		return rc;
	if ((rc = gitwork_refname(refname, sizeof(refname), branch, err)) < 0)
		goto out;
	if ((size_t)snprintf(path, sizeof(path), "%s%s.lock",
		git_repository_commondir(repo), refname) >= sizeof(path))
		goto out;
	if (stat(path, &st) != 0 || since_ms <= 0 ||
	    (int64_t)st.st_mtim.tv_sec * 1000 + st.st_mtim.tv_nsec / 1000000 >=
		since_ms)
		goto out; /* none, or made since: a live writer's */
	if (unlink(path) != 0 && errno != ENOENT) {
		rc = err_set(err, SC_EIO, "cannot remove the stale lock %s: %s",
		    path, strerror(errno));
		goto out;
	}
	if (out_removed != NULL)
		*out_removed = 1;
out:
	gitwork_close(repo);
	return rc;
}

int
gitwork_clear_worktree_index_lock(
    int *out_removed, const char *worktree, struct sc_err *err)
{
	git_repository *repo = NULL;
	char path[PATH_MAX];
	int rc;

	*out_removed = 0;
	if ((rc = gitwork_open(&repo, worktree, err)) < 0)
		return rc;
	/* a linked worktree's own git dir (.git/worktrees/<name>/): never
	 * the main checkout's index */
	if (!git_repository_is_worktree(repo) ||
	    (size_t)snprintf(path, sizeof(path), "%sindex.lock",
		git_repository_path(repo)) >= sizeof(path))
		goto out;
	if (unlink(path) == 0)
		*out_removed = 1;
	else if (errno != ENOENT)
		rc = err_set(err, SC_EIO, "cannot remove the stale lock %s: %s",
		    path, strerror(errno));
out:
	gitwork_close(repo);
	return rc;
}
