/*
 * test_gitodb.c - the state writer's object database (state/gitodb.c,
 * docs/state-branch.md#the-object-database): writing new objects does
 * not rescan objects/pack, yet a pack another handle wrote afterwards
 * (its loose objects gone) is found, even right after a write; new
 * objects are on disk and in memory up to the cap; repositories with
 * alternates or core.fsyncObjectFiles keep libgit2's database.
 *
 * Each test gets a fresh repository made with libgit2 in a mkdtemp
 * directory, removed afterwards.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <git2.h>

#include "common/err.h"
#include "state/fsutil.h"
#include "state/gitobjects.h"
#include "state/gitodb.h"

struct fx {
	char dir[PATH_MAX];
	char objdir[PATH_MAX];
	git_repository *repo;
};

static int
setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	snprintf(f->dir, sizeof(f->dir), "%s/sc-gitodb-XXXXXX",
	    getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	assert_non_null(mkdtemp(f->dir));
	assert_int_equal(git_repository_init(&f->repo, f->dir, 0), 0);
	snprintf(f->objdir, sizeof(f->objdir), "%s/.git/objects", f->dir);
	*state = f;
	return 0;
}

static int
teardown(void **state)
{
	struct fx *f = *state;

	git_repository_free(f->repo);
	fsutil_rm_tree(f->dir);
	free(f);
	return 0;
}

/* A blob of text "<tag> <i>" through the stream path (as the state
 * writer's blobs go) or straight through git_odb_write(). */
static void
put_blob(git_oid *id, git_repository *repo, const char *tag, int i, int direct)
{
	char text[64];
	git_odb *odb = NULL;
	int n = snprintf(text, sizeof(text), "%s %d\n", tag, i);

	if (!direct) {
		assert_int_equal(
		    git_blob_create_from_buffer(id, repo, text, (size_t)n), 0);
		return;
	}
	assert_int_equal(git_repository_odb(&odb, repo), 0);
	assert_int_equal(
	    git_odb_write(id, odb, text, (size_t)n, GIT_OBJECT_BLOB), 0);
	git_odb_free(odb);
}

static void
loose_path(char *out, size_t size, const struct fx *f, const git_oid *id)
{
	char hex[GIT_OID_HEXSZ + 1];

	git_oid_tostr(hex, sizeof(hex), id);
	snprintf(out, size, "%s/%.2s/%s", f->objdir, hex, hex + 2);
}

static void
assert_blob(git_repository *repo, const git_oid *id, const char *tag, int i)
{
	git_blob *b = NULL;
	char want[64];
	int n = snprintf(want, sizeof(want), "%s %d\n", tag, i);

	assert_int_equal(git_blob_lookup(&b, repo, id), 0);
	assert_int_equal(git_blob_rawsize(b), n);
	assert_memory_equal(git_blob_rawcontent(b), want, (size_t)n);
	git_blob_free(b);
}

/* 60 new objects, by both paths: no rescan; each is loose on disk (as
 * durable as libgit2 makes it) and reads back. */
static void
test_writes_do_not_rescan(void **state)
{
	struct fx *f = *state;
	struct sc_err err = {0};
	git_oid ids[60];
	char path[PATH_MAX];
	struct stat st;
	int i;

	assert_int_equal(gitodb_install(f->repo, 1 << 20, &err), 0);
	for (i = 0; i < 60; i++)
		put_blob(&ids[i], f->repo, "new", i, i % 2);
	assert_int_equal(gitodb_rescans(f->repo), 0);
	for (i = 0; i < 60; i++) {
		loose_path(path, sizeof(path), f, &ids[i]);
		assert_int_equal(stat(path, &st), 0);
		assert_blob(f->repo, &ids[i], "new", i);
	}
	/* writing one again finds it: no new loose file, no rescan */
	put_blob(&ids[0], f->repo, "new", 0, 0);
	assert_int_equal(gitodb_rescans(f->repo), 0);
}

/* Another handle packs an object and removes its loose file after this
 * handle has scanned objects/pack: a read finds it, also right after a
 * write (whose freshen skipped the rescan). */
static void
test_read_miss_rescans(void **state)
{
	struct fx *f = *state;
	struct sc_err err = {0};
	git_repository *other = NULL;
	git_packbuilder *pb = NULL;
	git_odb *odb = NULL;
	git_oid x, y, dummy;
	char path[PATH_MAX], packdir[PATH_MAX];
	size_t before;

	assert_int_equal(gitodb_install(f->repo, 1 << 20, &err), 0);
	/* a miss: this handle scans objects/pack once */
	memset(&dummy, 0x5a, sizeof(dummy));
	assert_int_equal(git_repository_odb(&odb, f->repo), 0);
	assert_false(git_odb_exists(odb, &dummy));
	before = gitodb_rescans(f->repo);
	assert_true(before >= 1);

	assert_int_equal(git_repository_open(&other, f->dir), 0);
	put_blob(&x, other, "packed", 1, 0);
	assert_int_equal(git_packbuilder_new(&pb, other), 0);
	assert_int_equal(git_packbuilder_insert(pb, &x, NULL), 0);
	snprintf(packdir, sizeof(packdir), "%s/pack", f->objdir);
	assert_int_equal(git_packbuilder_write(pb, packdir, 0, NULL, NULL), 0);
	git_packbuilder_free(pb);
	git_repository_free(other);
	loose_path(path, sizeof(path), f, &x);
	assert_int_equal(unlink(path), 0);

	/* the last call before the read is a write's freshen */
	put_blob(&y, f->repo, "new", 1, 1);
	assert_int_equal(gitodb_rescans(f->repo), before);
	assert_blob(f->repo, &x, "packed", 1);
	assert_true(gitodb_rescans(f->repo) > before);
	git_odb_free(odb);
}

