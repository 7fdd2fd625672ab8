/* batch_setup.c - see batch_run_int.h: what a slot's kept worktree gets
 * besides its checkout: the files of worktree.copy, and worktree.setup
 * run before the first attempt in it (docs/git-work.md#setup). */
#include <errno.h>
#include <glob.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "controller/clock.h"
#include "controller/engine/agentmark.h"
#include "controller/engine/attempt.h"
#include "controller/engine/attempt_start.h"
#include "controller/engine/batch_run_int.h"
#include "controller/engine/console.h"
#include "controller/engine/runner.h"
#include "state/fsutil.h"
#include "state/gitwork.h"

/* the setup's output kept in its attempt's record, as a gate's */
#define SETUP_OUTPUT_MAX 2048

/* Is the project file rel ignored by git both in the main tree and in
 * the worktree at wt: only then may a copy of it be there. */
static bool
copy_ignored(struct batch *b, const char *wt, const char *rel)
{
	struct sc_err e2;
	int in_main = 0, in_wt = 0;

	return gitwork_path_ignored(&in_main, b->cfg->root, rel, &e2) == 0 &&
	    in_main && gitwork_path_ignored(&in_wt, wt, rel, &e2) == 0 && in_wt;
}

/* Copy the main tree's file at abs (rel below the root) into t. */
static int
copy_one(struct batch *b, struct slot *sl, struct slot_tree *t, const char *abs,
    const char *rel, struct sc_err *err)
{
	struct stat sb;
	char *dst = NULL;
	int rc = 0;

	if (lstat(abs, &sb) < 0 || !S_ISREG(sb.st_mode))
		goto out; /* a directory, a link: files only */
	if (!copy_ignored(b, t->path, rel)) {
		console_line(b,
		    "%s: worktree.copy: %s is not ignored by git: not copied "
		    "(it could reach a commit)",
		    sl->st->id, rel);
		goto out;
	}
	if ((dst = fsutil_path_join(t->path, rel)) == NULL) {
		rc = err_set(err, SC_EOS, "out of memory");
		goto out;
	}
	rc = batch_copy_file(dst, abs, sb.st_mode & 0777, err);
	if (rc == 0 && strlist_find(&t->copied, rel) < 0 &&
	    strlist_push(&t->copied, rel) < 0)
		rc = err_set(err, SC_EOS, "out of memory");
out:
	free(dst);
	return rc;
}

int
batch_tree_copy(struct batch *b, struct slot *sl, struct sc_err *err)
{
	const struct strlist *copy = &b->cfg->worktree.copy;
	struct slot_tree *t = &b->trees[sl - b->slots];
	size_t i, j, rootlen = strlen(b->cfg->root);
	glob_t g;
	char *pat;
	int rc = 0;

	for (i = 0; rc == 0 && i < copy->n; i++) {
		if ((pat = fsutil_path_join(b->cfg->root, copy->items[i])) ==
		    NULL) {
			rc = err_set(err, SC_EOS, "out of memory");
			break;
		}
		memset(&g, 0, sizeof(g));
		/* no match is no error: a .env that does not exist yet */
		if (glob(pat, GLOB_NOSORT, NULL, &g) == 0)
			for (j = 0; rc == 0 && j < g.gl_pathc; j++)
				rc = copy_one(b, sl, t, g.gl_pathv[j],
				    g.gl_pathv[j] + rootlen + 1, err);
		globfree(&g);
		free(pat);
	}
	return rc;
}

/* Start the setup in t (the gates' way: the batch's runner seam, its
 * output to log); t->setup its handle. */
static int
setup_start(struct batch *b, struct slot_tree *t, struct sc_err *err)
{
	/* the runner reads them while the setup runs: kept in t */
	struct runner_opts *ro = &t->setup_ro;

	memset(ro, 0, sizeof(*ro));
	t->setup_mark[0] = '\0';
	ro->argv = (const char *const *)b->cfg->worktree.setup.items;
	ro->cwd = t->path;
	ro->log_path = t->setup_log;
	/* marked like an agent of this state dir: a dead controller's
	 * setup is ended at the next start (docs/runner.md#the-mark) */
	if (b->markpfx[0] != '\0') {
		agentmark_format(
		    t->setup_mark, sizeof(t->setup_mark), b->markpfx, 0);
		ro->mark = t->setup_mark;
	}
	ro->timeout_ms =
	    (int64_t)(b->cfg->agents[ROLE_PRIMARY].timeout_s * 1000);
	batch_side_opts(ro, b);
	return b->ops.start(b->ops.ctx, &t->setup, ro, err);
}

