/*
 * notifyev.h - the notifications' pure parts (docs/notifications.md):
 * the event names, the event JSON a webhook or a command receives, the
 * `storyctl` command that acts on it, and the delivery rules (which
 * answers are worth another try, and how long to wait before it).
 * Structs in, text out; no I/O.  The delivery itself is
 * controller/engine/notifier.h's.
 */
#ifndef STORYCTL_NOTIFYEV_H
#define STORYCTL_NOTIFYEV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The JSON's format_version: bumped when a field changes meaning or
 * goes; a new field does not bump it (docs/notifications.md#the-event). */
#define NOTIFY_FORMAT_VERSION 1

/* Delivery (docs/notifications.md#delivery): every try of a webhook has
 * NOTIFY_CONNECT_MS to connect and NOTIFY_TRY_MS in all, a command
 * NOTIFY_TRY_MS to exit; NOTIFY_TRIES tries at most. */
#define NOTIFY_CONNECT_MS 2000
#define NOTIFY_TRY_MS 5000
#define NOTIFY_TRIES 3

enum notify_event {
	NOTIFY_BATCH_END,
	NOTIFY_ESCALATED,
	NOTIFY_DEFERRED,
	NOTIFY_STOPPED,
	NOTIFY_BREAKER_OPEN,
	NOTIFY_USAGE_LIMIT,
	NOTIFY__COUNT
};

/* "batch_end", "escalated", ...; "?" out of range. */
const char *notify_event_name(enum notify_event e);
/* 0 with *out set, or -1 when s names no event. */
int notify_event_parse(enum notify_event *out, const char *s);
/* Every event name, ", "-separated, for messages. */
void notify_event_names(char *buf, size_t cap);

/* A target's "on" list as a bit set (1u << event). */
static inline bool
notify_mask_has(unsigned mask, enum notify_event e)
{
	return (mask & (1u << (unsigned)e)) != 0;
}

/*
 * One event, as the controller saw it.  Strings are borrowed and
 * already redacted by the caller (state/redact.h); a NULL one is null
 * in the JSON (or left out: see notify_msg_json()).
 */
struct notify_msg {
	enum notify_event event;
	int64_t batch_id;
	const char *story_id; /* escalated, deferred, usage_limit */
	int64_t time_ms; /* when it happened, Unix epoch ms */
	const char *time; /* the same, ISO 8601 UTC */
	const char *reason;
	/* escalated, deferred: what the last attempt's agent said went
	 * wrong (its error message), or NULL */
	const char *error;
	const char *command; /* what to run to act on it, or NULL */
	const char *root; /* the project's directory */
	const char *agent; /* usage_limit: the agent's name */
	const char *batch_status; /* batch_end: "finished" or "stopped" */
	/* batch_end: one count per enum story_status; NULL otherwise */
	const int *counts;
};

/* The event's JSON text, one line, keys in a fixed order
 * (docs/notifications.md#the-event): "error" only for escalated and
 * deferred, "agent" only for usage_limit, "batch_status" and "counts"
 * only for batch_end.  malloc'd, the caller frees it; NULL when out of
 * memory or when a string is not UTF-8. */
char *notify_msg_json(const struct notify_msg *m);

/* The `storyctl` command that acts on event e about story_id (which may
 * be NULL) into buf; "" when there is nothing to do but read. */
void notify_act_command(
    char *buf, size_t cap, enum notify_event e, const char *story_id);

/* Whether a webhook's HTTP answer is worth another try: 408, 425, 429
 * and 5xx are (the receiver may be better in a moment); other 4xx are
 * not (the same request will get the same answer). */
bool notify_http_retryable(long status);

/* The wait before try n (1-based; 0 before the first): 1 s, then 2 s. */
int64_t notify_retry_delay_ms(int n);

#endif
