/*
 * batch_run_int.h - what the files of batch_run() share: batch.c and
 * batch_*.c.  Not an interface.
 */
#ifndef STORYCTL_BATCH_RUN_INT_H
#define STORYCTL_BATCH_RUN_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <limits.h>
#include <sys/types.h>

#include "common/strlist.h"
#include "controller/engine/batch_int.h"
#include "controller/engine/runner.h"
#include "strategies/schedule.h"

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
	int64_t reopen_seq; /* db_reopen_seq() when last looked at */
};

/* batch_sched.c */
/* pending or running: the story has attempts to come */
bool batch_status_open(enum story_status s);
void batch_sched_free(struct sched *sc);
/*
 * The schedule of the batch, read a page of rows at a time, so that the
 * full rows of the batch are never all in memory.  batch_select() gives
 * the stories positions 0..N-1; a batch whose positions have gaps is
 * read whole instead (the same order: by position, then id).
 */
int batch_sched_build(
    struct sched *sc, const struct batch *b, struct sc_err *err);
/* Entry i changed (its status, its slot): slot_fill() looks again, from
 * i on when it is open again. */
void batch_sched_touch(struct sched *sc, size_t i);
/* Story i's status now: its slot's row while a slot holds it. */
enum story_status batch_sched_status(
    const struct batch *b, const struct sched *sc, size_t i);
/* Story i's full row from the database (it is in no slot). */
int batch_sched_row(struct story_row *out, const struct batch *b,
    const struct sched *sc, size_t i, struct sc_err *err);
/* Whether story i may run now given the statuses of its dependencies in
 * the batch (the rule is strategies/schedule.c's, docs/scheduling.md);
 * *why is the dependency that blocks it or that it waits on first
 * (SIZE_MAX when ready). */
enum sched_state batch_sched_deps_state(
    const struct batch *b, const struct sched *sc, size_t i, size_t *why);
/* A story put back to pending by another process (`storyctl requeue`,
 * a failure POSTed to `storyctl serve`): when db_reopen_seq() moved,
 * the pending stories in no slot are read again and run like the others
 * (docs/api.md#while-a-batch-runs).  One indexed read otherwise. */
int batch_sched_reopened(struct batch *b, struct sched *sc, struct sc_err *err);
/* Put story i back to pending (requeue_story()): in its slot's row
 * while a slot holds it, else in the database and the schedule. */
int batch_sched_requeue(struct batch *b, struct sched *sc, size_t i,
    const char *reason, int64_t now, struct sc_err *err);

/* batch_reconcile.c */
/*
 * A `running` attempt whose controller is gone (we hold the lock, so
 * every one is): kill its process group if it survived, close it as a
 * crash with the progress the story file shows now, and decide it like
 * any crash.
 */
int batch_reconcile(struct batch *b, struct sc_err *err);

/* batch_select.c */
/* The batch to run: the unfinished one, or (run) a new one made of the
 * config's stories; res->nothing when resume finds none. */
int batch_select(struct batch *b, struct batch_result *res, struct sc_err *err);

/*
 * A slot's kept worktree under -j N (batch_slot_trees()): made once per
 * batch and switched from story to story
 * (docs/git-work.md#the-life-of-a-slots-worktree).  While a story works
 * in it, it is <wtdir>/<story id>, as a worktree of its own would be;
 * between stories it waits, its work committed, as <wtdir>/.slot-<k>.
 */
struct slot_tree {
	char *path; /* where it is now; NULL: none yet */
	char name[NAME_MAX + 1]; /* git's admin name (.git/worktrees/<name>) */
	bool parked; /* at <wtdir>/.slot-<k>, no story in it */
	bool fresh; /* made ahead, no story in it yet: its setup is due */
	bool setup_due; /* worktree.setup runs before the next attempt */
	const char *why; /* "create" or "switch", for the record */
	struct strlist copied; /* what worktree.copy put there */
	/* the setup while it runs (its slot SLOT_SETUP), else NULL, and
	 * what the runner reads of it meanwhile */
	void *setup;
	struct runner_opts setup_ro;
	char setup_mark[128];
	int64_t setup_started;
	char setup_log[512]; /* as an attempt row's log_path */
};

/* Do the -j N slots keep their worktrees: with more than one slot and
 * the local executor (the remote one pushes each story's worktree and
 * keeps a worktree per story, docs/cluster.md). */
static inline bool
batch_slot_trees(const struct batch *b)
{
	return b->nslots > 1 && !b->cfg->executor.is_remote;
}

/* batch_premake.c (docs/git-work.md#made-ahead) */
struct batch_premake;
/*
 * Start making, each in a thread, the parked worktrees of up to want
 * slots other than sl that have none (b->trees allocated); *out NULL
 * when there is nothing to make.  Nothing else of the batch may run
 * until batch_premake_join(): the caller makes sl's own meanwhile.
 * Errors: SC_EOS, and gitwork_head()'s.
 */
int batch_premake_start(struct batch_premake **out, struct batch *b,
    const struct slot *sl, size_t want, struct sc_err *err);
/* Wait for the threads; each slot whose worktree was made has it,
 * parked and fresh; a failure is a console line.  Frees pm (NULL: a
 * no-op). */
void batch_premake_join(struct batch_premake *pm, struct batch *b);

/* batch_slottree.c (docs/git-work.md#the-life-of-a-slots-worktree) */
/* Slot sl's kept worktree for its story, at sl->worktree, on branch
 * (made at base when new): one a dead controller left there taken up,
 * the slot's parked one switched, or one made (and, the batch's first,
 * the other slots' made ahead: up to want of them). */