static bool
setup_ok(const struct runner_result *res)
{
	return res->exit_code == 0 && res->term_signal == 0 &&
	    !res->timed_out && !res->interrupted && !res->spawn_failed;
}

/* The setup's argv as the attempt row's argv_json. */
static char *
setup_argv_json(const struct strlist *argv)
{
	json_t *a = json_array();
	char *s = NULL;
	size_t i;

	for (i = 0; a != NULL && i < argv->n; i++)
		if (json_array_append_new(a, json_string(argv->items[i])) < 0)
			goto out;
	if (a != NULL)
		s = json_dumps(a, JSON_COMPACT);
out:
	json_decref(a);
	return s;
}

/* The attempt the failed setup stands for, as attempt_begin() would
 * have begun it, running (one durable transaction). */
static int
crash_begin(struct attempt_row *r, struct batch *b, struct slot *sl,
    int64_t started, const char *log, struct sc_err *err)
{
	struct next_attempt nx;
	int rc;

	memset(&nx, 0, sizeof(nx));
	rc = attempt_next(&nx, b, sl->st, err);
	attempt_row_release(&nx.last);
	if (rc < 0)
		goto out;
	r->batch_id = b->batch_id;
	snprintf(r->story_id, sizeof(r->story_id), "%s", sl->st->id);
	r->attempt = nx.attempt;
	r->counted = true;
	r->role = nx.role;
	snprintf(
	    r->agent, sizeof(r->agent), "%s", b->cfg->agents[nx.role].name);
	if ((r->argv_json = setup_argv_json(&b->cfg->worktree.setup)) == NULL) {
		rc = err_set(err, SC_EOS, "out of memory");
		goto out;
	}
	r->controller_pid = getpid();
	r->exit_code = -1;
	r->counts = sl->st->counts;
	r->timeout_factor = r->poll_factor = 1;
	r->started_ms = started;
	snprintf(r->log_path, sizeof(r->log_path), "%s", log);
	sl->st->status = STATUS_RUNNING;
	sl->st->updated_ms = started;
	rc = db_tx_begin(b->db, err);
	if (rc == 0)
		rc = db_story_update(b->db, sl->st, err);
	if (rc == 0)
		rc = db_attempt_begin(b->db, r, err);
	if (rc == 0)
		rc = db_tx_commit(b->db, err);
	if (rc < 0)
		db_tx_rollback(b->db);
out:
	return rc;
}

/*
 * The setup failed: the story's attempt is recorded as a crash with the
 * setup's exit and output (in its gate fields, gate "setup": counted,
 * but no evidence of a plateau, docs/retry-strategy.md#counted), decided
 * like any crash; the slot waits for the next attempt, which runs the
 * setup again, or is free when the story is final.
 */
static int
setup_crash(struct batch *b, struct slot *sl, const struct runner_result *res,
    int64_t started, const char *log, struct sc_err *err)
{
	struct attempt_row r;
	bool tz = false;
	int code = res->term_signal || res->timed_out ? -1 : res->exit_code;
	size_t len = res->tail_len;
	const char *tail = res->tail != NULL ? res->tail : "";
	int rc;

	memset(&r, 0, sizeof(r));
	if ((rc = crash_begin(&r, b, sl, started, log, err)) < 0)
		goto out;
	r.ended_ms = batch_now_ms(b);
	r.exit_code = res->exit_code;
	r.outcome = OUTCOME_CRASH;
	r.error_code = ERRC_CRASH;
	snprintf(r.error_message, sizeof(r.error_message),
	    "worktree setup failed (%s %d)",
	    res->timed_out ? "timed out," : "exit", code);
	snprintf(r.gate, sizeof(r.gate), "setup");
	r.gate_exit = code;
	if (len > SETUP_OUTPUT_MAX) {
		tail += len - SETUP_OUTPUT_MAX;
		len = SETUP_OUTPUT_MAX;
	}
	r.gate_output = redact_text(b->secrets, tail, len, NULL);
	console_line(
	    b, "%s: attempt %d: %s", sl->st->id, r.attempt, r.error_message);
	rc = attempt_decide_record(&tz, b, &r, sl->st, NULL, -1, NULL, err);
	if (rc < 0)
		goto out;
	sl->tz_known = !batch_status_open(sl->st->status);
	sl->tz = tz;
	sl->state = SLOT_FREE;
	if (batch_status_open(sl->st->status) && !b->stop_batch) {
		sl->state = SLOT_WAITING;
		sl->until_ms = r.not_before_ms;
		sl->next_attempt = r.next_attempt;
	}
out:
	attempt_row_release(&r);
	return rc;
}

