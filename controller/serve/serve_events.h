/*
 * serve_events.h - the event log over HTTP (docs/api.md#events): a page
 * of it after a sequence number (GET /v1/events), and the same events as
 * server-sent events (GET /v1/events/stream), each the JSON of a line of
 * `log --json` (one builder, views_event_json()).
 *
 * The daemon has one polling thread, so a stream never waits in it: with
 * nothing to send, its content reader suspends the connection, and a
 * ticker thread of this file's resumes every suspended stream each
 * SERVE_EVENTS_POLL_MS, when the reader looks at the database again
 * (read-only, write-ahead log: the controller is never held up).
 */
#ifndef STORYCTL_SERVE_EVENTS_H
#define STORYCTL_SERVE_EVENTS_H

#include <jansson.h>
#include "controller/optlib.h" /* libmicrohttpd's types */

#include "common/err.h"
#include "controller/cli/cli.h"

/* Streams open at once; one more is refused with 503 (docs/api.md#limits). */
#define SERVE_STREAMS_MAX 32
/* Streams of one client (address) at once; one more is refused with
 * 503, so one client cannot hold every stream. */
#define SERVE_CLIENT_STREAMS_MAX 8
/* How often a stream looks for new events. */
#define SERVE_EVENTS_POLL_MS 300
/* A stream with nothing to say sends a comment this often, well inside
 * the connection timeout (SERVE_TIMEOUT_S) and any proxy's. */
#define SERVE_EVENTS_HEARTBEAT_MS 4000
/* Events in a page of GET /v1/events: by default, and at most. */
#define SERVE_EVENTS_LIMIT_DEFAULT 1000
#define SERVE_EVENTS_LIMIT_MAX 10000

/* The streams of one daemon and their ticker. */
struct serve_events;

/* Start the ticker; the streams read state_dir's database.  *out is the
 * caller's: serve_events_free(). */
int serve_events_new(
    struct serve_events **out, const char *state_dir, struct sc_err *err);
/* Before the daemon stops: no stream waits any more; each sends the
 * events written so far and ends.  Returns when every stream has ended,
 * or after a bounded wait.  NULL ok. */
void serve_events_drain(struct serve_events *ev);
/* After the daemon stopped: stop the ticker, free.  NULL ok. */
void serve_events_free(struct serve_events *ev);

/* GET /v1/events?after=SEQ&limit=N&story=ID&batch=N: *out (the caller's)
 * is the page or the error, *status its HTTP status.  Fails only when
 * out of memory. */
int serve_events_page(
    json_t **out, int *status, const struct cli *cli, struct MHD_Connection *c);
/* GET /v1/events/stream (same parameters but limit; Last-Event-ID wins
 * over after): *resp, the stream (the caller queues it with 200 and
 * destroys it), or *out and *status, the error.  key_name: the key the
 * request came with; the stream ends once it is revoked. */
int serve_events_stream(struct MHD_Response **resp, json_t **out, int *status,
    struct serve_events *ev, const struct cli *cli, struct MHD_Connection *c,
    const char *key_name);

#endif
