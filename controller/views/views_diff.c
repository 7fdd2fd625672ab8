/*
 * views_diff.c - `storyctl diff STORY [--attempt N]`: an attempt's diff
 * read back from beside its log, where its evidence kept it when its
 * agent ended, and redacted again for the reader
 * (docs/evidence.md#the-attempts-diff).  See views_diff.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/strbuf.h"
#include "controller/config/secrets.h"
#include "controller/views/views.h"
#include "controller/views/views_diff.h"
#include "state/db_evidence.h"
#include "state/gitevidence.h"
#include "state/redact.h"

/* A kept diff is at most GITEVIDENCE_PATCH_MAX and its last line; a
 * bigger file is not one storyctl wrote, and is read no further. */
#define VIEWS_DIFF_READ_MAX (GITEVIDENCE_PATCH_MAX + 4096)

void
views_diff_release(struct views_diff *d)
{
	if (d == NULL)
		return;
	free(d->text);
	memset(d, 0, sizeof(*d));
}

/* The evidence row of the attempt whose seq is seq, or NULL. */
static const struct evidence_row *
evidence_of(const struct story_record *sh, int seq)
{
	size_t i;

	for (i = 0; i < sh->nev; i++)
		if (sh->ev[i].seq == seq)
			return &sh->ev[i];
	return NULL;
}

/* The kept diff at path into sb, at most VIEWS_DIFF_READ_MAX bytes;
 * *found false when there is none. */
static int
read_kept(struct strbuf *sb, bool *found, const char *path, struct sc_err *err)
{
	char chunk[65536];
	ssize_t got = 1;
	int fd, rc = 0;

	*found = false;
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT)
		return 0;
	if (fd < 0)
		return err_set(err, SC_EIO, "%s: %s", path, strerror(errno));
	while (got != 0 && sb->len < VIEWS_DIFF_READ_MAX) {
		got = read(fd, chunk, sizeof(chunk));
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			rc = err_set(
			    err, SC_EIO, "%s: %s", path, strerror(errno));
			break;
		}
		strbuf_add(sb, chunk, (size_t)got);
	}
	close(fd);
	if (rc == 0 && sb->oom)
		rc = err_set(err, SC_EOS, "out of memory");
	*found = rc == 0;
	return rc;
}

/*
 * d->text: the len bytes at raw redacted by pattern and by value with
 * the secrets of cfg's agents and of this process's environment, as a
 * batch redacts (docs/reliability.md#redaction).  The diff was redacted
 * with the batch's own set when it was kept; this catches what the
 * config or the environment know now.
 */
static int
redact_into(struct views_diff *d, const struct config *cfg, const char *raw,
    size_t len, struct sc_err *err)
{
	struct redact_values *rv = NULL;
	int rc;

	rc = secrets_of_config(&rv, cfg, err);
	if (rc < 0)
		return rc;
	d->text = redact_text(rv, raw, len, NULL);
	redact_values_free(rv);
	if (d->text == NULL)
		return err_set(err, SC_EOS, "out of memory");
	d->len = strlen(d->text);
	return 0;
}

/* d from attempt a's evidence e (NULL: none) and its kept diff. */
static int
fill(struct views_diff *d, const struct config *cfg,
    const struct attempt_row *a, const struct evidence_row *e,
    struct sc_err *err)
{
	struct strbuf sb = STRBUF_INIT;
	bool found = false;
	int rc = 0;

	d->files_changed = e != NULL && e->measured ? e->files_changed : -1;
	if (e == NULL)
		snprintf(d->why, sizeof(d->why), "%s",
		    a->outcome == OUTCOME_NONE
			? "it is still running: its diff is kept when its "
			  "agent ends"
			: "its agent never ended (the controller stopped "
			  "first): nothing was measured");
	else if (!e->measured)
		snprintf(d->why, sizeof(d->why), "it was not measured: %s",
		    e->not_measured);
	else if (gitevidence_patch_path(d->path, sizeof(d->path), a->log_path) <
		0 &&
	    e->files_changed > 0)
		snprintf(d->why, sizeof(d->why),
		    "it has no log, beside which its diff would be kept");
	if (d->why[0] != '\0' || e->files_changed == 0)
		goto out;
	rc = read_kept(&sb, &found, d->path, err);
	if (rc == 0 && !found)
		snprintf(d->why, sizeof(d->why),
		    "its diff was not kept (no %s): it ran before storyctl "
		    "kept diffs, or the file could not be written",
		    d->path);
	if (rc == 0 && found)
		rc = redact_into(d, cfg, sb.buf, sb.len, err);
out:
	/* measured, no change: an empty diff, as git prints none */
	if (rc == 0 && d->why[0] == '\0' && d->text == NULL &&
	    (d->text = strdup("")) == NULL)
		rc = err_set(err, SC_EOS, "out of memory");
	strbuf_release(&sb);
	return rc;
}

int
views_diff_of(struct views_diff *out, const struct config *cfg,
    const struct story_record *sh, const struct attempt_row *a,
    struct sc_err *err)
{
	int rc;

	memset(out, 0, sizeof(*out));
	snprintf(out->story, sizeof(out->story), "%s", sh->st.id);
	out->attempt = a->attempt;
	rc = fill(out, cfg, a, evidence_of(sh, a->seq), err);
	if (rc < 0)
		views_diff_release(out);
	return rc;
}

int
views_diff_read(struct views_diff *out, struct view *v, const char *id,
    int attempt, struct sc_err *err)
{
	struct story_record sh;
	const struct attempt_row *a;
	int rc;

	memset(out, 0, sizeof(*out));
	rc = views_story_read(&sh, v, id, err);
	if (rc < 0)
		goto out;
	if ((a = views_story_attempt(&sh, attempt)) == NULL)
		rc = views_story_no_attempt(&sh, "diff", attempt, err);
	else
		rc = views_diff_of(out, &v->cfg, &sh, a, err);
out:
	views_story_release(&sh);
	return rc;
}
