/*
 * test_reader.c - adapter_read(), the one reader of an attempt's output
 * (strategies/reader.h): on what the real claude, codex and gemini CLIs
 * printed (tests/fixtures/agents/real/, captured by make check-agents),
 * one call yields the outcome, error code, message, wait hint, cost,
 * tokens, final message and session id; and it is what
 * classify_attempt() and agentout_parse() each give.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tests/unit/fixture_fs.h"

#include "strategies/reader.h"

#define HANG (-1) /* killed at stall_timeout_s (INDEX.tsv "hang") */

struct rcase {
	const char *file;
	const char *cli;
	int exit; /* HANG: stalled */
	int done; /* boxes checked of 2 */
	enum error_code code;
	const char *msg_part; /* in the message; NULL: not checked */
	enum waithint_kind hint;
	bool has_cost;
	const char *text; /* in result_text; NULL: "" */
	const char *session; /* "" none */
};

static const struct rcase cases[] = {
    /* issue 31: a failed result with no words takes the error event's,
     * never an empty message */
    {"gemini-refusal.txt", "gemini", 0, 0, ERRC_CRASH,
	"blocked due to safety settings", WAITHINT_NONE, false, NULL,
	"7ba390b5-ac05-47f2-8853-f1936cc48176"},
    /* a usage limit that lifts "later": waited for, not permanent */
    {"codex-later.txt", "codex", 1, 0, ERRC_USAGE_LIMIT, "try again later",
	WAITHINT_NONE, false, NULL, "01a2229c-09d0-7070-b1d4-8ab03addcd0a"},
    {"claude-success.txt", "claude", 0, 2, ERRC_NONE, "", WAITHINT_NONE, true,
	"All tasks of the story are done and checked.",
	"c35bf3e4-ab3a-48be-8117-e0c50b2c6dba"},
    /* the wall: rate_limit_event rejected + resetsAt */
    {"claude-limit.txt", "claude", 1, 0, ERRC_USAGE_LIMIT, "session limit",
	WAITHINT_EPOCH, true, "You've hit your session limit",
	"88a6f31f-3bd1-4ba7-827e-a28e5084f97c"},
    {"claude-ratelimit.txt", "claude", 1, 0, ERRC_RATE_LIMIT, NULL,
	WAITHINT_DELAY, true, NULL, "05bffcb4-3251-4166-b620-4ec92bba9a43"},
    {"claude-hang.txt", "claude", HANG, 0, ERRC_STALLED, NULL, WAITHINT_NONE,
	false, NULL, "42b1804e-653d-453e-83ea-2d14e30e4203"},
    {"codex-success.txt", "codex", 0, 2, ERRC_NONE, "", WAITHINT_NONE, false,
	NULL, "01a20af4-33da-74d3-a4c1-0e79a050eed0"},
    {"codex-limit.txt", "codex", 1, 0, ERRC_USAGE_LIMIT, "usage limit",
	WAITHINT_CLOCK, false, "hit your usage limit",
	"01a20af4-d256-7150-ad0d-f6fc0d80960b"},
    {"codex-server.txt", "codex", 1, 0, ERRC_SERVER_ERROR, "high demand",
	WAITHINT_NONE, false, NULL, "01a20af4-646e-7ee1-a4e7-a8dfbb04a896"},
    {"gemini-success.txt", "gemini", 0, 2, ERRC_NONE, "", WAITHINT_NONE, false,
	"All tasks of the story are done and checked.",
	"f757dc73-356d-4df2-bbcc-763dd7086e58"},
    /* no reset named: midnight Pacific time */
    {"gemini-daily.txt", "gemini", 1, 0, ERRC_USAGE_LIMIT, NULL, WAITHINT_CLOCK,
	false, NULL, "36113b7d-9794-4314-b6d3-cf4db0358673"},
    /* exit 41, the CLI's documented auth failure, before any event */
    {"gemini-authtype.txt", "gemini", 41, 0, ERRC_AUTH, NULL, WAITHINT_NONE,
	false, NULL, ""},
};

static void
input_for(struct classify_input *in, const struct rcase *c, const char *tail,
    size_t len)
{
	memset(in, 0, sizeof(*in));
	in->exit_code = c->exit == HANG ? -1 : c->exit;
	in->term_signal = c->exit == HANG ? 15 : 0;
	in->stalled = c->exit == HANG;
	in->tasks_completed = c->done;
	in->tasks_total = 2;
	in->tail = tail;
	in->tail_len = len;
	in->adapter = adapter_for(c->cli);
}

