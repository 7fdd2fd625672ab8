/*
 * test_agentout.c - agentout_parse(): cost, tokens and the final message
 * of claude, codex, gemini and aider output, and the plain-text fallback.
 *
 * Fixtures: tests/fixtures/agentout/ holds successful runs written in each
 * CLI's documented shape (agentout.h names the fields and sources);
 * tests/fixtures/agents/ holds the real transcripts of docs/agents.md.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <dirent.h>

#include <cmocka.h>

#include "tests/unit/fixture_fs.h"
#include "strategies/agentout.h"
#include "tests/fuzz/fuzz_utf8.h"

/* ---- helpers ---- */

static void
parse_str(struct agent_output *o, const char *s)
{
	agentout_parse(o, s, strlen(s));
}

/* The invariants every result keeps, whatever the input. */
static void
assert_sane(const struct agent_output *o)
{
	size_t n = strnlen(o->result_text, AGENTOUT_RESULT_MAX);

	assert_true(n < AGENTOUT_RESULT_MAX);
	assert_true(fuzz_clean_utf8(o->result_text));
	if (n > 0) {
		assert_false(o->result_text[0] == ' ' ||
		    o->result_text[0] == '\n' || o->result_text[0] == '\t');
		assert_false(o->result_text[n - 1] == ' ' ||
		    o->result_text[n - 1] == '\n' ||
		    o->result_text[n - 1] == '\t');
	}
	assert_true(o->input_tokens >= -1);
	assert_true(o->output_tokens >= -1);
	if (o->has_cost)
		assert_true(o->cost_usd >= 0);
	if (o->structured)
		assert_true(n > 0);
}

/* tests/fixtures/<dir>/<name> under $STORYCTL_SRC, else the current
 * directory (scripts/run-tests runs the suites from the root) */
static void
fixture_path(char *buf, size_t len, const char *dir, const char *name)
{
	const char *src = getenv("STORYCTL_SRC");

	if (src == NULL || src[0] == '\0')
		src = ".";
	snprintf(buf, len, "%s/tests/fixtures/%s%s%s", src, dir,
	    name != NULL ? "/" : "", name != NULL ? name : "");
}

static void
parse_fixture(struct agent_output *o, const char *dir, const char *name)
{
	size_t len;
	char *buf = fxfs_fixture_read(dir, name, &len);

	agentout_parse(o, buf, len);
	free(buf);
	assert_sane(o);
}

/* ---- claude ---- */

static void
test_claude_stream_json(void **state)
{
	struct agent_output o;

	(void)state;
	parse_fixture(&o, "agentout", "claude-stream-json.txt");
	assert_true(o.has_cost);
	assert_true(o.cost_usd > 0.42129 && o.cost_usd < 0.42131);
	assert_true(o.structured);
	assert_string_equal(o.result_text,
	    "Both tasks are done: the parser is in `src/parse.c` and "
	    "`make test` passes \xe2\x80\x94 12 tests.");
	/* 20 + 4300 cache creation + 4000 cache read */
	assert_int_equal(o.input_tokens, 8320);
	assert_int_equal(o.output_tokens, 160);
}

static void
test_claude_json_single(void **state)
{
	struct agent_output o;

	(void)state;
	parse_str(&o,
	    "{\"type\":\"result\",\"subtype\":\"success\",\"is_error\":false,"
	    "\"duration_ms\":1200,\"num_turns\":1,\"result\":\"All done.\","
	    "\"session_id\":\"x\",\"total_cost_usd\":0.0123,\"usage\":"
	    "{\"input_tokens\":5,\"output_tokens\":7}}\n");
	assert_sane(&o);
	assert_true(o.has_cost);
	assert_true(o.cost_usd > 0.01229 && o.cost_usd < 0.01231);
	assert_true(o.structured);
	assert_string_equal(o.result_text, "All done.");
	assert_int_equal(o.input_tokens, 5);
	assert_int_equal(o.output_tokens, 7);
}

static void
test_claude_old_cost_usd(void **state)
{
	struct agent_output o;

	(void)state;
	parse_str(&o,
	    "{\"type\":\"result\",\"subtype\":\"success\",\"cost_usd\":0.5,"
	    "\"is_error\":false,\"duration_ms\":10,\"result\":\"ok\"}");
	assert_sane(&o);
	assert_true(o.has_cost);
	assert_true(o.cost_usd == 0.5);
	assert_string_equal(o.result_text, "ok");
	assert_int_equal(o.input_tokens, -1);
	assert_int_equal(o.output_tokens, -1);
}

