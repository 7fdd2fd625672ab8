/*
 * cmd_inspect.c - the morning commands: status, list, show, log and
 * requeue.  They read the database (WAL lets them run beside a working
 * controller) and print for people, or JSON with --json.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "controller/cli.h"
#include "controller/clock.h"
#include "controller/config.h"
#include "controller/requeue.h"
#include "controller/stories.h"
#include "state/db.h"
#include "state/lock.h"
#include "state/render.h"
#include "strategies/decide.h"
#include "strategies/suggest.h"

/* What every inspect command starts from: the config, the database (or
 * none yet) and the latest batch (or none yet). */
struct view {
	struct config cfg;
	struct db *db;
	struct batch_row batch;
	int have_batch;
};

/* write: the command changes the record (requeue); the others open the
 * database read-only (docs/state.md#opening). */
static int
view_open(struct view *v, const struct cli *cli, bool write, struct sc_err *err)
{
	struct stat sb;
	char path[4096];
	int rc;

	memset(v, 0, sizeof(*v));
	rc = cli_load_config(&v->cfg, cli, false, err);
	if (rc < 0)
		return rc;
	snprintf(path, sizeof(path), "%s/state.db", v->cfg.state_dir);
	if (stat(path, &sb) < 0)
		return 0; /* nothing has run yet */
	rc = write ? db_open(&v->db, v->cfg.state_dir, err)
		   : db_open_readonly(&v->db, v->cfg.state_dir, err);
	if (rc < 0)
		return rc;
	return db_batch_latest(v->db, &v->batch, &v->have_batch, err);
}

static void
view_close(struct view *v)
{
	db_close(v->db);
	config_release(&v->cfg);
}

static int64_t
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Stories of the latest batch; before the first batch, the config's
 * stories as they stand (pending, or invalid without tasks). */
static int
view_stories(struct story_row **out, size_t *n, struct view *v,
    const char *status, struct sc_err *err)
{
	struct story *s = NULL;
	struct story_row *rows = NULL;
	size_t ns = 0, i, k = 0;
	int rc;

	*out = NULL;
	*n = 0;
	if (v->have_batch)
		return db_story_list(v->db, out, n, v->batch.id, status, err);
	rc = stories_load(&s, &ns, &v->cfg, err);
	if (rc < 0)
		return rc;
	rows = calloc(ns + 1, sizeof(*rows));
	if (rows == NULL) {
		stories_free(s, ns);
		return err_set(err, SC_EOS, "out of memory");
	}
	for (i = 0; i < ns; i++) {
		struct story_row *r = &rows[k];
		snprintf(r->id, sizeof(r->id), "%s", s[i].id);
		snprintf(r->file, sizeof(r->file), "%s", s[i].file);
		r->position = (int)i;
		r->status = s[i].load_status;
		snprintf(r->reason, sizeof(r->reason), "%s",
		    s[i].reason != NULL ? s[i].reason : "");
		r->tasks_completed = s[i].tasks_completed;
		r->tasks_total = s[i].tasks_total;
		r->subtasks_completed = s[i].subtasks_completed;
		r->subtasks_total = s[i].subtasks_total;
		if (status == NULL ||
		    strcmp(status, status_name(r->status)) == 0)
			k++;
	}
	stories_free(s, ns);
	*out = rows;
	*n = k;
	return 0;
}

static int
parse_flags(const char *cmd, int argc, char **argv, int *json, int *follow,
    const char **status, const char **story, struct sc_err *err)
{
	enum story_status st;
	int i, r;

	for (i = 1; i < argc; i++) {
		if (json != NULL && strcmp(argv[i], "--json") == 0) {
			*json = 1;
			continue;
		}
		if (follow != NULL &&
		    (strcmp(argv[i], "--follow") == 0 ||
			strcmp(argv[i], "-f") == 0)) {
			*follow = 1;
			continue;
		}
		if (status != NULL) {
			r = cli_opt_value(
			    status, argc, argv, &i, "--status", err);
			if (r < 0)
				return r;
			if (r == 1) {
				if (status_parse(&st, *status) < 0)
					return err_set(err, SC_EUSAGE,
					    "%s: "
					    "unknown status '%s' (pending, "
					    "running, done, deferred, "
					    "escalated, "
					    "blocked, invalid)",
					    cmd, *status);
				continue;
			}
		}
		if (argv[i][0] == '-')
			return err_set(err, SC_EUSAGE,
			    "%s: unknown option '%s'", cmd, argv[i]);
		if (story != NULL && *story == NULL) {
			*story = argv[i];
			continue;
		}
		return err_set(err, SC_EUSAGE, "%s: unexpected argument '%s'",
		    cmd, argv[i]);
	}
	if (story != NULL && *story == NULL)
		return err_set(err, SC_EUSAGE,
		    "%s: which story? (storyctl %s "
		    "STORY)",
		    cmd, cmd);
	return 0;
}

