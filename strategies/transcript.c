/*
 * transcript.c - see transcript.h.
 *
 * One reader (docs/agents.md#transcript): strategies/reader.c, the
 * reader that classifies an attempt, hands each line of the tail it
 * walks to transcript_push() with the JSON value it parsed for the
 * verdict (adapter_read_transcript), so that what is shown and what is
 * decided come from one walk and one parse.  A whole log, too big for
 * the reader's in-memory tail, is fed line by line by the controller's
 * file streamer (controller/views/views_transcript.c); the transcript
 * then parses each line itself, with the same bounds.
 *
 * Memory: struct transcript holds a few fixed buffers (the event being
 * built, gemini's pending chunks, the final message, the last plain
 * lines) and, while a pretty-printed object is gathered, at most
 * TRANSCRIPT_LINE_MAX bytes more; nothing grows with the output.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "strategies/agentout.h"
#include "strategies/text.h"
#include "strategies/agentfield.h"
#include "strategies/transcript.h"
#include "strategies/transcript_int.h"

/* a text longer than this is not looked at past it: more than any
 * field holds once cleaned */
#define VIEW_MAX (4 * TRANSCRIPT_TEXT_MAX)
/* of a longer plain line, the fallback looks at its end only (as
 * agentout.c's AGENTOUT_VIEW_MAX) */
#define PLAIN_VIEW (2 * AGENTOUT_RESULT_MAX)

const char *
transcript_kind_name(enum transcript_kind k)
{
	static const char *const names[] = {
	    "message",
	    "tool_call",
	    "tool_result",
	    "error",
	    "usage",
	    "final",
	};

	if ((size_t)k >= sizeof(names) / sizeof(names[0]))
		return "message";
	return names[k];
}

struct transcript *
transcript_new(transcript_fn fn, void *arg)
{
	struct transcript *tr = calloc(1, sizeof(*tr));

	if (tr == NULL)
		return NULL;
	tr->fn = fn;
	tr->arg = arg;
	return tr;
}

void
transcript_free(struct transcript *tr)
{
	if (tr == NULL)
		return;
	free(tr->pretty);
	free(tr);
}

/* ---- building and emitting ---- */

static void
ev_clear(struct transcript_event *ev, enum transcript_kind k, size_t t,
    const char *ts)
{
	ev->kind = k;
	ev->t = t;
	snprintf(ev->ts, sizeof(ev->ts), "%s", ts);
	ev->role[0] = '\0';
	ev->text[0] = '\0';
	ev->cut = false;
	ev->tool[0] = '\0';
	ev->id[0] = '\0';
	ev->command[0] = '\0';
	ev->path[0] = '\0';
	ev->status[0] = '\0';
	ev->has_exit = false;
	ev->exit_status = 0;
	ev->is_error = false;
	ev->retry = false;
	ev->tokens_in = -1;
	ev->tokens_out = -1;
	ev->has_cost = false;
	ev->cost_usd = 0;
}

struct transcript_event *
transcript_ev(struct transcript *tr, enum transcript_kind k)
{
	ev_clear(&tr->ev, k, tr->t, tr->ts);
	return &tr->ev;
}

static void
call_fn(struct transcript *tr, const struct transcript_event *ev)
{
	int rc;

	if (tr->rc < 0 || tr->fn == NULL)
		return;
	rc = tr->fn(ev, tr->arg);
	if (rc < 0)
		tr->rc = rc;
}

/* gemini's chunks not yet shown, as one message */
static void
pend_flush(struct transcript *tr)
{
	struct transcript_event *ev = &tr->pend;

	if (!tr->pend_open)
		return;
	tr->pend_open = false;
	transcript_put(
	    ev, ev->text, sizeof(ev->text), tr->pend_raw, tr->pend_len);
	if (tr->pend_cut && !ev->cut) {
		/* the raw chunks did not fit: say so */
		size_t k = strlen(ev->text);

		ev->cut = true;
		if (k + sizeof(TRANSCRIPT_CUT) <= sizeof(ev->text))
			memcpy(ev->text + k, TRANSCRIPT_CUT,
			    sizeof(TRANSCRIPT_CUT));
	}
	if (ev->text[0] != '\0')
		call_fn(tr, ev);
}

void
transcript_emit(struct transcript *tr)
{
	pend_flush(tr);
	if (tr->ev.kind == TRANSCRIPT_ERROR)
		snprintf(tr->last_err, sizeof(tr->last_err), "%s", tr->ev.text);
	call_fn(tr, &tr->ev);
}

