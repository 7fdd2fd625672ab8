/* test_tz.c - waithint_resolve against the system time-zone database. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "controller/tz.h"

/* 2026-01-15T22:30:00Z: Oslo is UTC+1 (23:30), New York UTC-5 (17:30) */
#define WINTER_MS (1768516200LL * 1000)
/* 2026-07-15T22:30:00Z: Oslo is UTC+2 (00:30 on the 16th) */
#define SUMMER_MS (1784154600LL * 1000)
/* 2026-03-28T22:30:00Z: Oslo 23:30 CET; clocks go 02:00 -> 03:00 CEST
 * in the coming night */
#define SPRING_MS (1774737000LL * 1000)
#define HOUR_MS (3600LL * 1000)
#define MIN_MS (60LL * 1000)

static struct waithint
clock_hint(int hour, int minute, const char *zone)
{
	struct waithint h;

	memset(&h, 0, sizeof(h));
	h.kind = WAITHINT_CLOCK;
	h.hour = hour;
	h.minute = minute;
	strncpy(h.zone, zone, sizeof(h.zone) - 1);
	return h;
}

static int64_t
resolve_ok(const struct waithint *h, int64_t now_ms)
{
	struct sc_err err;
	int64_t d = -1;

	err_clear(&err);
	assert_int_equal(waithint_resolve(&d, h, now_ms, &err), 0);
	assert_string_equal(err.msg, "");
	return d;
}

struct tcase {
	const char *name;
	int hour, minute, month, day;
	const char *zone;
	int64_t now_ms;
	int64_t want_ms;
};

/* A clock time names a minute: the reset is that minute's end
 * (docs/classification.md#wait-hints), hence the MIN_MS on each. */
static const struct tcase cases[] = {
    {"oslo winter: 23:30 -> 01:00", 1, 0, 0, 0, "Europe/Oslo", WINTER_MS,
	HOUR_MS + 30 * MIN_MS + MIN_MS},
    {"oslo summer: 00:30 -> 01:00", 1, 0, 0, 0, "Europe/Oslo", SUMMER_MS,
	30 * MIN_MS + MIN_MS},
    {"new york: 17:30 -> tomorrow 15:00", 15, 0, 0, 0, "America/New_York",
	WINTER_MS, 21 * HOUR_MS + 30 * MIN_MS + MIN_MS},
    {"new york: 17:30 -> 17:45", 17, 45, 0, 0, "America/New_York", WINTER_MS,
	15 * MIN_MS + MIN_MS},
    {"oslo spring forward: 23:30 CET -> 04:00 CEST", 4, 0, 0, 0, "Europe/Oslo",
	SPRING_MS, 3 * HOUR_MS + 30 * MIN_MS + MIN_MS},
    {"utc: at the start of the named minute: its end", 22, 30, 0, 0, "UTC",
	WINTER_MS, MIN_MS},
    /* issue 31's codex night: "try again at 9:17 AM" met again at
     * 9:17:40 is the same limit, 20 s more, never tomorrow */
    {"utc: 40 s into the named minute: 20 s", 22, 30, 0, 0, "UTC",
	WINTER_MS + 40 * 1000, 20 * 1000},
    {"utc: the named minute has ended: tomorrow", 22, 29, 0, 0, "UTC",
	WINTER_MS, 24 * HOUR_MS},
    {"seoul dated: Feb 7 11:00 KST", 11, 0, 2, 7, "Asia/Seoul", WINTER_MS,
	1913400LL * 1000 + MIN_MS},
    {"dated reset already passed: next year", 0, 0, 1, 1, "UTC", WINTER_MS,
	30245400LL * 1000 + MIN_MS},
};

static void
test_clock_table(void **state)
{
	struct waithint h;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct tcase *c = &cases[i];
		int64_t d;

		h = clock_hint(c->hour, c->minute, c->zone);
		h.month = c->month;
		h.day = c->day;
		d = resolve_ok(&h, c->now_ms);
		if (d != c->want_ms)
			print_message("case \"%s\": got %lld ms\n", c->name,
			    (long long)d);
		assert_int_equal(d, c->want_ms);
	}
}

