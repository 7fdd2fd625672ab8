/*
 * serve.c - see serve.h: requests, keys, routes and the read views
 * (docs/api.md).
 *
 * One internal polling thread (MHD_USE_AUTO_INTERNAL_THREAD: epoll or
 * poll) answers every connection, so at most one handler runs at a time:
 * the config loader and the views were written for one thread, and each
 * request is a few indexed reads.  A slow client costs a socket, not a
 * thread, and is closed after SERVE_TIMEOUT_S (docs/api.md#limits).  An
 * event stream waits suspended, out of that thread (serve_events.c).
 */
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include <sodium.h>

#include "controller/optlib_mhd.h"
#include "controller/config/config.h"
#include "controller/serve/serve.h"
#include "controller/serve/serve_config.h"
#include "controller/serve/serve_events.h"
#include "controller/serve/serve_listen.h"
#include "controller/serve/serve_page.h"
#include "controller/serve/serve_frame.h"
#include "controller/serve/serve_guard.h"
#include "controller/serve/serve_int.h"
#include "controller/serve/serve_session.h"
#include "state/apikey.h"
#include "state/db.h"
#include "strategies/number.h"

static void
req_fail(struct req *r, int status, const char *code, const char *msg)
{
	r->status = status;
	snprintf(r->code, sizeof(r->code), "%s", code);
	snprintf(r->msg, sizeof(r->msg), "%s", msg);
}

/* Send j (consumed) with status, as the CLI prints it. */
enum MHD_Result
serve_send_json(
    struct MHD_Connection *c, int status, json_t *j, const char *allow)
{
	struct MHD_Response *resp;
	enum MHD_Result ret = MHD_NO;
	char *p,
	    *text =
		j ? json_dumps(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER) : NULL;
	size_t len;

	json_decref(j);
	if (text == NULL)
		return MHD_NO;
	/* a newline at the end, as the CLI prints it */
	len = strlen(text);
	if ((p = realloc(text, len + 2)) == NULL) {
		free(text);
		return MHD_NO;
	}
	text = p;
	text[len++] = '\n';
	text[len] = '\0';
	resp =
	    MHD_create_response_from_buffer_with_free_callback(len, text, free);
	if (resp == NULL) {
		free(text);
		return MHD_NO;
	}
	MHD_add_response_header(resp, "Content-Type", "application/json");
	if (allow != NULL)
		MHD_add_response_header(resp, "Allow", allow);
	ret = MHD_queue_response(c, (unsigned int)status, resp);
	MHD_destroy_response(resp);
	return ret;
}

/* {"error": {"code", "message"}} (docs/api.md#errors). */
enum MHD_Result
serve_send_error(
    struct MHD_Connection *c, int status, const char *code, const char *msg)
{
	return serve_send_json(c, status,
	    json_pack("{s:{s:s, s:s}}", "error", "code", code, "message", msg),
	    status == MHD_HTTP_METHOD_NOT_ALLOWED ? "GET" : NULL);
}

/* "N/transcript" or "N/diff" after /v1/stories/ID/attempts/
 * (docs/api.md#attempts): N a number from 1 up, checked here. */
static void
serve_route_attempt(struct req *r, const char *rest)
{
	char num[16];
	const char *slash = strchr(rest, '/');
	size_t len = slash != NULL ? (size_t)(slash - rest) : 0;
	struct sc_err err = {0};

	if (slash == NULL ||
	    (strcmp(slash + 1, "transcript") != 0 &&
		strcmp(slash + 1, "diff") != 0))
		return;
	if (len == 0 || len >= sizeof(num)) {
		req_fail(r, MHD_HTTP_BAD_REQUEST, "bad_attempt",
		    "an attempt is a number from 1 up");
		return;
	}
	memcpy(num, rest, len);
	num[len] = '\0';
	if (number_parse_int(&r->attempt, num, "attempt", 1, INT_MAX, &err) <
	    0) {
		req_fail(r, MHD_HTTP_BAD_REQUEST, "bad_attempt",
		    "an attempt is a number from 1 up");
		return;
	}
	r->diff = strcmp(slash + 1, "diff") == 0;
	r->route = ROUTE_ATTEMPT;
}

