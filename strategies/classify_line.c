/*
 * classify_line.c - the kind of one line of an attempt's output: the
 * ordered pattern table, the matchers that are more than a phrase, HTTP
 * status numbers in context, and the error code each kind stands for
 * (docs/classification.md).  Pure.
 */
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "strategies/classify_int.h"
#include "strategies/text.h"

struct pattern {
	const char *text; /* lowercase; NULL: call fn instead */
	bool (*fn)(const char *s, size_t n);
	enum kind kind;
	bool word; /* not inside an identifier ([A-Za-z0-9_]) */
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
    /* the Messages API's workspace cap: "You have reached your
     * specified workspace API usage limits. You will regain access on
     * 2025-06-01 at 00:00 UTC." (an ISO reset, docs/classification.md) */
    {"api usage limits", NULL, K_USAGE, false},
    {"will regain access on", NULL, K_USAGE, false},
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

bool
classify_user_any(const struct strlist *l, const char *s, size_t n)
{
	size_t i;

	if (l == NULL || s == NULL)
		return false;
	for (i = 0; i < l->n; i++)
		if (text_ci_contains(s, n, l->items[i]))
			return true;
	return false;
}

/* Whether "not found" or "does not exist" follows within three words
 * of s[j] (and 100 bytes of i, where "model" starts). */
static bool
missing_follows(const char *s, size_t n, size_t i, size_t j)
{
	size_t words = 0;

	while (j < n && j - i < 100 && words <= 3) {
		while (j < n && (s[j] == ' ' || s[j] == ':' || s[j] == '\t'))
			j++;
		if ((n - j >= 9 && text_ci_eq(s + j, "not found", 9)) ||
		    (n - j >= 14 && text_ci_eq(s + j, "does not exist", 14)))
			return true;
		while (j < n && s[j] != ' ' && s[j] != '\t')
			j++;
		words++;
	}
	return false;
}

/*
 * "model 'x' not found", "The model `gpt-5` does not exist", "model:
 * claude-x not found": the word "model" (not "models/", "model.py",
 * "remodel"), at most three words, then "not found" / "does not exist"
 * (docs/classification.md#classification-matrix).
 */
static bool
match_model_missing(const char *s, size_t n)
{
	size_t i, j;

	for (i = 0; (i = text_ci_find(s, n, i, "model", false)) < n; i++) {
		j = i + 5;
		if ((i > 0 && text_is_alpha((unsigned char)s[i - 1])) ||
		    (j < n && s[j] != ' ' && s[j] != ':' && s[j] != '\t'))
			continue;
		if (missing_follows(s, n, i, j))
			return true;
	}
	return false;
}

/* "5-hour limit reached ∙ resets 1am", "Opus weekly limit reached ∙
 * resets Oct 6, 1pm": a limit that names its reset. */
static bool
match_limit_reset(const char *s, size_t n)
{
	return text_ci_has(s, n, "limit reached", false) &&
	    (text_ci_has(s, n, "reset", false) ||
		text_ci_has(s, n, "try again", false));
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
	if (j >= 6 && text_ci_eq(s + j - 6, "\"code\"", 6))
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
		if (j >= m && text_ci_eq(s + j - m, strong[w], m))
			return 2;
	}
	for (w = 0; w < sizeof(weak) / sizeof(weak[0]); w++) {
		m = strlen(weak[w]);
		if (j >= m && text_ci_eq(s + j - m, weak[w], m))
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
		if (n - i >= m && text_ci_eq(s + i, words[w], m))
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
		if (!text_is_digit((unsigned char)s[i]) ||
		    !text_is_digit((unsigned char)s[i + 1]) ||
		    !text_is_digit((unsigned char)s[i + 2]))
			continue;
		if (i > 0 &&
		    (text_is_ident((unsigned char)s[i - 1]) ||
			s[i - 1] == '.' || s[i - 1] == '-'))
			continue;
		if (i + 3 < n &&
		    (text_is_ident((unsigned char)s[i + 3]) ||
			(s[i + 3] == '.' && i + 4 < n &&
			    text_is_digit((unsigned char)s[i + 4]))))
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

enum kind
classify_status_kind(int status)
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
enum kind
classify_builtin_kind(const char *s, size_t n)
{
	enum kind k;
	bool strong;
	size_t i;

	for (i = 0; i < sizeof(patterns) / sizeof(patterns[0]); i++) {
		const struct pattern *p = &patterns[i];

		if (p->text != NULL ? text_ci_has(s, n, p->text, p->word)
				    : p->fn(s, n))
			return p->kind;
	}
	/* a permanent code from a number alone needs a strong context:
	 * "npm ERR! 404 Not Found" must not disable an agent */
	k = classify_status_kind(line_status(s, n, &strong));
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
enum kind
classify_line_kind(const struct classify_input *in, const char *s, size_t n)
{
	if (classify_user_any(in->permanent_on, s, n))
		return K_USER_PERM;
	if (classify_user_any(in->network_on, s, n))
		return K_USER_NET;
	return classify_builtin_kind(s, n);
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
enum error_code
classify_kind_code(enum kind k, enum kind builtin, const struct ctx *c)
{
	switch (k) {
	case K_USER_PERM:
		if (kind_permanent(builtin))
			return classify_kind_code(builtin, K_NONE, c);
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
		 * a person, not by a wait (docs/classification.md#precedence);
		 * one that says it lifts later without saying when ("purchase
		 * more credits or try again later") is waited for, with the
		 * policy's default wait */
		return c->has_hint || c->lifts_later ? ERRC_USAGE_LIMIT
						     : ERRC_QUOTA_EXCEEDED;
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
