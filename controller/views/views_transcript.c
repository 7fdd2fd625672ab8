/*
 * views_transcript.c - see views_transcript.h.
 *
 * The log is read in CHUNK-byte reads and split at '\n' into one line
 * buffer of VIEWS_TRANSCRIPT_LINE_CAP bytes: a longer line is handed
 * over cut (the transcript shows its beginning and says so) and the
 * rest of it skipped, so memory is the chunk, the line buffer, the
 * transcript's own fixed state and one redacted event, whatever the
 * size of the log.  The transcript parses each line itself: a whole
 * log is more than strategies/reader.c's in-memory tail, and the
 * transcript applies the same bounds (docs/agents.md#transcript).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "common/strbuf.h"
#include "controller/views/views_transcript.h"
#include "state/redact.h"
#include "strategies/text.h"
#include "strategies/transcript.h"

#define CHUNK ((size_t)64 * 1024)

struct walk {
	const struct redact_values *secrets;
	views_transcript_fn fn;
	void *arg;
	struct transcript_event red; /* the event redacted */
	/* the line being gathered */
	char *line;
	size_t len;
	bool cut;
	size_t index;
	size_t first; /* the first line read after a skipped head */
};

/* dst (cap bytes) = src redacted; "" stays "" without a pass. */
static void
redact_field(
    const struct redact_values *secrets, char *dst, size_t cap, const char *src)
{
	dst[0] = '\0';
	if (src[0] != '\0')
		redact_text_copy(secrets, dst, cap, src);
}

/* Each text of ev redacted into w->red, then to the caller.  The
 * fields are copied one by one: the event is some 10 KB, mostly unused
 * room, and a log has millions. */
static int
on_event(const struct transcript_event *ev, void *arg)
{
	struct walk *w = arg;
	struct transcript_event *r = &w->red;

	r->kind = ev->kind;
	r->t = ev->t;
	memcpy(r->ts, ev->ts, sizeof(r->ts));
	memcpy(r->role, ev->role, sizeof(r->role));
	r->cut = ev->cut;
	snprintf(r->tool, sizeof(r->tool), "%s", ev->tool);
	snprintf(r->id, sizeof(r->id), "%s", ev->id);
	memcpy(r->status, ev->status, sizeof(r->status));
	r->has_exit = ev->has_exit;
	r->exit_status = ev->exit_status;
	r->is_error = ev->is_error;
	r->retry = ev->retry;
	r->tokens_in = ev->tokens_in;
	r->tokens_out = ev->tokens_out;
	r->has_cost = ev->has_cost;
	r->cost_usd = ev->cost_usd;
	redact_field(w->secrets, r->text, sizeof(r->text), ev->text);
	redact_field(w->secrets, r->command, sizeof(r->command), ev->command);
	redact_field(w->secrets, r->path, sizeof(r->path), ev->path);
	return w->fn(r, w->arg);
}

static int
push_line(struct transcript *tr, struct walk *w)
{
	struct transcript_line l;
	int rc;

	memset(&l, 0, sizeof(l));
	l.s = w->line;
	l.n = w->len;
	l.cut = w->cut;
	l.index = w->index++;
	rc = transcript_push(tr, &l);
	w->len = 0;
	w->cut = false;
	return rc;
}

/* The bytes b[0..n) of the log into lines. */
static int
split(struct transcript *tr, struct walk *w, const char *b, size_t n)
{
	const char *nl;
	size_t k, room;
	int rc = 0;

	while (n > 0 && rc == 0) {
		nl = memchr(b, '\n', n);
		k = nl != NULL ? (size_t)(nl - b) : n;
		room = VIEWS_TRANSCRIPT_LINE_CAP - w->len;
		if (k > room)
			w->cut = true;
		memcpy(w->line + w->len, b, k < room ? k : room);
		w->len += k < room ? k : room;
		if (nl == NULL)
			break;
		rc = push_line(tr, w);
		b += k + 1;
		n -= k + 1;
	}
	return rc;
}

