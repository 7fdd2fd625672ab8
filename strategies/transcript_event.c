/*
 * transcript_event.c - one JSON event of claude, codex or gemini as
 * transcript events (the table in transcript.h).  The final message is
 * kept as strategies/agentout.c keeps result_text, event for event, so
 * that the transcript's "final" is the message storyctl decided on.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "strategies/text.h"
#include "strategies/agentfield.h"
#include "strategies/transcript.h"
#include "strategies/transcript_int.h"

static void
final_from(struct transcript *tr, json_t *s)
{
	transcript_final(
	    tr, json_string_value(s), json_string_length(s), false);
}

/* dst = the compact JSON of v (cut), for a call with no command or path */
static void
put_json(struct transcript_event *ev, char *dst, size_t cap, json_t *v)
{
	char *s;

	dst[0] = '\0';
	if (v == NULL || json_is_null(v))
		return;
	s = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
	if (s != NULL)
		transcript_put(ev, dst, cap, s, strlen(s));
	free(s);
}

/* the text of a tool's input or parameters: command, path, description */
static void
tool_input(struct transcript_event *ev, json_t *in)
{
	static const char *const paths[] = {
	    "file_path", "absolute_path", "notebook_path", "path"};
	json_t *v;
	size_t i;

	transcript_jput(ev, ev->command, sizeof(ev->command),
	    agentfield_text(in, "command"));
	for (i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
		if ((v = agentfield_text(in, paths[i])) != NULL) {
			transcript_jput(ev, ev->path, sizeof(ev->path), v);
			break;
		}
	}
	if ((v = agentfield_text(in, "description")) != NULL)
		transcript_jput(ev, ev->text, sizeof(ev->text), v);
	else if (ev->command[0] == '\0' && ev->path[0] == '\0')
		put_json(ev, ev->text, sizeof(ev->text), in);
}

static void
set_word(char *dst, size_t cap, json_t *s)
{
	dst[0] = '\0';
	if (json_is_string(s))
		text_clean(dst, cap, json_string_value(s),
		    json_string_length(s), 0, NULL);
}

/* ---- claude -p --output-format stream-json ---- */

static void
claude_tool_use(struct transcript *tr, json_t *b)
{
	struct transcript_event *ev = transcript_ev(tr, TRANSCRIPT_TOOL_CALL);

	set_word(ev->tool, sizeof(ev->tool), json_object_get(b, "name"));
	set_word(ev->id, sizeof(ev->id), json_object_get(b, "id"));
	tool_input(ev, json_object_get(b, "input"));
	transcript_call_add(tr, ev->id, ev->tool);
	transcript_emit(tr);
}

/* text (role assistant; the CLI's own "<synthetic>" words are an
 * error), thinking (role reasoning) and tool_use blocks */
static bool
claude_assistant(struct transcript *tr, json_t *o)
{
	json_t *msg = json_object_get(o, "message"), *b, *t;
	bool synthetic = agentfield_is(msg, "model", "<synthetic>"),
	     first = true;
	struct transcript_event *ev;
	size_t i;

	json_array_foreach(json_object_get(msg, "content"), i, b)
	{
		if (agentfield_is(b, "type", "tool_use")) {
			claude_tool_use(tr, b);
			continue;
		}
		t = agentfield_text(b, "text");
		if (t == NULL && (t = agentfield_text(b, "thinking")) == NULL)
			continue;
		ev = transcript_ev(
		    tr, synthetic ? TRANSCRIPT_ERROR : TRANSCRIPT_MESSAGE);
		snprintf(ev->role, sizeof(ev->role), "%s",
		    synthetic
			? ""
			: (agentfield_is(b, "type", "thinking") ? "reasoning"
								: "assistant"));
		transcript_jput(ev, ev->text, sizeof(ev->text), t);
		transcript_emit(tr);
		if (!agentfield_is(b, "type", "text"))
			continue;
		transcript_final(
		    tr, json_string_value(t), json_string_length(t), !first);
		first = false;
	}
	return false;
}

