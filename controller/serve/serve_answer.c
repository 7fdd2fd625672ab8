/*
 * serve_answer.c - see serve_int.h: the answers of the API's routes once
 * a request is whole and accepted: the read views, stats, retry
 * policies, events, failure records and requeue (docs/api.md).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "controller/optlib_mhd.h"
#include "controller/serve/serve_attempt.h"
#include "controller/serve/serve_events.h"
#include "controller/serve/serve_failures.h"
#include "controller/serve/serve_int.h"
#include "controller/serve/serve_policy.h"
#include "controller/views/view.h"
#include "controller/views/views.h"
#include "state/db.h"

/* GET /v1/stats[?batch=ID | ?all=1]: stats --json's selection; a bad
 * query is 400, no such batch 404 (docs/api.md#stats). */
static int
serve_stats(json_t **j, int *status, struct view *v, struct MHD_Connection *c,
    struct sc_err *err)
{
	const char *all =
	    MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "all");
	int64_t batch;
	int rc;

	*status = MHD_HTTP_BAD_REQUEST;
	rc = views_stats_select(&batch,
	    MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "batch"),
	    all != NULL && strcmp(all, "0") != 0, err);
	if (rc < 0)
		return rc;
	*status = MHD_HTTP_NOT_FOUND;
	return views_stats_json(j, v, batch, err);
}

/* The read views: the JSON of status, list, show and stats --json. */
static enum MHD_Result
serve_view(const struct serve *s, struct MHD_Connection *c, struct req *r)
{
	struct view v;
	struct sc_err err = {0};
	json_t *j = NULL;
	int rc, usage = MHD_HTTP_NOT_FOUND;

	rc = view_open(&v, s->cli->config_path, s->cli->lender, false, &err);
	if (rc == 0 && r->route == ROUTE_STATS)
		rc = serve_stats(&j, &usage, &v, c, &err);
	else if (rc == 0 && r->route == ROUTE_STATUS)
		rc = views_status_json(&j, &v, &err);
	else if (rc == 0 && r->route == ROUTE_STORIES)
		rc = views_list_json(&j, &v, NULL, &err);
	else if (rc == 0)
		rc = views_show_json(&j, &v, r->id, &err);
	view_close(&v);
	if (rc == SC_EUSAGE &&
	    (r->route == ROUTE_STORY || r->route == ROUTE_STATS))
		return serve_send_error(c, usage,
		    usage == MHD_HTTP_NOT_FOUND ? "not_found" : "bad_query",
		    err.msg);
	if (rc < 0)
		return serve_send_error(
		    c, MHD_HTTP_INTERNAL_SERVER_ERROR, "internal", err.msg);
	return serve_send_json(c, MHD_HTTP_OK, j, NULL);
}

/* The retry-policy routes (docs/api.md#retry-policy). */
static enum MHD_Result
serve_policy(const struct serve *s, struct MHD_Connection *c, struct req *r,
    const char *method)
{
	json_t *j = NULL;
	int status = 500;

	if (serve_policy_answer(&j, &status, s->cli, method,
		r->id[0] != '\0' ? r->id : NULL, r->body, r->len,
		r->key_name) < 0)
		return MHD_NO;
	return serve_send_json(c, status, j, NULL);
}

/* The event log, a page or the stream (docs/api.md#events). */
static enum MHD_Result
serve_events(const struct serve *s, struct MHD_Connection *c, struct req *r)
{
	struct MHD_Response *resp = NULL;
	enum MHD_Result ret;
	json_t *j = NULL;
	int status = 500;

	if (r->route == ROUTE_EVENTS &&
	    serve_events_page(&j, &status, s->cli, c) < 0)
		return MHD_NO;
	if (r->route == ROUTE_EVENTS_STREAM &&
	    serve_events_stream(
		&resp, &j, &status, s->ev, s->cli, c, r->key_name) < 0)
		return MHD_NO;
	if (resp == NULL)
		return serve_send_json(c, status, j, NULL);
	ret = MHD_queue_response(c, (unsigned int)status, resp);
	MHD_destroy_response(resp);
	return ret;
}

/* The failure-record and requeue routes (docs/api.md#failure-records). */
static enum MHD_Result
serve_failures(const struct serve *s, struct MHD_Connection *c, struct req *r,
    const char *method)
{
	json_t *j = NULL;
	int status = 500;

	if ((r->route == ROUTE_REQUEUE
		    ? serve_requeue_answer(&j, &status, s->cli, r->id)
		    : serve_failures_answer(&j, &status, s->cli, method, r->id,
			  r->body, r->len, r->key_name)) < 0)
		return MHD_NO;
	return serve_send_json(c, status, j, NULL);
}

enum MHD_Result
serve_route_answer(const struct serve *s, struct MHD_Connection *c,
    struct req *r, const char *method)
{
	if (r->route == ROUTE_POLICY)
		return serve_policy(s, c, r, method);
	if (r->route == ROUTE_EVENTS || r->route == ROUTE_EVENTS_STREAM)
		return serve_events(s, c, r);
	if (r->route == ROUTE_FAILURES || r->route == ROUTE_REQUEUE)
		return serve_failures(s, c, r, method);
	if (r->route == ROUTE_ATTEMPT)
		return serve_attempt(c, s->cli, r->id, r->attempt, r->diff);
	return serve_view(s, c, r);
}
