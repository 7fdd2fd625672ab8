/*
 * redact.c - see redact.h.
 *
 * The scanner walks the input once.  At the start of each "word" (a run
 * of [A-Za-z0-9_-] not preceded by such a character) it tries a fixed
 * set of matchers; each one looks only at that word and, for key/value
 * shapes, at the few characters after it and at the value.  When nothing
 * matches, the scan resumes after the word, so no byte is ever examined
 * by more than a constant number of matchers: there is no backtracking
 * and no regex engine.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* memmem */
#endif
#include <stdlib.h>
#include <string.h>

#include "state/redact.h"
#include "common/strbuf.h"
#include "state/redact_int.h"
#include "strategies/text.h"

#define REDACT_MIN_VALUE 8 /* shorter values are placeholders, not keys */
#define REDACT_MIN_BEARER 16 /* a bare "Bearer x" in prose is not a key */
#define REDACT_PEM_LINE 100 /* how far to look for "PRIVATE KEY-----" */

/* A "word" character: what provider keys and key names are made of. */
int
redact_is_word(unsigned char c)
{
	return text_is_alnum(c) || c == '_' || c == '-';
}

/* Characters of an unquoted secret value (no quotes, brackets, blanks,
 * separators ':' '=' ',' ';' '&', so a value never swallows the next
 * key/value pair). */
static int
is_value(unsigned char c)
{
	return text_is_alnum(c) ||
	    (c != '\0' && strchr("_-./+~@!*#$%^", c) != NULL);
}

/* Characters of a bearer token (RFC 6750 b64token). */
static int
is_b64tok(unsigned char c)
{
	return text_is_alnum(c) || (c != '\0' && strchr("-._~+/=", c) != NULL);
}

/* Does [s, s+n) start with the literal prefix p (case-sensitive)? */
static int
has_prefix(const char *s, size_t n, const char *p)
{
	size_t pl = strlen(p);

	return n >= pl && memcmp(s, p, pl) == 0;
}

/* Does [s, s+n) end with lowercase suffix p, ignoring case? */
int
redact_has_suffix_ci(const char *s, size_t n, const char *p)
{
	size_t pl = strlen(p), i;

	if (n < pl)
		return 0;
	for (i = 0; i < pl; i++)
		if (text_lower((unsigned char)s[n - pl + i]) != p[i])
			return 0;
	return 1;
}

int
redact_equals_ci(const char *s, size_t n, const char *p)
{
	return strlen(p) == n && redact_has_suffix_ci(s, n, p);
}

static int
all_of(const char *s, size_t n, bool (*ok)(int))
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!ok((unsigned char)s[i]))
			return 0;
	return 1;
}

static int
any_digit(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (text_is_digit((unsigned char)s[i]))
			return 1;
	return 0;
}

static bool
is_upper_or_digit(int c)
{
	return (c >= 'A' && c <= 'Z') || text_is_digit(c);
}

/* What the body of a provider key (the word after its prefix) must be. */
enum key_body {
	KB_ANY,
	KB_DIGIT, /* at least one digit */
	KB_ALNUM, /* letters and digits only */
	KB_IDENT, /* letters, digits and '_' */
	KB_UPPER_DIGIT, /* capitals and digits only */
	KB_CAPITAL /* at least one capital */
};

/* Provider key prefixes, tried in order; the first that starts the word
 * decides.  The body length and character class keep ordinary
 * hyphenated words out (docs/reliability.md). */
static const struct {
	const char *prefix;
	size_t min_body;
	size_t max_body; /* 0: no limit */
	enum key_body body;
} prefix_keys[] = {
    /* Anthropic sk-ant-api03-..., OpenAI sk-..., sk-proj-... */
    {"sk-", 20, 0, KB_DIGIT},
    /* Stripe */
    {"sk_live_", 16, 0, KB_ALNUM},
    {"sk_test_", 16, 0, KB_ALNUM},
    {"rk_live_", 16, 0, KB_ALNUM},
    {"rk_test_", 16, 0, KB_ALNUM},
    /* Google API keys are 39 characters */
    {"AIza", 35, 0, KB_ANY},
    /* GitHub */
    {"ghp_", 30, 0, KB_ALNUM},
    {"gho_", 30, 0, KB_ALNUM},
    {"ghu_", 30, 0, KB_ALNUM},
    {"ghs_", 30, 0, KB_ALNUM},
    {"ghr_", 30, 0, KB_ALNUM},
    {"github_pat_", 22, 0, KB_IDENT},
    {"glpat-", 20, 0, KB_ANY},
    /* Slack */
    {"xoxb-", 10, 0, KB_DIGIT},
    {"xoxp-", 10, 0, KB_DIGIT},
    {"xoxa-", 10, 0, KB_DIGIT},
    {"xoxr-", 10, 0, KB_DIGIT},
    {"xoxs-", 10, 0, KB_DIGIT},
    {"xoxe-", 10, 0, KB_DIGIT},
    {"xapp-", 10, 0, KB_DIGIT},
    /* AWS access key ids are 20 characters */
    {"AKIA", 16, 16, KB_UPPER_DIGIT},
    {"ASIA", 16, 16, KB_UPPER_DIGIT},
    {"hf_", 30, 0, KB_ALNUM},
    {"npm_", 36, 0, KB_ALNUM},
    /* storyctl's own API keys: "sc_" + 32 random bytes in base64url
     * (state/apikey.h); a capital tells them from a snake_case name */
    {"sc_", 43, 43, KB_CAPITAL},
};

