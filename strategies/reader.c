/*
 * reader.c - see reader.h.
 *
 * The walk: the tail is split at '\n' only (a status line redrawn with
 * '\r' is one line), oldest line first.  Each line, trimmed of blanks
 * and NUL bytes, is one of
 *   - empty: nothing reads it;
 *   - inside a pretty-printed object already read: a window line for
 *     the classifier (its words count), nothing for agentout;
 *   - "{" opening a pretty-printed object (the next visible byte starts
 *     a key or closes it): parsed once to the object's end, which is
 *     that line's event;
 *   - a JSON value ('{' or '['): parsed once; an object is the line's
 *     event, an array's objects are events for agentout (claude
 *     --output-format json --verbose) and the line is text for the
 *     classifier;
 *   - else a plain line: agentout_text (aider's cost line, the last
 *     lines for the fallback), and a window line for the classifier.
 * The two parts keep the limits they always had, from the same parse:
 * agentout reads no value over AGENTOUT_JSON_MAX or AGENTOUT_JSON_DEPTH
 * (nor a pretty-printed object followed by text that nests deeper) and
 * drops such a line and a broken JSON line from its plain text; it
 * trims blanks but not NUL bytes, so a JSON line with a NUL beside it
 * is not JSON to it.  The classifier reads every object jansson parses
 * (jansson bounds the depth of its recursion).
 * The window is a ring of the last CLASSIFY_WINDOW non-empty lines; an
 * event is kept (parsed, not re-read) while its line is in the ring, so
 * that at most that many are alive at once.
 * A third part, when asked (adapter_read_transcript): the transcript
 * (strategies/transcript.h) gets every line that is not blank and not
 * inside a pretty-printed object, with the value parsed here (the
 * object a line "{" opens, a line's object or array, or NULL), so that
 * what `show --attempt` prints and what the verdict says come from one
 * walk and one parse (docs/agents.md#transcript).  It only reads: the
 * verdict and agent_output are the same with it or without.
 */
#include <stdbool.h>
#include <string.h>

#include <jansson.h>

#include "strategies/reader.h"
#include "strategies/reader_int.h"
#include "strategies/text.h"
#include "strategies/transcript.h"

struct walk {
	const char *t;
	size_t len;
	struct agentout_state ao;
	struct classify_line ring[CLASSIFY_WINDOW]; /* ring[i % WINDOW] */
	size_t nring;
	/* a line that starts before this is inside a pretty-printed
	 * object read from an earlier line */
	size_t json_end;
	/* the transcript fed from the same walk (NULL: none) and the
	 * index of the line being walked */
	struct transcript *tr;
	size_t lineno;
};

/* blank for the walk: spaces, line controls and NUL */
static bool
blank(unsigned char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f' ||
	    c == '\v' || c == '\0';
}

/* JSON-ish whitespace after a line "{": what may stand between it and
 * the first key */
static struct classify_line *
window_push(struct walk *w, size_t p, size_t e)
{
	struct classify_line *l = &w->ring[w->nring % CLASSIFY_WINDOW];

	if (w->nring >= CLASSIFY_WINDOW)
		json_decref(l->event);
	l->off = p;
	l->len = e - p;
	l->event = NULL;
	l->skip = false;
	w->nring++;
	return l;
}

/* Parse s[0..n) as one JSON value (flags: JSON_DISABLE_EOF_CHECK for a
 * value followed by more text; *used: the bytes it took); NULL when it
 * is not one.  jansson's own depth limit bounds the recursion. */
static json_t *
parse(const char *s, size_t n, size_t flags, size_t *used)
{
	json_error_t je;
	json_t *o;

	o = json_loadb(s, n, flags, &je);
	if (o != NULL && used != NULL)
		*used = je.position > 0 ? (size_t)je.position : n;
	return o;
}