/* --- list ------------------------------------------------------------ */

/* "7/12", or "-" for a story without subtasks (docs/stories.md). */
static void
subtasks_cell(char *buf, size_t len, int completed, int total)
{
	if (total > 0)
		snprintf(buf, len, "%d/%d", completed, total);
	else
		snprintf(buf, len, "-");
}

int
cmd_list(struct cli *cli, int argc, char **argv, struct sc_err *err)
{
	struct view v;
	struct story_row *rows = NULL;
	const char *status = NULL;
	json_t *arr = NULL;
	size_t n = 0, i;
	int json = 0, rc;

	rc = parse_flags("list", argc, argv, &json, NULL, &status, NULL, err);
	if (rc < 0)
		return rc;
	rc = view_open(&v, cli, false, err);
	if (rc < 0)
		goto out;
	rc = view_stories(&rows, &n, &v, status, err);
	if (rc < 0)
		goto out;
	if (json) {
		arr = json_array();
		/* docs/commands.md#list's fields, then the subtasks */
		for (i = 0; arr != NULL && i < n; i++)
			json_array_append_new(arr,
			    json_pack("{s:s, s:s, s:i, "
				      "s:i, s:i, s:o, s:i, s:i}",
				"id", rows[i].id, "status",
				status_name(rows[i].status), "attempts",
				rows[i].attempts, "tasks_completed",
				rows[i].tasks_completed, "tasks_total",
				rows[i].tasks_total, "reason",
				rows[i].reason[0] ? json_string(rows[i].reason)
						  : json_null(),
				"subtasks_completed",
				rows[i].subtasks_completed, "subtasks_total",
				rows[i].subtasks_total));
		rc = arr ? cli_print_json(cli, arr, err)
			 : err_set(err, SC_EOS, "out of memory");
		goto out;
	}
	if (n == 0) {
		fprintf(cli->out, "no stories%s%s\n",
		    status ? " with status " : "", status ? status : "");
		goto out;
	}
	fprintf(cli->out, "%-16s %-10s %-8s %-7s %-8s %-8s %s\n", "story",
	    "status", "attempts", "tasks", "subtasks", "cost", "reason");
	for (i = 0; i < n; i++) {
		char tasks[32], sub[32], cost[32] = "-";
		snprintf(tasks, sizeof(tasks), "%d/%d", rows[i].tasks_completed,
		    rows[i].tasks_total);
		subtasks_cell(sub, sizeof(sub), rows[i].subtasks_completed,
		    rows[i].subtasks_total);
		if (rows[i].cost_usd > 0)
			snprintf(cost, sizeof(cost), "$%.2f", rows[i].cost_usd);
		fprintf(cli->out, "%-16s %-10s %-8d %-7s %-8s %-8s %s\n",
		    rows[i].id, status_name(rows[i].status), rows[i].attempts,
		    tasks, sub, cost, rows[i].reason);
	}
out:
	json_decref(arr);
	free(rows);
	view_close(&v);
	return rc;
}

/* --- show ------------------------------------------------------------ */

/* "no story ID in ...; did you mean X?" (docs/stories.md "Ids"): the
 * nearest of the stories the command could have meant. */
