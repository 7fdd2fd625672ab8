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
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <git2.h>
#include <zlib.h>
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

/* The libgit2 failure just seen, as SC_EIO naming the pack dir. */
static int
gp_fail(struct sc_err *err, const char *packdir, size_t n)
{
	return err_set(err, SC_EIO, "%s: cannot pack %zu objects: %s", packdir,
	    n, gp_git_msg());
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
	rc = gp_fail(err, packdir, n);
out:
	git_odb_free(odb);
	return rc;
}

/*
 * SHA-1 (FIPS 180-4), for the checksums that end a pack and its index
 * (git checks both; libgit2 has no public raw hash).  Object ids come
 * from libgit2.
 */
struct gp_sha1 {
	uint32_t h[5];
	uint64_t len;
	unsigned char buf[64];
	size_t used;
};

static uint32_t
gp_rol(uint32_t x, int k)
{
	return (x << k) | (x >> (32 - k));
}

static void
gp_sha1_block(struct gp_sha1 *c, const unsigned char *p)
{
	uint32_t w[80], a, b, d, e, f, k, t, cc;
	int i;

	for (i = 0; i < 16; i++)
		w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 |
		    (uint32_t)p[4 * i + 2] << 8 | (uint32_t)p[4 * i + 3];
	for (; i < 80; i++)
		w[i] = gp_rol(w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16], 1);
	a = c->h[0];
	b = c->h[1];
	cc = c->h[2];
	d = c->h[3];
	e = c->h[4];
	for (i = 0; i < 80; i++) {
		if (i < 20) {
			f = (b & cc) | (~b & d);
			k = 0x5a827999;
		} else if (i < 40) {
			f = b ^ cc ^ d;
			k = 0x6ed9eba1;
		} else if (i < 60) {
			f = (b & cc) | (b & d) | (cc & d);
			k = 0x8f1bbcdc;
		} else {
			f = b ^ cc ^ d;
			k = 0xca62c1d6;
		}
		t = gp_rol(a, 5) + f + e + k + w[i];
		e = d;
		d = cc;
		cc = gp_rol(b, 30);
		b = a;
		a = t;
	}
	c->h[0] += a;
	c->h[1] += b;
	c->h[2] += cc;
	c->h[3] += d;
	c->h[4] += e;
}

static void
gp_sha1_init(struct gp_sha1 *c)
{
	static const uint32_t h0[5] = {
	    0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476, 0xc3d2e1f0};

	memcpy(c->h, h0, sizeof(h0));
	c->len = 0;
	c->used = 0;
}

static void
gp_sha1_update(struct gp_sha1 *c, const void *data, size_t n)
{
	const unsigned char *p = data;
	size_t take;

	c->len += n;
	while (n > 0) {
		take = 64 - c->used < n ? 64 - c->used : n;
		memcpy(c->buf + c->used, p, take);
		c->used += take;
		p += take;
		n -= take;
		if (c->used == 64) {
			gp_sha1_block(c, c->buf);
			c->used = 0;
		}
	}
}

static void
gp_sha1_final(struct gp_sha1 *c, unsigned char out[20])
{
	unsigned char pad[72] = {0x80};
	uint64_t bits = c->len * 8;
	size_t npad = c->used < 56 ? 56 - c->used : 120 - c->used;
	int i;

	for (i = 0; i < 8; i++)
		pad[npad + i] = (unsigned char)(bits >> (56 - 8 * i));
	gp_sha1_update(c, pad, npad + 8);
	for (i = 0; i < 20; i++)
		out[i] = (unsigned char)(c->h[i / 4] >> (24 - 8 * (i % 4)));
}

/* A file written through stdio while its SHA-1 is computed. */
struct gp_out {
	FILE *f;
	struct gp_sha1 sha;
	uint64_t off;
	int failed;
};

static void
gp_put(struct gp_out *o, const void *data, size_t n)
{
	gp_sha1_update(&o->sha, data, n);
	o->off += n;
	if (fwrite(data, 1, n, o->f) != n)
		o->failed = 1;
}

static void
gp_put32(struct gp_out *o, uint32_t v)
{
	unsigned char b[4] = {(unsigned char)(v >> 24),
	    (unsigned char)(v >> 16), (unsigned char)(v >> 8),
	    (unsigned char)v};

	gp_put(o, b, 4);
}

/* Open a new temporary file in dir for o; its name into path. */
static int
gp_open_tmp(struct gp_out *o, char *path, size_t size, const char *dir)
{
	int fd;

	memset(o, 0, sizeof(*o));
	gp_sha1_init(&o->sha);
	snprintf(path, size, "%s/tmp_storyctl_XXXXXX", dir);
	if ((fd = mkstemp(path)) < 0) {
		path[0] = '\0';
		return -1;
	}
	if ((o->f = fdopen(fd, "wb")) == NULL) {
		close(fd);
		return -1;
	}
	return 0;
}

