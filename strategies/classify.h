/*
 * classify.h - the outcome of an ended attempt (docs/classification.md).
 * Pure.
 *
 * Inputs are the exit status, the kill flags, the progress read after the
 * attempt and the tail of its combined stdout/stderr.  The classifier
 * looks at the exit status first, then at a structured final result if
 * the agent printed one (claude's stream-json "result" event, codex
 * --json "turn.failed"/"error" events, gemini stream-json "error"/"result"),
 * then at the LAST lines of the text only: a transcript is full of tool
 * output that mentions "401", "timeout" or "error" and must not decide.
 * A successful exit is never turned into a failure by what its output says.
 *
 * The tail is read by strategies/reader.c, the one reader of an
 * attempt's output: classify_attempt() is that reader's verdict alone
 * (adapter_read() gives it with the cost, final message and session id).
 */
#ifndef STORYCTL_CLASSIFY_H
#define STORYCTL_CLASSIFY_H

#include <stdbool.h>
#include <stddef.h>

#include "strategies/adapter.h"
#include "common/model.h"
#include "common/strlist.h"
#include "strategies/waithint.h"

struct classify_input {
	int exit_code; /* exit status when the agent exited, else -1 */
	int term_signal; /* signal that ended it, else 0 */
	bool timed_out; /* killed at timeout_s */
	bool stalled; /* killed at stall_timeout_s */
	/* ended because its output showed a dead end (offline for
	 * network_stall_s, a wait announced over max_wait_s): never a clean
	 * exit, whatever status the CLI chose on SIGTERM
	 * (docs/classification.md#dead-ends) */
	bool dead_end;
	bool interrupted; /* the controller was asked to stop */
	bool gate_failed; /* every box checked but a gate failed */
	int tasks_completed;
	int tasks_total;
	const char *tail; /* last bytes of the output; may be NULL */
	size_t tail_len;
	/* policy patterns (case-insensitive substrings); may be NULL */
	const struct strlist *network_on;
	const struct strlist *permanent_on;
	const struct strlist *retry_on;
	/* the CLI that ran (its documented exit codes); NULL: generic */
	const struct adapter *adapter;
};

#define CLASSIFY_MSG_MAX 512

struct classification {
	enum outcome outcome;
	enum error_code code; /* ERRC_NONE for success */
	/* The line (or structured message) that decided, trimmed and
	 * bounded; "" when the exit status alone decided. */
	char message[CLASSIFY_MSG_MAX];
	struct waithint hint; /* a wait hint found in the tail, if any */
	/* policy.retry_on is non-empty and one of its patterns occurs in the
	 * tail (the caller escalates a failure when this is false). */
	bool retry_on_matched;
};

/* The one reader's verdict alone (defined in reader.c, so that this
 * half of the reader never calls the whole). */
void classify_attempt(
    struct classification *out, const struct classify_input *in);

#endif