void
transcript_put(
    struct transcript_event *ev, char *dst, size_t cap, const char *s, size_t n)
{
	size_t mark = sizeof(TRANSCRIPT_CUT) - 1, k;
	bool cut = false, over = false;

	text_trim(&s, &n);
	if (n > VIEW_MAX) {
		n = VIEW_MAX;
		over = true;
	}
	k = text_clean(dst, cap - mark, s, n, TEXT_KEEP_NL | TEXT_TRIM, &cut);
	if (cut || over) {
		memcpy(dst + k, TRANSCRIPT_CUT, mark + 1);
		ev->cut = true;
	}
}

void
transcript_jput(struct transcript_event *ev, char *dst, size_t cap, json_t *s)
{
	dst[0] = '\0';
	if (json_is_string(s))
		transcript_put(
		    ev, dst, cap, json_string_value(s), json_string_length(s));
}

static void
buf_put(char *dst, size_t *len, const char *s, size_t n, bool append)
{
	size_t at = append ? *len : 0;
	size_t m = text_utf8_fit(s, n, TRANSCRIPT_TEXT_MAX - 1 - at);

	memcpy(dst + at, s, m);
	*len = at + m;
	dst[*len] = '\0';
}

void
transcript_final(struct transcript *tr, const char *s, size_t n, bool append)
{
	if (append)
		buf_put(tr->final, &tr->final_len, "\n", 1, true);
	buf_put(tr->final, &tr->final_len, s, n, append);
	tr->have_final = true;
	tr->final_t = tr->t;
}

void
transcript_summary_error(struct transcript *tr, json_t *s)
{
	struct transcript_event *ev = transcript_ev(tr, TRANSCRIPT_ERROR);

	transcript_jput(ev, ev->text, sizeof(ev->text), s);
	if (ev->text[0] == '\0' || strcmp(ev->text, tr->last_err) == 0)
		return;
	transcript_emit(tr);
}

void
transcript_call_add(struct transcript *tr, const char *id, const char *tool)
{
	struct transcript_call *c;

	if (id == NULL || id[0] == '\0' || transcript_call_tool(tr, id) != NULL)
		return;
	c = &tr->calls[tr->ncalls++ % TRANSCRIPT_CALLS];
	snprintf(c->id, sizeof(c->id), "%s", id);
	snprintf(c->tool, sizeof(c->tool), "%s", tool != NULL ? tool : "");
}

const char *
transcript_call_tool(const struct transcript *tr, const char *id)
{
	size_t i,
	    n = tr->ncalls < TRANSCRIPT_CALLS ? tr->ncalls : TRANSCRIPT_CALLS;

	for (i = 0; id != NULL && i < n; i++)
		if (strcmp(tr->calls[i].id, id) == 0)
			return tr->calls[i].tool;
	return NULL;
}

/* ---- gemini's chunks ---- */

void
transcript_chunk(struct transcript *tr, json_t *c, bool delta)
{
	const char *s = json_string_value(c);
	size_t n = json_string_length(c), before;

	if (!tr->run_open || !delta)
		tr->run_len = 0;
	buf_put(tr->run, &tr->run_len, s, n, true);
	tr->run_open = true;
	buf_put(tr->final, &tr->final_len, tr->run, tr->run_len, false);
	tr->have_final = true;
	tr->final_t = tr->t;
	if (!tr->pend_open) {
		ev_clear(&tr->pend, TRANSCRIPT_MESSAGE, tr->t, tr->ts);
		snprintf(tr->pend.role, sizeof(tr->pend.role), "assistant");
		tr->pend_len = 0;
		tr->pend_cut = false;
		tr->pend_open = true;
	}
	before = tr->pend_len;
	buf_put(tr->pend_raw, &tr->pend_len, s, n, true);
	if (tr->pend_len - before < n)
		tr->pend_cut = true;
}

/* ---- plain lines ---- */

static bool
starts(const char *s, size_t n, const char *w)
{
	size_t k = strlen(w);

	return n >= k && memcmp(s, w, k) == 0;
}

static bool
has(const char *s, size_t n, const char *w)
{
	return memmem(s, n, w, strlen(w)) != NULL;
}

/* A retry notice: gemini "Attempt 2 failed ... Retrying after 14737ms",
 * "Attempt 1 failed. Retrying with backoff...", "Suggested retry after
 * 7s.. Retrying after ..."; codex "Reconnecting... 1/5". */
static bool
plain_retry(const char *s, size_t n)
{
	return has(s, n, "Retrying") || has(s, n, "Reconnecting...") ||
	    starts(s, n, "Suggested retry") ||
	    (starts(s, n, "Attempt ") && has(s, n, " failed"));
}

