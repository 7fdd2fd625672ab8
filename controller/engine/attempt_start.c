/*
 * attempt_start.c - preparing and starting an attempt: the next attempt
 * read back from the decision stored with the last one
 * (docs/retry-strategy.md#where-the-decision-lives), its prompt and
 * argv, its row committed as running before the agent starts, and the
 * runner's callbacks that follow it (its pid, its progress).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "controller/config/argv.h"
#include "controller/engine/attempt_decide.h"
#include "controller/engine/attempt_end.h"
#include "controller/engine/attempt_evidence.h"
#include "controller/engine/attempt_run.h"
#include "controller/engine/attempt_start.h"
#include "controller/engine/checks.h"
#include "controller/clock.h"
#include "controller/engine/console.h"
#include "controller/engine/pgroup.h"
#include "controller/engine/preflight.h"
#include "controller/engine/prompt.h"
#include "controller/engine/remote.h"
#include "controller/config/stories.h"
#include "controller/tz.h"
#include "state/redact.h"

static int
on_start(void *ctx, int pid)
{
	struct attempt_run *ar = ctx;
	uint64_t ticks = 0;

	ar->r.pid = pid;
	if (pgroup_starttime(&ticks, pid) < 0)
		ticks = 0;
	ar->r.pid_start = (int64_t)ticks;
	ar->rc = db_attempt_set_pid(
	    ar->b->db, ar->r.id, pid, ar->r.pid_start, &ar->err);
	return ar->rc;
}

static int
on_poll(void *ctx, int64_t elapsed_ms, int pgid)
{
	struct attempt_run *ar = ctx;
	struct batch *b = ar->b;
	struct progress pr;
	struct task_counts hb;
	int64_t now = b->o->clock.now_ms(b->o->clock.ctx);

	(void)elapsed_ms;
	(void)pgid;
	if (now - ar->last_read_ms >= ar->poll_ms) {
		ar->last_read_ms = now;
		if (story_read_seen_progress(&pr, &ar->sl->seen,
			ar->sl->abspath, slot_root(ar->b, ar->sl),
			b->cfg->tasks_heading, NULL) == 0) {
			ar->token = pr.counts.tasks_completed;
			ar->r.counts = pr.counts;
			hb = pr.counts;
			/* a failed heartbeat is not worth killing the agent */
			db_attempt_heartbeat(b->db, ar->r.id, now, &hb, NULL);
		}
	}
	console_status(b);
	return ar->token;
}

/*
 * The output shows that the attempt cannot succeed
 * (docs/classification.md#dead-ends): offline for network_stall_s, or a
 * wait announced longer than max_wait_s.  It is then ended, and read
 * like any ended attempt: as network, or as the limit it announced.
 */
static bool
on_tail(void *ctx, const char *tail, size_t len)
{
	struct attempt_run *ar = ctx;
	struct batch *b = ar->b;
	const struct policy *pol = &b->cfg->policy;
	struct deadend_in in;
	struct deadend_out out;
	int64_t wait_ms = 0;

	memset(&in, 0, sizeof(in));
	in.tail = tail;
	in.len = len;
	in.now_ms = b->o->clock.now_ms(b->o->clock.ctx);
	in.network_stall_ms = (int64_t)(pol->network_stall_s * 1000.0);
	deadend_look(&out, &ar->dead, &in);
	if (out.kind == DEADEND_NETWORK) {
		console_line(b,
		    "%s: attempt %d: nothing but a network failure for "
		    "%.0fs (network_stall_s): ended",
		    ar->r.story_id, ar->r.attempt, pol->network_stall_s);
		return true;
	}
	if (out.kind == DEADEND_ANNOUNCED && pol->max_wait_s > 0 &&
	    waithint_resolve(&wait_ms, &out.hint, in.now_ms, NULL) == 0 &&
	    wait_ms > (int64_t)(pol->max_wait_s * 1000.0)) {
		console_line(b,
		    "%s: attempt %d: the agent announced a wait of %llds, "
		    "longer than max_wait_s (%.0fs): ended",
		    ar->r.story_id, ar->r.attempt, (long long)(wait_ms / 1000),
		    pol->max_wait_s);
		return true;
	}
	return false;
}

