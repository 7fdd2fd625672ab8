/*
 * agentout.c - see agentout.h.
 *
 * The part of the one reader (strategies/reader.c) that keeps what the
 * agent reported: the reader walks the tail once, oldest line first, and
 * hands over every JSON event it parsed (agentout_event) and every plain
 * line (agentout_text), so that "the newest report wins" is simply the
 * last assignment.  A plain line is kept in a ring of the last
 * AGENTOUT_TEXT_LINES visible lines for the fallback and scanned for
 * aider's cost line.  Nothing is allocated: the state (struct
 * agentout_state, reader_int.h) lives on the reader's stack and is
 * bounded.
 */
#include <math.h>
#include <stdbool.h>
#include <string.h>

#include <jansson.h>

#include "strategies/agentfield.h"
#include "strategies/agentout.h"
#include "strategies/reader_int.h"
#include "strategies/text.h"

#define VIEW_MAX AGENTOUT_VIEW_MAX

/* Trim the NUL-terminated s of length n in place; returns the new length. */
static size_t
trim_inplace(char *s, size_t n)
{
	const char *p = s;
	size_t m = n;

	text_trim(&p, &m);
	memmove(s, p, m);
	s[m] = '\0';
	return m;
}

/* Set (or append to) the bounded message buffer dst from the valid UTF-8
 * src[0..n), cutting at a character boundary. */
static void
msg_put(char *dst, size_t *dlen, const char *src, size_t n, bool append)
{
	size_t at = append ? *dlen : 0;
	size_t m = text_utf8_fit(src, n, AGENTOUT_RESULT_MAX - 1 - at);

	memcpy(dst + at, src, m);
	*dlen = at + m;
	dst[*dlen] = '\0';
}

/* ---- JSON events ---- */

static void
msg_from(struct agentout_state *st, json_t *s)
{
	msg_put(st->out->result_text, &st->msg_len, json_string_value(s),
	    json_string_length(s), false);
	st->have_msg = true;
}

static void
tokens_set(struct agentout_state *st, long long in, long long out)
{
	if (in >= 0)
		st->out->input_tokens = in;
	if (out >= 0)
		st->out->output_tokens = out;
}

static void
cost_set(struct agentout_state *st, double d)
{
	if (!isfinite(d) || d < 0)
		return;
	st->out->has_cost = true;
	st->out->cost_usd = d;
}

/* error.message of o, or NULL */
static json_t *
jerror_text(json_t *o)
{
	json_t *e = json_object_get(o, "error");

	if (json_is_object(e))
		return agentfield_text(e, "message");
	return NULL;
}

/*
 * The session id in the string s: cleaned of controls (text_clean) and
 * trimmed; one that is empty or does not fit is not kept, so that a
 * newer broken one leaves the older good one.
 */
static void
session_from(struct agentout_state *st, json_t *s)
{
	char *id = st->out->session_id;
	char buf[AGENTOUT_SESSION_MAX];
	bool cut = false;
	size_t k;

	if (!json_is_string(s) || json_string_length(s) == 0 ||
	    json_string_length(s) > VIEW_MAX)
		return;
	k = text_clean(buf, sizeof(buf), json_string_value(s),
	    json_string_length(s), 0, &cut);
	k = trim_inplace(buf, k);
	if (cut || k == 0)
		return;
	memcpy(id, buf, k + 1);
}

/*
 * {"type":"result"}: claude (result, total_cost_usd or the older
 * cost_usd, usage; a failed run may carry "errors" instead of "result")
 * and gemini stream-json (status, error, stats).
 */
static void
on_result(struct agentout_state *st, json_t *o)
{
	json_t *v, *u;
	size_t n;

	v = json_object_get(o, "total_cost_usd");
	if (!json_is_number(v))
		v = json_object_get(o, "cost_usd");
	if (json_is_number(v))
		cost_set(st, json_number_value(v));
	u = json_object_get(o, "usage");
	if (json_is_object(u)) {
		tokens_set(st, agentfield_claude_input(u),
		    agentfield_count(json_object_get(u, "output_tokens")));
	}
	u = json_object_get(o, "stats");
	if (json_is_object(u))
		tokens_set(st,
		    agentfield_count(json_object_get(u, "input_tokens")),
		    agentfield_count(json_object_get(u, "output_tokens")));
	if ((v = agentfield_text(o, "result")) != NULL) {
		msg_from(st, v);
	} else if ((v = jerror_text(o)) != NULL) {
		msg_from(st, v);
	} else {
		u = json_object_get(o, "errors");
		n = json_array_size(u);
		if (n > 0 && (v = json_array_get(u, n - 1)) != NULL &&
		    json_is_string(v) && json_string_length(v) > 0)
			msg_from(st, v);
	}
}

