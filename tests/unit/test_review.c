/*
 * test_review.c - review_parse() verdicts and reasons, review_tally()
 * consensus, review_reasons() format and bounds, the default prompt.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "strategies/review.h"
#include "tests/fuzz/fuzz_utf8.h"

#define ELL "\xe2\x80\xa6"

/* ---- helpers ---- */

static void
parse_str(struct review_vote *v, const char *s)
{
	review_parse(v, s, strlen(s));
}

/* what every reason keeps, whatever the input */
static void
assert_sane_text(const char *s, size_t cap)
{
	size_t n = strnlen(s, cap);

	assert_true(n < cap);
	assert_true(fuzz_clean_utf8(s));
}

static void
assert_sane(const struct review_vote *v)
{
	assert_true(v->verdict == REVIEW_NONE || v->verdict == REVIEW_APPROVE ||
	    v->verdict == REVIEW_REJECT);
	assert_sane_text(v->reason, REVIEW_REASON_MAX);
	if (v->verdict == REVIEW_NONE)
		assert_string_equal(v->reason, "");
}

/* ---- verdicts ---- */

struct vcase {
	const char *name;
	const char *text;
	enum review_verdict want;
};

static const struct vcase vcases[] = {
    {"approve", "Looks good.\nVERDICT: APPROVE\n", REVIEW_APPROVE},
    {"approved", "VERDICT: APPROVED", REVIEW_APPROVE},
    {"reject", "Missing tests.\nVERDICT: REJECT\n", REVIEW_REJECT},
    {"rejected", "VERDICT: Rejected.", REVIEW_REJECT},
    {"lowercase", "verdict: approve\n", REVIEW_APPROVE},
    {"mixed case", "Verdict: Approve\n", REVIEW_APPROVE},
    {"bold keyword", "**VERDICT:** APPROVE\n", REVIEW_APPROVE},
    {"bold keyword colon outside", "**Verdict**: **approve**\n",
	REVIEW_APPROVE},
    {"bold reject", "**VERDICT:** REJECT\n", REVIEW_REJECT},
    {"blockquote", "> VERDICT: APPROVE\n", REVIEW_APPROVE},
    {"heading", "## VERDICT: APPROVE", REVIEW_APPROVE},
    {"bullet", "- VERDICT: APPROVE", REVIEW_APPROVE},
    {"code span", "`VERDICT: APPROVE`", REVIEW_APPROVE},
    {"indented", "   \tVERDICT: APPROVE", REVIEW_APPROVE},
    {"no space after colon", "VERDICT:APPROVE", REVIEW_APPROVE},
    {"trailing punctuation", "VERDICT: APPROVE.", REVIEW_APPROVE},
    {"trailing emoji", "VERDICT: APPROVE \xe2\x9c\x85", REVIEW_APPROVE},
    {"crlf", "ok\r\nVERDICT: APPROVE\r\n", REVIEW_APPROVE},
    {"bare cr overwrite", "thinking...\rVERDICT: APPROVE", REVIEW_APPROVE},
    {"ansi colour", "\x1b[1;32mVERDICT:\x1b[0m APPROVE\x1b[0m\n",
	REVIEW_APPROVE},
    {"last wins reject",
	"VERDICT: APPROVE\nwait, the test fails\n"
	"VERDICT: REJECT\n",
	REVIEW_REJECT},
    {"last wins approve",
	"VERDICT: REJECT\nre-checked: fixed\n"
	"VERDICT: APPROVE\n",
	REVIEW_APPROVE},
    {"verdict then chatter", "VERDICT: APPROVE\nTokens: 12k sent\n",
	REVIEW_APPROVE},
    {"echoed choice", "VERDICT: APPROVE or REJECT", REVIEW_REJECT},
    {"echoed slash", "VERDICT: APPROVE/REJECT", REVIEW_REJECT},
    {"approve with changes", "VERDICT: APPROVE with changes", REVIEW_REJECT},
    {"approve underscore", "VERDICT: APPROVE_WITH_CHANGES", REVIEW_REJECT},
    {"not approve", "VERDICT: NOT APPROVED", REVIEW_REJECT},
    {"other word", "VERDICT: needs work", REVIEW_REJECT},
    {"empty verdict", "VERDICT:", REVIEW_REJECT},
    {"approves", "VERDICT: APPROVES", REVIEW_REJECT},
    {"mid line", "The VERDICT: APPROVE is what I would say", REVIEW_NONE},
    {"mid line after text", "so VERDICT: APPROVE", REVIEW_NONE},
    {"no colon", "VERDICT APPROVE", REVIEW_NONE},
    {"verdicts", "VERDICTS: APPROVE", REVIEW_NONE},
    {"no verdict", "I looked at it.\nAll good!\n", REVIEW_NONE},
    {"empty", "", REVIEW_NONE},
    {"json line not text", "{\"note\":\"VERDICT: APPROVE\"}", REVIEW_NONE},
};