static int
no_such_story(struct view *v, const char *id, struct sc_err *err)
{
	struct story_row *rows = NULL;
	struct suggest sg;
	size_t n = 0, i;
	int best = -1;

	if (view_stories(&rows, &n, v, NULL, err) == 0) {
		suggest_init(&sg, id);
		for (i = 0; i < n && i < INT_MAX; i++)
			suggest_add(&sg, rows[i].id, (int)i);
		best = suggest_best(&sg);
	}
	err_set(err, SC_EUSAGE, "no story '%s'%s%s%s%s", id,
	    v->have_batch ? " in the latest batch" : " in the config",
	    best >= 0 ? "; did you mean " : "", best >= 0 ? rows[best].id : "",
	    best >= 0 ? "?" : "");
	free(rows);
	return SC_EUSAGE;
}

static int
find_story(
    struct story_row *st, struct view *v, const char *id, struct sc_err *err)
{
	struct story_row *rows = NULL;
	size_t n = 0, i;
	int found = 0, rc;

	if (v->have_batch) {
		rc = db_story_get(v->db, st, &found, v->batch.id, id, err);
		if (rc < 0)
			return rc;
	} else {
		rc = view_stories(&rows, &n, v, NULL, err);
		if (rc < 0)
			return rc;
		for (i = 0; i < n && !found; i++) {
			if (strcmp(rows[i].id, id) == 0) {
				*st = rows[i];
				found = 1;
			}
		}
		free(rows);
	}
	if (!found)
		return no_such_story(v, id, err);
	return 0;
}

/* The last max_lines lines of text, indented under an attempt. */
static void
print_indented(const struct cli *cli, const char *text, int max_lines)
{
	const char *p, *start;
	int lines = 0;

	if (text == NULL || text[0] == '\0')
		return;
	start = text + strlen(text);
	while (start > text && (start[-1] == '\n' || start[-1] == ' '))
		start--;
	for (p = start; p > text; p--) {
		if (p[-1] == '\n' && ++lines >= max_lines)
			break;
	}
	while (p < start) {
		const char *nl = memchr(p, '\n', (size_t)(start - p));
		size_t len = nl ? (size_t)(nl - p) : (size_t)(start - p);
		fprintf(cli->out, "         | %.*s\n", (int)len, p);
		p += len + (nl != NULL);
	}
}

static void
show_attempt_line(const struct cli *cli, const struct attempt_row *a)
{
	char dur[32] = "-", delay[32] = "", tasks[32], sub[32];

	if (a->outcome != OUTCOME_NONE && a->ended_ms >= a->started_ms)
		clock_fmt_duration(
		    dur, sizeof(dur), a->ended_ms - a->started_ms);
	if (a->delay_ms > 0)
		clock_fmt_duration(delay, sizeof(delay), a->delay_ms);
	snprintf(
	    tasks, sizeof(tasks), "%d/%d", a->tasks_completed, a->tasks_total);
	subtasks_cell(
	    sub, sizeof(sub), a->subtasks_completed, a->subtasks_total);
	fprintf(cli->out,
	    "  a%-3d %-8s %-10s %-12s %-18s %-6s %-7s %-8s %-9s%s%s "
	    "%s\n",
	    a->attempt, role_name(a->role), a->agent,
	    a->outcome == OUTCOME_NONE ? "running" : outcome_name(a->outcome),
	    a->error_code != ERRC_NONE ? errcode_name(a->error_code) : "-",
	    tasks, sub, dur,
	    a->decision == DECISION_NONE ? "-" : decision_name(a->decision),
	    delay[0] ? " in " : "", delay,
	    a->counted ? a->reason : "(not counted) ");
	if (!a->counted && a->reason[0])
		fprintf(cli->out, "       %s\n", a->reason);
	if (a->error_message[0])
		fprintf(cli->out, "       output: %s\n", a->error_message);
	if (a->session_id[0])
		fprintf(cli->out, "       session: %s\n", a->session_id);
	if (a->gate[0] != '\0' && strcmp(a->gate, "review") != 0) {
		fprintf(cli->out, "       gate %s failed (exit %d):\n", a->gate,
		    a->gate_exit);
		print_indented(cli, a->gate_output, 6);
	}
	if (a->consensus[0] != '\0')
		fprintf(cli->out, "       review: %s%s\n", a->consensus,
		    strcmp(a->gate, "review") == 0 ? " (not approved)" : "");
	if (a->review_notes != NULL && a->review_notes[0] != '\0') {
		fprintf(cli->out, "       reviewers:\n");
		print_indented(cli, a->review_notes, 12);
	}
}