static int
body_ok(const char *b, size_t n, enum key_body kb)
{
	switch (kb) {
	case KB_DIGIT:
		return any_digit(b, n);
	case KB_ALNUM:
		return all_of(b, n, text_is_alnum);
	case KB_IDENT:
		return all_of(b, n, text_is_ident);
	case KB_UPPER_DIGIT:
		return all_of(b, n, is_upper_or_digit);
	case KB_CAPITAL:
		for (; n > 0; n--, b++)
			if (*b >= 'A' && *b <= 'Z')
				return 1;
		return 0;
	case KB_ANY:
	default:
		return 1;
	}
}

/* A provider key that is the whole word w[0..n) (prefix_keys). */
static int
match_prefix_word(const char *w, size_t n)
{
	size_t k, pl;

	for (k = 0; k < sizeof(prefix_keys) / sizeof(prefix_keys[0]); k++) {
		if (!has_prefix(w, n, prefix_keys[k].prefix))
			continue;
		pl = strlen(prefix_keys[k].prefix);
		if (n - pl < prefix_keys[k].min_body ||
		    (prefix_keys[k].max_body != 0 &&
			n - pl > prefix_keys[k].max_body))
			return 0;
		return body_ok(w + pl, n - pl, prefix_keys[k].body);
	}
	return 0;
}

/* A JSON web token starting at word [i, e): eyJ<b64>.eyJ<b64>.<sig>.
 * Sets *end past the signature. */
static int
match_jwt(const char *s, size_t len, size_t i, size_t e, size_t *end)
{
	size_t j;

	if (!has_prefix(s + i, e - i, "eyJ") || e - i < 10 || e >= len ||
	    s[e] != '.')
		return 0;
	j = e + 1;
	if (!has_prefix(s + j, len - j, "eyJ"))
		return 0;
	while (j < len && redact_is_word((unsigned char)s[j]))
		j++;
	if (j >= len || s[j] != '.')
		return 0;
	j++;
	while (j < len && redact_is_word((unsigned char)s[j]))
		j++;
	*end = j;
	return 1;
}

/*
 * "-----BEGIN <anything> PRIVATE KEY-----" at word [i, e): redact to
 * the end of the matching END line, or to the end of the input when the
 * block is cut off (a truncated key is still a key).
 */
static int
match_pem(const char *s, size_t len, size_t i, size_t e, size_t *end)
{
	const char *tail = "PRIVATE KEY-----", *q;
	size_t j, lim, tl = strlen(tail);

	if (e - i != 10 || memcmp(s + i, "-----BEGIN", 10) != 0 || e >= len ||
	    s[e] != ' ')
		return 0;
	lim = e + REDACT_PEM_LINE < len ? e + REDACT_PEM_LINE : len;
	for (j = e; j + tl <= lim && s[j] != '\n'; j++)
		if (memcmp(s + j, tail, tl) == 0)
			break;
	if (j + tl > lim || s[j] == '\n')
		return 0;
	j += tl;
	q = memmem(s + j, len - j, "-----END ", 9);
	if (q == NULL) {
		*end = len;
		return 1;
	}
	j = (size_t)(q - s) + 9;
	lim = j + REDACT_PEM_LINE < len ? j + REDACT_PEM_LINE : len;
	while (j < lim && s[j] != '\n' && s[j] != '\r' &&
	    !(j + 5 <= len && memcmp(s + j, "-----", 5) == 0))
		j++;
	if (j + 5 <= len && memcmp(s + j, "-----", 5) == 0)
		j += 5;
	*end = j;
	return 1;
}

static size_t
skip_blanks(const char *s, size_t len, size_t j)
{
	while (j < len && (s[j] == ' ' || s[j] == '\t'))
		j++;
	return j;
}

