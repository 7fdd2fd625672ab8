/*
 * gitpack.c - see gitpack.h.
 *
 * The order of the steps is what makes this safe against a crash at any
 * point: the objects are first written a second time (into the pack),
 * the pack is made durable, and only then are the loose copies removed.
 * A crash before the deletes leaves every object twice, which git and
 * libgit2 accept; a crash during them leaves some loose files that a
 * later call or `git prune-packed` removes.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <git2.h>
#include <git2/sys/odb_backend.h>

#include "state/gitpack.h"

/* libgit2's priority for its own pack backend (odb.c) */
#define GITPACK_PACKED_PRIORITY 2

static const char *
gp_git_msg(void)
{
	const git_error *e = git_error_last();

	if (e == NULL || e->message == NULL || e->message[0] == '\0')
		return "unknown libgit2 error";
	return e->message;
}

/* "<a><b>" in a new buffer, or NULL when out of memory. */
static char *
gp_join(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	char *s = malloc(la + lb + 1);

	if (s == NULL)
		return NULL;
	memcpy(s, a, la);
	memcpy(s + la, b, lb + 1);
	return s;
}

/* fsync a file or directory by name; -1 with errno set on failure. */
static int
gp_fsync_path(const char *path, int dir)
{
	int fd, rc, saved;

	fd = open(path, O_RDONLY | O_CLOEXEC | (dir ? O_DIRECTORY : 0));
	if (fd < 0)
		return -1;
	rc = fsync(fd);
	saved = errno;
	close(fd);
	errno = saved;
	return rc;
}

/*
 * Make the pack and its index durable, and their names in packdir.  When
 * packdir was created by this call, objects/ gains an entry too.
 */
static int
gp_sync(const char *packdir, const char *objdir, int made_packdir,
    const char *pack, const char *idx, size_t n, struct sc_err *err)
{
	const char *what = NULL;

	if (gp_fsync_path(pack, 0) < 0)
		what = pack;
	else if (gp_fsync_path(idx, 0) < 0)
		what = idx;
	else if (gp_fsync_path(packdir, 1) < 0)
		what = packdir;
	else if (made_packdir && gp_fsync_path(objdir, 1) < 0)
		what = objdir;
	if (what == NULL)
		return 0;
	return err_set(err, SC_EIO, "%s: cannot pack %zu objects: fsync %s: %s",
	    packdir, n, what, strerror(errno));
}

/*
 * Remove each id's loose file.  Every id is in the synced pack by now,
 * so a loose file that cannot be removed only wastes space and the
 * next call (or `git prune-packed`) gets another chance: errors are
 * ignored on purpose, ENOENT (already packed, never loose, or a
 * duplicate id) included.  The xx/ fan-out directories stay, as git
 * keeps them.
 */
static void
gp_unlink_loose(const char *objdir, const git_oid *ids, size_t n)
{
	char hex[GIT_OID_HEXSZ + 1];
	char *path = NULL;
	size_t i, len = strlen(objdir);

	/* "<objdir>" "xx/" "38 hex" NUL */
	path = malloc(len + GIT_OID_HEXSZ + 2);
	if (path == NULL)
		return;
	memcpy(path, objdir, len);
	for (i = 0; i < n; i++) {
		git_oid_tostr(hex, sizeof(hex), &ids[i]);
		memcpy(path + len, hex, 2);
		path[len + 2] = '/';
		memcpy(path + len + 3, hex + 2, GIT_OID_HEXSZ - 2);
		path[len + 1 + GIT_OID_HEXSZ] = '\0';
		(void)unlink(path);
	}
	free(path);
}

/*
 * The index of the first id that no backend of odb has, or n.  Each
 * backend is asked directly: git_odb_exists() would also answer from
 * libgit2's object cache, which may still hold an object whose loose
 * file is gone, and would rescan the pack directory on every miss.
 */
static size_t
gp_first_missing(git_odb *odb, const git_oid *ids, size_t n)
{
	git_odb_backend *b = NULL;
	size_t i, j, nb = git_odb_num_backends(odb);

	for (i = 0; i < n; i++) {
		for (j = 0; j < nb; j++)
			if (git_odb_get_backend(&b, odb, j) == 0 &&
			    b->exists != NULL && b->exists(b, &ids[i]))
				break;
		if (j == nb)
			return i;
	}
	return n;
}

/*
 * Make sure repo's handle reads ids[0..n) now that their loose files
 * are gone.  A refresh makes libgit2's pack backend pick up the new
 * pack, except when objects/pack did not exist when the handle was
 * opened: libgit2 1.5 then never looks in it (its pack backend keeps
 * no folder), and the handle gets a second pack backend that does.
 */