/* Flush, fsync and close o's file; -1 (errno set) if anything failed. */
static int
gp_close(struct gp_out *o)
{
	int rc = o->failed ? -1 : 0, saved = EIO;

	if (o->f == NULL)
		return rc;
	if (rc == 0 && (fflush(o->f) != 0 || fsync(fileno(o->f)) != 0)) {
		saved = errno;
		rc = -1;
	}
	if (fclose(o->f) != 0 && rc == 0) {
		saved = errno;
		rc = -1;
	}
	o->f = NULL;
	if (rc < 0)
		errno = saved;
	return rc;
}

static int
gp_oid_cmp(const void *a, const void *b)
{
	return git_oid_cmp(a, b);
}

/* Write one object of odb as a whole (undeltified) pack entry. */
static int
gp_put_object(struct gp_out *o, uint32_t *crc, git_odb *odb, const git_oid *id,
    unsigned char **z, size_t *zcap)
{
	git_odb_object *obj = NULL;
	unsigned char hdr[16];
	uLongf zlen;
	size_t k, len;
	int rc = -1;

	if (git_odb_read(&obj, odb, id) < 0)
		return -1;
	len = git_odb_object_size(obj);
	/* type and size: 3 + 4 bits, then 7 bits a byte */
	k = 0;
	hdr[k] =
	    (unsigned char)((int)git_odb_object_type(obj) << 4 | (len & 0x0f));
	for (len >>= 4; len > 0; len >>= 7) {
		hdr[k++] |= 0x80;
		hdr[k] = (unsigned char)(len & 0x7f);
	}
	k++;
	len = git_odb_object_size(obj);
	zlen = compressBound((uLong)len);
	if (zlen > *zcap) {
		free(*z);
		if ((*z = malloc(zlen)) == NULL) {
			*zcap = 0;
			git_error_set_oom();
			goto out;
		}
		*zcap = zlen;
	}
	if (compress2(*z, &zlen, git_odb_object_data(obj), (uLong)len,
		Z_BEST_SPEED) != Z_OK) {
		git_error_set_str(GIT_ERROR_ZLIB, "deflate failed");
		goto out;
	}
	*crc = (uint32_t)crc32(crc32(0L, hdr, (uInt)k), *z, (uInt)zlen);
	gp_put(o, hdr, k);
	gp_put(o, *z, zlen);
	rc = 0;
out:
	git_odb_object_free(obj);
	return rc;
}

/*
 * Write ids[0..n) (all in odb) as packdir/pack-<hex>.pack and its
 * version 2 .idx, the way git names them (hex = the pack's checksum):
 * every object whole, deflated at the fastest level, no delta search and
 * no indexer.  git's packer searches for deltas, and libgit2's indexer
 * inflates and hashes every object again and maps the whole pack; here
 * the objects are read one at a time, the index is built from what was
 * written (sorted ids, CRC-32s, offsets), and memory does not grow with
 * the pack.  Both files are written under temporary names, fsynced and
 * renamed, the .idx last (readers find a pack by its .idx).  A later
 * `git gc` may still find deltas.
 */