/* "Bearer <token>" at word [i, e): the token is [*rs, *re). */
static int
match_bearer(
    const char *s, size_t len, size_t i, size_t e, size_t *rs, size_t *re)
{
	size_t j, v;

	if (!redact_equals_ci(s + i, e - i, "bearer") || e >= len ||
	    (s[e] != ' ' && s[e] != '\t'))
		return 0;
	j = v = skip_blanks(s, len, e);
	while (j < len && is_b64tok((unsigned char)s[j]))
		j++;
	if (j - v < REDACT_MIN_BEARER || !any_digit(s + v, j - v))
		return 0;
	*rs = v;
	*re = j;
	return 1;
}

/* Names whose value is a secret (matched as a suffix, any case). */
static const char *const secret_keys[] = {
    "api_key",
    "apikey",
    "api-key",
    "token",
    "secret",
    "password",
    "passwd",
    "access_key",
    "secret_key",
    "private_key",
    "authorization",
};

/* Whether the word s[0..n) names a secret (secret_keys). */
static int
secret_key(const char *s, size_t n)
{
	size_t k;

	for (k = 0; k < sizeof(secret_keys) / sizeof(secret_keys[0]); k++)
		if (redact_has_suffix_ci(s, n, secret_keys[k]))
			return 1;
	return 0;
}

/* Past ":", ":=", "=" or "=>" at j; 0 when none is there. */
static size_t
skip_operator(const char *s, size_t len, size_t j)
{
	if (j >= len || (s[j] != ':' && s[j] != '='))
		return 0;
	if (j + 1 < len && s[j + 1] == (s[j] == ':' ? '=' : '>'))
		return j + 2;
	return j + 1;
}

/* From the end of a key at j, past its closing quote, the separator
 * (":", ":=", "=", "=>") and the value's opening quote, kept in *quote
 * (0 when unquoted).  Returns where the value starts, or 0 when no
 * separator follows the key. */
static size_t
skip_separator(const char *s, size_t len, size_t j, char *quote)
{
	*quote = 0;
	if (j < len && s[j] == '\\')
		j++;
	if (j < len && (s[j] == '"' || s[j] == '\''))
		j++;
	j = skip_operator(s, len, skip_blanks(s, len, j));
	if (j == 0)
		return 0;
	j = skip_blanks(s, len, j);
	if (j + 1 < len && s[j] == '\\' &&
	    (s[j + 1] == '"' || s[j + 1] == '\''))
		j++;
	if (j < len && (s[j] == '"' || s[j] == '\''))
		*quote = s[j++];
	return j;
}

/* Past an authorization scheme at j, kept in the output:
 * "Authorization: Bearer [REDACTED]". */
static size_t
skip_scheme(const char *s, size_t len, size_t j)
{
	static const char *const schemes[] = {
	    "bearer", "basic", "token", "bot", "digest"};
	size_t w, k;

	for (w = j; w < len && redact_is_word((unsigned char)s[w]); w++)
		;
	if (w >= len || (s[w] != ' ' && s[w] != '\t'))
		return j;
	for (k = 0; k < sizeof(schemes) / sizeof(schemes[0]); k++)
		if (redact_equals_ci(s + j, w - j, schemes[k]))
			return skip_blanks(s, len, w);
	return j;
}

/* A quoted value from v to the quote: its end, or 0 when it is short or
 * holds a blank (prose, not a key). */
static size_t
quoted_value(const char *s, size_t len, size_t v, char quote)
{
	size_t j = v;

	while (j < len && s[j] != quote && s[j] != '\\' && s[j] != '\n' &&
	    s[j] != '\r') {
		if (s[j] == ' ' || s[j] == '\t')
			return 0;
		j++;
	}
	return j - v < REDACT_MIN_VALUE ? 0 : j;
}

/* An unquoted value from v: its end, or 0 when it is short, a variable
 * reference, code, or (unless auth) holds no digit. */
static size_t
bare_value(const char *s, size_t len, size_t v, int auth)
{
	size_t j = v, k;

	if (j < len && s[j] == '$')
		return 0; /* a variable reference, not a value */
	while (j < len && is_value((unsigned char)s[j]))
		j++;
	/* base64 padding */
	for (k = 0; k < 2 && j < len && s[j] == '='; k++)
		j++;
	if (j - v < REDACT_MIN_VALUE || (!auth && !any_digit(s + v, j - v)))
		return 0;
	if (j < len && (s[j] == '(' || s[j] == '['))
		return 0; /* code: api_key = os.environ["..."] */
	return j;
}