static int
argv_json(
    char **out, const struct strlist *argv, const struct redact_values *secrets)
{
	json_t *arr = json_array();
	char *text = NULL;
	size_t i;

	*out = NULL;
	for (i = 0; arr != NULL && i < argv->n; i++)
		json_array_append_new(arr, json_string(argv->items[i]));
	if (arr != NULL)
		text = json_dumps(arr, JSON_COMPACT);
	json_decref(arr);
	if (text == NULL)
		return SC_EOS;
	*out = redact_text(secrets, text, strlen(text), NULL);
	free(text);
	return *out == NULL ? SC_EOS : 0;
}

/* The D9/D10 factors of the decision made after row a. */
static void
next_factors(struct next_attempt *nx, const struct attempt_row *a)
{
	nx->timeout_factor = a->timeout_factor > 0 ? a->timeout_factor : 1;
	nx->poll_factor = a->poll_factor > 0 ? a->poll_factor : 1;
}

/*
 * The next attempt of story st, read back from the decision stored with
 * its last attempt since the last requeue (docs/retry-strategy.md "Where
 * the decision lives"): nothing is decided again here.  The story's last
 * row (and, after an uncounted one, its last counted row, for the
 * factors) is one indexed read each, not the history.
 */
int
attempt_next(struct next_attempt *nx, struct batch *b,
    const struct story_row *st, struct sc_err *err)
{
	const struct attempt_row *last;
	struct attempt_row counted;
	bool fb = b->cfg->agents[ROLE_FALLBACK].configured;
	int found = 0;
	int rc;

	memset(nx, 0, sizeof(*nx));
	nx->timeout_factor = 1;
	nx->poll_factor = 1;
	rc = db_attempt_last(b->db, &nx->last, &found, b->batch_id, st->id,
	    st->seq_base, false, err);
	if (rc < 0)
		goto out;
	if (!found) {
		/* the first attempt, or the first since a requeue */
		nx->attempt = st->attempt_base + 1;
		nx->role = decide_role_for(1, fb, b->disabled);
		goto out;
	}
	last = &nx->last;
	nx->prev = last;
	/* D9/D10 factors come from the last counted attempt's decision: a
	 * rerun after a usage limit or an interrupt keeps them */
	if (last->counted) {
		next_factors(nx, last);
	} else {
		rc = db_attempt_last(b->db, &counted, &found, b->batch_id,
		    st->id, st->seq_base, true, err);
		if (rc < 0)
			goto out;
		if (found)
			next_factors(nx, &counted);
		attempt_row_release(&counted);
	}
	if (last->next_attempt > 0) {
		nx->attempt = last->next_attempt;
		nx->role = last->next_role;
		nx->not_before_ms = last->not_before_ms;
	} else {
		/* a row written before schema 4 stored the decision: the
		 * same number rule, the same agent for a rerun */
		nx->attempt = decide_next_attempt(last->attempt, last->counted);
		nx->role = last->counted
		    ? decide_role_for(
			  nx->attempt - st->attempt_base, fb, b->disabled)
		    : last->role;
		nx->not_before_ms = last->ended_ms + last->delay_ms;
	}
out:
	/* an agent disabled since the decision (D2 in another story) is
	 * skipped while the other one can run */
	if (b->disabled[nx->role] && fb && !b->disabled[!nx->role])
		nx->role = (enum role) !nx->role;
	return rc;
}

/* include_dependency_result (docs/scheduling.md#the-dependencys-result):
 * the final agent message of each dependency of s, for the prompt; *out
 * NULL when not wanted. */