static void
test_last_result_wins(void **state)
{
	struct agent_output o;

	(void)state;
	parse_str(&o,
	    "{\"type\":\"result\",\"result\":\"first\",\"total_cost_usd\":1.5,"
	    "\"usage\":{\"input_tokens\":1,\"output_tokens\":2}}\n"
	    "some stderr line\n"
	    "{\"type\":\"result\",\"result\":\"second\",\"total_cost_usd\":2."
	    "25,"
	    "\"usage\":{\"input_tokens\":3,\"output_tokens\":4}}\n"
	    "trailing stderr noise after the result\n");
	assert_sane(&o);
	assert_true(o.has_cost);
	assert_true(o.cost_usd == 2.25);
	assert_true(o.structured);
	/* the structured message beats the text lines after it */
	assert_string_equal(o.result_text, "second");
	assert_int_equal(o.input_tokens, 3);
	assert_int_equal(o.output_tokens, 4);
}

/* claude --output-format json --verbose: every event in one array */
static void
test_claude_json_verbose_array(void **state)
{
	struct agent_output o;

	(void)state;
	parse_str(&o,
	    "[{\"type\":\"system\",\"subtype\":\"init\"},"
	    "{\"type\":\"assistant\",\"message\":{\"content\":[{\"type\":"
	    "\"text\",\"text\":\"working\"}]}},"
	    "{\"type\":\"result\",\"result\":\"finished\","
	    "\"total_cost_usd\":0.75}]\n");
	assert_sane(&o);
	assert_true(o.has_cost);
	assert_true(o.cost_usd == 0.75);
	assert_string_equal(o.result_text, "finished");
}

/* killed before its result: the last assistant text stands in; a failed
 * result without "result" keeps it too */
static void
test_claude_assistant_without_result(void **state)
{
	struct agent_output o;

	(void)state;
	parse_str(&o,
	    "{\"type\":\"assistant\",\"message\":{\"content\":[{\"type\":"
	    "\"text\",\"text\":\"Part one.\"},{\"type\":\"text\",\"text\":"
	    "\"Part two.\"},{\"type\":\"tool_use\",\"id\":\"t\",\"name\":"
	    "\"Bash\",\"input\":{}}]}}\n"
	    "{\"type\":\"assistant\",\"message\":{\"content\":[{\"type\":"
	    "\"tool_use\",\"id\":\"u\",\"name\":\"Bash\",\"input\":{}}]}}\n"
	    "{\"type\":\"result\",\"subtype\":\"error_max_turns\","
	    "\"is_error\":true,\"total_cost_usd\":3}\n");
	assert_sane(&o);
	assert_true(o.structured);
	assert_string_equal(o.result_text, "Part one.\nPart two.");
	assert_true(o.has_cost);
	assert_true(o.cost_usd == 3.0);
}

/* ---- codex ---- */

static void
test_codex_agent_message(void **state)
{
	struct agent_output o;

	(void)state;
	parse_fixture(&o, "agentout", "codex-json.txt");
	assert_false(o.has_cost);
	assert_true(o.structured);
	assert_string_equal(o.result_text,
	    "Implemented the parser in src/parse.c.\n\n"
	    "- [x] add the parser\n- [x] add tests");
	assert_int_equal(o.input_tokens, 26549);
	assert_int_equal(o.output_tokens, 1590);

	/* 0.4x item_type spelling, and the last message wins */
	parse_str(&o,
	    "{\"type\":\"item.completed\",\"item\":{\"id\":\"item_3\","
	    "\"item_type\":\"assistant_message\",\"text\":\"old one\"}}\n"
	    "{\"type\":\"item.completed\",\"item\":{\"id\":\"item_4\","
	    "\"item_type\":\"assistant_message\",\"text\":\"new one\"}}\n"
	    "{\"type\":\"item.completed\",\"item\":{\"id\":\"item_5\","
	    "\"type\":\"reasoning\",\"text\":\"not a message\"}}\n");
	assert_sane(&o);
	assert_string_equal(o.result_text, "new one");
	assert_int_equal(o.input_tokens, -1);
}

