/* batch_loop.c - see batch_run_int.h: the supervision loop: fill the
 * slots with ready stories, wait, service them, the batch breaker
 * (docs/scheduling.md). */
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
#include "controller/engine/batch_notify.h"
#include "controller/engine/batch_run_int.h"
#include "controller/engine/console.h"
#include "controller/engine/requeue.h"
#include "state/fsutil.h"
#include "state/gitwork.h"
#include "strategies/schedule.h"
#include "strategies/suggest.h"

/* The breaker has opened: it pauses the batch, or stops it. */
static void
notify_breaker(struct batch *b, const char *why)
{
	struct notify_msg m = {0};

	m.event = NOTIFY_BREAKER_OPEN;
	m.reason = why;
	batch_notify(b, &m, NULL);
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
	rc = sl->tz_known ? 0 : attempt_transient_zero(b, sl->st, &tz, err);
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
		console_line(b, "%s", msg);
		notify_breaker(b, msg);
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
		rc = batch_sched_requeue(b, sc, (size_t)b->breaker.counted[k],
		    "put back by the batch breaker "
		    "(an outage, not the story)",
		    now, err);
		if (rc < 0)
			return rc;
	}
	b->stop_batch = true;
	notify_breaker(b, b->stop_reason);
	return statebranch_commit_batch(&b->sb, b->batch_id,
	    "storyctl: batch breaker open", b->stop_reason, batch_now_ms(b),
	    err);
}

/* A story reached its final status: in a worktree, its work is
 * committed on its branch and the worktree goes (the branch stays). */
static int
slot_release(struct batch *b, struct slot *sl, struct sc_err *err)
{
	int rc = 0;

	if (sl->worktree == NULL && sl->st->status != STATUS_PENDING &&
	    sl->st->status != STATUS_RUNNING)
		rc = batch_work_end(b, sl->st, err);
	if (sl->worktree != NULL)
		rc = batch_worktree_release(b, sl, err);
	free(sl->worktree);
	free(sl->abspath);
	free(sl->cwd);
	story_seen_release(&sl->seen);
	memset(sl, 0, sizeof(*sl));
	return rc;
}

/* The story of schedule entry i cannot run: dependency why ended
 * without being done.  It is settled as blocked. */
static int
slot_block(
    struct batch *b, struct sched *sc, size_t i, size_t why, struct sc_err *err)
{
	struct story_row blocked;
	char reason[300];
	int rc;

	snprintf(reason, sizeof(reason), "blocked: dependency %s ended %s",
	    sc->e[why].id, status_name(batch_sched_status(b, sc, why)));
	rc = batch_sched_row(&blocked, b, sc, i, err);
	if (rc == 0)
		rc = attempt_settle(
		    b, &blocked, STATUS_BLOCKED, reason, "blocked", err);
	if (rc < 0)
		return rc;
	sc->e[i].status = blocked.status;
	batch_sched_touch(sc, i);
	return 0;
}

/* Slot sl takes the story of schedule entry i: its row, and the tree
 * it runs in (a worktree of its own, or the main tree). */
static int
slot_take(struct batch *b, struct slot *sl, struct sched *sc, size_t i,
    struct sc_err *err)
{
	struct sched_ent *e = &sc->e[i];
	int rc;

	memset(sl, 0, sizeof(*sl));
	rc = batch_sched_row(&sl->row, b, sc, i, err);
	if (rc < 0)
		return rc;
	sl->st = &sl->row;
	sl->idx = i;
	sl->s = e->s;
	e->slot = (int)(sl - b->slots);
	batch_sched_touch(sc, i);
	if (batch_worktrees(b)) {
		rc = batch_worktree_add(b, sl, sc, err);
	} else {
		sl->abspath = story_abspath(e->s, b->cfg->root);
		sl->cwd = strdup(b->cfg->root);
		rc = sl->abspath && sl->cwd
		    ? 0
		    : err_set(err, SC_EOS, "out of memory");
		if (rc == 0 && b->cfg->git.commit_work &&
		    sl->st->base_commit[0] == '\0')
			rc = batch_work_base(b, sl->st, err);
	}
	return rc < 0 ? rc : 0;
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
	struct sched_ent *e;
	size_t i, why;
	int rc;

