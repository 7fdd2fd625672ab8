/*
 * gitobjects.c - see gitobjects.h and docs/state-branch.md (packing).
 *
 * The order of the steps is what makes this safe against a crash at any
 * point: the objects are first written a second time (into the pack),
 * the pack is made durable, and only then are the loose copies removed.
 * A crash before the deletes leaves every object twice, which git and
 * libgit2 accept; a crash during them leaves some loose files that a
 * later `git gc` or `git prune-packed` removes.
 *
 * libgit2 writes the pack and its index itself (the packbuilder, then
 * its indexer, under temporary names renamed into place), but it
 * fsyncs them only when asked to for the whole process
 * (GIT_OPT_ENABLE_FSYNC_GITDIR, which would sync every loose object and
 * ref too, docs/state-branch.md): the two files and the directory are
 * synced here before anything is deleted.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <git2.h>

#include "state/gitobjects.h"

/* git writes packs and their indexes read-only for everyone (and so
 * does libgit2 by default); other users of a shared repository read
 * them */
#define GO_PACK_MODE 0444

static const char *
go_git_msg(void)
{
	const git_error *e = git_error_last();

	if (e == NULL || e->message == NULL || e->message[0] == '\0')
		return "unknown libgit2 error";
	return e->message;
}

/* fsync a file or directory by name; -1 with errno set on failure. */
static int
go_fsync_path(const char *path, int dir)
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

int
gitobjects_sync_pack(const char *packdir, const char *name, struct sc_err *err)
{
	char pack[PATH_MAX], idx[PATH_MAX];
	const char *what = NULL;

	if ((size_t)snprintf(pack, sizeof(pack), "%s/pack-%s.pack", packdir,
		name) >= sizeof(pack) ||
	    (size_t)snprintf(idx, sizeof(idx), "%s/pack-%s.idx", packdir,
		name) >= sizeof(idx)) {
		errno = ENAMETOOLONG;
		what = packdir;
	} else if (go_fsync_path(pack, 0) < 0)
		what = pack;
	else if (go_fsync_path(idx, 0) < 0)
		what = idx;
	else if (go_fsync_path(packdir, 1) < 0)
		what = packdir;
	if (what == NULL)
		return 0;
	return err_set(err, SC_EIO, "fsync %s: %s", what, strerror(errno));
}

/*
 * Remove each id's loose file.  Every id is in the synced pack by now,
 * so a loose file that cannot be removed only wastes space and `git
 * prune-packed` gets another chance: errors are ignored on purpose,
 * ENOENT (already packed, never loose, or a duplicate id) included.  The
 * xx/ fan-out directories stay, as git keeps them.
 */
static void
go_unlink_loose(const char *objdir, const git_oid *ids, size_t n)
{
	char path[PATH_MAX];
	size_t i;

	for (i = 0; i < n; i++)
		if (gitobjects_loose_path(
			path, sizeof(path), objdir, &ids[i]) == 0)
			(void)unlink(path);
}

int
gitobjects_loose_path(
    char *buf, size_t size, const char *objdir, const git_oid *id)
{
	char hex[GIT_OID_HEXSZ + 1];

	git_oid_tostr(hex, sizeof(hex), id);
	if ((size_t)snprintf(buf, size, "%s/%.2s/%s", objdir, hex, hex + 2) >=
	    size)
		return -1;
	return 0;
}

/* What git_packbuilder_foreach() hands the indexer, gathered into
 * pieces of GO_CHUNK bytes. */
#define GO_CHUNK (64 * 1024)
struct go_feed {
	git_indexer *ix;
	git_indexer_progress *stats;
	size_t len;
	char buf[GO_CHUNK];
};

static int
go_feed_flush(struct go_feed *f)
{
	int rc = 0;

	if (f->len > 0)
		rc = git_indexer_append(f->ix, f->buf, f->len, f->stats);
	f->len = 0;
	return rc;
}

static int
go_feed(void *data, size_t size, void *payload)
{
	struct go_feed *f = payload;

	if (f->len + size > sizeof(f->buf) && go_feed_flush(f) < 0)
		return -1;
	if (size >= sizeof(f->buf))
		return git_indexer_append(f->ix, data, size, f->stats);
	memcpy(f->buf + f->len, data, size);
	f->len += size;
	return 0;
}

/* objdir and packdir (PATH_MAX each) of repo's common git directory;
 * packdir must exist already (gitobjects.h). */
static int
go_pack_dirs(char *objdir, char *packdir, git_repository *repo, size_t n,
    struct sc_err *err)
{
	const char *common, *what = NULL;
	struct stat st;

