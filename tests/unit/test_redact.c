/* test_redact.c - secrets out, ordinary text untouched, linear scan. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "controller/config/secrets.h"
#include "controller/engine/capture.h"
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
    /* issue 33: storyctl's own API keys (state/apikey.h), bare */
    {"error: key sc_Qm9vYmFyQmF6MTIzNDU2Nzg5MGFiY2RlZmdoaWprbG0 refused",
	"error: key [REDACTED] refused"},
    {"(sc_-_Abcdefghijklmnopqrstuvwxyz0123456789_-xyz)", "([REDACTED])"},
    /* ... also split by invisible characters: U+200B, U+FEFF, U+00AD,
     * U+2060, and the joiners U+200C, U+200D next to ASCII */
    {"sc_Qm9vYmFyQmF6MTIz\xe2\x80\x8bNDU2Nzg5MGFiY2RlZmdoaWprbG0",
	"[REDACTED]"},
    {"sc_Qm9vYmFyQmF6\xef\xbb\xbfMTIzNDU2Nzg5MGFi\xc2\xad"
     "Y2RlZmdoaWprbG0 x",
	"[REDACTED] x"},
    {"sc_Qm9vYmFyQmF6\xe2\x80\x8cMTIzNDU2Nzg5\xe2\x81\xa0"
     "MGFi\xe2\x80\x8dY2RlZmdoaWprbG0",
	"[REDACTED]"},
    {"ghp_16C7e42F292c6912\xe2\x80\x8b"
     "E7710c838347Ae178B4a",
	"[REDACTED]"},
    /* cookies and authorization headers, any case */
    {"Cookie: session=abc; theme=dark\nnext", "Cookie: [REDACTED]\nnext"},
    {"set-cookie: sid=31d4d96e407aad42; Path=/; Secure\r\n",
	"set-cookie: [REDACTED]\n"},
    {"COOKIE:a=b", "COOKIE:[REDACTED]"},
    {"{\"Cookie\": \"session=s3cr3t-value; x=1\", \"n\": 2}",
	"{\"Cookie\": \"[REDACTED]\", \"n\": 2}"},
    {"-H 'Cookie: session=abcdef' url", "-H 'Cookie: [REDACTED]' url"},
    {"Proxy-Authorization: Basic dXNlcjpwYXNzd29yZA==",
	"Proxy-Authorization: Basic [REDACTED]"},
    {"AUTHORIZATION: Bearer abcdefghijklmnop",
	"AUTHORIZATION: Bearer [REDACTED]"},
    {"X-API-Key: 0123456789abcdef", "X-API-Key: [REDACTED]"},
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
    /* issue 33: what the new rules must leave alone */
    "sc_this_is_a_long_snake_case_identifier_name_x",
    "sc_Qm9vYmFy",
    "Cookie: none",
    "the cookie jar is empty",
    "family \xf0\x9f\x91\xa8\xe2\x80\x8d\xf0\x9f\x91\xa9 joined",
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
    /* the redacted text is 24 bytes: it does not fit, so it is cut at a
     * character boundary and ends with the 3-byte "…"
     * (docs/state.md#text-fields), never half an "é" */
    {"password=abcd1234 \xc3\xa9\xc3\xa9", 22,
	"password=[REDACTED\xe2\x80\xa6"},
    {"password=abcd1234 \xc3\xa9\xc3\xa9", 23,
	"password=[REDACTED]\xe2\x80\xa6"},
    {"password=abcd1234 \xc3\xa9\xc3\xa9", 25,
	"password=[REDACTED] \xc3\xa9\xc3\xa9"},
    {"x \xc3\xa9\xc3\xa9\xc3\xa9", 8, "x \xc3\xa9\xe2\x80\xa6"},
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

/* issue 33: redaction by value (docs/reliability.md#redaction). */
static struct redact_values *
values_of(const char *const *pairs)
{
	struct redact_values *rv = redact_values_new();
	struct sc_err err;
	size_t i;

	assert_non_null(rv);
	for (i = 0; pairs[i] != NULL; i += 2)
		assert_int_equal(
		    redact_values_add(rv, pairs[i], pairs[i + 1], &err), 0);
	return rv;
}

static const char *const test_values[] = {
    "MY_AGENT_SECRET",
    "hunter2-value-XYZ",
    "EXAMPLE_API_TOKEN",
    "tok3n-example-42",
    "ANTHROPIC_API_KEY",
    "sk-ant-api03-abcDEF123456ghiJKL789012mnoPQR",
    "OVERLAP_A",
    "abcdefgh12",
    "OVERLAP_B",
    "fgh12wxyz9",
    "SAME_AGAIN",
    "hunter2-value-XYZ", /* a value known already */
    "FLAG",
    "true", /* too short: never redacted */
    "PORT",
    "123456789", /* all digits: never redacted */
    "BAD NAME\x1b[31m",
    "weird-name-value-7",
    NULL,
};

