/* clock.c - the real clock; see clock.h. */
#include <errno.h>
#include <poll.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "controller/clock.h"
#include "strategies/duration.h"

static int64_t
real_now_ms(void *ctx)
{
	struct timespec ts;

	(void)ctx;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int
real_sleep_until(void *ctx, int64_t deadline_ms,
    const volatile sig_atomic_t *stop, int wake_fd)
{
	struct pollfd pfd;
	int64_t left;
	char buf[64];

	for (;;) {
		if (stop != NULL && *stop)
			return 1;
		left = deadline_ms - real_now_ms(ctx);
		if (left <= 0)
			return 0;
		/* slices of a second: the wall clock decides, not the
		 * monotonic time a suspended machine did not count */
		if (left > 1000)
			left = 1000;
		pfd.fd = wake_fd;
		pfd.events = POLLIN;
		pfd.revents = 0;
		if (poll(wake_fd >= 0 ? &pfd : NULL, wake_fd >= 0 ? 1 : 0,
			(int)left) > 0 &&
		    (pfd.revents & POLLIN)) {
			while (read(wake_fd, buf, sizeof(buf)) > 0)
				;
		}
	}
}

static double
real_random01(void *ctx)
{
	uint64_t r = 0;

	(void)ctx;
	if (getrandom(&r, sizeof(r), 0) != (ssize_t)sizeof(r))
		r = (uint64_t)real_now_ms(NULL) * 2654435761u;
	return (double)(r >> 11) / (double)(1ULL << 53);
}

void
clock_real(struct sc_clock *out)
{
	out->now_ms = real_now_ms;
	out->sleep_until = real_sleep_until;
	out->random01 = real_random01;
	out->ctx = NULL;
}

int64_t
clock_mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void
clock_nap_ms(int64_t ms)
{
	struct timespec ts;

	if (ms <= 0)
		return;
	ts.tv_sec = ms / 1000;
	ts.tv_nsec = (long)(ms % 1000) * 1000000;
	nanosleep(&ts, NULL);
}

void
clock_fmt_duration(char *buf, size_t len, int64_t ms)
{
	duration_fmt(buf, len, ms);
}

void
clock_fmt_iso(char *buf, size_t len, int64_t ms)
{
	time_t t = (time_t)(ms / 1000);
	struct tm tm;

	if (gmtime_r(&t, &tm) == NULL) {
		snprintf(buf, len, "?");
		return;
	}
	strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}
