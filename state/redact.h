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
 *  - PEM private key blocks, BEGIN line to END line.
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

#include <stddef.h>

#define REDACT_MARK "[REDACTED]"

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

#endif