/* The route of path; ids are checked before any lookup, so "..", an
 * encoded slash (already decoded by the library into another segment)
 * or an overlong id never reaches the database (docs/api.md#ids). */
static void
serve_route(struct req *r, const char *path)
{
	const char *id, *slash;
	size_t len;

	if (strcmp(path, "/") == 0)
		r->route = ROUTE_PAGE;
	else if (strcmp(path, "/v1/status") == 0)
		r->route = ROUTE_STATUS;
	else if (strcmp(path, "/v1/stories") == 0)
		r->route = ROUTE_STORIES;
	else if (strcmp(path, "/v1/retry-policy") == 0)
		r->route = ROUTE_POLICY;
	else if (strcmp(path, "/v1/stats") == 0)
		r->route = ROUTE_STATS;
	else if (strcmp(path, "/v1/events") == 0)
		r->route = ROUTE_EVENTS;
	else if (strcmp(path, "/v1/events/stream") == 0)
		r->route = ROUTE_EVENTS_STREAM;
	if (r->route != ROUTE_NONE || strncmp(path, "/v1/stories/", 12) != 0)
		return;
	id = path + 12;
	slash = strchr(id, '/');
	len = slash ? (size_t)(slash - id) : strlen(id);
	if (len == 0 || len >= sizeof(r->id)) {
		req_fail(r, MHD_HTTP_BAD_REQUEST, "bad_id",
		    "a story id is 1 to 127 characters");
		return;
	}
	memcpy(r->id, id, len);
	r->id[len] = '\0';
	if (!config_id_valid(r->id)) {
		req_fail(r, MHD_HTTP_BAD_REQUEST, "bad_id",
		    "a story id matches [A-Za-z0-9][A-Za-z0-9._-]*");
		return;
	}
	if (slash == NULL) {
		r->route = ROUTE_STORY;
		return;
	}
	if (strncmp(slash + 1, "attempts/", 9) == 0)
		serve_route_attempt(r, slash + 10);
	else if (strcmp(slash + 1, "retry-policy") == 0)
		r->route = ROUTE_POLICY;
	else if (strcmp(slash + 1, "failures") == 0)
		r->route = ROUTE_FAILURES;
	else if (strcmp(slash + 1, "requeue") == 0)
		r->route = ROUTE_REQUEUE;
}

/* The methods a route takes, as the Allow header of a 405 says them. */
static const char *
route_allow(enum route route)
{
	switch (route) {
	case ROUTE_POLICY:
		return "GET, PUT, DELETE";
	case ROUTE_FAILURES:
		return "GET, POST";
	case ROUTE_REQUEUE:
	case ROUTE_SESSION:
		return "POST";
	default:
		return "GET";
	}
}

/* The key's scope: 1 write, 0 read, -1 no such key.  Every stored hash
 * is compared in constant time (state/apikey.c).  With sess instead of a
 * key, the session's key: still stored (not revoked, nor revoked and
 * added again under its name), and then 0 whatever its scope
 * (docs/api.md#the-dashboard).  who, when not NULL, gets the row's name
 * and hash.  r->db keeps the handle opened for it when keep (a GET: its
 * views read with it). */