/* claude {"type":"assistant","message":{"content":[{"type":"text",
 * "text":...},{"type":"tool_use",...}]}}: its text blocks, if any */
static void
on_claude_assistant(struct agentout_state *st, json_t *o)
{
	json_t *content =
	    json_object_get(json_object_get(o, "message"), "content");
	json_t *b, *t;
	size_t i;
	bool first = true;

	for (i = 0; i < json_array_size(content); i++) {
		b = json_array_get(content, i);
		if ((t = agentfield_text(b, "text")) == NULL)
			continue;
		if (!first)
			msg_put(
			    st->out->result_text, &st->msg_len, "\n", 1, true);
		msg_put(st->out->result_text, &st->msg_len,
		    json_string_value(t), json_string_length(t), !first);
		first = false;
		st->have_msg = true;
	}
}

/* gemini {"type":"message","role":"assistant","content":...,"delta":true}:
 * the chunks of one answer are concatenated; anything but another chunk
 * (a tool call, its result, a user message) ends the answer. */
static bool
on_gemini_message(struct agentout_state *st, json_t *o)
{
	json_t *c = agentfield_text(o, "content");

	if (!agentfield_is(o, "role", "assistant") || c == NULL)
		return false;
	if (!st->run_open || !json_is_true(json_object_get(o, "delta")))
		st->run_len = 0;
	msg_put(st->run, &st->run_len, json_string_value(c),
	    json_string_length(c), true);
	st->run_open = true;
	msg_put(
	    st->out->result_text, &st->msg_len, st->run, st->run_len, false);
	st->have_msg = true;
	return true;
}

/* codex exec --json item.completed: the agent's message ("type":
 * "agent_message"; "item_type":"assistant_message" in 0.4x) */
static void
on_codex_item(struct agentout_state *st, json_t *o)
{
	json_t *item = json_object_get(o, "item");
	json_t *t;

	if (!agentfield_is(item, "type", "agent_message") &&
	    !agentfield_is(item, "item_type", "assistant_message") &&
	    !agentfield_is(item, "item_type", "agent_message"))
		return;
	if ((t = agentfield_text(item, "text")) != NULL)
		msg_from(st, t);
}

/* the legacy codex --json {"id":..,"msg":{"type":..}} events */
static void
on_codex_legacy(struct agentout_state *st, json_t *m)
{
	json_t *t, *u;

	if (agentfield_is(m, "type", "agent_message")) {
		if ((t = agentfield_text(m, "message")) != NULL)
			msg_from(st, t);
	} else if (agentfield_is(m, "type", "task_complete")) {
		if ((t = agentfield_text(m, "last_agent_message")) != NULL)
			msg_from(st, t);
	} else if (agentfield_is(m, "type", "session_configured")) {
		session_from(st, json_object_get(m, "session_id"));
	} else if (agentfield_is(m, "type", "token_count")) {
		u = json_object_get(
		    json_object_get(m, "info"), "total_token_usage");
		if (!json_is_object(u))
			u = m;
		tokens_set(st,
		    agentfield_count(json_object_get(u, "input_tokens")),
		    agentfield_count(json_object_get(u, "output_tokens")));
	}
}

/* gemini --output-format json: {"session_id":..,"response":..,"stats":
 * {"models":{"<m>":{"tokens":{"prompt":..,"candidates":..}}}},
 * "error":{..}} */
