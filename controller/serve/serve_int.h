/*
 * serve_int.h - what serve.c (the daemon, the checks before a request
 * is accepted) and serve_answer.c (the answers of the API's routes)
 * share; not an interface.
 */
#ifndef STORYCTL_SERVE_INT_H
#define STORYCTL_SERVE_INT_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "controller/cli/cli.h"
#include "controller/optlib_mhd.h"
#include "controller/serve/serve.h"
#include "controller/serve/serve_frame.h"
#include "state/db.h"

struct serve {
	struct MHD_Daemon *d;
	struct serve_guard *guard; /* the deadline of a request's arrival */
	/* the command's cli with .serve set: what the handlers pass on */
	struct cli cli_copy;
	const struct cli *cli;
	/* the kept config, the request's handle (serve_config.c) */
	struct serve_config *conf;
	char *state_dir;
	struct serve_events *ev;
	/* bytes of request bodies held (or promised by a Content-Length)
	 * across connections, at most SERVE_BODY_BUDGET; the polling
	 * thread's only (docs/api.md#limits) */
	size_t body_held;
	/* the dashboard's sessions (serve_session.c) */
	struct serve_sessions *sessions;
};

/* What a request is, found from its method, path and headers before the
 * body is read (docs/api.md#errors). */
enum route {
	ROUTE_NONE,
	ROUTE_STATUS,
	ROUTE_STORIES,
	ROUTE_STORY,
	ROUTE_POLICY, /* the batch's, or id's when id[0] != '\0' */
	ROUTE_STATS,
	ROUTE_EVENTS, /* serve_events.c */
	ROUTE_EVENTS_STREAM,
	ROUTE_FAILURES, /* GET, POST /v1/stories/ID/failures */
	ROUTE_REQUEUE, /* POST /v1/stories/ID/requeue */
	/* GET /v1/stories/ID/attempts/N/transcript and .../diff */
	ROUTE_ATTEMPT,
	ROUTE_PAGE, /* GET / : the live dashboard (serve_page.c) */
	ROUTE_SESSION, /* POST /session: the dashboard's sign-in */
};

struct req {
	enum route route;
	char id[128];
	int attempt; /* ROUTE_ATTEMPT: N, and which part */
	bool diff;
	char key_name[DB_KEY_NAME_MAX];
	/* / with ?key=: answered 400, the key never read */
	bool key_in_url;
	/* / with neither key nor session: the sign-in's shell, 200 */
	bool shell;
	int status; /* an error found from the headers, or 0 */
	char code[32];
	char msg[300];
	char *body;
	size_t len;
	bool too_large;
	bool over_budget; /* a chunked body past SERVE_BODY_BUDGET */
	size_t held; /* this request's part of serve.body_held */
	/* the request line as it came, before the library decoded it
	 * (serve_uri_log, serve_frame.h) */
	struct serve_raw raw;
	bool started; /* the handler has seen the headers */
	/* the key check's read-only handle, which a GET's views share
	 * (serve_config.h); NULL once the request is answered */
	struct db *db;
};

/* Send j (consumed) with status, as the CLI prints it, with allow as
 * the Allow header when not NULL. */
enum MHD_Result serve_send_json(
    struct MHD_Connection *c, int status, json_t *j, const char *allow);

/* Queue {"error": {"code", "message"}} with status. */
enum MHD_Result serve_send_error(
    struct MHD_Connection *c, int status, const char *code, const char *msg);

/* The answer of an API route (not the page's, not the sign-in's) to a
 * whole, accepted request (serve_answer.c). */
enum MHD_Result serve_route_answer(const struct serve *s,
    struct MHD_Connection *c, struct req *r, const char *method);

#endif