static int
gp_reload(git_repository *repo, const char *objdir, const git_oid *ids,
    size_t n, const char *packdir, struct sc_err *err)
{
	git_odb *odb = NULL;
	git_odb_backend *b = NULL;
	char hex[GIT_OID_HEXSZ + 1];
	size_t miss;
	int rc = 0;

	if (git_repository_odb(&odb, repo) < 0 || git_odb_refresh(odb) < 0)
		goto git_fail;
	if (gp_first_missing(odb, ids, n) == n)
		goto out;
	if (git_odb_backend_pack(&b, objdir) < 0)
		goto git_fail;
	if (git_odb_add_backend(odb, b, GITPACK_PACKED_PRIORITY) < 0) {
		b->free(b);
		goto git_fail;
	}
	if ((miss = gp_first_missing(odb, ids, n)) < n) {
		git_oid_tostr(hex, sizeof(hex), &ids[miss]);
		rc = err_set(err, SC_EIO,
		    "%s: cannot pack %zu objects: object %s is not readable "
		    "from the new pack",
		    packdir, n, hex);
	}
	goto out;
git_fail:
	rc = err_set(err, SC_EIO, "%s: cannot pack %zu objects: %s", packdir, n,
	    gp_git_msg());
out:
	git_odb_free(odb);
	return rc;
}

int
gitpack_objects(
    git_repository *repo, const git_oid *ids, size_t n, struct sc_err *err)
{
	git_packbuilder *pb = NULL;
	char *objdir = NULL, *packdir = NULL, *prefix = NULL, *stem = NULL;
	char *packfile = NULL, *idxfile = NULL;
	const char *common, *name;
	size_t i;
	int made_packdir = 0, rc = 0;

	if (n == 0)
		goto out;
	if (repo == NULL || ids == NULL) {
		rc = err_set(err, SC_ESOFTWARE, "gitpack_objects: no %s",
		    repo == NULL ? "repository" : "ids");
		goto out;
	}
	/* commondir ends in '/': "/r/.git/" (or the main .git of a worktree) */
	common = git_repository_commondir(repo);
	if (common == NULL || (objdir = gp_join(common, "objects/")) == NULL ||
	    (packdir = gp_join(objdir, "pack")) == NULL) {
		rc = err_set(err, SC_EIO, "cannot pack %zu objects: %s", n,
		    common == NULL ? "no git directory" : "out of memory");
		goto out;
	}
	/* git creates objects/pack at init, but it may have been removed:
	 * libgit2's indexer only creates files in it */
	if (mkdir(packdir, 0777) == 0)
		made_packdir = 1;
	else if (errno != EEXIST) {
		rc = err_set(err, SC_EIO, "%s: cannot pack %zu objects: %s",
		    packdir, n, strerror(errno));
		goto out;
	}

	if (git_packbuilder_new(&pb, repo) < 0)
		goto git_fail;
	/* no threads of libgit2's own in storyctl's process */
	git_packbuilder_set_threads(pb, 1);
	/*
	 * One by one, never insert_tree/insert_commit: those would walk
	 * whole trees already packed.  Newest first, as pack.h advises for
	 * locality (callers give the ids in the order they were written).
	 * A duplicate id is skipped by libgit2; an id not in the odb fails
	 * here, before any file is written.
	 */
	for (i = n; i > 0; i--)
		if (git_packbuilder_insert(pb, &ids[i - 1], NULL) < 0)
			goto git_fail;
	if (git_packbuilder_write(pb, packdir, 0, NULL, NULL) < 0)
		goto git_fail;
	name = git_packbuilder_name(pb);
	if (name == NULL) {
		git_error_set_str(GIT_ERROR_INVALID, "the pack has no name");
		goto git_fail;
	}
	/* "<packdir>/pack-<name>", then ".pack" and ".idx" */
	if ((prefix = gp_join(packdir, "/pack-")) == NULL ||
	    (stem = gp_join(prefix, name)) == NULL ||
	    (packfile = gp_join(stem, ".pack")) == NULL ||
	    (idxfile = gp_join(stem, ".idx")) == NULL) {
		git_error_set_oom();
		goto git_fail;
	}
	rc = gp_sync(packdir, objdir, made_packdir, packfile, idxfile, n, err);
	if (rc < 0)
		goto out;

	gp_unlink_loose(objdir, ids, n);
	rc = gp_reload(repo, objdir, ids, n, packdir, err);
	goto out;

git_fail:
	rc = err_set(err, SC_EIO, "%s: cannot pack %zu objects: %s", packdir, n,
	    gp_git_msg());
out:
	git_packbuilder_free(pb);
	free(idxfile);
	free(packfile);
	free(stem);
	free(prefix);
	free(packdir);
	free(objdir);
	return rc;
}
