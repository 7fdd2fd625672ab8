/* test_deadend.c - an attempt that cannot succeed, seen in its output
 * (strategies/deadend.c, docs/classification.md#dead-ends): what the
 * real CLIs print with their API down (captured fixtures) ends as a
 * network dead end after network_stall_s of it and not before; any
 * other output in between starts the count again; a wait announced by
 * the latest line is handed to the caller. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "tests/unit/fixture_fs.h"

#include "strategies/deadend.h"

#define STALL_MS 120000

static enum deadend_kind
look(struct deadend_state *st, const char *t, size_t len, int64_t now)
{
	struct deadend_in in = {t, len, now, STALL_MS};
	struct deadend_out out;

	deadend_look(&out, st, &in);
	return out.kind;
}

/* codex 0.169.0 and gemini 0.61.0 with the API refusing connections
 * (both hang: codex reconnects for ever, gemini retries with a stack
 * trace under each failure) */
static void
test_offline_fixtures(void **state)
{
	static const char *const names[] = {
	    "codex-refused.txt", "gemini-refused.txt"};
	size_t i, len;

	(void)state;
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		struct deadend_state st = {0};
		char *t = fxfs_fixture_read("agents/real", names[i], &len);

		if (look(&st, t, len, 1000) != DEADEND_NONE ||
		    look(&st, t, len, 1000 + STALL_MS - 1) != DEADEND_NONE)
			fail_msg("%s: ended before network_stall_s", names[i]);
		if (look(&st, t, len, 1000 + STALL_MS) != DEADEND_NETWORK)
			fail_msg(
			    "%s: not ended after network_stall_s", names[i]);
		free(t);
	}
}

/* Output other than the failure (the CLI got through and works on)
 * starts the count again; so does a tail that is all noise. */
static void
test_recovery_resets(void **state)
{
	struct deadend_state st = {0};
	const char *off = "Reconnecting... waiting for network\n";
	const char *back = "Reconnecting... waiting for network\n"
			   "Editing src/main.c\n";
	const char *frames =
	    "fetch failed\n    at async f (file:///x.js:1:2)\n\n";

	(void)state;
	assert_int_equal(look(&st, off, strlen(off), 0), DEADEND_NONE);
	assert_int_equal(
	    look(&st, back, strlen(back), STALL_MS / 2), DEADEND_NONE);
	assert_int_equal(look(&st, off, strlen(off), STALL_MS), DEADEND_NONE);
	assert_int_equal(
	    look(&st, off, strlen(off), 2 * STALL_MS), DEADEND_NETWORK);
	/* stack frames and blank lines are not the CLI getting through */
	st.offline = false;
	assert_int_equal(look(&st, frames, strlen(frames), 0), DEADEND_NONE);
	assert_int_equal(
	    look(&st, frames, strlen(frames), STALL_MS), DEADEND_NETWORK);
	/* 0 turns it off */
	{
		struct deadend_in in = {off, strlen(off), 10 * STALL_MS, 0};
		struct deadend_out out;

		st.offline = true;
		st.offline_since_ms = 1;
		deadend_look(&out, &st, &in);
		assert_int_equal(out.kind, DEADEND_NONE);
	}
	assert_int_equal(look(&st, "", 0, 0), DEADEND_NONE);
	assert_false(st.offline);
}

/* The latest line's announced wait goes to the caller: gemini's own
 * retry delay loses to the API's reset on the same line. */
static void
test_announced_wait(void **state)
{
	struct deadend_state st = {0};
	struct deadend_in in = {NULL, 0, 0, STALL_MS};
	struct deadend_out out;
	const char *t =
	    "Attempt 1 failed: You have exhausted your capacity on this "
	    "model.\nYour quota will reset after 8h44m7s.. Retrying after "
	    "35606439ms...\n";

	(void)state;
	in.tail = t;
	in.len = strlen(t);
	deadend_look(&out, &st, &in);
	assert_int_equal(out.kind, DEADEND_ANNOUNCED);
	assert_int_equal(out.hint.kind, WAITHINT_DELAY);
	assert_int_equal(out.hint.delay_ms, (8 * 3600 + 44 * 60 + 7) * 1000LL);
	/* gemini's stderr chatter while it sleeps (seen in CI: the
	 * announcement was no longer the latest line) does not hide it */
	in.tail = "Suggested retry after 60s.. Retrying after 68262ms...\n"
		  "[STARTUP] Cannot measure phase 'cleanup_ops': start mark "
		  "not found\n";
	in.len = strlen(in.tail);
	deadend_look(&out, &st, &in);
	assert_int_equal(out.kind, DEADEND_ANNOUNCED);
	assert_int_equal(out.hint.delay_ms, 60000);
	/* a structured event after it (the CLI went on) makes it old news */
	in.tail = "Retrying after 35606439ms...\n{\"type\":\"message\"}\n";
	in.len = strlen(in.tail);
	deadend_look(&out, &st, &in);
	assert_int_equal(out.kind, DEADEND_NONE);
	/* and so do more lines than a CLI's chatter */
	in.tail = "Retrying after 35606439ms...\na\nb\nc\n";
	in.len = strlen(in.tail);
	deadend_look(&out, &st, &in);
	assert_int_equal(out.kind, DEADEND_NONE);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_offline_fixtures),
	    cmocka_unit_test(test_recovery_resets),
	    cmocka_unit_test(test_announced_wait),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
