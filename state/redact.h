/*
 * redact.h - remove secrets from agent output before it is stored in the
 * database or committed to the state branch (docs/reliability.md#security).
 *
 * What is replaced by "[REDACTED]":
 *  - provider keys recognised by their prefix, as a whole word:
 *    Anthropic/OpenAI "sk-..." (sk-ant-api03-, sk-proj-, sk-svcacct-; 20+
 *    characters after "sk-" including a digit), Stripe "sk_live_",
 *    "sk_test_", "rk_live_", "rk_test_", Google "AIza" + 35, GitHub
 *    "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", GitLab
 *    "glpat-", Slack "xoxb-", "xoxp-", "xoxa-", "xoxr-", "xoxs-",
 *    "xoxe-", "xapp-", AWS access key ids "AKIA"/"ASIA" + 16, Hugging
 *    Face "hf_", npm "npm_", and JSON web tokens "eyJ...eyJ...sig";
 *  - the value after a key whose name ends in api_key, apikey, api-key,
 *    token, secret, password, passwd, access_key, secret_key,
 *    private_key or authorization (any case) and ':', '=', ':=' or '=>',
 *    quoted or not: `"api_key": "..."`, `OPENAI_API_KEY=...`,
 *    `aws_secret_access_key = ...`, `x-api-key: ...`,
 *    `Authorization: Bearer ...` (the scheme word is kept).  A quoted
 *    value needs 8+ characters and no blank; an unquoted one 8+ token
 *    characters including a digit, and not followed by '(' or '[' (code
 *    such as `api_key = os.environ["X"]` is left alone);
 *  - the token after "Bearer " (16+ characters including a digit);
 *  - the password in a URL's user info (`https://user:pw@host`);
 *  - PEM private key blocks, BEGIN line to END line;
 *  - storyctl's own API keys, "sc_" and 43 base64url characters with a
 *    capital among them (state/apikey.h);
 *  - the value of a Cookie or Set-Cookie header (`Cookie: a=b; c=d`),
 *    any case, to the end of the line or the closing quote;
 *  - with redact_text(), every value of a struct redact_values, as
 *    "[REDACTED NAME]" (docs/reliability.md#redaction).
 *
 * The text is cleaned first (text_clean()), which drops the invisible
 * format characters (U+200B, U+2060, U+FEFF, U+00AD, ...); the joiners
 * U+200C and U+200D that text_clean() keeps for emoji and scripts are
 * dropped here when they touch an ASCII character, where no script
 * needs them.  So a secret split by any of them is read, and redacted,
 * whole.
 *
 * Ordinary words are left alone: a prefix only counts at the start of a
 * word, so "task-ant-colony", "ask-a-question" and "sketch" pass, and so
 * do hex commit ids and "max_tokens": 4096.
 *
 * The scan is a single left-to-right pass over the input; every byte is
 * looked at a bounded number of times, so time is linear in len even
 * for adversarial input.
 */
#ifndef STORYCTL_REDACT_H
#define STORYCTL_REDACT_H

#include <stdbool.h>
#include <stddef.h>

#include "common/err.h"

#define REDACT_MARK "[REDACTED]"

/* A value shorter than this is never redacted by value: "1", "true" or
 * a port would wreck every log (docs/reliability.md#redaction). */
#define REDACT_VALUE_MIN 8

/*
 * Secrets known by their value (the agents' env, the controller's
 * environment): each is replaced by "[REDACTED <its name>]" wherever it
 * appears.  Built once at start-up (redact_values_add), then only read;
 * the values live in memory only and are never written anywhere.
 */
struct redact_values;

/* An empty set; NULL when out of memory. */
struct redact_values *redact_values_new(void);
void redact_values_free(struct redact_values *rv);

/*
 * Add value, known as name, unless it is not worth redacting
 * (redact_value_worth()).  SC_EOS when out of memory.
 */
int redact_values_add(struct redact_values *rv, const char *name,
    const char *value, struct sc_err *err);

/* How many values rv holds (for messages: never the values). */
size_t redact_values_count(const struct redact_values *rv);

/*
 * Whether a variable called name holds a secret by the name rule: it
 * contains KEY, TOKEN, SECRET, PASSWORD, PASSWD, CREDENTIAL or AUTH
 * (any case), AUTH not as in AUTHOR (GIT_AUTHOR_NAME is a name).
 */
bool redact_name_secret(const char *name);

/*
 * Whether value is worth redacting: REDACT_VALUE_MIN bytes or more after
 * the cleaning the text gets, not a common word ("disabled", "enabled",
 * "undefined", ...) and not all digits (a port, a size).
 */
bool redact_value_worth(const char *value);

/*
 * A malloc'd, NUL-terminated copy of the len bytes at s, cleaned and
 * with secrets replaced by REDACT_MARK.  Everything stored from an
 * agent, a gate or a reviewer passes here, so this is where the record
 * is made safe to show: text_clean() (strategies/text.h) first drops
 * escape sequences, C0 controls but tab and newline (NUL included),
 * DEL and the C1 controls U+0080..U+009F, and turns bytes that are not
 * UTF-8 into '?'; the secrets are then found in the text as a terminal
 * would show it, so a key split by an escape sequence or a NUL is
 * redacted whole.  s may be NULL when len is 0.  The caller frees it.
 * NULL when out of memory.
 */
char *redact_secrets(const char *s, size_t len);

/*
 * redact_secrets() of the string src into dst (cap > 0 bytes, always
 * NUL-ended), cut to fit at a character boundary so that what is stored
 * stays UTF-8 (a cut inside a character made `show --json` drop the
 * field).  Out of memory leaves dst "".  Returns the length written.
 */
size_t redact_copy(char *dst, size_t cap, const char *src);

/* redact_secrets() that also replaces every value of rv (NULL: none) by
 * "[REDACTED NAME]".  One pass over the text however many values: an
 * Aho-Corasick automaton over the values.  *steps (may be NULL) gets
 * the automaton's moves, which is at most 2 * len (the tests bound it). */
char *redact_text(
    const struct redact_values *rv, const char *s, size_t len, size_t *steps);

/* redact_copy() with rv's values too. */
size_t redact_text_copy(
    const struct redact_values *rv, char *dst, size_t cap, const char *src);

#endif