/* the text of a tool_result's content: a string or text blocks */
static void
claude_result_text(struct transcript_event *ev, json_t *c)
{
	json_t *b;
	size_t i;

	if (json_is_string(c)) {
		transcript_jput(ev, ev->text, sizeof(ev->text), c);
		return;
	}
	json_array_foreach(c, i, b)
	{
		if (agentfield_is(b, "type", "text")) {
			transcript_jput(ev, ev->text, sizeof(ev->text),
			    json_object_get(b, "text"));
			return;
		}
	}
}

/* Bash: exit 0, or the N of "Exit code N" when it failed */
static void
claude_exit(struct transcript_event *ev)
{
	char *end;
	long v;

	if (strcmp(ev->tool, "Bash") != 0)
		return;
	if (!ev->is_error) {
		ev->has_exit = true;
		return;
	}
	if (strncmp(ev->text, "Exit code ", 10) != 0)
		return;
	v = strtol(ev->text + 10, &end, 10);
	if (end == ev->text + 10 || v < 0 || v > 255)
		return;
	ev->has_exit = true;
	ev->exit_status = (int)v;
}

static bool
claude_user(struct transcript *tr, json_t *o)
{
	json_t *c = json_object_get(json_object_get(o, "message"), "content");
	struct transcript_event *ev;
	const char *tool;
	json_t *b;
	size_t i;

	if (json_is_string(c)) {
		ev = transcript_ev(tr, TRANSCRIPT_MESSAGE);
		snprintf(ev->role, sizeof(ev->role), "user");
		transcript_jput(ev, ev->text, sizeof(ev->text), c);
		transcript_emit(tr);
		return false;
	}
	json_array_foreach(c, i, b)
	{
		if (!agentfield_is(b, "type", "tool_result"))
			continue;
		ev = transcript_ev(tr, TRANSCRIPT_TOOL_RESULT);
		set_word(
		    ev->id, sizeof(ev->id), json_object_get(b, "tool_use_id"));
		tool = transcript_call_tool(tr, ev->id);
		snprintf(ev->tool, sizeof(ev->tool), "%s", tool ? tool : "");
		ev->is_error = json_is_true(json_object_get(b, "is_error"));
		claude_result_text(ev, json_object_get(b, "content"));
		claude_exit(ev);
		transcript_emit(tr);
	}
	return false;
}

static bool
claude_system(struct transcript *tr, json_t *o)
{
	const char *sub = json_string_value(json_object_get(o, "subtype"));
	struct transcript_event *ev;
	const char *err;
	char tmp[512];
	json_t *st;
	int k;

	if (sub == NULL)
		return false;
	if (strcmp(sub, "api_retry") == 0) {
		ev = transcript_ev(tr, TRANSCRIPT_ERROR);
		ev->retry = true;
		st = json_object_get(o, "error_status");
		err = json_string_value(json_object_get(o, "error"));
		k = snprintf(tmp, sizeof(tmp), "API retry %lld of %lld: %.200s",
		    agentfield_count(json_object_get(o, "attempt")),
		    agentfield_count(json_object_get(o, "max_retries")),
		    err != NULL ? err : "error");
		if (json_is_number(st))
			k += snprintf(tmp + k, sizeof(tmp) - (size_t)k,
			    " (status %lld)", agentfield_count(st));
		snprintf(tmp + k, sizeof(tmp) - (size_t)k, ", next in %lld ms",
		    agentfield_count(json_object_get(o, "retry_delay_ms")));
		transcript_put(
		    ev, ev->text, sizeof(ev->text), tmp, strlen(tmp));
		transcript_emit(tr);
	} else if (strncmp(sub, "model_refusal", 13) == 0) {
		ev = transcript_ev(tr, TRANSCRIPT_ERROR);
		snprintf(tmp, sizeof(tmp), "the model refused (%.100s)", sub);
		transcript_put(
		    ev, ev->text, sizeof(ev->text), tmp, strlen(tmp));
		transcript_emit(tr);
	}
	return false;
}