static const struct rcase value_cases[] = {
    {"printed hunter2-value-XYZ here",
	"printed [REDACTED MY_AGENT_SECRET] here"},
    {"a=tok3n-example-42;b=tok3n-example-42",
	"a=[REDACTED EXAMPLE_API_TOKEN];b=[REDACTED EXAMPLE_API_TOKEN]"},
    /* inside a key/value shape: the value's mark, not [REDACTED] */
    {"MY_AGENT_SECRET=hunter2-value-XYZ",
	"MY_AGENT_SECRET=[REDACTED MY_AGENT_SECRET]"},
    {"{\"password\": \"hunter2-value-XYZ\"}",
	"{\"password\": \"[REDACTED MY_AGENT_SECRET]\"}"},
    /* a value that is also a provider key keeps its name */
    {"key sk-ant-api03-abcDEF123456ghiJKL789012mnoPQR.",
	"key [REDACTED ANTHROPIC_API_KEY]."},
    /* split by invisible characters: U+200B, U+FEFF, U+00AD, U+2060,
     * U+200D, an escape sequence */
    {"x hunter2-\xe2\x80\x8bvalue-XYZ y", "x [REDACTED MY_AGENT_SECRET] y"},
    {"h\xe2\x80\x8bu\xe2\x80\x8bn\xe2\x80\x8bt\xe2\x80\x8b"
     "er2-value-XYZ",
	"[REDACTED MY_AGENT_SECRET]"},
    {"hunter2\xef\xbb\xbf-value\xc2\xad-XYZ", "[REDACTED MY_AGENT_SECRET]"},
    {"tok3n\xe2\x81\xa0-exam\xe2\x80\x8dple-42",
	"[REDACTED EXAMPLE_API_TOKEN]"},
    {"tok3n-\x1b[1mexample-42", "[REDACTED EXAMPLE_API_TOKEN]"},
    /* overlapping values: their union, one mark */
    {"<abcdefgh12wxyz9>", "<[REDACTED OVERLAP_A]>"},
    {"abcdefgh12abcdefgh12", "[REDACTED OVERLAP_A][REDACTED OVERLAP_A]"},
    /* the name is cleaned for the mark */
    {"weird-name-value-7", "[REDACTED BADNAME31m]"},
    /* short and all-digit values are left alone */
    {"true 123456789 hunter2-value-XY", "true 123456789 hunter2-value-XY"},
    {"", ""},
    {NULL, NULL},
};

static void
test_by_value(void **state)
{
	struct redact_values *rv = values_of(test_values);
	size_t i, steps;

	(void)state;
	assert_int_equal(redact_values_count(rv), 6);
	for (i = 0; value_cases[i].in != NULL; i++) {
		const char *in = value_cases[i].in;
		char *out = redact_text(rv, in, strlen(in), &steps);
		char *again;

		assert_non_null(out);
		if (strcmp(out, value_cases[i].want) != 0)
			fail_msg(
			    "value case %zu:\n in:   %s\n got:  %s\n want: "
			    "%s",
			    i, in, out, value_cases[i].want);
		assert_true(steps <= 2 * strlen(in));
		/* a mark is never redacted again */
		again = redact_text(rv, out, strlen(out), NULL);
		assert_non_null(again);
		assert_string_equal(again, out);
		free(again);
		free(out);
	}
	redact_values_free(rv);
}

/* redact_text_copy(): the marks cut to fit like redact_copy()'s. */
static void
test_by_value_copy(void **state)
{
	struct redact_values *rv = values_of(test_values);
	char buf[32];

	(void)state;
	assert_int_equal(
	    redact_text_copy(rv, buf, sizeof(buf), "is hunter2-value-XYZ"),
	    strlen("is [REDACTED MY_AGENT_SECRET]"));
	assert_string_equal(buf, "is [REDACTED MY_AGENT_SECRET]");
	redact_text_copy(rv, buf, 12, "hunter2-value-XYZ");
	assert_null(strstr(buf, "hunter2"));
	redact_values_free(rv);
}

struct name_case {
	const char *name;
	bool secret;
};

static const struct name_case name_cases[] = {
    {"ANTHROPIC_API_KEY", true},
    {"GITHUB_TOKEN", true},
    {"EXAMPLE_API_TOKEN", true},
    {"aws_secret_access_key", true},
    {"DB_PASSWORD", true},
    {"MYSQL_PASSWD", true},
    {"GOOGLE_APPLICATION_CREDENTIALS", true},
    {"NPM_AUTH", true},
    {"authToken", true},
    {"Proxy-Authorization", true},
    {"HTTP_AUTHORISATION", true},
    {"GIT_AUTHOR_NAME", false},
    {"GIT_AUTHOR_EMAIL", false},
    {"HOME", false},
    {"PATH", false},
    {"LANG", false},
    {"EDITOR", false},
    {"STORYCTL_ATTEMPT", false},
};

static void
test_name_rule(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(name_cases) / sizeof(name_cases[0]); i++)
		if (redact_name_secret(name_cases[i].name) !=
		    name_cases[i].secret)
			fail_msg("name %s: want %s", name_cases[i].name,
			    name_cases[i].secret ? "secret" : "not secret");
}