/* run the cases that should give want */
static void
run_vcases(enum review_verdict want)
{
	struct review_vote v;
	size_t i, ran = 0;

	for (i = 0; i < sizeof(vcases) / sizeof(vcases[0]); i++) {
		if (vcases[i].want != want)
			continue;
		review_parse(&v, vcases[i].text, strlen(vcases[i].text));
		if (v.verdict != want)
			fail_msg("%s: verdict %d, want %d", vcases[i].name,
			    (int)v.verdict, (int)want);
		assert_sane(&v);
		ran++;
	}
	assert_true(ran > 5);
}

static void
test_verdict_approve(void **state)
{
	run_vcases(REVIEW_APPROVE);
}

static void
test_verdict_reject(void **state)
{
	run_vcases(REVIEW_REJECT);
}

static void
test_verdict_none(void **state)
{
	struct review_vote v;

	run_vcases(REVIEW_NONE);
	review_parse(&v, NULL, 0);
	assert_int_equal(v.verdict, REVIEW_NONE);
	assert_string_equal(v.reason, "");
}

static void
test_last_verdict_wins(void **state)
{
	struct review_vote v;

	parse_str(&v, "VERDICT: APPROVE\nVERDICT: REJECT\n");
	assert_int_equal(v.verdict, REVIEW_REJECT);
	parse_str(&v, "VERDICT: REJECT\nVERDICT: APPROVE\n");
	assert_int_equal(v.verdict, REVIEW_APPROVE);
	/* a later line that is no verdict does not undo one */
	parse_str(&v, "VERDICT: REJECT\nThe VERDICT: APPROVE is wrong\n");
	assert_int_equal(v.verdict, REVIEW_REJECT);
}

static const char claude_stream[] =
    "{\"type\":\"system\",\"subtype\":\"init\",\"session_id\":\"s1\"}\n"
    "{\"type\":\"assistant\",\"message\":{\"content\":[{\"type\":\"text\","
    "\"text\":\"Reviewing.\"}]}}\n"
    "{\"type\":\"user\",\"message\":{\"content\":[{\"type\":"
    "\"tool_result\",\"content\":\"VERDICT: APPROVE\"}]}}\n"
    "{\"type\":\"result\",\"subtype\":\"success\",\"is_error\":false,"
    "\"result\":\"## Review\\n\\n- AC 1 is met.\\n- AC 2: no test for the "
    "empty input.\\n\\n**VERDICT:** REJECT\",\"total_cost_usd\":0.12}\n";

static void
test_stream_json_result(void **state)
{
	struct review_vote v;

	parse_str(&v, claude_stream);
	assert_int_equal(v.verdict, REVIEW_REJECT);
	/* the reason is the result text's own lines, not the events */
	assert_string_equal(v.reason,
	    "## Review\n- AC 1 is met.\n- AC 2: no test for the empty input.");

	parse_str(&v,
	    "{\"type\":\"result\",\"result\":\"Fine.\\n"
	    "VERDICT: APPROVE\"}\r\n");
	assert_int_equal(v.verdict, REVIEW_APPROVE);
	assert_string_equal(v.reason, "Fine.");

	/* codex exec --json */
	parse_str(&v,
	    "{\"type\":\"item.completed\",\"item\":{\"id\":\"i1\","
	    "\"type\":\"agent_message\",\"text\":\"ok\\nVERDICT: "
	    "APPROVE\"}}\n{\"type\":\"turn.completed\"}\n");
	assert_int_equal(v.verdict, REVIEW_APPROVE);
	/* a reasoning item is not the answer */
	parse_str(&v,
	    "{\"type\":\"item.completed\",\"item\":{\"type\":"
	    "\"reasoning\",\"text\":\"VERDICT: APPROVE\"}}\n");
	assert_int_equal(v.verdict, REVIEW_NONE);
}

