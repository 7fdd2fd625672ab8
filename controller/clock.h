/*
 * clock.h - the clock seam.  The batch loop reads time, sleeps and draws
 * random numbers only through a struct sc_clock, so tests drive it with a
 * fake clock that never really sleeps.
 */
#ifndef STORYCTL_CLOCK_H
#define STORYCTL_CLOCK_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

struct sc_clock {
	/* Wall-clock time, Unix epoch milliseconds. */
	int64_t (*now_ms)(void *ctx);
	/* Sleep until the wall clock reaches deadline_ms, or until *stop is
	 * set (stop may be NULL; wake_fd, when >= 0, becomes readable when
	 * it is).  Returns 0 when the deadline came, 1 when stopped. */
	int (*sleep_until)(void *ctx, int64_t deadline_ms,
	    const volatile sig_atomic_t *stop, int wake_fd);
	/* A uniformly distributed number in [0, 1). */
	double (*random01)(void *ctx);
	void *ctx;
};

/* The real clock: CLOCK_REALTIME, poll() in slices of at most one
 * second (so a machine that sleeps through a deadline does not extend
 * it), getrandom() for jitter.  ctx is unused. */
void clock_real(struct sc_clock *out);

/* CLOCK_MONOTONIC in milliseconds: for timers that the wall clock's
 * jumps must not move (the runner's timeouts, docs/runner.md). */
int64_t clock_mono_ms(void);

/* Sleep ms milliseconds (nothing when ms <= 0).  A signal may cut it
 * short: callers loop on the time. */
void clock_nap_ms(int64_t ms);

/* Milliseconds as a short human string: "850ms", "12s", "4m05s",
 * "2h03m".  Writes at most len bytes. */
void clock_fmt_duration(char *buf, size_t len, int64_t ms);

/* Epoch milliseconds as ISO 8601 UTC ("2026-11-21T04:29:23Z"). */
void clock_fmt_iso(char *buf, size_t len, int64_t ms);

#endif