	if (sc->gen == sc->idle_gen)
		return 0;
	while (sc->cursor < sc->n &&
	    (!batch_status_open(sc->e[sc->cursor].status) ||
		!sc->e[sc->cursor].wanted))
		sc->cursor++;
	for (i = sc->cursor; i < sc->n; i++) {
		e = &sc->e[i];
		if (!batch_status_open(e->status) || !e->wanted || e->slot >= 0)
			continue;
		if (e->s == NULL)
			return err_set(err, SC_EDATA,
			    "story %s of batch %lld is no longer in the config",
			    e->id, (long long)b->batch_id);
		switch (batch_sched_deps_state(b, sc, i, &why)) {
		case SCHED_BLOCKED:
			if ((rc = slot_block(b, sc, i, why, err)) < 0)
				return rc;
			continue;
		case SCHED_WAIT:
			continue;
		case SCHED_READY:
			break;
		}
		return slot_take(b, sl, sc, i, err);
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
	bool final = !batch_status_open(sl->st->status);
	int rc = 0;

	if (final && sl->st->status != STATUS_BLOCKED &&
	    sl->st->status != STATUS_INVALID)
		rc = breaker_after(b, sc, sl, err);
	/* the schedule holds its status again (slot_release() keeps it) */
	e->status = sl->st->status;
	e->slot = -1;
	batch_sched_touch(sc, sl->idx);
	if (rc == 0)
		rc = slot_release(b, sl, err);
	return rc;
}

/* Slot sl's next attempt may be prepared: first its worktree's setup
 * when one is due, which the loop then waits on (SLOT_SETUP,
 * docs/git-work.md#setup).  slot_start() is slot_prepare() once a wait
 * is over. */
static int
slot_go(struct batch *b, struct slot *sl, struct sc_err *err)
{
	bool setup = false;
	int rc;

	rc = batch_slot_setup_start(b, sl, &setup, err);
	if (rc == 0 && !setup)
		rc = sl->state == SLOT_WAITING ? slot_start(b, sl, err)
					       : slot_prepare(b, sl, err);
	return rc;
}

/* Slot sl's setup, once it has ended: recorded, then the attempt it
 * went before, unless it failed or a stop cut it short. */
static int
slot_setup_service(struct batch *b, struct slot *sl, struct sc_err *err)
{
	bool go = false;
	int rc;

	if (!b->ops.done(b->ops.ctx, batch_slot_setup_handle(b, sl)))
		return 0;
	rc = batch_slot_setup_end(b, sl, &go, err);
	if (rc == 0 && go)
		rc = slot_prepare(b, sl, err);
	return rc;
}

static bool
stopping(const struct batch *b)
{
	return b->interrupted || b->stop_batch ||
	    (b->o->stop != NULL && *b->o->stop);
}

/* Fill the free slots with ready stories (none while stopping or while
 * the breaker pauses the batch). */
static int
slots_fill(struct batch *b, struct sched *sc, int64_t now, struct sc_err *err)
{
	size_t i;
	int rc = 0;

	for (i = 0; i < b->nslots && !stopping(b) && b->paused_until <= now;
	     i++) {
		struct slot *sl = &b->slots[i];
		while (sl->st == NULL && !stopping(b)) {
			rc = slot_fill(b, sl, sc, err);
			if (rc < 0 || sl->st == NULL)
				break;
			rc = slot_go(b, sl, err);
			if (rc == 0 && sl->state == SLOT_FREE)
				rc = story_left(b, sl, sc, err);
			if (rc < 0)
				goto out;
		}
		if (rc < 0)
			goto out;
	}
out:
	return rc;
}

/* How many slots are busy; the handles the running ones wait on (*nh)
 * and the next time something is due (*next, INT64_MAX when none). */
static size_t
slots_busy(const struct batch *b, void **handles, size_t *nh, int64_t *next,
    int64_t now)
{
	size_t i, busy = 0;

	*nh = 0;
	*next = b->paused_until > now ? b->paused_until : INT64_MAX;
	for (i = 0; i < b->nslots; i++) {
		const struct slot *sl = &b->slots[i];
		if (sl->st == NULL)
			continue;
		busy++;
		if (sl->state == SLOT_RUNNING)
			slot_handles(sl, handles, nh, next);
		else if (sl->state == SLOT_SETUP)
			handles[(*nh)++] = batch_slot_setup_handle(b, sl);
		else if (sl->state == SLOT_WAITING && sl->until_ms < *next)
			*next = sl->until_ms;
	}
	return busy;
}

/* After a wait: collect what is done, start what is due. */
static int
slots_service(
    struct batch *b, struct sched *sc, int64_t now, struct sc_err *err)
{
	size_t i;
	int rc = 0;

