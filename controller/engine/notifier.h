/*
 * notifier.h - deliver notifications off the batch loop
 * (docs/notifications.md#delivery).
 *
 * The loop is single-threaded and must never wait for a receiver, so
 * delivery runs on threads of its own, one per target, each fed through
 * a bounded queue: posting copies the event's JSON into the target's
 * queue and returns at once; when the queue is full the event is dropped
 * and the caller logs it.  A receiver that hangs delays only its own
 * queue.  Why threads rather than libcurl's multi interface driven from
 * the loop: a command notifier is a process to feed, wait for and maybe
 * kill, and the loop can sleep for an hour in its agent seam; a thread
 * serves webhooks and commands alike with plain blocking code, each try
 * bounded by its timeout, and the loop only takes a mutex to post or to
 * collect failures.
 *
 * The threads do no logging, touch no database and print nothing:
 * failures wait in a bounded list until the loop collects them
 * (take_failures) and records them itself.  All signals are blocked in
 * them, so SIGINT and SIGTERM still reach the loop.
 *
 * struct notify_ops is the seam: batch_run() uses the real notifier
 * unless batch_opts gives one (the loop's tests use a fake that records
 * what was posted).
 */
#ifndef STORYCTL_NOTIFIER_H
#define STORYCTL_NOTIFIER_H

#include <stddef.h>
#include <stdint.h>

#include "common/err.h"
#include "controller/config/config.h"
#include "strategies/notifyev.h"

/* Events waiting for one target, at most (more are dropped). */
#define NOTIFY_QUEUE_MAX 64
/* Failures kept until the loop collects them (more are counted). */
#define NOTIFY_FAIL_MAX 32

/* A delivery that failed after its tries; text already cleaned. */
struct notify_failure {
	enum notify_event event;
	char target[160]; /* notifier_target_shown() */
	char msg[400];
};

struct notify_ops {
	/* Queue json (copied) for target (an index into cfg->notify).
	 * Never blocks: 0 queued, -1 dropped (the queue is full). */
	int (*post)(
	    void *ctx, size_t target, enum notify_event e, const char *json);
	/* Move up to cap failures into out; returns how many. */
	size_t (*take_failures)(
	    void *ctx, struct notify_failure *out, size_t cap);
	/* Wait up to timeout_ms in all for every queued event to be
	 * delivered (or to fail); returns how many are still undelivered. */
	size_t (*drain)(void *ctx, int64_t timeout_ms);
	void *ctx;
};

struct notifier;

/*
 * Start a notifier thread for each of targets[0..n) (borrowed: they must
 * outlive it).  Commands run in cwd with the controller's environment,
 * their output appended to log_path.  SC_EOS when the thread or libcurl
 * cannot be set up.
 */
int notifier_start(struct notifier **out, const struct notify_conf *targets,
    size_t n, const char *cwd, const char *log_path, struct sc_err *err);
/* The seam of a started notifier. */
void notifier_ops(struct notify_ops *out, struct notifier *nf);
/* Cut the deliveries in progress short (a hanging receiver or command
 * included, within about a second), drop what is queued, join the
 * threads, free.  No-op on NULL. */
void notifier_stop(struct notifier *nf);

/* How a target is named in messages: "webhook http://host:port" (never
 * the path or the query, which may hold a token) or "command PROG". */
void notifier_target_shown(char *buf, size_t cap, const struct notify_conf *t);

#endif
