/*
 * classify_event.c - the structured results in an attempt's output:
 * what each JSON event of claude, codex and gemini says (a final result,
 * an error, a retry notice, a usage wall, or content never matched as
 * text), and the code a structured error names
 * (docs/classification.md#structured-results).  Pure.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "strategies/classify_int.h"
#include "strategies/text.h"
#include "strategies/waithint.h"

static const char *
jstr(json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));

	return s != NULL && s[0] != '\0' ? s : NULL;
}

/* error.message, or error itself when it is a string */
static const char *
jerror_msg(json_t *o)
{
	json_t *e = json_object_get(o, "error");

	if (json_is_string(e))
		return jstr(o, "error");
	if (json_is_object(e))
		return jstr(e, "message");
	return NULL;
}

/* A number 400..599 at key (an integer or a numeric string), or 0. */
static int
jstatus(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);
	json_int_t i = 0;

	if (json_is_integer(v))
		i = json_integer_value(v);
	return i >= 400 && i <= 599 ? (int)i : 0;
}

static void
sres_msg(struct sres *r, const char *s)
{
	if (s != NULL && r->msg == NULL)
		r->msg = strdup(s);
}

/* claude's assistant-message "error" values (SDKAssistantMessageError) */
static enum kind
claude_error_kind(const char *e)
{
	if (e == NULL)
		return K_NONE;
	if (strcmp(e, "authentication_failed") == 0)
		return K_AUTH;
	if (strcmp(e, "billing_error") == 0)
		return K_QUOTA_HARD;
	if (strcmp(e, "rate_limit") == 0)
		return K_RATE;
	if (strcmp(e, "server_error") == 0)
		return K_SERVER;
	return K_NONE;
}

/* The first text block of a claude assistant message. */
static const char *
claude_text(json_t *o)
{
	json_t *content =
	    json_object_get(json_object_get(o, "message"), "content");
	size_t i;

	for (i = 0; i < json_array_size(content); i++) {
		json_t *b = json_array_get(content, i);

		if (json_is_string(json_object_get(b, "text")))
			return jstr(b, "text");
	}
	return NULL;
}

/*
 * claude stream-json {"type":"system","subtype":"api_retry","attempt":7,
 * "max_retries":10,"retry_delay_ms":35610.6,"error_status":null,
 * "error":"unknown"}: claude 2.1 retries a failed API call up to ten
 * times over about three minutes and says nothing else meanwhile, so an
 * attempt killed at its timeout ends on these.  error_status is the HTTP
 * status; none at all means no response came back (2.1.197 offline:
 * "unknown", null), which is a network failure.
 */
static enum ev
claude_retry(json_t *o, struct sres *r)
{
	const char *e = jstr(o, "error");
	json_t *v = json_object_get(o, "error_status");
	char buf[160], status[32];

	r->code_kind = claude_error_kind(e);
	r->status = jstatus(o, "error_status");
	if (r->code_kind == K_NONE && r->status == 0 && json_is_null(v))
		r->code_kind = K_NETWORK;
	if (r->status != 0)
		snprintf(status, sizeof(status), "HTTP %d", r->status);
	else
		snprintf(status, sizeof(status), "no HTTP response");
	v = json_object_get(o, "retry_delay_ms");
	if (r->status == 429 && json_is_number(v) && json_number_value(v) > 0)
		r->retry_delay_ms = (int64_t)json_number_value(v);
	snprintf(buf, sizeof(buf), "api_retry %lld/%lld: %s, %s",
	    (long long)json_integer_value(json_object_get(o, "attempt")),
	    (long long)json_integer_value(json_object_get(o, "max_retries")),
	    e != NULL ? e : "no error", status);
	sres_msg(r, buf);
	return EV_RETRY;
}

/*
 * claude stream-json {"type":"rate_limit_event","rate_limit_info":
 * {"status":"rejected","resetsAt":1795486237,"rateLimitType":
 * "five_hour",...}}: a subscription's usage wall (the session, weekly
 * or model limit), printed before the result that says "You've hit your
 * session limit · resets 2:10am (UTC)".  Only "rejected" is a wall;
 * "allowed" and "allowed_warning" are notices (docs/classification.md).
 */
static enum ev
claude_rate_limit(json_t *o, struct sres *r)
{
	json_t *info = json_object_get(o, "rate_limit_info");
	const char *st = jstr(info, "status");
	json_t *v = json_object_get(info, "resetsAt");

	if (st == NULL || strcmp(st, "rejected") != 0)
		return EV_CONTENT;
	r->wall = true;
	if (json_is_number(v) && json_number_value(v) > 0)
		r->wall_reset = (int64_t)json_number_value(v);
	return EV_CONTENT;
}

