/*
 * cmd_inspect.c - the morning commands list, show and requeue (status
 * and log have files of their own: cmd_status.c, cmd_log.c).  They read the database (WAL lets them run beside a working
 * controller) and print for people, or JSON with --json.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "controller/cli/cli.h"
#include "controller/cli/help.h"
#include "controller/views/view.h"
#include "controller/views/views.h"
#include "controller/clock.h"
#include "controller/config/config.h"
#include "controller/engine/requeue.h"
#include "controller/config/stories.h"
#include "state/db.h"
#include "state/lock.h"
#include "state/render.h"
#include "state/render_evidence.h"
#include "strategies/decide.h"
#include "strategies/evidence.h"
#include "strategies/statusline.h"
#include "strategies/suggest.h"
#include "strategies/text.h"

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

/* The id column is as wide as the longest id up to this, then an id is
 * cut with an ellipsis (docs/commands.md#list). */
#define LIST_ID_MAX 40
#define ELLIPSIS "\xe2\x80\xa6" /* "…", one column */

/* Print s in a cell of width columns and a space: padded, or cut to
 * width - 1 characters and an ellipsis (docs/commands.md#list). */
static void
list_cell(FILE *f, const char *s, size_t width)
{
	size_t w = statusline_width(s), chars = 0, i = 0;

	if (w <= width) {
		fprintf(f, "%s%*s ", s, (int)(width - w), "");
		return;
	}
	/* ids are text: a cut falls between UTF-8 characters */
	while (s[i] != '\0' && chars < width - 1) {
		i++;
		while (((unsigned char)s[i] & 0xc0) == 0x80)
			i++;
		chars++;
	}
	fprintf(
	    f, "%.*s%s%*s ", (int)i, s, ELLIPSIS, (int)(width - 1 - chars), "");
}

/* list's table: the id and cost columns as wide as their widest cell
 * (docs/commands.md#list). */
static void
list_print_text(const struct cli *cli, const struct story_row *rows, size_t n)
{
	char tasks[32], sub[32], cost[32];
	size_t i, idw = strlen("story"), w;

	for (i = 0; i < n; i++) {
		w = statusline_width(rows[i].id);
		if (w > idw)
			idw = w > LIST_ID_MAX ? LIST_ID_MAX : w;
	}
	list_cell(cli->out, "story", idw);
	fprintf(cli->out, "%-10s %-8s %-7s %-8s %-8s %s\n", "status",
	    "attempts", "tasks", "subtasks", "cost", "reason");
	for (i = 0; i < n; i++) {
		snprintf(tasks, sizeof(tasks), "%d/%d",
		    rows[i].counts.tasks_completed, rows[i].counts.tasks_total);
		subtasks_cell(sub, sizeof(sub),
		    rows[i].counts.subtasks_completed,
		    rows[i].counts.subtasks_total);
		snprintf(cost, sizeof(cost), "-");
		if (rows[i].cost_usd > 0)
			snprintf(cost, sizeof(cost), "$%.2f", rows[i].cost_usd);
		list_cell(cli->out, rows[i].id, idw);
		fprintf(cli->out, "%-10s %-8d %-7s %-8s %-8s %s\n",
		    status_name(rows[i].status), rows[i].attempts, tasks, sub,
		    cost, rows[i].reason);
	}
}

int
cmd_list(struct cli *cli, int argc, char **argv, struct sc_err *err)
{
	struct view v;
	struct story_row *rows = NULL;
	const char *status = NULL;
	json_t *j = NULL;
	size_t n = 0;
	int json = 0, rc;

	rc = cli_view_flags(
	    "list", help_list.options, argc, argv, &json, &status, NULL, err);
	if (rc < 0)
		return rc;
	rc = view_open(&v, cli->config_path, cli->lender, false, err);
	if (rc < 0)
		goto out;
	if (json) {
		rc = views_list_json(&j, &v, status, err);
		if (rc == 0)
			rc = cli_print_json(cli, j, err);
		goto out;
	}
	rc = view_stories(&rows, &n, &v, status, err);
	if (rc < 0)
		goto out;
	if (n == 0)
		fprintf(cli->out, "no stories%s%s\n",
		    status ? " with status " : "", status ? status : "");
	else
		list_print_text(cli, rows, n);
out:
	json_decref(j);
	free(rows);
	view_close(&v);
	return rc;
}

/* --- show ------------------------------------------------------------ */

/* An ended attempt's stalled task and the agent's final message, one
 * line each (docs/commands.md#show): the first line of the message,
 * cleaned and cut at SHOW_FINAL_MAX bytes with "…"; the whole is in
 * show --attempt N and in show --json. */
