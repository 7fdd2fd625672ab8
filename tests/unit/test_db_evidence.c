/*
 * test_db_evidence.c - the attempt_evidence table (state/db_evidence.c,
 * docs/state.md#attempt-evidence): its migration from the schema before
 * it, a row written and read back field by field, its event, and the
 * JSON show and the state branch print (state/render_evidence.c).
 * Nothing here names a schema number, so renumbering the migration
 * touches no test.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <sqlite3.h>

#include "state/db_evidence.h"
#include "state/render.h"
#include "state/render_evidence.h"

struct fx {
	char root[64];
	char state[128];
	char file[160];
	struct db *db;
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

	assert_non_null(f);
	strcpy(f->root, "/tmp/dbev-test-XXXXXX");
	assert_non_null(mkdtemp(f->root));
	snprintf(f->state, sizeof(f->state), "%s/state", f->root);
	snprintf(f->file, sizeof(f->file), "%s/state.db", f->state);
	assert_int_equal(db_open(&f->db, f->state, &err), 0);
	assert_int_equal(db_batch_create(f->db, &f->batch, 1000, &err), 0);
	*state = f;
	return 0;
}

static int
teardown(void **state)
{
	struct fx *f = *state;

	db_close(f->db);
	nftw(f->root, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	free(f);
	return 0;
}

/* Story s1 of the batch into *s and the database. */
static void
story_s1(struct fx *f, struct story_row *s)
{
	struct sc_err err = {0};

	memset(s, 0, sizeof(*s));
	s->batch_id = f->batch;
	snprintf(s->id, sizeof(s->id), "s1");
	snprintf(s->file, sizeof(s->file), "s1.md");
	s->counts.tasks_total = 2;
	s->updated_ms = 1000;
	assert_int_equal(db_story_add(f->db, s, &err), 0);
}

/* Begin attempt i of story s1 into *r (counted, started at 2000 + i). */
static void
attempt_start(struct fx *f, int i, struct attempt_row *r)
{
	struct sc_err err = {0};

	memset(r, 0, sizeof(*r));
	r->batch_id = f->batch;
	snprintf(r->story_id, sizeof(r->story_id), "s1");
	snprintf(r->agent, sizeof(r->agent), "fake");
	r->attempt = i;
	r->counted = true;
	r->started_ms = 2000 + i;
	r->exit_code = 0;
	assert_int_equal(db_attempt_begin(f->db, r, &err), 0);
	r->outcome = OUTCOME_INCOMPLETE;
	r->error_code = ERRC_NO_EVIDENCE;
	r->ended_ms = 3000 + i;
	r->decision = DECISION_RETRY;
}

/*
 * Story s1 with attempts 1..n ended and decided (an "attempt" event
 * each); their row ids into ids.  ev (NULL: none) holds n evidence rows
 * or NULLs, stored with their decisions; msgs (NULL: none) their events'
 * texts.
 */
static void
attempts(struct fx *f, int n, int64_t *ids, struct evidence_row **ev,
    const char *const *msgs)
{
	struct story_row s;
	struct attempt_row r;
	struct evidence_note note;
	struct sc_err err = {0};
	int i;

	story_s1(f, &s);
	for (i = 1; i <= n; i++) {
		attempt_start(f, i, &r);
		ids[i - 1] = r.id;
		note.row = ev != NULL ? ev[i - 1] : NULL;
		note.event_msg = msgs != NULL ? msgs[i - 1] : NULL;
		if (note.row != NULL)
			ev[i - 1]->attempt_id = r.id;
		assert_int_equal(db_attempt_finish_noted(f->db, &r, NULL,
				     "attempt", "decided", &note, &err),
		    0);
		attempt_row_release(&r);
	}
}

