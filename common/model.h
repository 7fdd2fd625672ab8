/*
 * model.h - the words of docs/design.md#words as enums, with their spelled
 * names (the names are the JSON/database/CLI spelling; never change one).
 *
 * *_name() returns a static string ("?" for an out-of-range value);
 * *_parse() returns 0 and sets *out, or -1 when s is not a known name.
 */
#ifndef STORYCTL_MODEL_H
#define STORYCTL_MODEL_H

#include <stdbool.h>

enum outcome {
	OUTCOME_NONE = 0, /* not ended yet (a running attempt) */
	OUTCOME_SUCCESS,
	OUTCOME_INCOMPLETE,
	OUTCOME_GATE_FAILED,
	OUTCOME_CRASH,
	OUTCOME_TIMEOUT,
	OUTCOME_NETWORK,
	OUTCOME_RATE_LIMIT,
	OUTCOME_USAGE_LIMIT,
	OUTCOME_PERMANENT,
	OUTCOME_INTERRUPTED,
	OUTCOME__COUNT
};

enum error_code {
	ERRC_NONE = 0,
	ERRC_INCOMPLETE,
	ERRC_GATE_FAILED,
	ERRC_CRASH,
	ERRC_TIMEOUT,
	ERRC_STALLED,
	ERRC_NETWORK_ERROR,
	ERRC_RATE_LIMIT,
	ERRC_OVERLOADED,
	ERRC_SERVER_ERROR,
	ERRC_USAGE_LIMIT,
	ERRC_AUTH,
	ERRC_PERMISSION_DENIED,
	ERRC_MODEL_NOT_FOUND,
	ERRC_QUOTA_EXCEEDED,
	ERRC_BUDGET_EXCEEDED,
	ERRC_INTERRUPTED,
	/* boxes checked with nothing else changed, under verify.require_diff
	 * (docs/evidence.md#require-diff) */
	ERRC_NO_EVIDENCE,
	/* reference 003's "agent produced invalid output", only ever
	 * reported from outside (docs/api.md#error-codes-of-a-post); last, so
	 * that the codes before it keep their numbers */
	ERRC_INVALID_OUTPUT,
	ERRC__COUNT
};

enum decision {
	DECISION_NONE = 0, /* nothing decided (interrupted, or not yet) */
	DECISION_DONE,
	DECISION_RETRY,
	DECISION_WAIT,
	DECISION_DEFER,
	DECISION_ESCALATE,
	DECISION__COUNT
};

enum role { ROLE_PRIMARY = 0, ROLE_FALLBACK = 1 };

enum story_status {
	STATUS_PENDING = 0,
	STATUS_RUNNING,
	STATUS_DONE,
	STATUS_DEFERRED,
	STATUS_ESCALATED,
	STATUS_BLOCKED,
	STATUS_INVALID,
	STATUS__COUNT
};

const char *outcome_name(enum outcome o);
int outcome_parse(enum outcome *out, const char *s);
/* The attempt's progress is evidence for a plateau
 * (docs/retry-strategy.md#counted). */
bool outcome_counts_plateau(enum outcome o);
/* Whether the attempt uses up its number (D3 and D4 rerun it). */
bool outcome_counted(enum outcome o);

const char *errcode_name(enum error_code c);
int errcode_parse(enum error_code *out, const char *s);
/* The outcome an error code belongs to
 * (docs/classification.md#classification-matrix). */
enum outcome errcode_outcome(enum error_code c);
/* The default error code of an outcome (its first in the table). */
enum error_code outcome_default_errcode(enum outcome o);

const char *decision_name(enum decision d);
int decision_parse(enum decision *out, const char *s);

const char *role_name(enum role r);
int role_parse(enum role *out, const char *s);

const char *status_name(enum story_status s);
int status_parse(enum story_status *out, const char *s);

/* How far a story's task list is: its tasks and the subtasks nested
 * under them, checked and in all (docs/stories.md).  Carried whole from
 * the file's reading to the attempt, the story and the record. */
struct task_counts {
	int tasks_completed, tasks_total;
	int subtasks_completed, subtasks_total;
};

#endif
