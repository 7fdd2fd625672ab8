/* model.c - see model.h. */
#include <string.h>

#include "common/model.h"

static const char *const outcome_names[OUTCOME__COUNT] = {
    [OUTCOME_NONE] = "running",
    [OUTCOME_SUCCESS] = "success",
    [OUTCOME_INCOMPLETE] = "incomplete",
    [OUTCOME_GATE_FAILED] = "gate_failed",
    [OUTCOME_CRASH] = "crash",
    [OUTCOME_TIMEOUT] = "timeout",
    [OUTCOME_NETWORK] = "network",
    [OUTCOME_RATE_LIMIT] = "rate_limit",
    [OUTCOME_USAGE_LIMIT] = "usage_limit",
    [OUTCOME_PERMANENT] = "permanent",
    [OUTCOME_INTERRUPTED] = "interrupted",
};

static const char *const errcode_names[ERRC__COUNT] = {
    [ERRC_NONE] = "",
    [ERRC_INCOMPLETE] = "INCOMPLETE",
    [ERRC_GATE_FAILED] = "GATE_FAILED",
    [ERRC_CRASH] = "CRASH",
    [ERRC_TIMEOUT] = "TIMEOUT",
    [ERRC_STALLED] = "STALLED",
    [ERRC_NETWORK_ERROR] = "NETWORK_ERROR",
    [ERRC_RATE_LIMIT] = "RATE_LIMIT",
    [ERRC_OVERLOADED] = "OVERLOADED",
    [ERRC_SERVER_ERROR] = "SERVER_ERROR",
    [ERRC_USAGE_LIMIT] = "USAGE_LIMIT",
    [ERRC_AUTH] = "AUTH",
    [ERRC_PERMISSION_DENIED] = "PERMISSION_DENIED",
    [ERRC_MODEL_NOT_FOUND] = "MODEL_NOT_FOUND",
    [ERRC_QUOTA_EXCEEDED] = "QUOTA_EXCEEDED",
    [ERRC_BUDGET_EXCEEDED] = "BUDGET_EXCEEDED",
    [ERRC_INTERRUPTED] = "INTERRUPTED",
    [ERRC_NO_EVIDENCE] = "NO_EVIDENCE",
    [ERRC_INVALID_OUTPUT] = "INVALID_OUTPUT",
};

static const enum outcome errcode_outcomes[ERRC__COUNT] = {
    [ERRC_NONE] = OUTCOME_SUCCESS,
    [ERRC_INCOMPLETE] = OUTCOME_INCOMPLETE,
    [ERRC_GATE_FAILED] = OUTCOME_GATE_FAILED,
    [ERRC_CRASH] = OUTCOME_CRASH,
    [ERRC_TIMEOUT] = OUTCOME_TIMEOUT,
    [ERRC_STALLED] = OUTCOME_TIMEOUT,
    [ERRC_NETWORK_ERROR] = OUTCOME_NETWORK,
    [ERRC_RATE_LIMIT] = OUTCOME_RATE_LIMIT,
    [ERRC_OVERLOADED] = OUTCOME_RATE_LIMIT,
    [ERRC_SERVER_ERROR] = OUTCOME_RATE_LIMIT,
    [ERRC_USAGE_LIMIT] = OUTCOME_USAGE_LIMIT,
    [ERRC_AUTH] = OUTCOME_PERMANENT,
    [ERRC_PERMISSION_DENIED] = OUTCOME_PERMANENT,
    [ERRC_MODEL_NOT_FOUND] = OUTCOME_PERMANENT,
    [ERRC_QUOTA_EXCEEDED] = OUTCOME_PERMANENT,
    [ERRC_BUDGET_EXCEEDED] = OUTCOME_PERMANENT,
    [ERRC_INTERRUPTED] = OUTCOME_INTERRUPTED,
    [ERRC_NO_EVIDENCE] = OUTCOME_INCOMPLETE,
    /* a gate outside storyctl refused the work
     * (docs/api.md#error-codes-of-a-post) */
    [ERRC_INVALID_OUTPUT] = OUTCOME_GATE_FAILED,
};

static const char *const decision_names[DECISION__COUNT] = {
    [DECISION_NONE] = "none",
    [DECISION_DONE] = "done",
    [DECISION_RETRY] = "retry",
    [DECISION_WAIT] = "wait",
    [DECISION_DEFER] = "defer",
    [DECISION_ESCALATE] = "escalate",
};

