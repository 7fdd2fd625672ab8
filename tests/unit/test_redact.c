/* test_redact.c - secrets out, ordinary text untouched, linear scan. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "state/redact.h"

struct rcase {
	const char *in;
	const char *want;
};

/* Realistic shapes (made-up values of the real formats). */
static const struct rcase secret_cases[] = {
    /* webhooks carry the secret in the URL (regression: chaos test) */
    {"post to https://hooks.slack.com/services/T0123ABCD/B0456EFGH/"
     "aBcDeFgHiJkLmNoPqRsTuVwX now",
	"post to https://hooks.slack.com/services/[REDACTED] now"},
    {"\"url\": \"https://discord.com/api/webhooks/1234567890/abcDEF-xyz\"",
	"\"url\": \"https://discord.com/api/webhooks/[REDACTED]\""},
    /* Anthropic */
    {"key sk-ant-api03-Xy9_Qm2LkP0vR7tZ4wBn8cDe1fGh5iJk6lMnOp3qRsTu-AbCdEf ok",
	"key [REDACTED] ok"},
    {"export ANTHROPIC_API_KEY=sk-ant-api03-abcDEF123456ghiJKL789012mnoPQR",
	"export ANTHROPIC_API_KEY=[REDACTED]"},
    {"using sk-ant-oat01-ZZ11yy22XX33ww44VV55uu66", "using [REDACTED]"},
    /* OpenAI */
    {"OPENAI_API_KEY=sk-proj-Ab3dEf6hIj9lMn2pQr5tUv8xYz1BcD4fGh7jKl0",
	"OPENAI_API_KEY=[REDACTED]"},
    {"Incorrect API key provided: "
     "sk-1234567890abcdefghijklmnopqrstuvwxyzABCDEFGHIJKL.",
	"Incorrect API key provided: [REDACTED]."},
    {"(sk-svcacct-QWERTY123456uiopASDF7890ghjk)", "([REDACTED])"},
    /* Google */
    {"GOOGLE key=AIzaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY&q=x",
	"GOOGLE key=[REDACTED]&q=x"},
    /* GitHub */
    {"token ghp_16C7e42F292c6912E7710c838347Ae178B4a here",
	"token [REDACTED] here"},
    {"gho_16C7e42F292c6912E7710c838347Ae178B4a", "[REDACTED]"},
    {"ghu_16C7e42F292c6912E7710c838347Ae178B4a,"
     "ghs_16C7e42F292c6912E7710c838347Ae178B4a,"
     "ghr_16C7e42F292c6912E7710c838347Ae178B4a",
	"[REDACTED],[REDACTED],[REDACTED]"},
    {"pat "
     "github_pat_11ABCDEFG0123456789_"
     "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUV012345 end",
	"pat [REDACTED] end"},
    {"remote: "
     "https://"
     "x-access-token:ghs_abcdefghijklmnopqrstuvwxyz0123456789@github.com/o/r",
	"remote: https://x-access-token:[REDACTED]@github.com/o/r"},
    /* Slack */
    {"xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx", "[REDACTED]"},
    {"a xoxp-1234-5678-9012-abcdef b xoxa-2-12345678901 c",
	"a [REDACTED] b [REDACTED] c"},
    {"SLACK_APP=xapp-1-A0123456789-1234567890123-abcdef0123456789",
	"SLACK_APP=[REDACTED]"},
    /* AWS */
    {"aws_access_key_id = AKIAIOSFODNN7EXAMPLE",
	"aws_access_key_id = [REDACTED]"},
    {"id ASIAY34FZKBOKMUTVV7A.", "id [REDACTED]."},
    {"aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n",
	"aws_secret_access_key = [REDACTED]\n"},
    /* HTTP auth */
    {"Authorization: Bearer abc123def456ghi789\r\n",
	"Authorization: Bearer [REDACTED]\n"},
    {"-H 'authorization: Basic dXNlcjpwYXNzd29yZA=='",
	"-H 'authorization: Basic [REDACTED]'"},
    {"curl -H \"Bearer 0123456789abcdefABCDEF\" url",
	"curl -H \"Bearer [REDACTED]\" url"},
    {"x-api-key: 5f3c9a7e1b2d4f6a8c0e", "x-api-key: [REDACTED]"},
    /* key/value shapes */
    {"{\"api_key\": \"abcd1234efgh5678\", \"n\": 1}",
	"{\"api_key\": \"[REDACTED]\", \"n\": 1}"},
    {"{\\\"apiKey\\\":\\\"zyxw9876vuts5432\\\"}",
	"{\\\"apiKey\\\":\\\"[REDACTED]\\\"}"},
    {"GITHUB_TOKEN=abcdef0123456789abcdef SLACK_BOT_TOKEN=xyz12345678",
	"GITHUB_TOKEN=[REDACTED] SLACK_BOT_TOKEN=[REDACTED]"},
    {"CLIENT_SECRET := s3cr3tValue99", "CLIENT_SECRET := [REDACTED]"},
    {"db_password: 'correct horse'\npassword: 'Tr0ub4dor&3x'",
	"db_password: 'correct horse'\npassword: '[REDACTED]'"},
    {"'access_token' => 'ya29.a0AfH6SMBx1234567890'",
	"'access_token' => '[REDACTED]'"},
    /* JWT, URL password, PEM */
    {"jwt "
     "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_"
     "XgL0n3I9PlFUP0THsR8U done",
	"jwt [REDACTED] done"},
    {"DATABASE_URL=postgres://admin:hunter2@db.local:5432/app",
	"DATABASE_URL=postgres://admin:[REDACTED]@db.local:5432/app"},
    {"k:\n-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA\nabc\n"
     "-----END RSA PRIVATE KEY-----\nafter",
	"k:\n[REDACTED]\nafter"},
    {"-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEA (cut",
	"[REDACTED]"},
    /* issue 11: the text is cleaned first (text_clean()), so nothing
     * that drives a terminal is stored: escape sequences, C0 but tab and
     * newline, DEL, the C1 controls (C2 80..C2 9F), and a byte that is
     * not UTF-8 (a raw 0x9B, the 8-bit CSI) becomes '?' */
    {"gate \x1b[31mFAIL\x1b[0m\tx \xc2\x9b"
     "31m y \xc2\x85z \x7f"
     "w \x9b"
     "2J\r\nend\n",
	"gate FAIL\tx 31m y z w ?2J\nend\n"},
    /* ... and a key split by an escape sequence or a NUL reads whole on
     * a terminal, so it is redacted whole */
    {"key sk-ant-api03\x1b[0m-abcdefghijklmnop0123456789 end",
	"key [REDACTED] end"},
    {"OPENAI_API_KEY=\xc2\x9b"
     "abcd1234efgh5678",
	"OPENAI_API_KEY=[REDACTED]"},
    {NULL, NULL},
};