int batch_slot_tree_take(struct batch *b, struct slot *sl, const char *branch,
    const char *base, size_t want, struct sc_err *err);
/* Slot sl's story is final: its work committed on its branch, its
 * worktree parked as <wtdir>/.slot-<k> for the slot's next story. */
int batch_slot_tree_park(struct batch *b, struct slot *sl, struct sc_err *err);

/* batch_work.c */
/* git worktree add of name at path on branch (made at base); a checkout
 * a killed controller left at path is removed first. */
int batch_worktree_add_at(struct batch *b, const char *name, const char *path,
    const char *branch, const char *base, struct sc_err *err);
/* The work in the worktree of story st (git admin name name) committed on
 * its branch: only the paths in only when not NULL; *valid 0 when git
 * cannot open it (nothing to commit). */
int batch_worktree_commit(int *valid, int *committed, struct batch *b,
    const struct story_row *st, const char *worktree, const char *name,
    const struct strlist *only, struct sc_err *err);
/* Copy the file at src to dst (creating dst's directory) with mode. */
int batch_copy_file(
    const char *dst, const char *src, mode_t mode, struct sc_err *err);
/* A story left slot sl (slot_release): final, its work is committed on
 * its branch, and its worktree is parked for the slot's next story or,
 * with a worktree per story, removed. */
int batch_worktree_release(
    struct batch *b, struct slot *sl, struct sc_err *err);
/* The loop is over: the parked slot worktrees go (a worktree holding a
 * story still open stays for the next run); b->trees is freed. */
void batch_trees_close(struct batch *b);

/* batch_setup.c */
/* What worktree.copy names, copied from the main tree into slot sl's
 * worktree: only files git ignores there and in the main tree
 * (docs/git-work.md#copied-files). */
int batch_tree_copy(struct batch *b, struct slot *sl, struct sc_err *err);
/*
 * Before slot sl's next attempt (the story just taken, or a wait over):
 * start worktree.setup when its tree was made or switched since it
 * last ran.  *started: it runs, the slot is SLOT_SETUP until
 * batch_slot_setup_end(); the loop waits on it beside the agents, so a
 * setup of minutes holds no other slot.  false: nothing due.
 */
int batch_slot_setup_start(
    struct batch *b, struct slot *sl, bool *started, struct sc_err *err);
/* The setup's handle while slot sl is SLOT_SETUP, else NULL. */
void *batch_slot_setup_handle(const struct batch *b, const struct slot *sl);
/*
 * Slot sl's setup has ended: recorded (an event).  *go true: the
 * attempt may be prepared.  false: the setup failed and was recorded as
 * the attempt's crash (sl waits for its next attempt or is free), or a
 * stop cut it short (sl free).
 */
int batch_slot_setup_end(
    struct batch *b, struct slot *sl, bool *go, struct sc_err *err);
/* The loop is over: a setup still running is ended, nothing recorded
 * (the story stays open). */
void batch_slot_setup_abandon(struct batch *b, struct slot *sl);
/*
 * git.commit_work in the main tree: refuse to start on uncommitted
 * changes, so nothing of the user's is ever mixed into a story's commit
 * or reset away.  Changes of a story that was in progress when the last
 * controller stopped are that story's, and resuming it is allowed.
 */
int batch_work_check(struct batch *b, struct sc_err *err);
/* Remember HEAD as where the story began (git.commit_work). */
int batch_work_base(struct batch *b, struct story_row *st, struct sc_err *err);
/* git.commit_work in the main tree, when story st is final: done work
 * goes on the current branch; deferred or escalated work on
 * storyctl/wip/<id>, and the tree returns to where the story began. */
int batch_work_end(struct batch *b, struct story_row *st, struct sc_err *err);
/* -j N > 1: the story works in its own worktree on storyctl/story/<id>,
 * started from the branch of a dependency that has one, or from HEAD. */
int batch_worktree_add(struct batch *b, struct slot *sl, const struct sched *sc,
    struct sc_err *err);
/*
 * The worktree of story st (-j N > 1) once the story is final: its work
 * is committed on its branch and the worktree goes (the branch stays).
 * Used by a live decision (slot_release), by start-up recovery after a
 * decision made for a dead controller's attempt, and by the sweep of
 * worktrees whose story was decided just before a crash
 * (docs/git-work.md#recovery).
 */
int batch_worktree_settle(struct batch *b, const struct story_row *st,
    const char *worktree, struct sc_err *err);
/*
 * Start-up, after recovery: a worktree whose story is already final in
 * this batch belongs to a controller that died between the decision and
 * the commit of the work (or to a decision recovery just made).  Settle
 * it as the live decision would have.  Worktrees of open stories stay:
 * the story's next attempt continues in them.
 */
int batch_worktree_sweep(struct batch *b, struct sc_err *err);

/* batch_loop.c */
/*
 * The supervision loop: up to N stories at once, one process, no
 * threads.  A slot holds its story while the story's next attempt
 * waits out its delay, so -j 1 is the plain sequential night.
 */
int batch_run_stories(struct batch *b, struct sc_err *err);

/* batch.c */
/* The loaded story with this id, or NULL. */
const struct story *batch_story_by_id(
    const struct batch_opts *o, const char *id);

/* batch_ops.c */
/* The agent seam of a batch: o's own when it has one (tests), else the
 * real runner, one agent at a time (docs/design.md#layout). */
void batch_ops_init(struct batch_agent_ops *ops, const struct batch_opts *o);

#endif