static void
test_codex_turn_failed_and_legacy(void **state)
{
	struct agent_output o;

	(void)state;
	parse_str(&o,
	    "{\"type\":\"turn.started\"}\n"
	    "{\"type\":\"error\",\"message\":\"Reconnecting... 2/5\"}\n"
	    "{\"type\":\"turn.failed\",\"error\":{\"message\":\"exceeded retry "
	    "limit, last status: 401 Unauthorized\"}}\n");
	assert_sane(&o);
	assert_true(o.structured);
	assert_string_equal(o.result_text,
	    "exceeded retry limit, last status: 401 Unauthorized");

	parse_str(&o,
	    "{\"id\":\"0\",\"msg\":{\"type\":\"agent_message\",\"message\":"
	    "\"legacy text\"}}\n"
	    "{\"id\":\"0\",\"msg\":{\"type\":\"token_count\",\"info\":"
	    "{\"total_token_usage\":{\"input_tokens\":100,"
	    "\"cached_input_tokens\":50,\"output_tokens\":9}}}}\n"
	    "{\"id\":\"0\",\"msg\":{\"type\":\"task_complete\","
	    "\"last_agent_message\":\"legacy final\"}}\n");
	assert_sane(&o);
	assert_string_equal(o.result_text, "legacy final");
	assert_int_equal(o.input_tokens, 100);
	assert_int_equal(o.output_tokens, 9);
	assert_false(o.has_cost);
}

/* ---- gemini ---- */

static void
test_gemini_stream_json(void **state)
{
	struct agent_output o;

	(void)state;
	parse_fixture(&o, "agentout", "gemini-stream-json.txt");
	assert_false(o.has_cost);
	assert_true(o.structured);
	/* the chunks after the tool call, joined; the warning between two
	 * chunks does not split the answer */
	assert_string_equal(
	    o.result_text, "Done: both boxes in 1-1 are checked.");
	assert_int_equal(o.input_tokens, 18210);
	assert_int_equal(o.output_tokens, 1132);
}

static void
test_gemini_error_result(void **state)
{
	struct agent_output o;

	(void)state;
	parse_str(&o,
	    "{\"type\":\"init\",\"session_id\":\"s\",\"model\":\"auto\"}\n"
	    "Attempt 1 failed. Retrying with backoff... Error: fetch failed\n"
	    "    at file:///x/chunk.js:1:2\n"
	    "{\"type\":\"result\",\"status\":\"error\",\"error\":{\"type\":"
	    "\"unknown\",\"message\":\"[API Error: fetch failed]\"},"
	    "\"stats\":{\"total_tokens\":0,\"input_tokens\":0,"
	    "\"output_tokens\":0}}\n");
	assert_sane(&o);
	assert_true(o.structured);
	assert_string_equal(o.result_text, "[API Error: fetch failed]");
	assert_int_equal(o.input_tokens, 0);
	assert_int_equal(o.output_tokens, 0);
	assert_false(o.has_cost);
}

static void
test_gemini_json_pretty(void **state)
{
	struct agent_output o;

	(void)state;
	parse_fixture(&o, "agentout", "gemini-json.txt");
	assert_false(o.has_cost);
	assert_true(o.structured);
	assert_string_equal(o.result_text,
	    "Both tasks of story 1-1 are done.\nThe tests pass.");
	assert_int_equal(o.input_tokens, 1500 + 24939);
	assert_int_equal(o.output_tokens, 20 + 980);
}

/* ---- aider ---- */

static void
test_aider_cost(void **state)
{
	struct agent_output o;

	(void)state;
	parse_fixture(&o, "agentout", "aider.txt");
	assert_true(o.has_cost);
	assert_true(o.cost_usd > 0.3099 && o.cost_usd < 0.3101);
	assert_int_equal(o.input_tokens, 12000);
	assert_int_equal(o.output_tokens, 1234);
	assert_false(o.structured);
	assert_non_null(
	    strstr(o.result_text, "Applied edit to tests/test_parse.c"));
	assert_non_null(strstr(o.result_text, "Aider v0.86.1"));

	/* older wording, colours, small costs */
	parse_str(&o,
	    "\x1b[32mTokens: 1,024 sent, 97 received. Cost: $0.0012 request, "
	    "$0.0034 session.\x1b[0m\n");
	assert_sane(&o);
	assert_true(o.has_cost);
	assert_true(o.cost_usd > 0.00339 && o.cost_usd < 0.00341);
	assert_int_equal(o.input_tokens, 1024);
	assert_int_equal(o.output_tokens, 97);

	/* a line that only looks like it */
	parse_str(&o, "Cost: unknown session\nTokens: many sent\n");
	assert_sane(&o);
	assert_false(o.has_cost);
	assert_int_equal(o.input_tokens, -1);
}

/* ---- plain text ---- */

