/* test_waithint.c - waithint_parse on real agent messages. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "strategies/waithint.h"

struct wcase {
	const char *name;
	const char *text;
	enum waithint_kind kind;
	int64_t delay_ms; /* DELAY */
	int64_t epoch_s; /* EPOCH */
	int hour, minute; /* CLOCK */
	const char *zone; /* CLOCK */
	int month, day; /* CLOCK */
};

static const struct wcase cases[] = {
    {"retry-after header", "HTTP/1.1 429\r\nRetry-After: 30\r\n",
	WAITHINT_DELAY, 30000, 0, 0, 0, NULL, 0, 0},
    {"retry-after json header", "{\"retry-after\": \"12\"}", WAITHINT_DELAY,
	12000, 0, 0, 0, NULL, 0, 0},
    {"retry-after http-date skipped",
	"Retry-After: Wed, 21 Oct 2015 07:28:00 GMT", WAITHINT_NONE, 0, 0, 0, 0,
	NULL, 0, 0},
    {"gemini please retry in",
	"* Quota exceeded for metric: generativelanguage.googleapis.com/"
	"generate_content_paid_tier_input_token_count, limit: 4000000\n"
	"Please retry in 4.53s.",
	WAITHINT_DELAY, 4530, 0, 0, 0, NULL, 0, 0},
    {"retry in ms", "rate limited, retry in 123ms", WAITHINT_DELAY, 123, 0, 0,
	0, NULL, 0, 0},
    {"retry after n seconds", "Too many requests: retry after 20 seconds",
	WAITHINT_DELAY, 20000, 0, 0, 0, NULL, 0, 0},
    {"retryDelay protobuf",
	"{\"@type\":\"type.googleapis.com/google.rpc.RetryInfo\","
	"\"retryDelay\":\"38.601s\"}",
	WAITHINT_DELAY, 38601, 0, 0, 0, NULL, 0, 0},
    {"codex try again in days hours minutes",
	"You've hit your usage limit. Try again in 2 days 3 hours "
	"20 minutes.",
	WAITHINT_DELAY, ((2 * 24 + 3) * 60 + 20) * 60000LL, 0, 0, 0, NULL, 0,
	0},
    {"codex wrapped banner",
	"\xe2\x96\xa0 You've hit your usage limit. Upgrade to Pro "
	"(https://openai.com/chatgpt/pricing) or try again in 5 days "
	"22 hours 11\nminutes.",
	WAITHINT_DELAY, ((5 * 24 + 22) * 60 + 11) * 60000LL, 0, 0, 0, NULL, 0,
	0},
    {"try again in minutes", "please try again in 5 minutes", WAITHINT_DELAY,
	300000, 0, 0, 0, NULL, 0, 0},
    {"gemini reset after compact",
	"You have exhausted your capacity on this model. Your quota will "
	"reset after 8h44m7s.",
	WAITHINT_DELAY, (8 * 3600 + 44 * 60 + 7) * 1000LL, 0, 0, 0, NULL, 0, 0},
    /* gemini 0.61.0 prints its own jittered retry after the API's
     * reset: the reset wins, to the second (issue 31) */
    {"gemini reset before its own retry delay",
	"Your quota will reset after 8h44m7s.. Retrying after 35606439ms...",
	WAITHINT_DELAY, (8 * 3600 + 44 * 60 + 7) * 1000LL, 0, 0, 0, NULL, 0, 0},
    {"a CLI's retry before the API's reset: the reset",
	"Retrying in 5 seconds... usage limit: try again in 2 hours",
	WAITHINT_DELAY, 7200000, 0, 0, 0, NULL, 0, 0},
    {"two of a CLI's retries: the last", "retrying in 5s; retrying in 9s",
	WAITHINT_DELAY, 9000, 0, 0, 0, NULL, 0, 0},
    {"claude retrying in seconds",
	"API Error (Connection error.) \xc2\xb7 Retrying in 18 "
	"seconds\xe2\x80\xa6 (attempt 6/10)",
	WAITHINT_DELAY, 18000, 0, 0, 0, NULL, 0, 0},
    {"bare seconds", "retry in 30", WAITHINT_DELAY, 30000, 0, 0, 0, NULL, 0, 0},
    {"codex backend resets_in_seconds",
	"{\"error\":{\"type\":\"usage_limit_reached\",\"message\":\"The "
	"usage limit has been reached\",\"resets_in_seconds\":602705}}",
	WAITHINT_DELAY, 602705000LL, 0, 0, 0, NULL, 0, 0},
    {"claude epoch banner", "Claude AI usage limit reached|1718000000",
	WAITHINT_EPOCH, 0, 1718000000, 0, 0, NULL, 0, 0},
    {"claude epoch in ms", "usage limit reached|1718000000123", WAITHINT_EPOCH,
	0, 1718000000, 0, 0, NULL, 0, 0},
    {"codex resets_at", "{\"resets_at\":1775317531}", WAITHINT_EPOCH, 0,
	1775317531, 0, 0, NULL, 0, 0},
    {"claude resets 1am zone",
	"5-hour limit reached \xe2\x88\x99 resets 1am (Europe/Oslo)",
	WAITHINT_CLOCK, 0, 0, 1, 0, "Europe/Oslo", 0, 0},
    {"claude resets 3:30pm zone",
	"You've hit your limit \xc2\xb7 resets 3:30pm (America/New_York)",
	WAITHINT_CLOCK, 0, 0, 15, 30, "America/New_York", 0, 0},
    {"resets 24h clock local", "limit reached, resets 13:00", WAITHINT_CLOCK, 0,
	0, 13, 0, "", 0, 0},
    {"codex try again at", "try again at 3:15 PM.", WAITHINT_CLOCK, 0, 0, 15,
	15, "", 0, 0},
    {"midnight 12am", "resets 12am (UTC)", WAITHINT_CLOCK, 0, 0, 0, 0, "UTC", 0,
	0},
    {"noon 12pm", "resets 12pm", WAITHINT_CLOCK, 0, 0, 12, 0, "", 0, 0},
    {"old claude banner reset at",
	"Claude usage limit reached. Your limit will reset at 5pm "
	"(Europe/Warsaw).",
	WAITHINT_CLOCK, 0, 0, 17, 0, "Europe/Warsaw", 0, 0},
    {"weekly limit with date",
	"You've hit your limit - resets Feb 7, 11am (Asia/Seoul)",
	WAITHINT_CLOCK, 0, 0, 11, 0, "Asia/Seoul", 2, 7},
    {"date with at",
	"You've hit your limit \xc2\xb7 resets Apr 23 at 4pm "
	"(America/Recife)",
	WAITHINT_CLOCK, 0, 0, 16, 0, "America/Recife", 4, 23},
    {"anthropic workspace limit, ISO date in UTC",
	"You have reached your specified workspace API usage limits. You "
	"will regain access on 2025-06-01 at 00:00 UTC.",
	WAITHINT_EPOCH, 0, 1748736000, 0, 0, NULL, 0, 0},
    {"ISO instant with seconds and Z, leap day",
	"resets at 2024-02-29T13:05:09Z", WAITHINT_EPOCH, 0, 1709211909, 0, 0,
	NULL, 0, 0},
    {"ISO date in a named zone", "resets 2026-03-08 02:30 (America/New_York)",
	WAITHINT_CLOCK, 0, 0, 2, 30, "America/New_York", 3, 8},
    {"ISO date without a time is no hint", "regain access on 2025-06-01.",
	WAITHINT_NONE, 0, 0, 0, 0, NULL, 0, 0},
    {"ISO date with a bad month is no hint",
	"regain access on 2025-13-01 at 00:00 UTC", WAITHINT_NONE, 0, 0, 0, 0,
	NULL, 0, 0},
    {"codex dated try again at",
	"Upgrade to Plus to continue using Codex, or try again at Jul 5th, "
	"2026 8:19 PM.",
	WAITHINT_CLOCK, 0, 0, 20, 19, "", 7, 5},
    {"unsafe zone dropped", "resets 1am (../../etc/passwd)", WAITHINT_CLOCK, 0,
	0, 1, 0, "", 0, 0},
    {"absolute zone dropped", "resets 1am (/etc/localtime)", WAITHINT_CLOCK, 0,
	0, 1, 0, "", 0, 0},
    {"last hint wins", "Retrying in 5 seconds\n...\nRetry-After: 60\n",
	WAITHINT_DELAY, 60000, 0, 0, 0, NULL, 0, 0},
    {"last hint wins over clock", "resets 3pm (UTC)\nlater: please retry in 2s",
	WAITHINT_DELAY, 2000, 0, 0, 0, NULL, 0, 0},
    {"not a duration", "we will retry in 5 attempts", WAITHINT_NONE, 0, 0, 0, 0,
	NULL, 0, 0},
    {"not a time", "resets 13 counters", WAITHINT_NONE, 0, 0, 0, 0, NULL, 0, 0},
    {"months are not minutes", "try again in 3 months", WAITHINT_NONE, 0, 0, 0,
	0, NULL, 0, 0},
    {"no keyword", "error at 12:00: connection closed", WAITHINT_NONE, 0, 0, 0,
	0, NULL, 0, 0},
    {"inside a word", "autoretry in 5s", WAITHINT_NONE, 0, 0, 0, 0, NULL, 0, 0},
    {"empty", "", WAITHINT_NONE, 0, 0, 0, 0, NULL, 0, 0},
};

