/*
 * transcript.h - an attempt's output normalized into events: what the
 * agent said, each tool call and its result, errors and retries, tokens
 * and cost, and its final message (docs/agents.md#transcript, the
 * contract's section 16 "Inspecting an attempt").  Pure.
 *
 * A push API: the output is fed one line at a time (transcript_push),
 * oldest first, and the events come out through a callback in the order
 * the agent printed them, so that a log of any size is normalized in
 * bounded memory.  What each CLI prints and what it becomes:
 *
 *   claude -p --output-format stream-json
 *     assistant text blocks     message (role "assistant"); a block of
 *                               the CLI's own ("model":"<synthetic>",
 *                               "API Error: ...") is an error
 *     assistant tool_use        tool_call: tool, id, command (Bash),
 *                               path (Read, Edit, Write, ...), else the
 *                               input as compact JSON in text
 *     user tool_result          tool_result: id, tool, text, is_error;
 *                               a Bash result has exit 0, or the N of
 *                               its "Exit code N" when it failed
 *     system api_retry          error, retry (attempt, status, delay)
 *     rate_limit_event          error unless "allowed"
 *     system model_refusal_*    error
 *     result                    usage (tokens, cost); error when
 *                               is_error and not already said
 *   codex exec --json
 *     item.started/completed    tool_call (command_execution: command;
 *                               file_change: one per path; others by
 *                               their type), tool_result (exit_code,
 *                               aggregated_output, status)
 *     agent_message, reasoning  message (role "assistant", "reasoning")
 *     item error, "error"       error; "Reconnecting..." is a retry
 *     turn.failed               error when not already said
 *     turn.completed            usage (tokens only)
 *   gemini --output-format stream-json
 *     message                   message (role "user": the prompt; the
 *                               assistant's "delta" chunks joined)
 *     tool_use, tool_result     tool_call (command, path), tool_result
 *                               (status; gemini reports no exit status)
 *     error                     error
 *     result                    usage (tokens only); error when failed
 *   gemini --output-format json (one object over several lines)
 *     response, stats, error    usage, error; the response is final
 *   plain text (aider, custom commands, and the stray lines of the CLIs
 *   above: warnings, stack traces)
 *     each line                 message (role "text"); a retry notice
 *                               ("Attempt 2 failed ... Retrying",
 *                               "Reconnecting...") is an error, retry;
 *                               a line that starts "Error"/"ERROR" or
 *                               names an ...Error: is an error, and the
 *                               indented lines after it (its stack
 *                               trace) are folded into it, not shown
 *     aider "Tokens: ... Cost:" usage (tokens, the session's cost)
 *
 * The last event is "final", the agent's final message, chosen as
 * strategies/agentout.c chooses result_text, event for event (the
 * newest structured message wins: claude's result, codex's last
 * agent_message or failed turn, gemini's joined chunks or its error);
 * without one, the last plain lines, as agentout's fallback.  So the
 * final shown is the final message storyctl decided on; output with
 * neither (a stall after the first event) has no final.
 *
 * One reader (docs/agents.md#transcript): strategies/reader.c, which
 * classifies an attempt, feeds the lines it walks to transcript_push()
 * with the JSON value it parsed for the verdict
 * (adapter_read_transcript), so what is shown and what is decided come
 * from one walk and one parse; a whole log, more than the reader's
 * in-memory tail, is fed line by line by the controller's file reader
 * (controller/views/views_transcript.c), and the transcript parses
 * each line itself, with the same bounds.
 *
 * Bounds: every text field is at most TRANSCRIPT_TEXT_MAX - 1 bytes (a
 * longer one keeps its beginning and ends with TRANSCRIPT_CUT; the
 * event's cut flag says so), cleaned of controls and escape sequences
 * (text_clean) and valid UTF-8.  A line over TRANSCRIPT_LINE_MAX bytes
 * (or one the caller cut) is not read as JSON: it becomes a message of
 * its beginning, cut.  A pretty-printed object (gemini json) is
 * gathered up to TRANSCRIPT_LINE_MAX bytes; a bigger one is one
 * message saying so, and the lines after that are text.  So one 50 MB
 * line costs no more than a short one.
 *
 * "t" of an event is the index (0-based) of the output line it came
 * from; ts is the stream's own timestamp where it has one (gemini's
 * events, claude's tool results).  Redaction is the caller's (views).
 */