static void
test_plain_text_ansi_stripped(void **state)
{
	struct agent_output o;

	(void)state;
	parse_str(&o,
	    "\x1b[1mBold\x1b[0m and \x1b[38;5;196mred\x1b[m\r\n"
	    "\x1b]0;window title\x07title gone\n"
	    "\x1b[2K\x1b[1G\n"
	    "{\"type\":\"tool_use\",\"tool_name\":\"x\"}\n"
	    "\tindented \x1b(Bline\n"
	    "progress 10%\rprogress 50%\rprogress 100%\n"
	    "spinner done\r\n");
	assert_sane(&o);
	assert_false(o.structured);
	assert_false(o.has_cost);
	assert_string_equal(o.result_text,
	    "Bold and red\ntitle gone\n\tindented line\nprogress 100%\n"
	    "spinner done");
	assert_null(strchr(o.result_text, '\x1b'));
}

static void
test_plain_text_bounded(void **state)
{
	struct agent_output o;
	char *buf, line[64];
	size_t off = 0, cap = 200 * 64, n;
	int i;

	(void)state;
	/* 100 lines: only the last 30 are kept */
	buf = malloc(cap);
	assert_non_null(buf);
	for (i = 0; i < 100; i++) {
		snprintf(line, sizeof(line), "line %03d\n\n", i);
		n = strlen(line);
		memcpy(buf + off, line, n);
		off += n;
	}
	agentout_parse(&o, buf, off);
	assert_sane(&o);
	assert_false(o.structured);
	assert_true(strncmp(o.result_text, "line 070\nline 071\n", 18) == 0);
	assert_null(strstr(o.result_text, "line 069"));
	n = strlen(o.result_text);
	assert_string_equal(o.result_text + n - 8, "line 099");

	/* 30 long lines of 3-byte characters overflow the bound: the newest
	 * whole lines are kept */
	free(buf);
	cap = 40 * 1000;
	buf = malloc(cap);
	assert_non_null(buf);
	off = 0;
	for (i = 0; i < 30; i++) {
		int j;

		buf[off++] = (char)('A' + i % 26);
		for (j = 0; j < 200; j++) {
			memcpy(buf + off, "\xe2\x82\xac", 3); /* euro sign */
			off += 3;
		}
		buf[off++] = '\n';
	}
	agentout_parse(&o, buf, off);
	assert_sane(&o);
	n = strlen(o.result_text);
	assert_true(n <= AGENTOUT_RESULT_MAX - 1);
	assert_true(n > AGENTOUT_RESULT_MAX - 1 - 602);
	/* starts at a line's start, ends with the newest line */
	assert_true(o.result_text[0] >= 'A' && o.result_text[0] <= 'Z');
	assert_string_equal(o.result_text + n - 3, "\xe2\x82\xac");
	free(buf);
}

/* one line far longer than the bound: its end, cut at a character */
static void
test_plain_huge_line(void **state)
{
	struct agent_output o;
	size_t n = 2 * 1024 * 1024 + 1, i, len;
	char *buf = malloc(n + 16);

	(void)state;
	assert_non_null(buf);
	for (i = 0; i + 2 <= n; i += 2)
		memcpy(buf + i, "\xc3\xa9", 2); /* e acute */
	memcpy(buf + i, "END\n", 4);
	agentout_parse(&o, buf, i + 4);
	assert_sane(&o);
	len = strlen(o.result_text);
	assert_true(len >= AGENTOUT_RESULT_MAX - 3);
	assert_string_equal(o.result_text + len - 3, "END");

	/* a huge JSON-looking line is skipped unparsed */
	buf[0] = '{';
	buf[1] = '"';
	for (i = 2; i < n; i++)
		buf[i] = 'x';
	memcpy(buf + n, "\"}\nafter\n", 9);
	agentout_parse(&o, buf, n + 9);
	assert_sane(&o);
	assert_string_equal(o.result_text, "after");
	free(buf);
}

static void
test_truncated_first_line(void **state)
{
	struct agent_output o;

	(void)state;
	/* the tail begins inside an event line */
	parse_str(&o,
	    "t_usd\":9.99,\"result\":\"cut off\"}\n"
	    "{\"type\":\"system\",\"subtype\":\"api_retry\",\"attempt\":1}\n"
	    "real text\n");
	assert_sane(&o);
	assert_false(o.has_cost);
	assert_false(o.structured);
	assert_string_equal(o.result_text, "real text");

	/* ... or inside a character */
	parse_str(&o, "\x82\xac rest of a line\nlast\n");
	assert_sane(&o);
	assert_string_equal(o.result_text, "rest of a line\nlast");

	/* ... and ends inside an event line (killed mid-write) */
	parse_str(&o, "hello\n{\"type\":\"assistant\",\"message\":{\"con");
	assert_sane(&o);
	assert_string_equal(o.result_text, "hello");
}

