/*
 * gitodb.c - see gitodb.h and docs/state-branch.md#the-object-database.
 *
 * Why this file exists (a measured need libgit2 cannot meet by itself):
 * libgit2 1.5 writes an object by first "freshening" it, in case it
 * exists already; when it does not (every new object), it refreshes the
 * database, and the pack backend's refresh rescans objects/pack (a
 * stat, an open of multi-pack-index, an opendir and its reads) every
 * time.  A decision writes about nine new objects: at N=1000 those
 * rescans took 165 ms of the controller's CPU, a sixth of all its git
 * work (docs/performance.md).  No option turns them off.
 *
 * So the writer's database holds the very backends libgit2 sets up
 * (git_odb_open(): packs, then loose objects), each behind a wrapper
 * that passes every call through but one: a refresh that follows a
 * freshen is skipped.  A freshen that missed needs no rescan: at worst
 * an object that another process packed a moment ago is written loose
 * once more, which git accepts.  A refresh that follows a read, an
 * exists or a header lookup that missed (every backend is asked before
 * libgit2 refreshes) rescans as before, so a pack that another git
 * process wrote, and the loose objects it replaced, are still found.
 *
 * The wrappers offer no write stream: libgit2 then buffers a stream and
 * hands it to write(), and the stream's freshen comes through here too
 * (the loose backend's own stream would freshen through the database
 * the backends came from, unwrapped).
 */
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <git2.h>
#include <git2/sys/mempack.h>
#include <git2/sys/odb_backend.h>
#include <git2/sys/repository.h>

#include "state/gitodb.h"

/* The database the wrapped backends belong to, and the cache of new
 * objects: alive while a wrapper is. */
struct go_shared {
	git_odb *inner_odb;
	unsigned refs;
	git_odb_backend *cache; /* a mempack, NULL when cap is 0 */
	size_t cached, cap; /* bytes held, and at most */
};

struct go_backend {
	git_odb_backend parent; /* first: libgit2 holds a pointer to it */
	git_odb_backend *inner;
	struct go_shared *sh;
	bool after_freshen; /* the last call was a freshen */
	size_t rescans;
};

static struct go_backend *
go_of(git_odb_backend *be)
{
	return (struct go_backend *)be;
}

/* The inner backend, for a call that reads: a refresh after it counts. */
static git_odb_backend *
go_reading(git_odb_backend *be)
{
	go_of(be)->after_freshen = false;
	return go_of(be)->inner;
}

static int
go_read(void **data, size_t *len, git_object_t *type, git_odb_backend *be,
    const git_oid *id)
{
	git_odb_backend *in = go_reading(be);

	return in->read(data, len, type, in, id);
}

static int
go_read_prefix(git_oid *out, void **data, size_t *len, git_object_t *type,
    git_odb_backend *be, const git_oid *id, size_t n)
{
	git_odb_backend *in = go_reading(be);

	return in->read_prefix(out, data, len, type, in, id, n);
}

static int
go_read_header(
    size_t *len, git_object_t *type, git_odb_backend *be, const git_oid *id)
{
	git_odb_backend *in = go_reading(be);

	return in->read_header(len, type, in, id);
}

static int
go_readstream(git_odb_stream **out, size_t *len, git_object_t *type,
    git_odb_backend *be, const git_oid *id)
{
	git_odb_backend *in = go_reading(be);

	return in->readstream(out, len, type, in, id);
}

static int
go_exists(git_odb_backend *be, const git_oid *id)
{
	git_odb_backend *in = go_reading(be);

	return in->exists(in, id);
}

static int
go_exists_prefix(git_oid *out, git_odb_backend *be, const git_oid *id, size_t n)
{
	git_odb_backend *in = go_reading(be);

	return in->exists_prefix(out, in, id, n);
}

static int
go_freshen(git_odb_backend *be, const git_oid *id)
{
	go_of(be)->after_freshen = true;
	return go_of(be)->inner->freshen(go_of(be)->inner, id);
}

