/*
 * serve_events.c - see serve_events.h: GET /v1/events and the
 * server-sent events of /v1/events/stream (docs/api.md#events).
 *
 * A stream's content reader runs in the daemon's one polling thread and
 * never waits there.  It sends what it has; with nothing, it reads the
 * events after the last one sent (one indexed read, the stream's own
 * read-only connection); with still nothing, a heartbeat comment when
 * one is due, else it suspends the connection and returns 0.  The ticker
 * thread resumes every suspended stream each SERVE_EVENTS_POLL_MS.  The
 * list of streams and each one's "suspended" are kept under one mutex,
 * so a connection is resumed only after it was suspended, and never
 * after its stream was freed.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "controller/optlib_mhd.h"
#include "controller/clock.h"
#include "controller/config/config.h"
#include "controller/serve/serve_events.h"
#include "controller/serve/serve_guard.h"
#include "controller/views/view.h"
#include "controller/views/views.h"
#include "state/db.h"

/* Events read at a time by a stream: its buffer stays small. */
#define STREAM_BATCH 256
/* How long serve_events_drain() waits for the streams to end. */
#define DRAIN_MS 3000
/* How often a stream looks at its key again: a revoked key ends it
 * within this and a tick of the ticker (docs/api.md#limits). */
#define KEY_CHECK_MS 500

struct stream {
	struct serve_events *ev;
	struct MHD_Connection *c;
	struct stream *next;
	bool suspended; /* under ev->mu */
	struct db *db; /* opened on the first read */
	struct event_query q; /* q.after_id: the last event sent */
	char story[128];
	char *buf; /* what is still to send: buf[off..len) */
	size_t len, off, cap;
	int64_t last_sent_ms; /* clock_mono_ms() */
	/* the key it was opened with: its name, and its hash once read */
	char key_name[DB_KEY_NAME_MAX];
	char key_sha256[65];
	int64_t key_checked_ms;
	unsigned char client[SERVE_CLIENT_LEN]; /* serve_client_of() */
};

struct serve_events {
	pthread_mutex_t mu;
	pthread_cond_t cond; /* the ticker's wake-up; a stream's end */
	pthread_t ticker;
	bool ticker_up;
	bool quit; /* the ticker ends */
	bool stopping; /* no stream suspends any more */
	struct stream *streams;
	size_t nstreams;
	char *state_dir;
};

/* What a request asked for: the query and Last-Event-ID. */
struct params {
	int64_t after, batch;
	char story[128];
	size_t limit;
};

static json_t *
error_json(const char *code, const char *msg)
{
	return json_pack(
	    "{s:{s:s, s:s}}", "error", "code", code, "message", msg);
}

/* A decimal number in [min, max], digits only. */
static bool
parse_num(int64_t *out, const char *s, int64_t min, int64_t max)
{
	char *end = NULL;
	long long v;

	if (s == NULL || s[0] < '0' || s[0] > '9')
		return false;
	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno != 0 || *end != '\0' || v < min || v > max)
		return false;
	*out = v;
	return true;
}

/* The query of c into *p; false with *out and *status the error
 * (docs/api.md#events). */