static int
dependency_result(
    char **out, struct batch *b, const struct story *s, struct sc_err *err)
{
	const struct story_conf *sc = &b->cfg->stories[s - b->o->stories];
	struct attempt_row *rows = NULL;
	const char *text;
	char *buf = NULL;
	size_t size = 0, n = 0, i, k;
	FILE *f = NULL;
	int rc = 0;

	*out = NULL;
	if (!sc->include_dependency_result || sc->depends_on.n == 0)
		return 0;
	f = open_memstream(&buf, &size);
	if (f == NULL)
		return err_set(err, SC_EOS, "out of memory");
	for (k = 0; k < sc->depends_on.n; k++) {
		rc = db_attempts_for_story(b->db, &rows, &n, b->batch_id,
		    sc->depends_on.items[k], err);
		if (rc < 0)
			goto out;
		text = NULL;
		for (i = n; i > 0 && text == NULL; i--)
			if (rows[i - 1].result_text != NULL &&
			    rows[i - 1].result_text[0] != '\0')
				text = rows[i - 1].result_text;
		if (sc->depends_on.n > 1)
			fprintf(f, "%s(%s)\n", k ? "\n" : "",
			    sc->depends_on.items[k]);
		fprintf(f, "%s",
		    text != NULL ? text : "(no final message was recorded)");
		attempt_rows_free(rows, n);
		rows = NULL;
		n = 0;
	}
out:
	if (fclose(f) != 0 && rc == 0)
		rc = err_set(err, SC_EOS, "out of memory");
	attempt_rows_free(rows, n);
	if (rc < 0)
		free(buf);
	else
		*out = buf;
	return rc;
}

/* The failures reported from outside storyctl that no attempt has
 * resolved yet, for the prompt (docs/api.md#in-the-next-prompt): one
 * indexed read.  What it fills is freed by quoted_free(). */
struct quoted {
	struct failure_row *rows;
	size_t n;
	struct prompt_failure *pf;
	char (*when)[40];
};

static int
quoted_read(struct quoted *q, struct prompt_prev *prev, struct batch *b,
    const struct story_row *st, struct sc_err *err)
{
	size_t i;
	int rc;

	memset(q, 0, sizeof(*q));
	rc = db_failures_for_story(
	    b->db, &q->rows, &q->n, b->batch_id, st->id, true, err);
	if (rc < 0 || q->n == 0)
		return rc;
	q->pf = calloc(q->n, sizeof(*q->pf));
	q->when = calloc(q->n, sizeof(*q->when));
	if (q->pf == NULL || q->when == NULL)
		return err_set(err, SC_EOS, "out of memory");
	for (i = 0; i < q->n; i++) {
		const struct failure_row *r = &q->rows[i];
		clock_fmt_iso(q->when[i], sizeof(q->when[i]), r->created_ms);
		q->pf[i].error_code = errcode_name(r->error_code);
		q->pf[i].error_message = r->error_message;
		q->pf[i].agent_id = r->agent_id;
		q->pf[i].reported_at = q->when[i];
		q->pf[i].http_status = r->http_status;
		q->pf[i].exit_code = r->exit_code;
	}
	prev->failures = q->pf;
	prev->nfailures = q->n;
	return 0;
}

static void
quoted_free(struct quoted *q)
{
	failure_rows_free(q->rows, q->n);
	free(q->pf);
	free(q->when);
	memset(q, 0, sizeof(*q));
}

/* The prompt of attempt nx (docs/configuration.md#prompt), and the
 * argv placeholders that do not depend on it. */
static int
begin_prompt(struct attempt_run *ar, struct argv_vars *vars,
    const struct next_attempt *nx, const struct progress *now_pr,
    struct sc_err *err)
{
	struct batch *b = ar->b;
	struct slot *sl = ar->sl;
	const struct story_row *st = sl->st;
	struct prompt_prev prev;
	struct policy pol;
	struct quoted q;
	int rc;

	memset(&prev, 0, sizeof(prev));
	memset(&q, 0, sizeof(q));
	memset(vars, 0, sizeof(*vars));
	vars->story_file = sl->s->file;
	vars->story_id = sl->s->id;
	vars->role = role_name(nx->role);
	vars->stalled_task = now_pr->stalled_task;
	/* remote: the agent runs in the worker's clone, its cwd */
	vars->repo = b->cfg->executor.is_remote ? "." : sl->cwd;
	vars->attempt = nx->attempt - st->attempt_base;
	/* the number the next decision will use: an override set over
	 * HTTP counts (docs/api.md#when-it-applies) */
	rc = attempt_story_policy(&pol, b, st, false, err);
	if (rc < 0)
		return rc;
	vars->max_attempts = pol.max_attempts;
	if (nx->prev != NULL && vars->attempt >= 2) {
		prev.attempt = nx->prev->attempt - st->attempt_base;
		if (prev.attempt < 1)
			prev.attempt = 0;
		prev.tasks_completed = now_pr->counts.tasks_completed;
		prev.tasks_total = now_pr->counts.tasks_total;
		prev.stalled_task = now_pr->stalled_task;
		prev.outcome = outcome_name(nx->prev->outcome);
	}
	rc = dependency_result(&ar->depres, b, sl->s, err);
	if (rc < 0)
		return rc;
	prev.dependency_result = ar->depres;
	if (nx->prev != NULL && vars->attempt >= 2) {
		ar->review_prompt = checks_note(nx->prev);
		prev.check_note = ar->review_prompt;
	}
	rc = quoted_read(&q, &prev, b, st, err);
	if (rc == 0)
		rc = prompt_render(
		    &ar->prompt, b->cfg->prompt, vars, &prev, err);
	quoted_free(&q);
	if (rc < 0)
		return rc;
	vars->prompt = ar->prompt;
	return 0;
}

