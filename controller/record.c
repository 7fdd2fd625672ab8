/*
 * record.c - what the batch leaves behind for people: one commit on the
 * state branch after every decision, and the lines (or the live status
 * line) printed while it runs.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "controller/batch_int.h"
#include "controller/clock.h"
#include "state/render.h"

#define SEQ_TRAILER "storyctl-decision: "

static int
story_json_text(
    char **out, struct batch *b, const struct story_row *st, struct sc_err *err)
{
	struct attempt_row *rows = NULL;
	size_t n = 0;
	json_t *j = NULL;
	int rc;

	*out = NULL;
	rc = db_attempts_for_story(b->db, &rows, &n, b->batch_id, st->id, err);
	if (rc < 0)
		goto out;
	j = render_story_json(st, rows, n);
	if (j != NULL)
		*out = json_dumps(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	if (*out == NULL)
		rc = err_set(
		    err, SC_EOS, "out of memory rendering story %s", st->id);
out:
	json_decref(j);
	attempt_rows_free(rows, n);
	return rc;
}

/* A growable list of files for one state commit; it owns the texts. */
struct commit_set {
	struct gitstate_file *files;
	char **owned;
	size_t n, alloc;
};

static int
set_add(struct commit_set *cs, char *path, char *text)
{
	size_t want;
	void *p;

	if (path == NULL || text == NULL) {
		free(path);
		free(text);
		return -1;
	}
	if (cs->n + 1 > cs->alloc) {
		want = cs->alloc ? cs->alloc * 2 : 8;
		p = realloc(cs->files, want * sizeof(*cs->files));
		if (p == NULL)
			goto fail;
		cs->files = p;
		p = realloc(cs->owned, 2 * want * sizeof(*cs->owned));
		if (p == NULL)
			goto fail;
		cs->owned = p;
		cs->alloc = want;
	}
	cs->owned[2 * cs->n] = path;
	cs->owned[2 * cs->n + 1] = text;
	cs->files[cs->n].path = path;
	cs->files[cs->n].data = text;
	cs->files[cs->n].len = strlen(text);
	cs->n++;
	return 0;
fail:
	free(path);
	free(text);
	return -1;
}

static void
set_free(struct commit_set *cs)
{
	size_t i;

	for (i = 0; i < 2 * cs->n; i++)
		free(cs->owned[i]);
	free(cs->owned);
	free(cs->files);
}

static char *
page_path(int page)
{
	char *p = NULL;

	if (asprintf(&p, "progress/%04d.md", page + 1) < 0)
		return NULL;
	return p;
}

/*
 * One commit on the state branch.  With `only` (a decision about one
 * story) the work is bounded: the story's JSON, and either the whole
 * progress.md of a small batch or, above RENDER_PAGE stories, the
 * summary progress.md and the one page that holds the story.  Without
 * it (a new batch, a sync after a crash) everything is written.
 */
static int
commit_files(struct batch *b, const struct story_row *only, const char *subject,
    const char *body, struct sc_err *err)
{
	struct commit_set cs;
	struct story_row *rows = NULL;
	int counts[STATUS__COUNT];
	char *text = NULL, *msg = NULL;
	size_t n = 0, i, k;
	int64_t seq = 0;
	int committed = 0, total = 0, page, from;
	int rc;

	memset(&cs, 0, sizeof(cs));
	rc = db_status_counts(b->db, counts, b->batch_id, err);
	if (rc < 0)
		goto out;
	for (k = 0; k < STATUS__COUNT; k++)
		total += counts[k];
	rc = db_decision_seq(b->db, &seq, err);
	if (rc < 0)
		goto out;
	if (only != NULL && total > RENDER_PAGE) {
		from = only->position / RENDER_PAGE * RENDER_PAGE;
		rc = db_story_range(
		    b->db, &rows, &n, b->batch_id, from, RENDER_PAGE, err);
	} else {
		rc = db_story_list(b->db, &rows, &n, b->batch_id, NULL, err);
	}
	if (rc < 0)
		goto out;
	if (total <= RENDER_PAGE) {
		rc = render_progress_md(&text, rows, n, b->batch_id);
		if (rc == 0)
			rc = set_add(&cs, strdup("progress.md"), text);
	} else {
		rc = render_progress_index(&text, counts, total, b->batch_id);
		if (rc == 0)
			rc = set_add(&cs, strdup("progress.md"), text);
		/* the pages the rows cover (one, or all of them) */
		for (i = 0; rc == 0 && i < n; i += k) {
			page = rows[i].position / RENDER_PAGE;
			for (k = 0; i + k < n &&
			     rows[i + k].position / RENDER_PAGE == page;
			     k++)
				;
			rc = render_progress_page(
			    &text, rows + i, k, page, b->batch_id);
			if (rc == 0)
				rc = set_add(&cs, page_path(page), text);
		}
	}
	if (rc < 0) {
		rc = err_set(err, SC_EOS, "out of memory");
		goto out;
	}
	for (i = 0; i < n; i++) {
		char *path = NULL;
		if (only != NULL && strcmp(rows[i].id, only->id) != 0)
			continue;
		rc = story_json_text(
		    &text, b, only != NULL ? only : &rows[i], err);
		if (rc < 0)
			goto out;
		if (asprintf(&path, "stories/%s.json", rows[i].id) < 0)
			path = NULL;
		if (set_add(&cs, path, text) < 0) {
			rc = err_set(err, SC_EOS, "out of memory");
			goto out;
		}
	}
	if (asprintf(&msg, "%s\n\n%s%s" SEQ_TRAILER "%" PRId64 "\n", subject,
		body ? body : "", body && body[0] ? "\n\n" : "", seq) < 0) {
		msg = NULL;
		rc = err_set(err, SC_EOS, "out of memory");
		goto out;
	}
	rc = gitstate_commit(b->gs, &committed, cs.files, cs.n, msg,
	    b->o->clock.now_ms(b->o->clock.ctx) / 1000, err);
out:
	set_free(&cs);
	free(msg);
	free(rows);
	return rc;
}