/* New objects are kept in memory up to the cap, never beyond it; a full
 * cache starts again, so the newest are the ones kept: the last written
 * reads back without its loose file, the first no longer does. */
static void
test_cache_keeps_newest(void **state)
{
	struct fx *f = *state;
	struct sc_err err = {0};
	git_odb *odb = NULL;
	git_oid ids[40];
	char path[PATH_MAX];
	int i;

	assert_int_equal(gitodb_install(f->repo, 100, &err), 0);
	assert_int_equal(gitodb_cached(f->repo), 0);
	for (i = 0; i < 40; i++)
		put_blob(&ids[i], f->repo, "kept", i, 0);
	assert_true(gitodb_cached(f->repo) > 0);
	assert_true(gitodb_cached(f->repo) <= 100);
	/* the newest: read from memory even when its file is gone */
	loose_path(path, sizeof(path), f, &ids[39]);
	assert_int_equal(unlink(path), 0);
	assert_blob(f->repo, &ids[39], "kept", 39);
	/* the first went when the cache filled: its file was all there was */
	loose_path(path, sizeof(path), f, &ids[0]);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(git_repository_odb(&odb, f->repo), 0);
	assert_false(git_odb_exists(odb, &ids[0]));
	git_odb_free(odb);
	git_error_clear();
}

/* Packing empties the copies (gitobjects_pack() calls gitodb_drop()
 * once the pack is written): the objects read back from the pack, and
 * the copies fill again with what is written next; gitodb_drop() by
 * itself leaves them readable from their files. */
static void
test_pack_drops_copies(void **state)
{
	struct fx *f = *state;
	struct sc_err err = {0};
	git_oid ids[10], more;
	int i;

	assert_int_equal(gitodb_install(f->repo, 1 << 20, &err), 0);
	for (i = 0; i < 10; i++)
		put_blob(&ids[i], f->repo, "packed", i, i % 2);
	assert_true(gitodb_cached(f->repo) > 0);
	assert_int_equal(gitobjects_pack(f->repo, ids, NULL, 10, &err), 0);
	assert_int_equal(gitodb_cached(f->repo), 0);
	for (i = 0; i < 10; i++)
		assert_blob(f->repo, &ids[i], "packed", i);

	put_blob(&more, f->repo, "after", 0, 0);
	assert_true(gitodb_cached(f->repo) > 0);
	gitodb_drop(f->repo);
	assert_int_equal(gitodb_cached(f->repo), 0);
	assert_blob(f->repo, &more, "after", 0);
}

/* With alternates, or with core.fsyncObjectFiles, libgit2's own
 * database stays: nothing cached, no wrapper counting. */
static void
test_keeps_libgit2s(void **state)
{
	struct fx *f = *state;
	struct sc_err err = {0};
	git_config *cfg = NULL;
	char alt[PATH_MAX];
	git_oid id;
	FILE *fp;

	assert_int_equal(git_repository_config(&cfg, f->repo), 0);
	assert_int_equal(
	    git_config_set_bool(cfg, "core.fsyncObjectFiles", 1), 0);
	git_config_free(cfg);
	assert_int_equal(gitodb_install(f->repo, 1 << 20, &err), 0);
	put_blob(&id, f->repo, "plain", 1, 0);
	assert_int_equal(gitodb_cached(f->repo), 0);

	assert_int_equal(git_repository_config(&cfg, f->repo), 0);
	assert_int_equal(
	    git_config_set_bool(cfg, "core.fsyncObjectFiles", 0), 0);
	git_config_free(cfg);
	snprintf(alt, sizeof(alt), "%s/info/alternates", f->objdir);
	fp = fopen(alt, "w");
	assert_non_null(fp);
	fprintf(fp, "%s\n", f->objdir);
	fclose(fp);
	assert_int_equal(gitodb_install(f->repo, 1 << 20, &err), 0);
	put_blob(&id, f->repo, "plain", 2, 0);
	assert_int_equal(gitodb_cached(f->repo), 0);
	assert_blob(f->repo, &id, "plain", 2);

	/* and without either, it is installed */
	assert_int_equal(unlink(alt), 0);
	assert_int_equal(gitodb_install(f->repo, 1 << 20, &err), 0);
	put_blob(&id, f->repo, "plain", 3, 0);
	assert_true(gitodb_cached(f->repo) > 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(
		test_writes_do_not_rescan, setup, teardown),
	    cmocka_unit_test_setup_teardown(
		test_read_miss_rescans, setup, teardown),
	    cmocka_unit_test_setup_teardown(
		test_cache_keeps_newest, setup, teardown),
	    cmocka_unit_test_setup_teardown(
		test_pack_drops_copies, setup, teardown),
	    cmocka_unit_test_setup_teardown(
		test_keeps_libgit2s, setup, teardown),
	};
	int rc;

	git_libgit2_init();
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	git_libgit2_shutdown();
	return rc;
}