/* {prompt_file}: the prompt written next to the attempt's log, 0600
 * like it. */
static int
begin_prompt_file(struct attempt_run *ar, struct argv_vars *vars,
    const struct next_attempt *nx, struct sc_err *err)
{
	int rc;

	if (asprintf(&ar->prompt_file, "%s/%s.a%d.%lld.prompt", ar->b->logdir,
		ar->sl->st->id, nx->attempt, (long long)ar->r.started_ms) < 0) {
		ar->prompt_file = NULL;
		return err_set(err, SC_EOS, "out of memory");
	}
	rc = prompt_write_file(ar->prompt_file, ar->prompt, err);
	if (rc < 0)
		return rc;
	vars->prompt_file = ar->prompt_file;
	return 0;
}

/* The argv template role runs with: the preset's full-autonomy one
 * inside a sandbox (docs/sandbox.md#presets), its own otherwise. */
static const struct strlist *
attempt_template(const struct batch *b, enum role role)
{
	return preflight_template(&b->cfg->agents[role], b->o->confined[role]);
}

/*
 * The confined agent's argv (docs/sandbox.md): its private git dir
 * made, the argv wrapped in bubblewrap.  The row keeps the agent's own
 * argv, written before.  Remote attempts are confined by the worker's
 * `storyctl job` instead (remote_wrap() passed it on).
 */
static int
begin_confine(struct attempt_run *ar, struct sc_err *err)
{
	struct batch *b = ar->b;
	const struct agent_conf *ag = &b->cfg->agents[ar->r.role];
	const char *shown[1];
	struct sandbox_req rq;
	char *pdir = NULL;
	size_t i;
	int rc = 0;

	if (!ar->confined || b->cfg->executor.is_remote)
		goto out;
	memset(&rq, 0, sizeof(rq));
	rq.home = getenv("HOME");
	for (i = 0; i < ag->env.n; i++)
		if (strncmp(ag->env.items[i], "HOME=", 5) == 0)
			rq.home = ag->env.items[i] + 5;
	if (asprintf(&pdir, "%s/sandbox/%s", b->cfg->state_dir,
		ar->sl->st->id) < 0) {
		pdir = NULL;
		rc = err_set(err, SC_EOS, "out of memory");
		goto out;
	}
	rq.host = b->o->sandbox;
	rq.conf = &ag->sandbox;
	rq.preset = ag->preset;
	rq.tree = slot_root(b, ar->sl);
	rq.cwd = ar->sl->cwd;
	rq.state_dir = b->cfg->state_dir;
	rq.private_dir = pdir;
	if (ar->prompt_file != NULL) {
		shown[0] = ar->prompt_file;
		rq.shown = shown;
		rq.nshown = 1;
	}
	rq.env = &ag->env;
	rc = sandbox_begin(&ar->sbx, &ar->argv, &rq, err);
	if (rc < 0)
		err_prefix(err, "%s: sandbox", ar->sl->st->id);
out:
	free(pdir);
	return rc;
}

/* The agent's argv; *settled when it can never run (the story is
 * escalated and says why). */