/*
 * A key/value pair whose key is the word [i, e): the value is [*rs, *re).
 * Accepts `key: v`, `key=v`, `key := v`, `key => v`, `"key": "v"`,
 * `'key': 'v'` and the JSON-in-a-string form `\"key\": \"v\"`.
 */
static int
match_keyvalue(
    const char *s, size_t len, size_t i, size_t e, size_t *rs, size_t *re)
{
	size_t v, end;
	int auth;
	char quote;

	if (!secret_key(s + i, e - i))
		return 0;
	auth = redact_has_suffix_ci(s + i, e - i, "authorization");
	v = skip_separator(s, len, e, &quote);
	if (v == 0)
		return 0;
	if (auth)
		v = skip_scheme(s, len, v);
	end = quote ? quoted_value(s, len, v, quote)
		    : bare_value(s, len, v, auth);
	if (end == 0)
		return 0;
	*rs = v;
	*re = end;
	return 1;
}

/* "scheme://user:password@host": the password is [*rs, *re).  i is at
 * the ':'.  The scan stops at the first '/', so it never overlaps the
 * scan of another "://". */
static int
match_url(const char *s, size_t len, size_t i, size_t *rs, size_t *re)
{
	size_t j, colon = 0;

	if (i + 3 > len || s[i + 1] != '/' || s[i + 2] != '/')
		return 0;
	for (j = i + 3; j < len; j++) {
		unsigned char c = (unsigned char)s[j];

		if (c == '\0' || strchr("/@ \t\n\r\"'<>", c) != NULL)
			break;
		if (c == ':' && colon == 0)
			colon = j;
	}
	if (j >= len || s[j] != '@' || colon == 0 || colon + 1 == j)
		return 0;
	*rs = colon + 1;
	*re = j;
	return 1;
}

/* A webhook URL carries its secret in the path: "https://hooks.slack.com/
 * services/T…/B…/<secret>", "https://discord.com/api/webhooks/<id>/<token>".
 * i is at the ':' of "://"; the span is everything after the known
 * prefix up to the end of the URL. */
static int
match_webhook(const char *s, size_t len, size_t i, size_t *rs, size_t *re)
{
	static const char *const hosts[] = {"://hooks.slack.com/services/",
	    "://discord.com/api/webhooks/", "://discordapp.com/api/webhooks/"};
	size_t k, n, j;

	for (k = 0; k < sizeof(hosts) / sizeof(hosts[0]); k++) {
		n = strlen(hosts[k]);
		if (i + n > len || strncasecmp(s + i, hosts[k], n) != 0)
			continue;
		for (j = i + n; j < len; j++) {
			unsigned char c = (unsigned char)s[j];
			if (c <= ' ' || c == '"' || c == '\'' || c == '<' ||
			    c == '>' || c == ')' || c == ']' || c == '`')
				break;
		}
		if (j == i + n || s[i + n] == REDACT_MARK[0])
			return 0; /* nothing, or redacted already */
		*rs = i + n;
		*re = j;
		return 1;
	}
	return 0;
}

/*
 * A Cookie or Set-Cookie header at word [i, e), any case, as a header
 * line or a quoted key: the value, to the end of the line or its
 * closing quote, is [*rs, *re).  It must hold a '=' (a cookie is
 * name=value), so prose such as "Cookie: none" is left alone.
 */
static int
match_cookie(
    const char *s, size_t len, size_t i, size_t e, size_t *rs, size_t *re)
{
	size_t v, j;
	char quote;
	int eq = 0;

	if (!redact_equals_ci(s + i, e - i, "cookie") &&
	    !redact_equals_ci(s + i, e - i, "set-cookie"))
		return 0;
	v = skip_separator(s, len, e, &quote);
	if (v == 0)
		return 0;
	for (j = v; j < len && s[j] != '\n' && s[j] != '\r' && s[j] != '\\' &&
	     s[j] != '"' && s[j] != '\'';
	     j++)
		eq |= s[j] == '=';
	while (j > v && (s[j - 1] == ' ' || s[j - 1] == '\t'))
		j--;
	if (!eq)
		return 0;
	*rs = v;
	*re = j;
	return 1;
}

/*
 * Try every matcher at position i.  Returns 1 with the span to replace
 * in [*rs, *re) or 0; either way *next (> i, and >= *re on a match) is
 * where the scan goes on.
 */