static int
gp_write_pack(char hex[GIT_OID_HEXSZ + 1], git_odb *odb, const char *packdir,
    const git_oid *ids, size_t n, struct sc_err *err)
{
	struct gp_out o;
	git_oid *sorted = NULL;
	uint64_t *off = NULL;
	uint32_t *crc = NULL, fan[256];
	unsigned char trailer[20], sum[20], *z = NULL, big[8];
	char tpack[4096] = "", tidx[4096] = "", path[4200];
	const char *what = "pack";
	size_t i, k, m = 0, zcap = 0, nbig = 0;
	int rc = 0;

	memset(&o, 0, sizeof(o));
	/* sorted, so a duplicate id is written once, in index order */
	sorted = malloc(n * sizeof(*sorted));
	off = malloc(n * sizeof(*off));
	crc = malloc(n * sizeof(*crc));
	if (sorted == NULL || off == NULL || crc == NULL) {
		git_error_set_oom();
		goto git_fail;
	}
	memcpy(sorted, ids, n * sizeof(*sorted));
	qsort(sorted, n, sizeof(*sorted), gp_oid_cmp);
	for (i = 0; i < n; i++)
		if (m == 0 || !git_oid_equal(&sorted[m - 1], &sorted[i]))
			git_oid_cpy(&sorted[m++], &sorted[i]);

	if (gp_open_tmp(&o, tpack, sizeof(tpack), packdir) < 0)
		goto sys_fail;
	gp_put(&o, "PACK", 4);
	gp_put32(&o, 2);
	gp_put32(&o, (uint32_t)m);
	for (i = 0; i < m; i++) {
		off[i] = o.off;
		if (gp_put_object(&o, &crc[i], odb, &sorted[i], &z, &zcap) < 0)
			goto git_fail;
	}
	gp_sha1_final(&o.sha, trailer);
	if (fwrite(trailer, 1, 20, o.f) != 20)
		o.failed = 1;
	if (gp_close(&o) < 0)
		goto sys_fail;

	what = "index";
	if (gp_open_tmp(&o, tidx, sizeof(tidx), packdir) < 0)
		goto sys_fail;
	gp_put(&o, "\377tOc", 4);
	gp_put32(&o, 2);
	memset(fan, 0, sizeof(fan));
	for (i = 0; i < m; i++)
		fan[sorted[i].id[0]]++;
	for (k = 1; k < 256; k++)
		fan[k] += fan[k - 1];
	for (k = 0; k < 256; k++)
		gp_put32(&o, fan[k]);
	for (i = 0; i < m; i++)
		gp_put(&o, sorted[i].id, GIT_OID_RAWSZ);
	for (i = 0; i < m; i++)
		gp_put32(&o, crc[i]);
	/* offsets past 2 GiB go to a table of 8-byte ones */
	for (i = 0; i < m; i++)
		gp_put32(&o,
		    off[i] < 0x80000000u ? (uint32_t)off[i]
					 : 0x80000000u | (uint32_t)nbig++);
	for (i = 0; i < m; i++) {
		if (off[i] < 0x80000000u)
			continue;
		for (k = 0; k < 8; k++)
			big[k] = (unsigned char)(off[i] >> (56 - 8 * k));
		gp_put(&o, big, 8);
	}
	gp_put(&o, trailer, 20);
	gp_sha1_final(&o.sha, sum);
	if (fwrite(sum, 1, 20, o.f) != 20)
		o.failed = 1;
	if (gp_close(&o) < 0)
		goto sys_fail;

	for (k = 0; k < 20; k++)
		snprintf(hex + 2 * k, 3, "%02x", trailer[k]);
	snprintf(path, sizeof(path), "%s/pack-%s.pack", packdir, hex);
	if (rename(tpack, path) < 0)
		goto sys_fail;
	tpack[0] = '\0';
	what = "index";
	snprintf(path, sizeof(path), "%s/pack-%s.idx", packdir, hex);
	if (rename(tidx, path) < 0)
		goto sys_fail;
	tidx[0] = '\0';
	goto out;
sys_fail:
	rc = err_set(err, SC_EIO,
	    "%s: cannot pack %zu objects: writing the %s: %s", packdir, n, what,
	    strerror(errno));
	goto out;
git_fail:
	rc = gp_fail(err, packdir, n);
out:
	if (o.f != NULL)
		fclose(o.f);
	if (tpack[0] != '\0')
		unlink(tpack);
	if (tidx[0] != '\0')
		unlink(tidx);
	free(z);
	free(crc);
	free(off);
	free(sorted);
	return rc;
}

int
gitpack_objects(
    git_repository *repo, const git_oid *ids, size_t n, struct sc_err *err)
{
	git_odb *odb = NULL;
	char name[GIT_OID_HEXSZ + 1];
	char *objdir = NULL, *packdir = NULL, *prefix = NULL, *stem = NULL;
	char *packfile = NULL, *idxfile = NULL;
	const char *common;
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
	if (git_repository_odb(&odb, repo) < 0)
		goto git_fail;
	/* git creates objects/pack at init, but it may have been removed:
	 * only files are created in it */
	if (mkdir(packdir, 0777) == 0)
		made_packdir = 1;
	else if (errno != EEXIST) {
		rc = err_set(err, SC_EIO, "%s: cannot pack %zu objects: %s",
		    packdir, n, strerror(errno));
		goto out;
	}

	/* an id not in the odb fails here, before any file is written */
	if ((i = gp_first_missing(odb, ids, n)) < n) {
		char hex[GIT_OID_HEXSZ + 1];
		git_oid_tostr(hex, sizeof(hex), &ids[i]);
		rc = err_set(err, SC_EIO,
		    "%s: cannot pack %zu objects: object %s not found", packdir,
		    n, hex);
		goto out;
	}
	rc = gp_write_pack(name, odb, packdir, ids, n, err);
	if (rc < 0)
		goto out;
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
	rc = gp_fail(err, packdir, n);
out:
	git_odb_free(odb);
	free(idxfile);
	free(packfile);
	free(stem);
	free(prefix);
	free(packdir);
	free(objdir);
	return rc;
}