static bool
params_parse(struct params *p, json_t **out, int *status, const struct cli *cli,
    struct MHD_Connection *c, bool stream)
{
	const char *after =
	    MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "after");
	const char *limit =
	    MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "limit");
	const char *batch =
	    MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "batch");
	const char *story =
	    MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "story");
	const char *last =
	    MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Last-Event-ID");
	int64_t n = SERVE_EVENTS_LIMIT_DEFAULT;
	const char *why = NULL;

	memset(p, 0, sizeof(*p));
	/* a reconnecting EventSource repeats the URL's after=: the id it
	 * saw last is the newer news */
	if (stream && last != NULL && last[0] != '\0')
		after = last;
	if (after != NULL && !parse_num(&p->after, after, 0, INT64_MAX))
		why = stream && after == last
		    ? "Last-Event-ID is an event's id, a number >= 0"
		    : "after is an event's id, a number >= 0";
	else if (batch != NULL && !parse_num(&p->batch, batch, 1, INT64_MAX))
		why = "batch is a batch's number, >= 1";
	else if (!stream && limit != NULL &&
	    !parse_num(&n, limit, 1, SERVE_EVENTS_LIMIT_MAX))
		why = "limit is a number from 1 to 10000";
	if (why != NULL) {
		*status = MHD_HTTP_BAD_REQUEST;
		*out = error_json("bad_query", why);
		return false;
	}
	p->limit = (size_t)n;
	if (story == NULL)
		return true;
	if (strlen(story) >= sizeof(p->story) || !config_id_valid(story)) {
		*status = MHD_HTTP_BAD_REQUEST;
		*out = error_json("bad_id",
		    "a story id matches [A-Za-z0-9][A-Za-z0-9._-]* and is "
		    "under 128 bytes");
		return false;
	}
	snprintf(p->story, sizeof(p->story), "%s", story);
	return true;
}

/* Whether p's story is one of the batch's (or the config's): log's
 * rule, an unknown id is a mistake, not an empty log.  The view is
 * opened and closed here. */
static bool
params_story_known(
    json_t **out, int *status, const struct cli *cli, const struct params *p)
{
	struct view v;
	struct story_row st;
	struct sc_err err = {0};
	int rc;

	if (p->story[0] == '\0')
		return true;
	rc = view_open(&v, cli->config_path, cli->lender, false, &err);
	if (rc == 0)
		rc = view_find_story(&st, &v, p->story, &err);
	view_close(&v);
	if (rc == 0)
		return true;
	*status = rc == SC_EUSAGE ? MHD_HTTP_NOT_FOUND
				  : MHD_HTTP_INTERNAL_SERVER_ERROR;
	*out = error_json(rc == SC_EUSAGE ? "not_found" : "internal", err.msg);
	return false;
}

/* {"format_version", "events": [...], "last_seq", "more"}: more when
 * rows holds one event past the page. */
static json_t *
page_json(const struct event_row *rows, size_t n, const struct params *p)
{
	json_t *arr = json_array(), *j = NULL;
	size_t i, shown = n > p->limit ? p->limit : n;
	int64_t last = shown > 0 ? rows[shown - 1].id : p->after;

	for (i = 0; arr != NULL && i < shown; i++)
		if (json_array_append_new(arr, views_event_json(&rows[i])) <
		    0) {
			json_decref(arr);
			arr = NULL;
		}
	if (arr != NULL)
		j = json_pack("{s:i, s:o, s:I, s:b}", "format_version",
		    CLI_JSON_FORMAT_VERSION, "events", arr, "last_seq",
		    (json_int_t)last, "more", n > p->limit);
	return j;
}

int
serve_events_page(
    json_t **out, int *status, const struct cli *cli, struct MHD_Connection *c)
{
	struct params p;
	struct view v;
	struct event_row *rows = NULL;
	struct event_query q;
	struct sc_err err = {0};
	size_t n = 0;
	int rc = 0;

	memset(&v, 0, sizeof(v));
	*out = NULL;
	if (!params_parse(&p, out, status, cli, c, false) ||
	    !params_story_known(out, status, cli, &p))
		goto out;
	rc = view_open(&v, cli->config_path, cli->lender, false, &err);
	q = (struct event_query){
	    p.after, p.batch, p.story[0] ? p.story : NULL, p.limit + 1};
	if (rc == 0 && v.db != NULL)
		rc = db_events_page(v.db, &rows, &n, &q, &err);
	if (rc < 0) {
		*status = MHD_HTTP_INTERNAL_SERVER_ERROR;
		*out = error_json("internal", err.msg);
		rc = 0;
		goto out;
	}
	*status = MHD_HTTP_OK;
	*out = page_json(rows, n, &p);
out:
	event_rows_free(rows, n);
	view_close(&v);
	return *out != NULL ? 0 : SC_EOS;
}

/*
 * The stream
 */