	/* commondir ends in '/': "/r/.git/" (or the main .git of a worktree) */
	common = git_repository_commondir(repo);
	if (common == NULL ||
	    (size_t)snprintf(objdir, PATH_MAX, "%sobjects", common) >=
		PATH_MAX ||
	    (size_t)snprintf(packdir, PATH_MAX, "%s/pack", objdir) >= PATH_MAX)
		return err_set(err, SC_EIO, "cannot pack %zu objects: %s", n,
		    common == NULL ? "no git directory" : "path too long");
	/* see gitobjects.h: a directory made now would not be read */
	if (stat(packdir, &st) != 0)
		what = strerror(errno);
	else if (!S_ISDIR(st.st_mode))
		what = "not a directory";
	if (what != NULL)
		return err_set(err, SC_EIO, "%s: cannot pack %zu objects: %s",
		    packdir, n, what);
	return 0;
}

/*
 * Write the pack of ids (paths: their paths or NULL) and its index into
 * packdir: *ixp is the committed indexer (its name is the pack's), for
 * the caller to free.  -1 with libgit2's error set.
 */
static int
go_write_pack(git_indexer **ixp, git_repository *repo, const git_oid *ids,
    const char *const *paths, size_t n, const char *packdir)
{
	git_packbuilder *pb = NULL;
	git_indexer_options opts;
	git_indexer_progress stats;
	struct go_feed feed = {0};
	size_t i;
	int rc = -1;

	*ixp = NULL;
	/* One thread: the controller's one thread does the delta search,
	 * which would otherwise compete with the agents it runs.  An id not
	 * in the odb fails here, before any file is written. */
	if (git_packbuilder_new(&pb, repo) < 0)
		goto out;
	git_packbuilder_set_threads(pb, 1);
	for (i = 0; i < n; i++)
		if (git_packbuilder_insert(
			pb, &ids[i], paths != NULL ? paths[i] : NULL) < 0)
			goto out;
	/* The pack goes to libgit2's indexer as the packbuilder writes it,
	 * GO_CHUNK bytes at a time: whole, it is a buffer as large as the
	 * pack (the first commit of a large batch packs megabytes); an
	 * object at a time, the indexer maps and unmaps its file for every
	 * one, a fifth of the packing time.  The indexer writes
	 * pack-<checksum>.pack and its .idx under temporary names renamed
	 * into place, and removes what it wrote if anything fails.  No odb:
	 * the pack is whole, there is no base to look up. */
	if (git_indexer_options_init(&opts, GIT_INDEXER_OPTIONS_VERSION) < 0 ||
	    git_indexer_new(ixp, packdir, GO_PACK_MODE, NULL, &opts) < 0)
		goto out;
	feed.ix = *ixp;
	feed.stats = &stats;
	if (git_packbuilder_foreach(pb, go_feed, &feed) < 0 ||
	    go_feed_flush(&feed) < 0)
		goto out;
	/* The packbuilder's object list and delta window are not needed
	 * once the pack is written: freed before the indexer resolves the
	 * deltas and writes the index, so that they are not resident with
	 * it (docs/performance.md#pack-memory). */
	git_packbuilder_free(pb);
	pb = NULL;
	if (git_indexer_commit(*ixp, &stats) < 0)
		goto out;
	rc = 0;
out:
	git_packbuilder_free(pb);
	return rc;
}

int
gitobjects_pack(git_repository *repo, const git_oid *ids,
    const char *const *paths, size_t n, struct sc_err *err)
{
	git_indexer *ix = NULL;
	git_odb *odb = NULL;
	char objdir[PATH_MAX], packdir[PATH_MAX];
	int rc = 0;

	if (n == 0)
		goto out;
	if (repo == NULL || ids == NULL) {
		rc = err_set(err, SC_ESOFTWARE, "gitobjects_pack: no %s",
		    repo == NULL ? "repository" : "ids");
		goto out;
	}
	if ((rc = go_pack_dirs(objdir, packdir, repo, n, err)) < 0)
		goto out;

	if (go_write_pack(&ix, repo, ids, paths, n, packdir) < 0)
		goto git_fail;
	rc = gitobjects_sync_pack(packdir, git_indexer_name(ix), err);
	if (rc < 0)
		err_prefix(err, "%s: cannot pack %zu objects", packdir, n);
	if (rc < 0)
		goto out;

	go_unlink_loose(objdir, ids, n);
#ifdef __GLIBC__
	/* What the packer, the indexer and the copies freed stays in the
	 * heap, between pages still in use, and would add up pack after
	 * pack: given back here (and the copies dropped before the
	 * indexer), the peak at N=5000 was 0.85 MiB lower
	 * (docs/performance.md#pack-memory). */
	malloc_trim(0);
#endif
	/* the pack backend lists the new pack; the loose backend no longer
	 * finds the objects, so this handle reads them from the pack */
	if (git_repository_odb(&odb, repo) < 0 || git_odb_refresh(odb) < 0)
		goto git_fail;
	goto out;

git_fail:
	rc = err_set(err, SC_EIO, "%s: cannot pack %zu objects: %s", packdir, n,
	    go_git_msg());
out:
	git_odb_free(odb);
	git_indexer_free(ix);
	return rc;
}