static int
serve_key_scope(const struct serve *s, struct req *r, const char *key,
    const struct serve_session_key *sess, struct serve_session_key *who,
    bool keep)
{
	struct db *db = NULL;
	struct key_row *rows = NULL;
	struct stat sb;
	char path[4096];
	size_t k, n = 0;
	int i = -1, scope = -1;

	snprintf(path, sizeof(path), "%s/state.db", s->state_dir);
	if ((key == NULL && sess == NULL) || stat(path, &sb) < 0 ||
	    db_open_readonly(&db, s->state_dir, NULL) < 0)
		goto out;
	if (db_key_list(db, &rows, &n, NULL) == 0 && key != NULL)
		i = apikey_match(rows, n, key);
	for (k = 0; sess != NULL && k < n && i < 0; k++)
		if (strcmp(rows[k].sha256, sess->sha256) == 0 &&
		    strcmp(rows[k].name, sess->name) == 0)
			i = (int)k;
	if (i >= 0) {
		scope = rows[i].write && sess == NULL ? 1 : 0;
		/* the name, never the key, goes with an override stored */
		snprintf(r->key_name, sizeof(r->key_name), "%s", rows[i].name);
		if (who != NULL) {
			snprintf(
			    who->name, sizeof(who->name), "%s", rows[i].name);
			snprintf(who->sha256, sizeof(who->sha256), "%s",
			    rows[i].sha256);
		}
	}
out:
	free(rows);
	if (keep && scope >= 0)
		r->db = db;
	else
		db_close(db);
	return scope;
}

/* POST /session, the dashboard's sign-in: its key comes in the body,
 * so only the method, the page it comes from and the body's size are
 * checked here. */
static void
serve_check_signin(
    struct req *r, struct MHD_Connection *c, const char *method, const char *cl)
{
	r->route = ROUTE_SESSION;
	if (strcmp(method, "POST") != 0)
		req_fail(r, MHD_HTTP_METHOD_NOT_ALLOWED, "method_not_allowed",
		    "this route takes POST");
	else if (!serve_page_signin_allowed(c))
		req_fail(r, MHD_HTTP_FORBIDDEN, "forbidden",
		    "a sign-in from another site's page is refused");
	else if (cl != NULL && strtoull(cl, NULL, 10) > SERVE_SIGNIN_MAX)
		req_fail(r, MHD_HTTP_CONTENT_TOO_LARGE, "too_large",
		    "a sign-in body is at most 4 KiB");
}

/* The scope of the request's key or dashboard session (see
 * serve_key_scope()); a 401 when there is none. */
static int
serve_check_auth(const struct serve *s, struct req *r, const char *key,
    const char *sid, bool get)
{
	struct serve_session_key sk;
	int scope = -1;

	/* a body may take its time: a request with one does not keep the
	 * handle (and writes open their own) */
	if (sid == NULL)
		scope = serve_key_scope(s, r, key, NULL, NULL, get);
	else if (serve_session_find(s->sessions, &sk, sid, time(NULL)) == 0) {
		scope = serve_key_scope(s, r, NULL, &sk, NULL, get);
		if (scope < 0) /* its key was revoked: it ends now */
			serve_session_drop(s->sessions, sid);
	}
	sodium_memzero(&sk, sizeof(sk));
	if (scope < 0)
		req_fail(r, MHD_HTTP_UNAUTHORIZED, "unauthorized",
		    key ? "the X-API-Key is not a key of this storyctl"
			: sid
			? "the dashboard's session has ended (expired, "
			  "or its key revoked): sign in again at /"
			: "send a key in X-API-Key (storyctl key add NAME)");
	return scope;
}

/* The methods each route takes: a 405 for any other. */
static void
serve_check_method(struct req *r, const char *method, bool get)
{
	switch (r->route) {
	case ROUTE_POLICY:
		if (!get && strcmp(method, "PUT") != 0 &&
		    strcmp(method, "DELETE") != 0)
			req_fail(r, MHD_HTTP_METHOD_NOT_ALLOWED,
			    "method_not_allowed",
			    "this route takes GET, PUT and DELETE");
		break;
	case ROUTE_FAILURES:
		if (!get && strcmp(method, "POST") != 0)
			req_fail(r, MHD_HTTP_METHOD_NOT_ALLOWED,
			    "method_not_allowed",
			    "this route takes GET and POST");
		break;
	case ROUTE_REQUEUE:
		if (strcmp(method, "POST") != 0)
			req_fail(r, MHD_HTTP_METHOD_NOT_ALLOWED,
			    "method_not_allowed", "this route takes POST");
		break;
	default:
		if (!get)
			req_fail(r, MHD_HTTP_METHOD_NOT_ALLOWED,
			    "method_not_allowed", "this route takes GET");
		break;
	}
}

