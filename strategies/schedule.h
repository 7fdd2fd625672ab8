/*
 * schedule.h - which story runs when (docs/scheduling.md).  Pure.
 *
 * Stories run in config order, except that a story never runs before the
 * stories it depends on: schedule_order() gives the dependency-respecting
 * order that moves as few stories as possible (at every step, the
 * earliest story in config order whose dependencies are all placed).
 * schedule_state() tells whether one story may run now, must wait for a
 * dependency still open, or is blocked by one that ended badly.
 */
#ifndef STORYCTL_SCHEDULE_H
#define STORYCTL_SCHEDULE_H

#include <stddef.h>

#include "common/err.h"
#include "common/model.h"

struct sched_story {
	const char *id;
	const int *deps; /* indexes of the stories it depends on */
	size_t ndeps;
	enum story_status status;
};

/* SC_EDATA naming a dependency cycle ("dependency cycle: a -> b -> a")
 * when there is one: the first story in order that is on one, followed
 * by its first dependency on it; a dependency index < 0 is ignored.  The
 * one cycle check: the config loader and schedule_order() call it. */
int schedule_check_cycles(
    const struct sched_story *s, size_t n, struct sc_err *err);

/* order[0..n) = the run order (indexes).  SC_EDATA naming the cycle
 * (schedule_check_cycles()) when there is one. */
int schedule_order(
    size_t *order, const struct sched_story *s, size_t n, struct sc_err *err);

enum sched_state {
	SCHED_READY, /* every dependency is done */
	SCHED_WAIT, /* a dependency is still pending or running */
	SCHED_BLOCKED /* a dependency ended deferred, escalated, blocked or
			* invalid: *why names it */
};

/* The rule, over any storage of the statuses: status(ctx, k) is the
 * status of the story's dependency k (0 <= k < ndeps); *why = the k that
 * blocks it, else the first k it waits on, else SIZE_MAX.  A bad ending
 * decides even while another dependency is open.  The batch loop calls
 * it with its own view (controller/engine/batch.c). */
enum sched_state schedule_deps_state(size_t *why, size_t ndeps,
    enum story_status (*status)(const void *ctx, size_t k), const void *ctx);

/* schedule_deps_state() over s[i]'s dependencies in s; *why is the
 * story index, -1 when ready. */
enum sched_state schedule_state(
    const struct sched_story *s, size_t i, int *why);

#endif