static void
test_table(void **state)
{
	struct waithint h;
	size_t i;
	int rc;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct wcase *c = &cases[i];

		memset(&h, 0x5a, sizeof(h));
		rc = waithint_parse(&h, c->text, strlen(c->text));
		if (h.kind != c->kind ||
		    (c->kind == WAITHINT_DELAY && h.delay_ms != c->delay_ms))
			print_message("case \"%s\": got kind %d delay %lld\n",
			    c->name, (int)h.kind, (long long)h.delay_ms);
		assert_int_equal(rc, c->kind != WAITHINT_NONE);
		assert_int_equal(h.kind, c->kind);
		switch (c->kind) {
		case WAITHINT_DELAY:
			assert_int_equal(h.delay_ms, c->delay_ms);
			break;
		case WAITHINT_EPOCH:
			assert_int_equal(h.epoch_s, c->epoch_s);
			break;
		case WAITHINT_CLOCK:
			assert_int_equal(h.hour, c->hour);
			assert_int_equal(h.minute, c->minute);
			assert_string_equal(h.zone, c->zone);
			assert_int_equal(h.month, c->month);
			assert_int_equal(h.day, c->day);
			break;
		default:
			break;
		}
	}
}

static void
test_null_and_nul_bytes(void **state)
{
	static const char text[] = "junk\0\xff\xfe Please retry in 7s\0tail";
	struct waithint h;

	(void)state;
	assert_int_equal(waithint_parse(&h, NULL, 10), 0);
	assert_int_equal(h.kind, WAITHINT_NONE);
	assert_int_equal(waithint_parse(&h, text, sizeof(text) - 1), 1);
	assert_int_equal(h.kind, WAITHINT_DELAY);
	assert_int_equal(h.delay_ms, 7000);
}