/* An error line: "Error ...", "ERROR: ...", "error: ...", "Fatal ...",
 * "panic: ...", or one that names an error ("TypeError:", "API Error:",
 * "_ApiError:"). */
static bool
plain_error(const char *s, size_t n)
{
	static const char *const heads[] = {"Error", "ERROR", "error:", "Fatal",
	    "FATAL", "fatal:", "panic:", "Traceback"};
	size_t i;

	for (i = 0; i < sizeof(heads) / sizeof(heads[0]); i++)
		if (starts(s, n, heads[i]))
			return true;
	return has(s, n, "Error:") || has(s, n, "ERROR:");
}

/* Whether the cleaned s[0..n) shows anything. */
static bool
visible(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!text_is_space((unsigned char)s[i]))
			return true;
	return false;
}

/* The cleaned line s[0..n) at the end of the last plain lines: at most
 * AGENTOUT_TEXT_LINES of them in the buffer, whole, newest last; a
 * newest line alone too long keeps its end, and goes when another
 * comes (agentout.c's text_fallback). */
static void
plain_add(struct transcript *tr, const char *s, size_t n)
{
	char *b = tr->plain;
	size_t cap = sizeof(tr->plain) - 1, k, drop;

	if (n > cap) {
		k = n - cap;
		while (k < n && text_utf8_cont((unsigned char)s[k]))
			k++;
		memcpy(b, s + k, n - k);
		tr->plain_len = n - k;
		tr->plain_lines = 1;
		tr->plain_partial = true;
		return;
	}
	if (tr->plain_partial)
		tr->plain_len = tr->plain_lines = 0;
	tr->plain_partial = false;
	if (tr->plain_len > 0)
		b[tr->plain_len++] = '\n';
	/* room made first: the buffer has one byte over cap for the NUL */
	while (tr->plain_len > 0 &&
	    (tr->plain_len + n > cap ||
		tr->plain_lines >= AGENTOUT_TEXT_LINES)) {
		drop = 0;
		while (drop < tr->plain_len && b[drop] != '\n')
			drop++;
		drop = drop < tr->plain_len ? drop + 1 : drop;
		memmove(b, b + drop, tr->plain_len - drop);
		tr->plain_len -= drop;
		tr->plain_lines--;
	}
	memcpy(b + tr->plain_len, s, n);
	tr->plain_len += n;
	b[tr->plain_len] = '\0';
	tr->plain_lines++;
}

/* The raw line r[0..n) for the last plain lines, as a terminal shows
 * it last: the last '\r'-separated part with visible text (a redrawn
 * progress line counts once), cleaned, blanks at its end trimmed. */
static void
plain_keep(struct transcript *tr, const char *r, size_t n)
{
	char tmp[PLAIN_VIEW + 1];
	size_t end = n, b, from, k;

	for (;;) {
		b = end;
		while (b > 0 && r[b - 1] != '\r')
			b--;
		from = b;
		if (end - from > PLAIN_VIEW) {
			from = end - PLAIN_VIEW;
			while (from < end &&
			    text_utf8_cont((unsigned char)r[from]))
				from++;
		}
		k = text_clean(tmp, sizeof(tmp), r + from, end - from, 0, NULL);
		while (k > 0 && text_is_space((unsigned char)tmp[k - 1]))
			k--;
		if (visible(tmp, k)) {
			plain_add(tr, tmp, k);
			tr->plain_t = tr->t;
			return;
		}
		if (b == 0)
			return;
		end = b - 1;
	}
}

/* The amount that ends just before s + at (at most back to s). */
static double
amount_before(const char *s, const char *at)
{
	const char *q = at;

	while (q > s && agentfield_amount_char(q[-1]))
		q--;
	return agentfield_amount(q, (size_t)(at - q));
}

/* aider: "Tokens: 4.1k sent, 1.2k cache write, 412 received. Cost: $0.03
 * message, $0.03 session." as a usage event; false when the line is not
 * one (the message line then shows it) */
static bool
plain_usage(struct transcript *tr, const char *s, size_t n)
{
	const char *end = s + n, *p, *r, *c, *q;
	struct transcript_event *ev;
	double d;

	p = memmem(s, n, "Tokens: ", 8);
	r = p != NULL ? memmem(p, (size_t)(end - p), " received", 9) : NULL;
	if (r == NULL)
		return false;
	ev = transcript_ev(tr, TRANSCRIPT_USAGE);
	q = p + 8;
	while (q < r && agentfield_amount_char(*q))
		q++;
	d = agentfield_amount(p + 8, (size_t)(q - p - 8));
	ev->tokens_in = d >= 0 ? (long long)(d + 0.5) : -1;
	d = amount_before(p, r);
	ev->tokens_out = d >= 0 ? (long long)(d + 0.5) : -1;
	c = memmem(r, (size_t)(end - r), "Cost: ", 6);
	q = c != NULL ? memmem(c, (size_t)(end - c), " session", 8) : NULL;
	if (q != NULL && (d = amount_before(c, q)) >= 0) {
		p = q;
		while (p > c && agentfield_amount_char(p[-1]))
			p--;
		if (p > c && p[-1] == '$') {
			ev->has_cost = true;
			ev->cost_usd = d;
		}
	}
	transcript_emit(tr);
	return true;
}

