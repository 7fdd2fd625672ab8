/*
 * waithint.h - how long an agent's output says to wait
 * (docs/classification.md#wait-hints: Retry-After,
 * "retry in N seconds", "Please retry in 4.53s", "usage limit reached|<epoch>",
 * "resets 1am (Europe/Oslo)", "try again in 2 hours 5 minutes", ...).
 *
 * Pure: a wall-clock reset ("resets 1am (Europe/Oslo)") is returned as a
 * clock time and zone name; controller/ turns it into a delay with the
 * time-zone database (waithint_resolve in controller/tz.h).
 */
#ifndef STORYCTL_WAITHINT_H
#define STORYCTL_WAITHINT_H

#include <stddef.h>
#include <stdint.h>

enum waithint_kind {
	WAITHINT_NONE = 0,
	WAITHINT_DELAY, /* delay_ms from when the output was printed */
	WAITHINT_EPOCH, /* until epoch_s (Unix seconds, UTC) */
	WAITHINT_CLOCK /* until the next hour:minute (on month/day when
	                 * those are set) in zone */
};

struct waithint {
	enum waithint_kind kind;
	int64_t delay_ms;
	int64_t epoch_s;
	int hour; /* 0..23 */
	int minute; /* 0..59 */
	char zone[64]; /* IANA name such as "Europe/Oslo"; "" = local time */
	/* A dated reset ("resets Feb 7, 11am (Asia/Seoul)", weekly limits):
	 * month 1..12 and day 1..31; both 0 for "the next hour:minute". */
	int month;
	int day;
};

/* Find the last wait hint in the len bytes at text.  Returns 1 and fills
 * *out when one is found, 0 (and out->kind = WAITHINT_NONE) otherwise. */
int waithint_parse(struct waithint *out, const char *text, size_t len);

#endif
