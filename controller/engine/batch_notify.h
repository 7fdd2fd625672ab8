/*
 * batch_notify.h - the batch's notifications (docs/notifications.md):
 * where the loop says that something happened that a person may want to
 * hear about, and where the notifier's failures are recorded.
 *
 * Nothing here can fail the batch or make it wait: an event is built,
 * redacted (state/redact.h) and handed to the notifier seam, which
 * returns at once; a failure (a drop, a receiver that is down) becomes a
 * console line and a "notify" event in the event log
 * (docs/notifications.md#failures).  Only the end of the batch waits,
 * at most NOTIFY_DRAIN_MS, for what is still on its way.
 */
#ifndef STORYCTL_BATCH_NOTIFY_H
#define STORYCTL_BATCH_NOTIFY_H

#include <stdint.h>

#include "state/redact.h"
#include "strategies/notifyev.h"

struct batch; /* controller/engine/batch_int.h */
struct batch_result; /* controller/engine/batch.h */

/* How long the end of a batch waits for notifications still on their
 * way: one try's time limit (docs/notifications.md#delivery). */
#define NOTIFY_DRAIN_MS NOTIFY_TRY_MS

/* Set up the batch's notifier: batch_opts' own (tests), else the real
 * one when the config has targets.  One that cannot start is said on the
 * console and the batch runs without it. */
void batch_notify_open(struct batch *b);
/*
 * Event ev->event happened: its JSON goes to every target whose "on" has
 * it.  The caller gives event, and story_id, reason, error and agent
 * where they apply; the batch id, the time, the command to act and the
 * root are filled in here, and for batch_end the counts from res (NULL
 * otherwise).
 */
void batch_notify(struct batch *b, const struct notify_msg *ev,
    const struct batch_result *res);
/* The JSON of raw (strings as found, NULL or not) with every string
 * passed through redact_text_copy() with secrets (state/redact.h; NULL:
 * the patterns only): what a receiver gets.  malloc'd; NULL when out of
 * memory. */
char *notify_json_redacted(
    const struct notify_msg *raw, const struct redact_values *secrets);
/* Record the failures the notifier reported since the last call. */
void batch_notify_poll(struct batch *b);
/* The batch has ended (res filled): batch_end, and stopped when stories
 * remain; then wait up to NOTIFY_DRAIN_MS and record what failed or was
 * given up. */
void batch_notify_end(struct batch *b, const struct batch_result *res);
/* Stop the real notifier (what is still on its way is given up). */
void batch_notify_close(struct batch *b);

#endif