static int
begin_argv(bool *settled, struct attempt_run *ar, const struct argv_vars *vars,
    const struct next_attempt *nx, struct sc_err *err)
{
	const struct agent_conf *ag = &ar->b->cfg->agents[nx->role];
	char why[600];
	int rc;

	*settled = false;
	rc = argv_expand(
	    &ar->argv, attempt_template(ar->b, nx->role), vars, err);
	if (rc < 0) {
		err_prefix(err, "agent %s", role_name(nx->role));
		return rc;
	}
	if (argv_fits(&ar->argv, environ, err) < 0) {
		/* execve would fail with E2BIG on every attempt: no attempt
		 * runs, and the story says why (docs/configuration.md) */
		snprintf(why, sizeof(why),
		    "agent %s (%s) cannot be started: %.500s",
		    role_name(nx->role), ag->name, err->msg);
		err_clear(err);
		*settled = true;
		return attempt_settle(
		    ar->b, ar->sl->st, STATUS_ESCALATED, why, "escalated", err);
	}
	return 0;
}

/* The attempt's row as it starts: running, counted, its log path. */
static int
begin_row(struct attempt_run *ar, const struct next_attempt *nx,
    const struct progress *now_pr, struct sc_err *err)
{
	struct batch *b = ar->b;
	const struct story_row *st = ar->sl->st;
	char attempt_s[16];

	ar->r.batch_id = b->batch_id;
	snprintf(ar->r.story_id, sizeof(ar->r.story_id), "%s", st->id);
	ar->r.attempt = nx->attempt;
	ar->r.counted = true;
	ar->r.role = nx->role;
	snprintf(ar->r.agent, sizeof(ar->r.agent), "%s",
	    b->cfg->agents[nx->role].name);
	if (argv_json(&ar->r.argv_json, &ar->argv, b->secrets) < 0)
		return err_set(err, SC_EOS, "out of memory");
	ar->r.controller_pid = getpid();
	ar->r.exit_code = -1;
	ar->r.counts = now_pr->counts;
	ar->r.timeout_factor = 1;
	ar->r.poll_factor = 1;
	snprintf(attempt_s, sizeof(attempt_s), "%d", ar->r.attempt);
	if ((size_t)snprintf(ar->r.log_path, sizeof(ar->r.log_path),
		"%s/%s.a%s.%lld.log", b->logdir, st->id, attempt_s,
		(long long)ar->r.started_ms) >= sizeof(ar->r.log_path))
		return err_set(
		    err, SC_EIO, "log path too long under %s", b->logdir);
	return 0;
}

/* One durable transaction: the story running and its attempt row. */
static int
begin_commit(struct attempt_run *ar, struct sc_err *err)
{
	struct batch *b = ar->b;
	struct story_row *st = ar->sl->st;
	int rc;

	st->status = STATUS_RUNNING;
	st->updated_ms = ar->r.started_ms;
	rc = db_tx_begin(b->db, err);
	if (rc == 0)
		rc = db_story_update(b->db, st, err);
	if (rc == 0)
		rc = db_attempt_begin(b->db, &ar->r, err);
	if (rc == 0)
		rc = db_tx_commit(b->db, err);
	if (rc < 0)
		db_tx_rollback(b->db);
	return rc;
}

/* The runner's options for attempt nx (docs/runner.md): timeouts
 * scaled by the decision's factors, the callbacks. */
static void
begin_runner_opts(struct attempt_run *ar, const struct next_attempt *nx)
{
	struct batch *b = ar->b;
	const struct config *cfg = b->cfg;
	const struct agent_conf *ag = &cfg->agents[nx->role];
	struct runner_opts *ro = &ar->ro;

	ro->argv = (const char *const *)ar->argv.items;
	ro->cwd = ar->sl->cwd;
	ro->env_add = &ag->env;
	ro->mark = ar->mark[0] != '\0' ? ar->mark : NULL;
	ro->log_path = ar->r.log_path;
	ro->timeout_ms = (int64_t)(ag->timeout_s * nx->timeout_factor * 1000.0);
	ro->stall_timeout_ms =
	    (int64_t)((ag->stall_timeout_s >= 0 ? ag->stall_timeout_s
						: cfg->policy.stall_timeout_s) *
		1000.0);
	ro->kill_grace_ms = batch_kill_grace_ms(b);
	ar->poll_ms =
	    (int64_t)(cfg->policy.poll_interval_s * nx->poll_factor * 1000.0);
	ar->last_read_ms = ar->r.started_ms;
	ar->token = ar->r.counts.tasks_completed;
	ro->poll_interval_ms = ar->poll_ms < 1000 ? ar->poll_ms : 1000;
	ro->on_poll = on_poll;
	ro->on_tail = on_tail;
	ro->on_start = on_start;
	ro->ctx = ar;
	ro->stop = b->o->stop;
	ro->wake_fd = b->o->wake_fd;
	ro->tail_max = 64 * 1024;
	ro->keep_fd = ar->sbx.seccomp_fd > 2 ? ar->sbx.seccomp_fd : 0;
}