static void
test_invalid_utf8_and_nul(void **state)
{
	static const char in[] =
	    "ok \xff\xfe bytes\n"
	    "nul\0in the middle\n"
	    "overlong \xc0\xaf and surrogate \xed\xa0\x80 and c1 \xc2\x9b\n"
	    "{\"type\":\"result\",\"result\":\"x\0y\"}\n"
	    "\xf4\x90\x80\x80 too big\n";
	struct agent_output o;

	(void)state;
	agentout_parse(&o, in, sizeof(in) - 1);
	assert_sane(&o);
	assert_false(o.structured);
	assert_string_equal(o.result_text,
	    "ok  bytes\nnulin the middle\n"
	    "overlong  and surrogate  and c1\n too big");

	/* an escaped NUL in a JSON string is refused, not passed on */
	parse_str(&o, "{\"type\":\"result\",\"result\":\"a\\u0000b\"}\n");
	assert_sane(&o);
	assert_false(o.structured);
	assert_string_equal(o.result_text, "");

	/* escaped controls inside a message are dropped, newlines kept */
	parse_str(&o,
	    "{\"type\":\"result\",\"result\":\"\\u001b[31mred"
	    "\\u001b[0m\\r\\nnext\\u0007\"}\n");
	assert_sane(&o);
	assert_true(o.structured);
	assert_string_equal(o.result_text, "red\nnext");
}

static void
test_empty_input(void **state)
{
	struct agent_output o;

	(void)state;
	memset(&o, 0x5a, sizeof(o));
	agentout_parse(&o, NULL, 0);
	assert_sane(&o);
	assert_false(o.has_cost);
	assert_false(o.structured);
	assert_string_equal(o.result_text, "");
	assert_int_equal(o.input_tokens, -1);
	assert_int_equal(o.output_tokens, -1);

	agentout_parse(&o, "", 0);
	assert_string_equal(o.result_text, "");
	parse_str(&o, " \n\n\t\r\n\x1b[0m\n");
	assert_sane(&o);
	assert_string_equal(o.result_text, "");
	/* JSON only, none of it a message */
	parse_str(&o, "{\"type\":\"turn.started\"}\n{}\n[]\n");
	assert_sane(&o);
	assert_string_equal(o.result_text, "");
	assert_false(o.structured);
}

/* a structured message over the bound keeps its beginning, cut before a
 * character that does not fit */
static void
test_result_text_truncated(void **state)
{
	struct agent_output o;
	static const char head[] = "{\"type\":\"result\",\"result\":\"ab";
	size_t cap = sizeof(head) + 3 * 2000 + 32, off, len;
	char *buf = malloc(cap);
	int i;

	(void)state;
	assert_non_null(buf);
	memcpy(buf, head, sizeof(head) - 1);
	off = sizeof(head) - 1;
	for (i = 0; i < 2000; i++) {
		memcpy(buf + off, "\xe2\x82\xac", 3);
		off += 3;
	}
	memcpy(buf + off, "\",\"total_cost_usd\":1}\n", 22);
	off += 22;
	agentout_parse(&o, buf, off);
	assert_sane(&o);
	assert_true(o.structured);
	assert_true(o.has_cost);
	len = strlen(o.result_text);
	/* "ab" + 1364 euro signs = 4094 bytes; a 1365th would need 4097 */
	assert_int_equal(len, 2 + 3 * 1364);
	assert_true(strncmp(o.result_text, "ab\xe2\x82\xac", 5) == 0);
	free(buf);
}

