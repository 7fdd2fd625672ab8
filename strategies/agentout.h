/*
 * agentout.h - what an agent reported about its own run, read from the
 * tail of its combined stdout/stderr: the cost in US dollars and the
 * token counts (docs/scheduling.md#cost-and-budgets), and its final
 * message (the text that include_dependency_result puts in a later
 * story's prompt).  Pure.
 *
 * What each CLI prints (field names checked against their sources; see
 * docs/agents.md for the real transcripts):
 *
 *   claude -p --output-format stream-json|json
 *       {"type":"result",...,"result":"<final message>",
 *        "total_cost_usd":0.12,"usage":{"input_tokens":..,
 *        "cache_creation_input_tokens":..,"cache_read_input_tokens":..,
 *        "output_tokens":..}}  (older versions: "cost_usd"); with json
 *       and --verbose the events come as one JSON array.
 *   codex exec --json
 *       {"type":"item.completed","item":{"type":"agent_message",
 *        "text":"<message>"}}, {"type":"turn.completed","usage":
 *        {"input_tokens":..,"cached_input_tokens":..,"output_tokens":..}}:
 *       tokens only, no dollars.  The short-lived "item_type":
 *       "assistant_message" and the legacy {"msg":{"type":
 *       "agent_message"|"task_complete"|"token_count",...}} are read too.
 *   gemini --output-format stream-json
 *       {"type":"message","role":"assistant","content":"..","delta":true}
 *       chunks (concatenated), {"type":"result","status":..,"error":{},
 *       "stats":{"input_tokens":..,"output_tokens":..}}: tokens only.
 *   gemini --output-format json (pretty-printed over several lines)
 *       {"response":"..","stats":{"models":{"<m>":{"tokens":{"prompt":..,
 *        "candidates":..}}}},"error":{}}: tokens only.
 *   aider (text)
 *       "Tokens: 12k sent, 1.2k received. Cost: $0.05 message, $0.31
 *       session." (older: "request" for "message"); the session cost of
 *       the last such line is the run's cost.
 *
 * The agent's session id (the one its CLI resumes with):
 *   claude   "session_id" of its events (system/init, assistant, user,
 *            result);
 *   codex    {"type":"thread.started","thread_id":".."} (0.169); older
 *            {"type":"session.created","session_id":".."} and the legacy
 *            {"msg":{"type":"session_configured","session_id":".."}};
 *   gemini   stream-json {"type":"init","session_id":".."}, json the
 *            top-level "session_id".
 * codex and gemini print it once, first: a tail that lost the start of
 * a long run has none.
 *
 * The tail is read by strategies/reader.c, the one reader of an
 * attempt's output: agentout_parse() is that reader's agent_output.
 */
#ifndef STORYCTL_AGENTOUT_H
#define STORYCTL_AGENTOUT_H

#include <stdbool.h>
#include <stddef.h>

#define AGENTOUT_RESULT_MAX 4096
/* the plain-text fallback: at most this many of the last non-empty lines */
#define AGENTOUT_TEXT_LINES 30
/* JSON is parsed from lines (or pretty-printed objects) up to this size
 * and this nesting depth only; anything bigger is skipped unread */
#define AGENTOUT_JSON_MAX ((size_t)1024 * 1024)
#define AGENTOUT_JSON_DEPTH 128
/* a session id is shorter than this; a longer one is not kept */
#define AGENTOUT_SESSION_MAX 128

struct agent_output {
	/* What the agent reported for this run (the last report in the
	 * tail: claude's newest result event, aider's last session cost).
	 * has_cost is false when the agent reports tokens only. */
	bool has_cost;
	double cost_usd;
	/* result_text came from a structured final message (a JSON event),
	 * not from the last lines of plain output */
	bool structured;
	/* The agent's final message: valid UTF-8, no NUL, no ANSI escape
	 * sequences or other control characters except newline and tab,
	 * trimmed, at most AGENTOUT_RESULT_MAX - 1 bytes (cut at a
	 * character boundary: a structured message keeps its beginning,
	 * plain output its end).  Without a structured message: the last
	 * AGENTOUT_TEXT_LINES non-empty lines that are not JSON events.
	 * "" when there is nothing. */
	char result_text[AGENTOUT_RESULT_MAX];
	/* The newest token counts reported, else -1.  input_tokens counts
	 * every prompt token, cached ones included (claude reports those
	 * apart; they are added in). */
	long long input_tokens;
	long long output_tokens;
	/* The agent's session id, the newest printed: no control
	 * characters, valid UTF-8, trimmed, at most AGENTOUT_SESSION_MAX - 1
	 * bytes (a longer one is not kept: a cut id names no session); ""
	 * when the tail holds none. */
	char session_id[AGENTOUT_SESSION_MAX];
};

/*
 * Parse the len bytes at tail: the last bytes of an agent's combined
 * stdout/stderr, which may start in the middle of a line and may hold
 * NUL bytes, invalid UTF-8, terminal escape sequences, huge lines or
 * garbage.  tail may be NULL when len is 0.  Never fails: *out is always
 * filled (all empty when nothing was found).  Defined in reader.c, so
 * that this half of the reader never calls the whole.
 */
void agentout_parse(struct agent_output *out, const char *tail, size_t len);

#endif
