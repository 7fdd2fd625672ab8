/*
 * classify_int.h - what the three parts of the classifier share
 * (classify.c decides, classify_line.c gives one line of text its kind,
 * classify_event.c reads the JSON events); not an interface.  Pure.
 */
#ifndef STORYCTL_CLASSIFY_INT_H
#define STORYCTL_CLASSIFY_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "strategies/classify.h"
#include "strategies/reader_int.h"

/* gemini-cli treats a quota retry delay above 5 minutes as a terminal
 * (window) limit rather than a retryable one; so do we */
#define CLASSIFY_CAPACITY_USAGE_MS ((int64_t)300 * 1000)

/* what one line (or event) says went wrong, before it is a code */
enum kind {
	K_NONE = 0,
	K_USER_PERM,
	K_USER_NET,
	K_AUTH,
	K_PERM,
	K_MODEL,
	K_BUDGET,
	K_QUOTA_HARD,
	K_USAGE,
	K_QUOTA_SOFT,
	K_CAPACITY,
	K_RATE,
	K_OVERLOADED,
	K_SERVER,
	K_NETWORK,
	/* a network wait that does not say why ("waiting for network"): a
	 * line that names the cause wins the message when there is one */
	K_NETWORK_WAIT,
	/* permanent codes known only from a status number ("last status:
	 * 401"): weaker than a message that says so */
	K_AUTH_STATUS,
	K_PERM_STATUS,
	K_MODEL_STATUS,
	K__COUNT
};

/* what a parsed JSON line is */
enum ev {
	EV_NONE = 0, /* not an event we know: match it as text */
	EV_CONTENT, /* assistant text, tool output, ...: never matched */
	EV_OK, /* a final result that succeeded */
	EV_ERR, /* a final result that failed */
	EV_ERROR_EVENT, /* an error event that is not the final result */
	EV_RETRY /* a retry notice: an error event while it is the
			 * newest event, content once newer events follow */
};

struct sres {
	enum ev ev;
	char *msg; /* owned; may be NULL */
	int status; /* HTTP status reported by the event, or 0 */
	enum kind code_kind; /* from claude's assistant "error" field */
	/* claude's rate_limit_event {"status":"rejected"}: a usage wall
	 * (resetsAt, Unix seconds, 0 when it names none) */
	bool wall;
	int64_t wall_reset;
	/* claude's api_retry after an HTTP 429: the delay it waited, which
	 * is the server's retry-after when there was one */
	int64_t retry_delay_ms;
};

/* What the stream says besides its final result (classify_structured_find). */
struct sextra {
	bool wall;
	int64_t wall_reset;
	int64_t retry_429_ms; /* the newest api_retry of a 429, or 0 */
};

struct ctx {
	bool has_hint; /* a reset time or delay is known */
	bool delay_hint; /* the text gives a retry delay */
	int64_t delay_ms;
	/* the text says the limit lifts without saying when ("try again
	 * later"): a usage limit with the policy's default wait */
	bool lifts_later;
};

/* ---- classify_line.c: the kind of one line of text ---- */

/* Whether one of the user's patterns (any case) occurs in s[0..n). */
bool classify_user_any(const struct strlist *l, const char *s, size_t n);

/* The kind of one line: user patterns first (they win over built-in
 * ones), then the built-in table. */
enum kind classify_line_kind(
    const struct classify_input *in, const char *s, size_t n);

/* The kind of one line by the built-in table, ignoring user patterns. */
enum kind classify_builtin_kind(const char *s, size_t n);

/* The kind an HTTP status stands for, or K_NONE. */
enum kind classify_status_kind(int status);

/* The error code of a kind.  builtin is the table's kind of the same
 * text (names a user "permanent_on" match more precisely). */
enum error_code classify_kind_code(
    enum kind k, enum kind builtin, const struct ctx *c);

/* ---- classify_event.c: the structured results ---- */

/* The final result (or newest error event) of the window's JSON events
 * into *out (its msg owned by the caller) and what else the stream
 * says into *x; marks content and success events skip. */
void classify_structured_find(
    struct sres *out, struct sextra *x, struct classify_line *v, int n);

/* The code a structured error names, or ERRC_NONE. */
enum error_code classify_structured_code(const struct classify_input *in,
    const struct sres *r, const struct ctx *window);

#endif