static void
test_unknown_zone(void **state)
{
	struct waithint h = clock_hint(1, 0, "Mars/Olympus_Mons");
	struct sc_err err;
	int64_t d = 42;

	(void)state;
	err_clear(&err);
	assert_int_equal(waithint_resolve(&d, &h, WINTER_MS, &err), SC_EDATA);
	assert_int_equal(d, 0);
	assert_int_equal(err.code, SC_EDATA);
	assert_non_null(strstr(err.msg, "Mars/Olympus_Mons"));
	/* a directory of the database is not a zone either */
	h = clock_hint(1, 0, "Europe");
	assert_int_equal(waithint_resolve(&d, &h, WINTER_MS, &err), SC_EDATA);
	assert_non_null(strstr(err.msg, "Europe"));
}

static void
test_unsafe_zone(void **state)
{
	static const char *const bad[] = {
	    "../../etc/passwd",
	    "/etc/localtime",
	    "Europe/../UTC",
	    "Europe/Oslo;rm",
	    "Europe Oslo",
	};
	struct waithint h;
	struct sc_err err;
	int64_t d = 42;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		h = clock_hint(1, 0, bad[i]);
		err_clear(&err);
		assert_int_equal(
		    waithint_resolve(&d, &h, WINTER_MS, &err), SC_EDATA);
		assert_int_equal(d, 0);
		assert_non_null(strstr(err.msg, "time zone"));
	}
	/* out-of-range fields */
	h = clock_hint(24, 0, "UTC");
	assert_int_equal(waithint_resolve(&d, &h, WINTER_MS, NULL), SC_EDATA);
}

/* The caller's TZ (set or unset) is the same after the call. */
static void
test_tz_restored(void **state)
{
	struct waithint h = clock_hint(1, 0, "Europe/Oslo");
	struct waithint local = clock_hint(23, 0, "");
	const char *tz;

	(void)state;
	assert_int_equal(setenv("TZ", "America/Chicago", 1), 0);
	tzset();
	(void)resolve_ok(&h, WINTER_MS);
	tz = getenv("TZ");
	assert_non_null(tz);
	assert_string_equal(tz, "America/Chicago");
	/* local time is the caller's zone: Chicago 16:30 -> 23:00 */
	assert_int_equal(
	    resolve_ok(&local, WINTER_MS), 6 * HOUR_MS + 30 * MIN_MS + MIN_MS);

	assert_int_equal(unsetenv("TZ"), 0);
	tzset();
	(void)resolve_ok(&h, WINTER_MS);
	assert_null(getenv("TZ"));

	assert_int_equal(setenv("TZ", "UTC", 1), 0);
	tzset();
	assert_int_equal(resolve_ok(&local, WINTER_MS), 31 * MIN_MS);
	assert_string_equal(getenv("TZ"), "UTC");
	assert_int_equal(unsetenv("TZ"), 0);
	tzset();
}

static void
test_delay_epoch_none(void **state)
{
	struct waithint h;

	(void)state;
	memset(&h, 0, sizeof(h));
	assert_int_equal(resolve_ok(&h, WINTER_MS), 0);

	h.kind = WAITHINT_DELAY;
	h.delay_ms = 4530;
	assert_int_equal(resolve_ok(&h, WINTER_MS), 4530);
	h.delay_ms = -5;
	assert_int_equal(resolve_ok(&h, WINTER_MS), 0);

	h.kind = WAITHINT_EPOCH;
	h.epoch_s = WINTER_MS / 1000 + 90;
	assert_int_equal(resolve_ok(&h, WINTER_MS + 500), 89500);
	h.epoch_s = WINTER_MS / 1000 - 10; /* already passed */
	assert_int_equal(resolve_ok(&h, WINTER_MS), 0);
	h.epoch_s = INT64_MAX; /* no overflow */
	assert_true(resolve_ok(&h, WINTER_MS) > 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_clock_table),
	    cmocka_unit_test(test_unknown_zone),
	    cmocka_unit_test(test_unsafe_zone),
	    cmocka_unit_test(test_tz_restored),
	    cmocka_unit_test(test_delay_epoch_none),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
