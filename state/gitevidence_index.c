/*
 * gitevidence_index.c - the index an evidence snapshot starts from and
 * how it is brought up to date with the work tree: seeded from the
 * repository's, one diff for a full look, path by path for what a watch
 * saw change (docs/evidence.md#cost).  See gitevidence_int.h.
 */
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <git2.h>
#include <git2/sys/repository.h>

#include "state/fsutil.h"
#include "state/gitevidence.h"
#include "state/gitevidence_int.h"
#include "state/gitwork_int.h"

/*
 * A copy of the repository's index into idx, stat data included, so that
 * the first snapshot of a work tree hashes only what differs from it.
 * An entry the index file could not tell from a later change (its mtime
 * not before the file's: "racily clean", as git calls it) is copied with
 * its size cleared, so that the snapshot looks at its content.
 */
static int
evindex_seed(git_index *idx, git_repository *repo)
{
	git_index *seed = NULL;
	git_index_entry e;
	const git_index_entry *src;
	struct stat st;
	size_t i, n;
	bool have_stamp;
	int rc = 0;

	if (git_repository_index(&seed, repo) < 0 ||
	    git_index_read(seed, 0) < 0) {
		rc = -1;
		goto out;
	}
	have_stamp = git_index_path(seed) != NULL &&
	    stat(git_index_path(seed), &st) == 0;
	n = git_index_entrycount(seed);
	for (i = 0; rc == 0 && i < n; i++) {
		src = git_index_get_byindex(seed, i);
		if (src == NULL || GIT_INDEX_ENTRY_STAGE(src) != 0)
			continue;
		e = *src;
		if (!have_stamp ||
		    (int64_t)e.mtime.seconds > (int64_t)st.st_mtim.tv_sec ||
		    ((int64_t)e.mtime.seconds == (int64_t)st.st_mtim.tv_sec &&
			(long)e.mtime.nanoseconds >= st.st_mtim.tv_nsec))
			e.file_size = 0;
		rc = git_index_add(idx, &e) < 0 ? -1 : 0;
	}
out:
	git_index_free(seed);
	return rc;
}

/*
 * The index a snapshot of repo's work tree starts from, set as repo's
 * index.  With state_dir: the snapshots' own, a file in their store
 * named for the work tree (index-<SHA-1 of its path>), kept from one
 * snapshot to the next and seeded from the repository's index, so that
 * a snapshot hashes only the files changed since the last one, not
 * every file changed since the index file was last written (which grows
 * all night while nobody runs `git add`: docs/evidence.md#cost).
 * Without: the repository's own, in memory.
 */
int
evindex_open(git_index **out, git_repository *repo, const char *state_dir,
    const char *dir, struct sc_err *err)
{
	git_index *idx = NULL;
	git_oid key;
	const char *wd = git_repository_workdir(repo);
	char hex[GIT_OID_HEXSZ + 1], name[sizeof(GITEVIDENCE_ODB) + 64];
	char *path = NULL;
	struct stat st;
	int rc = 0;

	*out = NULL;
	if (state_dir == NULL || state_dir[0] == '\0') {
		if (git_repository_index(&idx, repo) < 0 ||
		    git_index_read(idx, 0) < 0)
			rc = -1;
		goto out;
	}
	if (git_odb_hash(&key, wd, strlen(wd), GIT_OBJECT_BLOB) < 0) {
		rc = -1;
		goto out;
	}
	git_oid_tostr(hex, sizeof(hex), &key);
	snprintf(name, sizeof(name), "%s/index-%s", GITEVIDENCE_ODB, hex);
	if ((path = fsutil_path_join(state_dir, name)) == NULL) {
		rc = err_set(err, SC_EOS, "out of memory");
		goto out;
	}
	if (git_index_open(&idx, path) < 0 ||
	    (lstat(path, &st) < 0 && evindex_seed(idx, repo) < 0) ||
	    git_repository_set_index(repo, idx) < 0)
		rc = -1;
out:
	if (rc == -1)
		rc = err_set(err, SC_EIO, "%s: cannot read the index: %s", dir,
		    gitwork_git_msg());
	if (rc < 0) {
		git_index_free(idx);
		idx = NULL;
	}
	*out = idx;
	free(path);
	return rc;
}

/* Path p (wd + p on disk) into idx as evindex_add_paths() says, or
 * onto dirs when it is a directory.  Returns 0, or what failed. */
