/* test_serve_config.c - the server's kept config
 * (controller/serve/serve_config.c): loaded once while storyctl.json keeps its
 * identity and a batch exists; again when the file changes, when it is
 * too new to trust, and before the first batch (the story list); the
 * request's database handle lent, not closed (docs/api.md#what-a-request-costs). */
#include <fcntl.h>
#include <ftw.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "controller/serve/serve_config.h"
#include "controller/cli/cli.h"
#include "controller/views/view.h"
#include "state/db.h"

struct fx {
	char root[64];
	char json[128];
	char state[128];
	struct cli cli;
	struct serve_config *sc;
};

/* Write storyctl.json naming fallback, its mtime age_s seconds ago. */
static void
write_config(struct fx *f, const char *fallback, int age_s)
{
	struct timespec ts[2];
	FILE *fp = fopen(f->json, "w");

	assert_non_null(fp);
	fprintf(fp,
	    "{\"stories_glob\": \"stories/*.md\", \"agents\": {"
	    "\"primary\": {\"name\": \"p\", \"command\": [\"true\"]},"
	    "\"fallback\": {\"name\": \"%s\", \"command\": [\"true\"]}}}\n",
	    fallback);
	fclose(fp);
	clock_gettime(CLOCK_REALTIME, &ts[0]);
	ts[0].tv_sec -= age_s;
	ts[1] = ts[0];
	assert_int_equal(utimensat(AT_FDCWD, f->json, ts, 0), 0);
}

static void
write_story(struct fx *f, const char *id)
{
	char path[256];
	FILE *fp;

	snprintf(path, sizeof(path), "%s/stories/%s.md", f->root, id);
	fp = fopen(path, "w");
	assert_non_null(fp);
	fprintf(fp, "# Story %s\n\n## Tasks\n\n- [ ] one\n", id);
	fclose(fp);
}

static int
setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	struct sc_err err = {0};
	char dir[160];

	assert_non_null(f);
	snprintf(f->root, sizeof(f->root), "/tmp/sc-serve-config.XXXXXX");
	assert_non_null(mkdtemp(f->root));
	snprintf(f->json, sizeof(f->json), "%s/storyctl.json", f->root);
	snprintf(f->state, sizeof(f->state), "%s/.storyctl", f->root);
	snprintf(dir, sizeof(dir), "%s/stories", f->root);
	assert_int_equal(mkdir(dir, 0700), 0);
	write_story(f, "s1");
	write_story(f, "s2");
	write_config(f, "fb1", 3600);
	f->cli.config_path = f->json;
	assert_int_equal(serve_config_new(&f->sc, &err), 0);
	f->cli.lender = serve_config_lender(f->sc);
	*state = f;
	return 0;
}

static int
rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	return remove(path);
}