/* An object without a "type": gemini json {"response":...,"error":...}
 * or older codex {"msg":{"type":...}}. */
static enum ev
inspect_untyped(json_t *o, struct sres *r)
{
	json_t *v = json_object_get(o, "error"), *m;
	const char *type;

	if (json_is_object(v) || json_is_string(v)) {
		sres_msg(r, jerror_msg(o));
		if (json_is_object(v))
			r->status = jstatus(v, "code");
		return EV_ERR;
	}
	if (json_object_get(o, "response") != NULL)
		return EV_OK;
	m = json_object_get(o, "msg");
	type = json_string_value(json_object_get(m, "type"));
	if (type == NULL)
		return EV_NONE;
	if (strcmp(type, "task_complete") == 0)
		return EV_OK;
	if (strcmp(type, "error") == 0 || strcmp(type, "stream_error") == 0) {
		sres_msg(r, jstr(m, "message"));
		return EV_ERROR_EVENT;
	}
	return EV_CONTENT;
}

/* {"type":"result"} of claude and gemini: failed by its is_error, else
 * its status, else its subtype. */
static enum ev
inspect_result(json_t *o, struct sres *r)
{
	const char *status = jstr(o, "status"), *sub = jstr(o, "subtype");
	json_t *v = json_object_get(o, "is_error");
	bool err;

	if (json_is_boolean(v))
		err = json_is_true(v);
	else if (status != NULL)
		err = strcmp(status, "success") != 0;
	else
		err = sub != NULL && strncmp(sub, "error", 5) == 0;
	if (!err)
		return EV_OK;
	sres_msg(r, jstr(o, "result"));
	sres_msg(r, jerror_msg(o));
	sres_msg(r, sub);
	r->status = jstatus(o, "api_error_status");
	v = json_object_get(o, "error");
	if (r->status == 0 && json_is_object(v))
		r->status = jstatus(v, "code");
	return EV_ERR;
}

/* codex turn.failed {"error":{}} */
static enum ev
inspect_turn_failed(json_t *o, struct sres *r)
{
	sres_msg(r, jerror_msg(o));
	return EV_ERR;
}

static enum ev
inspect_ok(json_t *o, struct sres *r)
{
	(void)o;
	(void)r;
	return EV_OK;
}

/* {"type":"error"} of gemini and codex; gemini's warnings are content */
static enum ev
inspect_error(json_t *o, struct sres *r)
{
	const char *sev = jstr(o, "severity");

	if (sev != NULL && strcmp(sev, "error") != 0)
		return EV_CONTENT;
	sres_msg(r, jstr(o, "message"));
	sres_msg(r, jerror_msg(o));
	return EV_ERROR_EVENT;
}

static enum ev
inspect_system(json_t *o, struct sres *r)
{
	const char *sub = jstr(o, "subtype");

	if (sub != NULL && strcmp(sub, "api_retry") == 0)
		return claude_retry(o, r);
	return EV_CONTENT;
}

/* claude's assistant message with an "error" field */
static enum ev
inspect_assistant(json_t *o, struct sres *r)
{
	if (!json_is_string(json_object_get(o, "error")))
		return EV_CONTENT;
	r->code_kind = claude_error_kind(jstr(o, "error"));
	sres_msg(r, claude_text(o));
	sres_msg(r, jstr(o, "error"));
	return EV_ERROR_EVENT;
}

/* The events with a "type" we read; any other type is content. */
static const struct {
	const char *type;
	enum ev (*inspect)(json_t *o, struct sres *r);
} typed_events[] = {
    {"result", inspect_result},
    {"turn.failed", inspect_turn_failed},
    {"turn.completed", inspect_ok},
    {"error", inspect_error},
    {"system", inspect_system},
    {"rate_limit_event", claude_rate_limit},
    {"assistant", inspect_assistant},
};

/*
 * What one parsed JSON object is (docs/classification.md#structured-results).
 * Recognised:
 * claude stream-json/json  {"type":"result","is_error":...,"result":...,
 *                           "api_error_status":...}, assistant "error",
 *                           {"type":"system","subtype":"api_retry"};
 * gemini stream-json       {"type":"result","status":"error","error":{}},
 *                          {"type":"error","severity":...,"message":...};
 * gemini json              {"response":...,"error":null|{...}};
 * codex exec --json        turn.completed, turn.failed {"error":{}},
 *                          {"type":"error","message":...};
 * older codex --json       {"msg":{"type":"task_complete"|"error"|...}}.
 */