static int
evindex_add_path(git_index *idx, git_repository *repo, const char *wd,
    const char *p, struct strlist *dirs)
{
	char path[PATH_MAX];
	struct stat st;
	int ignored, rc;

	if (snprintf(path, sizeof(path), "%s%s", wd, p) >= (int)sizeof(path)) {
		git_error_set_str(GIT_ERROR_OS, "path too long");
		return -1;
	}
	if (lstat(path, &st) < 0) {
		if (errno != ENOENT && errno != ENOTDIR) {
			git_error_set_str(GIT_ERROR_OS, strerror(errno));
			return -1;
		}
		if ((rc = git_index_remove_bypath(idx, p)) == 0)
			rc = git_index_remove_directory(idx, p, 0);
		return rc;
	}
	if (S_ISDIR(st.st_mode))
		return strlist_push(dirs, p);
	if (!S_ISREG(st.st_mode) && !S_ISLNK(st.st_mode))
		return 0; /* a fifo, a socket: not for git */
	/* a new file git ignores stays out, as "git add" leaves it */
	if (git_index_get_bypath(idx, p, 0) == NULL &&
	    ((rc = git_ignore_path_is_ignored(&ignored, repo, p)) != 0 ||
		ignored))
		return rc;
	if ((rc = git_index_remove_directory(idx, p, 0)) == 0)
		rc = git_index_add_bypath(idx, p);
	return rc;
}

/*
 * The paths a watch saw change, into idx: a file or symbolic link still
 * there is added (hashed) unless it is new and ignored; a path gone is
 * removed with everything under it; a directory (created or moved in)
 * goes through gitwork_add_all(), which reads it whole.  Files are done one
 * by one, not through a diff limited to them, which would still read
 * and sort every directory they are in: a story's file among a thousand
 * others cost a thousand directory entries a snapshot
 * (docs/evidence.md#cost).  skip (or NULL): a path left as it was, the
 * story file at an attempt's end, which is never counted and whose
 * blob would be written for nothing.
 */
int
evindex_add_paths(git_index *idx, git_repository *repo, const char *ex,
    const struct strlist *only, const char *skip)
{
	struct strlist dirs = {0};
	const char *wd = git_repository_workdir(repo), *p;
	size_t i;
	int rc = 0;

	for (i = 0; rc == 0 && i < only->n; i++) {
		p = only->items[i];
		if (gitwork_excluded(p, ex) ||
		    (skip != NULL && strcmp(p, skip) == 0))
			continue;
		rc = evindex_add_path(idx, repo, wd, p, &dirs);
	}
	if (rc == 0 && dirs.n > 0)
		rc = gitwork_add_all(idx, repo, ex, &dirs);
	strlist_release(&dirs);
	return rc < 0 ? -1 : 0;
}

/* *out: a new in-memory index of src's entries for the paths in only
 * and everything under them. */
int
evindex_subset(git_index **out, git_index *src, const struct strlist *only)
{
	const git_index_entry *e;
	char pfx[PATH_MAX];
	size_t i, pos, len;
	int rc;

	if ((rc = git_index_new(out)) < 0)
		return -1;
	for (i = 0; rc == 0 && i < only->n; i++) {
		if ((e = git_index_get_bypath(src, only->items[i], 0)) != NULL)
			rc = git_index_add(*out, e);
		len = (size_t)snprintf(pfx, sizeof(pfx), "%s/", only->items[i]);
		if (rc < 0 || len >= sizeof(pfx) ||
		    git_index_find_prefix(&pos, src, pfx) < 0)
			continue;
		for (;
		     rc == 0 && (e = git_index_get_byindex(src, pos)) != NULL &&
		     strncmp(e->path, pfx, len) == 0;
		     pos++)
			if (GIT_INDEX_ENTRY_STAGE(e) == 0)
				rc = git_index_add(*out, e);
	}
	return rc < 0 ? -1 : 0;
}

/* *out: a new in-memory index with idx's entries and no tree cache. */
int
evindex_copy(git_index **out, git_index *idx)
{
	const git_index_entry *e;
	size_t i, n = git_index_entrycount(idx);
	int rc;

	if ((rc = git_index_new(out)) < 0)
		return -1;
	for (i = 0; rc == 0 && i < n; i++)
		if ((e = git_index_get_byindex(idx, i)) != NULL &&
		    GIT_INDEX_ENTRY_STAGE(e) == 0)
			rc = git_index_add(*out, e);
	return rc < 0 ? -1 : 0;
}

/* Whether two indexes hold the same paths with the same contents and
 * modes (then there is nothing to diff). */
bool
evindex_same(git_index *a, git_index *b)
{
	const git_index_entry *x, *y;
	size_t i, n = git_index_entrycount(a);

	if (n != git_index_entrycount(b))
		return false;
	for (i = 0; i < n; i++) {
		x = git_index_get_byindex(a, i);
		y = git_index_get_byindex(b, i);
		if (x == NULL || y == NULL || x->mode != y->mode ||
		    strcmp(x->path, y->path) != 0 ||
		    !git_oid_equal(&x->id, &y->id))
			return false;
	}
	return true;
}