/* The setup's time and exit, an event of the story it ran for
 * (docs/state.md#events, shown by `show`). */
static int
setup_event(struct batch *b, struct slot *sl, const struct slot_tree *t,
    const struct runner_result *res, int64_t started, struct sc_err *err)
{
	char msg[256], dur[32];

	clock_fmt_duration(dur, sizeof(dur), batch_now_ms(b) - started);
	snprintf(msg, sizeof(msg), "worktree setup (%s, slot %zu): %s %d in %s",
	    t->why != NULL ? t->why : "create", (size_t)(sl - b->slots) + 1,
	    res->timed_out ? "timed out," : "exit",
	    res->term_signal ? res->term_signal : res->exit_code, dur);
	if (!b->o->tty)
		console_line(b, "%s: %s", sl->st->id, msg);
	return db_event_add(
	    b->db, b->batch_id, batch_now_ms(b), sl->st->id, "setup", msg, err);
}

/* Slot sl's kept worktree, when it has one. */
static struct slot_tree *
slot_tree_of(const struct batch *b, const struct slot *sl)
{
	return batch_slot_trees(b) && b->trees != NULL && sl->worktree != NULL
	    ? &b->trees[sl - b->slots]
	    : NULL;
}

int
batch_slot_setup_start(
    struct batch *b, struct slot *sl, bool *started, struct sc_err *err)
{
	struct slot_tree *t = slot_tree_of(b, sl);
	int rc = 0;

	*started = false;
	if (t == NULL || !t->setup_due || t->path == NULL)
		return 0; /* nothing due: the attempt goes ahead */
	t->setup_started = batch_now_ms(b);
	if ((size_t)snprintf(t->setup_log, sizeof(t->setup_log),
		"%s/%s.setup.%lld.log", b->logdir, sl->st->id,
		(long long)t->setup_started) >= sizeof(t->setup_log))
		return err_set(
		    err, SC_EIO, "log path too long under %s", b->logdir);
	rc = setup_start(b, t, err);
	if (rc == 0) {
		sl->state = SLOT_SETUP;
		*started = true;
	}
	return rc;
}

void *
batch_slot_setup_handle(const struct batch *b, const struct slot *sl)
{
	const struct slot_tree *t = slot_tree_of(b, sl);

	return sl->state == SLOT_SETUP && t != NULL ? t->setup : NULL;
}

int
batch_slot_setup_end(
    struct batch *b, struct slot *sl, bool *go, struct sc_err *err)
{
	struct slot_tree *t = slot_tree_of(b, sl);
	struct runner_result res;
	int rc;

	*go = false;
	memset(&res, 0, sizeof(res));
	sl->state = SLOT_FREE;
	if (t == NULL || t->setup == NULL)
		return 0;
	rc = b->ops.finish(b->ops.ctx, t->setup, &res, err);
	t->setup = NULL;
	if (rc == 0)
		rc = setup_event(b, sl, t, &res, t->setup_started, err);
	if (rc < 0)
		goto out;
	if (setup_ok(&res)) {
		t->setup_due = false;
		*go = true;
	} else if (!res.interrupted) {
		rc = setup_crash(
		    b, sl, &res, t->setup_started, t->setup_log, err);
	} /* else stopping: the story stays open, the slot free */
out:
	runner_result_release(&res);
	return rc;
}

void
batch_slot_setup_abandon(struct batch *b, struct slot *sl)
{
	struct slot_tree *t = slot_tree_of(b, sl);
	struct runner_result res;
	struct sc_err ignore;

	if (sl->state != SLOT_SETUP || t == NULL || t->setup == NULL)
		return;
	memset(&res, 0, sizeof(res));
	if (b->ops.finish(b->ops.ctx, t->setup, &res, &ignore) == 0)
		runner_result_release(&res);
	t->setup = NULL;
	sl->state = SLOT_FREE;
}
