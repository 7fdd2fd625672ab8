/* render.c - see render.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "state/render.h"

json_t *
render_time_json(int64_t ms)
{
	char buf[32];
	time_t t;
	struct tm tm;

	if (ms <= 0)
		return json_null();
	t = (time_t)(ms / 1000);
	if (gmtime_r(&t, &tm) == NULL)
		return json_null();
	strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
	return json_string(buf);
}

static json_t *
str_or_null(const char *s)
{
	if (s == NULL || s[0] == '\0')
		return json_null();
	return json_string(s);
}

static json_t *
factor(double f)
{
	if (f <= 0)
		f = 1;
	if (f == (double)(json_int_t)f)
		return json_integer((json_int_t)f);
	return json_real(f);
}

/* One attempt as `show --json` spells it (docs/commands.md#show; times
 * ISO 8601 UTC, null where unknown).  New reference, or NULL on OOM. */
static json_t *
render_attempt_json(const struct attempt_row *a)
{
	bool ended = a->outcome != OUTCOME_NONE;
	json_t *o;

	o = json_pack("{s:i, s:b, s:s, s:s, s:o, s:o, s:o, s:o, s:i, s:i, "
		      "s:o, s:o, s:o, s:o, s:I, s:o, s:o}",
	    "attempt", a->attempt, "counted", a->counted, "role",
	    role_name(a->role), "agent", a->agent, "outcome",
	    ended ? json_string(outcome_name(a->outcome)) : json_null(),
	    "error_code",
	    a->error_code == ERRC_NONE
		? json_null()
		: json_string(errcode_name(a->error_code)),
	    "exit_code",
	    ended && a->exit_code >= 0 ? json_integer(a->exit_code)
				       : json_null(),
	    "signal", a->signal > 0 ? json_integer(a->signal) : json_null(),
	    "tasks_completed", a->counts.tasks_completed, "tasks_total",
	    a->counts.tasks_total, "stalled_task", str_or_null(a->stalled_task),
	    "started_at", render_time_json(a->started_ms), "ended_at",
	    render_time_json(ended ? a->ended_ms : 0), "duration_ms",
	    ended && a->ended_ms >= a->started_ms && a->started_ms > 0
		? json_integer(a->ended_ms - a->started_ms)
		: json_null(),
	    "delay_ms", (json_int_t)a->delay_ms, "decision",
	    a->decision == DECISION_NONE
		? json_null()
		: json_string(decision_name(a->decision)),
	    "reason", str_or_null(a->reason));
	if (o == NULL)
		return NULL;
	/* beyond the first fields (docs/commands.md#show): what a person
	 * needs to dig further */
	json_object_set_new(o, "error_message", str_or_null(a->error_message));
	json_object_set_new(o, "seq", json_integer(a->seq));
	json_object_set_new(o, "log", str_or_null(a->log_path));
	json_object_set_new(o, "timeout_factor", factor(a->timeout_factor));
	json_object_set_new(o, "poll_factor", factor(a->poll_factor));
	json_object_set_new(o, "cost_usd", json_real(a->cost_usd));
	json_object_set_new(o, "gate", str_or_null(a->gate));
	json_object_set_new(o, "gate_exit",
	    a->gate[0] != '\0' && a->gate_exit >= 0 ? json_integer(a->gate_exit)
						    : json_null());
	json_object_set_new(o, "gate_output", str_or_null(a->gate_output));
	json_object_set_new(o, "consensus", str_or_null(a->consensus));
	json_object_set_new(o, "review_notes", str_or_null(a->review_notes));
	/* the subtasks read with the tasks (docs/stories.md) */
	json_object_set_new(o, "subtasks_completed",
	    json_integer(a->counts.subtasks_completed));
	json_object_set_new(
	    o, "subtasks_total", json_integer(a->counts.subtasks_total));
	json_object_set_new(o, "session_id", str_or_null(a->session_id));
	return o;
}

json_t *
render_story_json(const struct story_row *s, const struct attempt_row *a,
    size_t n, const char *override)
{
	json_t *o = NULL, *arr = NULL, *one;
	size_t i;

	arr = json_array();
	if (arr == NULL)
		goto fail;
	for (i = 0; i < n; i++) {
		one = render_attempt_json(&a[i]);
		if (one == NULL || json_array_append_new(arr, one) < 0)
			goto fail;
	}
	o = json_pack("{s:s, s:s, s:s, s:o, s:i, s:i, s:O, s:f, s:o}", "id",
	    s->id, "file", s->file, "status", status_name(s->status), "reason",
	    str_or_null(s->reason), "tasks_completed",
	    s->counts.tasks_completed, "tasks_total", s->counts.tasks_total,
	    "attempts", arr, "cost_usd", s->cost_usd, "branch",
	    str_or_null(s->branch));
	json_decref(arr);
	if (o != NULL) {
		json_object_set_new(o, "subtasks_completed",
		    json_integer(s->counts.subtasks_completed));
		json_object_set_new(o, "subtasks_total",
		    json_integer(s->counts.subtasks_total));
	}
	/* only while there is one, so a story without keeps its bytes
	 * (docs/json.md#show) */
	if (o != NULL && override != NULL)
		json_object_set_new(
		    o, "retry_policy_override", json_loads(override, 0, NULL));
	return o;
fail:
	json_decref(arr);
	return NULL;
}

