/*
 * failure.h - the body of POST /v1/stories/ID/failures, a failure found
 * outside storyctl (docs/api.md#failure-records): read strictly (an
 * unknown key, a wrong type or a value out of range is refused, naming
 * it), and the RFC 3339 times it carries.  Pure: no I/O, no clock; only
 * what jansson allocates while parsing.
 */
#ifndef STORYCTL_FAILURE_H
#define STORYCTL_FAILURE_H

#include <stddef.h>
#include <stdint.h>

#include "common/err.h"
#include "common/model.h"

/* error_message: at most this many bytes as sent. */
#define FAILURE_MESSAGE_MAX 4096
/* agent_id: at most this many bytes, less one. */
#define FAILURE_AGENT_MAX 64
/* The body nests no deeper than this (checked before parsing). */
#define FAILURE_DEPTH_MAX 8

struct failure_report {
	/* any code of storyctl, reference 003's six among them
	 * (docs/api.md#error-codes-of-a-post) */
	enum error_code error_code;
	/* as sent, without terminal escapes and control characters other
	 * than tab and newline (text_clean()); "" when not sent */
	char error_message[FAILURE_MESSAGE_MAX + 1];
	char agent_id[FAILURE_AGENT_MAX]; /* "" when not sent or null */
	int attempt_number; /* 1..FAILURE_ATTEMPT_MAX; 0 when not sent */
	int64_t retry_scheduled_ms; /* epoch ms; 0 when not sent or null */
	int http_status; /* 100..599; 0 when not sent */
	int exit_code; /* 0..255; -1 when not sent */
	int signal; /* 1..64; 0 when not sent */
};

#define FAILURE_ATTEMPT_MAX 1000000

/*
 * Read the len bytes at body (not NUL-terminated; NULL when len is 0)
 * as the failure of story story_id.  *out is always filled (zeroed,
 * exit_code -1, when refused).  Returns 0; SC_EUSAGE when the body is
 * not JSON (HTTP 400); SC_EDATA when it is JSON but not a failure
 * record (HTTP 422): not an object, too deep, an unknown key (named,
 * with a did-you-mean), a wrong type, a value out of range, an
 * error_code that is not a known code, an intent_id other than story_id.
 * err->msg starts with "failure: ".
 */
int failure_parse(struct failure_report *out, const char *body, size_t len,
    const char *story_id, struct sc_err *err);

/*
 * An RFC 3339 date-time, "YYYY-MM-DDTHH:MM:SS[.frac](Z|+HH:MM|-HH:MM)"
 * ('t' and 'z' in lower case too), of the years 1970 to 9999 in UTC
 * (after the epoch, before FAILURE_TIME_END_MS), as epoch milliseconds
 * (the fraction cut to milliseconds).  0 and *ms set, or -1 when s is
 * not one (*ms untouched).
 */
int failure_time_parse(int64_t *ms, const char *s);

/* 10000-01-01T00:00:00Z in epoch milliseconds: no time at or after it
 * can be shown as an RFC 3339 date-time. */
#define FAILURE_TIME_END_MS 253402300800000LL

#endif