static void
on_gemini_json(struct agentout_state *st, json_t *o)
{
	json_t *v, *m, *t;
	const char *key;
	long long in = -1, out = -1, p, c;

	/* a bare {"session_id":..} is no gemini report */
	if (json_object_get(o, "response") != NULL ||
	    json_object_get(o, "stats") != NULL ||
	    json_object_get(o, "error") != NULL)
		session_from(st, json_object_get(o, "session_id"));
	if ((v = agentfield_text(o, "response")) != NULL)
		msg_from(st, v);
	else if ((v = jerror_text(o)) != NULL)
		msg_from(st, v);
	v = json_object_get(json_object_get(o, "stats"), "models");
	json_object_foreach(v, key, m)
	{
		t = json_object_get(m, "tokens");
		p = agentfield_count(json_object_get(t, "prompt"));
		c = agentfield_count(json_object_get(t, "candidates"));
		if (p >= 0)
			in = (in < 0 ? 0 : in) + p;
		if (c >= 0)
			out = (out < 0 ? 0 : out) + c;
	}
	tokens_set(st, in, out);
}

/*
 * The events that carry the session id: claude's (system/init,
 * assistant, user, result), gemini stream-json's init, codex's older
 * session.created; codex 0.169's thread.started names it thread_id.
 */
static bool
session_event(const char *type)
{
	static const char *const types[] = {
	    "system",
	    "assistant",
	    "user",
	    "result",
	    "init",
	    "session.created",
	};
	size_t i;

	for (i = 0; i < sizeof(types) / sizeof(types[0]); i++)
		if (strcmp(type, types[i]) == 0)
			return true;
	return false;
}

void
agentout_event(struct agentout_state *st, json_t *o)
{
	const char *type = json_string_value(json_object_get(o, "type"));
	bool keep_run = false;
	json_t *v;

	if (type == NULL) {
		v = json_object_get(o, "msg");
		if (json_is_object(v))
			on_codex_legacy(st, v);
		else if (json_object_get(o, "response") != NULL ||
		    json_is_object(json_object_get(o, "stats")) ||
		    json_object_get(o, "session_id") != NULL)
			on_gemini_json(st, o);
	} else if (strcmp(type, "thread.started") == 0) {
		session_from(st, json_object_get(o, "thread_id"));
	} else if (strcmp(type, "result") == 0) {
		on_result(st, o);
	} else if (strcmp(type, "assistant") == 0) {
		on_claude_assistant(st, o);
	} else if (strcmp(type, "message") == 0) {
		keep_run = on_gemini_message(st, o);
	} else if (strcmp(type, "item.completed") == 0) {
		on_codex_item(st, o);
	} else if (strcmp(type, "turn.completed") == 0) {
		v = json_object_get(o, "usage");
		tokens_set(st,
		    agentfield_count(json_object_get(v, "input_tokens")),
		    agentfield_count(json_object_get(v, "output_tokens")));
	} else if (strcmp(type, "turn.failed") == 0) {
		if ((v = jerror_text(o)) != NULL)
			msg_from(st, v);
	} else if (strcmp(type, "error") == 0) {
		/* a warning or retry notice between two chunks */
		keep_run = true;
	}
	if (type != NULL && session_event(type))
		session_from(st, json_object_get(o, "session_id"));
	if (!keep_run)
		st->run_open = false;
}

/* ---- plain text ---- */

/* A number at the end of a cost: digits, '.', ','. */
static bool
num_char(char c)
{
	return (c >= '0' && c <= '9') || c == '.' || c == ',';
}

/* aider's format_tokens(): "997", "1,234", "1.6k", "12k", "1.2M" */
static long long
count_of(const char *s, size_t n)
{
	double d = agentfield_amount(s, n);

	return d < 0 ? -1 : (long long)(d + 0.5);
}

/*
 * aider: "Tokens: 1.6k sent, 2.1k cache write, 997 received. Cost: $0.02
 * message, $0.31 session." (one line; older versions say "request" for
 * "message").  s is the line without escape sequences.
 */
static void
aider_line(struct agentout_state *st, const char *s, size_t n)
{
	const char *end = s + n, *p, *q, *r;
	long long sent, recv;
	double d;

	p = memmem(s, n, "Tokens:", 7);
	if (p != NULL) {
		p += 7;
		while (p < end && *p == ' ')
			p++;
		q = p;
		while (q < end && agentfield_amount_char(*q))
			q++;
		r = memmem(q, (size_t)(end - q), " received", 9);
		sent = count_of(p, (size_t)(q - p));
		if (r != NULL && sent >= 0) {
			q = r;
			while (q > p && agentfield_amount_char(q[-1]))
				q--;
			recv = count_of(q, (size_t)(r - q));
			if (recv >= 0)
				tokens_set(st, sent, recv);
		}
	}
	p = memmem(s, n, "Cost:", 5);
	if (p == NULL)
		return;
	r = memmem(p, (size_t)(end - p), " session", 8);
	if (r == NULL)
		return;
	q = r;
	while (q > p && num_char(q[-1]))
		q--;
	if (q > p && q[-1] == '$' &&
	    (d = agentfield_amount(q, (size_t)(r - q))) >= 0)
		cost_set(st, d);
}