/* The next attempt of a pending story as its last decision stored it
 * (docs/retry-strategy.md#where-the-decision-lives); nothing for a row
 * from before schema 4 or one before the story's requeue. */
static void
show_next_line(const struct cli *cli, const struct attempt_row *a,
    const struct story_row *st)
{
	char when[40];

	if (a->next_attempt <= 0 || a->seq <= st->seq_base)
		return;
	fprintf(cli->out, "next: attempt %d (%s)", a->next_attempt,
	    role_name(a->next_role));
	if (a->not_before_ms > a->ended_ms) {
		clock_fmt_iso(when, sizeof(when), a->not_before_ms);
		fprintf(cli->out, " not before %s", when);
	}
	fprintf(cli->out, "\n");
}

int
cmd_show(struct cli *cli, int argc, char **argv, struct sc_err *err)
{
	struct view v;
	struct story_row st;
	struct attempt_row *rows = NULL;
	const char *id = NULL;
	json_t *j = NULL;
	size_t n = 0, i;
	int json = 0, rc;

	rc = parse_flags("show", argc, argv, &json, NULL, NULL, &id, err);
	if (rc < 0)
		return rc;
	rc = view_open(&v, cli, false, err);
	if (rc < 0)
		goto out;
	rc = find_story(&st, &v, id, err);
	if (rc < 0)
		goto out;
	if (v.have_batch) {
		rc =
		    db_attempts_for_story(v.db, &rows, &n, v.batch.id, id, err);
		if (rc < 0)
			goto out;
	}
	if (json) {
		j = render_story_json(&st, rows, n);
		rc = j ? cli_print_json(cli, j, err)
		       : err_set(err, SC_EOS, "out of memory");
		goto out;
	}
	fprintf(cli->out, "%s  %s  %d/%d tasks  ", st.id,
	    status_name(st.status), st.tasks_completed, st.tasks_total);
	if (st.subtasks_total > 0)
		fprintf(cli->out, "%d/%d subtasks  ", st.subtasks_completed,
		    st.subtasks_total);
	fprintf(cli->out, "%d attempt%s  %s\n", st.attempts,
	    st.attempts == 1 ? "" : "s", st.file);
	if (st.reason[0])
		fprintf(cli->out, "reason: %s\n", st.reason);
	if (st.cost_usd > 0)
		fprintf(cli->out, "cost: $%.4f\n", st.cost_usd);
	if (st.branch[0])
		fprintf(cli->out, "branch: %s\n", st.branch);
	if (st.status == STATUS_DEFERRED)
		fprintf(cli->out,
		    "Story %s deferred - dev-story hit complexity "
		    "limit at %d/%d\n",
		    st.id, st.tasks_completed, st.tasks_total);
	for (i = 0; i < n; i++)
		show_attempt_line(cli, &rows[i]);
	if (n > 0 && st.status == STATUS_PENDING)
		show_next_line(cli, &rows[n - 1], &st);
	if (n > 0 && rows[n - 1].log_path[0])
		fprintf(cli->out, "last log: %s\n", rows[n - 1].log_path);
out:
	json_decref(j);
	attempt_rows_free(rows, n);
	view_close(&v);
	return rc;
}

/* --- status ---------------------------------------------------------- */

/* The next attempt after row a waits until *until (> now): the decision
 * stored with a (docs/state.md), or for a row from before schema 4 the
 * same rules read from it. */
static bool
next_wait(
    int64_t *until, int *attempt, const struct attempt_row *a, int64_t now)
{
	int64_t t =
	    a->next_attempt > 0 ? a->not_before_ms : a->ended_ms + a->delay_ms;

	if (t <= now)
		return false;
	*until = t;
	*attempt = a->next_attempt > 0
	    ? a->next_attempt
	    : decide_next_attempt(a->attempt, a->counted);
	return true;
}

/* What status shows, read once for the text and for --json. */
struct status_facts {
	struct story_row *rows;
	size_t n;
	int counts[STATUS__COUNT];
	double cost;
	struct attempt_row *run; /* the running rows of every batch */
	size_t nrun;
	const struct attempt_row *cur; /* this batch's, or NULL */
	struct attempt_row last; /* owned: the waiting story's last row */
	int64_t pid, now, wait_until;
	int64_t pause_until[2];
	const char *wait_story;
	int wait_attempt;
};