static int
go_refresh(git_odb_backend *be)
{
	struct go_backend *w = go_of(be);

	if (w->after_freshen)
		return 0; /* a new object being written: see the top */
	w->rescans++;
	return w->inner->refresh(w->inner);
}

/*
 * Written loose (durable), and a copy kept in the cache: the next
 * commit reads this commit's trees, the pack that follows reads every
 * new object twice.  A full cache is emptied and starts again with
 * this object, so it always holds the newest copies: every next commit
 * finds its trees, and the pack the last cap bytes of its objects
 * (docs/state-branch.md#the-object-database).
 */
static int
go_write(git_odb_backend *be, const git_oid *id, const void *data, size_t len,
    git_object_t type)
{
	struct go_shared *sh = go_of(be)->sh;
	int rc;

	rc = go_of(be)->inner->write(go_of(be)->inner, id, data, len, type);
	if (rc != 0 || sh->cache == NULL || len > sh->cap)
		return rc;
	if (len > sh->cap - sh->cached) {
		git_mempack_reset(sh->cache);
		sh->cached = 0;
	}
	if (sh->cache->write(sh->cache, id, data, len, type) == 0)
		sh->cached += len;
	return rc;
}

static int
go_foreach(git_odb_backend *be, git_odb_foreach_cb cb, void *payload)
{
	return go_of(be)->inner->foreach (go_of(be)->inner, cb, payload);
}

static int
go_writepack(git_odb_writepack **out, git_odb_backend *be, git_odb *odb,
    git_indexer_progress_cb cb, void *payload)
{
	return go_of(be)->inner->writepack(
	    out, go_of(be)->inner, odb, cb, payload);
}

static int
go_writemidx(git_odb_backend *be)
{
	return go_of(be)->inner->writemidx(go_of(be)->inner);
}

static void
go_shared_put(struct go_shared *sh)
{
	if (sh == NULL || --sh->refs > 0)
		return;
	git_odb_free(sh->inner_odb);
	if (sh->cache != NULL)
		sh->cache->free(sh->cache);
	free(sh);
}

static void
go_free(git_odb_backend *be)
{
	struct go_backend *w = go_of(be);

	go_shared_put(w->sh);
	free(w);
}

/* A wrapper of in offering what in offers (but a write stream; and no
 * write at all when read_only). */
static struct go_backend *
go_wrap(git_odb_backend *in, struct go_shared *sh, bool read_only)
{
	struct go_backend *w = calloc(1, sizeof(*w));

	if (w == NULL ||
	    git_odb_init_backend(&w->parent, GIT_ODB_BACKEND_VERSION) < 0) {
		free(w);
		return NULL;
	}
	w->inner = in;
	w->sh = sh;
	sh->refs++;
	w->parent.read = in->read ? go_read : NULL;
	w->parent.read_prefix = in->read_prefix ? go_read_prefix : NULL;
	w->parent.read_header = in->read_header ? go_read_header : NULL;
	w->parent.readstream = in->readstream ? go_readstream : NULL;
	w->parent.exists = in->exists ? go_exists : NULL;
	w->parent.exists_prefix = in->exists_prefix ? go_exists_prefix : NULL;
	w->parent.freshen = in->freshen ? go_freshen : NULL;
	w->parent.refresh = in->refresh ? go_refresh : NULL;
	w->parent.write = in->write && !read_only ? go_write : NULL;
	w->parent.foreach = in->foreach ? go_foreach : NULL;
	w->parent.writepack = in->writepack ? go_writepack : NULL;
	w->parent.writemidx = in->writemidx ? go_writemidx : NULL;
	w->parent.free = go_free;
	return w;
}

/* Keep libgit2's database: alternates (only libgit2 knows how it sets
 * them up), or loose objects fsynced by the repository's own
 * configuration (which git_odb_open() would not read). */
