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

static int
commit_files(struct batch *b, const struct story_row *only, const char *subject,
    const char *body, struct sc_err *err)
{
	struct story_row *rows = NULL;
	struct gitstate_file *files = NULL;
	char **texts = NULL;
	char **paths = NULL;
	char *progress = NULL, *msg = NULL;
	size_t n = 0, i, nf = 0;
	int64_t seq = 0;
	int committed = 0;
	int rc;

	rc = db_story_list(b->db, &rows, &n, b->batch_id, NULL, err);
	if (rc < 0)
		goto out;
	rc = db_decision_seq(b->db, &seq, err);
	if (rc < 0)
		goto out;
	files = calloc(n + 1, sizeof(*files));
	texts = calloc(n + 1, sizeof(*texts));
	paths = calloc(n + 1, sizeof(*paths));
	if (files == NULL || texts == NULL || paths == NULL ||
	    render_progress_md(&progress, rows, n, b->batch_id) < 0) {
		rc = err_set(err, SC_EOS, "out of memory");
		goto out;
	}
	files[nf].path = "progress.md";
	files[nf].data = progress;
	files[nf].len = strlen(progress);
	nf++;
	for (i = 0; i < n; i++) {
		if (only != NULL && strcmp(rows[i].id, only->id) != 0)
			continue;
		rc = story_json_text(&texts[i], b, &rows[i], err);
		if (rc < 0)
			goto out;
		if (asprintf(&paths[i], "stories/%s.json", rows[i].id) < 0) {
			paths[i] = NULL;
			rc = err_set(err, SC_EOS, "out of memory");
			goto out;
		}
		files[nf].path = paths[i];
		files[nf].data = texts[i];
		files[nf].len = strlen(texts[i]);
		nf++;
	}
	if (asprintf(&msg, "%s\n\n%s%s" SEQ_TRAILER "%" PRId64 "\n", subject,
		body ? body : "", body && body[0] ? "\n\n" : "", seq) < 0) {
		msg = NULL;
		rc = err_set(err, SC_EOS, "out of memory");
		goto out;
	}
	rc = gitstate_commit(b->gs, &committed, files, nf, msg,
	    b->o->clock.now_ms(b->o->clock.ctx) / 1000, err);
out:
	for (i = 0; texts != NULL && i < n + 1; i++) {
		free(texts[i]);
		free(paths[i]);
	}
	free(texts);
	free(paths);
	free(files);
	free(progress);
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