/* Once routed: 404, what a dashboard session and a read key may not
 * do, then the method. */
static void
serve_check_route(
    struct req *r, const char *method, const char *sid, bool get, int scope)
{
	if (r->route == ROUTE_NONE)
		req_fail(r, MHD_HTTP_NOT_FOUND, "not_found", "no such route");
	else if (sid != NULL && r->route != ROUTE_PAGE &&
	    r->route != ROUTE_EVENTS_STREAM && r->route != ROUTE_ATTEMPT)
		req_fail(r, MHD_HTTP_UNAUTHORIZED, "unauthorized",
		    "a dashboard session reads the page, its event stream and "
		    "an attempt's transcript and diff only: send a key in "
		    "X-API-Key");
	else if (!get && scope == 0)
		req_fail(r, MHD_HTTP_FORBIDDEN, "forbidden",
		    "a read key can only GET");
	else
		serve_check_method(r, method, get);
}

/* Everything decided from the headers, in the order of
 * docs/api.md#errors: 401, 413, 400/404, 403, 405. */
static void
serve_check(const struct serve *s, struct req *r, struct MHD_Connection *c,
    const char *url, const char *method)
{
	const char *cl = MHD_lookup_connection_value(
	    c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
	bool get = strcmp(method, "GET") == 0 || strcmp(method, "HEAD") == 0;
	const char *key =
	    MHD_lookup_connection_value(c, MHD_HEADER_KIND, "X-API-Key");
	/* for a GET without a key, the dashboard's session, from its header
	 * only (never a cookie): never a key, never a write
	 * (docs/api.md#the-dashboard) */
	const char *sid = key == NULL && get ? serve_page_session(c) : NULL;
	int scope;

	if (strcmp(url, "/session") == 0) {
		serve_check_signin(r, c, method, cl);
		return;
	}
	if (get && serve_page_key_in_url(c, url)) {
		/* a key in an address is not read, right or wrong */
		r->route = ROUTE_PAGE;
		r->key_in_url = true;
		return;
	}
	if (get && key == NULL && sid == NULL && serve_page_is_shell(c, url)) {
		/* the shell shows nothing of the batch: its script fetches
		 * the report with the tab's session */
		r->route = ROUTE_PAGE;
		r->shell = true;
		return;
	}
	scope = serve_check_auth(s, r, key, sid, get);
	if (scope < 0)
		return;
	if (cl != NULL && strtoull(cl, NULL, 10) > SERVE_BODY_MAX) {
		req_fail(r, MHD_HTTP_CONTENT_TOO_LARGE, "too_large",
		    "a request body is at most 1 MiB");
		return;
	}
	serve_route(r, url);
	if (r->status == 0)
		serve_check_route(r, method, sid, get, scope);
}

/* Hold up to want bytes more of r's body within SERVE_BODY_BUDGET,
 * across every connection: false when they do not fit. */
static bool
serve_hold(struct serve *s, struct req *r, size_t want)
{
	if (want > SERVE_BODY_BUDGET - s->body_held)
		return false;
	s->body_held += want;
	r->held += want;
	return true;
}

/* Keep up to SERVE_BODY_MAX bytes of the body (for the write routes to
 * come); beyond that only remember that it was too large.  A chunked
 * body is held as it comes, within SERVE_BODY_BUDGET; one with a
 * Content-Length was held whole before (docs/api.md#limits). */
static void
serve_body(struct serve *s, struct req *r, const char *data, size_t size)
{
	char *p;

	/* the sign-in's body comes before any key is checked: a form of
	 * one key, never more than SERVE_SIGNIN_MAX */
	if (r->too_large || r->over_budget || r->len + size > SERVE_BODY_MAX ||
	    (r->route == ROUTE_SESSION && r->len + size > SERVE_SIGNIN_MAX)) {
		r->too_large = !r->over_budget;
		return;
	}
	if (r->len + size > r->held &&
	    !serve_hold(s, r, r->len + size - r->held)) {
		r->over_budget = true;
		return;
	}
	if ((p = realloc(r->body, r->len + size + 1)) == NULL) {
		r->too_large = true;
		return;
	}
	r->body = p;
	memcpy(r->body + r->len, data, size);
	r->len += size;
	r->body[r->len] = '\0';
}

/* POST /session: the key of the form exchanged for a session, a page
 * whose script keeps its id in the tab (no cookie); a key that is not
 * one is the form again, 401 (docs/api.md#the-dashboard). */
static enum MHD_Result
serve_signin(const struct serve *s, struct MHD_Connection *c, struct req *r)
{
	struct serve_session_key who;
	struct sc_err err = {0};
	char key[APIKEY_MAX + 1], id[SERVE_SESSION_ID_LEN + 1];
	enum MHD_Result ret;

	if (serve_page_form_key(key, sizeof(key), r->body, r->len) < 0 ||
	    serve_key_scope(s, r, key, NULL, &who, false) < 0)
		ret = serve_page_signin_failed(c);
	else if (serve_session_add(s->sessions, id, &who, time(NULL), &err) < 0)
		ret = serve_send_error(
		    c, MHD_HTTP_INTERNAL_SERVER_ERROR, "internal", err.msg);
	else
		ret = serve_page_signed_in(c, id);
	sodium_memzero(key, sizeof(key));
	sodium_memzero(id, sizeof(id));
	sodium_memzero(&who, sizeof(who));
	return ret;
}

/* The request, whole and accepted: its answer. */
static enum MHD_Result
serve_answer(const struct serve *s, struct MHD_Connection *c, struct req *r,
    const char *method)
{
	if (r->too_large)
		return serve_send_error(c, MHD_HTTP_CONTENT_TOO_LARGE,
		    "too_large",
		    r->route == ROUTE_SESSION
			? "a sign-in body is at most 4 KiB"
			: "a request body is at most 1 MiB");
	if (r->route == ROUTE_PAGE && r->key_in_url)
		return serve_page_key_refused(c);
	if (r->route == ROUTE_PAGE && r->shell)
		return serve_page_shell(c);
	if (r->route == ROUTE_PAGE)
		return serve_page(c, s->cli);
	if (r->route == ROUTE_SESSION)
		return serve_signin(s, c, r);
	return serve_route_answer(s, c, r, method);
}

/* The request's framing, before its key or route
 * (serve_frame_check()): 400 bad_request when it is refused. */
static void
serve_frame(struct req *r, struct MHD_Connection *c, const char *url,
    const char *method, const char *version)
{
	const char *why = serve_frame_check(c, &r->raw, url, method, version);

	if (why != NULL)
		req_fail(r, MHD_HTTP_BAD_REQUEST, "bad_request", why);
}

/* 503 busy with Retry-After: the bodies held are at the budget. */
static enum MHD_Result
serve_send_busy(struct MHD_Connection *c)
{
	static const char text[] =
	    "{\n  \"error\": {\n    \"code\": \"busy\",\n    \"message\": "
	    "\"the server holds as many request bodies as it may; try "
	    "again shortly\"\n  }\n}\n";
	struct MHD_Response *resp =
	    MHD_create_response_from_buffer_with_free_callback(
		sizeof(text) - 1, (void *)text, NULL);
	enum MHD_Result ret;

	if (resp == NULL)
		return MHD_NO;
	MHD_add_response_header(resp, "Content-Type", "application/json");
	MHD_add_response_header(resp, "Retry-After", "1");
	ret = MHD_queue_response(c, MHD_HTTP_SERVICE_UNAVAILABLE, resp);
	MHD_destroy_response(resp);
	return ret;
}

static enum MHD_Result
serve_handle(void *cls, struct MHD_Connection *c, const char *url,
    const char *method, const char *version, const char *upload_data,
    size_t *upload_data_size, void **con_cls)
{
	struct serve *s = cls;
	struct req *r = *con_cls;
	const char *cl;
	enum MHD_Result ret;

	/* serve_uri_log made r; without it (out of memory) no answer */
	if (r == NULL)
		return MHD_NO;
	if (!r->started) {
		r->started = true;
		/* a malformed request first, then its key and route */
		serve_frame(r, c, url, method, version);
		if (r->status == 0)
			serve_check(s, r, c, url, method);
		cl = MHD_lookup_connection_value(
		    c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
		/* only an accepted write's body is held, and only within
		 * the budget of all connections (docs/api.md#limits) */
		if (r->status == 0 && cl != NULL &&
		    !serve_hold(s, r, (size_t)strtoull(cl, NULL, 10))) {
			req_fail(r, MHD_HTTP_SERVICE_UNAVAILABLE, "busy",
			    "the bodies held are at the budget");
			return serve_send_busy(c);
		}
		/* refused from its headers: answered before any body is
		 * read */
		if (r->status == MHD_HTTP_UNAUTHORIZED && strcmp(url, "/") == 0)
			return serve_page_unauthorized(c);
		if (r->status == MHD_HTTP_METHOD_NOT_ALLOWED)
			return serve_send_json(c, r->status,
			    json_pack("{s:{s:s, s:s}}", "error", "code",
				r->code, "message", r->msg),
			    route_allow(r->route));
		if (r->status != 0)
			return serve_send_error(c, r->status, r->code, r->msg);
		return MHD_YES;
	}
	if (r->status != 0) {
		*upload_data_size = 0;
		return MHD_YES;
	}
	if (*upload_data_size > 0) {
		serve_body(s, r, upload_data, *upload_data_size);
		*upload_data_size = 0;
		return MHD_YES;
	}
	if (r->over_budget)
		return serve_send_busy(c);
	/* the request is whole: from here only the library's idle timeout
	 * holds (docs/api.md#limits) */
	serve_guard_arrived(s->guard, c);
	/* the views of this request read with the key check's handle;
	 * it is closed once they are done (an event stream reads with its
	 * own) */
	serve_config_use_db(s->conf, r->db, s->state_dir);
	ret = serve_answer(s, c, r, method);
	serve_config_use_db(s->conf, NULL, NULL);
	db_close(r->db);
	r->db = NULL;
	return ret;
}

/* MHD_OPTION_URI_LOG_CALLBACK: the request line has just been split,
 * nothing decoded yet.  The request's state starts here, with the
 * target's length as a C string (serve_frame compares it with where the
 * version begins: a raw NUL cut it), and whether its path holds a space
 * or an encoded slash, which would change the route once decoded
 * (docs/api.md#ids). */
static void *
serve_uri_log(void *cls, const char *uri, struct MHD_Connection *c)
{
	struct req *r = calloc(1, sizeof(*r));

	(void)cls;
	(void)c;
	if (r != NULL && uri != NULL)
		serve_frame_raw(&r->raw, uri);
	return r;
}

/* The library's own %HH decoding, except that a %00 becomes DEL (0x7f),
 * a byte no id or route holds: a decoded NUL would end the path early,
 * and /v1/stories/s1%00x would be answered as /v1/stories/s1
 * (docs/api.md#ids). */
static size_t
serve_unescape(void *cls, struct MHD_Connection *c, char *s)
{
	size_t i, len = MHD_http_unescape(s);

	for (i = 0; i < len; i++)
		if (s[i] == '\0')
			s[i] = 0x7f;
	return len;
}

static void
serve_done(void *cls, struct MHD_Connection *c, void **con_cls,
    enum MHD_RequestTerminationCode toe)
{
	struct serve *s = cls;
	struct req *r = *con_cls;

	if (r != NULL) {
		free(r->body);
		db_close(r->db);
		/* its part of the budget is free for the next body */
		s->body_held -= r->held;
	}
	free(r);
	*con_cls = NULL;
	/* a kept-alive connection waits for its next request */
	serve_guard_next(s->guard, c);
}

/* The daemon on l's address, with TLS when l has a certificate
 * (docs/api.md#tls); suspend and resume for the event streams
 * (controller/serve/serve_events.c). */
static struct MHD_Daemon *
serve_daemon(struct serve *s, const struct serve_listen *l)
{
	const struct sockaddr *addr = (const struct sockaddr *)&l->addr;
	unsigned int flags =
	    MHD_USE_AUTO_INTERNAL_THREAD | MHD_ALLOW_SUSPEND_RESUME;
	struct MHD_OptionItem tls[] = {
	    {MHD_OPTION_HTTPS_MEM_CERT, 0, l->tls_cert},
	    {MHD_OPTION_HTTPS_MEM_KEY, 0, l->tls_key},
	    {MHD_OPTION_END, 0, NULL}};

	if (addr->sa_family == AF_INET6)
		flags |= MHD_USE_IPv6;
	if (l->tls_cert != NULL)
		flags |= MHD_USE_TLS;
	else
		tls[0].option = MHD_OPTION_END;
	return MHD_start_daemon(flags, 0, NULL, NULL, serve_handle, s,
	    MHD_OPTION_SOCK_ADDR, addr, MHD_OPTION_CONNECTION_TIMEOUT,
	    (unsigned int)SERVE_TIMEOUT_S, MHD_OPTION_CONNECTION_LIMIT,
	    (unsigned int)SERVE_CONN_MAX, MHD_OPTION_NOTIFY_COMPLETED,
	    serve_done, s, MHD_OPTION_UNESCAPE_CALLBACK, serve_unescape, NULL,
	    MHD_OPTION_URI_LOG_CALLBACK, serve_uri_log, NULL,
	    MHD_OPTION_NOTIFY_CONNECTION, serve_guard_notify, s->guard,
	    MHD_OPTION_ARRAY, tls, MHD_OPTION_END);
}

int
serve_start(struct serve **out, int *port, const struct cli *cli,
    const char *state_dir, const struct serve_listen *l, struct sc_err *err)
{
	struct serve *s = calloc(1, sizeof(*s));
	const union MHD_DaemonInfo *info;
	sigset_t block, old;
	int rc = 0;

	*out = NULL;
	if ((rc = optlib_mhd_load(err)) < 0)
		goto out;
	if (s == NULL || (s->state_dir = strdup(state_dir)) == NULL) {
		rc = err_set(err, SC_EOS, "out of memory");
		goto out;
	}
	s->cli_copy = *cli;
	s->cli = &s->cli_copy;
	/* the threads started here take no signal: the command's own
	 * thread handles them (serve's sigwait, run's handlers) */
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGCHLD);
	pthread_sigmask(SIG_BLOCK, &block, &old);
	rc = serve_config_new(&s->conf, err);
	s->cli_copy.lender = serve_config_lender(s->conf);
	if (rc == 0)
		rc = serve_sessions_new(&s->sessions, err);
	if (rc == 0)
		rc = serve_events_new(&s->ev, state_dir, err);
	if (rc == 0)
		rc = serve_guard_start(&s->guard, SERVE_TIMEOUT_S * 1000, err);
	if (rc == 0 && (s->d = serve_daemon(s, l)) == NULL)
		rc = err_set(err, SC_EOS,
		    "serve: cannot listen on %s (in use, or not an address "
		    "of this machine%s)",
		    l->spec,
		    l->tls_cert != NULL
			? "; or --tls-cert and --tls-key are not a PEM "
			  "certificate and its key"
			: "");
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc < 0)
		goto out;
	info = MHD_get_daemon_info(s->d, MHD_DAEMON_INFO_BIND_PORT);
	*port = info != NULL ? info->port : 0;
out:
	if (rc < 0) {
		serve_stop(s);
		s = NULL;
	}
	*out = s;
	return rc;
}

void
serve_stop(struct serve *s)
{
	if (s == NULL)
		return;
	/* no connection may be suspended when the daemon stops: the
	 * streams end first, each with the events written so far */
	serve_events_drain(s->ev);
	if (s->d != NULL)
		MHD_stop_daemon(s->d);
	serve_events_free(s->ev);
	/* after the daemon: its last connections are told closed first */
	serve_guard_stop(s->guard);
	serve_config_free(s->conf);
	serve_sessions_free(s->sessions);
	free(s->state_dir);
	free(s);
}