/* {"type":"rate_limit_event","rate_limit_info":{"status":"rejected",
 * "resetsAt":<epoch>,"rateLimitType":"five_hour"}}: an error unless
 * allowed */
static bool
claude_rate_limit(struct transcript *tr, json_t *o)
{
	json_t *info = json_object_get(o, "rate_limit_info");
	struct transcript_event *ev;
	const char *st = json_string_value(json_object_get(info, "status"));
	const char *type =
	    json_string_value(json_object_get(info, "rateLimitType"));
	char tmp[256];

	if (st == NULL || strcmp(st, "allowed") == 0)
		return false;
	ev = transcript_ev(tr, TRANSCRIPT_ERROR);
	snprintf(tmp, sizeof(tmp), "rate limit %.40s (%.40s), resets at %lld",
	    st, type != NULL ? type : "?",
	    agentfield_count(json_object_get(info, "resetsAt")));
	transcript_put(ev, ev->text, sizeof(ev->text), tmp, strlen(tmp));
	transcript_emit(tr);
	return false;
}

/* the usage of a result: claude's usage (cached prompt tokens added
 * in, as agentout does) and cost, gemini stream-json's stats */
static void
result_usage(struct transcript *tr, json_t *o)
{
	struct transcript_event *ev = transcript_ev(tr, TRANSCRIPT_USAGE);
	json_t *u = json_object_get(o, "usage"), *v;

	v = json_object_get(o, "total_cost_usd");
	if (!json_is_number(v))
		v = json_object_get(o, "cost_usd");
	if (json_is_number(v) && isfinite(json_number_value(v)) &&
	    json_number_value(v) >= 0) {
		ev->has_cost = true;
		ev->cost_usd = json_number_value(v);
	}
	ev->tokens_in = agentfield_claude_input(u);
	ev->tokens_out = agentfield_count(json_object_get(u, "output_tokens"));
	v = json_object_get(o, "stats");
	if (json_is_object(v)) {
		ev->tokens_in =
		    agentfield_count(json_object_get(v, "input_tokens"));
		ev->tokens_out =
		    agentfield_count(json_object_get(v, "output_tokens"));
	}
	if (ev->has_cost || ev->tokens_in >= 0 || ev->tokens_out >= 0)
		transcript_emit(tr);
}

/* {"type":"result"} of claude and gemini stream-json: its usage; an
 * error result says its error (once); the final message as agentout
 * reads it (result, error.message, errors[-1]) */
static bool
claude_result(struct transcript *tr, json_t *o)
{
	json_t *v, *errs = json_object_get(o, "errors");
	size_t n = json_array_size(errs);

	result_usage(tr, o);
	v = agentfield_text(o, "result");
	if (v == NULL)
		v = agentfield_text(json_object_get(o, "error"), "message");
	if (v == NULL && n > 0 && json_is_string(json_array_get(errs, n - 1)))
		v = json_array_get(errs, n - 1);
	if (v == NULL || json_string_length(v) == 0)
		return false;
	if (json_is_true(json_object_get(o, "is_error")) ||
	    agentfield_is(o, "status", "error") ||
	    agentfield_text(o, "result") == NULL)
		transcript_summary_error(tr, v);
	final_from(tr, v);
	return false;
}

/* ---- codex exec --json ---- */

/* the tools of codex's items; agent_message, reasoning, error and
 * todo_list are not calls */
static bool
codex_tool_item(json_t *item)
{
	return agentfield_is(item, "type", "command_execution") ||
	    agentfield_is(item, "type", "file_change") ||
	    agentfield_is(item, "type", "mcp_tool_call") ||
	    agentfield_is(item, "type", "web_search");
}

/* the call of an item: command_execution's command, mcp_tool_call's
 * server.tool and arguments, web_search's query; a file_change is one
 * call per file changed */