static json_t *
int_or_null(int v, int unknown)
{
	return v == unknown ? json_null() : json_integer(v);
}

json_t *
render_failures_json(const struct failure_row *f, size_t n)
{
	json_t *arr = json_array(), *one;
	char id[40];
	size_t i;

	for (i = 0; arr != NULL && i < n; i++) {
		snprintf(id, sizeof(id), "external-%lld", (long long)f[i].id);
		one = json_pack("{s:s, s:s, s:s, s:o, s:o, s:o, s:o, s:o, s:o, "
				"s:o, s:s, s:o}",
		    "id", id, "error_code", errcode_name(f[i].error_code),
		    "error_message",
		    f[i].error_message ? f[i].error_message : "", "agent_id",
		    str_or_null(f[i].agent_id), "attempt_number",
		    int_or_null(f[i].attempt_number, 0), "http_status",
		    int_or_null(f[i].http_status, 0), "exit_code",
		    int_or_null(f[i].exit_code, -1), "signal",
		    int_or_null(f[i].signal, 0), "retry_scheduled_at",
		    render_time_json(f[i].retry_scheduled_ms), "reported_at",
		    render_time_json(f[i].created_ms), "reported_by",
		    f[i].key_name, "resolved_at",
		    render_time_json(f[i].resolved_ms));
		if (one == NULL || json_array_append_new(arr, one) < 0) {
			json_decref(arr);
			return NULL;
		}
	}
	return arr;
}

/* Table cells: no newline, no pipe. */
static void
cell(char *dst, size_t len, const char *s)
{
	size_t i = 0;

	for (; *s != '\0' && i + 1 < len; s++)
		dst[i++] = (*s == '|' || *s == '\n' || *s == '\r') ? ' ' : *s;
	dst[i] = '\0';
}

void
render_line_of(struct story_line *out, const struct story_row *r)
{
	memset(out, 0, sizeof(*out));
	out->id = r->id;
	out->position = r->position;
	out->status = r->status;
	out->attempts = r->attempts;
	out->counts = r->counts;
	out->last_agent = r->last_agent;
	out->last_outcome = r->last_outcome;
	out->reason = r->reason;
}

/* The longest story id a row is built for in a buffer; a longer one
 * (none in practice) is printed by fprintf, the same text. */
#define ROW_ID_MAX 256

/* s at p; past it. */
static char *
put_str(char *p, const char *s)
{
	size_t n = strlen(s);

	memcpy(p, s, n);
	return p + n;
}

/* v in decimal at p, as "%d" prints it; past it. */
static char *
put_int(char *p, int v)
{
	char d[12];
	unsigned u = v < 0 ? 0u - (unsigned)v : (unsigned)v;
	size_t k = 0;

	do
		d[k++] = (char)('0' + u % 10);
	while ((u /= 10) != 0);
	if (v < 0)
		*p++ = '-';
	while (k > 0)
		*p++ = d[--k];
	return p;
}

/*
 * One row of the table; "| %s | %s | %d | %d/%d | %s | %s | %s | %s |\n"
 * put together by hand: every decision prints every row of its page,
 * and fprintf's parsing of the format was most of the page's cost
 * (docs/performance.md).  reason and agent are the cells already made.
 */
static void
table_row(
    FILE *f, const struct story_line *s, const char *reason, const char *agent)
{
	/* the id, the cells, 5 ints, the status and outcome names (short
	 * constants, "?" for a bad value) and the fixed text, with room */
	char line[ROW_ID_MAX + 600 + 80 + 5 * 12 + 128], *p = line;
	const char *oc = s->last_outcome == OUTCOME_NONE
	    ? "-"
	    : outcome_name(s->last_outcome);

	p = put_str(put_str(p, "| "), s->id);
	p = put_str(put_str(p, " | "), status_name(s->status));
	p = put_int(put_str(p, " | "), s->attempts);
	p = put_int(put_str(p, " | "), s->counts.tasks_completed);
	p = put_int(put_str(p, "/"), s->counts.tasks_total);
	p = put_str(put_str(p, " | "), agent[0] ? agent : "-");
	p = put_str(put_str(p, " | "), oc);
	p = put_str(put_str(p, " | "), reason[0] ? reason : "-");
	p = put_str(p, " | ");
	if (s->counts.subtasks_total > 0) {
		p = put_int(p, s->counts.subtasks_completed);
		p = put_int(put_str(p, "/"), s->counts.subtasks_total);
	} else
		p = put_str(p, "-");
	p = put_str(p, " |\n");
	fwrite(line, 1, (size_t)(p - line), f);
}

