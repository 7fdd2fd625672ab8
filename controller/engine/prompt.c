/* prompt.c - see prompt.h. */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "controller/engine/prompt.h"

const char prompt_default_template[] =
    "You are running unattended (no one will answer questions) as a "
    "dev-story session. Implement the story in {story_file} (story "
    "{story_id}). Work through its task checklist in order. As soon as "
    "a task is finished, check its box in {story_file} (change \"- [ ]\" "
    "to \"- [x]\") and save the file; never check a box for work that is "
    "not done. Stop when every box is checked.";

/* One quoted failure: its line, then its message indented, cut to
 * PROMPT_FAILURE_TEXT bytes at a character boundary. */
static void
failure_quote(FILE *f, const struct prompt_failure *x)
{
	const char *m = x->error_message ? x->error_message : "";
	size_t n = strlen(m), i;

	fprintf(f, "\n- %s, reported %s", x->error_code, x->reported_at);
	if (x->agent_id != NULL && x->agent_id[0] != '\0')
		fprintf(f, " (agent %s)", x->agent_id);
	if (x->http_status > 0)
		fprintf(f, ", HTTP status %d", x->http_status);
	if (x->exit_code >= 0)
		fprintf(f, ", exit code %d", x->exit_code);
	if (n == 0)
		return;
	if (n > PROMPT_FAILURE_TEXT) {
		n = PROMPT_FAILURE_TEXT;
		while (n > 0 && ((unsigned char)m[n] & 0xc0) == 0x80)
			n--;
	}
	fprintf(f, ":\n  ");
	for (i = 0; i < n; i++) {
		fputc(m[i], f);
		if (m[i] == '\n' && i + 1 < n)
			fputs("  ", f);
	}
	if (n < strlen(m))
		fputs(" [...]", f);
}

/* The section that quotes failures reported from outside storyctl
 * (docs/api.md#in-the-next-prompt); *out NULL when there are none. */
static int
failures_note(char **out, const struct prompt_prev *prev, struct sc_err *err)
{
	size_t size = 0, i, from;
	FILE *f;

	*out = NULL;
	if (prev == NULL || prev->nfailures == 0)
		return 0;
	if ((f = open_memstream(out, &size)) == NULL)
		return err_set(err, SC_EOS, "out of memory");
	from = prev->nfailures > PROMPT_FAILURES_MAX
	    ? prev->nfailures - PROMPT_FAILURES_MAX
	    : 0;
	fprintf(f,
	    "\n\n[Failures reported from outside storyctl]:\n"
	    "After this story's last attempt, %s reported from outside "
	    "storyctl (for example by a CI run). Find the cause and fix "
	    "it before you stop; tasks already checked stay checked.",
	    prev->nfailures - from == 1 ? "this failure of it was"
					: "these failures of it were");
	for (i = from; i < prev->nfailures; i++)
		failure_quote(f, &prev->failures[i]);
	if (fclose(f) != 0) {
		free(*out);
		*out = NULL;
		return err_set(err, SC_EOS, "out of memory");
	}
	return 0;
}

/* *out: what a retry's prompt says of the attempt before it (where it
 * stopped, and the failed check's note), NULL for a first attempt. */
static int
retry_note(char **out, const struct argv_vars *v,
    const struct prompt_prev *prev, struct sc_err *err)
{
	const char *task = prev != NULL ? prev->stalled_task : NULL;
	bool has_task = task != NULL && task[0] != '\0';
	char *note = NULL, *more = NULL;

	*out = NULL;
	if (prev == NULL || prev->attempt <= 0)
		return 0;
	if (asprintf(&note,
		"\n\nThis is attempt %d of %d. The previous attempt "
		"(%d%s%s) stopped at %d/%d tasks%s%s%s. Continue from there "
		"and keep the work already done.",
		v->attempt, v->max_attempts, prev->attempt,
		prev->outcome ? ", " : "", prev->outcome ? prev->outcome : "",
		prev->tasks_completed, prev->tasks_total,
		has_task ? "; the first unchecked task is: \"" : "",
		has_task ? task : "", has_task ? "\"" : "") < 0)
		return err_set(err, SC_EOS, "out of memory");
	if (prev->check_note != NULL && prev->check_note[0] != '\0') {
		if (asprintf(&more, "%s %s", note, prev->check_note) < 0) {
			free(note);
			return err_set(err, SC_EOS, "out of memory");
		}
		free(note);
		note = more;
	}
	*out = note;
	return 0;
}

int
prompt_render(char **out, const char *tmpl, const struct argv_vars *v,
    const struct prompt_prev *prev, struct sc_err *err)
{
	struct strlist t = {0}, expanded = {0};
	struct argv_vars vars = *v;
	char *buf = NULL, *note = NULL, *dep = NULL, *ext = NULL;
	size_t len;
	int rc = 0;

	*out = NULL;
	vars.prompt = "";
	if (strlist_push(&t, tmpl != NULL ? tmpl : prompt_default_template) <
	    0) {
		rc = err_set(err, SC_EOS, "out of memory");
		goto out;
	}
	rc = argv_expand(&expanded, &t, &vars, err);
	if (rc < 0) {
		err_prefix(err, "prompt");
		goto out;
	}
	rc = retry_note(&note, v, prev, err);
	if (rc < 0)
		goto out;
	if (prev != NULL && prev->dependency_result != NULL) {
		if (asprintf(&dep,
			"[Previous step result]:\n%s\n\n[Current "
			"task]:\n",
			prev->dependency_result) < 0) {
			dep = NULL;
			rc = err_set(err, SC_EOS, "out of memory");
			goto out;
		}
	}
	rc = failures_note(&ext, prev, err);
	if (rc < 0)
		goto out;
	len = (dep ? strlen(dep) : 0) + strlen(expanded.items[0]) +
	    (note ? strlen(note) : 0) + (ext ? strlen(ext) : 0) + 1;
	buf = malloc(len);
	if (buf == NULL) {
		rc = err_set(err, SC_EOS, "out of memory");
		goto out;
	}
	snprintf(buf, len, "%s%s%s%s", dep ? dep : "", expanded.items[0],
	    note ? note : "", ext ? ext : "");
	*out = buf;
	buf = NULL;
out:
	free(buf);
	free(note);
	free(dep);
	free(ext);
	strlist_release(&t);
	strlist_release(&expanded);
	return rc;
}

int
prompt_write_file(const char *path, const char *text, struct sc_err *err)
{
	size_t len = strlen(text), done = 0;
	ssize_t w;
	int fd, rc = 0;

	fd = open(
	    path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		return err_set(
		    err, SC_EIO, "cannot create %s: %s", path, strerror(errno));
	while (done < len) {
		w = write(fd, text + done, len - done);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0) {
			rc = err_set(err, SC_EIO, "cannot write %s: %s", path,
			    strerror(errno));
			break;
		}
		done += (size_t)w;
	}
	if (close(fd) < 0 && rc == 0)
		rc = err_set(
		    err, SC_EIO, "cannot write %s: %s", path, strerror(errno));
	return rc;
}
