/* batch_notify.c - see batch_notify.h and docs/notifications.md. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "controller/engine/batch_int.h"
#include "controller/engine/batch_notify.h"
#include "controller/clock.h"
#include "controller/engine/console.h"
#include "state/redact.h"

/* A message about notifications: on the console and, when the batch
 * has one yet, in its event log (kind "notify"). */
static void
notify_log(struct batch *b, const char *msg)
{
	struct sc_err err = {0};

	console_line(b, "notify: %s", msg);
	if (b->db != NULL &&
	    db_event_add(b->db, b->batch_id, batch_now_ms(b), NULL, "notify",
		msg, &err) < 0)
		console_line(b, "notify: cannot record it: %s", err.msg);
}

void
batch_notify_open(struct batch *b)
{
	struct sc_err err = {0};
	char log_path[sizeof(b->logdir) + 16];

	if (b->cfg->nnotify == 0)
		return;
	if (b->o->notify_ops.post != NULL) {
		b->notify = b->o->notify_ops;
		return;
	}
	snprintf(log_path, sizeof(log_path), "%s/notify.log", b->logdir);
	if (notifier_start(&b->notifier, b->cfg->notify, b->cfg->nnotify,
		b->cfg->root, log_path, &err) < 0) {
		notify_log(b, err.msg);
		return;
	}
	notifier_ops(&b->notify, b->notifier);
}

/* "3 done, 1 deferred" of res's non-zero counts. */
static void
counts_text(char *buf, size_t cap, const struct batch_result *res)
{
	size_t len = 0;
	int i, n;

	buf[0] = '\0';
	for (i = 0; i < STATUS__COUNT && len < cap; i++) {
		if (res->counts[i] == 0)
			continue;
		n = snprintf(buf + len, cap - len, "%s%d %s",
		    len > 0 ? ", " : "", res->counts[i],
		    status_name((enum story_status)i));
		if (n < 0)
			break;
		len += (size_t)n;
	}
}

/* Whether any target wants e. */
static bool
notify_wanted(const struct batch *b, enum notify_event e)
{
	size_t i;

	for (i = 0; i < b->cfg->nnotify; i++)
		if (notify_mask_has(b->cfg->notify[i].on, e))
			return true;
	return false;
}

/* buf holding s redacted, or NULL when s is. */
static const char *
redacted(
    char *buf, size_t cap, const char *s, const struct redact_values *secrets)
{
	if (s == NULL)
		return NULL;
	redact_text_copy(secrets, buf, cap, s);
	return buf;
}

char *
notify_json_redacted(
    const struct notify_msg *raw, const struct redact_values *secrets)
{
	char story[160], when[64], reason[1024], error[600], agent[128];
	char act[256], root[1024], status[32];
	struct notify_msg m = *raw;

	/* every string the receiver gets passes the record's redaction
	 * (docs/reliability.md#security), which also makes it UTF-8 */
	m.story_id = redacted(story, sizeof(story), raw->story_id, secrets);
	m.time = redacted(when, sizeof(when), raw->time, secrets);
	m.reason = redacted(reason, sizeof(reason), raw->reason, secrets);
	m.error = redacted(error, sizeof(error), raw->error, secrets);
	m.agent = redacted(agent, sizeof(agent), raw->agent, secrets);
	m.command = redacted(act, sizeof(act), raw->command, secrets);
	m.root = redacted(root, sizeof(root), raw->root, secrets);
	m.batch_status =
	    redacted(status, sizeof(status), raw->batch_status, secrets);
	return notify_msg_json(&m);
}

