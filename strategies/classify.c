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
 * below; then the kinds of the whole window are resolved by class
 * precedence (user patterns, permanent, usage limit, quota, rate limit,
 * network).
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "strategies/classify.h"
#include "strategies/reader.h"
#include "strategies/reader_int.h"
#include "strategies/text.h"

/* lines read as one error block, from the newest matching line up: a
 * pretty-printed API error is about this long */
#define CLASSIFY_BLOCK 24
/* gemini-cli treats a quota retry delay above 5 minutes as a terminal
 * (window) limit rather than a retryable one; so do we */
#define CLASSIFY_CAPACITY_USAGE_MS ((int64_t)300 * 1000)

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

struct pattern {
	const char *text; /* lowercase; NULL: call fn instead */
	bool (*fn)(const char *s, size_t n);
	enum kind kind;
	bool word; /* not inside an identifier ([A-Za-z0-9_]) */
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

/* What the stream says besides its final result (structured_find). */
struct sextra {
	bool wall;
	int64_t wall_reset;
	int64_t retry_429_ms; /* the newest api_retry of a 429, or 0 */
};

struct ctx {
	bool has_hint; /* a reset time or delay is known */
	bool delay_hint; /* the text gives a retry delay */
	int64_t delay_ms;
};

static bool match_model_missing(const char *s, size_t n);
static bool match_limit_reset(const char *s, size_t n);

/*
 * The ordered table: the first entry that matches a line gives the line
 * its kind, so specific phrases come before the generic words they
 * contain (aider's timeout message says "overloaded"; a billing 429 says
 * "quota").  Sources of every phrase: docs/classification.md.
 */
static const struct pattern patterns[] = {
    {"timed out without returning a response", NULL, K_NETWORK, false},

    {"insufficient_quota", NULL, K_QUOTA_HARD, false},
    {"credit balance is too low", NULL, K_QUOTA_HARD, false},
    {"credits are depleted", NULL, K_QUOTA_HARD, false},
    {"insufficient_g1_credits_balance", NULL, K_QUOTA_HARD, false},
    {"billing_error", NULL, K_QUOTA_HARD, true},

    {"budget exceeded", NULL, K_BUDGET, false},
    {"exceeded budget", NULL, K_BUDGET, false},
    {"usd budget", NULL, K_BUDGET, false},
    {"max budget", NULL, K_BUDGET, false},
    {"max_budget", NULL, K_BUDGET, false},
    {"budgetexceedederror", NULL, K_BUDGET, false},

    {"invalid api key", NULL, K_AUTH, false},
    {"invalid_api_key", NULL, K_AUTH, false},
    {"incorrect api key", NULL, K_AUTH, false},
    {"invalid x-api-key", NULL, K_AUTH, false},
    {"authentication_error", NULL, K_AUTH, false},
    {"authentication_failed", NULL, K_AUTH, false},
    {"authenticationerror", NULL, K_AUTH, false},
    {"not logged in", NULL, K_AUTH, false},
    {"please run /login", NULL, K_AUTH, false},
    {"run /login", NULL, K_AUTH, false},
    {"oauth token has expired", NULL, K_AUTH, false},
    {"oauth token revoked", NULL, K_AUTH, false},
    {"api key not valid", NULL, K_AUTH, false},
    {"api_key_invalid", NULL, K_AUTH, false},
    {"unauthenticated", NULL, K_AUTH, true},
    {"not able to authenticate you", NULL, K_AUTH, false},
    {"failed to refresh token", NULL, K_AUTH, false},
    {"could not resolve authentication method", NULL, K_AUTH, false},
    {"please set an auth method", NULL, K_AUTH, false},
    {"missing api key", NULL, K_AUTH, false},
    {"invalid bearer token", NULL, K_AUTH, false},
    {"sign in again", NULL, K_AUTH, false},
    {"signing in again", NULL, K_AUTH, false},
    {"log in again", NULL, K_AUTH, false},

    {"permission_error", NULL, K_PERM, true},
    {"permission_denied", NULL, K_PERM, true},
    {"permissiondeniederror", NULL, K_PERM, false},
    {"403 forbidden", NULL, K_PERM, false},
    /* gemini-cli 0.61 in a folder never trusted, exit 55 (its
	 * FatalUntrustedWorkspaceError): no retry trusts the folder */
    {"not running in a trusted directory", NULL, K_PERM, false},

    {"not_found_error", NULL, K_MODEL, true},
    {"model_not_found", NULL, K_MODEL, true},
    {"requested entity was not found", NULL, K_MODEL, false},
    {"issue with the selected model", NULL, K_MODEL, false},
    {"is not found for api version", NULL, K_MODEL, false},
    {"provided model identifier is invalid", NULL, K_MODEL, false},
    {"notfounderror", NULL, K_MODEL, false},
    {NULL, match_model_missing, K_MODEL, false},

    /* a wall that no wait lifts: usage turned off for the account */
    {"usage allocation has been disabled", NULL, K_QUOTA_HARD, false},
    {"service is disabled for your org", NULL, K_QUOTA_HARD, false},
    {"doesn't include usage", NULL, K_QUOTA_HARD, false},
    {"doesn't include extra usage", NULL, K_QUOTA_HARD, false},
    {"usage limit is set to $0", NULL, K_QUOTA_HARD, false},

    /* claude 2.1's walls, "You've hit your session limit · resets 2am
	 * (Europe/Oslo)", "... weekly limit", "... Opus limit", "... org's
	 * monthly spend limit", "You're out of extra usage · resets 3pm":
	 * usage_limit with a reset, QUOTA_EXCEEDED without (kind_code) */
    {"usage limit reached", NULL, K_USAGE, false},
    {"hit your limit", NULL, K_USAGE, false},
    {"hit your usage limit", NULL, K_USAGE, false},
    {"hit your session limit", NULL, K_USAGE, false},
    {"hit your weekly limit", NULL, K_USAGE, false},
    {"hit your opus limit", NULL, K_USAGE, false},
    {"hit your sonnet limit", NULL, K_USAGE, false},
    {"hit your fable 5 limit", NULL, K_USAGE, false},
    {"monthly spend limit", NULL, K_USAGE, false},
    {"monthly usage limit", NULL, K_USAGE, false},
    {"out of extra usage", NULL, K_USAGE, false},
    {"out of usage credits", NULL, K_USAGE, false},
    {"org is out of usage", NULL, K_USAGE, false},
    {"usage_limit_reached", NULL, K_USAGE, false},
    {"limit will reset", NULL, K_USAGE, false},
    {"limits will reset", NULL, K_USAGE, false},
    {NULL, match_limit_reset, K_USAGE, false},

    /* gemini-cli's TerminalQuotaError for a per-day quota: it names
	 * no reset, but a daily quota resets at midnight Pacific time
	 * (classify_attempt supplies that reset) */
    {"exhausted your daily quota", NULL, K_USAGE, false},

    {"exceeded your current quota", NULL, K_QUOTA_SOFT, false},
    {"check your plan and billing details", NULL, K_QUOTA_SOFT, false},

    {"exhausted your capacity", NULL, K_CAPACITY, false},

    {"rate_limit", NULL, K_RATE, false},
    {"rate limit", NULL, K_RATE, false},
    {"rate-limit", NULL, K_RATE, false},
    {"ratelimit", NULL, K_RATE, false},
    {"too many requests", NULL, K_RATE, false},
    {"resource_exhausted", NULL, K_RATE, false},
    {"resource has been exhausted", NULL, K_RATE, false},
    {"resource exhausted", NULL, K_RATE, false},
    {"quota exceeded for quota metric", NULL, K_RATE, false},

    {"overloaded_error", NULL, K_OVERLOADED, false},
    {"overloaded", NULL, K_OVERLOADED, true},
    {"model is at capacity", NULL, K_OVERLOADED, false},

    /* codex 0.169's words for an HTTP 500 of the Responses API: no
	 * status code in the text (tests/fixtures/agents/real/) */
    {"experiencing high demand", NULL, K_SERVER, false},
    {"internal server error", NULL, K_SERVER, false},
    {"service unavailable", NULL, K_SERVER, false},
    {"bad gateway", NULL, K_SERVER, false},
    {"gateway timeout", NULL, K_SERVER, false},
    {"api_error", NULL, K_SERVER, true},
    {"server_error", NULL, K_SERVER, true},
    {"internalservererror", NULL, K_SERVER, false},
    {"serviceunavailableerror", NULL, K_SERVER, false},

    {"econnreset", NULL, K_NETWORK, false},
    {"etimedout", NULL, K_NETWORK, false},
    {"enotfound", NULL, K_NETWORK, false},
    {"eai_again", NULL, K_NETWORK, false},
    {"econnrefused", NULL, K_NETWORK, false},
    {"econnaborted", NULL, K_NETWORK, false},
    {"ehostunreach", NULL, K_NETWORK, false},
    {"enetunreach", NULL, K_NETWORK, false},
    {"connection refused", NULL, K_NETWORK, false},
    {"connectionrefused", NULL, K_NETWORK, false},
    {"connection reset", NULL, K_NETWORK, false},
    {"connection closed", NULL, K_NETWORK, false},
    {"connection error", NULL, K_NETWORK, false},
    {"connection timed out", NULL, K_NETWORK, false},
    {"could not resolve host", NULL, K_NETWORK, false},
    {"name does not resolve", NULL, K_NETWORK, false},
    {"name or service not known", NULL, K_NETWORK, false},
    {"temporary failure in name resolution", NULL, K_NETWORK, false},
    {"nodename nor servname", NULL, K_NETWORK, false},
    {"no such host", NULL, K_NETWORK, false},
    {"getaddrinfo", NULL, K_NETWORK, false},
    {"fetch failed", NULL, K_NETWORK, false},
    {"socket hang up", NULL, K_NETWORK, false},
    {"network is unreachable", NULL, K_NETWORK, false},
    {"network is down", NULL, K_NETWORK, false},
    {"network error", NULL, K_NETWORK, false},
    {"no route to host", NULL, K_NETWORK, false},
    {"stream disconnected before completion", NULL, K_NETWORK, false},
    {"error sending request", NULL, K_NETWORK, false},
    {"unable to connect to api", NULL, K_NETWORK, false},
    {"apiconnectionerror", NULL, K_NETWORK, false},
    {"und_err_", NULL, K_NETWORK, false},
    {"client network socket disconnected", NULL, K_NETWORK, false},
    {"request timed out", NULL, K_NETWORK, false},
    {"tls handshake timeout", NULL, K_NETWORK, false},
    {"i/o timeout", NULL, K_NETWORK, false},
    {"failed to connect to", NULL, K_NETWORK, false},
    {"curl: (6)", NULL, K_NETWORK, false},
    {"curl: (7)", NULL, K_NETWORK, false},
    {"curl: (28)", NULL, K_NETWORK, false},
    {"curl: (35)", NULL, K_NETWORK, false},
    {"curl: (52)", NULL, K_NETWORK, false},
    {"curl: (56)", NULL, K_NETWORK, false},

    /* last, so that a cause on the same line names the kind: codex
	 * 0.169 offline, text mode, prints "ERROR: Reconnecting... waiting
	 * for network" once a minute until it is killed, while the line
	 * that named the cause scrolls out of the window */
    {"waiting for network", NULL, K_NETWORK_WAIT, false},
};

static int
lower(int c)
{
	return c >= 'A' && c <= 'Z' ? c + ('a' - 'A') : c;
}

static bool
is_digit(int c)
{
	return c >= '0' && c <= '9';
}

static bool
is_alpha(int c)
{
	c = lower(c);
	return c >= 'a' && c <= 'z';
}

static bool
is_ident(int c)
{
	return is_digit(c) || is_alpha(c) || c == '_';
}

/* Case-insensitive equality of s[0..n) with the start of lowercase w. */
static bool
ci_eq(const char *s, const char *w, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (lower((unsigned char)s[i]) != w[i])
			return false;
	return true;
}

/* Offset of the first occurrence of lowercase needle in s[0..n) at or
 * after from, or n.  word: the match must not touch an identifier. */
static size_t
ci_find_from(
    const char *s, size_t n, size_t from, const char *needle, bool word)
{
	size_t m = strlen(needle), i;

	if (m == 0 || m > n)
		return n;
	for (i = from; i + m <= n; i++) {
		if (lower((unsigned char)s[i]) != needle[0] ||
		    !ci_eq(s + i, needle, m))
			continue;
		if (word &&
		    ((i > 0 && is_ident((unsigned char)s[i - 1])) ||
			(i + m < n && is_ident((unsigned char)s[i + m]))))
			continue;
		return i;
	}
	return n;
}

static bool
ci_has(const char *s, size_t n, const char *needle, bool word)
{
	return ci_find_from(s, n, 0, needle, word) < n;
}

/* Case-insensitive substring test for a user pattern (any case). */
static bool
user_has(const char *s, size_t n, const char *pat)
{
	size_t m, i, k;

	if (pat == NULL || (m = strlen(pat)) == 0 || m > n)
		return false;
	for (i = 0; i + m <= n; i++) {
		for (k = 0; k < m; k++)
			if (lower((unsigned char)s[i + k]) !=
			    lower((unsigned char)pat[k]))
				break;
		if (k == m)
			return true;
	}
	return false;
}

static bool
user_any(const struct strlist *l, const char *s, size_t n)
{
	size_t i;

	if (l == NULL || s == NULL)
		return false;
	for (i = 0; i < l->n; i++)
		if (user_has(s, n, l->items[i]))
			return true;
	return false;
}

/*
 * "model 'x' not found", "The model `gpt-5` does not exist", "model:
 * claude-x not found": the word "model" (not "models/", "model.py",
 * "remodel"), at most three words, then "not found" / "does not exist".
 */
static bool
match_model_missing(const char *s, size_t n)
{
	size_t i = 0, j, words;

	while ((i = ci_find_from(s, n, i, "model", false)) < n) {
		j = i + 5;
		if ((i > 0 && is_alpha((unsigned char)s[i - 1])) ||
		    (j < n && s[j] != ' ' && s[j] != ':' && s[j] != '\t')) {
			i++;
			continue;
		}
		words = 0;
		while (j < n && j - i < 100 && words <= 3) {
			while (j < n &&
			    (s[j] == ' ' || s[j] == ':' || s[j] == '\t'))
				j++;
			if (n - j >= 9 && ci_eq(s + j, "not found", 9))
				return true;
			if (n - j >= 14 && ci_eq(s + j, "does not exist", 14))
				return true;
			while (j < n && s[j] != ' ' && s[j] != '\t')
				j++;
			words++;
		}
		i++;
	}
	return false;
}

/* "5-hour limit reached ∙ resets 1am", "Opus weekly limit reached ∙
 * resets Oct 6, 1pm": a limit that names its reset. */
static bool
match_limit_reset(const char *s, size_t n)
{
	return ci_has(s, n, "limit reached", false) &&
	    (ci_has(s, n, "reset", false) || ci_has(s, n, "try again", false));
}

/*
 * How well the text before a status number at s[i] names it: 2 (strong)
 * for "API Error: 401", "status 401", "last status: 401", "status code
 * 401" and a JSON "code": 401 or "status":401; 1 (weak) for "Error: 429",
 * "code 429", "HTTP 429"; else 0.
 */
static int
status_context_before(const char *s, size_t i)
{
	static const char *const strong[] = {
	    "api error",
	    "status code",
	    "status_code",
	    "statuscode",
	    "status",
	};
	static const char *const weak[] = {
	    "code",
	    "error",
	    "http/1.1",
	    "http/1.0",
	    "http/2",
	    "http",
	};
	size_t j = i, k = 0, w, m;

	/* a JSON key: "code": 404 */
	while (j > 0 && k < 3 && (s[j - 1] == ' ' || s[j - 1] == ':')) {
		j--;
		k++;
	}
	if (j >= 6 && ci_eq(s + j - 6, "\"code\"", 6))
		return 2;
	j = i;
	k = 0;
	while (j > 0 && k < 4 && strchr(" \t:\"'=([", s[j - 1]) != NULL &&
	    s[j - 1] != '\0') {
		j--;
		k++;
	}
	for (w = 0; w < sizeof(strong) / sizeof(strong[0]); w++) {
		m = strlen(strong[w]);
		if (j >= m && ci_eq(s + j - m, strong[w], m))
			return 2;
	}
	for (w = 0; w < sizeof(weak) / sizeof(weak[0]); w++) {
		m = strlen(weak[w]);
		if (j >= m && ci_eq(s + j - m, weak[w], m))
			return 1;
	}
	return 0;
}

/* Whether the text after a status number is its reason phrase
 * ("429 Too Many Requests", "503 Service Unavailable") or an error body
 * ("429 {"): weak evidence, as npm prints "404 Not Found" too. */
static bool
status_context_after(const char *s, size_t n, size_t i)
{
	static const char *const words[] = {
	    "too many requests",
	    "unauthorized",
	    "forbidden",
	    "not found",
	    "service unavailable",
	    "bad gateway",
	    "internal server error",
	    "gateway timeout",
	    "overloaded",
	    "{",
	};
	size_t w, m;

	if (i < n && (s[i] == ' ' || s[i] == '\t'))
		i++;
	for (w = 0; w < sizeof(words) / sizeof(words[0]); w++) {
		m = strlen(words[w]);
		if (n - i >= m && ci_eq(s + i, words[w], m))
			return true;
	}
	return false;
}

/* The first HTTP error status (400..599) the line states in an API
 * context, or 0; *strong tells whether the context was strong.  A bare
 * "401" (a test name, a line count) is not one. */
static int
line_status(const char *s, size_t n, bool *strong)
{
	size_t i;
	int v, ctx;

	*strong = false;
	for (i = 0; i + 3 <= n; i++) {
		if (!is_digit((unsigned char)s[i]) ||
		    !is_digit((unsigned char)s[i + 1]) ||
		    !is_digit((unsigned char)s[i + 2]))
			continue;
		if (i > 0 &&
		    (is_ident((unsigned char)s[i - 1]) || s[i - 1] == '.' ||
			s[i - 1] == '-'))
			continue;
		if (i + 3 < n &&
		    (is_ident((unsigned char)s[i + 3]) ||
			(s[i + 3] == '.' && i + 4 < n &&
			    is_digit((unsigned char)s[i + 4]))))
			continue;
		v = (s[i] - '0') * 100 + (s[i + 1] - '0') * 10 +
		    (s[i + 2] - '0');
		if (v < 400 || v > 599)
			continue;
		ctx = status_context_before(s, i);
		if (ctx == 0 && status_context_after(s, n, i + 3))
			ctx = 1;
		if (ctx > 0) {
			*strong = ctx == 2;
			return v;
		}
	}
	return 0;
}

static enum kind
status_kind(int status)
{
	switch (status) {
	case 401:
		return K_AUTH;
	case 403:
		return K_PERM;
	case 404:
		return K_MODEL;
	case 429:
		return K_RATE;
	case 529:
		return K_OVERLOADED;
	case 500:
	case 502:
	case 503:
	case 504:
		return K_SERVER;
	default:
		return K_NONE;
	}
}

/* The kind of one line by the built-in table, ignoring user patterns. */
static enum kind
builtin_kind(const char *s, size_t n)
{
	enum kind k;
	bool strong;
	size_t i;

	for (i = 0; i < sizeof(patterns) / sizeof(patterns[0]); i++) {
		const struct pattern *p = &patterns[i];

		if (p->text != NULL ? ci_has(s, n, p->text, p->word)
				    : p->fn(s, n))
			return p->kind;
	}
	/* a permanent code from a number alone needs a strong context:
	 * "npm ERR! 404 Not Found" must not disable an agent */
	k = status_kind(line_status(s, n, &strong));
	if (k == K_AUTH || k == K_PERM || k == K_MODEL) {
		if (!strong)
			return K_NONE;
		k = k == K_AUTH	  ? K_AUTH_STATUS
		    : k == K_PERM ? K_PERM_STATUS
				  : K_MODEL_STATUS;
	}
	return k;
}

/* The kind of one line: user patterns first (they win over built-in
 * ones), then the table. */
static enum kind
line_kind(const struct classify_input *in, const char *s, size_t n)
{
	if (user_any(in->permanent_on, s, n))
		return K_USER_PERM;
	if (user_any(in->network_on, s, n))
		return K_USER_NET;
	return builtin_kind(s, n);
}

static bool
kind_permanent(enum kind k)
{
	return k == K_AUTH || k == K_PERM || k == K_MODEL || k == K_BUDGET ||
	    k == K_QUOTA_HARD || k == K_AUTH_STATUS || k == K_PERM_STATUS ||
	    k == K_MODEL_STATUS;
}

/* The error code of a kind.  builtin is the table's kind of the same text
 * (used to name a user "permanent_on" match more precisely). */
static enum error_code
kind_code(enum kind k, enum kind builtin, const struct ctx *c)
{
	switch (k) {
	case K_USER_PERM:
		if (kind_permanent(builtin))
			return kind_code(builtin, K_NONE, c);
		return outcome_default_errcode(OUTCOME_PERMANENT);
	case K_USER_NET:
	case K_NETWORK:
	case K_NETWORK_WAIT:
		return ERRC_NETWORK_ERROR;
	case K_AUTH:
	case K_AUTH_STATUS:
		return ERRC_AUTH;
	case K_PERM:
	case K_PERM_STATUS:
		return ERRC_PERMISSION_DENIED;
	case K_MODEL:
	case K_MODEL_STATUS:
		return ERRC_MODEL_NOT_FOUND;
	case K_BUDGET:
		return ERRC_BUDGET_EXCEEDED;
	case K_QUOTA_HARD:
		return ERRC_QUOTA_EXCEEDED;
	case K_USAGE:
		/* a usage limit that names its reset is waited for; a plan,
		 * spend or organisation limit that names none is lifted by
		 * a person, not by a wait (docs/classification.md#precedence) */
		return c->has_hint ? ERRC_USAGE_LIMIT : ERRC_QUOTA_EXCEEDED;
	case K_QUOTA_SOFT:
		/* a quota that names its retry window clears by itself
		 * (gemini per-minute quotas); one that does not is billing */
		return c->delay_hint ? ERRC_RATE_LIMIT : ERRC_QUOTA_EXCEEDED;
	case K_CAPACITY:
		if (c->delay_hint && c->delay_ms > CLASSIFY_CAPACITY_USAGE_MS)
			return ERRC_USAGE_LIMIT;
		return ERRC_RATE_LIMIT;
	case K_RATE:
		/* a window that reopens later than any retry would wait
		 * (gemini's "Suggested retry after 7200s.", which it treats
		 * as terminal past 5 minutes): a usage limit */
		if (c->delay_hint && c->delay_ms > CLASSIFY_CAPACITY_USAGE_MS)
			return ERRC_USAGE_LIMIT;
		return ERRC_RATE_LIMIT;
	case K_OVERLOADED:
		return ERRC_OVERLOADED;
	case K_SERVER:
		return ERRC_SERVER_ERROR;
	default:
		return ERRC_NONE;
	}
}

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

/*
 * What one parsed JSON object is.  Recognised:
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
	const char *sub;
	json_t *v, *m;
	bool err = false;

	if (type == NULL) {
		v = json_object_get(o, "error");
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
		if (strcmp(type, "error") == 0 ||
		    strcmp(type, "stream_error") == 0) {
			sres_msg(r, jstr(m, "message"));
			return EV_ERROR_EVENT;
		}
		return EV_CONTENT;
	}
	if (strcmp(type, "result") == 0) {
		const char *status = jstr(o, "status");

		sub = jstr(o, "subtype");
		v = json_object_get(o, "is_error");
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
	if (strcmp(type, "turn.failed") == 0) {
		sres_msg(r, jerror_msg(o));
		return EV_ERR;
	}
	if (strcmp(type, "turn.completed") == 0)
		return EV_OK;
	if (strcmp(type, "error") == 0) {
		const char *sev = jstr(o, "severity");

		if (sev != NULL && strcmp(sev, "error") != 0)
			return EV_CONTENT;
		sres_msg(r, jstr(o, "message"));
		sres_msg(r, jerror_msg(o));
		return EV_ERROR_EVENT;
	}
	if (strcmp(type, "system") == 0 && (sub = jstr(o, "subtype")) != NULL &&
	    strcmp(sub, "api_retry") == 0)
		return claude_retry(o, r);
	if (strcmp(type, "rate_limit_event") == 0)
		return claude_rate_limit(o, r);
	if (strcmp(type, "assistant") == 0 &&
	    json_is_string(json_object_get(o, "error"))) {
		r->code_kind = claude_error_kind(jstr(o, "error"));
		sres_msg(r, claude_text(o));
		sres_msg(r, jstr(o, "error"));
		return EV_ERROR_EVENT;
	}
	return EV_CONTENT;
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
	return (n - i > 3 && ci_eq(s + i, "at ", 3)) ||
	    (n - i > 6 && ci_eq(s + i, "file \"", 6));
}

/*
 * Read the events of the window (newest first; the reader parsed them).
 * The newest final result (success or failure) decides; without one,
 * the newest error event stands in.  Marks content and success events
 * so that the text pass skips them.
 */
static void
structured_find(
    struct sres *out, struct sextra *x, struct classify_line *v, int n)
{
	struct sres r, errev;
	bool have_final = false, have_errev = false, newer_event = false;
	enum ev ev;
	int i;