/* Append text to what s has to send. */
static bool
stream_put(struct stream *s, const char *text, size_t len)
{
	char *p;
	size_t want;

	if (s->off == s->len)
		s->off = s->len = 0;
	if (s->len + len > s->cap) {
		want = (s->len + len) * 2;
		if ((p = realloc(s->buf, want)) == NULL)
			return false;
		s->buf = p;
		s->cap = want;
	}
	memcpy(s->buf + s->len, text, len);
	s->len += len;
	return true;
}

/* One event as "id: N\ndata: JSON\n\n": the JSON is one line (compact),
 * so it is one data field. */
static bool
stream_put_event(struct stream *s, const struct event_row *e)
{
	json_t *j = views_event_json(e);
	char *text = j != NULL ? json_dumps(j, JSON_COMPACT) : NULL;
	char head[48];
	bool ok = false;

	json_decref(j);
	if (text != NULL) {
		snprintf(head, sizeof(head), "id: %" PRId64 "\ndata: ", e->id);
		ok = stream_put(s, head, strlen(head)) &&
		    stream_put(s, text, strlen(text)) &&
		    stream_put(s, "\n\n", 2);
	}
	free(text);
	return ok;
}

/* Read the events after the last one sent into s's buffer.  -1 on a
 * failure, else how many were read. */
static long
stream_fill(struct stream *s)
{
	struct event_row *rows = NULL;
	struct sc_err err = {0};
	size_t n = 0, i;
	long ret = -1;

	if (s->db == NULL &&
	    db_open_readonly(&s->db, s->ev->state_dir, &err) < 0)
		goto out;
	if (db_events_page(s->db, &rows, &n, &s->q, &err) < 0)
		goto out;
	for (i = 0; i < n; i++) {
		if (!stream_put_event(s, &rows[i]))
			goto out;
		s->q.after_id = rows[i].id;
	}
	ret = (long)n;
out:
	event_rows_free(rows, n);
	return ret;
}

/* Whether s's key is still stored: the row of its name, with the hash
 * it had when the stream began (a key revoked and added again under
 * the same name is another key).  Looked at every KEY_CHECK_MS; a
 * database that cannot be read keeps the last answer. */
static bool
stream_key_alive(struct stream *s)
{
	struct key_row *rows = NULL;
	struct sc_err err = {0};
	size_t n = 0, i;
	bool alive = false;
	int64_t now = clock_mono_ms();

	if (s->key_sha256[0] != '\0' && now - s->key_checked_ms < KEY_CHECK_MS)
		return true;
	if (s->db == NULL &&
	    db_open_readonly(&s->db, s->ev->state_dir, &err) < 0)
		return true;
	if (db_key_list(s->db, &rows, &n, &err) < 0) {
		free(rows);
		return true;
	}
	for (i = 0; i < n && !alive; i++) {
		if (strcmp(rows[i].name, s->key_name) != 0)
			continue;
		if (s->key_sha256[0] == '\0')
			snprintf(s->key_sha256, sizeof(s->key_sha256), "%s",
			    rows[i].sha256);
		alive = strcmp(rows[i].sha256, s->key_sha256) == 0;
	}
	free(rows);
	s->key_checked_ms = now;
	return alive;
}

/* Copy what is pending into buf. */
static ssize_t
stream_take(struct stream *s, char *buf, size_t max)
{
	size_t n = s->len - s->off;

	if (n > max)
		n = max;
	memcpy(buf, s->buf + s->off, n);
	s->off += n;
	s->last_sent_ms = clock_mono_ms();
	return (ssize_t)n;
}