static void
test_order_across_json_and_text(void **state)
{
	struct review_vote v;

	parse_str(&v,
	    "VERDICT: REJECT\n"
	    "{\"type\":\"result\",\"result\":\"VERDICT: APPROVE\"}\n");
	assert_int_equal(v.verdict, REVIEW_APPROVE);
	parse_str(&v,
	    "{\"type\":\"result\",\"result\":\"VERDICT: APPROVE\"}\n"
	    "VERDICT: REJECT\n");
	assert_int_equal(v.verdict, REVIEW_REJECT);
	/* broken or hostile JSON lines are skipped, not fatal */
	parse_str(&v,
	    "{\"type\":\"result\",\"result\":\"VERDICT: APPR\n"
	    "{\"result\": 5}\n{[[[\n"
	    "VERDICT: REJECT\n");
	assert_int_equal(v.verdict, REVIEW_REJECT);
}

static void
test_reason_lines(void **state)
{
	struct review_vote v;
	char buf[4096];
	size_t i, o = 0;

	parse_str(&v,
	    "preamble\n"
	    "  \x1b[31mAC 2 fails:\x1b[0m the parser rejects \"\"  \n"
	    "\n"
	    "\t\n"
	    "   tests missing for AC 3\r\n"
	    "VERDICT: REJECT\n"
	    "trailing noise\n");
	assert_int_equal(v.verdict, REVIEW_REJECT);
	assert_string_equal(v.reason,
	    "preamble\nAC 2 fails: the parser "
	    "rejects \"\"\ntests missing for AC 3");

	/* at most REVIEW_REASON_LINES lines: the ones nearest the verdict */
	for (i = 1; i <= 20; i++)
		o +=
		    (size_t)snprintf(buf + o, sizeof(buf) - o, "line %zu\n", i);
	snprintf(buf + o, sizeof(buf) - o, "VERDICT: REJECT\n");
	parse_str(&v, buf);
	assert_int_equal(REVIEW_REASON_LINES, 12);
	assert_string_equal(v.reason,
	    "line 9\nline 10\nline 11\nline 12\n"
	    "line 13\nline 14\nline 15\nline 16\n"
	    "line 17\nline 18\nline 19\nline 20");

	/* a verdict line that says more is kept as the last reason line */
	parse_str(&v, "nits only\nVERDICT: REJECT - no test for AC 2\n");
	assert_int_equal(v.verdict, REVIEW_REJECT);
	assert_string_equal(
	    v.reason, "nits only\nVERDICT: REJECT - no test for AC 2");

	/* nothing before the verdict, and no verdict at all */
	parse_str(&v, "VERDICT: REJECT");
	assert_string_equal(v.reason, "");
	parse_str(&v, "a review without a verdict\n");
	assert_int_equal(v.verdict, REVIEW_NONE);
	assert_string_equal(v.reason, "");
}

static void
test_reason_bounded_utf8(void **state)
{
	struct review_vote v;
	static char buf[16384];
	size_t o = 0, i, n;

	/* 12 lines of 300 bytes of 3-byte characters, offset by one byte so
	 * that a byte cut would fall inside a character */
	for (i = 0; i < 12; i++) {
		buf[o++] = 'x';
		for (n = 0; n < 100; n++) {
			memcpy(buf + o, "\xe2\x82\xac", 3); /* euro sign */
			o += 3;
		}
		buf[o++] = '\n';
	}
	memcpy(buf + o, "the last reason\nVERDICT: REJECT\n", 32);
	o += 32;
	review_parse(&v, buf, o);
	assert_int_equal(v.verdict, REVIEW_REJECT);
	assert_sane(&v);
	n = strlen(v.reason);
	assert_true(n <= REVIEW_REASON_MAX - 1);
	assert_true(n >= REVIEW_REASON_MAX - 1 - 3 - 3);
	assert_memory_equal(v.reason, ELL, 3);
	assert_string_equal(v.reason + n - 15, "the last reason");

	/* one line far longer than any buffer */
	o = 0;
	for (i = 0; i < 3000; i++) {
		memcpy(buf + o, "\xc3\xa9", 2);
		o += 2;
	}
	memcpy(buf + o, "\nVERDICT: REJECT", 16);
	o += 16;
	review_parse(&v, buf, o);
	assert_int_equal(v.verdict, REVIEW_REJECT);
	assert_sane(&v);
	assert_memory_equal(v.reason, ELL, 3);
}

