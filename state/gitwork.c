/*
 * gitwork.c - see gitwork.h and docs/git-work.md.
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
#include <ftw.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <dirent.h>
#include <unistd.h>

#include <git2.h>

#include "state/gitstate.h"
#include "state/gitwork.h"

#define GW_NAME "storyctl"
#define GW_EMAIL "storyctl@localhost"
#define GW_WHY_PATHS 3 /* dirty paths named in gitwork_is_dirty()'s why */
#define GW_REFMAX 1024 /* "refs/heads/<branch>" */

static const char *
gw_git_msg(void)
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
 * Initialises libgit2; on success gw_close() balances it, on failure
 * nothing is left to undo.
 */
static int
gw_open(git_repository **out, const char *dir, struct sc_err *err)
{
	git_repository *repo = NULL;
	struct stat st;
	int rc = 0, grc;

	*out = NULL;
	if (git_libgit2_init() < 0)
		return err_set(
		    err, SC_EIO, "cannot initialise libgit2: %s", gw_git_msg());
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
		    dir, gw_git_msg());
		goto out;
	}
	if (git_repository_is_bare(repo) ||
	    git_repository_workdir(repo) == NULL) {
		rc = err_set(err, SC_EDATA,
		    "%s: bare git repository has no work tree", dir);
		goto out;
	}
	/* reflog entries name storyctl, not whoever runs it */
	if (git_repository_set_ident(repo, GW_NAME, GW_EMAIL) < 0) {
		rc = err_set(err, SC_EIO, "%s: %s", dir, gw_git_msg());
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

static void
gw_close(git_repository *repo)
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
static const char *
gw_strip_root(const char *abs, const char *root)
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

/*
 * Normalise exclude_dir into ex (exlen bytes): relative to workdir, no
 * "./" in front, no '/' at the end; "" when there is nothing to exclude.
 */
static int
gw_exclude(char *ex, size_t exlen, const char *workdir, const char *exclude_dir,
    struct sc_err *err)
{
	char real[PATH_MAX];
	const char *p = exclude_dir, *c, *slash;
	size_t n, k;

	ex[0] = '\0';
	if (p == NULL || *p == '\0')
		return 0;
	if (p[0] == '/') {
		c = gw_strip_root(p, workdir);
		if (c == NULL && realpath(p, real) != NULL)
			c = gw_strip_root(real, workdir);
		if (c == NULL)
			return 0; /* outside the work tree: nothing to do */
		p = c;
	}
	for (;;) {
		if (p[0] == '.' && p[1] == '/')
			p += 2;
		else if (p[0] == '/')
			p++;
		else
			break;
	}
	n = strlen(p);
	while (n > 0 && p[n - 1] == '/')
		n--;
	if (n == 0 || (n == 1 && p[0] == '.'))
		return err_set(err, SC_EDATA,
		    "exclude dir %s: names the whole work tree", exclude_dir);
	if (n >= exlen)
		return err_set(
		    err, SC_EDATA, "exclude dir %s: too long", exclude_dir);
	memcpy(ex, p, n);
	ex[n] = '\0';
	for (c = ex;; c = slash + 1) {
		slash = strchr(c, '/');
		k = slash != NULL ? (size_t)(slash - c) : strlen(c);
		if (k == 0 || (k == 1 && c[0] == '.') ||
		    (k == 2 && c[0] == '.' && c[1] == '.')) {
			ex[0] = '\0';
			return err_set(err, SC_EDATA,
			    "exclude dir %s: must not contain empty, '.' or "
			    "'..' parts",
			    exclude_dir);
		}
		if (slash == NULL)
			break;
	}
	return 0;
}

/* Is the work-tree-relative path (a directory may end in '/') ex itself
 * or below it? */
static int
gw_excluded(const char *path, const char *ex)
{
	size_t n = strlen(ex);

	return n > 0 && strncmp(path, ex, n) == 0 &&
	    (path[n] == '\0' || path[n] == '/');
}

/* "refs/heads/<branch>" into ref after checking the name. */
static int
gw_refname(char *ref, size_t len, const char *branch, struct sc_err *err)
{
	int valid = 0, n;

	if (git_branch_name_is_valid(&valid, branch) < 0 || !valid)
		return err_set(err, SC_EDATA,
		    "branch %s: not a valid branch name", branch);
	n = snprintf(ref, len, "refs/heads/%s", branch);
	if (n < 0 || (size_t)n >= len)
		return err_set(
		    err, SC_EDATA, "branch %s: name too long", branch);
	if (git_reference_name_is_valid(&valid, ref) < 0 || !valid)
		return err_set(err, SC_EDATA,
		    "branch %s: not a valid branch name", branch);
	return 0;
}

/* HEAD's commit, or *out = NULL when the branch is unborn. */
static int
gw_head_commit(
    git_commit **out, git_repository *repo, const char *dir, struct sc_err *err)
{
	git_oid id;
	int grc;

	*out = NULL;
	grc = git_reference_name_to_id(&id, repo, "HEAD");
	if (grc == GIT_ENOTFOUND || grc == GIT_EUNBORNBRANCH)
		return 0;
	if (grc < 0 || git_commit_lookup(out, repo, &id) < 0)
		return err_set(
		    err, SC_EIO, "%s: cannot read HEAD: %s", dir, gw_git_msg());
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
			rc = err_set(err, SC_EIO, "%s: %s", dir, gw_git_msg());
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
static int
gw_check_untracked(git_index *idx, git_tree *const *trees, size_t ntrees,
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
static int
gw_status(git_status_list **out, git_repository *repo, const char *dir,
    struct sc_err *err)
{
	git_status_options so;

	*out = NULL;
	if (git_status_options_init(&so, GIT_STATUS_OPTIONS_VERSION) < 0)
		return err_set(err, SC_ESOFTWARE, "%s: %s", dir, gw_git_msg());
	so.show = GIT_STATUS_SHOW_INDEX_AND_WORKDIR;
	so.flags = GIT_STATUS_OPT_INCLUDE_UNTRACKED |
	    GIT_STATUS_OPT_RECURSE_UNTRACKED_DIRS;
	if (git_status_list_new(out, repo, &so) < 0)
		return err_set(err, SC_EIO, "%s: cannot read the status: %s",
		    dir, gw_git_msg());
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
	if ((rc = gw_open(&repo, repo_dir, err)) < 0)
		return rc;
	if ((rc = gw_exclude(ex, sizeof(ex), git_repository_workdir(repo),
		 exclude_dir, err)) < 0 ||
	    (rc = gw_status(&list, repo, repo_dir, err)) < 0)
		goto out;
	n = git_status_list_entrycount(list);
	for (i = 0; i < n; i++) {
		e = git_status_byindex(list, i);
		if (e == NULL || e->status == GIT_STATUS_CURRENT ||
		    (e->status & GIT_STATUS_IGNORED) != 0)
			continue;
		path = gw_status_path(e);
		if (gw_excluded(path, ex))
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
	gw_close(repo);
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
	if ((rc = gw_open(&repo, repo_dir, err)) < 0)
		return rc;
	if (git_reference_lookup(&head, repo, "HEAD") < 0) {
		rc = err_set(err, SC_EIO, "%s: cannot read HEAD: %s", repo_dir,
		    gw_git_msg());
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
		    repo_dir, gw_git_msg());
		goto out;
	}
	git_oid_tostr(hex, GITWORK_HEXSZ, &id);
out:
	if (rc < 0)
		ref[0] = '\0';
	git_reference_free(head);
	gw_close(repo);
	return rc;
}

/*
 * git_index_add_all()/update_all() callback: >0 skips the path.  Skip
 * the excluded dir, and nested repositories (the only directories the
 * recursive walk reports, with a trailing '/'): git would add them as
 * bare gitlinks nobody can clone, libgit2 fails on them; they stay
 * untracked and gitwork_is_dirty() reports them.
 */
static int
gw_stage_cb(const char *path, const char *matched, void *payload)
{
	size_t n = strlen(path);

	if (n > 0 && path[n - 1] == '/')
		return 1;
	return gw_excluded(path, (const char *)payload) ? 1 : 0;
}

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
			    dir, gw_git_msg());
			goto out;
		}
		*current = git_reference_type(head) == GIT_REFERENCE_SYMBOLIC &&
		    strcmp(git_reference_symbolic_target(head), refname) == 0;
	}
	if (*current) {
		rc = gw_head_commit(parent, repo, dir, err);
		goto out;
	}
	grc = git_reference_lookup(bref, repo, refname);
	if (grc == GIT_ENOTFOUND) {
		rc = gw_head_commit(parent, repo, dir, err);
		goto out;
	}
	if (grc < 0) {
		rc = err_set(err, SC_EIO, "%s: branch %s: %s", dir, branch,
		    gw_git_msg());
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
				   branch, gw_git_msg())
			     : err_set(err, SC_EDATA,
				   "%s: branch %s: is checked out in another "
				   "work tree",
				   dir, branch);
		goto out;
	}
	if (git_commit_lookup(parent, repo, git_reference_target(*bref)) < 0)
		rc = err_set(err, SC_EIO,
		    "%s: branch %s: cannot read the tip commit: %s", dir,
		    branch, gw_git_msg());