static void
raw_exec(const char *file, const char *sql)
{
	sqlite3 *h = NULL;

	assert_int_equal(sqlite3_open(file, &h), SQLITE_OK);
	assert_int_equal(sqlite3_exec(h, sql, NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(h);
}

/* A database of the schema before: the table comes with the upgrade,
 * the attempts stay, and the error code round-trips. */
static void
test_migration(void **state)
{
	struct fx *f = *state;
	struct sc_err err = {0};
	struct evidence_row *rows = NULL;
	struct attempt_row *a = NULL;
	struct db_info info;
	char sql[128];
	int64_t ids[1];
	size_t n = 0;

	attempts(f, 1, ids, NULL, NULL);
	db_close(f->db);
	f->db = NULL;
	/* 6: the schema before the evidence table (docs/state.md) */
	snprintf(sql, sizeof(sql),
	    "DROP TABLE attempt_evidence; PRAGMA user_version = %d", 6);
	raw_exec(f->file, sql);
	assert_int_equal(db_open(&f->db, f->state, &err), 0);
	assert_int_equal(db_info(f->db, &info, &err), 0);
	assert_int_equal(info.user_version, DB_SCHEMA_VERSION);
	assert_int_equal(
	    db_evidence_for_story(f->db, &rows, &n, f->batch, "s1", &err), 0);
	assert_int_equal(n, 0);
	assert_int_equal(
	    db_attempts_for_story(f->db, &a, &n, f->batch, "s1", &err), 0);
	assert_int_equal(n, 1);
	assert_int_equal(a[0].error_code, ERRC_NO_EVIDENCE);
	attempt_rows_free(a, n);
	assert_int_equal(db_integrity_check(f->db, &err), 0);
}

/* Written, replaced, read back by seq with its event; JSON exact. */
static void
test_put_read_render(void **state)
{
	struct fx *f = *state;
	struct sc_err err = {0};
	struct evidence_row e0, e1, *rows = NULL, *ev_in[2] = {&e0, &e1};
	const char *msgs[2] = {NULL, "attempt 2: 1 box unchecked"};
	struct event_row *ev = NULL;
	struct gitevidence_diff d;
	int64_t ids[2];
	size_t n = 0, nev = 0;
	json_t *j;
	char *text;

	memset(&d, 0, sizeof(d));
	d.nlisted = 1;
	snprintf(d.listed[0].path, sizeof(d.listed[0].path), "src/a.c");
	d.listed[0].status = 'M';
	d.listed[0].added = 3;
	d.listed[0].removed = 1;
	memset(&e1, 0, sizeof(e1));
	e1.measured = true;
	snprintf(e1.base_tree, sizeof(e1.base_tree), "%040d", 7);
	e1.files_changed = 1;
	e1.lines_added = 3;
	e1.lines_removed = 1;
	e1.files = render_evidence_files(&d);
	assert_non_null(e1.files);
	e1.ticked = 2;
	e1.unticked = 1;
	snprintf(e1.first_unticked, sizeof(e1.first_unticked), "write it");
	memset(&e0, 0, sizeof(e0));
	snprintf(e0.not_measured, sizeof(e0.not_measured), "not a repository");
	e0.ticked = 1;
	attempts(f, 2, ids, ev_in, msgs);
	free(e1.files);
	assert_int_equal(
	    db_evidence_for_story(f->db, &rows, &n, f->batch, "s1", &err), 0);
	assert_int_equal(n, 2);
	assert_int_equal(rows[0].seq, 1);
	assert_false(rows[0].measured);
	assert_int_equal(rows[0].files_changed, -1);
	assert_string_equal(rows[0].not_measured, "not a repository");
	assert_int_equal(rows[1].seq, 2);
	assert_true(rows[1].measured);
	assert_int_equal(rows[1].files_changed, 1);
	assert_int_equal(rows[1].lines_added, 3);
	assert_int_equal(rows[1].lines_removed, 1);
	assert_int_equal(rows[1].ticked, 2);
	assert_int_equal(rows[1].unticked, 1);
	assert_string_equal(rows[1].first_unticked, "write it");
	j = render_evidence_json(&rows[1]);
	assert_non_null(j);
	text = json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS);
	assert_string_equal(text,
	    "{\"base_tree\":\"0000000000000000000000000000000000000007\","
	    "\"files\":[{\"added\":3,\"binary\":false,\"path\":\"src/a.c\","
	    "\"removed\":1,\"status\":\"M\"}],\"files_changed\":1,"
	    "\"first_unticked\":\"write it\",\"flags\":[\"unticked\"],"
	    "\"lines_added\":3,\"lines_removed\":1,\"measured\":true,"
	    "\"not_measured\":null,\"ticked\":2,\"unticked\":1}");
	free(text);
	json_decref(j);
	j = render_evidence_json(&rows[0]);
	text = json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS);
	assert_string_equal(text,
	    "{\"base_tree\":null,\"files\":null,\"files_changed\":null,"
	    "\"first_unticked\":null,\"flags\":[],\"lines_added\":null,"
	    "\"lines_removed\":null,\"measured\":false,"
	    "\"not_measured\":\"not a repository\",\"ticked\":1,"
	    "\"unticked\":0}");
	free(text);
	json_decref(j);
	evidence_rows_free(rows, n);
	assert_int_equal(
	    db_events_list(f->db, &ev, &nev, f->batch, 0, &err), 0);
	/* each decision's event, the flagged evidence's just before its own */
	assert_int_equal(nev, 3);
	assert_string_equal(ev[0].kind, "attempt");
	assert_string_equal(ev[1].kind, "evidence");
	assert_string_equal(ev[1].message, "attempt 2: 1 box unchecked");
	assert_int_equal(ev[1].ts_ms, 3002);
	assert_string_equal(ev[2].kind, "attempt");
	event_rows_free(ev, nev);
}

