/* batch_work.c - see batch_run_int.h: the stories' work in git: the
 * main tree under git.commit_work, and the -j N worktrees, made, settled
 * and swept (docs/git-work.md). */
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

#include "controller/engine/attempt.h"
#include "controller/engine/batch_run_int.h"
#include "controller/engine/console.h"
#include "controller/engine/requeue.h"
#include "state/fsutil.h"
#include "state/gitevidence.h"
#include "state/gitwork.h"
#include "strategies/schedule.h"
#include "strategies/suggest.h"

/* Copy the file at src to dst (creating dst's directory) with mode: a
 * story file a new worktree does not have yet, a worktree.copy file. */
int
batch_copy_file(
    const char *dst, const char *src, mode_t mode, struct sc_err *err)
{
	char buf[65536];
	int in = -1, out = -1, rc = 0;
	ssize_t got;

	if ((rc = fsutil_mkdir_parents(dst, 0755, err)) < 0)
		goto out;
	in = open(src, O_RDONLY | O_CLOEXEC);
	out = open(dst, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
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
	return rc;
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
int
batch_work_check(struct batch *b, struct sc_err *err)
{
	struct story_row *rows = NULL;
	size_t n = 0, i;
	char why[300];
	int dirty = 0, ours = 0;
	int rc;

	if (!b->cfg->git.commit_work || batch_worktrees(b))
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
int
batch_work_base(struct batch *b, struct story_row *st, struct sc_err *err)
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
int
batch_work_end(struct batch *b, struct story_row *st, struct sc_err *err)
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
		console_line(b, "%s: work %s", st->id,
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
	char *src = NULL;
	int rc = 0;

	if (story_read_progress(&wt, sl->abspath, sl->worktree,
		b->cfg->tasks_heading, NULL) < 0 ||
	    wt.counts.tasks_total > 0)
		goto out;
	if ((src = story_abspath(sl->s, b->cfg->root)) == NULL) {
		rc = err_set(err, SC_EOS, "out of memory");
		goto out;
	}
	if (story_read_progress(
		&main, src, b->cfg->root, b->cfg->tasks_heading, NULL) < 0 ||
	    main.counts.tasks_total == 0)
		goto out;
	rc = batch_copy_file(sl->abspath, src, 0644, err);
	if (rc == 0)
		console_line(b,
		    "%s: the worktree's copy of the story had no task (a "
		    "checkout cut short); restored from %s",
		    sl->st->id, sl->s->file);
out:
	free(src);
	return rc;
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
		console_line(
		    b, "%s: removed a stale lock of branch %s", id, branch);
	return rc;
}

/* The branch a story's worktree starts from: that of a dependency that
 * has one, or HEAD (docs/git-work.md#how-run--j-n-uses-them). */
static int
worktree_base(char *base, size_t len, struct batch *b, struct slot *sl,
    const struct sched *sc, struct sc_err *err)
{
	const struct sched_ent *e = &sc->e[sl->idx];
	const struct story_row *d;
	struct story_row dep;
	size_t k, r;
	int rc;

	snprintf(base, len, "HEAD");
	for (k = 0; k < e->ndeps; k++) {
		r = sc->deps[e->dep + k];
		if (sc->e[r].slot >= 0) {
			d = b->slots[sc->e[r].slot].st;
		} else {
			rc = batch_sched_row(&dep, b, sc, r, err);
			if (rc < 0)
				return rc;
			d = &dep;
		}
		if (d->branch[0] != '\0') {
			snprintf(base, len, "refs/heads/%s", d->branch);
			break;
		}
	}
	return 0;
}

/* Add worktree name at path on branch; a checkout left at path by a
 * controller killed while adding it (git no longer knows it) is ours to
 * remove first. */
int
batch_worktree_add_at(struct batch *b, const char *name, const char *path,
    const char *branch, const char *base, struct sc_err *err)
{
	struct stat sb;
	int rc;

	rc = gitwork_worktree_add(b->cfg->root, name, path, branch, base, err);
	if (rc == SC_EDATA && stat(path, &sb) == 0) {
		err_clear(err);
		fsutil_rm_tree(path);
		rc = gitwork_worktree_add(
		    b->cfg->root, name, path, branch, base, err);
	}
	return rc;
}

/* How many stories may still want a slot: open, wanted, in none. */
static size_t
sched_waiting(const struct sched *sc)
{
	size_t i, n = 0;

	for (i = 0; i < sc->n; i++)
		if (batch_status_open(sc->e[i].status) && sc->e[i].wanted &&
		    sc->e[i].slot < 0)
			n++;
	return n;
}

/* -j N > 1: the story works in a worktree on storyctl/story/<id>,
 * started from the branch of a dependency that has one, or from HEAD:
 * its slot's kept one (batch_slot_trees()), or one of its own. */
int
batch_worktree_add(struct batch *b, struct slot *sl, const struct sched *sc,
    struct sc_err *err)
{
	const struct config *cfg = b->cfg;
	char branch[256], base[300];
	struct stat sb;
	int rc;

	snprintf(branch, sizeof(branch), "storyctl/story/%s", sl->st->id);
	if ((rc = worktree_base(base, sizeof(base), b, sl, sc, err)) < 0)
		return rc;
	if ((sl->worktree = fsutil_path_join(b->wtdir, sl->st->id)) == NULL)
		return err_set(err, SC_EOS, "out of memory");
	rc = story_branch_unlock(b, sl->st->id, err);
	if (rc < 0)
		return rc;
	if (batch_slot_trees(b))
		rc = batch_slot_tree_take(
		    b, sl, branch, base, sched_waiting(sc), err);
	else
		rc = batch_worktree_add_at(
		    b, sl->st->id, sl->worktree, branch, base, err);
	if (rc < 0)
		return rc;
	if ((sl->abspath = fsutil_path_join(sl->worktree, sl->s->file)) == NULL)
		return err_set(err, SC_EOS, "out of memory");
	/* a story file the branch does not have yet (not committed) */
	if (stat(sl->abspath, &sb) < 0) {
		char *src = story_abspath(sl->s, cfg->root);

		rc = src != NULL ? batch_copy_file(sl->abspath, src, 0644, err)
				 : err_set(err, SC_EOS, "out of memory");
		free(src);
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

/*
 * Commit the work in the worktree of story st, whose git admin name is
 * name, on its branch.  *valid 0: a checkout git cannot open, one a
 * controller was killed in while git added it (before any agent ran
 * there) or removed or moved it (after its work was committed): nothing
 * in it to commit.  Opening it would fail every start-up with "not a
 * git repository" (its .git file points at removed admin data), or,
 * with no .git file at all, find the main work tree above it.
 */
int
batch_worktree_commit(int *valid, int *committed, struct batch *b,
    const struct story_row *st, const char *worktree, const char *name,
    const struct strlist *only, struct sc_err *err)
{
	char msg[900];
	int removed = 0;
	int rc;

	*valid = *committed = 0;
	work_message(msg, sizeof(msg), b, st);
	rc = story_branch_unlock(b, st->id, err);
	if (rc == 0)
		rc = gitwork_worktree_valid(
		    valid, b->cfg->root, name, worktree, err);
	/* no agent runs there any more: an index lock is a killed
	 * writer's, and would fail the commit below at every start */
	if (rc == 0 && *valid)
		rc = gitwork_clear_worktree_index_lock(&removed, worktree, err);
	if (rc == 0 && removed)
		console_line(b, "%s: removed a stale index lock in %s", st->id,
		    worktree);
	if (rc == 0 && *valid)
		rc = gitwork_commit_changed(committed, worktree, only, msg,
		    b->o->clock.now_ms(b->o->clock.ctx) / 1000, err);
	return rc;
}

/*
 * The worktree of story st (-j N > 1) once the story is final: its work
 * is committed on its branch and the worktree goes (the branch stays).
 * Used by a live decision with a worktree per story, by start-up
 * recovery after a decision made for a dead controller's attempt, and by
 * the sweep of worktrees whose story was decided just before a crash
 * (docs/git-work.md#recovery).  A slot's kept worktree is known to git
 * by the slot's name, which its .git file gives.
 */
int
batch_worktree_settle(struct batch *b, const struct story_row *st,
    const char *worktree, struct sc_err *err)
{
	char name[NAME_MAX + 1];
	struct sc_err e2;
	int committed = 0, valid = 0;
	int rc;

	if (gitwork_worktree_name_at(name, sizeof(name), worktree, &e2) < 0)
		snprintf(name, sizeof(name), "%s", st->id);
	rc = batch_worktree_commit(
	    &valid, &committed, b, st, worktree, name, NULL, err);
	/* its repository and watch would outlive the tree's path */
	gitevidence_watches_drop(b->evw, worktree);
	if (rc == 0 && !valid)
		console_line(b, "%s: removing the half-made worktree %s",
		    st->id, worktree);
	if (rc == 0)
		rc = gitwork_worktree_remove(b->cfg->root, name, err);
	/* a checkout git never finished adding (a kill inside
	 * git_worktree_add) is not a worktree git can remove: ours */
	if (rc == 0 && access(worktree, F_OK) == 0)
		fsutil_rm_tree(worktree);
	if (rc == 0)
		console_line(b, "%s: work %s on branch storyctl/story/%s",
		    st->id, committed ? "committed" : "(no changes)", st->id);
	return rc;
}

int
batch_worktree_release(struct batch *b, struct slot *sl, struct sc_err *err)
{
	int rc = 0;

	if (sl->worktree == NULL || batch_status_open(sl->st->status))
		rc = 0; /* an open story keeps its worktree */
	else if (batch_slot_trees(b))
		rc = batch_slot_tree_park(b, sl, err);
	else
		rc = batch_worktree_settle(b, sl->st, sl->worktree, err);
	return rc;
}

/* A slot's parked worktree a dead controller left (or one it was
 * switching to the next story): no story's work is uncommitted there
 * (docs/git-work.md#what-survives-a-crash), so it goes. */
static int
parked_sweep(struct batch *b, const char *path, struct sc_err *err)
{
	char name[NAME_MAX + 1];
	struct sc_err e2;
	int rc = 0;

	if (gitwork_worktree_name_at(name, sizeof(name), path, &e2) == 0)
		rc = gitwork_worktree_remove(b->cfg->root, name, err);
	if (rc == 0 && access(path, F_OK) == 0)
		fsutil_rm_tree(path);
	if (rc == 0)
		console_line(b,
		    "removed %s, a slot's idle worktree left by a "
		    "dead controller",
		    path);
	return rc;
}

/*
 * Start-up, after recovery: a worktree whose story is already final in
 * this batch belongs to a controller that died between the decision and
 * the commit of the work (or to a decision recovery just made).  Settle
 * it as the live decision would have.  Worktrees of open stories stay:
 * the story's next attempt continues in them.
 */
int
batch_worktree_sweep(struct batch *b, struct sc_err *err)
{
	struct story_row st;
	struct dirent *de;
	struct stat sb;
	char *path = NULL;
	DIR *d = NULL;
	struct sc_err e2;
	int found = 0, pruned = 0, rc = 0;

	d = opendir(b->wtdir);
	if (d == NULL)
		goto out; /* no worktree was ever made here */
	/* git's records of our worktrees whose directory a kill took
	 * (docs/git-work.md#what-survives-a-crash) */
	if (gitwork_worktrees_prune_gone(&pruned, b->cfg->root, b->wtdir, &e2) <
	    0)
		console_line(
		    b, "cannot prune git's worktree records: %s", e2.msg);
	else if (pruned > 0)
		console_line(b,
		    "pruned git's record of %d worktree%s whose "
		    "directory is gone",
		    pruned, pruned == 1 ? "" : "s");
	while (rc == 0 && (de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.' &&
		    strncmp(de->d_name, ".slot-", 6) != 0)
			continue;
		free(path);
		if ((path = fsutil_path_join(b->wtdir, de->d_name)) == NULL) {
			rc = err_set(err, SC_EOS, "out of memory");
			break;
		}
		if (de->d_name[0] == '.') {
			rc = parked_sweep(b, path, err);
			continue;
		}
		if (lstat(path, &sb) < 0 || !S_ISDIR(sb.st_mode))
			continue;
		rc = db_story_get(
		    b->db, &st, &found, b->batch_id, de->d_name, err);
		if (rc < 0 || !found || batch_status_open(st.status))
			continue;
		rc = batch_worktree_settle(b, &st, path, err);
	}
out:
	if (d != NULL)
		closedir(d);
	free(path);
	return rc;
}
