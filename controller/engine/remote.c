/*
 * remote.c - see remote.h: the controller's half of the remote executor
 * (docs/cluster.md#how-an-attempt-runs-remotely); the worker's half is
 * `storyctl job` (cmd_job.c).
 */
#include <stdio.h>
#include <string.h>

#include "controller/config/argv.h"
#include "controller/engine/batch_int.h"
#include "controller/engine/console.h"
#include "controller/engine/remote.h"
#include "state/gitremote.h"
#include "state/gitwork.h"

/* How long the cancel command may take before it is killed. */
#define CANCEL_TIMEOUT_MS 30000

static void
branch_of(char *out, size_t len, const char *story_id)
{
	snprintf(out, len, "storyctl/story/%s", story_id);
}

int
remote_push(struct batch *b, struct slot *sl, struct sc_err *err)
{
	char branch[256], msg[300];
	int committed = 0;
	int rc;

	if (!b->cfg->executor.is_remote)
		return 0;
	if (sl->worktree == NULL)
		return err_set(err, SC_ESOFTWARE,
		    "%s: the remote executor needs the story's worktree",
		    sl->st->id);
	branch_of(branch, sizeof(branch), sl->st->id);
	snprintf(msg, sizeof(msg), "storyctl: %s before the next attempt",
	    sl->st->id);
	rc = gitwork_commit_all(&committed, NULL, sl->worktree, NULL, NULL, msg,
	    batch_now_ms(b) / 1000, err);
	if (rc == 0)
		rc = gitremote_push(
		    sl->worktree, b->cfg->executor.remote, branch, true, err);
	if (rc < 0)
		err_prefix(err, "%s: executor.remote", sl->st->id);
	return rc;
}

/* The launch prefix or the cancel command with {story_id} and
 * {attempt} filled in (config_executor.c allows no other). */
static int
expand_job(struct strlist *out, const struct strlist *tmpl,
    const char *story_id, int attempt, struct sc_err *err)
{
	struct argv_vars v;

	memset(&v, 0, sizeof(v));
	v.story_id = story_id;
	v.attempt = attempt;
	if (tmpl->n == 0)
		return 0;
	return argv_expand(out, tmpl, &v, err);
}

/* A confined role's agent is confined on the worker too, the same
 * way (docs/sandbox.md#remote): the job refuses to run it otherwise,
 * since its argv is the full-autonomy one. */
static int
push_confine(struct strlist *w, const struct batch *b, enum role role)
{
	const struct agent_conf *ag = &b->cfg->agents[role];

	if (!b->o->confined[role])
		return 0;
	if (strlist_push(w, "--sandbox") < 0)
		return -1;
	if (!ag->sandbox.network && strlist_push(w, "--sandbox-no-network") < 0)
		return -1;
	if (ag->preset[0] != '\0' &&
	    (strlist_push(w, "--sandbox-preset") < 0 ||
		strlist_push(w, ag->preset) < 0))
		return -1;
	return 0;
}

int
remote_wrap(struct strlist *argv, const struct batch *b, const struct slot *sl,
    int attempt, enum role role, struct sc_err *err)
{
	const struct executor_conf *ex = &b->cfg->executor;
	struct strlist w = {0};
	char branch[256], num[16], grace[32];
	int64_t g = batch_kill_grace_ms(b);
	size_t i;
	int rc;

	if (!ex->is_remote)
		return 0;
	branch_of(branch, sizeof(branch), sl->st->id);
	snprintf(num, sizeof(num), "%d", attempt);
	/* the job must stop its agent and push within our own grace */
	snprintf(grace, sizeof(grace), "%lld", (long long)(g / 2));
	rc = expand_job(&w, &ex->launch, sl->st->id, attempt, err);
	if (rc < 0)
		goto out;
	if (strlist_push(&w, "storyctl") < 0 || strlist_push(&w, "job") < 0 ||
	    strlist_push(&w, "--remote") < 0 ||
	    strlist_push(&w, ex->remote) < 0 ||
	    strlist_push(&w, "--branch") < 0 || strlist_push(&w, branch) < 0 ||
	    strlist_push(&w, "--story") < 0 ||
	    strlist_push(&w, sl->st->id) < 0 ||
	    strlist_push(&w, "--attempt") < 0 || strlist_push(&w, num) < 0 ||
	    strlist_push(&w, "--kill-grace-ms") < 0 ||
	    strlist_push(&w, grace) < 0 || push_confine(&w, b, role) < 0 ||
	    strlist_push(&w, "--") < 0) {
		rc = err_set(err, SC_EOS, "out of memory");
		goto out;
	}
	for (i = 0; i < argv->n; i++)
		if (strlist_push(&w, argv->items[i]) < 0) {
			rc = err_set(err, SC_EOS, "out of memory");
			goto out;
		}
	strlist_release(argv);
	*argv = w;
	memset(&w, 0, sizeof(w));
out:
	strlist_release(&w);
	return rc;
}

void
remote_cancel(
    struct batch *b, const char *story_id, int attempt, const char *log_path)
{
	const struct executor_conf *ex = &b->cfg->executor;
	struct strlist argv = {0};
	struct runner_opts ro;
	struct runner_result res;
	struct sc_err e;

	if (!ex->is_remote || ex->cancel.n == 0)
		return;
	err_clear(&e);
	memset(&ro, 0, sizeof(ro));
	memset(&res, 0, sizeof(res));
	if (expand_job(&argv, &ex->cancel, story_id, attempt, &e) < 0)
		goto out;
	ro.argv = (const char *const *)argv.items;
	ro.cwd = b->cfg->root;
	ro.log_path = log_path;
	ro.timeout_ms = CANCEL_TIMEOUT_MS;
	ro.kill_grace_ms = 2000;
	ro.tail_max = 4096;
	/* no stop flag: a stopping controller must still cancel */
	if (runner_run(&res, &ro, &e) < 0)
		goto out;
	if (res.exit_code != 0)
		console_line(b, "%s: attempt %d: executor.cancel exited %d",
		    story_id, attempt, res.exit_code);
	runner_result_release(&res);
out:
	if (e.msg[0] != '\0')
		console_line(b, "%s: attempt %d: executor.cancel: %s", story_id,
		    attempt, e.msg);
	strlist_release(&argv);
}

void
remote_collect(struct batch *b, struct slot *sl, int attempt,
    const struct runner_result *res, const char *log_path)
{
	char branch[256], hex[GITWORK_HEXSZ];
	struct sc_err e;

	if (!b->cfg->executor.is_remote || sl->worktree == NULL)
		return;
	if (res->timed_out || res->stalled || res->interrupted ||
	    res->term_signal != 0)
		remote_cancel(b, sl->st->id, attempt, log_path);
	err_clear(&e);
	branch_of(branch, sizeof(branch), sl->st->id);
	if (gitremote_fetch(
		hex, sl->worktree, b->cfg->executor.remote, branch, &e) < 0 ||
	    gitremote_apply(sl->worktree, hex, &e) < 0)
		console_line(b,
		    "%s: attempt %d: the branch could not be fetched back, "
		    "the last pushed state counts: %s",
		    sl->st->id, attempt, e.msg);
}