out:
	git_reference_free(head);
	return rc;
}

/* Stage everything like `git add -A`, skipping the excluded dir. */
static int
gw_stage_all(
    git_index *idx, const char *ex, const char *dir, struct sc_err *err)
{
	char star[] = "*";
	char *specs[] = {star};
	git_strarray spec = {specs, 1};

	if (git_index_read(idx, 0) < 0 ||
	    git_index_add_all(idx, &spec, GIT_INDEX_ADD_DEFAULT, gw_stage_cb,
		(void *)ex) < 0 ||
	    git_index_update_all(idx, &spec, gw_stage_cb, (void *)ex) < 0)
		return err_set(err, SC_EIO, "%s: cannot stage changes: %s", dir,
		    gw_git_msg());
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
		return err_set(err, SC_EIO, "%s: %s", dir, gw_git_msg());
	*out = git_tree_entrycount(tree) == 0;
	git_tree_free(tree);
	return 0;
}

int
gitwork_commit_all(int *out_committed, char *out_hex, const char *dir,
    const char *branch, const char *exclude_dir, const char *msg, int64_t now_s,
    struct sc_err *err)
{
	git_repository *repo = NULL;
	git_index *idx = NULL;
	git_reference *bref = NULL, *newref = NULL;
	git_commit *parent = NULL, *head = NULL;
	git_tree *tree = NULL, *trees[2] = {NULL, NULL};
	git_signature *sig = NULL;
	const git_commit *parents[1];
	git_oid tree_id, id, expect;
	char ex[PATH_MAX], refname[GW_REFMAX], rlmsg[256];
	char *cmsg = NULL;
	int rc = 0, grc, current = 0, nothing = 0;

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
	/* libgit2 is initialised before any git_* call, even a name check */
	if ((rc = gw_open(&repo, dir, err)) < 0)
		goto out;
	if ((branch != NULL &&
		(rc = gw_refname(refname, sizeof(refname), branch, err)) < 0) ||
	    (rc = gw_exclude(ex, sizeof(ex), git_repository_workdir(repo),
		 exclude_dir, err)) < 0 ||
	    (rc = gw_commit_target(&current, &bref, &parent, repo, dir, branch,
		 refname, err)) < 0 ||
	    (rc = gw_head_commit(&head, repo, dir, err)) < 0)
		goto out;
	if (git_repository_index(&idx, repo) < 0 ||
	    (head != NULL && git_commit_tree(&trees[0], head) < 0) ||
	    (parent != NULL && git_commit_tree(&trees[1], parent) < 0)) {
		rc = err_set(err, SC_EIO, "%s: %s", dir, gw_git_msg());
		goto out;
	}
	if ((rc = gw_check_untracked(idx, trees, 2, ex, dir, err)) < 0 ||
	    (rc = gw_stage_all(idx, ex, dir, err)) < 0)
		goto out;
	if (git_index_write_tree(&tree_id, idx) < 0) {
		rc = err_set(err, SC_EIO, "%s: cannot write a tree: %s", dir,
		    gw_git_msg());
		goto out;
	}
	if ((rc = gw_nothing_to_commit(
		 &nothing, repo, &tree_id, parent, dir, err)) < 0)
		goto out;
	if (nothing) {
		/* keep the refreshed stat data, as `git add -A` would */
		if (current && git_index_write(idx) < 0)
			rc = err_set(err, SC_EIO,
			    "%s: cannot write the index: %s", dir,
			    gw_git_msg());
		goto out;
	}
	if (git_tree_lookup(&tree, repo, &tree_id) < 0 ||
	    git_signature_new(&sig, GW_NAME, GW_EMAIL, (git_time_t)now_s, 0) <
		0) {
		rc = err_set(err, SC_EIO, "%s: %s", dir, gw_git_msg());
		goto out;
	}
	parents[0] = parent;
	if (current) {
		/* libgit2 moves HEAD only if it still points at parents[0]
		 * and writes git's own "commit: ..." reflog entry */
		if (git_commit_create(&id, repo, "HEAD", sig, sig, NULL, cmsg,
			tree, parent != NULL ? 1 : 0, parents) < 0) {
			rc = err_set(err, SC_EIO, "%s: cannot commit: %s", dir,
			    gw_git_msg());
			goto out;
		}
		/* after the ref moved: a failure here leaves the work
		 * staged against the new commit, i.e. clean */
		if (git_index_write(idx) < 0) {
			rc = err_set(err, SC_EIO,
			    "%s: committed but cannot write the index: %s", dir,
			    gw_git_msg());
			goto out;
		}
	} else {
		if (git_commit_create(&id, repo, NULL, sig, sig, NULL, cmsg,
			tree, parent != NULL ? 1 : 0, parents) < 0) {
			rc = err_set(err, SC_EIO, "%s: branch %s: %s", dir,
			    branch, gw_git_msg());
			goto out;
		}
		snprintf(rlmsg, sizeof(rlmsg), "commit: %.*s",
		    (int)strcspn(cmsg, "\n"), cmsg);
		/* compare-and-swap: the zero id means "must not exist" */
		if (bref != NULL)
			git_oid_cpy(&expect, git_reference_target(bref));
		else
			memset(&expect, 0, sizeof(expect));
		grc = git_reference_create_matching(
		    &newref, repo, refname, &id, 1, &expect, rlmsg);
		if (grc < 0) {
			rc = err_set(err, SC_EIO, "%s: branch %s: %s%s", dir,
			    branch, gw_git_msg(),
			    grc == GIT_EMODIFIED || grc == GIT_EEXISTS
				? " (moved by another writer)"
				: "");
			goto out;
		}
	}
	*out_committed = 1;
	if (out_hex != NULL)
		git_oid_tostr(out_hex, GITWORK_HEXSZ, &id);
out:
	git_signature_free(sig);
	git_tree_free(tree);
	git_tree_free(trees[0]);
	git_tree_free(trees[1]);
	git_commit_free(head);
	git_commit_free(parent);
	git_reference_free(newref);
	git_reference_free(bref);
	git_index_free(idx);
	gw_close(repo); /* NULL when gw_open() was not reached or failed */
	free(cmsg);
	return rc;
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
	if ((rc = gw_status(&list, repo, dir, err)) < 0)
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
		if (gw_excluded(path, ex) || path[0] == '\0' ||
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

/* The commit named by rev (hex, ref or any revision). */
static int
gw_lookup_commit(git_commit **out, git_repository *repo, const char *rev,
    const char *dir, struct sc_err *err)
{
	git_object *obj = NULL, *peeled = NULL;
	int rc = 0, grc;

	*out = NULL;
	grc = git_revparse_single(&obj, repo, rev);
	if (grc == GIT_ENOTFOUND || grc == GIT_EAMBIGUOUS ||
	    grc == GIT_EINVALIDSPEC) {
		rc = err_set(err, SC_EDATA, "%s: %s: no such commit (%s)", dir,
		    rev, gw_git_msg());
		goto out;
	}
	if (grc < 0) {
		rc = err_set(err, SC_EIO, "%s: %s: %s", dir, rev, gw_git_msg());
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
	if ((rc = gw_open(&repo, dir, err)) < 0)
		return rc;
	if ((rc = gw_exclude(ex, sizeof(ex), git_repository_workdir(repo),
		 exclude_dir, err)) < 0 ||
	    (rc = gw_lookup_commit(&target, repo, hex, dir, err)) < 0 ||
	    (rc = gw_head_commit(&head, repo, dir, err)) < 0)
		goto out;
	if (git_repository_index(&idx, repo) < 0 ||
	    git_commit_tree(&trees[0], target) < 0 ||
	    (head != NULL && git_commit_tree(&trees[1], head) < 0)) {
		rc = err_set(err, SC_EIO, "%s: %s", dir, gw_git_msg());
		goto out;
	}
	if ((rc = gw_check_untracked(idx, trees, 2, ex, dir, err)) < 0)
		goto out;
	/* git_reset() forces the checkout for a hard reset; it never
	 * removes untracked or ignored files */
	if (git_reset(repo, (const git_object *)target, GIT_RESET_HARD, NULL) <
	    0) {
		rc = err_set(err, SC_EIO, "%s: cannot reset to %s: %s", dir,
		    hex, gw_git_msg());
		goto out;
	}
	rc = gw_clean(repo, ex, dir, err);
out:
	git_index_free(idx);
	git_tree_free(trees[0]);
	git_tree_free(trees[1]);
	git_commit_free(head);
	git_commit_free(target);
	gw_close(repo);
	return rc;
}

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

static int
gw_rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	return remove(path);
}

/* rm -rf path; quiet: only used to undo what this file created. */
static void
gw_rmtree(const char *path)
{
	nftw(path, gw_rm_one, 16, FTW_DEPTH | FTW_PHYS);
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
	gw_rmtree(admin);
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

/* mkdir -p dirname(path): libgit2 1.5 creates only the last part. */
static int
gw_mkparents(const char *path, struct sc_err *err)
{
	char buf[PATH_MAX];
	char *p;

	if ((size_t)snprintf(buf, sizeof(buf), "%s", path) >= sizeof(buf))
		return err_set(err, SC_EDATA, "%s: path too long", path);
	for (p = buf + 1; *p != '\0'; p++) {
		if (*p != '/' || p[-1] == '/')
			continue;
		*p = '\0';
		if (mkdir(buf, 0777) != 0 && errno != EEXIST)
			return err_set(err, SC_EIO, "%s: cannot create: %s",
			    buf, strerror(errno));
		*p = '/';
	}
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
		    wtpath, gw_git_msg());
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
			    branch, gw_git_msg());
		else if (grc > 0)
			rc = err_set(err, SC_EDATA,
			    "%s: branch %s: is already checked out in another "
			    "work tree",
			    dir, branch);
		goto out;
	}
	if (grc != GIT_ENOTFOUND) {
		rc = err_set(err, SC_EIO, "%s: branch %s: %s", dir, branch,
		    gw_git_msg());
		goto out;
	}
	if ((rc = gw_lookup_commit(&commit, repo, base, dir, err)) < 0) {
		err_prefix(err, "base of branch %s", branch);
		goto out;
	}
	if (git_branch_create(out, repo, branch, commit, 0) < 0) {
		rc = err_set(err, SC_EIO, "%s: cannot create branch %s: %s",
		    dir, branch, gw_git_msg());
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
		    wname, gw_git_msg());
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
		gw_rmtree(admin);
	/* only if empty: a directory someone else made in between stays */
	(void)rmdir(path);
	if (made_branch && bref != NULL)
		(void)git_branch_delete(bref);
}