/* The events of a parsed value, in order, to agentout. */
static void
events(struct walk *w, json_t *o)
{
	json_t *v;
	size_t i;

	if (json_is_object(o)) {
		agentout_event(&w->ao, o);
		return;
	}
	json_array_foreach(o, i, v)
	{
		if (json_is_object(v))
			agentout_event(&w->ao, v);
	}
}

/*
 * The line t[p..e) for agentout, which sees it trimmed of blanks but not
 * of NUL bytes (as, an): a JSON value within its limits is read (o, the
 * line's value parsed, or NULL when it did not parse as the same text),
 * one over them or broken is dropped, any other line is plain text.
 */
static void
agentout_line(
    struct walk *w, size_t p, size_t e, const char *as, size_t an, json_t *o)
{
	if (as[0] == '{' || as[0] == '[') {
		if (an > AGENTOUT_JSON_MAX ||
		    !text_json_depth_ok(as, an, AGENTOUT_JSON_DEPTH))
			return; /* too big or too deep: unread */
		if (o != NULL) {
			events(w, o);
			return;
		}
		/* broken or cut off: JSON all the same */
		if (as[0] == '{' &&
		    (as[an - 1] == '}' || (an > 1 && as[1] == '"')))
			return;
	} else if (p == 0 && as[an - 1] == '}') {
		/* the end of a JSON line whose start the tail cut off */
		return;
	}
	agentout_text(&w->ao, p, e);
}

/*
 * A line "{" at s: the pretty-printed object it opens (gemini
 * --output-format json), parsed once to its end and made the line's
 * event for the classifier.  agentout reads it too when it sees the
 * line as "{" (ao_ok: no NUL byte beside it) and the object is within
 * AGENTOUT_JSON_MAX and, with what follows, AGENTOUT_JSON_DEPTH; then
 * the lines up to its end are its own.  Returns 0 when it opens no
 * object, 1 when both read it, 2 when only the classifier did.
 */
static int
pretty_object(
    struct walk *w, struct classify_line *wl, const char *s, bool ao_ok)
{
	const char *t = w->t, *q = s + 1, *nl;
	size_t off = (size_t)(s - t), rest = w->len - off, used = 0;
	json_t *o;

	/* an object over several lines starts with a key or ends at once:
	 * C code does not */
	while (q < t + w->len && text_is_space((unsigned char)*q))
		q++;
	if (q >= t + w->len || (*q != '"' && *q != '}'))
		return 0;
	o = parse(s, rest, JSON_DISABLE_EOF_CHECK, &used);
	if (o == NULL)
		return 0;
	wl->event = o;
	if (rest > AGENTOUT_JSON_MAX)
		rest = AGENTOUT_JSON_MAX;
	if (!ao_ok || used > rest ||
	    !text_json_depth_ok(s, rest, AGENTOUT_JSON_DEPTH))
		return 2;
	events(w, o);
	nl = memchr(s + used - 1, '\n', w->len - off - used + 1);
	w->json_end = nl != NULL ? (size_t)(nl - t) + 1 : w->len;
	return 1;
}

/* The line t[p..e) to the transcript, with the value this walk parsed
 * from it (NULL: none), so that it is parsed once for both. */
static void
to_transcript(struct walk *w, size_t p, size_t e, json_t *v)
{
	struct transcript_line l;

	if (w->tr == NULL)
		return;
	memset(&l, 0, sizeof(l));
	l.s = w->t + p;
	l.n = e - p;
	l.index = w->lineno;
	l.parsed = true;
	l.value = v;
	transcript_push(w->tr, &l);
}

/* The JSON of the trimmed line s[0..n) (as[0..an) in agentout's view)
 * into the window's line wl and agentout: one parse for both; the
 * classifier reads an object, agentout an object or an array when it
 * sees the same text. */