/* The story that waits for its next attempt: the decision stored with
 * each pending story's last row since its requeue, one indexed row, not
 * the history (a story whose only attempt was not counted waits too). */
static int
status_find_wait(
    struct status_facts *sf, const struct view *v, struct sc_err *err)
{
	size_t i;
	int found, rc;

	for (i = 0; i < sf->n && sf->cur == NULL && sf->pid > 0; i++) {
		if (sf->rows[i].status != STATUS_PENDING)
			continue;
		attempt_row_release(&sf->last);
		found = 0;
		rc = db_attempt_last(v->db, &sf->last, &found, v->batch.id,
		    sf->rows[i].id, sf->rows[i].seq_base, false, err);
		if (rc < 0)
			return rc;
		if (found &&
		    next_wait(&sf->wait_until, &sf->wait_attempt, &sf->last,
			sf->now)) {
			sf->wait_story = sf->rows[i].id;
			break;
		}
	}
	return 0;
}

/* The usage-limit pauses still in force (docs/retry-strategy.md#usage-limits). */
static void
status_read_pauses(struct status_facts *sf, const struct view *v)
{
	char key[32], *val;
	int i;

	for (i = 0; i < 2; i++) {
		val = NULL;
		snprintf(key, sizeof(key), "pause.%s", role_name((enum role)i));
		if (db_meta_get(v->db, key, &val, NULL) == 0 && val != NULL)
			sf->pause_until[i] = strtoll(val, NULL, 10);
		free(val);
		if (sf->pause_until[i] <= sf->now)
			sf->pause_until[i] = 0;
	}
}

static int
status_gather(struct status_facts *sf, struct view *v, struct sc_err *err)
{
	size_t i;
	int rc;

	rc = view_stories(&sf->rows, &sf->n, v, NULL, err);
	if (rc < 0)
		return rc;
	for (i = 0; i < sf->n; i++) {
		sf->counts[sf->rows[i].status]++;
		sf->cost += sf->rows[i].cost_usd;
	}
	if (!v->have_batch)
		return 0;
	lock_holder_pid(v->cfg.state_dir, &sf->pid);
	rc = db_attempts_running(v->db, &sf->run, &sf->nrun, err);
	if (rc < 0)
		return rc;
	for (i = 0; i < sf->nrun; i++)
		if (sf->run[i].batch_id == v->batch.id)
			sf->cur = &sf->run[i];
	rc = status_find_wait(sf, v, err);
	if (rc < 0)
		return rc;
	status_read_pauses(sf, v);
	return 0;
}

/* status --json (docs/commands.md). */
static int
status_print_json(struct cli *cli, const struct view *v,
    const struct status_facts *sf, struct sc_err *err)
{
	const struct attempt_row *cur = sf->cur;
	json_t *o = NULL, *c = NULL, *running = json_null(),
	       *wait = json_null();
	size_t i;
	int rc;

	if (cur != NULL)
		running = json_pack("{s:s, s:i, s:s, s:s, s:i, s:i, s:o, s:b, "
				    "s:i, s:i}",
		    "story", cur->story_id, "attempt", cur->attempt, "role",
		    role_name(cur->role), "agent", cur->agent,
		    "tasks_completed", cur->tasks_completed, "tasks_total",
		    cur->tasks_total, "started_at",
		    render_time_json(cur->started_ms), "controller_alive",
		    sf->pid > 0, "subtasks_completed", cur->subtasks_completed,
		    "subtasks_total", cur->subtasks_total);
	if (sf->wait_story != NULL)
		wait = json_pack("{s:s, s:i, s:o, s:I}", "story",
		    sf->wait_story, "attempt", sf->wait_attempt, "until",
		    render_time_json(sf->wait_until), "delay_ms",
		    (json_int_t)(sf->wait_until - sf->now));
	c = json_object();
	for (i = 0; i < STATUS__COUNT; i++)
		json_object_set_new(c, status_name((enum story_status)i),
		    json_integer(sf->counts[i]));
	o = json_pack("{s:o, s:o, s:o, s:o, s:i, s:O, s:O, s:f}", "batch",
	    v->have_batch ? json_integer(v->batch.id) : json_null(), "state",
	    v->have_batch ? json_string(v->batch.status) : json_null(),
	    "controller_pid", sf->pid > 0 ? json_integer(sf->pid) : json_null(),
	    "counts", c, "stories", (int)sf->n, "running", running, "next_wait",
	    wait, "cost_usd", sf->cost);
	if (o != NULL)
		json_object_set_new(o, "paused",
		    json_pack("{s:o, s:o}", "primary",
			render_time_json(sf->pause_until[0]), "fallback",
			render_time_json(sf->pause_until[1])));
	rc = o ? cli_print_json(cli, o, err)
	       : err_set(err, SC_EOS, "out of memory");
	json_decref(o);
	json_decref(running);
	json_decref(wait);
	return rc;
}

