/*
 * classify.c - see classify.h; the rules are written out, with the real
 * messages they come from, in docs/classification.md.
 *
 * The part of the one reader (strategies/reader.c) that decides: the
 * reader splits the tail and parses its JSON events once, and hands over
 * the last CLASSIFY_WINDOW non-empty lines (the "window"), each with the
 * event it holds: an agent's transcript is full of tool output that
 * mentions 401s, timeouts and errors, and only its end says why it
 * stopped.  In the window, a final result/error event decides first,
 * and content events (assistant text, tool results, a result that
 * succeeded) are never matched as text.
 * Every other line gets at most one kind from the ordered pattern table
 * (classify_line.c); the events are read by classify_event.c; then the kinds of the whole window are resolved by class
 * precedence (user patterns, permanent, usage limit, quota, rate limit,
 * network).
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "strategies/classify.h"
#include "strategies/classify_int.h"
#include "strategies/reader_int.h"
#include "strategies/text.h"

/* lines read as one error block, from the newest matching line up: a
 * pretty-printed API error is about this long */
#define CLASSIFY_BLOCK 24

/*
 * The message stored with a classification: control characters, C1
 * controls and escape sequences become single spaces (text_clean()),
 * invalid UTF-8 bytes become '?', and the result is cut at a character
 * boundary to fit cap bytes.
 */
static void
msg_set(char *dst, size_t cap, const char *s, size_t n)
{
	dst[0] = '\0';
	if (s == NULL)
		return;
	text_clean(dst, cap, s, n, TEXT_COLLAPSE | TEXT_MARK_INVALID, NULL);
}

/* A stack frame ("    at GetAddrInfoReqWrap.onlookupall (node:dns:120)",
 * "  File \"x.py\", line 3, in f"): function names and paths, never the
 * reason; "GetAddrInfo" must not stand in for the error line above it. */
static bool
stack_frame(const char *s, size_t n)
{
	size_t i = 0;

	while (i < n && (s[i] == ' ' || s[i] == '\t'))
		i++;
	if (i == 0)
		return false;
	return (n - i > 3 && text_ci_eq(s + i, "at ", 3)) ||
	    (n - i > 6 && text_ci_eq(s + i, "file \"", 6));
}

static void
decide(struct classification *out, enum error_code code, const char *msg,
    size_t msglen)
{
	out->code = code;
	out->outcome = errcode_outcome(code);
	msg_set(out->message, sizeof(out->message), msg, msglen);
}

/* The classes of kinds, in precedence order
 * (docs/classification.md#precedence). */
struct kind_class {
	enum kind kinds[6]; /* ends at K_NONE */
	bool newest_wins; /* else the first kind listed wins */
	bool needs_hint; /* only with a reset time in the tail */
	bool whole_window; /* else only the newest error block */
};

static const struct kind_class classes[] = {
    /* the user's patterns win wherever they are in the window */
    {{K_USER_PERM}, false, false, true},
    {{K_USER_NET}, false, false, true},
    /* the newest permanent message is the reason it stopped */
    {{K_AUTH, K_PERM, K_MODEL, K_BUDGET, K_QUOTA_HARD}, true, false, false},
    {{K_USAGE}, false, true, false},
    {{K_QUOTA_SOFT}, false, false, false},
    /* one 429 reads as several lines: its most specific wording wins;
	 * a usage banner without a reset time lands here as a rate limit */
    {{K_CAPACITY, K_RATE, K_OVERLOADED, K_SERVER, K_USAGE}, false, false,
	false},
    /* "expected status 401" from a test run above a 429 is not it */
    {{K_AUTH_STATUS, K_PERM_STATUS, K_MODEL_STATUS}, true, false, false},
    {{K_NETWORK, K_NETWORK_WAIT}, false, false, false},
};

/*
 * The kind of every line of the window into kinds[] and the index of
 * each kind's newest line into newest[] (-1 when none); returns the
 * newest line with a built-in kind (the anchor of the error block), or
 * -1 (docs/classification.md#precedence).
 */
static int
text_kinds(enum kind *kinds, int *newest, const struct classify_input *in,
    const struct classify_line *v, int n)
{
	int i, anchor = -1;

	for (i = 0; i < K__COUNT; i++)
		newest[i] = -1;
	for (i = 0; i < n; i++) {
		kinds[i] = K_NONE;
		if (v[i].skip || stack_frame(in->tail + v[i].off, v[i].len))
			continue;
		kinds[i] =
		    classify_line_kind(in, in->tail + v[i].off, v[i].len);
		if (kinds[i] != K_NONE && newest[kinds[i]] < 0)
			newest[kinds[i]] = i;
		if (anchor < 0 && kinds[i] != K_NONE &&
		    kinds[i] != K_USER_PERM && kinds[i] != K_USER_NET)
			anchor = i;
	}
	return anchor;
}

