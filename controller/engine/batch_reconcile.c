/* batch_reconcile.c - see batch_run_int.h: at start-up, close and
 * decide the attempts a dead controller left running
 * (docs/git-work.md#recovery). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "controller/engine/agentmark.h"
#include "controller/engine/attempt_decide.h"
#include "controller/engine/batch_run_int.h"
#include "controller/engine/console.h"
#include "controller/engine/pgroup.h"
#include "controller/engine/remote.h"
#include "controller/engine/requeue.h"
#include "state/fsutil.h"
#include "state/gitwork.h"
#include "strategies/recovery.h"
#include "strategies/schedule.h"
#include "strategies/suggest.h"

/* How long a dead controller's agents get between SIGTERM and SIGKILL,
 * as for a group recorded by pid (pgroup_kill_stale() below). */
#define RECONCILE_GRACE_MS 2000

/*
 * The progress of a dead controller's attempt is read where its agent
 * worked: under -j N that is the story's worktree
 * (<state dir>/worktrees/<id>), not the main tree's copy of the file,
 * which the agent never touched (docs/git-work.md#recovery).  *wt is the
 * worktree's path (malloc'd) when there is one, else NULL.  A file that
 * cannot be read leaves pr as it was (the row's last heartbeat).
 * SC_EOS only when out of memory.
 */
static int
recovered_progress(struct progress *pr, char **wt, const struct batch *b,
    const struct story *s)
{
	struct progress now;
	struct stat sb;
	char *file = NULL;
	int rc = 0;

	*wt = NULL;
	if ((*wt = fsutil_path_join(b->wtdir, s->id)) == NULL) {
		rc = SC_EOS;
		goto out;
	}
	if (stat(*wt, &sb) < 0 || !S_ISDIR(sb.st_mode)) {
		free(*wt);
		*wt = NULL;
	}
	file = *wt != NULL ? fsutil_path_join(*wt, s->file)
			   : story_abspath(s, b->cfg->root);
	if (file == NULL) {
		rc = SC_EOS;
		goto out;
	}
	if (story_read_progress(&now, file, *wt != NULL ? *wt : b->cfg->root,
		b->cfg->tasks_heading, NULL) == 0)
		*pr = now;
out:
	free(file);
	return rc;
}

/*
 * Close row r, left running by a dead controller, at now (or its last
 * heartbeat) with the progress pr, as strategies/recovery.c says: the
 * first death of this attempt number is `interrupted`, not counted; the
 * second a counted crash (docs/reliability.md#controller-deaths).
 */
static void
close_left_running(struct attempt_row *r, const struct progress *pr,
    int64_t now, const struct recovery_in *in)
{
	struct recovery_out rec;

	recovery_close(&rec, in);
	r->ended_ms = now;
	if (r->heartbeat_ms > r->started_ms && r->heartbeat_ms < r->ended_ms)
		r->ended_ms = r->heartbeat_ms;
	r->exit_code = -1;
	r->outcome = rec.outcome;
	r->error_code = rec.code;
	snprintf(r->error_message, sizeof(r->error_message), "%s", rec.message);
	r->counts = pr->counts;
	snprintf(
	    r->stalled_task, sizeof(r->stalled_task), "%s", pr->stalled_task);
}

/* Close attempt r that a dead controller left running and decide it
 * (docs/state.md): its progress as the story file shows it now, where
 * its agent worked. */