#ifndef STORYCTL_TRANSCRIPT_H
#define STORYCTL_TRANSCRIPT_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#define TRANSCRIPT_TEXT_MAX 4096
#define TRANSCRIPT_NAME_MAX 128
#define TRANSCRIPT_PATH_MAX 1024
/* lines (and gathered pretty-printed objects) up to this size are read
 * as JSON; as strategies/agentout.h reads them */
#define TRANSCRIPT_LINE_MAX ((size_t)1024 * 1024)
/* what ends a text field that was cut */
#define TRANSCRIPT_CUT " [...cut]"

enum transcript_kind {
	TRANSCRIPT_MESSAGE,
	TRANSCRIPT_TOOL_CALL,
	TRANSCRIPT_TOOL_RESULT,
	TRANSCRIPT_ERROR,
	TRANSCRIPT_USAGE,
	TRANSCRIPT_FINAL,
};

struct transcript_event {
	enum transcript_kind kind;
	size_t t; /* the output line it came from, 0-based */
	char ts[40]; /* the stream's timestamp, "" none */
	char role[16]; /* message: assistant, user, reasoning, text */
	char text[TRANSCRIPT_TEXT_MAX]; /* message, error, output, final */
	bool cut; /* a field was cut (TRANSCRIPT_CUT) */
	char tool[TRANSCRIPT_NAME_MAX]; /* tool_call, tool_result */
	char id[TRANSCRIPT_NAME_MAX]; /* links a tool_result to its call */
	char command[TRANSCRIPT_TEXT_MAX]; /* tool_call: a shell command */
	char path[TRANSCRIPT_PATH_MAX]; /* tool_call: the file read/edited */
	char status[32]; /* tool_result: the CLI's word, "" none */
	bool has_exit; /* tool_result: exit_status is known */
	int exit_status;
	bool is_error; /* tool_result failed */
	bool retry; /* error: the agent will try again */
	long long tokens_in; /* usage: -1 unknown; cached ones included */
	long long tokens_out;
	bool has_cost;
	double cost_usd;
};

/* Called for each event; a negative return stops the transcript, and
 * transcript_push/transcript_end return it. */
typedef int (*transcript_fn)(const struct transcript_event *ev, void *arg);

/* One line of output. */
struct transcript_line {
	const char *s; /* the line, without its '\n'; NULL when n is 0 */
	size_t n;
	bool cut; /* the line went on past n: only its beginning is here */
	size_t index; /* its 0-based line number in the output */
	/* parsed: the caller parsed the line already (strategies/reader.c
	 * does), value is what it found (an object, an array, or NULL for
	 * no JSON); inside: the line lies within a pretty-printed object
	 * the caller gave at its "{" line */
	bool parsed;
	json_t *value;
	bool inside;
};

struct transcript;

/* A transcript that calls fn(ev, arg) for each event; NULL when out of
 * memory.  transcript_free(NULL) does nothing. */
struct transcript *transcript_new(transcript_fn fn, void *arg);
void transcript_free(struct transcript *tr);

/* Feed one line.  0, or the callback's negative return. */
int transcript_push(struct transcript *tr, const struct transcript_line *l);

/* The output has ended: the pending events and the final message.  0,
 * or the callback's negative return. */
int transcript_end(struct transcript *tr);

/* "message", "tool_call", ... */
const char *transcript_kind_name(enum transcript_kind k);

#endif