static const char *const ordinary[] = {
    "task-ant-colony",
    "sketch",
    "ask-a-question",
    "3f786850e387550fdab836ed7e6dc881de23001f",
    "commit 9fceb02d0ae598e95dc970b74767f19372d61af8 (HEAD -> main)",
    "the bearer of bad news arrived",
    "{\"max_tokens\": 4096, \"input_tokens\": 123456789}",
    "risk-assessment-2024-matrix-plan-v2-final-draft",
    "sk-learn is a typo of scikit-learn",
    "api_key = os.environ[\"OPENAI_API_KEY\"]",
    "password: ${DB_PASSWORD}",
    "token: null, secret: false",
    "see http://localhost:8080/path and ssh://git@github.com/o/r.git",
    "- [x] Task 3: load the API key from the environment",
    "AKIAlowercaseisnotakey1234",
    "id 123e4567-e89b-12d3-a456-426614174000",
    "docs/stories/1-1.md: 3/9 tasks",
    "password = self.config.password",
    "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----",
};

static void
test_secrets_redacted(void **state)
{
	size_t i, n = 0;

	for (i = 0; secret_cases[i].in != NULL; i++) {
		char *out = redact_secrets(
		    secret_cases[i].in, strlen(secret_cases[i].in));

		assert_non_null(out);
		if (strcmp(out, secret_cases[i].want) != 0)
			fail_msg("case %zu:\n in:   %s\n got:  %s\n want: %s",
			    i, secret_cases[i].in, out, secret_cases[i].want);
		free(out);
		n++;
	}
	assert_true(n >= 12);
}

static void
test_ordinary_untouched(void **state)
{
	size_t i;

	for (i = 0; i < sizeof(ordinary) / sizeof(ordinary[0]); i++) {
		char *out = redact_secrets(ordinary[i], strlen(ordinary[i]));

		assert_non_null(out);
		if (strcmp(out, ordinary[i]) != 0)
			fail_msg("ordinary %zu changed:\n in:  %s\n got: %s", i,
			    ordinary[i], out);
		free(out);
	}
}

/* A second pass finds nothing new: the marker is not a secret. */
static void
test_idempotent(void **state)
{
	size_t i;

	for (i = 0; secret_cases[i].in != NULL; i++) {
		char *once = redact_secrets(
		    secret_cases[i].in, strlen(secret_cases[i].in));
		char *twice;

		assert_non_null(once);
		twice = redact_secrets(once, strlen(once));
		assert_non_null(twice);
		assert_string_equal(once, twice);
		free(once);
		free(twice);
	}
}

static void
test_nul_and_empty(void **state)
{
	char *out;

	/* NUL is a control: dropped like the others */
	out = redact_secrets("a\0b\0", 4);
	assert_non_null(out);
	assert_memory_equal(out, "ab", 3);
	free(out);
	out = redact_secrets(NULL, 0);
	assert_non_null(out);
	assert_string_equal(out, "");
	free(out);
	/* a key split by a NUL is not stored in two halves: it is read
	 * as a terminal shows it, whole, and redacted */
	out = redact_secrets("sk-ant-api03\0-abcdefghijklmnop0123456789", 40);
	assert_non_null(out);
	assert_string_equal(out, "[REDACTED]");
	free(out);
}