static const char *const status_names[STATUS__COUNT] = {
    [STATUS_PENDING] = "pending",
    [STATUS_RUNNING] = "running",
    [STATUS_DONE] = "done",
    [STATUS_DEFERRED] = "deferred",
    [STATUS_ESCALATED] = "escalated",
    [STATUS_BLOCKED] = "blocked",
    [STATUS_INVALID] = "invalid",
};

static int
name_lookup(const char *const *names, int count, const char *s)
{
	int i;

	if (s == NULL)
		return -1;
	for (i = 0; i < count; i++)
		if (names[i] != NULL && strcmp(names[i], s) == 0)
			return i;
	return -1;
}

const char *
outcome_name(enum outcome o)
{
	if ((int)o < 0 || o >= OUTCOME__COUNT)
		return "?";
	return outcome_names[o];
}

int
outcome_parse(enum outcome *out, const char *s)
{
	int i = name_lookup(outcome_names, OUTCOME__COUNT, s);

	if (i <= 0)
		return -1;
	*out = (enum outcome)i;
	return 0;
}

bool
outcome_counts_plateau(enum outcome o)
{
	switch (o) {
	case OUTCOME_INCOMPLETE:
	case OUTCOME_GATE_FAILED:
	case OUTCOME_CRASH:
	case OUTCOME_TIMEOUT:
		return true;
	default:
		return false;
	}
}

bool
outcome_counted(enum outcome o)
{
	return o != OUTCOME_USAGE_LIMIT && o != OUTCOME_INTERRUPTED &&
	    o != OUTCOME_NONE;
}

const char *
errcode_name(enum error_code c)
{
	if ((int)c < 0 || c >= ERRC__COUNT)
		return "?";
	return errcode_names[c];
}

int
errcode_parse(enum error_code *out, const char *s)
{
	int i = name_lookup(errcode_names, ERRC__COUNT, s);

	if (i <= 0)
		return -1;
	*out = (enum error_code)i;
	return 0;
}

enum outcome
errcode_outcome(enum error_code c)
{
	if ((int)c < 0 || c >= ERRC__COUNT)
		return OUTCOME_CRASH;
	return errcode_outcomes[c];
}

enum error_code
outcome_default_errcode(enum outcome o)
{
	switch (o) {
	case OUTCOME_INCOMPLETE:
		return ERRC_INCOMPLETE;
	case OUTCOME_GATE_FAILED:
		return ERRC_GATE_FAILED;
	case OUTCOME_CRASH:
		return ERRC_CRASH;
	case OUTCOME_TIMEOUT:
		return ERRC_TIMEOUT;
	case OUTCOME_NETWORK:
		return ERRC_NETWORK_ERROR;
	case OUTCOME_RATE_LIMIT:
		return ERRC_RATE_LIMIT;
	case OUTCOME_USAGE_LIMIT:
		return ERRC_USAGE_LIMIT;
	case OUTCOME_PERMANENT:
		return ERRC_AUTH;
	case OUTCOME_INTERRUPTED:
		return ERRC_INTERRUPTED;
	default:
		return ERRC_NONE;
	}
}

const char *
decision_name(enum decision d)
{
	if ((int)d < 0 || d >= DECISION__COUNT)
		return "?";
	return decision_names[d];
}

int
decision_parse(enum decision *out, const char *s)
{
	int i = name_lookup(decision_names, DECISION__COUNT, s);

	if (i < 0)
		return -1;
	*out = (enum decision)i;
	return 0;
}

const char *
role_name(enum role r)
{
	return r == ROLE_FALLBACK ? "fallback" : "primary";
}

int
role_parse(enum role *out, const char *s)
{
	if (s != NULL && strcmp(s, "primary") == 0)
		*out = ROLE_PRIMARY;
	else if (s != NULL && strcmp(s, "fallback") == 0)
		*out = ROLE_FALLBACK;
	else
		return -1;
	return 0;
}

const char *
status_name(enum story_status s)
{
	if ((int)s < 0 || s >= STATUS__COUNT)
		return "?";
	return status_names[s];
}

int
status_parse(enum story_status *out, const char *s)
{
	int i = name_lookup(status_names, STATUS__COUNT, s);

	if (i < 0)
		return -1;
	*out = (enum story_status)i;
	return 0;
}