static void
test_garbage_json(void **state)
{
	struct agent_output o;
	size_t n = 100000, i;
	char *buf = malloc(n + 32);

	(void)state;
	assert_non_null(buf);
	/* nested far deeper than any event: skipped, not recursed into */
	for (i = 0; i < n; i++)
		buf[i] = '[';
	memcpy(buf + n, "\nplain\n", 7);
	agentout_parse(&o, buf, n + 7);
	assert_sane(&o);
	assert_string_equal(o.result_text, "plain");
	for (i = 0; i < n; i++)
		buf[i] = (i % 2) ? '{' : '[';
	agentout_parse(&o, buf, n);
	assert_sane(&o);
	free(buf);

	/* costs that are not costs */
	parse_str(&o,
	    "{\"type\":\"result\",\"total_cost_usd\":\"0.5\"}\n"
	    "{\"type\":\"result\",\"total_cost_usd\":-1}\n"
	    "{\"type\":\"result\",\"cost_usd\":null,\"usage\":"
	    "{\"input_tokens\":-5,\"output_tokens\":\"7\"}}\n");
	assert_sane(&o);
	assert_false(o.has_cost);
	assert_int_equal(o.input_tokens, -1);
	assert_int_equal(o.output_tokens, -1);

	/* wrong types where objects are expected */
	parse_str(&o,
	    "{\"type\":\"item.completed\",\"item\":[1]}\n"
	    "{\"type\":\"assistant\",\"message\":\"str\"}\n"
	    "{\"type\":\"message\",\"role\":\"assistant\",\"content\":5}\n"
	    "{\"type\":7}\n{\"msg\":3}\n{\"response\":[],\"stats\":"
	    "{\"models\":[1,2]}}\n{\"type\":\"result\",\"errors\":[1]}\n"
	    "{\n\"unterminated\": \n");
	assert_sane(&o);
	assert_false(o.structured);
	assert_false(o.has_cost);
	/* the line "{" that opened nothing is plain text */
	assert_non_null(strstr(o.result_text, "\"unterminated\":"));
}

/* ---- the real CLIs (docs/agents.md) ---- */

struct fcase {
	const char *file;
	bool structured;
	bool has_cost;
	const char *text; /* a substring of result_text; NULL: "" */
};

static const struct fcase real[] = {
    {"claude-nokey.txt", true, true,
	"Not logged in \xc2\xb7 Please run /login"},
    {"claude-offline.txt", true, true,
	"API Error: Unable to connect to API (FailedToOpenSocket)"},
    /* killed while retrying: nothing but events, no message */
    {"claude-offline-killed.txt", false, false, NULL},
    {"claude-text-nokey.txt", false, false,
	"Not logged in \xc2\xb7 Please run /login"},
    {"claude-text-offline.txt", false, false,
	"API Error: Unable to connect to API (FailedToOpenSocket)"},
    {"codex-apikey-offline-killed.txt", false, false,
	"failed to connect to Responses WebSocket"},
    {"codex-offline-killed.txt", false, false,
	"Reading additional input from stdin..."},
    {"codex-text-offline-killed.txt", false, false,
	"ERROR: Reconnecting... waiting for network"},
    {"gemini-nokey.txt", false, false, "Please set an Auth method"},
    {"gemini-offline-killed.txt", false, false, "Attempt 4 failed"},
    {"gemini-offline.txt", true, false,
	"[API Error: exception TypeError: fetch failed sending request]"},
    {"gemini-text-offline.txt", false, false,
	"An unexpected critical error occurred:[object Object]"},
    {"gemini-untrusted.txt", false, false,
	"Gemini CLI is not running in a trusted directory."},
};

static void
test_real_cli_fixtures(void **state)
{
	struct agent_output o;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(real) / sizeof(real[0]); i++) {
		const struct fcase *c = &real[i];

		parse_fixture(&o, "agents", c->file);
		if (o.structured != c->structured ||
		    o.has_cost != c->has_cost ||
		    (c->text == NULL && o.result_text[0] != '\0') ||
		    (c->text != NULL && strstr(o.result_text, c->text) == NULL))
			fail_msg("%s: structured %d cost %d text \"%s\"",
			    c->file, o.structured, o.has_cost, o.result_text);
		if (o.has_cost)
			assert_true(o.cost_usd == 0);
	}
	/* exact where the whole message is known */
	parse_fixture(&o, "agents", "claude-nokey.txt");
	assert_string_equal(
	    o.result_text, "Not logged in \xc2\xb7 Please run /login");
	assert_int_equal(o.input_tokens, 0);
	assert_int_equal(o.output_tokens, 0);
	parse_fixture(&o, "agents", "gemini-untrusted.txt");
	assert_null(strchr(o.result_text, '\x1b'));
	assert_null(strstr(o.result_text, "[31m"));
	parse_fixture(&o, "agents", "gemini-offline.txt");
	assert_int_equal(o.input_tokens, 0);
}

/* ---- the agent's session id (issue 12) ---- */