/* The line of the kind of class cl that wins (-1 when none): the first
 * kind listed, or the newest line when cl->newest_wins
 * (docs/classification.md#precedence). */
static int
class_pick(
    const struct kind_class *cl, const int *newest, const int *newest_block)
{
	size_t j;
	int i, bi = -1;

	for (j = 0; j < 6 && cl->kinds[j] != K_NONE; j++) {
		i = cl->whole_window ? newest[cl->kinds[j]]
				     : newest_block[cl->kinds[j]];
		if (i < 0)
			continue;
		if (bi < 0 || (cl->newest_wins && i < bi))
			bi = i;
	}
	return bi;
}

/*
 * Resolve the kinds of the window's lines.  User patterns count anywhere
 * in the window; the built-in kinds only in the newest error block (the
 * newest line with a kind and the CLASSIFY_BLOCK - 1 lines above it), so
 * that an old message cannot outrank the one the agent died with.  In
 * the block, classes decide by precedence.  Returns true when one did.
 */
static bool
text_decide(struct classification *out, const struct classify_input *in,
    const struct classify_line *v, int n, const struct ctx *c)
{
	const struct kind_class *cl;
	enum kind kinds[CLASSIFY_WINDOW];
	int newest[K__COUNT], newest_block[K__COUNT];
	size_t ci;
	int i, bi, anchor;

	anchor = text_kinds(kinds, newest, in, v, n);
	for (i = 0; i < K__COUNT; i++)
		newest_block[i] = -1;
	for (i = anchor; anchor >= 0 && i < n && i < anchor + CLASSIFY_BLOCK;
	     i++)
		if (kinds[i] != K_NONE && newest_block[kinds[i]] < 0)
			newest_block[kinds[i]] = i;
	for (ci = 0; ci < sizeof(classes) / sizeof(classes[0]); ci++) {
		cl = &classes[ci];
		if (cl->needs_hint && !c->has_hint)
			continue;
		bi = class_pick(cl, newest, newest_block);
		if (bi < 0)
			continue;
		decide(out,
		    classify_kind_code(kinds[bi],
			classify_builtin_kind(in->tail + v[bi].off, v[bi].len),
			c),
		    in->tail + v[bi].off, v[bi].len);
		return true;
	}
	return false;
}

/* The reset time the tail names into out->hint, and what the newest line
 * says of a delay into *c (docs/classification.md#wait-hints). */
static void
window_hints(struct classification *out, struct ctx *c, const char *tail,
    size_t tlen, const struct classify_line *lines, int n)
{
	struct waithint wh;

	waithint_parse(&out->hint, tail, tlen);
	if (out->hint.kind == WAITHINT_NONE &&
	    text_ci_has(tail, tlen, "exhausted your daily quota", false)) {
		/* Google's per-day quotas reset at midnight Pacific time */
		out->hint.kind = WAITHINT_CLOCK;
		snprintf(out->hint.zone, sizeof(out->hint.zone), "%s",
		    "America/Los_Angeles");
	}
	memset(c, 0, sizeof(*c));
	c->has_hint = out->hint.kind != WAITHINT_NONE;
	c->lifts_later = text_ci_has(tail, tlen, "try again later", false);
	if (n > 0 &&
	    waithint_parse(
		&wh, tail + lines[n - 1].off, tlen - lines[n - 1].off) &&
	    wh.kind == WAITHINT_DELAY) {
		c->delay_hint = true;
		c->delay_ms = wh.delay_ms;
	}
}

static void
decide_sres(
    struct classification *out, enum error_code code, const struct sres *sr)
{
	decide(out, code, sr->msg, sr->msg != NULL ? strlen(sr->msg) : 0);
}

/* A run that exited cleanly: the story file is the evidence, so a run
 * that checked every box is done even if its last API call failed
 * (docs/classification.md#order-of-decision). */
static void
decide_clean(struct classification *out, const struct classify_input *in,
    const struct sres *sr, const struct ctx *c)
{
	enum error_code code;
	bool done =
	    in->tasks_total > 0 && in->tasks_completed == in->tasks_total;

	if (done && !in->gate_failed) {
		out->outcome = OUTCOME_SUCCESS;
		out->code = ERRC_NONE;
	} else if (done) {
		decide(out, ERRC_GATE_FAILED, NULL, 0);
	} else if (sr->ev == EV_ERR) {
		/* exit 0 but the final result says it failed */
		code = classify_structured_code(in, sr, c);
		decide_sres(out, code != ERRC_NONE ? code : ERRC_CRASH, sr);
	} else {
		decide(out, ERRC_INCOMPLETE, NULL, 0);
	}
}

