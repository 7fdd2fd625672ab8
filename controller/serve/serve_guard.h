/*
 * serve_guard.h - the deadline of a request's arrival
 * (docs/api.md#limits).  libmicrohttpd closes a connection only after
 * SERVE_TIMEOUT_S with no byte at all, so a client trickling a header
 * line or a body byte every few seconds would hold its connection for
 * ever, and 256 of them would hold the server.  The guard times each
 * request from the moment the server waits for it (the connection's
 * start, or the end of the previous request on a kept-alive connection)
 * until its last byte has arrived; a request not whole within the
 * deadline has its socket shut down, which the library's own thread then
 * sees and closes.
 *
 * It also keeps each client's share: a connection that takes a client
 * (an address) over SERVE_CLIENT_CONN_MAX, or the server over
 * SERVE_EVICT_AT, shuts down the oldest connection of that share still
 * waiting for its request (idle sockets, slow requests), or itself when
 * none is: a client that sends its request at once is answered at once
 * however many idle sockets are open.
 *
 * One thread of the guard's wakes up every quarter of a second; the
 * library's thread only marks the connections.  Every entry is removed
 * when the library tells the connection closed, before it closes the
 * socket, so a socket shut down is never one reused by another client.
 */
#ifndef STORYCTL_SERVE_GUARD_H
#define STORYCTL_SERVE_GUARD_H

#include <stdint.h>

#include "controller/optlib.h" /* libmicrohttpd's types */

#include "common/err.h"

/* A client, as serve_client_of() gives it: its address (IPv4 mapped
 * into IPv6). */
#define SERVE_CLIENT_LEN 16
/* Connections of one client at once; one more shuts down its oldest
 * idle one (docs/api.md#limits). */
#define SERVE_CLIENT_CONN_MAX 128
/* Connections of all clients past which a new one shuts down the
 * oldest idle one: below the library's limit (SERVE_CONN_MAX, serve.h),
 * so that a new client is always accepted. */
#define SERVE_EVICT_AT 224

struct serve_guard;

/* c's client: its address, IPv4 mapped into IPv6; zeros when unknown. */
void serve_client_of(
    unsigned char out[SERVE_CLIENT_LEN], struct MHD_Connection *c);

/* Start the guard's thread: a request must arrive whole within
 * deadline_ms.  *out is the caller's, to serve_guard_stop(). */
int serve_guard_start(
    struct serve_guard **out, int64_t deadline_ms, struct sc_err *err);
/* Stop the thread and free what is left.  NULL ok.  After
 * MHD_stop_daemon (no connection is left then). */
void serve_guard_stop(struct serve_guard *g);

/* MHD_OPTION_NOTIFY_CONNECTION's callback, cls the guard: a connection
 * started (its clock starts) or closed (its entry goes). */
void serve_guard_notify(void *cls, struct MHD_Connection *c,
    void **socket_context, enum MHD_ConnectionNotificationCode code);
/* c's request has arrived whole (the answer is being made): its clock
 * stops. */
void serve_guard_arrived(struct serve_guard *g, struct MHD_Connection *c);
/* c's request is finished: its clock starts again for the next request
 * on the same connection. */
void serve_guard_next(struct serve_guard *g, struct MHD_Connection *c);

#endif