static void
test_hostile_input(void **state)
{
	struct review_vote v;
	static char buf[65536];
	static const char nasty[] =
	    "\0\xff\xfe\xc0\xaf\xed\xa0\x80\x1b]0;title\x07\x1b[2J"
	    "\x1b[?25l\x9b\xc2\x9b junk \x1bP dcs \x1b\\ \x7f\n"
	    "VER\0DICT: APPROVE\n\xe2\x82\n{\"result\":\"\\u0000\"}\n";
	static const char nul_line[] = "x\n\0VERDICT: REJECT";
	uint32_t seed = 12345;
	size_t i, o;

	review_parse(&v, nasty, sizeof(nasty) - 1);
	/* a NUL vanishes as it would on a terminal */
	assert_int_equal(v.verdict, REVIEW_APPROVE);
	assert_sane(&v);
	review_parse(&v, nul_line, sizeof(nul_line) - 1);
	assert_int_equal(v.verdict, REVIEW_REJECT);
	assert_string_equal(v.reason, "x");

	/* an escape sequence cut off by the end of the input */
	parse_str(&v, "VERDICT: REJECT\n\x1b[");
	assert_int_equal(v.verdict, REVIEW_REJECT);
	parse_str(&v, "VERDICT: REJECT\n\x1b");
	assert_int_equal(v.verdict, REVIEW_REJECT);

	/* a verdict line too long to see whole does not approve */
	memcpy(buf, "VERDICT: APPROVE", 16);
	memset(buf + 16, ' ', 8000);
	memcpy(buf + 8016, "or maybe not", 12);
	review_parse(&v, buf, 8028);
	assert_int_equal(v.verdict, REVIEW_REJECT);
	assert_sane(&v);

	/* deeply nested JSON is skipped unread */
	o = 0;
	for (i = 0; i < 20000; i++)
		buf[o++] = '[';
	buf[0] = '{';
	buf[o++] = '\n';
	memcpy(buf + o, "VERDICT: APPROVE", 16);
	o += 16;
	review_parse(&v, buf, o);
	assert_int_equal(v.verdict, REVIEW_APPROVE);

	/* random bytes, biased towards the interesting ones */
	for (i = 0; i < 200; i++) {
		for (o = 0; o < 4096; o++) {
			seed = seed * 1103515245u + 12345u;
			switch ((seed >> 16) % 8) {
			case 0:
				buf[o] = '\n';
				break;
			case 1:
				buf[o] = "VERDICT: APPROVE"[(seed >> 8) % 16];
				break;
			case 2:
				buf[o] = (char)0x1b;
				break;
			default:
				buf[o] = (char)(seed >> 24);
			}
		}
		review_parse(&v, buf, o);
		assert_sane(&v);
	}
}

/* ---- tally ---- */

struct tcase {
	const char *name;
	const char *votes; /* A approve, R reject, N none */
	int quorum;
	int approve, total;
	int pass, degraded;
	const char *consensus;
};

static const struct tcase tcases[] = {
    {"consensus full 3/3", "AAA", 2, 3, 3, 1, 0, "3/3"},
    {"consensus degraded 2/3", "ARA", 2, 2, 3, 1, 1, "2/3"},
    {"consensus failed reviewer degraded", "AAN", 2, 2, 3, 1, 1, "2/3"},
    {"consensus 1/3 fails", "RAN", 2, 1, 3, 0, 0, "1/3"},
    {"consensus 0/3 fails", "RRN", 2, 0, 3, 0, 0, "0/3"},
    {"consensus five quorum 3", "ARANA", 3, 3, 5, 1, 1, "3/5"},
    {"consensus full ignores quorum", "AAAA", 2, 4, 4, 1, 0, "4/4"},
    {"quorum 3 needs all", "AAR", 3, 2, 3, 0, 0, "2/3"},
    {"quorum above n clamped", "AAR", 9, 2, 3, 0, 0, "2/3"},
    {"quorum above n full", "AAA", 9, 3, 3, 1, 0, "3/3"},
    {"quorum 0 clamped to 1", "ARR", 0, 1, 3, 1, 1, "1/3"},
    {"quorum negative clamped", "NNA", -5, 1, 3, 1, 1, "1/3"},
    {"quorum 0 nobody", "RRR", 0, 0, 3, 0, 0, "0/3"},
    {"n=1 approve", "A", 1, 1, 1, 1, 0, "1/1"},
    {"n=1 reject", "R", 1, 0, 1, 0, 0, "0/1"},
    {"n=1 none", "N", 0, 0, 1, 0, 0, "0/1"},
    {"n=1 quorum 2 clamped", "A", 2, 1, 1, 1, 0, "1/1"},
};