static ssize_t
stream_read(void *cls, uint64_t pos, char *buf, size_t max)
{
	struct stream *s = cls;
	struct serve_events *ev = s->ev;
	bool stopping;
	long got;

	/* a revoked key ends its streams, before any event more
	 * (docs/api.md#limits) */
	if (!stream_key_alive(s))
		return MHD_CONTENT_READER_END_OF_STREAM;
	if (s->off < s->len)
		return stream_take(s, buf, max);
	pthread_mutex_lock(&ev->mu);
	stopping = ev->stopping;
	pthread_mutex_unlock(&ev->mu);
	/* stopping: this read is the last, and sees every event written
	 * before the controller's last commit */
	if ((got = stream_fill(s)) < 0)
		return MHD_CONTENT_READER_END_WITH_ERROR;
	if (s->off < s->len)
		return stream_take(s, buf, max);
	if (stopping)
		return MHD_CONTENT_READER_END_OF_STREAM;
	if (clock_mono_ms() - s->last_sent_ms >= SERVE_EVENTS_HEARTBEAT_MS) {
		if (!stream_put(s, ": keepalive\n\n", 13))
			return MHD_CONTENT_READER_END_WITH_ERROR;
		return stream_take(s, buf, max);
	}
	/* nothing now: wait, out of the polling thread, for the ticker; if
	 * the drain began meanwhile, come back at once instead */
	pthread_mutex_lock(&ev->mu);
	if (!ev->stopping) {
		MHD_suspend_connection(s->c);
		s->suspended = true;
	}
	pthread_mutex_unlock(&ev->mu);
	return 0;
}

/* The response is gone (the connection ended): forget the stream. */
static void
stream_free(void *cls)
{
	struct stream *s = cls, **pp;
	struct serve_events *ev = s->ev;

	pthread_mutex_lock(&ev->mu);
	for (pp = &ev->streams; *pp != NULL; pp = &(*pp)->next)
		if (*pp == s) {
			*pp = s->next;
			ev->nstreams--;
			break;
		}
	pthread_cond_broadcast(&ev->cond);
	pthread_mutex_unlock(&ev->mu);
	db_close(s->db);
	free(s->buf);
	free(s);
}

/* Whether another stream may open for s's client: under
 * SERVE_STREAMS_MAX in all and SERVE_CLIENT_STREAMS_MAX for the client.
 * ev->mu held. */
static bool
stream_room(const struct serve_events *ev, const struct stream *s)
{
	const struct stream *o;
	size_t same = 0;

	if (ev->nstreams >= SERVE_STREAMS_MAX || ev->stopping)
		return false;
	for (o = ev->streams; o != NULL; o = o->next)
		if (memcmp(o->client, s->client, sizeof(s->client)) == 0)
			same++;
	return same < SERVE_CLIENT_STREAMS_MAX;
}

/* A new stream of p for the key key_name, registered; NULL when no
 * more may open (*full, stream_room()) or out of memory. */
static struct stream *
stream_new(struct serve_events *ev, struct MHD_Connection *c,
    const struct params *p, const char *key_name, bool *full)
{
	struct stream *s = calloc(1, sizeof(*s));

	*full = false;
	if (s == NULL)
		return NULL;
	s->ev = ev;
	s->c = c;
	snprintf(s->key_name, sizeof(s->key_name), "%s", key_name);
	serve_client_of(s->client, c);
	snprintf(s->story, sizeof(s->story), "%s", p->story);
	s->q = (struct event_query){
	    p->after, p->batch, s->story[0] ? s->story : NULL, STREAM_BATCH};
	s->last_sent_ms = clock_mono_ms();
	/* how long EventSource waits before it reconnects (ms) */
	if (!stream_put(s, "retry: 2000\n\n", 13)) {
		free(s);
		return NULL;
	}
	pthread_mutex_lock(&ev->mu);
	*full = !stream_room(ev, s);
	if (!*full) {
		s->next = ev->streams;
		ev->streams = s;
		ev->nstreams++;
	}
	pthread_mutex_unlock(&ev->mu);
	if (*full) {
		free(s->buf);
		free(s);
		s = NULL;
	}
	return s;
}

