/*
 * gitevidence.c - an attempt's change in its work tree: snapshots of the
 * tree and the diff between two of them (docs/evidence.md).  See
 * gitevidence.h.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <git2.h>
#include <git2/sys/odb_backend.h>

#include "state/fsutil.h"
#include "state/gitevidence.h"
#include "state/gitwork_int.h"

/*
 * git_index_add_all()/update_all() callback: >0 skips the path.  The
 * excluded dir and nested repositories (the only directories the walk
 * reports, with a trailing '/') stay out, as in a work commit
 * (docs/git-work.md#safety-rules).
 */
static int
ev_stage_cb(const char *path, const char *matched, void *payload)
{
	size_t n = strlen(path);

	(void)matched;
	if (n > 0 && path[n - 1] == '/')
		return 1;
	return gitwork_excluded(path, (const char *)payload) ? 1 : 0;
}

/* `git add -A` into the repository's index in memory only (never
 * written back), then its tree into the object database. */
static int
ev_write_tree(git_oid *tree_id, git_repository *repo, const char *ex,
    const char *dir, struct sc_err *err)
{
	git_index *idx = NULL;
	char star[] = "*";
	char *specs[] = {star};
	git_strarray spec = {specs, 1};
	int rc = 0;

	if (git_repository_index(&idx, repo) < 0 ||
	    git_index_read(idx, 0) < 0 ||
	    git_index_add_all(idx, &spec, GIT_INDEX_ADD_DEFAULT, ev_stage_cb,
		(void *)ex) < 0 ||
	    git_index_update_all(idx, &spec, ev_stage_cb, (void *)ex) < 0 ||
	    git_index_write_tree(tree_id, idx) < 0)
		rc = err_set(err, SC_EIO,
		    "%s: cannot snapshot the work tree: %s", dir,
		    gitwork_git_msg());
	git_index_free(idx);
	return rc;
}

/*
 * Open the repository containing dir with the snapshots' own object
 * database in front: state_dir/evidence-objects, a loose-object store
 * at a priority above the repository's, so that every object a snapshot
 * writes (its trees, the blobs of new and changed files) lands there
 * and never in the repository's .git.  A snapshot is referenced by no
 * ref: in .git, `git gc` would keep its objects loose for two weeks.
 * Reads see both stores.  state_dir NULL or "": the repository's own
 * (docs/evidence.md#how-it-is-measured).
 */
static int
ev_open(git_repository **repo, const char *dir, const char *state_dir,
    struct sc_err *err)
{
	git_odb *odb = NULL;
	git_odb_backend *be = NULL;
	char *path = NULL;
	int rc;

	if ((rc = gitwork_open(repo, dir, err)) < 0 || state_dir == NULL ||
	    state_dir[0] == '\0')
		return rc;
	if ((path = fsutil_path_join(state_dir, GITEVIDENCE_ODB)) == NULL) {
		rc = err_set(err, SC_EOS, "out of memory");
		goto out;
	}
	/* the store itself too: libgit2 makes only its fan-out dirs, and a
	 * write it cannot make there would go on to .git's own store */
	if ((rc = fsutil_mkdir_parents(path, 0700, err)) < 0)
		goto out;
	if (mkdir(path, 0700) < 0 && errno != EEXIST) {
		rc = err_set(err, SC_EIO, "%s: %s", path, strerror(errno));
		goto out;
	}
	if (git_repository_odb(&odb, *repo) < 0 ||
	    git_odb_backend_loose(&be, path, -1, 0, 0700, 0600) < 0 ||
	    git_odb_add_backend(odb, be, 10) < 0) {
		if (be != NULL && odb != NULL)
			be->free(be);
		rc = err_set(err, SC_EIO,
		    "%s: cannot open the snapshots' "
		    "objects: %s",
		    path, gitwork_git_msg());
	}
out:
	git_odb_free(odb);
	free(path);
	if (rc < 0) {
		gitwork_close(*repo);
		*repo = NULL;
	}
	return rc;
}

void
gitevidence_forget(const char *state_dir)
{
	char *path = fsutil_path_join(state_dir, GITEVIDENCE_ODB);

	if (path != NULL)
		fsutil_rm_tree(path);
	free(path);
}

int
gitevidence_snapshot(char *tree_hex, const char *dir, const char *exclude_dir,
    struct sc_err *err)
{
	git_repository *repo = NULL;
	git_oid id;
	char ex[PATH_MAX];
	int rc;

	tree_hex[0] = '\0';
	if ((rc = ev_open(&repo, dir, exclude_dir, err)) < 0)
		return rc;
	if ((rc = gitwork_exclude(ex, sizeof(ex), git_repository_workdir(repo),
		 exclude_dir, err)) == 0 &&
	    (rc = ev_write_tree(&id, repo, ex, dir, err)) == 0)
		git_oid_tostr(tree_hex, GITWORK_HEXSZ, &id);
	gitwork_close(repo);
	return rc;
}