/* status's "now:" line: the attempt running in this batch. */
static void
status_print_running(struct cli *cli, const struct status_facts *sf)
{
	const struct attempt_row *cur = sf->cur;
	char buf[64], sub[48] = "";

	clock_fmt_duration(buf, sizeof(buf), sf->now - cur->started_ms);
	if (cur->subtasks_total > 0)
		snprintf(sub, sizeof(sub), " (%d/%d subtasks)",
		    cur->subtasks_completed, cur->subtasks_total);
	fprintf(cli->out,
	    "now: %s attempt %d, %s (%s), %d/%d tasks%s, "
	    "%s%s\n",
	    cur->story_id, cur->attempt, role_name(cur->role), cur->agent,
	    cur->tasks_completed, cur->tasks_total, sub, buf,
	    sf->pid > 0 ? "" : " (controller gone: resume closes it)");
}

static void
status_print_text(
    struct cli *cli, const struct view *v, const struct status_facts *sf)
{
	char buf[64];
	size_t i;

	if (!v->have_batch)
		fprintf(cli->out, "no batch has run yet\n");
	else
		fprintf(cli->out, "batch %lld: %s%s\n", (long long)v->batch.id,
		    v->batch.status,
		    sf->pid > 0 ? " (controller running)" : "");
	fprintf(cli->out, "stories: %zu", sf->n);
	for (i = 0; i < STATUS__COUNT; i++)
		if (sf->counts[i])
			fprintf(cli->out, ", %d %s", sf->counts[i],
			    status_name((enum story_status)i));
	fprintf(cli->out, "\n");
	if (sf->cur != NULL)
		status_print_running(cli, sf);
	for (i = 0; i < 2; i++) {
		if (sf->pause_until[i] == 0)
			continue;
		clock_fmt_iso(buf, sizeof(buf), sf->pause_until[i]);
		fprintf(cli->out,
		    "%s agent paused by its usage limit until %s\n",
		    role_name((enum role)i), buf);
	}
	if (sf->wait_story != NULL) {
		clock_fmt_duration(buf, sizeof(buf), sf->wait_until - sf->now);
		fprintf(cli->out, "next wait: %s attempt %d in %s\n",
		    sf->wait_story, sf->wait_attempt, buf);
	}
}

int
cmd_status(struct cli *cli, int argc, char **argv, struct sc_err *err)
{
	struct view v;
	struct status_facts sf;
	int json = 0, rc;

	memset(&sf, 0, sizeof(sf));
	sf.now = now_ms();
	rc = parse_flags("status", argc, argv, &json, NULL, NULL, NULL, err);
	if (rc < 0)
		return rc;
	rc = view_open(&v, cli, false, err);
	if (rc == 0)
		rc = status_gather(&sf, &v, err);
	if (rc < 0)
		goto out;
	if (json)
		rc = status_print_json(cli, &v, &sf, err);
	else
		status_print_text(cli, &v, &sf);
out:
	free(sf.rows);
	attempt_rows_free(sf.run, sf.nrun);
	attempt_row_release(&sf.last);
	view_close(&v);
	return rc;
}

/* --- log ------------------------------------------------------------- */