/* Input ends in the middle of each shape: no read past the end. */
static void
test_truncated_shapes(void **state)
{
	static const char *const cut[] = {
	    "api_key",
	    "api_key:",
	    "api_key: \"",
	    "api_key=\\",
	    "Bearer ",
	    "https:",
	    "https://",
	    "https://u:",
	    "-----BEGIN",
	    "-----BEGIN ",
	    "eyJabcdefghij.",
	    "eyJabcdefghij.eyJ",
	    "Authorization: Bearer",
	    "x://a:b",
	};
	size_t i, j;

	for (i = 0; i < sizeof(cut) / sizeof(cut[0]); i++) {
		size_t n = strlen(cut[i]);

		for (j = 0; j <= n; j++) {
			/* an exact-size heap copy so ASan sees overreads */
			char *in = malloc(j > 0 ? j : 1);
			char *out;

			assert_non_null(in);
			memcpy(in, cut[i], j);
			out = redact_secrets(in, j);
			assert_non_null(out);
			assert_int_equal(strlen(out), j);
			free(out);
			free(in);
		}
	}
}

static char *
repeat(const char *unit, size_t total)
{
	size_t ul = strlen(unit), i;
	char *s = malloc(total + 1);

	assert_non_null(s);
	for (i = 0; i < total; i++)
		s[i] = unit[i % ul];
	s[total] = '\0';
	return s;
}

/* 1 MB of each shape that a backtracking matcher would choke on.  No
 * timing assertion: a quadratic scan would simply not finish. */
static void
test_adversarial_inputs_finish(void **state)
{
	static const char *const units[] = {
	    "a",
	    "sk-",
	    "-----BEGIN ",
	    "-----BEGIN RSA PRIVATE KEY----- ",
	    "token=",
	    "token:token=",
	    "\"api_key\": \"",
	    "'secret': \"x",
	    "api_key=a==",
	    "Bearer ",
	    "Bearer a",
	    "://",
	    "://a:b",
	    "eyJaaaaaaaaa.",
	    "Authorization: Bearer ",
	    "\\\"token\\\": ",
	    "api_key=a1 ",
	    "xoxb-1",
	    "password: 'ab cd ",
	};
	const size_t mb = 1024 * 1024;
	size_t i;

	for (i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		char *in = repeat(units[i], mb);
		char *out = redact_secrets(in, mb);

		assert_non_null(out);
		assert_true(strlen(out) > 0);
		free(out);
		free(in);
	}
}

static void
test_unterminated_pem_to_end(void **state)
{
	const char *in = "x\n-----BEGIN EC PRIVATE KEY-----\nMHcCAQEE";
	char *out = redact_secrets(in, strlen(in));

	assert_non_null(out);
	assert_string_equal(out, "x\n[REDACTED]");
	free(out);
}

/* redact_copy(): the redacted text cut to fit at a character boundary
 * (issue 11: the "[REDACTED]" marks made an error message longer than
 * its 512 bytes, snprintf cut an "é" in two, and show --json lost the
 * field). */
struct copy_case {
	const char *in;
	size_t cap;
	const char *want;
};

static const struct copy_case copy_cases[] = {
    {"plain", 64, "plain"},
    /* "password=[REDACTED] " is 20 bytes; the "é" after it does not fit
     * in 21 and is left out whole */
    {"password=abcd1234 \xc3\xa9\xc3\xa9", 22, "password=[REDACTED] "},
    {"password=abcd1234 \xc3\xa9\xc3\xa9", 23, "password=[REDACTED] \xc3\xa9"},
    {"a\x1b[1mb\xc2\x9b"
     "c",
	64, "abc"},
    {"anything", 1, ""},
    {NULL, 8, ""},
};

static void
test_copy_cut(void **state)
{
	char buf[64];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(copy_cases) / sizeof(*copy_cases); i++) {
		const struct copy_case *c = &copy_cases[i];

		memset(buf, 'Z', sizeof(buf));
		assert_int_equal(
		    redact_copy(buf, c->cap, c->in), strlen(c->want));
		if (strcmp(buf, c->want) != 0)
			fail_msg("copy case %zu: got \"%s\", want \"%s\"", i,
			    buf, c->want);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_secrets_redacted),
	    cmocka_unit_test(test_ordinary_untouched),
	    cmocka_unit_test(test_idempotent),
	    cmocka_unit_test(test_nul_and_empty),
	    cmocka_unit_test(test_truncated_shapes),
	    cmocka_unit_test(test_adversarial_inputs_finish),
	    cmocka_unit_test(test_unterminated_pem_to_end),
	    cmocka_unit_test(test_copy_cut),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