/* run the cases whose name starts with prefix */
static void
run_tcases(const char *prefix)
{
	struct review_vote votes[8];
	struct review_tally t;
	size_t i, j, n, ran = 0;

	for (i = 0; i < sizeof(tcases) / sizeof(tcases[0]); i++) {
		if (strncmp(tcases[i].name, prefix, strlen(prefix)) != 0)
			continue;
		n = strlen(tcases[i].votes);
		memset(votes, 0, sizeof(votes));
		for (j = 0; j < n; j++)
			votes[j].verdict = tcases[i].votes[j] == 'A'
			    ? REVIEW_APPROVE
			    : tcases[i].votes[j] == 'R' ? REVIEW_REJECT
							: REVIEW_NONE;
		review_tally(&t, votes, n, tcases[i].quorum);
		if (t.approve != tcases[i].approve ||
		    t.total != tcases[i].total ||
		    (int)t.pass != tcases[i].pass ||
		    (int)t.degraded != tcases[i].degraded ||
		    strcmp(t.consensus, tcases[i].consensus) != 0)
			fail_msg("%s: %d/%d pass %d degraded %d \"%s\"",
			    tcases[i].name, t.approve, t.total, (int)t.pass,
			    (int)t.degraded, t.consensus);
		ran++;
	}
	assert_true(ran >= 3);
}

static void
test_tally_consensus(void **state)
{
	run_tcases("consensus ");
}

static void
test_tally_quorum_clamped(void **state)
{
	run_tcases("quorum ");
}

static void
test_tally_single(void **state)
{
	struct review_tally t;

	run_tcases("n=1 ");
	review_tally(&t, NULL, 0, 1);
	assert_false(t.pass);
	assert_int_equal(t.total, 0);
	assert_string_equal(t.consensus, "0/0");
}

/* ---- reasons for the next prompt ---- */

static void
test_reasons_format(void **state)
{
	struct review_vote v[4];
	const char *names[4] = {"claude", NULL, "", "ge\x1b[1mmini\n"};
	char out[1024];

	memset(v, 0, sizeof(v));
	v[0].verdict = REVIEW_APPROVE;
	strcpy(v[0].reason, "all good");
	v[1].verdict = REVIEW_REJECT;
	strcpy(v[1].reason, "AC 2 not met\nno tests");
	v[2].verdict = REVIEW_NONE;
	v[3].verdict = REVIEW_REJECT;

	review_reasons(out, sizeof(out), v, NULL, 4);
	assert_string_equal(out,
	    "reviewer 2 (REJECT): AC 2 not met\n"
	    "  no tests\n"
	    "reviewer 3 (no verdict)\n"
	    "reviewer 4 (REJECT)");
	review_reasons(out, sizeof(out), v, names, 4);
	assert_string_equal(out,
	    "reviewer 2 (REJECT): AC 2 not met\n"
	    "  no tests\n"
	    "reviewer 3 (no verdict)\n"
	    "gemini (REJECT)");
	names[1] = "codex";
	review_reasons(out, sizeof(out), v, names, 2);
	assert_string_equal(out, "codex (REJECT): AC 2 not met\n  no tests");

	/* everyone approved: nothing to say */
	review_reasons(out, sizeof(out), v, names, 1);
	assert_string_equal(out, "");

	/* parse then explain, end to end */
	parse_str(&v[1], "Tests fail on empty input.\nVERDICT: REJECT\n");
	review_reasons(out, sizeof(out), v, NULL, 2);
	assert_string_equal(
	    out, "reviewer 2 (REJECT): Tests fail on empty input.");
}