static void
line_json(struct walk *w, struct classify_line *wl, size_t p, size_t e,
    const char *s, size_t n, const char *as, size_t an)
{
	bool nul_edge = as != s || an != n;
	json_t *o = NULL;
	int pretty;

	if (n == 1 && s[0] == '{') {
		pretty = pretty_object(w, wl, s, !nul_edge);
		if (pretty != 0)
			to_transcript(w, p, e, wl->event);
		if (pretty == 1)
			return;
		if (pretty == 2) {
			agentout_line(w, p, e, as, an, NULL);
			return;
		}
	}
	if (s[0] == '{' ||
	    (s[0] == '[' && !nul_edge && n <= AGENTOUT_JSON_MAX &&
		text_json_depth_ok(s, n, AGENTOUT_JSON_DEPTH)))
		o = parse(s, n, 0, NULL);
	if (o != NULL && json_is_object(o))
		wl->event = json_incref(o);
	to_transcript(w, p, e, o);
	agentout_line(w, p, e, as, an, nul_edge ? NULL : o);
	json_decref(o);
}

/* One line t[p..e) (e is its '\n' or the end of the tail). */
static void
walk_line(struct walk *w, size_t p, size_t e)
{
	const char *s = w->t + p, *as = s;
	size_t n = e - p, an = n;
	struct classify_line *wl;

	while (n > 0 && blank((unsigned char)s[0])) {
		s++;
		n--;
	}
	while (n > 0 && blank((unsigned char)s[n - 1]))
		n--;
	if (n == 0)
		return;
	wl = window_push(w, p, e);
	if (p < w->json_end)
		return;
	/* agentout's view: NUL bytes are not blanks to it */
	text_trim(&as, &an);
	line_json(w, wl, p, e, s, n, as, an);
}

int
adapter_read_transcript(struct agent_report *out,
    const struct classify_input *in, struct transcript *tr)
{
	struct classify_line win[CLASSIFY_WINDOW];
	struct walk wbuf, *w = &wbuf;
	const char *nl;
	size_t p = 0, e, i, n;

	memset(w->ring, 0, sizeof(w->ring));
	w->t = in->tail != NULL ? in->tail : "";
	w->len = in->tail != NULL ? in->tail_len : 0;
	w->nring = 0;
	w->json_end = 0;
	w->tr = tr;
	w->lineno = 0;
	memset(out, 0, sizeof(*out));
	agentout_begin(&w->ao, &out->output, w->t);
	while (p < w->len) {
		nl = memchr(w->t + p, '\n', w->len - p);
		e = nl != NULL ? (size_t)(nl - w->t) : w->len;
		walk_line(w, p, e);
		w->lineno++;
		p = e + 1;
	}
	agentout_end(&w->ao);
	/* the window, newest line first */
	n = w->nring < CLASSIFY_WINDOW ? w->nring : CLASSIFY_WINDOW;
	for (i = 0; i < n; i++)
		win[i] = w->ring[(w->nring - 1 - i) % CLASSIFY_WINDOW];
	classify_window(&out->verdict, in, win, (int)n);
	for (i = 0; i < n; i++)
		json_decref(win[i].event);
	return tr != NULL ? transcript_end(tr) : 0;
}

void
adapter_read(struct agent_report *out, const struct classify_input *in)
{
	(void)adapter_read_transcript(out, in, NULL);
}

/* What the one reader decides (the tail's other facts are dropped).
 * Here, not in classify.c: classify.c is a half of this reader, and a
 * half that called the whole would make a circle of calls. */
void
classify_attempt(struct classification *out, const struct classify_input *in)
{
	struct agent_report r;

	adapter_read(&r, in);
	*out = r.verdict;
}

/* What the one reader yields for the tail alone (no exit status); here
 * for the same reason. */
void
agentout_parse(struct agent_output *out, const char *tail, size_t len)
{
	struct classify_input in;
	struct agent_report r;

	memset(&in, 0, sizeof(in));
	in.tail = tail;
	in.tail_len = tail != NULL ? len : 0;
	adapter_read(&r, &in);
	*out = r.output;
}