static bool
has_visible(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!text_is_space((unsigned char)s[i]))
			return true;
	return false;
}

/*
 * A plain line t[p..e): checked for aider's usage report, then the part a
 * terminal would show last (the last '\r'-separated segment with visible
 * text: a redrawn progress line counts once) goes into the ring.
 */
void
agentout_text(struct agentout_state *st, size_t p, size_t e)
{
	const char *t = st->tail;
	size_t b, end = e, voff, k;

	if (e - p <= VIEW_MAX &&
	    (memmem(t + p, e - p, "Cost:", 5) != NULL ||
		memmem(t + p, e - p, "Tokens:", 7) != NULL)) {
		k = text_clean(st->tmp, sizeof(st->tmp), t + p, e - p, 0, NULL);
		aider_line(st, st->tmp, k);
	}
	for (;;) {
		b = end;
		while (b > p && t[b - 1] != '\r')
			b--;
		voff = b;
		if (end - voff > VIEW_MAX) {
			voff = end - VIEW_MAX;
			while (voff < end &&
			    text_utf8_cont((unsigned char)t[voff]))
				voff++;
		}
		k = text_clean(
		    st->tmp, sizeof(st->tmp), t + voff, end - voff, 0, NULL);
		if (has_visible(st->tmp, k)) {
			st->ring[st->nring % AGENTOUT_TEXT_LINES].off = voff;
			st->ring[st->nring % AGENTOUT_TEXT_LINES].len =
			    end - voff;
			st->nring++;
			return;
		}
		if (b == p)
			return;
		end = b - 1;
	}
}

/* The last plain lines, newest last, bounded from the front; a line keeps
 * its indentation. */
static void
text_fallback(struct agentout_state *st)
{
	char *buf = st->out->result_text;
	size_t cap = AGENTOUT_RESULT_MAX - 1, pos = cap, n, i, k, from;
	const struct agentout_span *sp;
	const char *l;

	n = st->nring < AGENTOUT_TEXT_LINES ? st->nring : AGENTOUT_TEXT_LINES;
	for (i = 0; i < n; i++) {
		sp = &st->ring[(st->nring - 1 - i) % AGENTOUT_TEXT_LINES];
		k = text_clean(st->tmp, sizeof(st->tmp), st->tail + sp->off,
		    sp->len, 0, NULL);
		l = st->tmp;
		while (k > 0 && text_is_space((unsigned char)l[k - 1]))
			k--;
		if (k + (pos < cap ? 1 : 0) > pos) {
			if (pos == cap) {
				/* the newest line alone is too long: its end */
				from = k - cap;
				while (from < k &&
				    text_utf8_cont((unsigned char)l[from]))
					from++;
				pos = cap - (k - from);
				memcpy(buf + pos, l + from, k - from);
			}
			break;
		}
		if (pos < cap)
			buf[--pos] = '\n';
		pos -= k;
		memcpy(buf + pos, l, k);
	}
	memmove(buf, buf + pos, cap - pos);
	buf[cap - pos] = '\0';
	trim_inplace(buf, cap - pos);
}

void
agentout_end(struct agentout_state *st)
{
	struct agent_output *out = st->out;
	size_t k;

	if (st->have_msg) {
		k = text_clean(st->tmp, sizeof(st->tmp), out->result_text,
		    st->msg_len, TEXT_KEEP_NL, NULL);
		memcpy(out->result_text, st->tmp, k + 1);
		if (trim_inplace(out->result_text, k) > 0) {
			out->structured = true;
			return;
		}
	}
	text_fallback(st);
}

void
agentout_begin(
    struct agentout_state *st, struct agent_output *out, const char *tail)
{
	memset(out, 0, sizeof(*out));
	out->input_tokens = -1;
	out->output_tokens = -1;
	memset(st, 0, sizeof(*st));
	st->out = out;
	st->tail = tail;
}