/* One call, everything: what each fixture's live run gave. */
static void
test_real_fixtures(void **state)
{
	struct classify_input in;
	struct agent_report r;
	size_t i, len;
	char *buf;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct rcase *c = &cases[i];

		buf = fxfs_fixture_read("agents/real", c->file, &len);
		input_for(&in, c, buf, len);
		memset(&r, 0xa5, sizeof(r));
		adapter_read(&r, &in);
		if (r.verdict.code != c->code ||
		    r.verdict.hint.kind != c->hint ||
		    r.output.has_cost != c->has_cost ||
		    strcmp(r.output.session_id, c->session) != 0 ||
		    (c->msg_part != NULL &&
			(c->msg_part[0] == '\0' ? r.verdict.message[0] != '\0'
						: strstr(r.verdict.message,
						      c->msg_part) == NULL)) ||
		    (c->text != NULL &&
			strstr(r.output.result_text, c->text) == NULL))
			fail_msg(
			    "%s: %s hint %d \"%s\"; cost %d text \"%.80s\" "
			    "session \"%s\"",
			    c->file, errcode_name(r.verdict.code),
			    r.verdict.hint.kind, r.verdict.message,
			    r.output.has_cost, r.output.result_text,
			    r.output.session_id);
		assert_int_equal(r.verdict.outcome,
		    c->code == ERRC_NONE ? OUTCOME_SUCCESS
					 : errcode_outcome(c->code));
		free(buf);
	}
}

/* classify_attempt() and agentout_parse() are the reader's two halves. */
static void
test_halves(void **state)
{
	struct classify_input in;
	struct agent_report r;
	struct classification cls;
	struct agent_output ao;
	size_t i, len, k;
	char *buf;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		buf = fxfs_fixture_read("agents/real", cases[i].file, &len);
		for (k = 0; k < len; k += len / 7 + 1) {
			input_for(&in, &cases[i], buf + k, len - k);
			adapter_read(&r, &in);
			classify_attempt(&cls, &in);
			agentout_parse(&ao, buf + k, len - k);
			assert_int_equal(cls.code, r.verdict.code);
			assert_int_equal(cls.outcome, r.verdict.outcome);
			assert_string_equal(cls.message, r.verdict.message);
			assert_memory_equal(
			    &cls.hint, &r.verdict.hint, sizeof(cls.hint));
			assert_string_equal(
			    ao.result_text, r.output.result_text);
			assert_string_equal(ao.session_id, r.output.session_id);
			assert_int_equal(ao.has_cost, r.output.has_cost);
			assert_int_equal(
			    ao.input_tokens, r.output.input_tokens);
		}
		free(buf);
	}
}

/* A pretty-printed object (gemini --output-format json) is read once, as
 * the event of its line "{": its error decides, its session id is kept,
 * and its own lines stay text for the classifier. */
static void
test_pretty_object(void **state)
{
	static const char tail[] =
	    "Loaded cached credentials.\n"
	    "{\n"
	    "  \"session_id\": \"9d3c\",\n"
	    "  \"error\": {\n"
	    "    \"type\": \"FatalAuthenticationError\",\n"
	    "    \"message\": \"API key not valid. Please pass a valid API "
	    "key.\",\n"
	    "    \"code\": 401\n"
	    "  }\n"
	    "}\n";
	struct classify_input in;
	struct agent_report r;

	(void)state;
	memset(&in, 0, sizeof(in));
	in.exit_code = 1;
	in.tasks_total = 2;
	in.tail = tail;
	in.tail_len = strlen(tail);
	adapter_read(&r, &in);
	assert_int_equal(r.verdict.code, ERRC_AUTH);
	assert_string_equal(r.verdict.message,
	    "API key not valid. Please pass a valid API key.");
	assert_string_equal(r.output.session_id, "9d3c");
	assert_true(r.output.structured);
	assert_string_equal(r.output.result_text,
	    "API key not valid. Please pass a valid API key.");
}

/* No tail at all: the exit status alone, nothing reported. */
static void
test_empty(void **state)
{
	struct classify_input in;
	struct agent_report r;

	(void)state;
	memset(&in, 0, sizeof(in));
	in.exit_code = 1;
	in.tasks_total = 2;
	memset(&r, 0xa5, sizeof(r));
	adapter_read(&r, &in);
	assert_int_equal(r.verdict.code, ERRC_CRASH);
	assert_string_equal(r.verdict.message, "");
	assert_int_equal(r.verdict.hint.kind, WAITHINT_NONE);
	assert_false(r.output.has_cost);
	assert_string_equal(r.output.result_text, "");
	assert_string_equal(r.output.session_id, "");
	assert_int_equal(r.output.input_tokens, -1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_real_fixtures),
	    cmocka_unit_test(test_halves),
	    cmocka_unit_test(test_pretty_object),
	    cmocka_unit_test(test_empty),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