/* Read fd to its end through tr; SC_EIO when a read fails. */
static int
stream(int fd, struct transcript *tr, struct walk *w, char *chunk,
    const char *path, struct sc_err *err)
{
	ssize_t got;
	int rc = 0;

	for (;;) {
		got = read(fd, chunk, CHUNK);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			rc = err_set(err, SC_EIO, "cannot read %s: %s", path,
			    strerror(errno));
			goto out;
		}
		if (got == 0)
			break;
		if ((rc = split(tr, w, chunk, (size_t)got)) < 0)
			goto out;
	}
	if (w->len > 0 || w->cut)
		rc = push_line(tr, w);
	if (rc == 0)
		rc = transcript_end(tr);
out:
	return rc;
}

/* The lines of fd before byte from counted into w->index (a memchr a
 * line, no parse), the line that holds byte from skipped as well; what
 * follows it in the chunk where it ends goes to the transcript, and
 * stream() reads on from there. */
static int
skip_head(int fd, off_t from, struct transcript *tr, struct walk *w,
    char *chunk, const char *path, struct sc_err *err)
{
	off_t pos = 0;
	ssize_t got;
	const char *p, *end, *nl;

	for (;;) {
		got = read(fd, chunk, CHUNK);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0)
			return err_set(err, SC_EIO, "cannot read %s: %s", path,
			    strerror(errno));
		if (got == 0) {
			w->first = w->index; /* the head was all there was */
			return 0;
		}
		p = chunk;
		end = chunk + got;
		while ((nl = memchr(p, '\n', (size_t)(end - p))) != NULL) {
			w->index++;
			p = nl + 1;
			if (pos + (p - chunk) >= from) {
				w->first = w->index;
				return split(tr, w, p, (size_t)(end - p));
			}
		}
		pos += got;
	}
}

int
views_transcript_each(const char *path, const struct redact_values *secrets,
    views_transcript_fn fn, void *arg, struct sc_err *err)
{
	return views_transcript_each_tail(path, secrets, 0, NULL, fn, arg, err);
}

int
views_transcript_each_tail(const char *path,
    const struct redact_values *secrets, size_t tail, size_t *first_line,
    views_transcript_fn fn, void *arg, struct sc_err *err)
{
	struct walk *w = calloc(1, sizeof(*w));
	struct transcript *tr = NULL;
	char *chunk = malloc(CHUNK);
	struct stat sb;
	int fd = -1, rc;

	if (w == NULL || chunk == NULL ||
	    (w->line = malloc(VIEWS_TRANSCRIPT_LINE_CAP)) == NULL ||
	    (tr = transcript_new(on_event, w)) == NULL) {
		rc = err_set(err, SC_EOS, "out of memory");
		goto out;
	}
	w->secrets = secrets;
	w->fn = fn;
	w->arg = arg;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		rc = err_set(
		    err, SC_EIO, "cannot open %s: %s", path, strerror(errno));
		goto out;
	}
	rc = 0;
	if (tail > 0 && fstat(fd, &sb) == 0 && sb.st_size > (off_t)tail)
		rc = skip_head(
		    fd, sb.st_size - (off_t)tail, tr, w, chunk, path, err);
	if (first_line != NULL)
		*first_line = w->first;
	if (rc == 0)
		rc = stream(fd, tr, w, chunk, path, err);
out:
	if (fd >= 0)
		close(fd);
	transcript_free(tr);
	if (w != NULL)
		free(w->line);
	free(w);
	free(chunk);
	return rc;
}

/* ---- JSON ---- */

static int
set_str(json_t *o, const char *key, const char *s)
{
	if (s[0] == '\0')
		return 0;
	return json_object_set_new(o, key, json_string(s));
}

static int
set_num(json_t *o, const char *key, long long v)
{
	if (v < 0)
		return 0;
	return json_object_set_new(o, key, json_integer((json_int_t)v));
}

