/*
 * attempt_evidence.c - an attempt's evidence (docs/evidence.md): the
 * work tree snapshotted and the story's boxes kept when it starts, the
 * change measured and the boxes compared when its agent ends, unbacked
 * ticks taken back under verify.require_diff, the row and its event
 * handed to the decision, which stores them in its transaction.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "controller/engine/attempt_evidence.h"
#include "controller/engine/attempt_run.h"
#include "controller/engine/console.h"
#include "controller/config/stories.h"
#include "state/db_evidence.h"
#include "state/gitevidence.h"
#include "state/redact.h"
#include "state/render_evidence.h"

static void
not_measured(struct attempt_run *ar, const char *what, const char *why)
{
	snprintf(ar->ev.not_measured, sizeof(ar->ev.not_measured),
	    "%.60s: %.180s", what, why);
}

void
attempt_evidence_start(struct attempt_run *ar, struct story_look *now)
{
	struct sc_err err = {0};

	/* the boxes as slot_prepare() read them for the count: nothing
	 * runs in the story's tree in between */
	if (now != NULL) {
		ar->ev_before = now->items;
		ar->ev_nbefore = now->nitems;
		now->items = NULL;
		now->nitems = 0;
		ar->ev_started = true;
	}
	/* the state dir is left out wherever it lies: inside the main
	 * tree it is excluded, a worktree's tree does not hold it */
	if (gitevidence_snapshot(ar->ev_base, ar->b->evw,
		slot_root(ar->b, ar->sl), ar->b->cfg->state_dir, &err) < 0) {
		ar->ev_base[0] = '\0';
		not_measured(
		    ar, "the work tree cannot be snapshotted", err.msg);
	}
}

/*
 * Write the text of an attempt's diff to path: new, 0600, no symlink
 * followed, in the logs dir (0700) beside the log it is named after.
 */