int
serve_events_stream(struct MHD_Response **resp, json_t **out, int *status,
    struct serve_events *ev, const struct cli *cli, struct MHD_Connection *c,
    const char *key_name)
{
	struct params p;
	struct stream *s;
	bool full = false;

	*resp = NULL;
	*out = NULL;
	if (!params_parse(&p, out, status, cli, c, true) ||
	    !params_story_known(out, status, cli, &p))
		goto out;
	if ((s = stream_new(ev, c, &p, key_name, &full)) == NULL && full) {
		*status = MHD_HTTP_SERVICE_UNAVAILABLE;
		*out = error_json("busy",
		    "too many event streams are open (or this client has "
		    "its share open); try again later (docs/api.md#limits)");
		goto out;
	}
	if (s == NULL)
		goto out;
	*resp = MHD_create_response_from_callback(
	    MHD_SIZE_UNKNOWN, 4096, stream_read, s, stream_free);
	if (*resp == NULL) {
		stream_free(s);
		goto out;
	}
	MHD_add_response_header(*resp, "Content-Type", "text/event-stream");
	MHD_add_response_header(*resp, "Cache-Control", "no-cache");
	/* a proxy that buffers (nginx) would hold the events back */
	MHD_add_response_header(*resp, "X-Accel-Buffering", "no");
	*status = MHD_HTTP_OK;
out:
	return *resp != NULL || *out != NULL ? 0 : SC_EOS;
}

/*
 * The ticker
 */

/* Resume every suspended stream; ev->mu held. */
static void
ticker_resume_all(struct serve_events *ev)
{
	struct stream *s;

	for (s = ev->streams; s != NULL; s = s->next)
		if (s->suspended) {
			s->suspended = false;
			MHD_resume_connection(s->c);
		}
}

static void *
ticker_main(void *arg)
{
	struct serve_events *ev = arg;
	struct timespec until;

	pthread_mutex_lock(&ev->mu);
	while (!ev->quit) {
		ticker_resume_all(ev);
		clock_gettime(CLOCK_MONOTONIC, &until);
		until.tv_nsec += SERVE_EVENTS_POLL_MS * 1000000L;
		until.tv_sec += until.tv_nsec / 1000000000L;
		until.tv_nsec %= 1000000000L;
		/* the condition variable runs on CLOCK_MONOTONIC (new) */
		pthread_cond_timedwait(&ev->cond, &ev->mu, &until);
	}
	pthread_mutex_unlock(&ev->mu);
	return NULL;
}

int
serve_events_new(
    struct serve_events **out, const char *state_dir, struct sc_err *err)
{
	struct serve_events *ev = calloc(1, sizeof(*ev));
	pthread_condattr_t ca;
	int rc = 0;

	*out = NULL;
	if (ev == NULL || (ev->state_dir = strdup(state_dir)) == NULL) {
		free(ev);
		return err_set(err, SC_EOS, "out of memory");
	}
	pthread_mutex_init(&ev->mu, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&ev->cond, &ca);
	pthread_condattr_destroy(&ca);
	if (pthread_create(&ev->ticker, NULL, ticker_main, ev) != 0) {
		rc = err_set(err, SC_EOS, "serve: cannot start a thread");
		serve_events_free(ev);
		ev = NULL;
	} else {
		ev->ticker_up = true;
	}
	*out = ev;
	return rc;
}

void
serve_events_drain(struct serve_events *ev)
{
	struct timespec until;

	if (ev == NULL)
		return;
	clock_gettime(CLOCK_MONOTONIC, &until);
	until.tv_sec += DRAIN_MS / 1000;
	pthread_mutex_lock(&ev->mu);
	ev->stopping = true;
	ticker_resume_all(ev);
	while (ev->nstreams > 0 &&
	    pthread_cond_timedwait(&ev->cond, &ev->mu, &until) == 0)
		;
	pthread_mutex_unlock(&ev->mu);
}

void
serve_events_free(struct serve_events *ev)
{
	if (ev == NULL)
		return;
	if (ev->ticker_up) {
		pthread_mutex_lock(&ev->mu);
		ev->quit = true;
		pthread_cond_broadcast(&ev->cond);
		pthread_mutex_unlock(&ev->mu);
		pthread_join(ev->ticker, NULL);
	}
	pthread_cond_destroy(&ev->cond);
	pthread_mutex_destroy(&ev->mu);
	free(ev->state_dir);
	free(ev);
}