json_t *
views_transcript_event_json(const struct transcript_event *ev)
{
	json_t *o = json_object();
	int rc = 0;

	if (o == NULL)
		return NULL;
	rc |= set_num(o, "t", (long long)ev->t);
	rc |= set_str(o, "kind", transcript_kind_name(ev->kind));
	rc |= set_str(o, "ts", ev->ts);
	rc |= set_str(o, "role", ev->role);
	rc |= set_str(o, "tool", ev->tool);
	rc |= set_str(o, "id", ev->id);
	rc |= set_str(o, "command", ev->command);
	rc |= set_str(o, "path", ev->path);
	rc |= set_str(o, "status", ev->status);
	if (ev->has_exit)
		rc |= json_object_set_new(
		    o, "exit", json_integer(ev->exit_status));
	if (ev->kind == TRANSCRIPT_TOOL_RESULT)
		rc |= json_object_set_new(
		    o, "is_error", json_boolean(ev->is_error));
	if (ev->kind == TRANSCRIPT_ERROR)
		rc |= json_object_set_new(o, "retry", json_boolean(ev->retry));
	rc |= set_num(o, "tokens_in", ev->tokens_in);
	rc |= set_num(o, "tokens_out", ev->tokens_out);
	if (ev->has_cost)
		rc |=
		    json_object_set_new(o, "cost_usd", json_real(ev->cost_usd));
	rc |= set_str(o, "text", ev->text);
	if (ev->cut)
		rc |= json_object_set_new(o, "cut", json_true());
	if (rc != 0) {
		json_decref(o);
		o = NULL;
	}
	return o;
}

struct gather {
	json_t *a;
	bool oom;
};

static int
append_json(const struct transcript_event *ev, void *arg)
{
	struct gather *g = arg;
	json_t *o = views_transcript_event_json(ev);

	if (o == NULL || json_array_append_new(g->a, o) < 0) {
		g->oom = true;
		return SC_EOS;
	}
	return 0;
}

int
views_transcript_json(json_t **out, const char *path,
    const struct redact_values *secrets, struct sc_err *err)
{
	struct gather g = {json_array(), false};
	int rc;

	*out = NULL;
	if (g.a == NULL)
		return err_set(err, SC_EOS, "out of memory");
	rc = views_transcript_each(path, secrets, append_json, &g, err);
	if (g.oom)
		rc = err_set(err, SC_EOS, "out of memory");
	if (rc < 0)
		json_decref(g.a);
	else
		*out = g.a;
	return rc;
}

/* ---- human text ---- */

/* The head of the line: what the event is. */
static size_t
text_head(char *buf, size_t cap, const struct transcript_event *ev)
{
	const char *what = ev->command[0] ? ev->command : ev->path;

	switch (ev->kind) {
	case TRANSCRIPT_TOOL_CALL:
		return (size_t)snprintf(buf, cap, "[%zu] %s%s%s", ev->t,
		    ev->tool[0] ? ev->tool : "tool", what[0] ? ": " : "", what);
	case TRANSCRIPT_TOOL_RESULT:
		if (ev->has_exit)
			return (size_t)snprintf(buf, cap, "[%zu] %s exit %d",
			    ev->t, ev->tool[0] ? ev->tool : "result",
			    ev->exit_status);
		return (size_t)snprintf(buf, cap, "[%zu] %s %s", ev->t,
		    ev->tool[0] ? ev->tool : "result",
		    ev->status[0]      ? ev->status
			: ev->is_error ? "failed"
				       : "done");
	case TRANSCRIPT_ERROR:
		return (size_t)snprintf(
		    buf, cap, "[%zu] %s", ev->t, ev->retry ? "retry" : "error");
	case TRANSCRIPT_USAGE:
		if (ev->has_cost)
			return (size_t)snprintf(buf, cap,
			    "[%zu] usage: %lld in, %lld out, $%.4f", ev->t,
			    ev->tokens_in, ev->tokens_out, ev->cost_usd);
		return (size_t)snprintf(buf, cap,
		    "[%zu] usage: %lld in, %lld out", ev->t, ev->tokens_in,
		    ev->tokens_out);
	case TRANSCRIPT_FINAL:
		return (size_t)snprintf(buf, cap, "[%zu] final", ev->t);
	default:
		return (size_t)snprintf(buf, cap, "[%zu] %s", ev->t,
		    ev->role[0] ? ev->role : "message");
	}
}

