/*
 * batch.c - open the state (lock, database, state branch), close what a
 * dead controller left running, pick or create the batch, and run its
 * pending stories in order.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "controller/batch_int.h"
#include "controller/requeue.h"
#include "state/gitwork.h"
#include "strategies/schedule.h"
#include "strategies/suggest.h"

int
batch_real_runner(void *ctx, struct runner_result *out,
    const struct runner_opts *o, struct sc_err *err)
{
	(void)ctx;
	return runner_run(out, o, err);
}

/* The blocking run_agent seam as an asynchronous one: start runs the
 * whole attempt, so a handle is done as soon as it exists. */
struct sync_handle {
	struct runner_result res;
};

static int
sync_start(
    void *ctx, void **handle, const struct runner_opts *o, struct sc_err *err)
{
	const struct batch_opts *bo = ctx;
	struct sync_handle *h = calloc(1, sizeof(*h));
	int rc;

	*handle = NULL;
	if (h == NULL)
		return err_set(err, SC_EOS, "out of memory");
	rc = bo->run_agent(bo->run_ctx, &h->res, o, err);
	if (rc < 0) {
		free(h);
		return rc;
	}
	*handle = h;
	return 0;
}

static int
sync_wait(void *ctx, void *const *handles, size_t n, int64_t timeout_ms,
    int wake_fd, struct sc_err *err)
{
	(void)ctx;
	(void)handles;
	(void)timeout_ms;
	(void)wake_fd;
	(void)err;
	return (int)n;
}

static bool
sync_done(void *ctx, const void *handle)
{
	(void)ctx;
	(void)handle;
	return true;
}

static int
sync_finish(
    void *ctx, void *handle, struct runner_result *out, struct sc_err *err)
{
	struct sync_handle *h = handle;

	(void)ctx;
	(void)err;
	*out = h->res;
	free(h);
	return 0;
}

static int
real_start(
    void *ctx, void **handle, const struct runner_opts *o, struct sc_err *err)
{
	struct runner_proc *p = NULL;
	int rc;

	(void)ctx;
	rc = runner_start(&p, o, err);
	*handle = p;
	return rc;
}

static int
real_wait(void *ctx, void *const *handles, size_t n, int64_t timeout_ms,
    int wake_fd, struct sc_err *err)
{
	(void)ctx;
	return runner_wait(
	    (struct runner_proc *const *)handles, n, timeout_ms, wake_fd, err);
}

static bool
real_done(void *ctx, const void *handle)
{
	(void)ctx;
	return runner_proc_done(handle);
}

static int
real_finish(
    void *ctx, void *handle, struct runner_result *out, struct sc_err *err)
{
	(void)ctx;
	return runner_proc_finish(handle, out, err);
}

void
batch_real_ops(struct batch_agent_ops *out)
{
	out->start = real_start;
	out->wait = real_wait;
	out->done = real_done;
	out->finish = real_finish;
	out->ctx = NULL;
}

static int
rm_one(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	return remove(path);
}