static int
teardown(void **state)
{
	struct fx *f = *state;

	serve_config_free(f->sc);
	nftw(f->root, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	free(f);
	return 0;
}

/* A batch in the state database: the views read its stories. */
static void
make_batch(struct fx *f)
{
	struct sc_err err = {0};
	struct db *db = NULL;
	int64_t id;

	assert_int_equal(db_open(&db, f->state, &err), 0);
	assert_int_equal(db_batch_create(db, &id, 1000, &err), 0);
	db_close(db);
}

/* One read view; its fallback agent's name and how many stories. */
static void
view_once(struct fx *f, char *fallback, size_t cap, size_t *nstories)
{
	struct sc_err err = {0};
	struct story_row *rows = NULL;
	struct view v;

	assert_int_equal(
	    view_open(&v, f->cli.config_path, f->cli.lender, false, &err), 0);
	assert_ptr_equal(v.lender, serve_config_lender(f->sc));
	snprintf(fallback, cap, "%s", v.cfg.agents[ROLE_FALLBACK].name);
	assert_int_equal(view_stories(&rows, nstories, &v, NULL, &err), 0);
	free(rows);
	view_close(&v);
}

static void
test_kept_once_a_batch_exists(void **state)
{
	struct fx *f = *state;
	char fb[64];
	size_t n, i;

	make_batch(f);
	for (i = 0; i < 20; i++)
		view_once(f, fb, sizeof(fb), &n);
	/* loaded once for twenty views: no glob per request */
	assert_int_equal(serve_config_loads(f->sc), 1);
	assert_string_equal(fb, "fb1");
	/* a story file added after the batch began: the views read the
	 * batch's stories, the config is not loaded for it */
	write_story(f, "s3");
	view_once(f, fb, sizeof(fb), &n);
	assert_int_equal(serve_config_loads(f->sc), 1);
}

static void
test_config_change_seen(void **state)
{
	struct fx *f = *state;
	char fb[64];
	size_t n;

	make_batch(f);
	view_once(f, fb, sizeof(fb), &n);
	assert_string_equal(fb, "fb1");
	/* the same size and an old time, but written again (another inode
	 * or not, the time differs) */
	write_config(f, "fb2", 1800);
	view_once(f, fb, sizeof(fb), &n);
	assert_string_equal(fb, "fb2");
	assert_int_equal(serve_config_loads(f->sc), 2);
	view_once(f, fb, sizeof(fb), &n);
	assert_int_equal(serve_config_loads(f->sc), 2);
}

static void
test_racy_config_loaded_again(void **state)
{
	struct fx *f = *state;
	char fb[64];
	size_t n;

	make_batch(f);
	/* written just now: a write in the same clock tick would keep its
	 * identity, so it is not trusted yet */
	write_config(f, "fb3", 0);
	view_once(f, fb, sizeof(fb), &n);
	view_once(f, fb, sizeof(fb), &n);
	assert_string_equal(fb, "fb3");
	assert_int_equal(serve_config_loads(f->sc), 2);
}

static void
test_before_first_batch_stories_current(void **state)
{
	struct fx *f = *state;
	char fb[64];
	size_t n;

	view_once(f, fb, sizeof(fb), &n);
	assert_int_equal(n, 2);
	write_story(f, "s3");
	view_once(f, fb, sizeof(fb), &n);
	assert_int_equal(n, 3);
	assert_int_equal(serve_config_loads(f->sc), 2);
}

static void
test_broken_config_not_kept(void **state)
{
	struct fx *f = *state;
	struct sc_err err = {0};
	struct view v;
	char fb[64];
	size_t n;
	FILE *fp;

	make_batch(f);
	view_once(f, fb, sizeof(fb), &n);
	fp = fopen(f->json, "w");
	assert_non_null(fp);
	fprintf(fp, "{\"stories_glob\": \n");
	fclose(fp);
	assert_true(
	    view_open(&v, f->cli.config_path, f->cli.lender, false, &err) < 0);
	view_close(&v);
	assert_true(
	    view_open(&v, f->cli.config_path, f->cli.lender, false, &err) < 0);
	view_close(&v);
	write_config(f, "fb4", 3600);
	view_once(f, fb, sizeof(fb), &n);
	assert_string_equal(fb, "fb4");
}

static void
test_request_handle_lent(void **state)
{
	struct fx *f = *state;
	struct sc_err err = {0};
	struct db *db = NULL;
	struct view v;
	int found = 0;
	struct batch_row b;

	make_batch(f);
	assert_int_equal(db_open_readonly(&db, f->state, &err), 0);
	serve_config_use_db(f->sc, db, f->state);
	assert_int_equal(
	    view_open(&v, f->cli.config_path, f->cli.lender, false, &err), 0);
	assert_ptr_equal(v.db, db);
	assert_true(v.have_batch);
	view_close(&v);
	serve_config_use_db(f->sc, NULL, NULL);
	/* still open: the request closes it */
	assert_int_equal(db_batch_latest(db, &b, &found, &err), 0);
	assert_int_equal(found, 1);
	db_close(db);
	/* a write view loads and opens its own */
	assert_int_equal(
	    view_open(&v, f->cli.config_path, f->cli.lender, true, &err), 0);
	assert_null(v.lender);
	view_close(&v);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(
		test_kept_once_a_batch_exists, setup, teardown),
	    cmocka_unit_test_setup_teardown(
		test_config_change_seen, setup, teardown),
	    cmocka_unit_test_setup_teardown(
		test_racy_config_loaded_again, setup, teardown),
	    cmocka_unit_test_setup_teardown(
		test_before_first_batch_stories_current, setup, teardown),
	    cmocka_unit_test_setup_teardown(
		test_broken_config_not_kept, setup, teardown),
	    cmocka_unit_test_setup_teardown(
		test_request_handle_lent, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