static int
reconcile_one(struct batch *b, struct attempt_row *r, int64_t stop_pid,
    const char *stop_why, struct sc_err *err)
{
	char *wt = NULL;
	struct story_row st;
	struct progress pr;
	struct recovery_in in;
	const struct story *s;
	int64_t now = b->o->clock.now_ms(b->o->clock.ctx);
	int found = 0;
	int rc;

	rc = db_story_get(b->db, &st, &found, r->batch_id, r->story_id, err);
	if (rc < 0 || !found)
		goto out;
	s = batch_story_by_id(b->o, r->story_id);
	memset(&pr, 0, sizeof(pr));
	pr.counts = r->counts;
	if (s != NULL && recovered_progress(&pr, &wt, b, s) < 0) {
		rc = err_set(err, SC_EOS, "out of memory");
		goto out;
	}
	memset(&in, 0, sizeof(in));
	in.attempt = r->attempt;
	in.controller_pid = r->controller_pid;
	in.stopped = stop_pid > 0 && r->controller_pid == stop_pid;
	in.stop_why = stop_why;
	/* the death is on record before the row closes: a start that dies
	 * in between still counts it next time */
	rc = db_deaths_before(
	    b->db, &in.earlier_deaths, &in.earlier_pid, r, err);
	if (rc == 0)
		rc = db_death_add(
		    b->db, r->id, r->controller_pid, in.stopped, now, err);
	if (rc < 0)
		goto out;
	close_left_running(r, &pr, now, &in);
	console_line(b,
	    "%s: attempt %d was left running by a %s "
	    "controller (pid %lld): closed as %s",
	    r->story_id, r->attempt, in.stopped ? "stopped" : "dead",
	    (long long)r->controller_pid, outcome_name(r->outcome));
	rc = attempt_decide_record(NULL, b, r, &st, NULL, -1, NULL, err);
	if (rc < 0)
		goto out;
	/* decided final: its work is committed and its worktree goes,
	 * exactly as after a live decision */
	if (wt != NULL && !batch_status_open(st.status))
		rc = batch_worktree_settle(b, &st, wt, err);
out:
	free(wt);
	return rc;
}

/*
 * Before anything else: end every process that carries this state dir's
 * mark (docs/runner.md#the-mark).  We hold the lock, so none of them is
 * a live controller's: each is an agent (or a gate, a reviewer, one of
 * their children) of a controller that died, whether or not its pid
 * reached the database.  One that cannot be ended keeps the batch from
 * starting anything: two agents never work one tree.
 */
static int
reconcile_end_marked(struct batch *b, struct sc_err *err)
{
	int ended = 0, left = 0;

	agentmark_end_all(&ended, &left, b->markpfx, RECONCILE_GRACE_MS);
	if (ended > 0)
		console_line(b,
		    "ended %d process%s that a dead controller's agents "
		    "left running",
		    ended, ended == 1 ? "" : "es");
	if (left > 0)
		return err_set(err, SC_ETEMPFAIL,
		    "%d process%s left by a dead controller's agents (%s…) "
		    "could not be ended; nothing starts while one may still "
		    "work in a story's tree",
		    left, left == 1 ? "" : "es", b->markpfx);
	return 0;
}

/*
 * A `running` attempt whose controller is gone (we hold the lock, so
 * every one is): kill its process group if it survived, close it as
 * interrupted (or, the second time, a crash) with the progress the
 * story file shows now, and decide it.
 */
int
batch_reconcile(struct batch *b, struct sc_err *err)
{
	const char *stop_why = "";
	int64_t stop_pid;
	struct attempt_row *rows = NULL;
	size_t n = 0, i;
	int64_t keep = b->batch_id;
	int rc;

	stop_pid = lock_prev_stop(b->lock, &stop_why);
	rc = reconcile_end_marked(b, err);
	if (rc == 0)
		rc = db_attempts_running(b->db, &rows, &n, err);
	if (rc < 0 || n == 0)
		goto out;
	for (i = 0; i < n; i++) {
		struct attempt_row *r = &rows[i];

		/* only the group we started: after a reboot the pid may
		 * belong to someone else */
		if (r->pid > 0 && r->pid_start > 0)
			pgroup_kill_stale((int)r->pid, (uint64_t)r->pid_start,
			    RECONCILE_GRACE_MS);
		/* and its remote job, before anything new starts */
		remote_cancel(b, r->story_id, r->attempt, r->log_path);
		if (b->batch_id != r->batch_id) {
			/* a branch that lags gets its catch-up commit before
			 * this decision's, which would hide the lag */
			b->batch_id = r->batch_id;
			rc = statebranch_sync(
			    &b->sb, b->batch_id, batch_now_ms(b), err);
			if (rc < 0)
				goto out;
		}
		rc = reconcile_one(b, r, stop_pid, stop_why, err);
		if (rc < 0)
			goto out;
	}
	rc = statebranch_flush(&b->sb, batch_now_ms(b), err);
out:
	if (rc == 0)
		lock_clear_stop(b->lock);
	b->batch_id = keep;
	attempt_rows_free(rows, n);
	return rc;
}
