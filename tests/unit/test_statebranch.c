/*
 * test_statebranch.c - the state branch written from the database
 * (state/statebranch.c, docs/state-branch.md): the files of a batch,
 * the decision-sequence trailer, the catch-up sync, the group commit,
 * and the paged layout of a large batch.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <git2.h>

#include "state/render.h"
#include "state/statebranch.h"

#define BRANCH "storyctl/state"

struct fx {
	char root[64]; /* mkdtemp dir: the repository, removed afterwards */
	char state[128];
	struct db *db;
	struct gitstate *gs;
	struct statebranch sb;
	int64_t batch;
};

static int
rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static int
setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	struct sc_err err = {0};
	git_repository *repo = NULL;

	assert_non_null(f);
	strcpy(f->root, "/tmp/statebranch-test-XXXXXX");
	assert_non_null(mkdtemp(f->root));
	git_libgit2_init();
	assert_int_equal(git_repository_init(&repo, f->root, 0), 0);
	git_repository_free(repo);
	git_libgit2_shutdown();
	snprintf(f->state, sizeof(f->state), "%s/state", f->root);
	assert_int_equal(db_open(&f->db, f->state, &err), 0);
	assert_int_equal(db_batch_create(f->db, &f->batch, 1000, &err), 0);
	assert_int_equal(gitstate_open(&f->gs, f->root, BRANCH, &err), 0);
	statebranch_init(&f->sb, f->db, f->gs);
	*state = f;
	return 0;
}