static const struct name_case worth_cases[] = {
    {"", false},
    {"1", false},
    {"true", false},
    {"1234567", false}, /* 7 bytes: under REDACT_VALUE_MIN */
    {"12345678", false}, /* all digits */
    {"disabled", false},
    {"Production", false},
    {"abcdefgh", true},
    {"hunter2-value-XYZ", true},
    {"/home/someone/project", true},
};

static void
test_value_worth(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(worth_cases) / sizeof(worth_cases[0]); i++)
		if (redact_value_worth(worth_cases[i].name) !=
		    worth_cases[i].secret)
			fail_msg("value \"%s\": want %s", worth_cases[i].name,
			    worth_cases[i].secret ? "worth" : "not worth");
}

/* What start-up collects (controller/config/secrets.c): the agents' env
 * values, and the controller's variables the name rule picks. */
static void
test_secrets_values(void **state)
{
	struct strlist a1 = {0}, a2 = {0};
	const struct strlist *adds[] = {&a1, &a2, NULL};
	char *envp[] = {"EXAMPLE_API_TOKEN=tok3n-example-42",
	    "HOME=/home/someone/very/long", "GIT_AUTHOR_NAME=Some Longname",
	    "GITHUB_TOKEN=short", "NOEQUALS", NULL};
	struct redact_values *rv = NULL;
	struct sc_err err;
	const char *in = "hunter2-value-XYZ /home/someone/very/long "
			 "tok3n-example-42 Some Longname plain-but-long-value";
	char *out;

	(void)state;
	assert_int_equal(
	    strlist_push(&a1, "MY_AGENT_SECRET=hunter2-value-XYZ"), 0);
	assert_int_equal(strlist_push(&a1, "FLAG=true"), 0);
	assert_int_equal(strlist_push(&a2, "PLAIN=plain-but-long-value"), 0);
	assert_int_equal(secrets_values(&rv, adds, 3, envp, &err), 0);
	assert_int_equal(redact_values_count(rv), 3);
	out = redact_text(rv, in, strlen(in), NULL);
	assert_non_null(out);
	assert_string_equal(out,
	    "[REDACTED MY_AGENT_SECRET] /home/someone/very/long "
	    "[REDACTED EXAMPLE_API_TOKEN] Some Longname [REDACTED PLAIN]");
	free(out);
	redact_values_free(rv);
	strlist_release(&a1);
	strlist_release(&a2);
}

/* Agent output reaches the redactor as the capture's tail, put back in
 * order from its ring (controller/engine/capture.c): a value written in two
 * chunks, across the ring's wrap, is whole in the text redacted. */
static void
test_value_across_chunks(void **state)
{
	struct redact_values *rv = values_of(test_values);
	struct capture c;
	struct sc_err err;
	char *tail, *out;
	size_t len;

	(void)state;
	assert_int_equal(capture_open(&c, NULL, 64, &err), 0);
	capture_add(
	    &c, "0123456789012345678901234567890123456789012345678", 49);
	capture_add(&c, "..hunter2-val", 13); /* the ring wraps after "val" */
	capture_add(&c, "ue-XYZ..", 8);
	tail = capture_tail(&c, &len);
	assert_non_null(tail);
	assert_non_null(strstr(tail, "hunter2-value-XYZ"));
	out = redact_text(rv, tail, len, NULL);
	assert_non_null(out);
	assert_null(strstr(out, "hunter2"));
	assert_non_null(strstr(out, "..[REDACTED MY_AGENT_SECRET].."));
	free(out);
	free(tail);
	capture_release(&c);
	redact_values_free(rv);
}

/* 50 MB of near-matches of every value: the automaton's moves are
 * bounded by twice the input's length (each byte one move forward, at
 * most one failure move back), whatever the values. */
static void
test_values_linear(void **state)
{
	static const char *const near[] = {
	    "MANY_A",
	    "aaaaaaaaaaaaaaaaaaaaaaab",
	    "ABAB",
	    "ababababababababX",
	    "PREFIX",
	    "hunter2-value-XYZ",
	    "ALMOST",
	    "hunter2-value-XY!",
	    NULL,
	};
	static const char *const units[] = {
	    "a",
	    "hunter2-value-"
	    "XYaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaabababababababababab",
	};
	const size_t total = 50u * 1024 * 1024;
	struct redact_values *rv = values_of(near);
	size_t i, steps;

	(void)state;
	for (i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		char *in = repeat(units[i], total);
		char *out = redact_text(rv, in, total, &steps);

		assert_non_null(out);
		assert_true(steps >= total);
		if (steps > 2 * total)
			fail_msg("unit \"%s\": %zu moves for %zu bytes",
			    units[i], steps, total);
		free(out);
		free(in);
	}
	redact_values_free(rv);
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
	    cmocka_unit_test(test_by_value),
	    cmocka_unit_test(test_by_value_copy),
	    cmocka_unit_test(test_name_rule),
	    cmocka_unit_test(test_value_worth),
	    cmocka_unit_test(test_secrets_values),
	    cmocka_unit_test(test_value_across_chunks),
	    cmocka_unit_test(test_values_linear),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