static void
codex_call(struct transcript *tr, json_t *item)
{
	struct transcript_event *ev;
	json_t *ch;
	size_t i;
	char tool[TRANSCRIPT_NAME_MAX];

	if (agentfield_is(item, "type", "file_change")) {
		json_array_foreach(json_object_get(item, "changes"), i, ch)
		{
			ev = transcript_ev(tr, TRANSCRIPT_TOOL_CALL);
			snprintf(ev->tool, sizeof(ev->tool), "file_change");
			set_word(ev->id, sizeof(ev->id),
			    json_object_get(item, "id"));
			transcript_jput(ev, ev->path, sizeof(ev->path),
			    json_object_get(ch, "path"));
			transcript_jput(ev, ev->text, sizeof(ev->text),
			    json_object_get(ch, "kind"));
			transcript_call_add(tr, ev->id, ev->tool);
			transcript_emit(tr);
		}
		return;
	}
	ev = transcript_ev(tr, TRANSCRIPT_TOOL_CALL);
	set_word(ev->tool, sizeof(ev->tool), json_object_get(item, "type"));
	if (agentfield_is(item, "type", "mcp_tool_call")) {
		snprintf(tool, sizeof(tool), "%.60s.%.60s",
		    json_is_string(json_object_get(item, "server"))
			? json_string_value(json_object_get(item, "server"))
			: "",
		    json_is_string(json_object_get(item, "tool"))
			? json_string_value(json_object_get(item, "tool"))
			: "");
		transcript_put(
		    ev, ev->tool, sizeof(ev->tool), tool, strlen(tool));
		put_json(ev, ev->text, sizeof(ev->text),
		    json_object_get(item, "arguments"));
	}
	set_word(ev->id, sizeof(ev->id), json_object_get(item, "id"));
	transcript_jput(ev, ev->command, sizeof(ev->command),
	    agentfield_text(item, "command"));
	if (ev->text[0] == '\0')
		transcript_jput(ev, ev->text, sizeof(ev->text),
		    agentfield_text(item, "query"));
	transcript_call_add(tr, ev->id, ev->tool);
	transcript_emit(tr);
}

/* a finished tool item: its exit status, output and status */
static void
codex_result(struct transcript *tr, json_t *item)
{
	struct transcript_event *ev;
	json_t *v;
	const char *tool;

	if (agentfield_is(item, "type", "web_search"))
		return; /* a search has no result of its own */
	ev = transcript_ev(tr, TRANSCRIPT_TOOL_RESULT);
	set_word(ev->id, sizeof(ev->id), json_object_get(item, "id"));
	tool = transcript_call_tool(tr, ev->id);
	snprintf(ev->tool, sizeof(ev->tool), "%s", tool != NULL ? tool : "");
	set_word(
	    ev->status, sizeof(ev->status), json_object_get(item, "status"));
	v = json_object_get(item, "exit_code");
	if (json_is_integer(v)) {
		ev->has_exit = true;
		ev->exit_status = (int)json_integer_value(v);
	}
	ev->is_error = strcmp(ev->status, "failed") == 0 ||
	    (ev->has_exit && ev->exit_status != 0);
	transcript_jput(ev, ev->text, sizeof(ev->text),
	    json_object_get(item, "aggregated_output"));
	if (ev->text[0] == '\0')
		transcript_jput(ev, ev->text, sizeof(ev->text),
		    agentfield_text(json_object_get(item, "error"), "message"));
	transcript_emit(tr);
}

