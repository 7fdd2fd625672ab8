/* notifyev.c - see notifyev.h and docs/notifications.md. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "common/model.h"
#include "strategies/notifyev.h"

static const char *const event_names[NOTIFY__COUNT] = {
    [NOTIFY_BATCH_END] = "batch_end",
    [NOTIFY_ESCALATED] = "escalated",
    [NOTIFY_DEFERRED] = "deferred",
    [NOTIFY_STOPPED] = "stopped",
    [NOTIFY_BREAKER_OPEN] = "breaker_open",
    [NOTIFY_USAGE_LIMIT] = "usage_limit",
};

const char *
notify_event_name(enum notify_event e)
{
	if ((unsigned)e >= NOTIFY__COUNT)
		return "?";
	return event_names[e];
}

int
notify_event_parse(enum notify_event *out, const char *s)
{
	int i;

	for (i = 0; i < NOTIFY__COUNT; i++)
		if (strcmp(s, event_names[i]) == 0) {
			*out = (enum notify_event)i;
			return 0;
		}
	return -1;
}

void
notify_event_names(char *buf, size_t cap)
{
	size_t len = 0;
	int i, n;

	if (cap == 0)
		return;
	buf[0] = '\0';
	for (i = 0; i < NOTIFY__COUNT && len < cap; i++) {
		n = snprintf(buf + len, cap - len, "%s%s", i > 0 ? ", " : "",
		    event_names[i]);
		if (n < 0)
			break;
		len += (size_t)n;
	}
}

/* key: s, or null when s is NULL. */
static int
set_str(json_t *o, const char *key, const char *s)
{
	return json_object_set_new(
	    o, key, s != NULL ? json_string(s) : json_null());
}

static json_t *
counts_json(const int *counts)
{
	json_t *c = json_object();
	int i;

	if (c == NULL)
		return NULL;
	for (i = 0; i < STATUS__COUNT; i++)
		if (json_object_set_new(c, status_name((enum story_status)i),
			json_integer(counts[i])) < 0) {
			json_decref(c);
			return NULL;
		}
	return c;
}

char *
notify_msg_json(const struct notify_msg *m)
{
	json_t *o = json_object();
	char *text = NULL;
	int rc = 0;

	if (o == NULL)
		goto out;
	rc |= json_object_set_new(
	    o, "format_version", json_integer(NOTIFY_FORMAT_VERSION));
	rc |= set_str(o, "event", notify_event_name(m->event));
	rc |= json_object_set_new(o, "batch_id", json_integer(m->batch_id));
	rc |= set_str(o, "story_id", m->story_id);
	rc |= set_str(o, "time", m->time);
	rc |= json_object_set_new(o, "time_ms", json_integer(m->time_ms));
	rc |= set_str(o, "reason", m->reason != NULL ? m->reason : "");
	if (m->event == NOTIFY_ESCALATED || m->event == NOTIFY_DEFERRED)
		rc |= set_str(o, "error", m->error);
	rc |= set_str(o, "command", m->command);
	rc |= set_str(o, "root", m->root);
	if (m->event == NOTIFY_USAGE_LIMIT)
		rc |= set_str(o, "agent", m->agent);
	if (m->event == NOTIFY_BATCH_END) {
		rc |= set_str(o, "batch_status", m->batch_status);
		rc |= json_object_set_new(o, "counts",
		    m->counts != NULL ? counts_json(m->counts) : json_null());
	}
	if (rc != 0)
		goto out;
	/* invalid UTF-8 would make jansson refuse the string: the caller's
	 * redaction has already made every string UTF-8 */
	text = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
out:
	json_decref(o);
	return text;
}

void
notify_act_command(
    char *buf, size_t cap, enum notify_event e, const char *story_id)
{
	if (cap == 0)
		return;
	buf[0] = '\0';
	switch (e) {
	case NOTIFY_ESCALATED:
	case NOTIFY_DEFERRED:
		/* a person reads `show`, fixes the story, then puts it back */
		if (story_id != NULL)
			snprintf(buf, cap, "storyctl requeue %s", story_id);
		break;
	case NOTIFY_STOPPED:
		snprintf(buf, cap, "storyctl resume");
		break;
	case NOTIFY_BREAKER_OPEN:
		snprintf(buf, cap, "storyctl log");
		break;
	case NOTIFY_BATCH_END:
		snprintf(buf, cap, "storyctl status");
		break;
	default:
		/* a usage limit waits for its reset by itself */
		break;
	}
}

bool
notify_http_retryable(long status)
{
	return status == 408 || status == 425 || status == 429 ||
	    (status >= 500 && status <= 599);
}

int64_t
notify_retry_delay_ms(int n)
{
	if (n <= 1)
		return 0;
	return n == 2 ? 1000 : 2000;
}