/* The agent starts: the console told (without a tty), the tree and the
 * boxes as the agent finds them (docs/evidence.md), then the runner.
 * An error on_start reported in ar is the one returned. */
static int
begin_start(struct attempt_run *ar, const struct next_attempt *nx,
    struct story_look *now, struct sc_err *err)
{
	struct batch *b = ar->b;
	const struct agent_conf *ag = &b->cfg->agents[nx->role];
	int rc;

	if (!b->o->tty)
		console_line(b, "%s: attempt %d %s (%s) started, %d/%d tasks",
		    ar->sl->st->id, ar->r.attempt, role_name(ar->r.role),
		    ag->name, ar->r.counts.tasks_completed,
		    ar->r.counts.tasks_total);
	attempt_evidence_start(ar, now);
	begin_runner_opts(ar, nx);
	rc = b->ops.start(b->ops.ctx, &ar->handle, &ar->ro, err);
	if (rc < 0 && ar->rc < 0) {
		*err = ar->err;
		rc = ar->rc;
	}
	return rc;
}

int
attempt_begin(struct batch *b, struct slot *sl, const struct next_attempt *nx,
    struct story_look *now, struct sc_err *err)
{
	const struct progress *now_pr = &now->pr;
	struct attempt_run *ar = NULL;
	struct argv_vars vars;
	bool settled = false;
	int rc;

	ar = calloc(1, sizeof(*ar));
	if (ar == NULL)
		return err_set(err, SC_EOS, "out of memory");
	ar->b = b;
	ar->sl = sl;
	ar->start = *now_pr;
	rc = begin_prompt(ar, &vars, nx, now_pr, err);
	if (rc < 0)
		goto out;
	ar->r.started_ms = b->o->clock.now_ms(b->o->clock.ctx);
	ar->confined = b->o->confined[nx->role];
	if (argv_uses(attempt_template(b, nx->role), "prompt_file")) {
		rc = begin_prompt_file(ar, &vars, nx, err);
		if (rc < 0)
			goto out;
	}
	rc = begin_argv(&settled, ar, &vars, nx, err);
	if (rc < 0 || settled)
		goto out;
	rc = remote_push(b, sl, err);
	if (rc == 0)
		rc = begin_row(ar, nx, now_pr, err);
	if (rc == 0)
		rc = begin_commit(ar, err);
	if (rc < 0)
		goto out;
	/* the row's id is known now: the mark the next start looks for if
	 * we die before the agent's pid is on record (docs/runner.md
	 * #the-mark) */
	if (b->markpfx[0] != '\0')
		agentmark_format(
		    ar->mark, sizeof(ar->mark), b->markpfx, ar->r.id);
	/* that commit's fsync made the last decision durable too: now the
	 * branch may show it */
	rc = statebranch_flush(&b->sb, batch_now_ms(b), err);
	if (rc == 0)
		rc = remote_wrap(
		    &ar->argv, b, sl, ar->r.attempt, ar->r.role, err);
	if (rc == 0)
		rc = begin_confine(ar, err);
	if (rc < 0) {
		/* its agent never started: closed as interrupted, not
		 * counted, so that resume runs it again */
		attempt_abandon(b, ar);
		ar = NULL;
		sl->run = NULL;
		sl->state = SLOT_FREE;
		goto out;
	}
	rc = begin_start(ar, nx, now, err);
	if (rc < 0)
		goto out;
	sl->run = ar;
	sl->state = SLOT_RUNNING;
	ar = NULL;
out:
	attempt_run_free(ar);
	return rc;
}