static int
scan_at(
    const char *s, size_t len, size_t i, size_t *rs, size_t *re, size_t *next)
{
	unsigned char c = (unsigned char)s[i];
	size_t e, end = 0;

	*next = i + 1;
	if (!redact_is_word(c)) {
		if (c == ':' &&
		    (match_webhook(s, len, i, rs, re) ||
			match_url(s, len, i, rs, re))) {
			*next = *re;
			return 1;
		}
		return 0;
	}
	if (i > 0 && redact_is_word((unsigned char)s[i - 1]))
		return 0; /* inside a word: only word starts count */
	for (e = i; e < len && redact_is_word((unsigned char)s[e]); e++)
		;
	*next = e;
	if (match_pem(s, len, i, e, &end) || match_jwt(s, len, i, e, &end)) {
		*rs = i;
		*re = *next = end;
		return 1;
	}
	if (match_prefix_word(s + i, e - i)) {
		*rs = i;
		*re = e;
		return 1;
	}
	if (match_cookie(s, len, i, e, rs, re) ||
	    match_bearer(s, len, i, e, rs, re) ||
	    match_keyvalue(s, len, i, e, rs, re)) {
		*next = *re;
		return 1;
	}
	return 0;
}

/* The joiners U+200C and U+200D (E2 80 8C/8D) that text_clean() keeps:
 * dropped, in place, where they touch an ASCII character (no script
 * joins ASCII), so "sk\u200C-ant" reads as one word.  Returns the new
 * length. */
static size_t
drop_ascii_joiners(char *s, size_t len)
{
	size_t i = 0, o = 0;

	while (i < len) {
		if (i + 2 < len && (unsigned char)s[i] == 0xe2 &&
		    (unsigned char)s[i + 1] == 0x80 &&
		    ((unsigned char)s[i + 2] == 0x8c ||
			(unsigned char)s[i + 2] == 0x8d) &&
		    ((o > 0 && (unsigned char)s[o - 1] < 0x80) ||
			(i + 3 < len && (unsigned char)s[i + 3] < 0x80))) {
			i += 3;
			continue;
		}
		s[o++] = s[i++];
	}
	s[o] = '\0';
	return o;
}

char *
redact_text(
    const struct redact_values *rv, const char *raw, size_t len, size_t *steps)
{
	struct strbuf b = STRBUF_INIT, vb = STRBUF_INIT;
	size_t i = 0, copied = 0, rs = 0, re = 0, next = 0, nsteps = 0;
	char *s = NULL, *out = NULL;

	if (raw == NULL)
		len = 0;
	/* The text as a terminal shows it, before the scan: a key that an
	 * escape sequence, a NUL or an invisible character splits reads
	 * whole on screen, so it is matched (and redacted) whole; and
	 * nothing that could drive a terminal reaches the record
	 * (docs/reliability.md#redaction).  Cleaning never makes text
	 * longer. */
	if ((s = malloc(len + 1)) == NULL)
		goto done;
	len = text_clean(s, len + 1, raw != NULL ? raw : "", len,
	    TEXT_KEEP_NL | TEXT_MARK_INVALID, NULL);
	len = drop_ascii_joiners(s, len);
	/* the values first, so that a value that is also a provider key is
	 * marked with the name it was given by */
	if (redact_values_count(rv) > 0 && len > 0) {
		redact_values_pass(&vb, rv, s, len, &nsteps);
		free(s);
		if ((s = strbuf_detach(&vb, &len)) == NULL)
			goto done;
	}
	/* output is usually the input's size; reserve it up front */
	strbuf_grow(&b, len);
	while (i < len) {
		if (scan_at(s, len, i, &rs, &re, &next)) {
			strbuf_add(&b, s + copied, rs - copied);
			strbuf_addstr(&b, REDACT_MARK);
			copied = re;
		}
		i = next;
	}
	if (copied < len)
		strbuf_add(&b, s + copied, len - copied);
	out = strbuf_detach(&b, NULL); /* NULL when out of memory */
done:
	if (steps != NULL)
		*steps = nsteps;
	strbuf_release(&vb);
	strbuf_release(&b);
	free(s);
	return out;
}

char *
redact_secrets(const char *raw, size_t len)
{
	return redact_text(NULL, raw, len, NULL);
}

size_t
redact_text_copy(
    const struct redact_values *rv, char *dst, size_t cap, const char *src)
{
	char *r = redact_text(rv, src, src != NULL ? strlen(src) : 0, NULL);
	bool cut = false;
	size_t n = 0;

	dst[0] = '\0';
	if (r != NULL)
		n = text_clean(dst, cap, r, strlen(r), TEXT_KEEP_NL, &cut);
	/* never silently (docs/state.md#text-fields) */
	if (cut)
		n = text_mark_cut(dst, cap, n);
	free(r);
	return n;
}

size_t
redact_copy(char *dst, size_t cap, const char *src)
{
	return redact_text_copy(NULL, dst, cap, src);
}