static void
table_rows(FILE *f, const struct story_line *rows, size_t n)
{
	char reason[600], agent[80], sub[32];
	size_t i;

	/* subtasks in a column added last, so that the columns scripts read
	 * keep their places; "-" for a story without any
	 * (docs/state-branch.md) */
	fprintf(f,
	    "| story | status | attempts | tasks | last agent | last "
	    "outcome | reason | subtasks |\n|---|---|---|---|---|---|---|---|"
	    "\n");
	for (i = 0; i < n; i++) {
		const struct story_line *s = &rows[i];
		cell(reason, sizeof(reason), s->reason);
		cell(agent, sizeof(agent), s->last_agent);
		if (strlen(s->id) <= ROW_ID_MAX) {
			table_row(f, s, reason, agent);
			continue;
		}
		if (s->counts.subtasks_total > 0)
			snprintf(sub, sizeof(sub), "%d/%d",
			    s->counts.subtasks_completed,
			    s->counts.subtasks_total);
		else
			snprintf(sub, sizeof(sub), "-");
		fprintf(f, "| %s | %s | %d | %d/%d | %s | %s | %s | %s |\n",
		    s->id, status_name(s->status), s->attempts,
		    s->counts.tasks_completed, s->counts.tasks_total,
		    agent[0] ? agent : "-",
		    s->last_outcome == OUTCOME_NONE
			? "-"
			: outcome_name(s->last_outcome),
		    reason[0] ? reason : "-", sub);
	}
}

/* Close the memstream f whose buffer is *buf (set by fclose) and hand
 * the text to *out. */
static int
memstream_done(char **out, FILE *f, char **buf)
{
	if (fclose(f) != 0) {
		free(*buf);
		return SC_EOS;
	}
	*out = *buf;
	return 0;
}

int
render_progress_md(
    char **out, const struct story_line *rows, size_t n, int64_t batch_id)
{
	char *buf = NULL;
	size_t size = 0;
	FILE *f;

	*out = NULL;
	f = open_memstream(&buf, &size);
	if (f == NULL)
		return SC_EOS;
	fprintf(
	    f, "# storyctl progress\n\nBatch %lld.\n\n", (long long)batch_id);
	table_rows(f, rows, n);
	return memstream_done(out, f, &buf);
}

int
render_page_size(int total)
{
	int size = RENDER_PAGE_MIN;

	if (total <= RENDER_FLAT_MAX)
		return RENDER_FLAT_MAX;
	/* while the pages, (total - 1) / size + 1 of them, are more than
	 * four times the stories of one (no overflow for any int total) */
	while ((total - 1) / size + 1 > 4 * size)
		size *= 2;
	return size;
}

int
render_progress_index(
    char **out, const int counts[STATUS__COUNT], int total, int64_t batch_id)
{
	char *buf = NULL;
	size_t size = 0;
	FILE *f;
	int i, pages, per = render_page_size(total);

	*out = NULL;
	f = open_memstream(&buf, &size);
	if (f == NULL)
		return SC_EOS;
	fprintf(f,
	    "# storyctl progress\n\nBatch %lld: %d stories.\n\n"
	    "| status | stories |\n|---|---|\n",
	    (long long)batch_id, total);
	for (i = 0; i < STATUS__COUNT; i++)
		if (counts[i] > 0)
			fprintf(f, "| %s | %d |\n",
			    status_name((enum story_status)i), counts[i]);
	/* The pages are named, not listed: every decision rewrites this
	 * file, and a list of every page would make it grow with the batch
	 * (docs/state-branch.md#layout). */
	pages = (total + per - 1) / per;
	fprintf(f,
	    "\nThe table (story, status, attempts, tasks, last agent, last\n"
	    "outcome, reason, subtasks) is in %d pages of %d stories, in "
	    "run\norder, from [progress/0001.md](progress/0001.md) (stories "
	    "1-%d)\nto [progress/%04d.md](progress/%04d.md) (stories "
	    "%d-%d);\neach story's attempt history is in "
	    "stories/NNNN/<story>.json,\nNNNN its page.\n",
	    pages, per, per < total ? per : total, pages, pages,
	    (pages - 1) * per + 1, total);
	return memstream_done(out, f, &buf);
}

int
render_progress_page(char **out, const struct story_line *rows, size_t n,
    int page, int per, int64_t batch_id)
{
	char *buf = NULL;
	size_t size = 0;
	FILE *f;

	*out = NULL;
	f = open_memstream(&buf, &size);
	if (f == NULL)
		return SC_EOS;
	fprintf(f,
	    "# storyctl progress, page %d\n\nBatch %lld, stories "
	    "%d-%zu in run order; their attempt histories are in "
	    "[stories/%04d/](../stories/%04d/).\n\n",
	    page + 1, (long long)batch_id, page * per + 1,
	    (size_t)page * (size_t)per + n, page + 1, page + 1);
	table_rows(f, rows, n);
	return memstream_done(out, f, &buf);
}

char *
render_story_path(const char *id, int position, int total)
{
	char *p = NULL;
	int rc;

	if (total <= RENDER_FLAT_MAX)
		rc = asprintf(&p, "stories/%s.json", id);
	else
		rc = asprintf(&p, "stories/%04d/%s.json",
		    position / render_page_size(total) + 1, id);
	return rc < 0 ? NULL : p;
}