size_t
views_transcript_text(char *buf, size_t cap, const struct transcript_event *ev)
{
	size_t n = text_head(buf, cap, ev), i;
	const char *s = ev->text;

	if (n >= cap)
		n = cap - 1;
	if (s[0] != '\0' && n + 2 < cap) {
		buf[n++] = ':';
		buf[n++] = ' ';
	}
	/* a text of several lines is indented under its head */
	for (i = 0; s[i] != '\0' && n + 3 < cap; i++) {
		buf[n++] = s[i];
		if (s[i] == '\n') {
			buf[n++] = ' ';
			buf[n++] = ' ';
		}
	}
	buf[n] = '\0';
	return n;
}

/* The tail's ring of lines: the newest max of them, oldest at head. */
struct tail {
	char (*line)[VIEWS_TRANSCRIPT_TAIL_LINE];
	size_t max, n, head, seen;
};

static int
tail_add(const struct transcript_event *ev, void *arg)
{
	struct tail *t = arg;
	char buf[TRANSCRIPT_TEXT_MAX + 256];
	size_t at, n;

	views_transcript_text(buf, sizeof(buf), ev);
	if (t->n < t->max) {
		at = (t->head + t->n++) % t->max;
	} else {
		at = t->head;
		t->head = (t->head + 1) % t->max;
	}
	n = (size_t)snprintf(
	    t->line[at], VIEWS_TRANSCRIPT_TAIL_LINE, "%s", buf);
	if (n >= VIEWS_TRANSCRIPT_TAIL_LINE)
		text_mark_cut(t->line[at], VIEWS_TRANSCRIPT_TAIL_LINE,
		    VIEWS_TRANSCRIPT_TAIL_LINE - 1);
	t->seen++;
	return 0;
}

int
views_transcript_tail(char **out, size_t *omitted, const char *path,
    const struct redact_values *secrets, size_t max_lines, struct sc_err *err)
{
	return views_transcript_tail_from(
	    out, omitted, NULL, path, secrets, max_lines, 0, err);
}

int
views_transcript_tail_from(char **out, size_t *omitted, size_t *first_line,
    const char *path, const struct redact_values *secrets, size_t max_lines,
    size_t tail, struct sc_err *err)
{
	struct tail t = {0};
	struct strbuf sb = STRBUF_INIT;
	size_t i;
	int rc;

	*out = NULL;
	*omitted = 0;
	t.max = max_lines > 0 ? max_lines : 1;
	t.line = calloc(t.max, sizeof(*t.line));
	if (t.line == NULL)
		return err_set(err, SC_EOS, "out of memory");
	rc = views_transcript_each_tail(
	    path, secrets, tail, first_line, tail_add, &t, err);
	for (i = 0; rc == 0 && i < t.n; i++) {
		strbuf_addstr(&sb, t.line[(t.head + i) % t.max]);
		strbuf_addstr(&sb, "\n");
	}
	if (rc == 0 && sb.oom)
		rc = err_set(err, SC_EOS, "out of memory");
	if (rc == 0) {
		*out = strbuf_detach(&sb, NULL);
		*omitted = t.seen - t.n;
		if (*out == NULL)
			rc = err_set(err, SC_EOS, "out of memory");
	}
	strbuf_release(&sb);
	free(t.line);
	return rc;
}