/* One delta into out's totals and, while there is room, its list. */
static int
ev_add_delta(struct gitevidence_diff *out, git_diff *diff, size_t i,
    const char *path, const char *dir, struct sc_err *err)
{
	const git_diff_delta *d = git_diff_get_delta(diff, i);
	static const char codes[] = {[GIT_DELTA_ADDED] = 'A',
	    [GIT_DELTA_DELETED] = 'D',
	    [GIT_DELTA_MODIFIED] = 'M',
	    [GIT_DELTA_RENAMED] = 'R',
	    [GIT_DELTA_COPIED] = 'A',
	    [GIT_DELTA_TYPECHANGE] = 'T'};
	struct gitevidence_file *f = NULL;
	git_patch *patch = NULL;
	size_t adds = 0, dels = 0;
	int rc = 0;

	if (git_patch_from_diff(&patch, diff, i) < 0 ||
	    (patch != NULL &&
		git_patch_line_stats(NULL, &adds, &dels, patch) < 0)) {
		rc = err_set(err, SC_EIO, "%s: cannot diff %s: %s", dir, path,
		    gitwork_git_msg());
		goto out;
	}
	out->files_changed++;
	out->lines_added += (int)adds;
	out->lines_removed += (int)dels;
	if (out->nlisted >= GITEVIDENCE_LIST_MAX)
		goto out;
	f = &out->listed[out->nlisted++];
	snprintf(f->path, sizeof(f->path), "%s", path);
	f->status = (size_t)d->status < sizeof(codes) && codes[d->status]
	    ? codes[d->status]
	    : 'M';
	f->binary = (d->flags & GIT_DIFF_FLAG_BINARY) != 0;
	f->added = (int)adds;
	f->removed = (int)dels;
out:
	git_patch_free(patch);
	return rc;
}

/* The deltas of diff into out, leaving out the excluded file and dir. */
static int
ev_count(struct gitevidence_diff *out, git_diff *diff, const char *ex,
    const char *exfile, const char *dir, struct sc_err *err)
{
	size_t i, n = git_diff_num_deltas(diff);
	const git_diff_delta *d;
	const char *path;
	int rc = 0;

	for (i = 0; rc == 0 && i < n; i++) {
		d = git_diff_get_delta(diff, i);
		path = d->new_file.path != NULL ? d->new_file.path
						: d->old_file.path;
		if ((exfile[0] != '\0' &&
			(strcmp(d->new_file.path, exfile) == 0 ||
			    strcmp(d->old_file.path, exfile) == 0)) ||
		    gitwork_excluded(d->new_file.path, ex) ||
		    gitwork_excluded(d->old_file.path, ex))
			continue;
		rc = ev_add_delta(out, diff, i, path, dir, err);
	}
	return rc;
}

/* The diff of tree a to tree b, renames found as git finds them. */
static int
ev_tree_diff(git_diff **out, git_repository *repo, const git_oid *a,
    const git_oid *b, const char *dir, struct sc_err *err)
{
	git_tree *ta = NULL, *tb = NULL;
	git_diff_find_options fo;
	int rc = 0;

	*out = NULL;
	if (git_tree_lookup(&ta, repo, a) < 0 ||
	    git_tree_lookup(&tb, repo, b) < 0) {
		rc = err_set(err, SC_EIO,
		    "%s: the snapshot of the attempt's start is gone: %s", dir,
		    gitwork_git_msg());
		goto out;
	}
	if (git_diff_find_options_init(&fo, GIT_DIFF_FIND_OPTIONS_VERSION) <
	    0) {
		rc = err_set(
		    err, SC_ESOFTWARE, "%s: %s", dir, gitwork_git_msg());
		goto out;
	}
	fo.flags = GIT_DIFF_FIND_RENAMES;
	if (git_diff_tree_to_tree(out, repo, ta, tb, NULL) < 0 ||
	    git_diff_find_similar(*out, &fo) < 0)
		rc = err_set(err, SC_EIO, "%s: cannot diff the work tree: %s",
		    dir, gitwork_git_msg());
out:
	git_tree_free(ta);
	git_tree_free(tb);
	return rc;
}

int
gitevidence_diff(struct gitevidence_diff *out, const char *dir,
    const char *base_tree_hex, const char *exclude_dir,
    const char *exclude_file, struct sc_err *err)
{
	git_repository *repo = NULL;
	git_diff *diff = NULL;
	git_oid base, now;
	char ex[PATH_MAX], exfile[PATH_MAX];
	int rc;

	memset(out, 0, sizeof(*out));
	if ((rc = ev_open(&repo, dir, exclude_dir, err)) < 0)
		return rc;
	/* the story file is normalised like the state dir: relative to
	 * the work tree, whether given absolute or relative */
	if ((rc = gitwork_exclude(ex, sizeof(ex), git_repository_workdir(repo),
		 exclude_dir, err)) < 0 ||
	    (rc = gitwork_exclude(exfile, sizeof(exfile),
		 git_repository_workdir(repo), exclude_file, err)) < 0)
		goto out;
	if (git_oid_fromstr(&base, base_tree_hex) < 0) {
		rc = err_set(err, SC_ESOFTWARE, "%s: bad snapshot id \"%s\"",
		    dir, base_tree_hex);
		goto out;
	}
	if ((rc = ev_write_tree(&now, repo, ex, dir, err)) < 0 ||
	    (rc = ev_tree_diff(&diff, repo, &base, &now, dir, err)) < 0)
		goto out;
	rc = ev_count(out, diff, ex, exfile, dir, err);
out:
	git_diff_free(diff);
	gitwork_close(repo);
	return rc;
}