static json_t *
event_json(const struct event_row *e)
{
	return json_pack("{s:I, s:I, s:o, s:o, s:s, s:s}", "id",
	    (json_int_t)e->id, "batch", (json_int_t)e->batch_id, "time",
	    render_time_json(e->ts_ms), "story",
	    e->story_id[0] ? json_string(e->story_id) : json_null(), "kind",
	    e->kind, "message", e->message);
}

static void
event_line(const struct cli *cli, const struct event_row *e)
{
	char t[32];

	clock_fmt_iso(t, sizeof(t), e->ts_ms);
	fprintf(cli->out, "%s %-10s %s%s%s\n", t, e->kind, e->story_id,
	    e->story_id[0] ? " " : "", e->message);
}

int
cmd_log(struct cli *cli, int argc, char **argv, struct sc_err *err)
{
	struct view v;
	struct event_row *ev = NULL;
	size_t n = 0, i;
	int64_t after = 0;
	json_t *arr = NULL, *one;
	int json = 0, follow = 0, rc;
	char *line;

	rc = parse_flags("log", argc, argv, &json, &follow, NULL, NULL, err);
	if (rc < 0)
		return rc;
	rc = view_open(&v, cli, false, err);
	if (rc < 0 || !v.have_batch) {
		if (rc == 0 && json)
			fprintf(cli->out, "[]\n");
		goto out;
	}
	if (json && !follow)
		arr = json_array();
	for (;;) {
		rc = db_events_list(v.db, &ev, &n, v.batch.id, after, err);
		if (rc < 0)
			goto out;
		for (i = 0; i < n; i++) {
			after = ev[i].id;
			if (!json) {
				event_line(cli, &ev[i]);
				continue;
			}
			one = event_json(&ev[i]);
			if (arr != NULL) {
				json_array_append_new(arr, one);
				continue;
			}
			/* --follow --json: one object per line */
			line = one ? json_dumps(one, JSON_COMPACT) : NULL;
			if (line != NULL)
				fprintf(cli->out, "%s\n", line);
			free(line);
			json_decref(one);
		}
		event_rows_free(ev, n);
		ev = NULL;
		n = 0;
		if (!follow)
			break;
		fflush(cli->out);
		sleep(1);
	}
	if (arr != NULL)
		rc = cli_print_json(cli, arr, err);
out:
	json_decref(arr);
	event_rows_free(ev, n);
	view_close(&v);
	return rc;
}

/* --- requeue --------------------------------------------------------- */

int
cmd_requeue(struct cli *cli, int argc, char **argv, struct sc_err *err)
{
	struct view v;
	struct story_row st;
	const char *id = NULL;
	char msg[500];
	int freed = 0;
	int rc;

	rc = parse_flags("requeue", argc, argv, NULL, NULL, NULL, &id, err);
	if (rc < 0)
		return rc;
	rc = view_open(&v, cli, true, err);
	if (rc < 0)
		goto out;
	if (!v.have_batch) {
		rc = err_set(err, SC_EUSAGE, "requeue: no batch has run yet");
		goto out;
	}
	rc = find_story(&st, &v, id, err);
	if (rc < 0)
		goto out;
	if (st.status != STATUS_DEFERRED && st.status != STATUS_ESCALATED &&
	    st.status != STATUS_BLOCKED) {
		rc = err_set(err, SC_EUSAGE,
		    "requeue: story %s is %s; only a "
		    "deferred, escalated or blocked story can be requeued",
		    id, status_name(st.status));
		goto out;
	}
	snprintf(msg, sizeof(msg), "requeued from %s (%.400s)",
	    status_name(st.status), st.reason);
	rc = requeue_story(v.db, &st, msg, now_ms(), err);
	if (rc == 0)
		rc = requeue_dependents(
		    v.db, &v.cfg, v.batch.id, id, st.updated_ms, &freed, err);
	if (rc == 0 && strcmp(v.batch.status, "finished") == 0)
		rc = db_batch_set_status(
		    v.db, v.batch.id, "stopped", st.updated_ms, err);
	if (rc == 0)
		fprintf(cli->out,
		    "%s is pending again (attempt history kept)%s; run "
		    "'storyctl resume' to run it\n",
		    id, freed ? " with its blocked dependents" : "");
out:
	view_close(&v);
	return rc;
}