/* A failed run whose final result or error event decides; returns true
 * when it did (docs/classification.md#structured-results). */
static bool
decide_structured(struct classification *out, const struct classify_input *in,
    const struct sres *sr, const struct sextra *sx, const struct ctx *c)
{
	enum error_code code;

	if (sr->ev != EV_ERR && sr->ev != EV_ERROR_EVENT)
		return false;
	if (sx->wall) {
		/* the structured wall decides before any wording: with a
		 * reset it is a usage limit to wait for, without one a
		 * limit no wait lifts */
		decide_sres(out,
		    sx->wall_reset > 0 ? ERRC_USAGE_LIMIT : ERRC_QUOTA_EXCEEDED,
		    sr);
		if (sx->wall_reset > 0) {
			memset(&out->hint, 0, sizeof(out->hint));
			out->hint.kind = WAITHINT_EPOCH;
			out->hint.epoch_s = sx->wall_reset;
		}
		return true;
	}
	code = classify_structured_code(in, sr, c);
	if (code == ERRC_NONE)
		return false;
	decide_sres(out, code, sr);
	/* claude waited the server's retry-after before it gave up: the
	 * next attempt waits at least as long */
	if (code == ERRC_RATE_LIMIT && sx->retry_429_ms > 0 &&
	    out->hint.kind == WAITHINT_NONE) {
		out->hint.kind = WAITHINT_DELAY;
		out->hint.delay_ms = sx->retry_429_ms;
	}
	return true;
}

/* The newest text line of the window (newest first) that says it is
 * an error, for an attempt ended at its timeout or stall that nothing
 * else named: its last error message is kept even when the CLI printed
 * it only as text (docs/classification.md#order-of-decision). */
static const struct classify_line *
last_error_line(
    const struct classify_input *in, const struct classify_line *lines, int n)
{
	static const char *const words[] = {"error", "failed", "exception"};
	size_t w;
	int i;

	for (i = 0; i < n; i++) {
		if (lines[i].event != NULL || lines[i].skip)
			continue;
		for (w = 0; w < sizeof(words) / sizeof(words[0]); w++)
			if (text_ci_has(in->tail + lines[i].off, lines[i].len,
				words[w], true))
				return &lines[i];
	}
	return NULL;
}

/* A failed run that nothing named: how it ended. */
static void
decide_fallback(struct classification *out, const struct classify_input *in,
    const struct sres *sr, const struct classify_line *lines, int n)
{
	const struct classify_line *el;

	enum error_code code;

	if (in->timed_out)
		code = ERRC_TIMEOUT;
	else if (in->stalled)
		code = ERRC_STALLED;
	else
		code = ERRC_CRASH;
	if (sr->ev == EV_ERR || sr->ev == EV_ERROR_EVENT)
		decide_sres(out, code, sr);
	else if ((in->timed_out || in->stalled) &&
	    (el = last_error_line(in, lines, n)) != NULL)
		decide(out, code, in->tail + el->off, el->len);
	else
		decide(out, code, NULL, 0);
}

void
classify_window(struct classification *out, const struct classify_input *in,
    struct classify_line *lines, int n)
{
	struct sextra sx;
	struct sres sr;
	struct ctx c;
	const char *tail = in->tail;
	size_t tlen = tail != NULL ? in->tail_len : 0;
	enum error_code code;

	memset(out, 0, sizeof(*out));
	memset(&sr, 0, sizeof(sr));
	if (tail == NULL)
		tail = "";
	window_hints(out, &c, tail, tlen, lines, n);
	out->retry_on_matched = classify_user_any(in->retry_on, tail, tlen);
	if (in->interrupted) {
		decide(out, ERRC_INTERRUPTED, NULL, 0);
		goto out;
	}

	classify_structured_find(&sr, &sx, lines, n);
	if (in->exit_code == 0 && in->term_signal == 0 && !in->timed_out &&
	    !in->stalled && !in->dead_end) {
		decide_clean(out, in, &sr, &c);
		goto out;
	}
	if (decide_structured(out, in, &sr, &sx, &c))
		goto out;
	/* a documented exit status of the CLI (gemini 41: its auth) says
	 * more than the words around it */
	code = adapter_exit_code(in->adapter, in->exit_code, NULL);
	if (code != ERRC_NONE && in->term_signal == 0 && !in->timed_out &&
	    !in->stalled && !in->dead_end) {
		decide(out, code, n > 0 ? tail + lines[0].off : NULL,
		    n > 0 ? lines[0].len : 0);
		goto out;
	}
	if (!text_decide(out, in, lines, n, &c))
		decide_fallback(out, in, &sr, lines, n);
out:
	free(sr.msg);
}