/* rm -rf path (only ever a worktree under the state dir). */
static void
rm_tree(const char *path)
{
	nftw(path, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* Copy the file at src to dst (creating dst's directory), for a story
 * file that a new worktree does not have yet. */
static int
copy_file(const char *dst, const char *src, struct sc_err *err)
{
	char *dir = strdup(dst), *p;
	char buf[65536];
	int in = -1, out = -1, rc = 0;
	ssize_t got;

	if (dir == NULL)
		return err_set(err, SC_EOS, "out of memory");
	for (p = dir + 1; *p != '\0'; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(dir, 0755) < 0 && errno != EEXIST) {
			rc = err_set(err, SC_EIO, "cannot create %s: %s", dir,
			    strerror(errno));
			goto out;
		}
		*p = '/';
	}
	in = open(src, O_RDONLY | O_CLOEXEC);
	out = open(dst, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (in < 0 || out < 0) {
		rc = err_set(err, SC_EIO, "cannot copy %s to %s: %s", src, dst,
		    strerror(errno));
		goto out;
	}
	while ((got = read(in, buf, sizeof(buf))) > 0) {
		if (write(out, buf, (size_t)got) != got) {
			rc = err_set(err, SC_EIO, "cannot write %s: %s", dst,
			    strerror(errno));
			goto out;
		}
	}
	if (got < 0)
		rc = err_set(
		    err, SC_EIO, "cannot read %s: %s", src, strerror(errno));
out:
	if (in >= 0)
		close(in);
	if (out >= 0)
		close(out);
	free(dir);
	return rc;
}

static const struct story *
story_by_id(const struct batch_opts *o, const char *id)
{
	size_t i;

	for (i = 0; i < o->nstories; i++)
		if (strcmp(o->stories[i].id, id) == 0)
			return &o->stories[i];
	return NULL;
}

/*
 * The loop's compact view of the batch (run_stories()): one small entry
 * per story, in position order, so that a batch of thousands of stories
 * costs some tens of bytes per story.  An entry's index is the story's
 * index in the loop (the breaker's counted[] too).  A story's full row
 * lives in its slot while a slot holds it; otherwise it is read from the
 * database when needed (sched_row()).  Ids are looked up once, when the
 * schedule is built: the loop follows indexes.
 */
struct sched_ent {
	const struct story *s; /* NULL: no longer in the config */
	const char *id; /* s->id, or malloc'd when s is NULL */
	int ci; /* its index in cfg->stories, -1 when none */
	int slot; /* the slot holding it, -1 when none */
	enum story_status status; /* the database's while in no slot */
	bool wanted; /* `run STORY...` names it, or names none */
	size_t dep, ndeps; /* its dependencies in the batch: deps[dep..] */
};

struct sched {
	struct sched_ent *e;
	size_t n, cap;
	size_t *deps; /* entry indexes, in depends_on order */
	size_t cursor; /* every entry before it is final or not wanted */
	uint64_t gen; /* bumped by every change slot_fill() looks at */
	uint64_t idle_gen; /* gen when slot_fill() last found nothing */
};

/* Rows read at a time while the schedule is built. */
#define SCHED_PAGE 200

/* An id and where it is, sorted by id, then index. */
struct id_ix {
	const char *id;
	size_t ix;
};

static int
id_ix_cmp(const void *a, const void *b)
{
	const struct id_ix *x = a, *y = b;
	int c = strcmp(x->id, y->id);

	if (c != 0)
		return c;
	return x->ix < y->ix ? -1 : x->ix > y->ix;
}

/* The lowest index with this id in v[0..n) (the first match of a
 * linear search), or SIZE_MAX. */
static size_t
id_ix_find(const struct id_ix *v, size_t n, const char *id)
{
	size_t lo = 0, hi = n, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (strcmp(v[mid].id, id) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && strcmp(v[lo].id, id) == 0 ? v[lo].ix : SIZE_MAX;
}

static bool
status_open(enum story_status s)
{
	return s == STATUS_PENDING || s == STATUS_RUNNING;
}

static void
sched_drop(struct sched *sc)
{
	size_t i;

	for (i = 0; i < sc->n; i++)
		if (sc->e[i].s == NULL)
			free((char *)sc->e[i].id);
	sc->n = 0;
}

static void
sched_free(struct sched *sc)
{
	sched_drop(sc);
	free(sc->e);
	free(sc->deps);
	memset(sc, 0, sizeof(*sc));
}

/* Append row's entry; by_id indexes b->o->stories. */
static int
sched_add(struct sched *sc, const struct batch *b, const struct id_ix *by_id,
    const struct story_row *row, struct sc_err *err)
{
	const struct config *cfg = b->cfg;
	struct sched_ent *e, *grown;
	size_t si, cap;
	char *id;

	if (sc->n == sc->cap) {
		cap = sc->cap > 0 ? sc->cap * 2 : 64;
		grown = realloc(sc->e, cap * sizeof(*grown));
		if (grown == NULL)
			return err_set(err, SC_EOS, "out of memory");
		sc->e = grown;
		sc->cap = cap;
	}
	e = &sc->e[sc->n];
	memset(e, 0, sizeof(*e));
	si = id_ix_find(by_id, b->o->nstories, row->id);
	if (si != SIZE_MAX) {
		e->s = &b->o->stories[si];
		e->id = e->s->id;
	} else {
		id = strdup(row->id);
		if (id == NULL)
			return err_set(err, SC_EOS, "out of memory");
		e->id = id;
	}
	/* o->stories is cfg->stories loaded, in the same order */
	if (si != SIZE_MAX && si < cfg->nstories &&
	    strcmp(cfg->stories[si].id, row->id) == 0)
		e->ci = (int)si;
	else
		e->ci = config_story_index(cfg, row->id);
	e->slot = -1;
	e->status = row->status;
	e->wanted = b->o->nonly == 0;
	sc->n++;
	return 0;
}

/* Dependencies as entry indexes, and the `run STORY...` filter. */
static int
sched_link(struct sched *sc, const struct batch *b, struct sc_err *err)
{
	const struct config *cfg = b->cfg;
	const struct strlist *deps;
	struct id_ix *by_id = NULL;
	size_t i, j, k, total = 0, used = 0;

	by_id = calloc(sc->n + 1, sizeof(*by_id));
	if (by_id == NULL)
		return err_set(err, SC_EOS, "out of memory");
	for (i = 0; i < sc->n; i++) {
		by_id[i].id = sc->e[i].id;
		by_id[i].ix = i;
		if (sc->e[i].ci >= 0)
			total += cfg->stories[sc->e[i].ci].depends_on.n;
	}
	qsort(by_id, sc->n, sizeof(*by_id), id_ix_cmp);
	sc->deps = calloc(total + 1, sizeof(*sc->deps));
	if (sc->deps == NULL) {
		free(by_id);
		return err_set(err, SC_EOS, "out of memory");
	}
	for (i = 0; i < sc->n; i++) {
		sc->e[i].dep = used;
		deps = sc->e[i].ci >= 0 ? &cfg->stories[sc->e[i].ci].depends_on
					: NULL;
		/* a dependency outside this batch does not hold it back */
		for (k = 0; deps != NULL && k < deps->n; k++) {
			j = id_ix_find(by_id, sc->n, deps->items[k]);
			if (j != SIZE_MAX)
				sc->deps[used++] = j;
		}
		sc->e[i].ndeps = used - sc->e[i].dep;
	}
	for (i = 0; i < b->o->nonly; i++) {
		j = id_ix_find(by_id, sc->n, b->o->only[i]);
		if (j != SIZE_MAX)
			sc->e[j].wanted = true;
	}
	free(by_id);
	return 0;
}

/*
 * The schedule of the batch, read a page of rows at a time, so that the
 * full rows of the batch are never all in memory.  select_batch() gives
 * the stories positions 0..N-1; a batch whose positions have gaps is
 * read whole instead (the same order: by position, then id).
 */
static int
sched_build(struct sched *sc, const struct batch *b, struct sc_err *err)
{
	const struct batch_opts *o = b->o;
	struct story_row *rows = NULL;
	struct id_ix *by_id = NULL;
	int counts[STATUS__COUNT];
	size_t got = 0, total = 0, i;
	int from, rc = 0;

	memset(sc, 0, sizeof(*sc));
	sc->gen = 1;
	by_id = calloc(o->nstories + 1, sizeof(*by_id));
	if (by_id == NULL) {
		rc = err_set(err, SC_EOS, "out of memory");
		goto out;
	}
	for (i = 0; i < o->nstories; i++) {
		by_id[i].id = o->stories[i].id;
		by_id[i].ix = i;
	}
	qsort(by_id, o->nstories, sizeof(*by_id), id_ix_cmp);
	for (from = 0; rc == 0; from += SCHED_PAGE) {
		rc = db_story_range(
		    b->db, &rows, &got, b->batch_id, from, SCHED_PAGE, err);
		for (i = 0; rc == 0 && i < got; i++)
			rc = sched_add(sc, b, by_id, &rows[i], err);
		free(rows);
		rows = NULL;
		if (got < SCHED_PAGE)
			break;
	}
	if (rc == 0)
		rc = db_status_counts(b->db, counts, b->batch_id, err);
	for (i = 0; rc == 0 && i < STATUS__COUNT; i++)
		total += (size_t)counts[i];
	if (rc == 0 && total != sc->n) {
		sched_drop(sc);
		rc = db_story_list(b->db, &rows, &got, b->batch_id, NULL, err);
		for (i = 0; rc == 0 && i < got; i++)
			rc = sched_add(sc, b, by_id, &rows[i], err);
	}
	if (rc == 0)
		rc = sched_link(sc, b, err);
out:
	free(rows);
	free(by_id);
	if (rc < 0)
		sched_free(sc);
	return rc;
}

/* Entry i changed (its status, its slot): slot_fill() looks again, from
 * i on when it is open again. */
static void
sched_touch(struct sched *sc, size_t i)
{
	if (i < sc->cursor)
		sc->cursor = i;
	sc->gen++;
}

/* Story i's status now: its slot's row while a slot holds it. */
static enum story_status
sched_status(const struct batch *b, const struct sched *sc, size_t i)
{
	const struct sched_ent *e = &sc->e[i];

	return e->slot >= 0 ? b->slots[e->slot].st->status : e->status;
}

/* Story i's full row from the database (it is in no slot). */
static int
sched_row(struct story_row *out, const struct batch *b, const struct sched *sc,
    size_t i, struct sc_err *err)
{
	int found = 0;
	int rc;

	rc = db_story_get(b->db, out, &found, b->batch_id, sc->e[i].id, err);
	if (rc == 0 && !found)
		rc = err_set(err, SC_EIO, "%s: story %s of batch %lld is gone",
		    db_path(b->db), sc->e[i].id, (long long)b->batch_id);
	return rc;
}

static int
mkdir_private(const char *path, struct sc_err *err)
{
	if (mkdir(path, 0700) < 0 && errno != EEXIST)
		return err_set(
		    err, SC_EIO, "cannot create %s: %s", path, strerror(errno));
	return 0;
}

static int worktree_settle(struct batch *b, const struct story_row *st,
    const char *worktree, struct sc_err *err);
static int story_branch_unlock(
    struct batch *b, const char *id, struct sc_err *err);

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
	if (asprintf(wt, "%s/%s", b->wtdir, s->id) < 0) {
		*wt = NULL;
		rc = SC_EOS;
		goto out;
	}
	if (stat(*wt, &sb) < 0 || !S_ISDIR(sb.st_mode)) {
		free(*wt);
		*wt = NULL;
	} else if (asprintf(&file, "%s/%s", *wt, s->file) < 0) {
		file = NULL;
		rc = SC_EOS;
		goto out;
	}
	if (story_read_progress(&now, file != NULL ? file : s->abspath,
		*wt != NULL ? *wt : b->cfg->root, b->cfg->tasks_heading,
		NULL) == 0)
		*pr = now;
out:
	free(file);
	return rc;
}

/*
 * A `running` attempt whose controller is gone (we hold the lock, so
 * every one is): kill its process group if it survived, close it as a
 * crash with the progress the story file shows now, and decide it like
 * any crash.
 */
static int
reconcile(struct batch *b, struct sc_err *err)
{
	char *wt = NULL;
	const char *stop_why = "";
	int64_t stop_pid;
	struct attempt_row *rows = NULL;
	struct story_row st;
	struct progress pr;
	const struct story *s;
	size_t n = 0, i;
	int found = 0;
	int64_t keep = b->batch_id;
	int rc;

	stop_pid = lock_prev_stop(b->lock, &stop_why);
	rc = db_attempts_running(b->db, &rows, &n, err);
	if (rc < 0 || n == 0)
		goto out;
	for (i = 0; i < n; i++) {
		struct attempt_row *r = &rows[i];

		/* only the group we started: after a reboot the pid may
		 * belong to someone else */
		if (r->pid > 0 && r->pid_start > 0)
			runner_kill_stale_group(
			    (int)r->pid, (uint64_t)r->pid_start, 2000);
		if (b->batch_id != r->batch_id) {
			/* a branch that lags gets its catch-up commit before
			 * this decision's, which would hide the lag */
			b->batch_id = r->batch_id;
			rc = record_sync(b, err);
			if (rc < 0)
				goto out;
		}
		rc = db_story_get(
		    b->db, &st, &found, r->batch_id, r->story_id, err);
		if (rc < 0)
			goto out;
		if (!found)
			continue;
		s = story_by_id(b->o, r->story_id);
		memset(&pr, 0, sizeof(pr));
		pr.tasks_completed = r->tasks_completed;
		pr.tasks_total = r->tasks_total;
		pr.subtasks_completed = r->subtasks_completed;
		pr.subtasks_total = r->subtasks_total;
		free(wt);
		wt = NULL;
		if (s != NULL)
			rc = recovered_progress(&pr, &wt, b, s);
		if (rc < 0) {
			rc = err_set(err, SC_EOS, "out of memory");
			goto out;
		}
		r->ended_ms = b->o->clock.now_ms(b->o->clock.ctx);
		if (r->heartbeat_ms > r->started_ms &&
		    r->heartbeat_ms < r->ended_ms)
			r->ended_ms = r->heartbeat_ms;
		r->exit_code = -1;
		if (stop_pid > 0 && r->controller_pid == stop_pid) {
			/* it stopped on an error it reported (a full disk):
			 * what happened, not a crash, and not counted (D4) */
			r->outcome = OUTCOME_INTERRUPTED;
			r->error_code = ERRC_INTERRUPTED;
			snprintf(r->error_message, sizeof(r->error_message),
			    "the controller (pid %lld) stopped on an error "
			    "during this attempt and could not record its "
			    "end: %.300s",
			    (long long)r->controller_pid, stop_why);
		} else {
			r->outcome = OUTCOME_CRASH;
			r->error_code = ERRC_CRASH;
			snprintf(r->error_message, sizeof(r->error_message),
			    "the controller (pid %lld) died during this "
			    "attempt; closed as a crash at start-up",
			    (long long)r->controller_pid);
		}
		r->tasks_completed = pr.tasks_completed;
		r->tasks_total = pr.tasks_total;
		r->subtasks_completed = pr.subtasks_completed;
		r->subtasks_total = pr.subtasks_total;
		snprintf(r->stalled_task, sizeof(r->stalled_task), "%s",
		    pr.stalled_task);
		record_line(b,
		    "%s: attempt %d was left running by a %s "
		    "controller (pid %lld): closed as %s",
		    r->story_id, r->attempt,
		    r->outcome == OUTCOME_CRASH ? "dead" : "stopped",
		    (long long)r->controller_pid, outcome_name(r->outcome));
		rc = batch_decide_and_record(NULL, b, r, &st, NULL, -1, err);
		if (rc < 0)
			goto out;
		/* decided final: its work is committed and its worktree goes,
		 * exactly as after a live decision */
		if (wt != NULL && !status_open(st.status))
			rc = worktree_settle(b, &st, wt, err);
		if (rc < 0)
			goto out;
	}
	rc = record_flush(b, err);
out:
	if (rc == 0)
		lock_clear_stop(b->lock);
	b->batch_id = keep;
	free(wt);
	attempt_rows_free(rows, n);
	return rc;
}

static bool
wanted(const struct batch_opts *o, const char *id)
{
	size_t i;

	if (o->nonly == 0)
		return true;
	for (i = 0; i < o->nonly; i++)
		if (strcmp(o->only[i], id) == 0)
			return true;
	return false;
}

/* The status of dependency k of one entry, for schedule_deps_state(). */
struct dep_view {
	const struct batch *b;
	const struct sched *sc;
	const struct sched_ent *e;
};

static enum story_status
dep_status(const void *ctx, size_t k)
{
	const struct dep_view *v = ctx;

	return sched_status(v->b, v->sc, v->sc->deps[v->e->dep + k]);
}

/* Whether story i may run now given the statuses of its dependencies in
 * the batch (the rule is strategies/schedule.c's, docs/scheduling.md);
 * *why is the dependency that blocks it or that it waits on first
 * (SIZE_MAX when ready). */
static enum sched_state
row_state(const struct batch *b, const struct sched *sc, size_t i, size_t *why)
{
	struct dep_view v = {b, sc, &sc->e[i]};
	enum sched_state st;
	size_t k;

	st = schedule_deps_state(&k, v.e->ndeps, dep_status, &v);
	*why = k == SIZE_MAX ? SIZE_MAX : sc->deps[v.e->dep + k];
	return st;
}

/* `run STORY...` names a story the config does not have: the error,
 * with the nearest id (docs/stories.md "Ids"). */
static int
no_such_story(const struct batch *b, const char *id, struct sc_err *err)
{
	const struct batch_opts *o = b->o;
	struct suggest sg;
	size_t i;
	int best;

	suggest_init(&sg, id);
	for (i = 0; i < o->nstories && i < INT_MAX; i++)
		suggest_add(&sg, o->stories[i].id, (int)i);
	best = suggest_best(&sg);
	return err_set(err, SC_EUSAGE, "no story '%s' in %s%s%s%s", id,
	    b->cfg->path ? b->cfg->path : "the config",
	    best >= 0 ? "; did you mean " : "",
	    best >= 0 ? o->stories[best].id : "", best >= 0 ? "?" : "");
}

/* What a new batch leaves out, one line each (docs/stories.md
 * "Drafts"): drafts (story_skipped()), and the sprint status's entries
 * that have no story file. */
static void
skipped_lines(struct batch *b, const struct story *s)
{
	const struct config *cfg = b->cfg;
	size_t i;

	if (s != NULL) {
		record_line(b,
		    "skipping %s: Status: %s (run --include-drafts to run "
		    "it)",
		    s->id, s->status_line);
		return;
	}
	for (i = 0; b->o->nonly == 0 && i < cfg->stories_skipped.n; i++)
		record_line(b, "skipping %s", cfg->stories_skipped.items[i]);
}

static int
select_batch(struct batch *b, struct batch_result *res, struct sc_err *err)
{
	const struct batch_opts *o = b->o;
	struct batch_row br;
	struct story_row st;
	int found = 0, ok;
	size_t i, k, pos = 0;
	size_t *order = NULL;
	int rc;

	for (i = 0; i < o->nonly; i++)
		if (story_by_id(o, o->only[i]) == NULL)
			return no_such_story(b, o->only[i], err);
	rc = db_batch_current(b->db, &br, &found, err);
	if (rc < 0)
		return rc;
	if (found) {
		b->batch_id = br.id;
		if (strcmp(br.status, "running") != 0)
			rc = db_batch_set_status(b->db, br.id, "running",
			    o->clock.now_ms(o->clock.ctx), err);
		for (i = 0; rc == 0 && i < o->nonly; i++) {
			rc = db_story_get(
			    b->db, &st, &ok, br.id, o->only[i], err);
			if (rc == 0 && !ok)
				rc = err_set(err, SC_EUSAGE,
				    "story '%s' is not "
				    "in the unfinished batch %lld; finish it "
				    "with 'storyctl resume' first",
				    o->only[i], (long long)br.id);
		}
		return rc;
	}
	if (o->mode == BATCH_RESUME) {
		res->nothing = true;
		/* nothing to run, but the branch may lag the last batch */
		rc = db_batch_latest(b->db, &br, &found, err);
		if (rc == 0 && found) {
			b->batch_id = br.id;
			rc = record_sync(b, err);
		}
		return rc;
	}
	rc = stories_order(&order, b->cfg, err);
	if (rc < 0)
		return rc;
	rc = db_tx_begin(b->db, err);
	if (rc < 0) {
		free(order);
		return rc;
	}
	rc = db_batch_create(
	    b->db, &b->batch_id, o->clock.now_ms(o->clock.ctx), err);
	for (k = 0; rc == 0 && k < o->nstories; k++) {
		const struct story *s = &o->stories[order[k]];
		if (!wanted(o, s->id))
			continue;
		if (story_skipped(s, b->cfg)) {
			skipped_lines(b, s);
			continue;
		}
		memset(&st, 0, sizeof(st));
		st.batch_id = b->batch_id;
		snprintf(st.id, sizeof(st.id), "%s", s->id);
		snprintf(st.file, sizeof(st.file), "%s", s->file);
		st.position = (int)pos++;
		st.status = STATUS_PENDING;
		st.tasks_completed = s->tasks_completed;
		st.tasks_total = s->tasks_total;
		st.subtasks_completed = s->subtasks_completed;
		st.subtasks_total = s->subtasks_total;
		st.updated_ms = o->clock.now_ms(o->clock.ctx);
		rc = db_story_add(b->db, &st, err);
	}
	free(order);
	if (rc == 0)
		skipped_lines(b, NULL);
	if (rc == 0)
		rc = db_tx_commit(b->db, err);
	if (rc < 0) {
		db_tx_rollback(b->db);
		return rc;
	}
	rc = db_event_add(b->db, b->batch_id, o->clock.now_ms(o->clock.ctx),
	    NULL, "batch", "batch started", err);
	if (rc == 0) {
		char subject[128];
		snprintf(subject, sizeof(subject),
		    "storyctl: batch %lld "
		    "started with %zu stor%s",
		    (long long)b->batch_id, pos, pos == 1 ? "y" : "ies");
		rc = record_commit_batch(b, subject, "", err);
	}
	return rc;
}

/* Put story i back to pending (requeue_story()): in its slot's row
 * while a slot holds it, else in the database and the schedule. */
static int
sched_requeue(struct batch *b, struct sched *sc, size_t i, const char *reason,
    int64_t now, struct sc_err *err)
{
	struct sched_ent *e = &sc->e[i];
	struct story_row st;
	int rc;

	if (e->slot >= 0)
		return requeue_story(
		    b->db, b->slots[e->slot].st, reason, now, err);
	rc = sched_row(&st, b, sc, i, err);
	if (rc == 0)
		rc = requeue_story(b->db, &st, reason, now, err);
	if (rc == 0) {
		e->status = st.status;
		sched_touch(sc, i);
	}
	return rc;
}

/* The batch breaker (docs/scheduling.md#the-batch-breaker) after the
 * story of slot sl reached a final status. */
static int
breaker_after(
    struct batch *b, struct sched *sc, struct slot *sl, struct sc_err *err)
{
	const struct breaker_conf *bc = &b->cfg->breaker;
	enum breaker_action act;
	bool tz = false;
	char wait[32], msg[512];
	int64_t now;
	int k, rc;

	if (bc->after <= 0)
		return 0;
	tz = sl->tz;
	rc = sl->tz_known ? 0 : batch_transient_zero(b, sl->st, &tz, err);
	if (rc < 0)
		return rc;
	act = breaker_story_ended(&b->breaker, bc->after, (int)sl->idx, tz);
	now = b->o->clock.now_ms(b->o->clock.ctx);
	if (act == BREAKER_PAUSE) {
		clock_fmt_duration(
		    wait, sizeof(wait), (int64_t)(bc->cooldown_s * 1000.0));
		snprintf(msg, sizeof(msg),
		    "breaker: %d stories in a row ended "
		    "with zero progress and only transient failures; pausing "
		    "%s, then the next story probes",
		    b->breaker.run, wait);
		record_line(b, "%s", msg);
		/* no new attempt until the cooldown is over; what runs in
		 * other slots goes on */
		b->paused_until = now + (int64_t)(bc->cooldown_s * 1000.0);
		return db_event_add(
		    b->db, b->batch_id, now, NULL, "breaker", msg, err);
	}
	if (act != BREAKER_STOP)
		return 0;
	snprintf(b->stop_reason, sizeof(b->stop_reason),
	    "breaker open: the "
	    "probe after the cooldown ended like the %d stories before it "
	    "(zero progress, only network, rate-limit or timeout failures); "
	    "those stories are pending again",
	    b->breaker.run - 1);
	for (k = 0; k < b->breaker.ncounted; k++) {
		rc = sched_requeue(b, sc, (size_t)b->breaker.counted[k],
		    "put back by the batch breaker "
		    "(an outage, not the story)",
		    now, err);
		if (rc < 0)
			return rc;
	}
	b->stop_batch = true;
	return record_commit_batch(
	    b, "storyctl: batch breaker open", b->stop_reason, err);
}

/* What the batch has spent so far (its stories' attempts). */
static int
batch_spend(struct batch *b, struct sc_err *err)
{
	return db_batch_spend(b->db, &b->spend_usd, b->batch_id, err);
}

/* The state dir relative to the project root (never committed), or
 * NULL when it lives elsewhere. */
static const char *
state_rel(const struct batch *b)
{
	size_t n = strlen(b->cfg->root);

	if (strncmp(b->cfg->state_dir, b->cfg->root, n) == 0 &&
	    b->cfg->state_dir[n] == '/')
		return b->cfg->state_dir + n + 1;
	return NULL;
}

/*
 * git.commit_work in the main tree: refuse to start on uncommitted
 * changes, so nothing of the user's is ever mixed into a story's commit
 * or reset away.  Changes of a story that was in progress when the last
 * controller stopped are that story's, and resuming it is allowed.
 */
static int
commit_work_check(struct batch *b, struct sc_err *err)
{
	struct story_row *rows = NULL;
	size_t n = 0, i;
	char why[300];
	int dirty = 0, ours = 0;
	int rc;

	if (!b->cfg->git.commit_work || b->nslots > 1)
		return 0;
	rc = gitwork_is_dirty(
	    &dirty, why, sizeof(why), b->cfg->root, state_rel(b), err);
	if (rc < 0 || !dirty)
		return rc;
	rc = db_story_list(b->db, &rows, &n, b->batch_id, NULL, err);
	for (i = 0; rc == 0 && i < n; i++)
		if ((rows[i].status == STATUS_PENDING ||
			rows[i].status == STATUS_RUNNING) &&
		    rows[i].base_commit[0] != '\0')
			ours = 1;
	free(rows);
	if (rc == 0 && !ours)
		rc = err_set(err, SC_EDATA,
		    "%s: the working tree has "
		    "uncommitted changes (%s); commit or stash them first: "
		    "git.commit_work commits each story's work and puts the "
		    "tree back after a deferred one",
		    b->cfg->root, why);
	return rc;
}

/* Remember HEAD as where the story began (git.commit_work). */
static int
record_base(struct batch *b, struct story_row *st, struct sc_err *err)
{
	char hex[GITWORK_HEXSZ], ref[256];
	int rc;

	rc = gitwork_head(hex, ref, sizeof(ref), b->cfg->root, err);
	if (rc < 0)
		return rc;
	if (hex[0] == '\0')
		return err_set(err, SC_EDATA,
		    "%s: git.commit_work needs a "
		    "first commit on the current branch",
		    b->cfg->root);
	snprintf(st->base_commit, sizeof(st->base_commit), "%s", hex);
	return db_story_update(b->db, st, err);
}

/* The message of a story's work commit; its last attempt's review is
 * one indexed row, not the history. */
static void
work_message(char *msg, size_t len, struct batch *b, const struct story_row *st)
{
	struct attempt_row last;
	int found = 0;
	char consensus[64] = "";

	if (db_attempt_last(b->db, &last, &found, b->batch_id, st->id, 0, false,
		NULL) == 0 &&
	    found && last.consensus[0] != '\0')
		snprintf(consensus, sizeof(consensus), ", review %s",
		    last.consensus);
	snprintf(msg, len, "story %s: %s (attempt %d, %s%s)\n\n%s", st->id,
	    status_name(st->status), st->attempts, st->last_agent, consensus,
	    st->reason);
	attempt_row_release(&last);
}

/* git.commit_work in the main tree, when story st is final: done work
 * goes on the current branch; deferred or escalated work on
 * storyctl/wip/<id>, and the tree returns to where the story began. */
static int
commit_work_end(struct batch *b, struct story_row *st, struct sc_err *err)
{
	char msg[900], branch[256];
	int committed = 0;
	const char *how;
	int rc = 0;

	if (!b->cfg->git.commit_work || st->base_commit[0] == '\0')
		return 0;
	work_message(msg, sizeof(msg), b, st);
	if (st->status == STATUS_DONE) {
		rc = gitwork_commit_all(&committed, NULL, b->cfg->root, NULL,
		    state_rel(b), msg,
		    b->o->clock.now_ms(b->o->clock.ctx) / 1000, err);
		how = "committed on the current branch";
	} else if (st->status == STATUS_DEFERRED ||
	    st->status == STATUS_ESCALATED) {
		snprintf(branch, sizeof(branch), "storyctl/wip/%s", st->id);
		rc = gitwork_commit_all(&committed, NULL, b->cfg->root, branch,
		    state_rel(b), msg,
		    b->o->clock.now_ms(b->o->clock.ctx) / 1000, err);
		if (rc == 0)
			rc = gitwork_reset_hard(
			    b->cfg->root, st->base_commit, state_rel(b), err);
		snprintf(st->branch, sizeof(st->branch), "%s", branch);
		how = "committed on its wip branch, tree reset";
	} else {
		return 0;
	}
	if (rc < 0)
		return rc;
	st->base_commit[0] = '\0';
	rc = db_story_update(b->db, st, err);
	if (rc == 0)
		record_line(b, "%s: work %s", st->id,
		    committed ? how : "(no changes to commit)");
	return rc;
}

/*
 * A worktree left by a dead controller may hold a story file that
 * git_worktree_add() never finished writing (a kill inside the
 * checkout): it reads as no tasks, and the story would be settled
 * invalid.  When the worktree's copy has no task and the main tree's has
 * some, the copy is restored from the main tree (the story branch starts
 * from the same commit, and no attempt can have run in a checkout that
 * was never finished).
 */
static int
worktree_story_check(struct batch *b, struct slot *sl, struct sc_err *err)
{
	struct progress wt, main;
	int rc;

	if (story_read_progress(&wt, sl->abspath, sl->worktree,
		b->cfg->tasks_heading, NULL) < 0 ||
	    wt.tasks_total > 0)
		return 0;
	if (story_read_progress(&main, sl->s->abspath, b->cfg->root,
		b->cfg->tasks_heading, NULL) < 0 ||
	    main.tasks_total == 0)
		return 0;
	rc = copy_file(sl->abspath, sl->s->abspath, err);
	if (rc == 0)
		record_line(b,
		    "%s: the worktree's copy of the story had no task (a "
		    "checkout cut short); restored from %s",
		    sl->st->id, sl->s->file);
	return rc;
}

/* -j N > 1: the story works in its own worktree on storyctl/story/<id>,
 * started from the branch of a dependency that has one, or from HEAD. */
static int
slot_worktree(struct batch *b, struct slot *sl, const struct sched *sc,
    struct sc_err *err)
{
	const struct config *cfg = b->cfg;
	const struct sched_ent *e = &sc->e[sl->idx];
	const struct story_row *d;
	struct story_row dep;
	char branch[256], base[300] = "HEAD";
	size_t k, r;
	struct stat sb;
	int rc;

	snprintf(branch, sizeof(branch), "storyctl/story/%s", sl->st->id);
	for (k = 0; k < e->ndeps; k++) {
		r = sc->deps[e->dep + k];
		if (sc->e[r].slot >= 0) {
			d = b->slots[sc->e[r].slot].st;
		} else {
			rc = sched_row(&dep, b, sc, r, err);
			if (rc < 0)
				return rc;
			d = &dep;
		}
		if (d->branch[0] != '\0') {
			snprintf(
			    base, sizeof(base), "refs/heads/%s", d->branch);
			break;
		}
	}
	if (asprintf(&sl->worktree, "%s/%s", b->wtdir, sl->st->id) < 0) {
		sl->worktree = NULL;
		return err_set(err, SC_EOS, "out of memory");
	}
	rc = story_branch_unlock(b, sl->st->id, err);
	if (rc < 0)
		return rc;
	rc = gitwork_worktree_add(
	    cfg->root, sl->st->id, sl->worktree, branch, base, err);
	if (rc == SC_EDATA && stat(sl->worktree, &sb) == 0) {
		/* a checkout left by a controller killed while adding the
		 * worktree (git no longer knows it): ours to remove */
		err_clear(err);
		rm_tree(sl->worktree);
		rc = gitwork_worktree_add(
		    cfg->root, sl->st->id, sl->worktree, branch, base, err);
	}
	if (rc < 0)
		return rc;
	if (asprintf(&sl->abspath, "%s/%s", sl->worktree, sl->s->file) < 0) {
		sl->abspath = NULL;
		return err_set(err, SC_EOS, "out of memory");
	}
	/* a story file the branch does not have yet (not committed) */
	if (stat(sl->abspath, &sb) < 0) {
		rc = copy_file(sl->abspath, sl->s->abspath, err);
		if (rc < 0)
			return rc;
	}
	rc = worktree_story_check(b, sl, err);
	if (rc < 0)
		return rc;
	sl->cwd = strdup(sl->worktree);
	if (sl->cwd == NULL)
		return err_set(err, SC_EOS, "out of memory");
	snprintf(sl->st->branch, sizeof(sl->st->branch), "%s", branch);
	return 0;
}

/* A lock file of storyctl/story/<id> left by a controller killed while
 * it moved the branch: removed, or every later update fails. */
static int
story_branch_unlock(struct batch *b, const char *id, struct sc_err *err)
{
	char branch[256];
	int removed = 0;
	int rc;

	snprintf(branch, sizeof(branch), "storyctl/story/%s", id);
	rc = gitwork_clear_stale_lock(
	    &removed, b->cfg->root, branch, b->started_ms, err);
	if (rc == 0 && removed)
		record_line(
		    b, "%s: removed a stale lock of branch %s", id, branch);
	return rc;
}

/*
 * The worktree of story st (-j N > 1) once the story is final: its work
 * is committed on its branch and the worktree goes (the branch stays).
 * Used by a live decision (slot_release), by start-up recovery after a
 * decision made for a dead controller's attempt, and by the sweep of
 * worktrees whose story was decided just before a crash
 * (docs/git-work.md#recovery).
 */
static int
worktree_settle(struct batch *b, const struct story_row *st,
    const char *worktree, struct sc_err *err)
{
	char msg[900];
	int committed = 0, valid = 0;
	int rc;

	work_message(msg, sizeof(msg), b, st);
	rc = story_branch_unlock(b, st->id, err);
	/* A checkout git cannot open is one a controller was killed in
	 * while git added it (before any agent ran there) or removed it
	 * (after its work was committed): nothing in it to commit.
	 * Opening it would fail every start-up with "not a git
	 * repository" (its .git file points at removed admin data), or,
	 * with no .git file at all, find the main work tree above it. */
	if (rc == 0)
		rc = gitwork_worktree_valid(
		    &valid, b->cfg->root, st->id, worktree, err);
	if (rc == 0 && !valid)
		record_line(b, "%s: removing the half-made worktree %s", st->id,
		    worktree);
	else if (rc == 0)
		rc = gitwork_commit_all(&committed, NULL, worktree, NULL, NULL,
		    msg, b->o->clock.now_ms(b->o->clock.ctx) / 1000, err);
	if (rc == 0)
		rc = gitwork_worktree_remove(b->cfg->root, st->id, err);
	/* a checkout git never finished adding (a kill inside
	 * git_worktree_add) is not a worktree git can remove: ours */
	if (rc == 0 && access(worktree, F_OK) == 0)
		rm_tree(worktree);
	if (rc == 0)
		record_line(b, "%s: work %s on branch storyctl/story/%s",
		    st->id, committed ? "committed" : "(no changes)", st->id);
	return rc;
}

/* A story reached its final status: in a worktree, its work is
 * committed on its branch and the worktree goes (the branch stays). */
static int
slot_release(struct batch *b, struct slot *sl, struct sc_err *err)
{
	int rc = 0;

	if (sl->worktree == NULL && sl->st->status != STATUS_PENDING &&
	    sl->st->status != STATUS_RUNNING)
		rc = commit_work_end(b, sl->st, err);
	if (sl->worktree != NULL && sl->st->status != STATUS_PENDING &&
	    sl->st->status != STATUS_RUNNING)
		rc = worktree_settle(b, sl->st, sl->worktree, err);
	free(sl->worktree);
	free(sl->abspath);
	free(sl->cwd);
	memset(sl, 0, sizeof(*sl));
	return rc;
}

/*
 * Start-up, after recovery: a worktree whose story is already final in
 * this batch belongs to a controller that died between the decision and
 * the commit of the work (or to a decision recovery just made).  Settle
 * it as the live decision would have.  Worktrees of open stories stay:
 * the story's next attempt continues in them.
 */
static int
worktree_sweep(struct batch *b, struct sc_err *err)
{
	struct story_row st;
	struct dirent *de;
	struct stat sb;
	char path[1100];
	DIR *d = NULL;
	int found = 0, rc = 0;

	d = opendir(b->wtdir);
	if (d == NULL)
		goto out; /* no worktree was ever made here */
	while (rc == 0 && (de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", b->wtdir, de->d_name);
		if (lstat(path, &sb) < 0 || !S_ISDIR(sb.st_mode))
			continue;
		rc = db_story_get(
		    b->db, &st, &found, b->batch_id, de->d_name, err);
		if (rc < 0 || !found || status_open(st.status))
			continue;
		rc = worktree_settle(b, &st, path, err);
	}
out:
	if (d != NULL)
		closedir(d);
	return rc;
}

/*
 * Give slot sl the next story that may run now (the first in position
 * order), settling the blocked ones before it; 0 with sl->st NULL when
 * there is none.  It starts at the schedule's cursor, and returns at
 * once when nothing it looks at changed since it last found nothing, so
 * a sequential night costs O(1) per story.
 */
static int
slot_fill(
    struct batch *b, struct slot *sl, struct sched *sc, struct sc_err *err)
{
	struct story_row blocked;
	struct sched_ent *e;
	char reason[300];
	size_t i, why;
	int rc;

	if (sc->gen == sc->idle_gen)
		return 0;
	while (sc->cursor < sc->n &&
	    (!status_open(sc->e[sc->cursor].status) ||
		!sc->e[sc->cursor].wanted))
		sc->cursor++;
	for (i = sc->cursor; i < sc->n; i++) {
		e = &sc->e[i];
		if (!status_open(e->status) || !e->wanted || e->slot >= 0)
			continue;
		if (e->s == NULL)
			return err_set(err, SC_EDATA,
			    "story %s of batch %lld is no longer in the config",
			    e->id, (long long)b->batch_id);
		switch (row_state(b, sc, i, &why)) {
		case SCHED_BLOCKED:
			snprintf(reason, sizeof(reason),
			    "blocked: dependency %s ended %s", sc->e[why].id,
			    status_name(sched_status(b, sc, why)));
			rc = sched_row(&blocked, b, sc, i, err);
			if (rc == 0)
				rc = batch_settle(b, &blocked, STATUS_BLOCKED,
				    reason, "blocked", err);
			if (rc < 0)
				return rc;
			e->status = blocked.status;
			sched_touch(sc, i);
			continue;
		case SCHED_WAIT:
			continue;
		case SCHED_READY:
			break;
		}
		memset(sl, 0, sizeof(*sl));
		rc = sched_row(&sl->row, b, sc, i, err);
		if (rc < 0)
			return rc;
		sl->st = &sl->row;
		sl->idx = i;
		sl->s = e->s;
		e->slot = (int)(sl - b->slots);
		sched_touch(sc, i);
		if (b->nslots > 1) {
			rc = slot_worktree(b, sl, sc, err);
		} else {
			sl->abspath = strdup(e->s->abspath);
			sl->cwd = strdup(b->cfg->root);
			rc = sl->abspath && sl->cwd
			    ? 0
			    : err_set(err, SC_EOS, "out of memory");
			if (rc == 0 && b->cfg->git.commit_work &&
			    sl->st->base_commit[0] == '\0')
				rc = record_base(b, sl->st, err);
		}
		if (rc < 0)
			return rc;
		return 0;
	}
	/* nothing now; nothing until an entry changes */
	sc->idle_gen = sc->gen;
	return 0;
}

/* A story has just left its slot: the breaker looks at how it ended,
 * then the slot is released. */
static int
story_left(
    struct batch *b, struct slot *sl, struct sched *sc, struct sc_err *err)
{
	struct sched_ent *e = &sc->e[sl->idx];
	bool final = !status_open(sl->st->status);
	int rc = 0;

	if (final && sl->st->status != STATUS_BLOCKED &&
	    sl->st->status != STATUS_INVALID)
		rc = breaker_after(b, sc, sl, err);
	/* the schedule holds its status again (slot_release() keeps it) */
	e->status = sl->st->status;
	e->slot = -1;
	sched_touch(sc, sl->idx);
	if (rc == 0)
		rc = slot_release(b, sl, err);
	return rc;
}

static bool
stopping(const struct batch *b)
{
	return b->interrupted || b->stop_batch ||
	    (b->o->stop != NULL && *b->o->stop);
}

/*
 * The supervision loop: up to N stories at once, one process, no
 * threads.  A slot holds its story while the story's next attempt
 * waits out its delay, so -j 1 is the plain sequential night.
 */
static int
run_stories(struct batch *b, struct sc_err *err)
{
	struct sched sc;
	void **handles = NULL;
	size_t i, nh, busy;
	int64_t now, next;
	int rc;

	rc = sched_build(&sc, b, err);
	if (rc < 0)
		goto out;
	handles =
	    calloc(b->nslots * (1 + b->cfg->review.nagents), sizeof(*handles));
	if (handles == NULL) {
		rc = err_set(err, SC_EOS, "out of memory");
		goto out;
	}
	for (;;) {
		now = b->o->clock.now_ms(b->o->clock.ctx);
		/* fill free slots with ready stories */
		for (i = 0;
		     i < b->nslots && !stopping(b) && b->paused_until <= now;
		     i++) {
			struct slot *sl = &b->slots[i];
			while (sl->st == NULL && !stopping(b)) {
				rc = slot_fill(b, sl, &sc, err);
				if (rc < 0 || sl->st == NULL)
					break;
				rc = slot_prepare(b, sl, err);
				if (rc < 0)
					goto out;
				if (sl->state == SLOT_FREE) {
					rc = story_left(b, sl, &sc, err);
					if (rc < 0)
						goto out;
				}
			}
			if (rc < 0)
				goto out;
		}
		/* what is busy, and the next time something is due */
		busy = 0;
		nh = 0;
		next = b->paused_until > now ? b->paused_until : INT64_MAX;
		for (i = 0; i < b->nslots; i++) {
			struct slot *sl = &b->slots[i];
			if (sl->st == NULL)
				continue;
			busy++;
			if (sl->state == SLOT_RUNNING)
				slot_handles(sl, handles, &nh, &next);
			else if (sl->state == SLOT_WAITING &&
			    sl->until_ms < next)
				next = sl->until_ms;
		}
		if (busy == 0 && (stopping(b) || b->paused_until <= now))
			break;
		/* nothing may wait on a decision the branch does not show */
		rc = record_flush(b, err);
		if (rc < 0)
			goto out;
		record_status_line(b);
		if (nh > 0) {
			rc = b->ops.wait(b->ops.ctx, handles, nh,
			    next == INT64_MAX ? -1 : next - now, b->o->wake_fd,
			    err);
			if (rc < 0)
				goto out;
		} else if (next != INT64_MAX && !stopping(b)) {
			if (b->o->clock.sleep_until(b->o->clock.ctx, next,
				b->o->stop, b->o->wake_fd))
				b->interrupted = true;
		}
		if (b->o->stop != NULL && *b->o->stop)
			b->interrupted = true;
		/* collect what is done, start what is due */
		now = b->o->clock.now_ms(b->o->clock.ctx);
		for (i = 0; i < b->nslots; i++) {
			struct slot *sl = &b->slots[i];
			if (sl->st == NULL)
				continue;
			if (sl->state == SLOT_RUNNING)
				rc = slot_service(b, sl, err);
			else if (sl->state == SLOT_WAITING && stopping(b))
				sl->state = SLOT_FREE;
			else if (sl->state == SLOT_WAITING &&
			    sl->until_ms <= now)
				rc = slot_start(b, sl, err);
			if (rc < 0)
				goto out;
			if (sl->state == SLOT_FREE) {
				rc = story_left(b, sl, &sc, err);
				if (rc < 0)
					goto out;
			}
		}
	}
out:
	for (i = 0; b->slots != NULL && i < b->nslots; i++) {
		slot_abandon(b, &b->slots[i]);
		free(b->slots[i].worktree);
		free(b->slots[i].abspath);
		free(b->slots[i].cwd);
		memset(&b->slots[i], 0, sizeof(b->slots[i]));
	}
	record_clear_line(b);
	free(handles);
	sched_free(&sc);
	return rc;
}

/*
 * A usage-limit pause outlives the controller: the agent's pause.<role>
 * (wall ms) is read back, so that `resume` does not start an agent that
 * is still paused (docs/retry-strategy.md#usage-limits).
 */
static int
batch_load_pauses(struct batch *b, struct sc_err *err)
{
	char key[32], *val = NULL;
	int i, rc = 0;

	for (i = 0; rc == 0 && i < 2; i++) {
		snprintf(key, sizeof(key), "pause.%s", role_name((enum role)i));
		rc = db_meta_get(b->db, key, &val, err);
		if (rc == 0 && val != NULL)
			b->pause_until[i] = strtoll(val, NULL, 10);
		free(val);
		val = NULL;
	}
	return rc;
}

static int
finish(struct batch *b, struct batch_result *res, struct sc_err *err)
{
	const char *status;
	int64_t now = b->o->clock.now_ms(b->o->clock.ctx);
	int rc;
	int i, open = 0;

	rc = db_status_counts(b->db, res->counts, b->batch_id, err);
	if (rc < 0)
		return rc;
	for (i = 0; i < STATUS__COUNT; i++)
		if (i == STATUS_PENDING || i == STATUS_RUNNING)
			open += res->counts[i];
	if (open == 0)
		status = "finished";
	else
		status = "stopped";
	rc = db_batch_set_status(b->db, b->batch_id, status, now, err);
	if (rc < 0)
		return rc;
	if (b->stop_batch)
		rc = db_event_add(b->db, b->batch_id, now, NULL, "stopped",
		    b->stop_reason, err);
	else if (b->interrupted)
		rc = db_event_add(b->db, b->batch_id, now, NULL, "interrupted",
		    "the controller was asked to stop", err);
	else if (open == 0)
		rc = db_event_add(b->db, b->batch_id, now, NULL, "finished",
		    "batch finished", err);
	return rc;
}

int
batch_run(
    struct batch_result *out, const struct batch_opts *o, struct sc_err *err)
{
	struct batch b;
	int rc;

	memset(out, 0, sizeof(*out));
	memset(&b, 0, sizeof(b));
	b.o = o;
	b.cfg = o->cfg;
	snprintf(
	    out->state_dir, sizeof(out->state_dir), "%s", o->cfg->state_dir);
	snprintf(
	    out->branch, sizeof(out->branch), "%s", o->cfg->git.state_branch);
	rc = db_dir_prepare(o->cfg->state_dir, err);
	if (rc < 0)
		goto out;
	rc = lock_acquire(&b.lock, o->cfg->state_dir, err);
	if (rc < 0)
		goto out;
	rc = db_open(&b.db, o->cfg->state_dir, err);
	if (rc < 0)
		goto out;
	rc = gitstate_open(&b.gs, o->cfg->root, o->cfg->git.state_branch, err);
	if (rc < 0)
		goto out;
	/* we hold the state dir's lock: a ref lock older than now is a dead
	 * controller's */
	b.started_ms = o->clock.now_ms(o->clock.ctx);
	gitstate_set_owner_since(b.gs, b.started_ms);
	snprintf(b.logdir, sizeof(b.logdir), "%s/logs", o->cfg->state_dir);
	rc = mkdir_private(b.logdir, err);
	if (rc < 0)
		goto out;
	snprintf(b.wtdir, sizeof(b.wtdir), "%s/worktrees", o->cfg->state_dir);
	b.nslots = o->jobs > 1 ? (size_t)o->jobs : 1;
	b.slots = calloc(b.nslots, sizeof(*b.slots));
	if (b.slots == NULL) {
		rc = err_set(err, SC_EOS, "out of memory");
		goto out;
	}
	if (b.nslots > 1) {
		rc = mkdir_private(b.wtdir, err);
		if (rc < 0)
			goto out;
	}
	if (o->agent_ops.start != NULL) {
		b.ops = o->agent_ops;
	} else {
		b.ops.start = sync_start;
		b.ops.wait = sync_wait;
		b.ops.done = sync_done;
		b.ops.finish = sync_finish;
		b.ops.ctx = (void *)o;
	}
	rc = reconcile(&b, err);
	if (rc < 0)
		goto out;
	rc = select_batch(&b, out, err);
	if (rc < 0 || out->nothing)
		goto out;
	out->batch_id = b.batch_id;
	rc = commit_work_check(&b, err);
	if (rc < 0)
		goto out;
	rc = worktree_sweep(&b, err);
	if (rc < 0)
		goto out;
	rc = batch_load_pauses(&b, err);
	if (rc < 0)
		goto out;
	rc = batch_spend(&b, err);
	if (rc < 0)
		goto out;
	rc = record_sync(&b, err);
	if (rc < 0)
		goto out;
	rc = run_stories(&b, err);
	if (rc < 0)
		goto out;
	rc = finish(&b, out, err);
	if (rc < 0)
		goto out;
	rc = record_sync(&b, err);
	/* "stopped before its end" only while stories remain to run */
	out->stopped = b.stop_batch &&
	    out->counts[STATUS_PENDING] + out->counts[STATUS_RUNNING] > 0;
	out->interrupted = b.interrupted;
	out->spend_usd = b.spend_usd;
	out->jobs = (int)b.nslots;
	snprintf(
	    out->stop_reason, sizeof(out->stop_reason), "%s", b.stop_reason);
out:
	/* attempts this stop could not close are recorded as this stop,
	 * not as a crash, by the next start (reconcile) */
	if (rc < 0)
		lock_note_stop(b.lock, err->msg);
	record_clear_line(&b);
	free(b.slots);
	free(b.pending_msg);
	gitstate_free(b.gs);
	db_close(b.db);
	lock_release(b.lock);
	return rc;
}
