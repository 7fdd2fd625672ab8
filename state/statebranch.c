/* statebranch.c - see statebranch.h; the layout is docs/state-branch.md. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "state/render.h"
#include "state/statebranch.h"
#include "state/story_record.h"

/* The last line of every commit message: the database's decision
 * sequence the commit shows, which statebranch_sync() compares
 * (docs/state-branch.md#durability). */
#define SEQ_TRAILER "storyctl-decision: "

static int
story_json_text(char **out, struct statebranch *sb, int64_t batch_id,
    const struct story_row *st, struct sc_err *err)
{
	struct story_record r;
	json_t *j = NULL;
	int rc;

	*out = NULL;
	rc = story_record_read(&r, sb->db, batch_id, st, err);
	if (rc == 0)
		rc = story_record_json(&j, &r, err);
	if (rc == 0 &&
	    (*out = json_dumps(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER)) ==
		NULL)
		rc = err_set(
		    err, SC_EOS, "out of memory rendering story %s", st->id);
	json_decref(j);
	story_record_release(&r);
	return rc;
}

/* Add the JSON of each of the n rows to tx, at its path for a batch of
 * total stories. */
static int
add_stories(struct statebranch *sb, int64_t batch_id, struct gitstate_tx *tx,
    const struct story_row *rows, size_t n, int total, struct sc_err *err)
{
	char *text = NULL, *path = NULL;
	size_t i;
	int rc = 0;

	for (i = 0; rc == 0 && i < n; i++) {
		rc = story_json_text(&text, sb, batch_id, &rows[i], err);
		if (rc < 0)
			break;
		path = render_story_path(rows[i].id, rows[i].position, total);
		rc = path == NULL
		    ? err_set(err, SC_EOS, "out of memory")
		    : gitstate_tx_add(tx, path, text, strlen(text), err);
		free(path);
		free(text);
	}
	return rc;
}

/* Add a text (consumed) at path to tx; rendered is what rendering it
 * returned (so called after the render, never in its argument list). */
static int
add_text(struct gitstate_tx *tx, const char *path, int rendered, char *text,
    struct sc_err *err)
{
	int rc;

	if (rendered < 0 || text == NULL)
		return err_set(err, SC_EOS, "out of memory");
	rc = gitstate_tx_add(tx, path, text, strlen(text), err);
	free(text);
	return rc;
}

/*
 * The table of the page of stories from position `from` (progress.md
 * itself in a batch of at most RENDER_FLAT_MAX stories) and the JSON of
 * `only`, or of every story on it.  A decision reads only the columns
 * the table shows (db_story_lines); the whole story rows are read only
 * when every story's JSON is written.
 */
static int
add_page(struct statebranch *sb, int64_t batch_id, struct gitstate_tx *tx,
    const struct story_row *only, int from, int total, struct sc_err *err)
{
	struct story_row *rows = NULL;
	struct story_line *lines = NULL;
	char *block = NULL, *text = NULL, path[32];
	const char *name = "progress.md";
	size_t n = 0, i;
	/* a small batch is one page of up to RENDER_FLAT_MAX stories */
	int span = render_page_size(total);
	int page = from / span, rc;

	if (only != NULL) {
		rc = db_story_lines(
		    sb->db, &lines, &block, &n, batch_id, from, span, err);
	} else {
		rc = db_story_range(
		    sb->db, &rows, &n, batch_id, from, span, err);
		if (rc == 0 && n > 0 &&
		    (lines = calloc(n, sizeof(*lines))) == NULL)
			rc = err_set(err, SC_EOS, "out of memory");
		for (i = 0; rc == 0 && i < n; i++)
			render_line_of(&lines[i], &rows[i]);
	}
	if (rc < 0)
		goto out;
	if (total > RENDER_FLAT_MAX) {
		snprintf(path, sizeof(path), "progress/%04d.md", page + 1);
		name = path;
		rc =
		    render_progress_page(&text, lines, n, page, span, batch_id);
	} else {
		rc = render_progress_md(&text, lines, n, batch_id);
	}
	rc = add_text(tx, name, rc, text, err);
	if (rc == 0)
		rc = only != NULL
		    ? add_stories(sb, batch_id, tx, only, 1, total, err)
		    : add_stories(sb, batch_id, tx, rows, n, total, err);
out:
	free(lines);
	free(block);
	free(rows);
	return rc;
}

/*
 * One commit on the state branch.  With `only` (a decision about one
 * story) the work is bounded: the story's JSON, and either the whole
 * progress.md of a small batch or, above RENDER_FLAT_MAX stories, the
 * summary progress.md and the one page that holds the story.  Without
 * it (a new batch, a sync after a crash) the tree is written afresh
 * with the whole batch, a page of rows at a time, so that memory stays
 * bounded (docs/state-branch.md#layout).
 */