static int
write_private(
    const char *path, const char *text, size_t len, struct sc_err *err)
{
	ssize_t put = 0;
	size_t done = 0;
	int fd, rc = 0;

	fd = open(
	    path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return err_set(err, SC_EIO, "%s: %s", path, strerror(errno));
	while (done < len && put >= 0) {
		put = write(fd, text + done, len - done);
		if (put > 0)
			done += (size_t)put;
		else if (put < 0 && errno == EINTR)
			put = 0;
	}
	if (put < 0 || close(fd) != 0)
		rc = err_set(err, SC_EIO, "%s: %s", path, strerror(errno));
	return rc;
}

/*
 * Keep the attempt's diff for `storyctl diff` beside its log
 * (docs/evidence.md#the-attempts-diff): there is no commit per attempt,
 * so a middle attempt's change exists nowhere else once the next one
 * starts.  Redacted with the batch's secrets before it is written, as
 * everything shown from an attempt is; said at the end when cut.  An
 * attempt that changed nothing keeps no file.  Best effort: a diff that
 * cannot be kept leaves the counts as measured, and says so.
 */
static void
keep_patch(struct attempt_run *ar, struct gitevidence_patch *pt,
    const struct gitevidence_diff *d)
{
	char path[sizeof(ar->r.log_path) + 8];
	struct sc_err err = {0};
	size_t max = pt->max != 0 ? pt->max : GITEVIDENCE_PATCH_MAX;
	char *text = NULL;

	if (d->files_changed == 0 ||
	    gitevidence_patch_path(path, sizeof(path), ar->r.log_path) < 0)
		return;
	if (pt->cut) {
		if (pt->text.len > 0 && pt->text.buf[pt->text.len - 1] != '\n')
			strbuf_addch(&pt->text, '\n');
		strbuf_addf(&pt->text,
		    "[storyctl: the diff is cut here at %zu MiB: %d of %d "
		    "files not shown in full]\n",
		    max >> 20, d->files_changed - pt->files, d->files_changed);
	}
	text = redact_text(ar->b->secrets, pt->text.buf, pt->text.len, NULL);
	if (text == NULL || pt->text.oom)
		err_set(&err, SC_EOS, "out of memory");
	else
		(void)write_private(path, text, strlen(text), &err);
	if (err.code != 0)
		console_line(ar->b, "%s: attempt %d: its diff is not kept: %s",
		    ar->sl->st->id, ar->r.attempt, err.msg);
	free(text);
}

/* The change since the start's snapshot into ar->ev, its text kept. */
static void
measure(struct attempt_run *ar)
{
	struct gitevidence_diff d;
	struct gitevidence_patch pt = {STRBUF_INIT, 0, false, 0};
	struct sc_err err = {0};

	if (ar->ev_base[0] == '\0')
		return; /* not_measured says why */
	if (gitevidence_diff_patch(&d, &pt, ar->b->evw,
		slot_root(ar->b, ar->sl), ar->ev_base, ar->b->cfg->state_dir,
		ar->sl->abspath, &err) < 0) {
		gitevidence_patch_release(&pt);
		not_measured(ar, "the work tree cannot be diffed", err.msg);
		return;
	}
	keep_patch(ar, &pt, &d);
	gitevidence_patch_release(&pt);
	ar->ev.measured = true;
	/* a tree's id, not a watched snapshot's name (docs/evidence.md) */
	if (strspn(ar->ev_base, "0123456789abcdef") == 40 &&
	    ar->ev_base[40] == '\0')
		snprintf(ar->ev.base_tree, sizeof(ar->ev.base_tree), "%s",
		    ar->ev_base);
	ar->ev.files_changed = d.files_changed;
	ar->ev.lines_added = d.lines_added;
	ar->ev.lines_removed = d.lines_removed;
	ar->ev.files = render_evidence_files(&d);
}

/* Open again the boxes on lines of text (the story as the agent left
 * it), in place: the same bytes but for those boxes' marks. */
static int
untick(struct attempt_run *ar, const char *text, size_t len,
    const struct evidence_boxes *eb, struct sc_err *err)
{
	char *out = NULL;
	size_t outlen = 0;
	ssize_t put;
	int changed = 0, fd = -1, rc;

	rc = evidence_untick(
	    &out, &outlen, &changed, text, len, eb->lines, eb->nlines, err);
	if (rc < 0 || changed == 0)
		goto out;
	/* the same length: written over, never truncated; no symlink
	 * followed (the read above checked where the file lies) */
	fd = open(ar->sl->abspath, O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
	put = fd < 0 ? -1 : pwrite(fd, out, outlen, 0);
	if (put != (ssize_t)outlen || close(fd) != 0)
		rc = err_set(err, SC_EIO, "%s: cannot open its boxes again: %s",
		    ar->sl->s->file, strerror(errno));
	fd = -1;
out:
	if (fd >= 0)
		close(fd);
	free(out);
	return rc;
}

/* The boxes now against the start's; under require_diff the unbacked
 * ticks taken back and ar->end read again. */
static void
judge(struct attempt_run *ar, const struct story_look *now)
{
	struct evidence_boxes eb;
	struct sc_err err = {0};
	char *text = NULL;
	size_t len = 0;
	struct batch *b = ar->b;

	if (!ar->ev_started || now == NULL ||
	    evidence_compare(&eb, ar->ev_before, ar->ev_nbefore, now->items,
		now->nitems, &err) < 0)
		goto out;
	ar->ev.ticked = eb.ticked;
	ar->ev.unticked = eb.unticked;
	memcpy(ar->ev.first_unticked, eb.first_unticked,
	    sizeof(ar->ev.first_unticked));
	evidence_judge(&ar->ev_verdict, &eb,
	    ar->ev.measured ? ar->ev.files_changed : -1,
	    b->cfg->verify.require_diff);
	ar->ev.ticked_without_change = ar->ev_verdict.ticked_without_change;
	if (!ar->ev_verdict.no_evidence)
		goto out;
	/* the agent has ended: the bytes are those now's boxes came from */
	if (story_read_text(
		&text, &len, ar->sl->abspath, slot_root(b, ar->sl), &err) < 0 ||
	    untick(ar, text, len, &eb, &err) < 0) {
		console_line(b, "%s: %s", ar->sl->st->id, err.msg);
		goto out;
	}
	if (story_read_seen_progress(&ar->end, &ar->sl->seen, ar->sl->abspath,
		slot_root(b, ar->sl), b->cfg->tasks_heading, NULL) < 0)
		ar->end = ar->start;
out:
	free(text);
}

void
attempt_evidence_end(struct attempt_run *ar, const struct story_look *now)
{
	ar->ev.files_changed = ar->ev.lines_added = ar->ev.lines_removed = -1;
	measure(ar);
	judge(ar, now);
	ar->ev_ended = true;
}

/* The event's text for the flags raised, "" when none. */
static void
flag_message(char *msg, size_t len, const struct attempt_run *ar)
{
	const struct evidence_row *e = &ar->ev;
	size_t used = 0;

	msg[0] = '\0';
	if (e->ticked_without_change)
		used = (size_t)snprintf(msg, len,
		    "attempt %d: %d box%s checked with no other change in the "
		    "work tree (%s)%s",
		    ar->r.attempt, e->ticked, e->ticked == 1 ? "" : "es",
		    EVIDENCE_FLAG_TICKED,
		    ar->ev_verdict.no_evidence
			? "; opened again: verify.require_diff"
			: "");
	if (e->unticked > 0 && used < len)
		snprintf(msg + used, len - used,
		    "%sattempt %d: %d box%s checked before %s unchecked now, "
		    "first \"%.200s\" (%s)",
		    used ? "; " : "", ar->r.attempt, e->unticked,
		    e->unticked == 1 ? "" : "es",
		    e->unticked == 1 ? "is" : "are", e->first_unticked,
		    EVIDENCE_FLAG_UNTICKED);
}

void
attempt_evidence_note(
    struct evidence_note *out, char *msg, size_t len, struct attempt_run *ar)
{
	out->row = NULL;
	out->event_msg = NULL;
	if (!ar->ev_ended)
		return; /* the agent never ended: nothing was measured */
	ar->ev.attempt_id = ar->r.id;
	flag_message(msg, len, ar);
	if (msg[0] != '\0')
		console_line(ar->b, "%s: %s", ar->sl->st->id, msg);
	out->row = &ar->ev;
	out->event_msg = msg[0] != '\0' ? msg : NULL;
}

void
attempt_evidence_release(struct attempt_run *ar)
{
	free(ar->ev_before);
	ar->ev_before = NULL;
	ar->ev_nbefore = 0;
	free(ar->ev.files);
	ar->ev.files = NULL;
}