static void
test_length_is_respected(void **state)
{
	static const char text[] = "retry in 5s and later retry in 9s";
	struct waithint h;

	(void)state;
	/* only the first 11 bytes: the second hint is outside */
	assert_int_equal(waithint_parse(&h, text, 11), 1);
	assert_int_equal(h.delay_ms, 5000);
	/* cut inside the number: "retry in 5" is a bare 5 seconds */
	assert_int_equal(waithint_parse(&h, text, 10), 1);
	assert_int_equal(h.delay_ms, 5000);
	assert_int_equal(waithint_parse(&h, text, 8), 0);
}

static void
test_huge_values_clamped(void **state)
{
	static const char text[] = "retry in 999999999999 days";
	struct waithint h;

	(void)state;
	assert_int_equal(waithint_parse(&h, text, strlen(text)), 1);
	assert_true(h.delay_ms > 0);
	assert_true(h.delay_ms <= (int64_t)400 * 24 * 3600 * 1000);
}

static void
test_long_zone_rejected(void **state)
{
	char text[200];
	struct waithint h;

	(void)state;
	memset(text, 'A', sizeof(text));
	memcpy(text, "resets 1am (", 12);
	text[sizeof(text) - 2] = ')';
	text[sizeof(text) - 1] = '\0';
	assert_int_equal(waithint_parse(&h, text, strlen(text)), 1);
	assert_int_equal(h.kind, WAITHINT_CLOCK);
	assert_string_equal(h.zone, "");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_table),
	    cmocka_unit_test(test_null_and_nul_bytes),
	    cmocka_unit_test(test_length_is_respected),
	    cmocka_unit_test(test_huge_values_clamped),
	    cmocka_unit_test(test_long_zone_rejected),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
