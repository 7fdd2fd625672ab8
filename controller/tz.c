/* tz.c - see tz.h. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "controller/tz.h"

#define TZ_DEFAULT_DIR "/usr/share/zoneinfo"

/* The same rule as the parser's: [A-Za-z0-9_+/-], no "..", no leading
 * '/'.  Checked again because a hint may come from anywhere. */
static bool
tz_name_ok(const char *z)
{
	size_t i;

	if (z[0] == '\0' || z[0] == '/' || strstr(z, "..") != NULL)
		return false;
	for (i = 0; z[i] != '\0'; i++) {
		char c = z[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			(c >= '0' && c <= '9') || c == '_' || c == '+' ||
			c == '-' || c == '/'))
			return false;
	}
	return true;
}

/* Whether the database has the zone: glibc silently falls back to UTC for
 * an unknown TZ, so look for its file first. */
static bool
tz_known(const char *zone)
{
	const char *dir = getenv("TZDIR");
	char path[512];
	struct stat st;
	int n;

	if (dir == NULL || dir[0] == '\0')
		dir = TZ_DEFAULT_DIR;
	n = snprintf(path, sizeof(path), "%s/%s", dir, zone);
	if (n < 0 || (size_t)n >= sizeof(path))
		return false;
	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* The end of the first hour:minute (on month/day when set) that has not
 * ended at now_s in the current TZ, as Unix seconds; -1 when mktime
 * cannot say.  A clock time named to the minute ("try again at 9:17
 * AM") means the end of that minute, never a moment inside it: a limit
 * met again within the minute it names is the same limit, not one a day
 * away (docs/classification.md#wait-hints). */
static int64_t
tz_next(const struct waithint *h, time_t now_s, int64_t now_ms)
{
	struct tm now_tm, c;
	time_t t = -1;
	int step;

	if (localtime_r(&now_s, &now_tm) == NULL)
		return -1;
	for (step = 0; step < 2; step++) {
		memset(&c, 0, sizeof(c));
		c.tm_year = now_tm.tm_year;
		c.tm_mon = now_tm.tm_mon;
		c.tm_mday = now_tm.tm_mday;
		if (h->month > 0 && h->day > 0) {
			c.tm_mon = h->month - 1;
			c.tm_mday = h->day;
			c.tm_year += step; /* next year's date */
		} else {
			c.tm_mday += step; /* tomorrow */
		}
		c.tm_hour = h->hour;
		c.tm_min = h->minute;
		c.tm_isdst = -1; /* let the zone's rules decide */
		t = mktime(&c);
		if (t == (time_t)-1)
			return -1;
		if (((int64_t)t + 60) * 1000 > now_ms)
			return (int64_t)t + 60;
	}
	return (int64_t)t + 60;
}

/* The hint's time in range and its zone one that can be named (the
 * zone database's names only, never a path: TZ is set to it). */
static int
tz_hint_check(const struct waithint *h, struct sc_err *err)
{
	if (h->hour < 0 || h->hour > 23 || h->minute < 0 || h->minute > 59 ||
	    h->month < 0 || h->month > 12 || h->day < 0 || h->day > 31)
		return err_set(err, SC_EDATA,
		    "wait hint time %d:%02d out of "
		    "range",
		    h->hour, h->minute);
	if (h->zone[0] == '\0')
		return 0;
	if (memchr(h->zone, '\0', sizeof(h->zone)) == NULL ||
	    !tz_name_ok(h->zone))
		return err_set(
		    err, SC_EDATA, "invalid time zone name in wait hint");
	if (!tz_known(h->zone))
		return err_set(err, SC_EDATA,
		    "unknown time zone '%s' in wait hint", h->zone);
	return 0;
}

static int
tz_clock(int64_t *out_s, const struct waithint *h, int64_t now_ms,
    struct sc_err *err)
{
	char *saved = NULL;
	const char *old;
	bool had_old = false, set = false;
	time_t now_s;
	int rc = 0;

	if ((rc = tz_hint_check(h, err)) < 0)
		return rc;
	if (h->zone[0] != '\0') {
		old = getenv("TZ");
		if (old != NULL) {
			had_old = true;
			saved = strdup(old);
			if (saved == NULL)
				return err_set(
				    err, SC_EOS, "out of memory saving TZ");
		}
		if (setenv("TZ", h->zone, 1) != 0) {
			rc = err_set(
			    err, SC_EOS, "cannot set TZ to '%s'", h->zone);
			goto out;
		}
		set = true;
	}
	tzset();
	now_s =
	    (time_t)(now_ms >= 0 ? now_ms / 1000 : -((-now_ms + 999) / 1000));
	*out_s = tz_next(h, now_s, now_ms);
	if (*out_s < 0)
		rc = err_set(err, SC_EDATA,
		    "cannot compute %d:%02d in time "
		    "zone '%s'",
		    h->hour, h->minute, h->zone[0] != '\0' ? h->zone : "local");
out:
	if (set) {
		if (had_old)
			setenv("TZ", saved, 1);
		else
			unsetenv("TZ");
		tzset();
	}
	free(saved);
	return rc;
}

int
waithint_resolve(int64_t *out_delay_ms, const struct waithint *h,
    int64_t now_epoch_ms, struct sc_err *err)
{
	/* about 290 million years in ms: no product overflows */
	const int64_t epoch_max = INT64_MAX / 1000 - 1;
	int64_t when_s = 0, d = 0;
	int rc = 0;

	*out_delay_ms = 0;
	switch (h->kind) {
	case WAITHINT_NONE:
		break;
	case WAITHINT_DELAY:
		d = h->delay_ms;
		break;
	case WAITHINT_EPOCH:
		when_s = h->epoch_s;
		if (when_s > epoch_max)
			when_s = epoch_max;
		if (when_s < -epoch_max)
			when_s = -epoch_max;
		d = when_s * 1000 - now_epoch_ms;
		break;
	case WAITHINT_CLOCK:
		rc = tz_clock(&when_s, h, now_epoch_ms, err);
		if (rc == 0)
			d = when_s * 1000 - now_epoch_ms;
		break;
	default:
		rc = err_set(err, SC_ESOFTWARE, "unknown wait hint kind %d",
		    (int)h->kind);
		break;
	}
	if (rc == 0 && d > 0)
		*out_delay_ms = d;
	return rc;
}