/* Hand json to every target that wants e; a drop is logged. */
static void
notify_post(struct batch *b, enum notify_event e, const char *json)
{
	char tgt[160], msg[300];
	size_t i;

	for (i = 0; i < b->cfg->nnotify; i++) {
		if (!notify_mask_has(b->cfg->notify[i].on, e))
			continue;
		if (b->notify.post(b->notify.ctx, i, e, json) == 0)
			continue;
		notifier_target_shown(tgt, sizeof(tgt), &b->cfg->notify[i]);
		snprintf(msg, sizeof(msg),
		    "%s to %s dropped: %d events already wait for delivery",
		    notify_event_name(e), tgt, NOTIFY_QUEUE_MAX);
		notify_log(b, msg);
	}
}

void
batch_notify(struct batch *b, const struct notify_msg *ev,
    const struct batch_result *res)
{
	struct notify_msg m = *ev;
	char when[40], act[160], *json;

	if (b->notify.post == NULL || !notify_wanted(b, ev->event))
		return;
	m.batch_id = b->batch_id;
	m.time_ms = batch_now_ms(b);
	clock_fmt_iso(when, sizeof(when), m.time_ms);
	m.time = when;
	notify_act_command(act, sizeof(act), m.event, m.story_id);
	m.command = act[0] != '\0' ? act : NULL;
	m.root = b->cfg->root;
	if (m.error != NULL && m.error[0] == '\0')
		m.error = NULL;
	if (res != NULL) {
		m.counts = res->counts;
		m.batch_status =
		    res->counts[STATUS_PENDING] + res->counts[STATUS_RUNNING] >
			0
		    ? "stopped"
		    : "finished";
	}
	json = notify_json_redacted(&m, b->secrets);
	if (json == NULL) {
		notify_log(b, "out of memory building an event");
		return;
	}
	notify_post(b, m.event, json);
	free(json);
}

void
batch_notify_poll(struct batch *b)
{
	struct notify_failure f[8];
	char msg[700];
	size_t n, i;

	if (b->notify.take_failures == NULL)
		return;
	do {
		n = b->notify.take_failures(b->notify.ctx, f, 8);
		for (i = 0; i < n; i++) {
			snprintf(msg, sizeof(msg), "%s to %s failed: %s",
			    notify_event_name(f[i].event), f[i].target,
			    f[i].msg);
			notify_log(b, msg);
		}
	} while (n == 8);
}

void
batch_notify_end(struct batch *b, const struct batch_result *res)
{
	char counts[256], reason[700];
	size_t left;
	bool hurry;
	bool open =
	    res->counts[STATUS_PENDING] + res->counts[STATUS_RUNNING] > 0;

	if (b->notify.post == NULL)
		return;
	counts_text(counts, sizeof(counts), res);
	if (open)
		batch_notify(b,
		    &(struct notify_msg){.event = NOTIFY_STOPPED,
			.reason = b->stop_reason[0] != '\0'
			    ? b->stop_reason
			    : "the controller was asked to stop"},
		    NULL);
	snprintf(reason, sizeof(reason), "batch %lld %s: %s",
	    (long long)b->batch_id, open ? "stopped" : "finished",
	    counts[0] != '\0' ? counts : "no stories");
	batch_notify(b,
	    &(struct notify_msg){.event = NOTIFY_BATCH_END, .reason = reason},
	    res);
	/* a second Ctrl-C means now (docs/runner.md#kill-sequence) */
	hurry = b->o->stop != NULL && *b->o->stop >= 2;
	left = b->notify.drain != NULL
	    ? b->notify.drain(b->notify.ctx, hurry ? 0 : NOTIFY_DRAIN_MS)
	    : 0;
	batch_notify_poll(b);
	if (left > 0) {
		snprintf(reason, sizeof(reason),
		    "%zu notification%s still undelivered %d s after the "
		    "batch ended: given up",
		    left, left == 1 ? "" : "s",
		    hurry ? 0 : NOTIFY_DRAIN_MS / 1000);
		notify_log(b, reason);
	}
}

void
batch_notify_close(struct batch *b)
{
	notifier_stop(b->notifier);
	b->notifier = NULL;
	memset(&b->notify, 0, sizeof(b->notify));
}