static int
commit_files(struct statebranch *sb, int64_t batch_id,
    const struct story_row *only, const char *subject, const char *body,
    int64_t now_ms, struct sc_err *err)
{
	struct gitstate_tx *tx = NULL;
	int counts[STATUS__COUNT];
	char *text = NULL, *msg = NULL;
	size_t k;
	int64_t seq = 0;
	int committed = 0, total = 0, from, end, span;
	int rc;

	rc = db_status_counts(sb->db, counts, batch_id, err);
	if (rc < 0)
		goto out;
	for (k = 0; k < STATUS__COUNT; k++)
		total += counts[k];
	rc = db_decision_seq(sb->db, &seq, err);
	if (rc < 0)
		goto out;
	rc = gitstate_tx_begin(sb->gs, &tx, only == NULL, err);
	if (rc < 0)
		goto out;
	if (total > RENDER_FLAT_MAX) {
		rc = render_progress_index(&text, counts, total, batch_id);
		rc = add_text(tx, "progress.md", rc, text, err);
	}
	/* the page of `only`, or every page (a small batch is one page,
	 * its table progress.md itself) */
	span = render_page_size(total);
	from = only != NULL && total > RENDER_FLAT_MAX
	    ? only->position / span * span
	    : 0;
	end = only != NULL ? from + 1 : total > 0 ? total : 1;
	for (; rc == 0 && from < end; from += span)
		rc = add_page(sb, batch_id, tx, only, from, total, err);
	if (rc < 0)
		goto out;
	if (asprintf(&msg, "%s\n\n%s%s" SEQ_TRAILER "%" PRId64 "\n", subject,
		body ? body : "", body && body[0] ? "\n\n" : "", seq) < 0) {
		msg = NULL;
		rc = err_set(err, SC_EOS, "out of memory");
		goto out;
	}
	rc = gitstate_tx_commit(tx, &committed, msg, now_ms / 1000, err);
out:
	gitstate_tx_free(tx);
	free(msg);
	return rc;
}

/* The commit of one story without flushing the pending one first: msg's
 * first line is the subject, the rest the body. */
static int
commit_story_now(struct statebranch *sb, int64_t batch_id,
    const struct story_row *st, const char *msg, int64_t now_ms,
    struct sc_err *err)
{
	const char *nl = strchr(msg, '\n');
	char subject[512];
	size_t len = nl ? (size_t)(nl - msg) : strlen(msg);

	if (len >= sizeof(subject))
		len = sizeof(subject) - 1;
	memcpy(subject, msg, len);
	subject[len] = '\0';
	return commit_files(
	    sb, batch_id, st, subject, nl ? nl + 1 : "", now_ms, err);
}

void
statebranch_init(struct statebranch *sb, struct db *db, struct gitstate *gs)
{
	memset(sb, 0, sizeof(*sb));
	sb->db = db;
	sb->gs = gs;
}

void
statebranch_release(struct statebranch *sb)
{
	if (sb == NULL)
		return;
	free(sb->pending_msg);
	sb->pending_msg = NULL;
}

int
statebranch_flush(struct statebranch *sb, int64_t now_ms, struct sc_err *err)
{
	int rc;

	if (sb->pending_msg == NULL)
		return 0;
	/* the decision must be durable before the branch shows it */
	rc = db_flush(sb->db, err);
	if (rc == 0)
		rc = commit_story_now(sb, sb->pending_batch, &sb->pending_st,
		    sb->pending_msg, now_ms, err);
	free(sb->pending_msg);
	sb->pending_msg = NULL;
	return rc;
}

int
statebranch_defer_story(struct statebranch *sb, int64_t batch_id,
    const struct story_row *st, const char *msg, int64_t now_ms,
    struct sc_err *err)
{
	int rc;

	rc = statebranch_flush(sb, now_ms, err);
	if (rc < 0)
		return rc;
	if ((sb->pending_msg = strdup(msg)) == NULL)
		return err_set(err, SC_EOS, "out of memory");
	sb->pending_batch = batch_id;
	sb->pending_st = *st;
	return 0;
}

int
statebranch_commit_story(struct statebranch *sb, int64_t batch_id,
    const struct story_row *st, const char *msg, int64_t now_ms,
    struct sc_err *err)
{
	int rc = statebranch_flush(sb, now_ms, err);

	return rc < 0 ? rc
		      : commit_story_now(sb, batch_id, st, msg, now_ms, err);
}

int
statebranch_commit_batch(struct statebranch *sb, int64_t batch_id,
    const char *subject, const char *body, int64_t now_ms, struct sc_err *err)
{
	int rc = statebranch_flush(sb, now_ms, err);

	return rc < 0
	    ? rc
	    : commit_files(sb, batch_id, NULL, subject, body, now_ms, err);
}

int
statebranch_sync(struct statebranch *sb, int64_t batch_id, int64_t now_ms,
    struct sc_err *err)
{
	char *tip = NULL;
	const char *p;
	int64_t seq = 0, have = -1;
	int found = 0;
	int rc;

	rc = statebranch_flush(sb, now_ms, err);
	if (rc < 0)
		goto out;
	rc = db_decision_seq(sb->db, &seq, err);
	if (rc < 0)
		goto out;
	rc = gitstate_tip_message(sb->gs, &tip, &found, err);
	if (rc < 0)
		goto out;
	if (found && (p = strstr(tip, SEQ_TRAILER)) != NULL)
		have = strtoll(p + strlen(SEQ_TRAILER), NULL, 10);
	if (found && have == seq)
		goto out;
	if (!found && seq == 0)
		goto out;
	rc = commit_files(sb, batch_id, NULL,
	    "storyctl: sync the state branch with the "
	    "database",
	    "The branch lagged the database (a crash between the "
	    "two writes); this commit carries the missing state.",
	    now_ms, err);
out:
	free(tip);
	return rc;
}