	for (i = 0; i < b->nslots; i++) {
		struct slot *sl = &b->slots[i];
		if (sl->st == NULL)
			continue;
		if (sl->state == SLOT_RUNNING)
			rc = slot_service(b, sl, err);
		else if (sl->state == SLOT_SETUP)
			rc = slot_setup_service(b, sl, err);
		else if (sl->state == SLOT_WAITING && stopping(b))
			sl->state = SLOT_FREE;
		else if (sl->state == SLOT_WAITING && sl->until_ms <= now)
			rc = slot_go(b, sl, err);
		if (rc == 0 && sl->state == SLOT_FREE)
			rc = story_left(b, sl, sc, err);
		if (rc < 0)
			break;
	}
	return rc;
}

/* Wait for the running attempts (nh handles), or sleep until the next
 * slot is due (next, INT64_MAX when none); a stop asked for meanwhile
 * is an interruption. */
static int
stories_wait(struct batch *b, void **handles, size_t nh, int64_t next,
    int64_t now, struct sc_err *err)
{
	int rc;

	if (nh > 0) {
		rc = b->ops.wait(b->ops.ctx, handles, nh,
		    next == INT64_MAX ? -1 : next - now, b->o->wake_fd, err);
		if (rc < 0)
			return rc;
	} else if (next != INT64_MAX && !stopping(b)) {
		if (b->o->clock.sleep_until(
			b->o->clock.ctx, next, b->o->stop, b->o->wake_fd))
			b->interrupted = true;
	}
	if (b->o->stop != NULL && *b->o->stop)
		b->interrupted = true;
	return 0;
}

/* The loop is over: an attempt still running (after an error) is
 * killed and forgotten, start-up reconciling its row later, and every
 * slot is emptied. */
static void
slots_abandon(struct batch *b)
{
	size_t i;

	for (i = 0; b->slots != NULL && i < b->nslots; i++) {
		batch_slot_setup_abandon(b, &b->slots[i]);
		slot_abandon(b, &b->slots[i]);
		free(b->slots[i].worktree);
		free(b->slots[i].abspath);
		free(b->slots[i].cwd);
		story_seen_release(&b->slots[i].seen);
		memset(&b->slots[i], 0, sizeof(b->slots[i]));
	}
}

/*
 * The supervision loop: up to N stories at once, one process, no
 * threads.  A slot holds its story while the story's next attempt
 * waits out its delay, so -j 1 is the plain sequential night.
 */
int
batch_run_stories(struct batch *b, struct sc_err *err)
{
	struct sched sc;
	void **handles = NULL;
	size_t nh;
	int64_t now, next;
	int rc;

	rc = batch_sched_build(&sc, b, err);
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
		if ((rc = batch_sched_reopened(b, &sc, err)) < 0 ||
		    (rc = slots_fill(b, &sc, now, err)) < 0)
			goto out;
		if (slots_busy(b, handles, &nh, &next, now) == 0 &&
		    (stopping(b) || b->paused_until <= now)) {
			/* a stop that came before any slot was busy (during
			 * start-up) is an interruption all the same: never
			 * exit 0 or 3 with stories pending
			 * (docs/reliability.md#stops-during-start-up) */
			if (b->o->stop != NULL && *b->o->stop)
				b->interrupted = true;
			break;
		}
		/* nothing may wait on a decision the branch does not show */
		rc = statebranch_flush(&b->sb, batch_now_ms(b), err);
		if (rc < 0)
			goto out;
		batch_notify_poll(b);
		console_status(b);
		rc = stories_wait(b, handles, nh, next, now, err);
		if (rc < 0)
			goto out;
		now = b->o->clock.now_ms(b->o->clock.ctx);
		if ((rc = slots_service(b, &sc, now, err)) < 0)
			goto out;
	}
out:
	slots_abandon(b);
	batch_trees_close(b);
	console_clear(b);
	free(handles);
	batch_sched_free(&sc);
	return rc;
}