static bool
go_keep_libgit2s(git_repository *repo, const char *objdir)
{
	char alt[PATH_MAX];
	git_config *cfg = NULL;
	struct stat st;
	int sync = 0;

	if ((size_t)snprintf(alt, sizeof(alt), "%s/info/alternates", objdir) >=
		sizeof(alt) ||
	    stat(alt, &st) == 0)
		return true;
	if (git_repository_config_snapshot(&cfg, repo) == 0 &&
	    git_config_get_bool(&sync, cfg, "core.fsyncObjectFiles") < 0)
		sync = 0;
	git_config_free(cfg);
	git_error_clear();
	return sync != 0;
}

int
gitodb_install(git_repository *repo, size_t cache_bytes, struct sc_err *err)
{
	char objdir[PATH_MAX];
	git_odb *mine = NULL;
	git_odb_backend *in;
	struct go_shared *sh = NULL;
	struct go_backend *w;
	size_t i, n;
	int rc = 0;

	if ((size_t)snprintf(objdir, sizeof(objdir), "%sobjects",
		git_repository_commondir(repo)) >= sizeof(objdir)) {
		rc = err_set(err, SC_EIO, "%s: path too long",
		    git_repository_commondir(repo));
		goto out;
	}
	if (go_keep_libgit2s(repo, objdir))
		goto out;
	if ((sh = calloc(1, sizeof(*sh))) == NULL) {
		rc = err_set(err, SC_EIO, "%s: out of memory", objdir);
		goto out;
	}
	sh->refs = 1; /* this function's */
	sh->cap = cache_bytes;
	if (git_odb_open(&sh->inner_odb, objdir) < 0 || git_odb_new(&mine) < 0)
		goto fail;
	/* in libgit2's order, highest priority first */
	n = git_odb_num_backends(sh->inner_odb);
	for (i = 0; i < n; i++) {
		if (git_odb_get_backend(&in, sh->inner_odb, i) < 0 ||
		    (w = go_wrap(in, sh, false)) == NULL)
			goto fail;
		if (git_odb_add_backend(mine, &w->parent, (int)(n - i)) < 0) {
			go_free(&w->parent);
			goto fail;
		}
	}
	/* the cache is read first; written by go_write() alone */
	if (cache_bytes > 0) {
		if (git_mempack_new(&sh->cache) < 0 ||
		    (w = go_wrap(sh->cache, sh, true)) == NULL)
			goto fail;
		if (git_odb_add_backend(mine, &w->parent, (int)n + 1) < 0) {
			go_free(&w->parent);
			goto fail;
		}
	}
	if (git_repository_set_odb(repo, mine) < 0)
		goto fail;
	goto out;
fail:
	rc = err_set(err, SC_EIO, "%s: cannot set up its object database: %s",
	    objdir,
	    git_error_last() != NULL ? git_error_last()->message : "unknown");
out:
	git_odb_free(mine);
	go_shared_put(sh);
	return rc;
}

/* The sum of what() over repo's wrappers (0 without them). */
static size_t
go_sum(git_repository *repo, size_t (*what)(const struct go_backend *))
{
	git_odb *odb = NULL;
	git_odb_backend *be;
	size_t i, n = 0;

	if (git_repository_odb(&odb, repo) < 0)
		return 0;
	for (i = 0; i < git_odb_num_backends(odb); i++)
		if (git_odb_get_backend(&be, odb, i) == 0 &&
		    be->free == go_free)
			n += what(go_of(be));
	git_odb_free(odb);
	return n;
}

static size_t
go_cached_of(const struct go_backend *w)
{
	return w->inner == w->sh->cache ? w->sh->cached : 0;
}

static size_t
go_drop_of(const struct go_backend *w)
{
	if (w->inner == w->sh->cache && w->sh->cached > 0) {
		git_mempack_reset(w->sh->cache);
		w->sh->cached = 0;
	}
	return 0;
}

static size_t
go_rescans_of(const struct go_backend *w)
{
	return w->rescans;
}

size_t
gitodb_cached(git_repository *repo)
{
	return go_sum(repo, go_cached_of);
}

size_t
gitodb_rescans(git_repository *repo)
{
	return go_sum(repo, go_rescans_of);
}

void
gitodb_drop(git_repository *repo)
{
	(void)go_sum(repo, go_drop_of);
}
