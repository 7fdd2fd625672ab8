/*
 * cmd_log.c - `storyctl log`: the event log, once or followed, of the
 * whole batch or one story, all of it, the last N events or those since
 * a time (docs/commands.md#log).
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "controller/cli/cli.h"
#include "controller/clock.h"
#include "controller/cli/help.h"
#include "controller/cli/opts.h"
#include "controller/views/view.h"
#include "controller/views/views.h"
#include "state/db.h"
#include "state/lock.h"
#include "state/render.h"
#include "strategies/duration.h"
#include "strategies/number.h"

/* How often --follow looks for new events and for the controller: short
 * enough to feel live, long enough to cost nothing. */
#define LOG_POLL_MS 500

struct log_opts {
	int json;
	int follow;
	int last; /* -n N; -1: every event */
	int64_t since_ms; /* --since; 0: from the start */
	const char *story; /* NULL: every story */
};

/* One event: a line for people, or one JSON object on a line of its own
 * in both modes, once or followed (docs/commands.md#log). */
static int
event_print(const struct cli *cli, const struct log_opts *o,
    const struct event_row *e, struct sc_err *err)
{
	json_t *one;
	char t[32], *line = NULL;
	int rc = 0;

	if (!o->json) {
		clock_fmt_iso(t, sizeof(t), e->ts_ms);
		fprintf(cli->out, "%s %-10s %s%s%s\n", t, e->kind, e->story_id,
		    e->story_id[0] ? " " : "", e->message);
		goto out;
	}
	one = views_event_json(e);
	line = one != NULL ? json_dumps(one, JSON_COMPACT) : NULL;
	json_decref(one);
	if (line == NULL) {
		rc = err_set(err, SC_EOS, "out of memory");
		goto out;
	}
	if (fprintf(cli->out, "%s\n", line) < 0)
		rc = err_set(err, SC_EIO, "cannot write to standard output");
out:
	free(line);
	return rc;
}

/* --since WHEN: an ISO-8601 UTC time as log prints it
 * ("2026-11-24T21:00:00Z") or a duration back from now ("30m", "2h"). */
static int
parse_since(int64_t *out_ms, const char *s, struct sc_err *err)
{
	struct tm tm;
	int64_t ms;
	int y, mo, d, h, mi, sec, used = 0;
	time_t t;

	if (duration_parse(&ms, s) == 0) {
		*out_ms = view_now_ms() - ms;
		return 0;
	}
	memset(&tm, 0, sizeof(tm));
	if (sscanf(s, "%4d-%2d-%2dT%2d:%2d:%2dZ%n", &y, &mo, &d, &h, &mi, &sec,
		&used) == 6 &&
	    used > 0 && s[used] == '\0' && mo >= 1 && mo <= 12 && d >= 1 &&
	    d <= 31 && h <= 23 && mi <= 59 && sec <= 60 && y >= 1970) {
		tm.tm_year = y - 1900;
		tm.tm_mon = mo - 1;
		tm.tm_mday = d;
		tm.tm_hour = h;
		tm.tm_min = mi;
		tm.tm_sec = sec;
		t = timegm(&tm);
		if (t != (time_t)-1) {
			*out_ms = (int64_t)t * 1000;
			return 0;
		}
	}
	return err_set(err, SC_EUSAGE,
	    "log: --since takes a time like 2026-11-24T21:00:00Z or a "
	    "duration like 30m or 2h, not '%s'",
	    s);
}

static int
parse_args(struct log_opts *o, int argc, char **argv, struct sc_err *err)
{
	struct opts op;
	const char *val;
	int rc;

	memset(o, 0, sizeof(*o));
	o->last = -1;
	rc = opts_parse(&op, "log", help_log.options, argc, argv, err);
	if (rc < 0)
		goto out;
	o->json = opts_has(&op, "--json");
	o->follow = opts_has(&op, "--follow");
	val = opts_value(&op, "-n");
	if (val != NULL &&
	    number_parse_int(&o->last, val, "log: -n", 0, INT_MAX, err) < 0) {
		rc = SC_EUSAGE;
		goto out;
	}
	val = opts_value(&op, "--since");
	if (val != NULL && parse_since(&o->since_ms, val, err) < 0) {
		rc = SC_EUSAGE;
		goto out;
	}
	if (op.nargs > 1) {
		rc = err_set(err, SC_EUSAGE, "log: unexpected argument '%s'",
		    op.args[1]);
		goto out;
	}
	if (op.nargs == 1)
		o->story = op.args[0];
out:
	opts_release(&op);
	return rc;
}

/* Whether event e is one the options ask for (the story, --since). */
static int
event_wanted(const struct log_opts *o, const struct event_row *e)
{
	if (o->story != NULL && strcmp(e->story_id, o->story) != 0)
		return 0;
	return e->ts_ms >= o->since_ms;
}

/* Print the events after *after that the options ask for; the first
 * time (*first), only the last -n of them.  *after moves past every
 * event read. */
static int
print_new(const struct cli *cli, const struct log_opts *o, struct view *v,
    int64_t *after, int *first, struct sc_err *err)
{
	struct event_row *ev = NULL;
	size_t n = 0, i, wanted = 0, skip = 0;
	int rc;

	rc = db_events_list(v->db, &ev, &n, v->batch.id, *after, err);
	if (rc < 0)
		goto out;
	for (i = 0; i < n; i++)
		wanted += (size_t)event_wanted(o, &ev[i]);
	if (*first && o->last >= 0 && wanted > (size_t)o->last)
		skip = wanted - (size_t)o->last;
	*first = 0;
	for (i = 0; i < n && rc == 0; i++) {
		*after = ev[i].id;
		if (!event_wanted(o, &ev[i]))
			continue;
		if (skip > 0) {
			skip--;
			continue;
		}
		rc = event_print(cli, o, &ev[i], err);
	}
out:
	event_rows_free(ev, n);
	return rc;
}

int
cmd_log(struct cli *cli, int argc, char **argv, struct sc_err *err)
{
	struct view v;
	struct story_row st;
	struct log_opts o;
	int64_t after = 0, pid = 0;
	int rc, first = 1, ended;

	memset(&v, 0, sizeof(v));
	rc = parse_args(&o, argc, argv, err);
	if (rc < 0)
		goto out;
	rc = view_open(&v, cli->config_path, cli->lender, false, err);
	if (rc < 0)
		goto out;
	/* an unknown id is a mistake, not an empty log (docs/stories.md) */
	if (o.story != NULL) {
		rc = view_find_story(&st, &v, o.story, err);
		if (rc < 0)
			goto out;
	}
	if (!v.have_batch)
		goto out; /* nothing has run: no events, in any mode */
	/* --follow ends with the batch: once no controller holds the lock,
	 * the events read after that look are the last ones
	 * (docs/commands.md#log) */
	for (;;) {
		ended =
		    !o.follow || lock_holder_pid(v.cfg.state_dir, &pid) != 0;
		rc = print_new(cli, &o, &v, &after, &first, err);
		if (rc < 0 || ended)
			break;
		fflush(cli->out);
		clock_nap_ms(LOG_POLL_MS);
	}
out:
	view_close(&v);
	return rc;
}