/* The session id of a captured fixture. */
static const char *
fixture_session(struct agent_output *o, const char *dir, const char *name)
{
	parse_fixture(o, dir, name);
	assert_true(fuzz_clean_utf8(o->session_id));
	assert_null(strchr(o->session_id, '\n'));
	return o->session_id;
}

/* What the real CLIs printed (tests/fixtures/agents/real/, captured by
 * make check-agents): claude's session_id on every event, codex 0.169's
 * thread.started thread_id, gemini's init session_id. */
static void
test_session_id_real(void **state)
{
	static const struct {
		const char *file, *id;
	} cases[] = {
	    {"claude-success.txt", "c35bf3e4-ab3a-48be-8117-e0c50b2c6dba"},
	    {"claude-limit.txt", "88a6f31f-3bd1-4ba7-827e-a28e5084f97c"},
	    {"claude-hang.txt", "42b1804e-653d-453e-83ea-2d14e30e4203"},
	    {"codex-success.txt", "01a20af4-33da-74d3-a4c1-0e79a050eed0"},
	    {"codex-limit.txt", "01a20af4-d256-7150-ad0d-f6fc0d80960b"},
	    {"gemini-success.txt", "f757dc73-356d-4df2-bbcc-763dd7086e58"},
	    {"gemini-daily.txt", "36113b7d-9794-4314-b6d3-cf4db0358673"},
	    /* exit 41 before its init event: no session */
	    {"gemini-authtype.txt", ""},
	};
	struct agent_output o;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		assert_string_equal(
		    fixture_session(&o, "agents/real", cases[i].file),
		    cases[i].id);
	/* offline runs: claude's stream-json, codex --json killed while
	 * reconnecting, gemini killed while retrying */
	assert_string_equal(fixture_session(&o, "agents", "claude-offline.txt"),
	    "bbbfe650-7e61-4f45-b2e5-33b3da033410");
	assert_string_equal(
	    fixture_session(&o, "agents", "codex-offline-killed.txt"),
	    "01a1fc70-34ea-78c2-ab4c-4ab2843a8a39");
	assert_string_equal(
	    fixture_session(&o, "agents", "gemini-offline-killed.txt"),
	    "2553f21c-ad5c-492a-a1b2-4012013c7010");
	/* text output names none */
	assert_string_equal(
	    fixture_session(&o, "agents", "claude-text-offline.txt"), "");
	/* the documented shapes, gemini json pretty-printed included */
	assert_string_equal(
	    fixture_session(&o, "agentout", "claude-stream-json.txt"),
	    "0b6a4d3e-5f1c-4c52-9d1e-1f2a3b4c5d6e");
	assert_string_equal(fixture_session(&o, "agentout", "codex-json.txt"),
	    "0199a213-81c0-7800-8aa1-bbab2a035a53");
	assert_string_equal(
	    fixture_session(&o, "agentout", "gemini-stream-json.txt"),
	    "c4a1f9a0-2b1e-4bde-9a55-0f2d1e3c4b5a");
	assert_string_equal(fixture_session(&o, "agentout", "gemini-json.txt"),
	    "c4a1f9a0-2b1e-4bde-9a55-0f2d1e3c4b5a");
	assert_string_equal(fixture_session(&o, "agentout", "aider.txt"), "");
}