/* aider: "Applied edit to src/parse.c" as the call that edited it */
static bool
plain_edit(struct transcript *tr, const char *s, size_t n)
{
	struct transcript_event *ev;

	if (!starts(s, n, "Applied edit to ") || n == 16)
		return false;
	ev = transcript_ev(tr, TRANSCRIPT_TOOL_CALL);
	snprintf(ev->tool, sizeof(ev->tool), "edit");
	transcript_put(ev, ev->path, sizeof(ev->path), s + 16, n - 16);
	transcript_emit(tr);
	return true;
}

/*
 * A line that is not JSON.  After an error line, the lines indented
 * under it (a stack trace, a dumped object and its closing brace) are
 * part of it and not shown; the raw log keeps them.
 */
static void
plain_line(struct transcript *tr, const char *raw, size_t rn, bool cut)
{
	const char *s = raw;
	size_t n = rn;
	struct transcript_event *ev;
	bool retry;

	text_trim(&s, &n);
	if (n == 0)
		return;
	/* the fallback final message keeps every plain line, as
	 * agentout's does */
	plain_keep(tr, raw, rn);
	if (tr->in_trace &&
	    (raw[0] == ' ' || raw[0] == '\t' ||
		(n == 1 && (s[0] == '}' || s[0] == ']'))))
		return;
	tr->in_trace = false;
	if (n <= VIEW_MAX && (plain_usage(tr, s, n) || plain_edit(tr, s, n)))
		return;
	retry = plain_retry(s, n < VIEW_MAX ? n : VIEW_MAX);
	if (retry || plain_error(s, n < VIEW_MAX ? n : VIEW_MAX)) {
		ev = transcript_ev(tr, TRANSCRIPT_ERROR);
		ev->retry = retry;
		tr->in_trace = true;
	} else {
		ev = transcript_ev(tr, TRANSCRIPT_MESSAGE);
		snprintf(ev->role, sizeof(ev->role), "text");
	}
	transcript_put(ev, ev->text, sizeof(ev->text), s, n);
	if (cut && !ev->cut) {
		n = strlen(ev->text);
		ev->cut = true;
		if (n + sizeof(TRANSCRIPT_CUT) <= sizeof(ev->text))
			memcpy(ev->text + n, TRANSCRIPT_CUT,
			    sizeof(TRANSCRIPT_CUT));
	}
	transcript_emit(tr);
}

/* ---- JSON lines ---- */

/* One JSON value of the output: an object, or an array of them (claude
 * --output-format json --verbose). */
static void
json_value(struct transcript *tr, json_t *v)
{
	json_t *o;
	size_t i;

	if (json_is_object(v)) {
		tr->any_json = true;
		if (!transcript_json(tr, v))
			tr->run_open = false;
		return;
	}
	json_array_foreach(v, i, o)
	{
		if (!json_is_object(o))
			continue;
		tr->any_json = true;
		if (!transcript_json(tr, o))
			tr->run_open = false;
	}
}

/* The line's value parsed here: a line that is one JSON value within
 * TRANSCRIPT_LINE_MAX and AGENTOUT-like depth; NULL when it is not. */
static json_t *
line_parse(const char *s, size_t n, bool cut)
{
	json_error_t je;

	if (cut || n > TRANSCRIPT_LINE_MAX || (s[0] != '{' && s[0] != '[') ||
	    !text_json_depth_ok(s, n, 128))
		return NULL;
	return json_loadb(s, n, 0, &je);
}

/* ---- pretty-printed objects (gemini --output-format json) ---- */

/* Add a line to the object gathered; false when it would pass
 * TRANSCRIPT_LINE_MAX (or memory ran out). */
static bool
pretty_add(struct transcript *tr, const char *s, size_t n)
{
	char *p;

	if (tr->pretty_len + n + 1 > TRANSCRIPT_LINE_MAX)
		return false;
	if (tr->pretty == NULL) {
		p = malloc(TRANSCRIPT_LINE_MAX);
		if (p == NULL)
			return false;
		tr->pretty = p;
	}
	memcpy(tr->pretty + tr->pretty_len, s, n);
	tr->pretty_len += n;
	tr->pretty[tr->pretty_len++] = '\n';
	return true;
}