	memset(out, 0, sizeof(*out));
	memset(x, 0, sizeof(*x));
	memset(&errev, 0, sizeof(errev));
	for (i = 0; i < n; i++) {
		v[i].skip = false;
		if (v[i].event == NULL)
			continue;
		memset(&r, 0, sizeof(r));
		ev = json_is_object(v[i].event) ? inspect(v[i].event, &r)
						: EV_NONE;
		/* newest first: the first one seen is the newest */
		if (r.wall && !x->wall) {
			x->wall = true;
			x->wall_reset = r.wall_reset;
		}
		if (r.retry_delay_ms > 0 && x->retry_429_ms == 0)
			x->retry_429_ms = r.retry_delay_ms;
		/* a retry notice with any event after it was retried past:
		 * only the agent's last words say what it was stuck on */
		if (ev == EV_RETRY)
			ev = newer_event ? EV_CONTENT : EV_ERROR_EVENT;
		if (ev != EV_NONE)
			newer_event = true;
		r.ev = ev;
		v[i].skip = ev == EV_CONTENT || ev == EV_OK;
		if ((ev == EV_OK || ev == EV_ERR) && !have_final) {
			*out = r;
			have_final = true;
		} else if (ev == EV_ERROR_EVENT && !have_final && !have_errev) {
			errev = r;
			have_errev = true;
		} else {
			free(r.msg);
		}
	}
	if (have_final)
		free(errev.msg);
	else if (have_errev)
		*out = errev;
}

static void
decide(struct classification *out, enum error_code code, const char *msg,
    size_t msglen)
{
	out->code = code;
	out->outcome = errcode_outcome(code);
	msg_set(out->message, sizeof(out->message), msg, msglen);
}

/* The code a structured error names, or ERRC_NONE: its message first
 * (so that a 429 saying "insufficient_quota" is billing), then claude's
 * error field, then the API status. */
static enum error_code
structured_code(const struct classify_input *in, const struct sres *r,
    const struct ctx *window)
{
	struct waithint mh;
	struct ctx c = *window;
	enum kind k = K_NONE, b = K_NONE;
	size_t n = r->msg != NULL ? strlen(r->msg) : 0;

	if (r->msg != NULL) {
		k = line_kind(in, r->msg, n);
		b = builtin_kind(r->msg, n);
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
		k = status_kind(r->status);
	return kind_code(k, b, &c);
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
	enum kind k, best;
	size_t ci, j;
	int i, bi, anchor = -1;

	for (i = 0; i < K__COUNT; i++)
		newest[i] = newest_block[i] = -1;
	for (i = 0; i < n; i++) {
		kinds[i] = K_NONE;
		if (v[i].skip || stack_frame(in->tail + v[i].off, v[i].len))
			continue;
		kinds[i] = line_kind(in, in->tail + v[i].off, v[i].len);
		if (kinds[i] != K_NONE && newest[kinds[i]] < 0)
			newest[kinds[i]] = i;
		if (anchor < 0 && kinds[i] != K_NONE &&
		    kinds[i] != K_USER_PERM && kinds[i] != K_USER_NET)
			anchor = i;
	}
	for (i = anchor; anchor >= 0 && i < n && i < anchor + CLASSIFY_BLOCK;
	     i++)
		if (kinds[i] != K_NONE && newest_block[kinds[i]] < 0)
			newest_block[kinds[i]] = i;
	for (ci = 0; ci < sizeof(classes) / sizeof(classes[0]); ci++) {
		cl = &classes[ci];
		if (cl->needs_hint && !c->has_hint)
			continue;
		best = K_NONE;
		bi = -1;
		for (j = 0; j < 6 && cl->kinds[j] != K_NONE; j++) {
			k = cl->kinds[j];
			i = cl->whole_window ? newest[k] : newest_block[k];
			if (i < 0)
				continue;
			if (best == K_NONE || (cl->newest_wins && i < bi)) {
				best = k;
				bi = i;
			}
		}
		if (best == K_NONE)
			continue;
		decide(out,
		    kind_code(
			best, builtin_kind(in->tail + v[bi].off, v[bi].len), c),
		    in->tail + v[bi].off, v[bi].len);
		return true;
	}
	return false;
}

void
classify_window(struct classification *out, const struct classify_input *in,
    struct classify_line *lines, int n)
{
	struct sextra sx;
	struct sres sr;
	struct waithint wh;
	struct ctx c;
	const char *tail = in->tail;
	size_t tlen = tail != NULL ? in->tail_len : 0;
	enum error_code code;
	bool clean, done;

	memset(out, 0, sizeof(*out));
	memset(&sr, 0, sizeof(sr));
	if (tail == NULL)
		tail = "";
	waithint_parse(&out->hint, tail, tlen);
	if (out->hint.kind == WAITHINT_NONE &&
	    ci_has(tail, tlen, "exhausted your daily quota", false)) {
		/* Google's per-day quotas reset at midnight Pacific time */
		out->hint.kind = WAITHINT_CLOCK;
		snprintf(out->hint.zone, sizeof(out->hint.zone), "%s",
		    "America/Los_Angeles");
	}
	out->retry_on_matched = user_any(in->retry_on, tail, tlen);
	if (in->interrupted) {
		decide(out, ERRC_INTERRUPTED, NULL, 0);
		goto out;
	}

	structured_find(&sr, &sx, lines, n);
	memset(&c, 0, sizeof(c));
	c.has_hint = out->hint.kind != WAITHINT_NONE;
	if (n > 0 &&
	    waithint_parse(
		&wh, tail + lines[n - 1].off, tlen - lines[n - 1].off) &&
	    wh.kind == WAITHINT_DELAY) {
		c.delay_hint = true;
		c.delay_ms = wh.delay_ms;
	}

	clean = in->exit_code == 0 && in->term_signal == 0 && !in->timed_out &&
	    !in->stalled;
	done = in->tasks_total > 0 && in->tasks_completed == in->tasks_total;
	if (clean) {
		/* the story file is the evidence: a run that checked every
		 * box is done even if its last API call failed */
		if (done && !in->gate_failed) {
			out->outcome = OUTCOME_SUCCESS;
			out->code = ERRC_NONE;
		} else if (done) {
			decide(out, ERRC_GATE_FAILED, NULL, 0);
		} else if (sr.ev == EV_ERR) {
			/* exit 0 but the final result says it failed */
			code = structured_code(in, &sr, &c);
			decide(out, code != ERRC_NONE ? code : ERRC_CRASH,
			    sr.msg, sr.msg != NULL ? strlen(sr.msg) : 0);
		} else {
			decide(out, ERRC_INCOMPLETE, NULL, 0);
		}
		goto out;
	}

	if (sx.wall && (sr.ev == EV_ERR || sr.ev == EV_ERROR_EVENT)) {
		/* the structured wall decides before any wording: with a
		 * reset it is a usage limit to wait for, without one a
		 * limit no wait lifts (docs/classification.md#structured-results) */
		decide(out,
		    sx.wall_reset > 0 ? ERRC_USAGE_LIMIT : ERRC_QUOTA_EXCEEDED,
		    sr.msg, sr.msg != NULL ? strlen(sr.msg) : 0);
		if (sx.wall_reset > 0) {
			memset(&out->hint, 0, sizeof(out->hint));
			out->hint.kind = WAITHINT_EPOCH;
			out->hint.epoch_s = sx.wall_reset;
		}
		goto out;
	}
	if (sr.ev == EV_ERR || sr.ev == EV_ERROR_EVENT) {
		code = structured_code(in, &sr, &c);
		if (code != ERRC_NONE) {
			decide(out, code, sr.msg,
			    sr.msg != NULL ? strlen(sr.msg) : 0);
			/* claude waited the server's retry-after before it
			 * gave up: the next attempt waits at least as long */
			if (code == ERRC_RATE_LIMIT && sx.retry_429_ms > 0 &&
			    out->hint.kind == WAITHINT_NONE) {
				out->hint.kind = WAITHINT_DELAY;
				out->hint.delay_ms = sx.retry_429_ms;
			}
			goto out;
		}
	}
	/* a documented exit status of the CLI (gemini 41: its auth) says
	 * more than the words around it */
	code = adapter_exit_code(in->adapter, in->exit_code, NULL);
	if (code != ERRC_NONE && in->term_signal == 0 && !in->timed_out &&
	    !in->stalled) {
		decide(out, code, n > 0 ? tail + lines[0].off : NULL,
		    n > 0 ? lines[0].len : 0);
		goto out;
	}
	if (text_decide(out, in, lines, n, &c))
		goto out;
	if (in->timed_out)
		code = ERRC_TIMEOUT;
	else if (in->stalled)
		code = ERRC_STALLED;
	else
		code = ERRC_CRASH;
	if (sr.ev == EV_ERR || sr.ev == EV_ERROR_EVENT)
		decide(out, code, sr.msg, sr.msg != NULL ? strlen(sr.msg) : 0);
	else
		decide(out, code, NULL, 0);
out:
	free(sr.msg);
}

/* What the one reader decides (the tail's other facts are dropped). */
void
classify_attempt(struct classification *out, const struct classify_input *in)
{
	struct agent_report r;

	adapter_read(&r, in);
	*out = r.verdict;
}