/* Every attempt of the story JSON gets "evidence": its row or null. */
static void
test_story_json(void **state)
{
	struct fx *f = *state;
	struct sc_err err = {0};
	struct evidence_row e, *rows = NULL, *ev_in[2] = {NULL, &e};
	struct attempt_row *a = NULL;
	struct story_row s;
	int64_t ids[2];
	size_t n = 0, na = 0;
	int found = 0;
	json_t *j;

	memset(&e, 0, sizeof(e));
	e.measured = true;
	e.ticked = 1;
	e.ticked_without_change = true;
	attempts(f, 2, ids, ev_in, NULL);
	assert_int_equal(
	    db_evidence_for_story(f->db, &rows, &n, f->batch, "s1", &err), 0);
	assert_int_equal(
	    db_attempts_for_story(f->db, &a, &na, f->batch, "s1", &err), 0);
	assert_int_equal(
	    db_story_get(f->db, &s, &found, f->batch, "s1", &err), 0);
	j = render_story_json(&s, a, na, NULL);
	assert_non_null(j);
	assert_int_equal(render_story_add_evidence(j, rows, n), 0);
	assert_true(json_is_null(json_object_get(
	    json_array_get(json_object_get(j, "attempts"), 0), "evidence")));
	assert_string_equal(
	    json_string_value(json_array_get(
		json_object_get(
		    json_object_get(
			json_array_get(json_object_get(j, "attempts"), 1),
			"evidence"),
		    "flags"),
		0)),
	    "ticked_without_change");
	json_decref(j);
	attempt_rows_free(a, na);
	evidence_rows_free(rows, n);
}

/* An attempt's evidence is stored with its decision, in its
 * transaction: when a write of it fails (here an evidence row naming no
 * attempt), the attempt stays running, with no evidence and no event. */
static void
test_stored_with_decision(void **state)
{
	struct fx *f = *state;
	struct attempt_row r, *a = NULL;
	struct evidence_row e, *rows = NULL;
	struct evidence_note note;
	struct event_row *ev = NULL;
	struct sc_err err = {0};
	int64_t ids[1];
	size_t n = 0, nev = 0;

	attempts(f, 1, ids, NULL, NULL);
	attempt_start(f, 2, &r);
	memset(&e, 0, sizeof(e));
	e.attempt_id = ids[0] + 1000; /* no such attempt */
	e.measured = true;
	e.ticked = 1;
	note.row = &e;
	note.event_msg = "attempt 2: 1 box checked with no other change";
	assert_true(db_attempt_finish_noted(f->db, &r, NULL, "attempt",
			"s1: attempt 2 incomplete -> retry", &note, &err) < 0);
	assert_int_equal(
	    db_attempts_for_story(f->db, &a, &n, f->batch, "s1", &err), 0);
	assert_int_equal(n, 2);
	assert_int_equal(a[1].outcome, OUTCOME_NONE);
	attempt_rows_free(a, n);
	assert_int_equal(
	    db_evidence_for_story(f->db, &rows, &n, f->batch, "s1", &err), 0);
	assert_int_equal(n, 0);
	assert_int_equal(
	    db_events_list(f->db, &ev, &nev, f->batch, 0, &err), 0);
	assert_int_equal(nev, 1); /* attempt 1's decision alone */
	event_rows_free(ev, nev);

	/* the same decision with its own attempt's evidence: all of it */
	e.attempt_id = r.id;
	assert_int_equal(db_attempt_finish_noted(f->db, &r, NULL, "attempt",
			     "s1: attempt 2 incomplete -> retry", &note, &err),
	    0);
	assert_int_equal(
	    db_evidence_for_story(f->db, &rows, &n, f->batch, "s1", &err), 0);
	assert_int_equal(n, 1);
	assert_int_equal(rows[0].seq, 2);
	evidence_rows_free(rows, n);
	assert_int_equal(
	    db_events_list(f->db, &ev, &nev, f->batch, 0, &err), 0);
	assert_int_equal(nev, 3);
	assert_string_equal(ev[1].kind, "evidence");
	event_rows_free(ev, nev);
	attempt_row_release(&r);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_migration, setup, teardown),
	    cmocka_unit_test_setup_teardown(
		test_put_read_render, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_story_json, setup, teardown),
	    cmocka_unit_test_setup_teardown(
		test_stored_with_decision, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