/* The gathered object is complete, too big, or the output ended: its
 * events, or one message saying it is not shown. */
static void
pretty_done(struct transcript *tr, bool whole)
{
	struct transcript_event *ev;
	json_error_t je;
	json_t *o = NULL;
	size_t t = tr->t;

	tr->gathering = false;
	if (whole && tr->pretty != NULL &&
	    text_json_depth_ok(tr->pretty, tr->pretty_len, 128))
		o = json_loadb(tr->pretty, tr->pretty_len, 0, &je);
	tr->t = tr->pretty_t;
	tr->ts[0] = '\0';
	if (o != NULL) {
		json_value(tr, o);
	} else {
		ev = transcript_ev(tr, TRANSCRIPT_MESSAGE);
		snprintf(ev->role, sizeof(ev->role), "text");
		snprintf(ev->text, sizeof(ev->text),
		    "{ (an object over %zu bytes, or broken: not shown)",
		    TRANSCRIPT_LINE_MAX);
		ev->cut = true;
		transcript_emit(tr);
	}
	tr->t = t;
	json_decref(o);
	tr->pretty_len = 0;
}

/* A line while an object is gathered: true when it took the line. */
static bool
pretty_line(struct transcript *tr, const char *raw, size_t rn)
{
	const char *s = raw;
	size_t n = rn, t = tr->t;

	text_trim(&s, &n);
	if (!tr->pretty_checked && n > 0) {
		tr->pretty_checked = true;
		if (s[0] != '"' && s[0] != '}') {
			/* C code, not an object: "{" was a line of text */
			tr->gathering = false;
			tr->pretty_len = 0;
			tr->t = tr->pretty_t;
			plain_line(tr, "{", 1, false);
			tr->t = t;
			return false;
		}
	}
	if (!pretty_add(tr, raw, rn)) {
		/* too big: said once, and the lines after it are text */
		pretty_done(tr, false);
		return false;
	}
	if (rn > 0 && raw[0] == '}')
		pretty_done(tr, true);
	return true;
}

/* ---- the walk ---- */

static void
line_ts(struct transcript *tr, json_t *v)
{
	json_t *ts = json_object_get(v, "timestamp");

	tr->ts[0] = '\0';
	if (json_is_string(ts) && json_string_length(ts) < sizeof(tr->ts))
		text_clean(tr->ts, sizeof(tr->ts), json_string_value(ts),
		    json_string_length(ts), 0, NULL);
}

int
transcript_push(struct transcript *tr, const struct transcript_line *l)
{
	const char *s = l->s != NULL ? l->s : "";
	size_t n = l->s != NULL ? l->n : 0;
	json_t *v;

	tr->t = l->index;
	tr->ts[0] = '\0';
	if (l->inside || tr->rc < 0)
		goto out;
	if (tr->gathering && pretty_line(tr, s, n))
		goto out;
	text_trim(&s, &n);
	if (n == 0)
		goto out; /* a blank line shows nothing */
	if (!l->parsed && !l->cut && n == 1 && s[0] == '{') {
		tr->gathering = true;
		tr->pretty_checked = false;
		tr->pretty_t = l->index;
		tr->pretty_len = 0;
		(void)pretty_add(tr, "{", 1);
		goto out;
	}
	v = l->parsed ? json_incref(l->value) : line_parse(s, n, l->cut);
	if (v != NULL && (json_is_object(v) || json_is_array(v))) {
		line_ts(tr, v);
		json_value(tr, v);
	} else {
		plain_line(tr, l->s != NULL ? l->s : "", l->n, l->cut);
	}
	json_decref(v);
out:
	return tr->rc;
}

int
transcript_end(struct transcript *tr)
{
	struct transcript_event *ev;

	if (tr->gathering)
		pretty_done(tr, true);
	pend_flush(tr);
	ev = transcript_ev(tr, TRANSCRIPT_FINAL);
	if (tr->have_final) {
		ev->t = tr->final_t;
		transcript_put(
		    ev, ev->text, sizeof(ev->text), tr->final, tr->final_len);
	}
	if (ev->text[0] == '\0') {
		/* no structured message: the last plain lines */
		ev->t = tr->plain_t;
		ev->cut = false;
		transcript_put(
		    ev, ev->text, sizeof(ev->text), tr->plain, tr->plain_len);
	}
	ev->ts[0] = '\0';
	if (ev->text[0] != '\0')
		transcript_emit(tr);
	return tr->rc;
}