int
record_commit_story(struct batch *b, const struct story_row *st,
    const char *msg, struct sc_err *err)
{
	const char *nl = strchr(msg, '\n');
	char subject[512];
	size_t len = nl ? (size_t)(nl - msg) : strlen(msg);

	if (len >= sizeof(subject))
		len = sizeof(subject) - 1;
	memcpy(subject, msg, len);
	subject[len] = '\0';
	return commit_files(b, st, subject, nl ? nl + 1 : "", err);
}

int
record_commit_batch(
    struct batch *b, const char *subject, const char *body, struct sc_err *err)
{
	return commit_files(b, NULL, subject, body, err);
}

int
record_sync(struct batch *b, struct sc_err *err)
{
	char *tip = NULL;
	const char *p;
	int64_t seq = 0, have = -1;
	int found = 0;
	int rc;

	rc = db_decision_seq(b->db, &seq, err);
	if (rc < 0)
		goto out;
	rc = gitstate_tip_message(b->gs, &tip, &found, err);
	if (rc < 0)
		goto out;
	if (found && (p = strstr(tip, SEQ_TRAILER)) != NULL)
		have = strtoll(p + strlen(SEQ_TRAILER), NULL, 10);
	if (found && have == seq)
		goto out;
	if (!found && seq == 0)
		goto out;
	rc = commit_files(b, NULL,
	    "storyctl: sync the state branch with the "
	    "database",
	    "The branch lagged the database (a crash between the "
	    "two writes); this commit carries the missing state.",
	    err);
out:
	free(tip);
	return rc;
}

void
record_clear_line(struct batch *b)
{
	if (b->line_shown) {
		fputs("\r\033[K", b->o->out);
		b->line_shown = false;
	}
}

void
record_line(struct batch *b, const char *fmt, ...)
{
	va_list ap;

	record_clear_line(b);
	va_start(ap, fmt);
	vfprintf(b->o->out, fmt, ap);
	va_end(ap);
	fputc('\n', b->o->out);
	fflush(b->o->out);
}

void
record_status_line(struct batch *b)
{
	char el[32], part[200];
	int64_t now;
	size_t i;
	int shown = 0;

	if (!b->o->tty)
		return;
	now = b->o->clock.now_ms(b->o->clock.ctx);
	fputs("\r\033[K", b->o->out);
	for (i = 0; i < b->nslots; i++) {
		const struct slot *sl = &b->slots[i];
		if (sl->st == NULL || sl->state == SLOT_FREE)
			continue;
		if (sl->state == SLOT_RUNNING) {
			const struct attempt_row *r = slot_attempt(sl);
			clock_fmt_duration(el, sizeof(el), now - r->started_ms);
			snprintf(part, sizeof(part),
			    "attempt %d/%d  %s (%s)  %d/%d tasks  %s",
			    r->attempt, b->cfg->policy.max_attempts,
			    role_name(r->role), r->agent, r->tasks_completed,
			    r->tasks_total, el);
		} else {
			clock_fmt_duration(el, sizeof(el), sl->until_ms - now);
			snprintf(part, sizeof(part), "next attempt %d in %s",
			    sl->next_attempt, el);
		}
		fprintf(b->o->out, "%s%s%s%s  %s", shown++ ? "  |  " : "",
		    b->o->color ? "\033[1m" : "", sl->st->id,
		    b->o->color ? "\033[0m" : "", part);
	}
	if (b->paused_until > now) {
		clock_fmt_duration(el, sizeof(el), b->paused_until - now);
		fprintf(b->o->out, "%sbreaker cooldown: %s",
		    shown++ ? "  |  " : "", el);
	}
	fflush(b->o->out);
	b->line_shown = true;
}
