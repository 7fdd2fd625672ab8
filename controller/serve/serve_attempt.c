/*
 * serve_attempt.c - GET /v1/stories/ID/attempts/N/transcript and
 * .../diff (docs/api.md#attempts): one attempt's transcript and diff
 * from the read model, redacted as `show --attempt` and `diff` print
 * them.  The dashboard's page fetches them when an attempt's link is
 * followed (docs/report.md#attempts), with ?format=text for the lines
 * `show --attempt` prints.  The transcript's answer holds the last
 * SERVE_ATTEMPT_EVENTS events of the log's last SERVE_ATTEMPT_TAIL
 * bytes, so that a huge log is answered in bounded memory and time;
 * `storyctl show` has the whole.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "controller/config/secrets.h"
#include "controller/serve/serve_attempt.h"
#include "controller/serve/serve_int.h"
#include "controller/views/views.h"
#include "controller/views/views_diff.h"
#include "controller/views/views_transcript.h"

#define SERVE_ATTEMPT_EVENTS 1000
/* ... read from the log's last 8 MiB: the service answers on one thread,
 * which a log of hundreds of MB would hold for seconds */
#define SERVE_ATTEMPT_TAIL ((size_t)8 << 20)

/* The newest SERVE_ATTEMPT_EVENTS events as JSON, oldest at head. */
struct ring {
	json_t *ev[SERVE_ATTEMPT_EVENTS];
	size_t n, head, seen;
};

static int
ring_add(const struct transcript_event *e, void *arg)
{
	struct ring *r = arg;
	json_t *j = views_transcript_event_json(e);
	size_t at;

	if (j == NULL)
		return SC_EOS;
	if (r->n < SERVE_ATTEMPT_EVENTS) {
		at = (r->head + r->n++) % SERVE_ATTEMPT_EVENTS;
	} else {
		at = r->head;
		json_decref(r->ev[at]);
		r->head = (r->head + 1) % SERVE_ATTEMPT_EVENTS;
	}
	r->ev[at] = j;
	r->seen++;
	return 0;
}

/* {"format_version", "story", "attempt", "events", "omitted"}. */
static int
transcript_json(json_t **out, const char *id, const struct attempt_row *a,
    const struct redact_values *rv, struct sc_err *err)
{
	struct ring *r = calloc(1, sizeof(*r));
	json_t *arr = json_array();
	size_t i, first = 0;
	int rc;

	*out = NULL;
	if (r == NULL || arr == NULL) {
		rc = err_set(err, SC_EOS, "out of memory");
		goto out;
	}
	rc = views_transcript_each_tail(
	    a->log_path, rv, SERVE_ATTEMPT_TAIL, &first, ring_add, r, err);
	for (i = 0; rc == 0 && i < r->n; i++)
		if (json_array_append(
			arr, r->ev[(r->head + i) % SERVE_ATTEMPT_EVENTS]) < 0)
			rc = err_set(err, SC_EOS, "out of memory");
	if (rc == 0 &&
	    (*out = json_pack("{s:i, s:s, s:i, s:O, s:I, s:I}",
		 "format_version", 1, "story", id, "attempt", a->attempt,
		 "events", arr, "omitted", (json_int_t)(r->seen - r->n),
		 "first_line", (json_int_t)first)) == NULL)
		rc = err_set(err, SC_EOS, "out of memory");
out:
	for (i = 0; r != NULL && i < r->n; i++)
		json_decref(r->ev[(r->head + i) % SERVE_ATTEMPT_EVENTS]);
	free(r);
	json_decref(arr);
	return rc;
}

/* The answer's parts: a JSON body, or a text one; status. */
struct answer {
	int status;
	json_t *j;
	char *text;
	const char *code; /* of an error */
	char msg[1100];
};

static void
fail(struct answer *an, int status, const char *code, const char *msg)
{
	an->status = status;
	an->code = code;
	snprintf(an->msg, sizeof(an->msg), "%s", msg);
}

/* The transcript of a, as JSON or (text) the lines show prints. */
static void
answer_transcript(struct answer *an, const struct config *cfg, const char *id,
    const struct attempt_row *a, bool text)
{
	struct redact_values *rv = NULL;
	struct sc_err err = {0};
	size_t omitted;
	int rc;

	if (a->log_path[0] == '\0') {
		fail(an, 404, "no_log",
		    "the attempt has no log: its agent never "
		    "started");
		return;
	}
	rc = secrets_of_config(&rv, cfg, &err);
	if (rc == 0 && text)
		rc = views_transcript_tail_from(&an->text, &omitted, NULL,
		    a->log_path, rv, SERVE_ATTEMPT_EVENTS, SERVE_ATTEMPT_TAIL,
		    &err);
	else if (rc == 0)
		rc = transcript_json(&an->j, id, a, rv, &err);
	redact_values_free(rv);
	if (rc == SC_EIO)
		fail(an, 404, "no_log", err.msg);
	else if (rc < 0)
		fail(an, 500, "internal", err.msg);
	else
		an->status = 200;
}

static void
answer_diff(struct answer *an, const struct config *cfg,
    const struct story_record *sh, const struct attempt_row *a)
{
	struct views_diff d;
	struct sc_err err = {0};

	if (views_diff_of(&d, cfg, sh, a, &err) < 0) {
		fail(an, 500, "internal", err.msg);
		return;
	}
	if (d.text == NULL) {
		fail(an, 404, "no_diff", d.why);
	} else {
		an->status = 200;
		an->text = d.text;
		d.text = NULL;
	}
	views_diff_release(&d);
}

/* Send an's body: its text as text/plain, its JSON, or its error. */
static enum MHD_Result
send_answer(struct MHD_Connection *c, struct answer *an)
{
	struct MHD_Response *resp;
	enum MHD_Result ret;

	if (an->code != NULL)
		return serve_send_error(c, an->status, an->code, an->msg);
	if (an->text == NULL)
		return serve_send_json(c, an->status, an->j, NULL);
	resp = MHD_create_response_from_buffer_with_free_callback(
	    strlen(an->text), an->text, free);
	if (resp == NULL) {
		free(an->text);
		return MHD_NO;
	}
	MHD_add_response_header(
	    resp, "Content-Type", "text/plain; charset=utf-8");
	MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff");
	MHD_add_response_header(resp, "Cache-Control", "no-store");
	ret = MHD_queue_response(c, (unsigned int)an->status, resp);
	MHD_destroy_response(resp);
	return ret;
}

enum MHD_Result
serve_attempt(struct MHD_Connection *c, const struct cli *cli, const char *id,
    int attempt, bool diff)
{
	const char *fmt =
	    MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "format");
	struct answer an = {0};
	struct story_record sh;
	struct sc_err err = {0};
	struct view v;
	const struct attempt_row *a = NULL;
	int rc;

	memset(&sh, 0, sizeof(sh));
	rc = view_open(&v, cli->config_path, cli->lender, false, &err);
	if (rc == 0)
		rc = views_story_read(&sh, &v, id, &err);
	if (rc == 0 && (a = views_story_attempt(&sh, attempt)) == NULL)
		rc = views_story_no_attempt(&sh, "attempt", attempt, &err);
	if (rc == SC_EUSAGE)
		fail(&an, 404, "not_found", err.msg);
	else if (rc < 0)
		fail(&an, 500, "internal", err.msg);
	else if (diff)
		answer_diff(&an, &v.cfg, &sh, a);
	else
		answer_transcript(&an, &v.cfg, id, a,
		    fmt != NULL && strcmp(fmt, "text") == 0);
	views_story_release(&sh);
	view_close(&v);
	return send_answer(c, &an);
}