static bool
codex_item(struct transcript *tr, json_t *o)
{
	json_t *item = json_object_get(o, "item"), *t;
	struct transcript_event *ev;
	bool started = agentfield_is(o, "type", "item.started");
	const char *id = json_string_value(json_object_get(item, "id"));

	if (codex_tool_item(item)) {
		if (started || transcript_call_tool(tr, id) == NULL)
			codex_call(tr, item);
		if (!started)
			codex_result(tr, item);
		return false;
	}
	if (started || (t = agentfield_text(item, "text")) == NULL) {
		t = agentfield_text(item, "message");
		if (started || t == NULL ||
		    !agentfield_is(item, "type", "error"))
			return false;
	}
	ev = transcript_ev(tr,
	    agentfield_is(item, "type", "error") ? TRANSCRIPT_ERROR
						 : TRANSCRIPT_MESSAGE);
	if (ev->kind == TRANSCRIPT_MESSAGE)
		snprintf(ev->role, sizeof(ev->role), "%s",
		    agentfield_is(item, "type", "reasoning") ? "reasoning"
							     : "assistant");
	transcript_jput(ev, ev->text, sizeof(ev->text), t);
	transcript_emit(tr);
	if (agentfield_is(item, "type", "agent_message") ||
	    agentfield_is(item, "item_type", "assistant_message") ||
	    agentfield_is(item, "item_type", "agent_message"))
		final_from(tr, t);
	return false;
}

/* {"type":"error","message":..}: codex's retry notices ("Reconnecting...
 * 1/5") and errors; gemini's {"type":"error","severity":..,"message":..}.
 * Both keep gemini's answer open, as in agentout. */
static bool
any_error(struct transcript *tr, json_t *o)
{
	struct transcript_event *ev = transcript_ev(tr, TRANSCRIPT_ERROR);
	json_t *m = agentfield_text(o, "message");

	if (m == NULL)
		m = agentfield_text(json_object_get(o, "error"), "message");
	transcript_jput(ev, ev->text, sizeof(ev->text), m);
	ev->retry = strncmp(ev->text, "Reconnecting...", 15) == 0;
	set_word(
	    ev->status, sizeof(ev->status), json_object_get(o, "severity"));
	transcript_emit(tr);
	return true;
}

static bool
codex_turn_failed(struct transcript *tr, json_t *o)
{
	json_t *m = agentfield_text(json_object_get(o, "error"), "message");

	if (m != NULL) {
		transcript_summary_error(tr, m);
		final_from(tr, m);
	}
	return false;
}

static bool
codex_turn_completed(struct transcript *tr, json_t *o)
{
	struct transcript_event *ev = transcript_ev(tr, TRANSCRIPT_USAGE);
	json_t *u = json_object_get(o, "usage");

	ev->tokens_in = agentfield_count(json_object_get(u, "input_tokens"));
	ev->tokens_out = agentfield_count(json_object_get(u, "output_tokens"));
	if (ev->tokens_in >= 0 || ev->tokens_out >= 0)
		transcript_emit(tr);
	return false;
}

/* ---- gemini --output-format stream-json ---- */

static bool
gemini_message(struct transcript *tr, json_t *o)
{
	json_t *c = agentfield_text(o, "content");
	struct transcript_event *ev;

	if (c == NULL)
		return false;
	if (agentfield_is(o, "role", "assistant")) {
		transcript_chunk(
		    tr, c, json_is_true(json_object_get(o, "delta")));
		return true;
	}
	ev = transcript_ev(tr, TRANSCRIPT_MESSAGE);
	set_word(ev->role, sizeof(ev->role), json_object_get(o, "role"));
	transcript_jput(ev, ev->text, sizeof(ev->text), c);
	transcript_emit(tr);
	return false;
}

static bool
gemini_tool_use(struct transcript *tr, json_t *o)
{
	struct transcript_event *ev = transcript_ev(tr, TRANSCRIPT_TOOL_CALL);

	set_word(ev->tool, sizeof(ev->tool), json_object_get(o, "tool_name"));
	set_word(ev->id, sizeof(ev->id), json_object_get(o, "tool_id"));
	tool_input(ev, json_object_get(o, "parameters"));
	transcript_call_add(tr, ev->id, ev->tool);
	transcript_emit(tr);
	return false;
}