int
gitwork_worktree_add(const char *repo_dir, const char *name, const char *path,
    const char *branch, const char *base, struct sc_err *err)
{
	git_repository *repo = NULL;
	git_worktree *wt = NULL, *added = NULL;
	git_reference *bref = NULL;
	git_worktree_add_options o;
	char wname[NAME_MAX + 1], refname[GW_REFMAX];
	int rc = 0, made_branch = 0, empty = 0;

	if (repo_dir == NULL || name == NULL || path == NULL ||
	    path[0] == '\0' || branch == NULL)
		return err_set(
		    err, SC_ESOFTWARE, "gitwork_worktree_add: bad arguments");
	if (base == NULL)
		base = "HEAD";
	if ((rc = gitwork_worktree_name(wname, sizeof(wname), name, err)) < 0 ||
	    (rc = gw_open(&repo, repo_dir, err)) < 0)
		return rc;
	if ((rc = gw_refname(refname, sizeof(refname), branch, err)) < 0 ||
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
	if (empty && rmdir(path) != 0)
		rc = err_set(err, SC_EIO, "%s: %s", path, strerror(errno));
	if (rc == 0)
		rc = gw_mkparents(path, err);
	if (rc == 0 &&
	    git_worktree_add_options_init(
		&o, GIT_WORKTREE_ADD_OPTIONS_VERSION) < 0)
		rc = err_set(
		    err, SC_ESOFTWARE, "worktree %s: %s", wname, gw_git_msg());
	if (rc == 0) {
		o.ref = bref;
		if (git_worktree_add(&added, repo, wname, path, &o) < 0)
			rc = err_set(err, SC_EIO,
			    "worktree %s: cannot add at %s on branch %s: %s",
			    wname, path, branch, gw_git_msg());
	}
	if (rc < 0)
		gw_undo_add(repo, wname, path, bref, made_branch);
out:
	git_worktree_free(added);
	git_worktree_free(wt);
	git_reference_free(bref);
	gw_close(repo);
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
	if ((rc = gw_open(&repo, repo_dir, err)) < 0)
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
	gw_close(repo);
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
	const char *wtpath;
	int rc = 0, grc;

	if (repo_dir == NULL || name == NULL)
		return err_set(err, SC_ESOFTWARE,
		    "gitwork_worktree_remove: bad arguments");
	if ((rc = gitwork_worktree_name(wname, sizeof(wname), name, err)) < 0)
		return rc;
	if ((rc = gw_open(&repo, repo_dir, err)) < 0)
		return rc;
	if ((rc = gw_wt_lookup(&wt, repo, wname, err)) < 0 || wt == NULL)
		goto out; /* an error, or already gone */
	wtpath = git_worktree_path(wt);
	grc = git_worktree_is_locked(&reason, wt);
	if (grc != 0) {
		rc = grc < 0
		    ? err_set(
			  err, SC_EIO, "worktree %s: %s", wname, gw_git_msg())
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
	    gw_strip_root(common, wtreal) != NULL) {
		rc = err_set(err, SC_EDATA,
		    "worktree %s: its path %s contains the repository; "
		    "not removing it",
		    wname, wtpath);
		goto out;
	}
	if (git_worktree_prune_options_init(
		&po, GIT_WORKTREE_PRUNE_OPTIONS_VERSION) < 0) {
		rc = err_set(
		    err, SC_ESOFTWARE, "worktree %s: %s", wname, gw_git_msg());
		goto out;
	}
	po.flags = GIT_WORKTREE_PRUNE_VALID | GIT_WORKTREE_PRUNE_WORKING_TREE;
	if (git_worktree_prune(wt, &po) < 0)
		rc =
		    err_set(err, SC_EIO, "worktree %s at %s: cannot remove: %s",
			wname, wtpath != NULL ? wtpath : "?", gw_git_msg());
out:
	git_buf_dispose(&reason);
	git_worktree_free(wt);
	gw_close(repo);
	return rc;
}

int
gitwork_branch_tip(char *hex, int *found, const char *repo_dir,
    const char *branch, struct sc_err *err)
{
	git_repository *repo = NULL;
	char refname[GW_REFMAX];
	git_oid id;
	int rc = 0, grc;

	if (hex != NULL)
		hex[0] = '\0';
	if (found != NULL)
		*found = 0;
	if (hex == NULL || found == NULL || repo_dir == NULL || branch == NULL)
		return err_set(
		    err, SC_ESOFTWARE, "gitwork_branch_tip: bad arguments");
	if ((rc = gw_open(&repo, repo_dir, err)) < 0)
		return rc;
	if ((rc = gw_refname(refname, sizeof(refname), branch, err)) < 0)
		goto out;
	grc = git_reference_name_to_id(&id, repo, refname);
	if (grc == GIT_ENOTFOUND)
		goto out;
	if (grc < 0) {
		rc = err_set(err, SC_EIO, "%s: branch %s: %s", repo_dir, branch,
		    gw_git_msg());
		goto out;
	}
	git_oid_tostr(hex, GITWORK_HEXSZ, &id);
	*found = 1;
out:
	gw_close(repo);
	return rc;
}

int
gitwork_clear_stale_lock(int *out_removed, const char *repo_dir,
    const char *branch, int64_t since_ms, struct sc_err *err)
{
	git_repository *repo = NULL;
	char refname[GW_REFMAX], path[PATH_MAX];
	struct stat st;
	int rc = 0;

	if (out_removed != NULL)
		*out_removed = 0;
	if (repo_dir == NULL || branch == NULL)
		return err_set(err, SC_ESOFTWARE,
		    "gitwork_clear_stale_lock: bad arguments");
	if ((rc = gw_open(&repo, repo_dir, err)) < 0)
		return rc;
	if ((rc = gw_refname(refname, sizeof(refname), branch, err)) < 0)
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
	gw_close(repo);
	return rc;
}