/* Older codex shapes, the newest id wins, and what is not an id. */
static void
test_session_id_shapes(void **state)
{
	struct agent_output o;
	char big[600];

	(void)state;
	parse_str(
	    &o, "{\"type\":\"session.created\",\"session_id\":\"c-1\"}\n");
	assert_string_equal(o.session_id, "c-1");
	parse_str(&o,
	    "{\"id\":\"0\",\"msg\":{\"type\":\"session_configured\","
	    "\"session_id\":\"legacy-2\",\"model\":\"o3\"}}\n");
	assert_string_equal(o.session_id, "legacy-2");
	/* the newest printed */
	parse_str(&o,
	    "{\"type\":\"system\",\"subtype\":\"init\",\"session_id\":\"a\"}\n"
	    "{\"type\":\"result\",\"result\":\"ok\",\"session_id\":\"b\"}\n");
	assert_string_equal(o.session_id, "b");
	/* not events that name a session: a tool's output, plain text, an
	 * unknown event type, a nested object */
	parse_str(&o,
	    "{\"session_id\":\"raw\"}\n"
	    "session_id: \"text\"\n"
	    "{\"type\":\"tool_result\",\"session_id\":\"tool\"}\n"
	    "{\"type\":\"user\",\"message\":{\"session_id\":\"nested\"}}\n");
	assert_string_equal(o.session_id, "");
	/* cleaned of controls and escapes, trimmed */
	parse_str(&o,
	    "{\"type\":\"init\",\"session_id\":\" \\u001b[31mab\\u0007c\\n "
	    "\"}\n");
	assert_string_equal(o.session_id, "abc");
	/* one that does not fit, or is empty, or not a string, is not kept,
	 * and leaves the older one */
	memset(big, 'x', sizeof(big));
	snprintf(big, sizeof(big),
	    "{\"type\":\"init\",\"session_id\":\"good\"}\n"
	    "{\"type\":\"result\",\"session_id\":\"%0*d\"}\n"
	    "{\"type\":\"result\",\"session_id\":\"\"}\n"
	    "{\"type\":\"result\",\"session_id\":7}\n",
	    AGENTOUT_SESSION_MAX, 0);
	parse_str(&o, big);
	assert_string_equal(o.session_id, "good");
	/* the longest that fits */
	snprintf(big, sizeof(big),
	    "{\"type\":\"thread.started\",\"thread_id\":\"%0*d\"}\n",
	    AGENTOUT_SESSION_MAX - 1, 0);
	parse_str(&o, big);
	assert_int_equal(strlen(o.session_id), AGENTOUT_SESSION_MAX - 1);
}

/* every file in the three fixture directories, and every prefix and
 * suffix cut of them, parses without tripping the invariants */
static void
test_fixture_cuts(void **state)
{
	static const char *const dirs[] = {"agents", "agents/real", "agentout"};
	struct agent_output o;
	char path[4096], *buf;
	struct dirent *de;
	size_t d, len, k, step;
	DIR *dir;
	int nfiles = 0, per_dir[3] = {0, 0, 0};

	(void)state;
	for (d = 0; d < sizeof(dirs) / sizeof(dirs[0]); d++) {
		fixture_path(path, sizeof(path), dirs[d], NULL);
		dir = opendir(path);
		assert_non_null(dir);
		while ((de = readdir(dir)) != NULL) {
			struct stat sb;
			char file[4200];
			if (de->d_name[0] == '.')
				continue;
			/* agents/real is a directory of its own (in dirs) */
			snprintf(file, sizeof(file), "%s/%s", path, de->d_name);
			if (stat(file, &sb) != 0 || !S_ISREG(sb.st_mode))
				continue;
			buf = fxfs_fixture_read(dirs[d], de->d_name, &len);
			step = len / 97 + 1;
			for (k = 0; k < len; k += step) {
				agentout_parse(&o, buf + k, len - k);
				assert_sane(&o);
				agentout_parse(&o, buf, k);
				assert_sane(&o);
			}
			free(buf);
			nfiles++;
			per_dir[d]++;
		}
		closedir(dir);
	}
	/* each directory was read: a loop bound that skips one (it once
	 * read two of the three) fails here */
	for (d = 0; d < 3; d++)
		assert_true(per_dir[d] >= 5);
	assert_true(nfiles >= 18 + 5);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_claude_stream_json),
	    cmocka_unit_test(test_claude_json_single),
	    cmocka_unit_test(test_claude_old_cost_usd),
	    cmocka_unit_test(test_last_result_wins),
	    cmocka_unit_test(test_claude_json_verbose_array),
	    cmocka_unit_test(test_claude_assistant_without_result),
	    cmocka_unit_test(test_codex_agent_message),
	    cmocka_unit_test(test_codex_turn_failed_and_legacy),
	    cmocka_unit_test(test_gemini_stream_json),
	    cmocka_unit_test(test_gemini_error_result),
	    cmocka_unit_test(test_gemini_json_pretty),
	    cmocka_unit_test(test_aider_cost),
	    cmocka_unit_test(test_plain_text_ansi_stripped),
	    cmocka_unit_test(test_plain_text_bounded),
	    cmocka_unit_test(test_plain_huge_line),
	    cmocka_unit_test(test_truncated_first_line),
	    cmocka_unit_test(test_invalid_utf8_and_nul),
	    cmocka_unit_test(test_empty_input),
	    cmocka_unit_test(test_result_text_truncated),
	    cmocka_unit_test(test_garbage_json),
	    cmocka_unit_test(test_real_cli_fixtures),
	    cmocka_unit_test(test_fixture_cuts),
	    cmocka_unit_test(test_session_id_real),
	    cmocka_unit_test(test_session_id_shapes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