static int
teardown(void **state)
{
	struct fx *f = *state;

	statebranch_release(&f->sb);
	gitstate_free(f->gs);
	db_close(f->db);
	nftw(f->root, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	free(f);
	return 0;
}

static void
add_story(struct fx *f, struct story_row *s, const char *id, int pos)
{
	struct sc_err err = {0};

	memset(s, 0, sizeof(*s));
	s->batch_id = f->batch;
	snprintf(s->id, sizeof(s->id), "%s", id);
	snprintf(s->file, sizeof(s->file), "docs/stories/%s.md", id);
	s->position = pos;
	s->status = STATUS_PENDING;
	s->counts.tasks_total = 9;
	s->updated_ms = 1000;
	assert_int_equal(db_story_add(f->db, s, &err), 0);
}

static size_t
commits(struct fx *f)
{
	struct sc_err err = {0};
	size_t n = 0;

	assert_int_equal(gitstate_count(f->gs, &n, &err), 0);
	return n;
}

/* The file at path on the branch's tip, malloc'd; NULL when absent. */
static char *
tip_file(struct fx *f, const char *path)
{
	struct sc_err err = {0};
	char *text = NULL;
	int found = 0;

	assert_int_equal(
	    gitstate_read(f->gs, &text, NULL, &found, path, &err), 0);
	return found ? text : NULL;
}

static char *
tip_message(struct fx *f)
{
	struct sc_err err = {0};
	char *msg = NULL;
	int found = 0;

	assert_int_equal(gitstate_tip_message(f->gs, &msg, &found, &err), 0);
	assert_true(found);
	return msg;
}

/* A decision about st: one attempt begun and finished in the database,
 * which bumps its decision counter. */
static void
decide(struct fx *f, struct story_row *st, enum decision d)
{
	struct attempt_row r;
	struct sc_err err = {0};

	memset(&r, 0, sizeof(r));
	r.batch_id = f->batch;
	snprintf(r.story_id, sizeof(r.story_id), "%s", st->id);
	r.attempt = 1;
	r.counted = true;
	snprintf(r.agent, sizeof(r.agent), "claude");
	r.started_ms = 2000;
	r.exit_code = -1;
	r.timeout_factor = 1;
	r.poll_factor = 1;
	assert_int_equal(db_attempt_begin(f->db, &r, &err), 0);
	r.outcome = OUTCOME_SUCCESS;
	r.exit_code = 0;
	r.ended_ms = 3000;
	r.counts.tasks_completed = 9;
	r.counts.tasks_total = 9;
	r.decision = d;
	st->status = STATUS_DONE;
	st->counts.tasks_completed = 9;
	st->attempts = 1;
	assert_int_equal(db_attempt_finish(f->db, &r, st, NULL, NULL, &err), 0);
	attempt_row_release(&r);
}

/* "\nstoryctl-decision: N" for the database's counter now. */
static void
trailer(struct fx *f, char *out, size_t len)
{
	struct sc_err err = {0};
	int64_t seq = -1;

	assert_int_equal(db_decision_seq(f->db, &seq, &err), 0);
	assert_true(seq > 0);
	snprintf(out, len, "\n\nstoryctl-decision: %lld", (long long)seq);
}

static void
test_batch_files_and_trailer(void **state)
{
	struct fx *f = *state;
	struct story_row a, b;
	struct sc_err err = {0};
	char *md, *js, *msg, want[128];

	add_story(f, &a, "1-1", 0);
	add_story(f, &b, "1-2", 1);
	trailer(f, want, sizeof(want));
	assert_int_equal(statebranch_commit_batch(&f->sb, f->batch,
			     "storyctl: batch 1 started", "", 5000, &err),
	    0);
	assert_int_equal(commits(f), 1);
	md = tip_file(f, "progress.md");
	assert_non_null(md);
	assert_non_null(strstr(md, "| story | status | attempts |"));
	assert_non_null(strstr(md, "| 1-1 | pending | 0 | 0/9 |"));
	assert_non_null(strstr(md, "| 1-2 | pending |"));
	js = tip_file(f, "stories/1-2.json");
	assert_non_null(js);
	assert_non_null(strstr(js, "\"id\": \"1-2\""));
	msg = tip_message(f);
	assert_true(strncmp(msg, "storyctl: batch 1 started\n", 26) == 0);
	assert_string_equal(msg + 25, want);
	free(md);
	free(js);
	free(msg);
}

static void
test_sync_only_when_lagging(void **state)
{
	struct fx *f = *state;
	struct story_row a;
	struct sc_err err = {0};
	char *msg, *js, want[128];

	add_story(f, &a, "1-1", 0);
	/* no branch yet and a story in the database: the branch lags */
	assert_int_equal(statebranch_sync(&f->sb, f->batch, 5000, &err), 0);
	assert_int_equal(commits(f), 1);
	/* up to date: nothing to catch up */
	assert_int_equal(statebranch_sync(&f->sb, f->batch, 6000, &err), 0);
	assert_int_equal(commits(f), 1);
	/* a decision the branch never showed (a crash between the writes) */
	decide(f, &a, DECISION_DONE);
	assert_int_equal(statebranch_sync(&f->sb, f->batch, 7000, &err), 0);
	assert_int_equal(commits(f), 2);
	msg = tip_message(f);
	assert_non_null(
	    strstr(msg, "storyctl: sync the state branch with the database"));
	trailer(f, want, sizeof(want));
	assert_non_null(strstr(msg, want));
	js = tip_file(f, "stories/1-1.json");
	assert_non_null(strstr(js, "\"status\": \"done\""));
	assert_non_null(strstr(js, "\"outcome\": \"success\""));
	/* caught up: the next sync writes nothing */
	assert_int_equal(statebranch_sync(&f->sb, f->batch, 8000, &err), 0);
	assert_int_equal(commits(f), 2);
	free(msg);
	free(js);
}

static void
test_deferred_until_flush(void **state)
{
	struct fx *f = *state;
	struct story_row a, b;
	struct sc_err err = {0};
	char *msg, want[128];

	add_story(f, &a, "1-1", 0);
	add_story(f, &b, "1-2", 1);
	assert_int_equal(
	    statebranch_commit_batch(&f->sb, f->batch, "start", "", 5000, &err),
	    0);
	decide(f, &a, DECISION_DONE);
	assert_int_equal(statebranch_defer_story(&f->sb, f->batch, &a,
			     "1-1: attempt 1 done\nall boxes", 6000, &err),
	    0);
	assert_int_equal(commits(f), 1);
	assert_int_equal(statebranch_flush(&f->sb, 7000, &err), 0);
	assert_int_equal(commits(f), 2);
	msg = tip_message(f);
	trailer(f, want, sizeof(want));
	assert_true(strncmp(msg, "1-1: attempt 1 done\n\nall boxes", 30) == 0);
	assert_string_equal(msg + 30, want);
	free(msg);
	/* nothing pending: a second flush commits nothing */
	assert_int_equal(statebranch_flush(&f->sb, 8000, &err), 0);
	assert_int_equal(commits(f), 2);
	/* a story commit flushes the pending one first; 1-1's files are
	 * unchanged since, so its own commit would be empty and is not made */
	decide(f, &b, DECISION_DONE);
	assert_int_equal(statebranch_defer_story(&f->sb, f->batch, &b,
			     "1-2: attempt 1 done\nx", 9000, &err),
	    0);
	assert_int_equal(statebranch_commit_story(&f->sb, f->batch, &a,
			     "1-1: done\nagain", 9000, &err),
	    0);
	assert_int_equal(commits(f), 3);
	msg = tip_message(f);
	assert_true(strncmp(msg, "1-2: attempt 1 done\n\nx\n\n", 24) == 0);
	free(msg);
}

static void
test_large_batch_paged(void **state)
{
	struct fx *f = *state;
	struct story_row s, last;
	struct sc_err err = {0};
	char id[16], *md, *page, *js;
	int i;

	/* 201 stories: past the flat layout's 200, so paged, in pages of
	 * RENDER_PAGE_MIN (50): s200 is the first story of page 5 */
	for (i = 0; i < 201; i++) {
		snprintf(id, sizeof(id), "s%03d", i);
		add_story(f, i == 200 ? &last : &s, id, i);
	}
	assert_int_equal(
	    statebranch_commit_batch(&f->sb, f->batch, "start", "", 5000, &err),
	    0);
	md = tip_file(f, "progress.md");
	assert_non_null(strstr(md, "201 stories"));
	assert_null(strstr(md, "| s000 |"));
	assert_non_null(strstr(md, "5 pages of 50 stories"));
	assert_non_null(strstr(
	    md, "from [progress/0001.md](progress/0001.md) (stories 1-50)"));
	assert_non_null(strstr(
	    md, "to [progress/0005.md](progress/0005.md) (stories 201-201)"));
	/* named, not listed: the summary does not grow with the batch */
	assert_null(strstr(md, "progress/0002.md"));
	assert_null(strstr(md, "progress/0006.md"));
	free(md);
	page = tip_file(f, "progress/0001.md");
	assert_non_null(page);
	assert_non_null(strstr(page, "| s049 |"));
	assert_null(strstr(page, "| s050 |"));
	free(page);
	page = tip_file(f, "progress/0005.md");
	assert_non_null(page);
	assert_non_null(strstr(page, "| s200 |"));
	assert_null(strstr(page, "| s199 |"));
	assert_null(tip_file(f, "stories/s200.json"));
	assert_null(tip_file(f, "stories/0004/s200.json"));
	js = tip_file(f, "stories/0005/s200.json");
	assert_non_null(js);
	free(page);
	free(js);
	js = tip_file(f, "stories/0004/s199.json");
	assert_non_null(js);
	free(js);
	/* a decision rewrites the story's page and JSON */
	decide(f, &last, DECISION_DONE);
	assert_int_equal(statebranch_commit_story(&f->sb, f->batch, &last,
			     "s200: done\n", 6000, &err),
	    0);
	page = tip_file(f, "progress/0005.md");
	assert_non_null(strstr(page, "| s200 | done |"));
	free(page);
}

/* A batch of exactly 200 stories keeps the flat layout: the paging
 * threshold is not the page size (docs/state-branch.md#layout). */
static void
test_flat_up_to_200(void **state)
{
	struct fx *f = *state;
	struct story_row s;
	struct sc_err err = {0};
	char id[16], *md, *js;
	int i;

	for (i = 0; i < 200; i++) {
		snprintf(id, sizeof(id), "s%03d", i);
		add_story(f, &s, id, i);
	}
	assert_int_equal(
	    statebranch_commit_batch(&f->sb, f->batch, "start", "", 5000, &err),
	    0);
	md = tip_file(f, "progress.md");
	assert_non_null(md);
	assert_non_null(strstr(md, "| s000 |"));
	assert_non_null(strstr(md, "| s199 |"));
	assert_null(tip_file(f, "progress/0001.md"));
	js = tip_file(f, "stories/s199.json");
	assert_non_null(js);
	assert_null(tip_file(f, "stories/0001/s000.json"));
	free(md);
	free(js);
	/* a decision about the last story rewrites the whole table */
	decide(f, &s, DECISION_DONE);
	assert_int_equal(statebranch_commit_story(
			     &f->sb, f->batch, &s, "s199: done\n", 6000, &err),
	    0);
	md = tip_file(f, "progress.md");
	assert_non_null(strstr(md, "| s199 | done |"));
	assert_non_null(strstr(md, "| s000 |"));
	free(md);
}

/* Pages grow with the batch: 50 stories while there are at most 200
 * pages, then doubled while the pages are more than four times the
 * stories on one (docs/state-branch.md#layout); a flat batch is one
 * page of RENDER_FLAT_MAX. */
static void
test_page_size(void **state)
{
	static const struct {
		int total, size;
	} t[] = {{0, 200}, {1, 200}, {200, 200}, {201, 50}, {250, 50},
	    {5000, 50}, {10000, 50}, {10001, 100}, {40000, 100}, {40001, 200},
	    {160000, 200}, {160001, 400}, {2147483647, 25600}};
	size_t i;
	char *p;

	(void)state;
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		assert_int_equal(render_page_size(t[i].total), t[i].size);
	/* a story's JSON sits on its page of the batch's page size */
	p = render_story_path("s9999", 9999, 10000);
	assert_string_equal(p, "stories/0200/s9999.json");
	free(p);
	p = render_story_path("s10000", 10000, 10001);
	assert_string_equal(p, "stories/0101/s10000.json");
	free(p);
	p = render_story_path("s100", 100, 10001);
	assert_string_equal(p, "stories/0002/s100.json");
	free(p);
	p = render_story_path("s100", 100, 200);
	assert_string_equal(p, "stories/s100.json");
	free(p);
}

/* The summary and a page of a batch of 10001 stories: pages of 100,
 * and the summary names the first and the last of 101 pages in a few
 * lines, whatever the batch's size (docs/state-branch.md#layout). */
static void
test_pages_grow(void **state)
{
	int counts[STATUS__COUNT] = {0};
	struct story_line line = {0};
	char *md = NULL, *page = NULL;

	(void)state;
	counts[STATUS_DONE] = 10000;
	counts[STATUS_PENDING] = 1;
	assert_int_equal(render_progress_index(&md, counts, 10001, 7), 0);
	assert_non_null(strstr(md, "Batch 7: 10001 stories."));
	assert_non_null(strstr(md, "| done | 10000 |"));
	assert_non_null(strstr(md, "101 pages of 100 stories"));
	assert_non_null(strstr(
	    md, "from [progress/0001.md](progress/0001.md) (stories 1-100)"));
	assert_non_null(strstr(md,
	    "to [progress/0101.md](progress/0101.md) (stories 10001-10001)"));
	assert_null(strstr(md, "progress/0002.md"));
	assert_true(strlen(md) < 1024);
	free(md);
	line.id = "s10000";
	line.status = STATUS_PENDING;
	line.last_agent = "";
	line.reason = "";
	assert_int_equal(render_progress_page(&page, &line, 1, 100, 100, 7), 0);
	assert_non_null(strstr(page, "page 101"));
	assert_non_null(strstr(page, "stories 10001-10001 in run order"));
	assert_non_null(strstr(page, "[stories/0101/](../stories/0101/)"));
	assert_non_null(strstr(page, "| s10000 | pending |"));
	free(page);
}

/* A table row as "| %s | %s | %d | %d/%d | %s | %s | %s | %s |" prints
 * it, its cells cleaned and cut as the page's are: the reference the
 * rows built by hand must equal. */
static void
row_ref(char *out, size_t size, const struct story_line *s)
{
	char reason[600], agent[80], sub[32];
	size_t i;

	snprintf(reason, sizeof(reason), "%s", s->reason);
	snprintf(agent, sizeof(agent), "%s", s->last_agent);
	for (i = 0; reason[i] != '\0'; i++)
		if (strchr("|\n\r", reason[i]) != NULL)
			reason[i] = ' ';
	for (i = 0; agent[i] != '\0'; i++)
		if (strchr("|\n\r", agent[i]) != NULL)
			agent[i] = ' ';
	if (s->counts.subtasks_total > 0)
		snprintf(sub, sizeof(sub), "%d/%d",
		    s->counts.subtasks_completed, s->counts.subtasks_total);
	else
		snprintf(sub, sizeof(sub), "-");
	snprintf(out, size, "| %s | %s | %d | %d/%d | %s | %s | %s | %s |\n",
	    s->id, status_name(s->status), s->attempts,
	    s->counts.tasks_completed, s->counts.tasks_total,
	    agent[0] ? agent : "-",
	    s->last_outcome == OUTCOME_NONE ? "-"
					    : outcome_name(s->last_outcome),
	    reason[0] ? reason : "-", sub);
}

/* Every row of the page is the text of that format, whatever its
 * fields: negative and extreme numbers, pipes and newlines, cells cut
 * at their width, an id past the built row's room, bad enum values. */
static void
test_table_rows_exact(void **state)
{
	static char long_reason[1000], long_id[400];
	struct story_line v[6];
	char *md = NULL, want[8192], row[2048];
	size_t i;

	(void)state;
	memset(long_reason, 'r', sizeof(long_reason) - 1);
	long_reason[5] = '|';
	memset(long_id, 'i', sizeof(long_id) - 1);
	memset(v, 0, sizeof(v));
	for (i = 0; i < 6; i++) {
		v[i].id = "s1";
		v[i].last_agent = "";
		v[i].reason = "";
	}
	v[0].status = STATUS_DONE;
	v[0].attempts = 3;
	v[0].counts.tasks_completed = 9;
	v[0].counts.tasks_total = 9;
	v[0].last_agent = "claude";
	v[0].last_outcome = OUTCOME_SUCCESS;
	v[0].reason = "D1: success\nall | done\r";
	v[0].counts.subtasks_completed = 2;
	v[0].counts.subtasks_total = 4;
	v[1].attempts = -1;
	v[1].counts.tasks_completed = INT32_MIN;
	v[1].counts.tasks_total = INT32_MAX;
	v[1].counts.subtasks_completed = -7;
	v[1].counts.subtasks_total = 1;
	v[2].reason = long_reason;
	v[2].last_agent = long_reason;
	v[2].last_outcome = (enum outcome)99;
	v[3].id = long_id;
	v[3].reason = "long id";
	v[4].status = (enum story_status) - 3;
	v[4].counts.subtasks_total = -1;
	v[5].id = "\xc3\xa9t\xc3\xa9";
	v[5].attempts = 1000000;
	assert_int_equal(render_progress_md(&md, v, 6, 3), 0);
	snprintf(want, sizeof(want),
	    "# storyctl progress\n\nBatch 3.\n\n| story | status | attempts |"
	    " tasks | last agent | last outcome | reason | subtasks |\n"
	    "|---|---|---|---|---|---|---|---|\n");
	for (i = 0; i < 6; i++) {
		row_ref(row, sizeof(row), &v[i]);
		strcat(want, row);
	}
	assert_string_equal(md, want);
	free(md);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(
		test_batch_files_and_trailer, setup, teardown),
	    cmocka_unit_test_setup_teardown(
		test_sync_only_when_lagging, setup, teardown),
	    cmocka_unit_test_setup_teardown(
		test_deferred_until_flush, setup, teardown),
	    cmocka_unit_test_setup_teardown(
		test_large_batch_paged, setup, teardown),
	    cmocka_unit_test_setup_teardown(
		test_flat_up_to_200, setup, teardown),
	    cmocka_unit_test(test_page_size),
	    cmocka_unit_test(test_pages_grow),
	    cmocka_unit_test(test_table_rows_exact),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