static bool
gemini_tool_result(struct transcript *tr, json_t *o)
{
	struct transcript_event *ev = transcript_ev(tr, TRANSCRIPT_TOOL_RESULT);
	const char *tool;

	set_word(ev->id, sizeof(ev->id), json_object_get(o, "tool_id"));
	tool = transcript_call_tool(tr, ev->id);
	snprintf(ev->tool, sizeof(ev->tool), "%s", tool != NULL ? tool : "");
	set_word(ev->status, sizeof(ev->status), json_object_get(o, "status"));
	ev->is_error = strcmp(ev->status, "error") == 0;
	transcript_jput(
	    ev, ev->text, sizeof(ev->text), agentfield_text(o, "output"));
	if (ev->text[0] == '\0')
		transcript_jput(ev, ev->text, sizeof(ev->text),
		    agentfield_text(json_object_get(o, "error"), "message"));
	transcript_emit(tr);
	return false;
}

/* ---- objects without a type ---- */

/* gemini --output-format json: {"response":..,"stats":{"models":{"<m>":
 * {"tokens":{"prompt":..,"candidates":..}}}},"error":{..}}; the legacy
 * codex {"msg":{"type":"agent_message"|"task_complete"|..}} */
static bool
untyped(struct transcript *tr, json_t *o)
{
	struct transcript_event *ev;
	json_t *m = json_object_get(o, "msg"), *v, *t;
	const char *key;
	long long p, c;

	if (json_is_object(m)) {
		v = agentfield_text(m,
		    agentfield_is(m, "type", "task_complete")
			? "last_agent_message"
			: "message");
		if (v != NULL &&
		    (agentfield_is(m, "type", "agent_message") ||
			agentfield_is(m, "type", "task_complete"))) {
			ev = transcript_ev(tr, TRANSCRIPT_MESSAGE);
			snprintf(ev->role, sizeof(ev->role), "assistant");
			transcript_jput(ev, ev->text, sizeof(ev->text), v);
			transcript_emit(tr);
			final_from(tr, v);
		}
		return false;
	}
	ev = transcript_ev(tr, TRANSCRIPT_USAGE);
	json_object_foreach(
	    json_object_get(json_object_get(o, "stats"), "models"), key, v)
	{
		t = json_object_get(v, "tokens");
		p = agentfield_count(json_object_get(t, "prompt"));
		c = agentfield_count(json_object_get(t, "candidates"));
		if (p >= 0)
			ev->tokens_in =
			    (ev->tokens_in < 0 ? 0 : ev->tokens_in) + p;
		if (c >= 0)
			ev->tokens_out =
			    (ev->tokens_out < 0 ? 0 : ev->tokens_out) + c;
	}
	if (ev->tokens_in >= 0 || ev->tokens_out >= 0)
		transcript_emit(tr);
	if ((v = agentfield_text(o, "response")) != NULL) {
		final_from(tr, v);
	} else if ((v = agentfield_text(
			json_object_get(o, "error"), "message")) != NULL) {
		transcript_summary_error(tr, v);
		final_from(tr, v);
	}
	return false;
}

static const struct {
	const char *type;
	bool (*fn)(struct transcript *, json_t *);
} handlers[] = {
    {"assistant", claude_assistant},
    {"user", claude_user},
    {"system", claude_system},
    {"rate_limit_event", claude_rate_limit},
    {"result", claude_result},
    {"item.started", codex_item},
    {"item.completed", codex_item},
    {"error", any_error},
    {"turn.failed", codex_turn_failed},
    {"turn.completed", codex_turn_completed},
    {"message", gemini_message},
    {"tool_use", gemini_tool_use},
    {"tool_result", gemini_tool_result},
};

bool
transcript_json(struct transcript *tr, json_t *o)
{
	const char *type = json_string_value(json_object_get(o, "type"));
	size_t i;

	if (type == NULL)
		return untyped(tr, o);
	for (i = 0; i < sizeof(handlers) / sizeof(handlers[0]); i++)
		if (strcmp(type, handlers[i].type) == 0)
			return handlers[i].fn(tr, o);
	return false;
}
