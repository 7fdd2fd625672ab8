/*
 * serve.h - the HTTP service (docs/api.md): libmicrohttpd with one
 * internal polling thread, API keys on every request, the read views.
 * cmd_serve.c (serve) and cmd_run.c (run --serve) parse the command
 * line; this file runs the daemon and answers the requests.
 */
#ifndef STORYCTL_SERVE_H
#define STORYCTL_SERVE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>

#include "common/err.h"
#include "controller/cli/cli.h"
#include "controller/serve/serve_listen.h"

/* A request body larger than this is refused with 413. */
#define SERVE_BODY_MAX (1024 * 1024)
/* POST /session's body, read before any key is checked: one key in a
 * form (docs/api.md#the-dashboard) */
#define SERVE_SIGNIN_MAX 4096
/* Request bodies held at once across every connection (a write's
 * Content-Length counts from its headers); a write past it is answered
 * 503 busy with Retry-After (docs/api.md#limits). */
#define SERVE_BODY_BUDGET (8 * 1024 * 1024)
/* A connection idle this long is closed, and so is one whose request has
 * not arrived whole this long after the server began waiting for it
 * (serve_guard.h): slow clients do not keep a slot. */
#define SERVE_TIMEOUT_S 10
/* Connections open at once; more wait in the kernel's backlog. */
#define SERVE_CONN_MAX 256

struct serve;

/* Start serving on l's address (IPv4 or IPv6; TLS when l has a
 * certificate, controller/serve/serve_listen.h) in a thread of the library's;
 * the requests read the state of the config cli names.  l (its PEM
 * texts) must outlive the server.  *out is the caller's, to
 * serve_stop().  *port: the port bound (for port 0). */
int serve_start(struct serve **out, int *port, const struct cli *cli,
    const char *state_dir, const struct serve_listen *l, struct sc_err *err);
/* End the event streams (each sends what is written so far, a bounded
 * wait), stop accepting, finish the request under way, free.  NULL
 * ok. */
void serve_stop(struct serve *s);

#endif