static enum ev
inspect(json_t *o, struct sres *r)
{
	const char *type = json_string_value(json_object_get(o, "type"));
	size_t i;

	if (type == NULL)
		return inspect_untyped(o, r);
	for (i = 0; i < sizeof(typed_events) / sizeof(typed_events[0]); i++)
		if (strcmp(type, typed_events[i].type) == 0)
			return typed_events[i].inspect(o, r);
	return EV_CONTENT;
}

/* What classify_structured_find() has found so far, newest first. */
struct found {
	struct sres errev; /* the newest error event, when have_errev */
	bool have_final, have_errev;
	bool newer_event; /* an event newer than the one read */
};

/* Read one event into *r, noting the stream's extras in *x. */
static enum ev
find_read(struct found *f, struct sextra *x, json_t *event, struct sres *r)
{
	enum ev ev;

	memset(r, 0, sizeof(*r));
	ev = json_is_object(event) ? inspect(event, r) : EV_NONE;
	/* newest first: the first one seen is the newest */
	if (r->wall && !x->wall) {
		x->wall = true;
		x->wall_reset = r->wall_reset;
	}
	if (r->retry_delay_ms > 0 && x->retry_429_ms == 0)
		x->retry_429_ms = r->retry_delay_ms;
	/* a retry notice with any event after it was retried past:
	 * only the agent's last words say what it was stuck on */
	if (ev == EV_RETRY)
		ev = f->newer_event ? EV_CONTENT : EV_ERROR_EVENT;
	if (ev != EV_NONE)
		f->newer_event = true;
	r->ev = ev;
	return ev;
}

/* Keep *r when it is the newest final result or error event (it moves
 * into *out or f->errev); free it otherwise. */
static void
find_keep(struct found *f, struct sres *out, struct sres *r)
{
	if ((r->ev == EV_OK || r->ev == EV_ERR) && !f->have_final) {
		*out = *r;
		f->have_final = true;
	} else if (r->ev == EV_ERROR_EVENT && !f->have_errev) {
		f->errev = *r;
		f->have_errev = true;
	} else {
		free(r->msg);
	}
}

/* The final result decides, the error event standing in without one. */
static void
find_settle(struct found *f, struct sres *out)
{
	if (f->have_final && out->ev == EV_ERR && out->msg == NULL &&
	    f->have_errev) {
		/* a failed result that says nothing (gemini 0.61.0's
		 * {"type":"result","status":"error"}) has the words of the
		 * error event before it: "The model response was blocked due
		 * to safety settings." */
		out->msg = f->errev.msg;
	} else if (f->have_final) {
		free(f->errev.msg);
	} else if (f->have_errev) {
		*out = f->errev;
	}
}

/*
 * Read the events of the window (newest first; the reader parsed them).
 * The newest final result (success or failure) decides; without one,
 * the newest error event stands in.  Marks content and success events
 * so that the text pass skips them.
 */
void
classify_structured_find(
    struct sres *out, struct sextra *x, struct classify_line *v, int n)
{
	struct found f;
	struct sres r;
	enum ev ev;
	int i;

	memset(out, 0, sizeof(*out));
	memset(x, 0, sizeof(*x));
	memset(&f, 0, sizeof(f));
	for (i = 0; i < n; i++) {
		v[i].skip = false;
		if (v[i].event == NULL)
			continue;
		ev = find_read(&f, x, v[i].event, &r);
		v[i].skip = ev == EV_CONTENT || ev == EV_OK;
		find_keep(&f, out, &r);
	}
	find_settle(&f, out);
}

/* The code a structured error names, or ERRC_NONE: its message first
 * (so that a 429 saying "insufficient_quota" is billing), then claude's
 * error field, then the API status. */
enum error_code
classify_structured_code(const struct classify_input *in, const struct sres *r,
    const struct ctx *window)
{
	struct waithint mh;
	struct ctx c = *window;
	enum kind k = K_NONE, b = K_NONE;
	size_t n = r->msg != NULL ? strlen(r->msg) : 0;

	if (r->msg != NULL) {
		k = classify_line_kind(in, r->msg, n);
		b = classify_builtin_kind(r->msg, n);
		if (text_ci_has(r->msg, n, "try again later", false))
			c.lifts_later = true;
		if (waithint_parse(&mh, r->msg, n)) {
			c.has_hint = true;
			if (mh.kind == WAITHINT_DELAY) {
				c.delay_hint = true;
				c.delay_ms = mh.delay_ms;
			}
		}
	}
	if (k == K_NONE)
		k = r->code_kind;
	if (k == K_NONE)
		k = classify_status_kind(r->status);
	return classify_kind_code(k, b, &c);
}
