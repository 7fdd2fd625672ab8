/*
 * tz.h - how long to wait for a wait hint
 * (docs/classification.md#wait-hints): the controller's only time-zone
 * code.
 *
 * strategies/waithint.c finds a hint in an agent's output without knowing
 * the time; here it becomes a delay from now, using the system's time-zone
 * database (/usr/share/zoneinfo, or $TZDIR) for wall-clock resets such as
 * "resets 1am (Europe/Oslo)".
 *
 * Not thread-safe: a hint in a named zone sets TZ for the length of the
 * call (and restores it afterwards), as localtime/mktime only know one
 * zone at a time.
 */
#ifndef STORYCTL_TZ_H
#define STORYCTL_TZ_H

#include <stdint.h>

#include "common/err.h"
#include "strategies/waithint.h"

/*
 * Set *out_delay_ms to the milliseconds from now_epoch_ms (Unix time in
 * ms) until the moment the hint names, never negative:
 *   WAITHINT_NONE   0;
 *   WAITHINT_DELAY  h->delay_ms;
 *   WAITHINT_EPOCH  h->epoch_s (seconds) minus now, 0 when it has passed;
 *   WAITHINT_CLOCK  the first h->hour:h->minute strictly after now in
 *                   h->zone ("" = local time), on h->month/h->day when
 *                   those are set (this year, else next year); DST days
 *                   are handled by the zone's rules.
 * Returns 0, or SC_EDATA (naming the zone) when the zone name is unsafe or
 * not in the database, or when the hint's fields are out of range; then
 * *out_delay_ms is 0.
 */
int waithint_resolve(int64_t *out_delay_ms, const struct waithint *h,
    int64_t now_epoch_ms, struct sc_err *err);

#endif