#define SHOW_FINAL_MAX 200
static void
show_story_lines(const struct cli *cli, const struct attempt_row *a)
{
	const char *m = a->result_text != NULL ? a->result_text : "";
	char line[SHOW_FINAL_MAX + 1];
	size_t len = strcspn(m, "\n");
	bool cut = false;

	if (a->outcome == OUTCOME_NONE)
		return;
	if (a->stalled_task[0] != '\0')
		fprintf(cli->out, "       stalled: %s\n", a->stalled_task);
	else if (a->counts.tasks_total > 0 &&
	    a->counts.tasks_completed == a->counts.tasks_total)
		fprintf(
		    cli->out, "       stalled: (none: every task checked)\n");
	else
		fprintf(cli->out, "       stalled: -\n");
	text_clean(line, sizeof(line), m, len, TEXT_COLLAPSE | TEXT_TRIM, &cut);
	if (cut || m[len] != '\0')
		text_mark_cut(line, sizeof(line), strlen(line));
	fprintf(cli->out, "       final: %s\n",
	    line[0] ? line : "(the agent left no final message)");
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
	snprintf(tasks, sizeof(tasks), "%d/%d", a->counts.tasks_completed,
	    a->counts.tasks_total);
	subtasks_cell(sub, sizeof(sub), a->counts.subtasks_completed,
	    a->counts.subtasks_total);
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
	show_story_lines(cli, a);
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

/* What attempt a changed besides its story file, and its flags
 * (docs/evidence.md): the row of ev[0..n) with its seq, if any. */
static void
show_evidence_lines(const struct cli *cli, const struct attempt_row *a,
    const struct evidence_row *ev, size_t n)
{
	const struct evidence_row *e = NULL;
	json_t *files, *f;
	size_t i;

	for (i = 0; i < n && e == NULL; i++)
		if (ev[i].seq == a->seq)
			e = &ev[i];
	if (e == NULL)
		return;
	if (!e->measured) {
		fprintf(cli->out, "       evidence: not measured: %s\n",
		    e->not_measured);
	} else {
		fprintf(cli->out, "       evidence: %d file%s changed, +%d -%d",
		    e->files_changed, e->files_changed == 1 ? "" : "s",
		    e->lines_added, e->lines_removed);
		files = e->files != NULL ? json_loads(e->files, 0, NULL) : NULL;
		json_array_foreach(files, i, f)
		{
			if (i == 5) {
				fprintf(cli->out, ", ...");
				break;
			}
			fprintf(cli->out, "%s%s +%d -%d", i ? ", " : " (",
			    json_string_value(json_object_get(f, "path")),
			    (int)json_integer_value(
				json_object_get(f, "added")),
			    (int)json_integer_value(
				json_object_get(f, "removed")));
		}
		fprintf(
		    cli->out, "%s\n", json_array_size(files) > 0 ? ")" : "");
		json_decref(files);
	}
	if (e->ticked_without_change)
		fprintf(cli->out,
		    "       FLAG %s: %d box%s checked with no other change\n",
		    EVIDENCE_FLAG_TICKED, e->ticked,
		    e->ticked == 1 ? "" : "es");
	if (e->unticked > 0)
		fprintf(cli->out,
		    "       FLAG %s: %d box%s checked before, unchecked now "
		    "(first: %s)\n",
		    EVIDENCE_FLAG_UNTICKED, e->unticked,
		    e->unticked == 1 ? "" : "es", e->first_unticked);
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

/* A failure reported from outside storyctl (docs/api.md#failure-records):
 * its code, when and by which key, whether an attempt resolved it, and
 * the first line of its message. */
static void
show_failure_line(const struct cli *cli, const struct failure_row *f)
{
	const char *m = f->error_message;
	char when[40], res[40];
	int len = (int)strcspn(m, "\n");

	clock_fmt_iso(when, sizeof(when), f->created_ms);
	fprintf(cli->out, "  external failure %s reported %s by key %s",
	    errcode_name(f->error_code), when, f->key_name);
	if (f->resolved_ms > 0) {
		clock_fmt_iso(res, sizeof(res), f->resolved_ms);
		fprintf(cli->out, " (resolved %s)", res);
	} else {
		fprintf(cli->out, " (open)");
	}
	fprintf(cli->out, "%s%.*s%s\n", m[0] ? ": " : "", len > 200 ? 200 : len,
	    m, len > 200 || m[len] != '\0' ? " ..." : "");
}

/* show ID without --json. */
static void
show_print(const struct cli *cli, const struct story_record *sh)
{
	const struct story_row *st = &sh->st;
	size_t i;

	fprintf(cli->out, "%s  %s  %d/%d tasks  ", st->id,
	    status_name(st->status), st->counts.tasks_completed,
	    st->counts.tasks_total);
	if (st->counts.subtasks_total > 0)
		fprintf(cli->out, "%d/%d subtasks  ",
		    st->counts.subtasks_completed, st->counts.subtasks_total);
	fprintf(cli->out, "%d attempt%s  %s\n", st->attempts,
	    st->attempts == 1 ? "" : "s", st->file);
	if (st->reason[0])
		fprintf(cli->out, "reason: %s\n", st->reason);
	if (st->cost_usd > 0)
		fprintf(cli->out, "cost: $%.4f\n", st->cost_usd);
	if (st->branch[0])
		fprintf(cli->out, "branch: %s\n", st->branch);
	if (sh->override != NULL)
		fprintf(cli->out, "retry-policy override: %s\n", sh->override);
	if (st->status == STATUS_DEFERRED)
		fprintf(cli->out,
		    "Story %s deferred - dev-story hit complexity "
		    "limit at %d/%d\n",
		    st->id, st->counts.tasks_completed, st->counts.tasks_total);
	for (i = 0; i < sh->n; i++) {
		show_attempt_line(cli, &sh->rows[i]);
		show_evidence_lines(cli, &sh->rows[i], sh->ev, sh->nev);
	}
	for (i = 0; i < sh->nf; i++)
		show_failure_line(cli, &sh->fl[i]);
	if (sh->n > 0 && st->status == STATUS_PENDING)
		show_next_line(cli, &sh->rows[sh->n - 1], st);
	if (sh->n > 0 && sh->rows[sh->n - 1].log_path[0])
		fprintf(
		    cli->out, "last log: %s\n", sh->rows[sh->n - 1].log_path);
}

/* The worktree setups that ran for the story in the view's batch, their
 * time and exit, as the controller recorded them (events of kind
 * "setup", docs/git-work.md#setup). */
static int
show_setup_lines(
    const struct cli *cli, struct view *v, const char *id, struct sc_err *err)
{
	struct event_query q = {0};
	struct event_row *ev = NULL;
	char when[40];
	size_t n = 0, i;
	int rc;

	if (!v->have_batch)
		return 0;
	q.batch_id = v->batch.id;
	q.story_id = id;
	rc = db_events_page(v->db, &ev, &n, &q, err);
	for (i = 0; rc == 0 && i < n; i++) {
		if (strcmp(ev[i].kind, "setup") != 0)
			continue;
		clock_fmt_iso(when, sizeof(when), ev[i].ts_ms);
		fprintf(cli->out, "  %s %s\n", when, ev[i].message);
	}
	event_rows_free(ev, n);
	return rc;
}

int
cmd_show(struct cli *cli, int argc, char **argv, struct sc_err *err)
{
	struct view v;
	struct story_record sh;
	const char *id = NULL;
	json_t *j = NULL;
	bool handled;
	int json = 0, rc;

	/* show STORY --attempt N is the attempt's transcript */
	rc = show_attempt(&handled, cli, argc, argv, err);
	if (rc < 0 || handled)
		return rc;
	memset(&sh, 0, sizeof(sh));
	rc = cli_view_flags(
	    "show", help_show.options, argc, argv, &json, NULL, &id, err);
	if (rc < 0)
		return rc;
	rc = view_open(&v, cli->config_path, cli->lender, false, err);
	if (rc < 0)
		goto out;
	if (json) {
		rc = views_show_json(&j, &v, id, err);
		if (rc == 0)
			rc = cli_print_json(cli, j, err);
		goto out;
	}
	rc = views_story_read(&sh, &v, id, err);
	if (rc == 0)
		show_print(cli, &sh);
	if (rc == 0)
		rc = show_setup_lines(cli, &v, sh.st.id, err);
out:
	json_decref(j);
	views_story_release(&sh);
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
	int freed = 0;
	int rc;

	rc = cli_view_flags(
	    "requeue", help_requeue.options, argc, argv, NULL, NULL, &id, err);
	if (rc < 0)
		return rc;
	rc = view_open(&v, cli->config_path, cli->lender, true, err);
	if (rc < 0)
		goto out;
	if (!v.have_batch) {
		rc = err_set(err, SC_EUSAGE, "requeue: no batch has run yet");
		goto out;
	}
	rc = view_find_story(&st, &v, id, err);
	if (rc == 0)
		rc = requeue_by_user(
		    v.db, &v.cfg, &v.batch, &st, view_now_ms(), &freed, err);
	if (rc == 0)
		fprintf(cli->out,
		    "%s is pending again (attempt history kept)%s; run "
		    "'storyctl resume' to run it\n",
		    id, freed ? " with its blocked dependents" : "");
out:
	view_close(&v);
	return rc;
}