static void
test_reasons_bounded(void **state)
{
	struct review_vote v[3];
	char out[256], big[2048];
	size_t i, n;

	memset(v, 0, sizeof(v));
	for (i = 0; i < 3; i++) {
		v[i].verdict = REVIEW_REJECT;
		/* 2-byte characters, so a byte cut could split one */
		memset(v[i].reason, 0, sizeof(v[i].reason));
		for (n = 0; n + 2 < REVIEW_REASON_MAX - 40; n += 2)
			memcpy(v[i].reason + n, "\xc3\xa9", 2);
		snprintf(v[i].reason + n, REVIEW_REASON_MAX - n, "\nend of %zu",
		    i + 1);
	}
	review_reasons(out, sizeof(out), v, NULL, 3);
	n = strlen(out);
	assert_true(n <= sizeof(out) - 1);
	assert_true(n >= sizeof(out) - 1 - 12);
	assert_sane_text(out, sizeof(out));
	/* shared fairly: every reviewer keeps its label and its reason's
	 * end */
	assert_non_null(strstr(out, "reviewer 1 (REJECT): " ELL));
	assert_non_null(strstr(out, "end of 1\nreviewer 2 (REJECT): " ELL));
	assert_non_null(strstr(out, "end of 2\nreviewer 3 (REJECT): " ELL));
	assert_string_equal(out + n - 8, "end of 3");

	/* a short reason is kept whole while a long one is cut */
	strcpy(v[0].reason, "short");
	review_reasons(out, sizeof(out), v, NULL, 2);
	assert_sane_text(out, sizeof(out));
	assert_memory_equal(out, "reviewer 1 (REJECT): short\n", 27);
	assert_string_equal(out + strlen(out) - 8, "end of 2");

	/* every size, including too small for the labels */
	for (i = 1; i < sizeof(big); i += 7) {
		memset(big, 'Z', sizeof(big));
		review_reasons(big, i, v, NULL, 3);
		assert_true(strlen(big) < i);
		assert_sane_text(big, i);
		assert_int_equal(big[i], 'Z');
	}
	review_reasons(big, sizeof(big), v, NULL, 3);
	assert_sane_text(big, sizeof(big));

	/* len 0 writes nothing */
	big[0] = 'Z';
	review_reasons(big, 0, v, NULL, 3);
	assert_int_equal(big[0], 'Z');
}

/* ---- the default prompt ---- */

static void
test_default_prompt(void **state)
{
	static const char *known[] = {"prompt", "story_file", "story_id",
	    "attempt", "max_attempts", "role", "stalled_task", "repo"};
	const char *p = review_default_prompt, *e;
	struct review_vote v;
	size_t i, k;
	int found;

	/* a reviewer that echoes its prompt and dies has no verdict */
	parse_str(&v, p);
	assert_int_equal(v.verdict, REVIEW_NONE);
	assert_non_null(strstr(p, "VERDICT: APPROVE"));
	assert_non_null(strstr(p, "VERDICT: REJECT"));
	assert_non_null(strstr(p, "{story_file}"));
	assert_non_null(strstr(p, "{story_id}"));
	assert_non_null(strstr(p, "acceptance criteri"));
	assert_non_null(strstr(p, "destructive"));
	/* every brace is a placeholder argv_expand() knows, or doubled */
	for (i = 0; p[i] != '\0'; i++) {
		if (p[i] == '}') {
			assert_int_equal(p[i + 1], '}');
			i++;
			continue;
		}
		if (p[i] != '{')
			continue;
		if (p[i + 1] == '{') {
			i++;
			continue;
		}
		e = strchr(p + i, '}');
		assert_non_null(e);
		found = 0;
		for (k = 0; k < sizeof(known) / sizeof(known[0]); k++)
			if ((size_t)(e - p - i - 1) == strlen(known[k]) &&
			    strncmp(p + i + 1, known[k], strlen(known[k])) == 0)
				found = 1;
		if (!found)
			fail_msg("unknown placeholder at %zu", i);
		i = (size_t)(e - p);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_verdict_approve),
	    cmocka_unit_test(test_verdict_reject),
	    cmocka_unit_test(test_verdict_none),
	    cmocka_unit_test(test_last_verdict_wins),
	    cmocka_unit_test(test_stream_json_result),
	    cmocka_unit_test(test_order_across_json_and_text),
	    cmocka_unit_test(test_reason_lines),
	    cmocka_unit_test(test_reason_bounded_utf8),
	    cmocka_unit_test(test_hostile_input),
	    cmocka_unit_test(test_tally_consensus),
	    cmocka_unit_test(test_tally_quorum_clamped),
	    cmocka_unit_test(test_tally_single),
	    cmocka_unit_test(test_reasons_format),
	    cmocka_unit_test(test_reasons_bounded),
	    cmocka_unit_test(test_default_prompt),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
