/* schedule.c - see schedule.h (docs/scheduling.md). */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "strategies/schedule.h"

/* Depth-first from story i: 1 while on the path, 2 when done.  On
 * meeting a story on the path, msg names the cycle from it back to it
 * and the result is -1. */
static int
cycle_visit(const struct sched_story *s, size_t i, unsigned char *color,
    size_t *stack, size_t depth, char *msg, size_t cap)
{
	size_t k, m, o;
	int j, rc;

	color[i] = 1;
	stack[depth] = i;
	for (k = 0; k < s[i].ndeps; k++) {
		j = s[i].deps[k];
		if (j < 0 || color[j] == 2)
			continue;
		if (color[j] == 1) {
			for (m = 0; m <= depth && stack[m] != (size_t)j; m++)
				;
			o = (size_t)snprintf(msg, cap, "dependency cycle: ");
			for (; m <= depth && o < cap; m++)
				o += (size_t)snprintf(
				    msg + o, cap - o, "%s -> ", s[stack[m]].id);
			if (o < cap)
				snprintf(msg + o, cap - o, "%s", s[j].id);
			return -1;
		}
		rc = cycle_visit(
		    s, (size_t)j, color, stack, depth + 1, msg, cap);
		if (rc != 0)
			return rc;
	}
	color[i] = 2;
	return 0;
}

int
schedule_check_cycles(const struct sched_story *s, size_t n, struct sc_err *err)
{
	unsigned char *color = NULL;
	size_t *stack = NULL, i;
	char msg[900];
	int rc = 0;

	if (n == 0)
		goto out;
	color = calloc(n, 1);
	stack = calloc(n, sizeof(*stack));
	if (color == NULL || stack == NULL) {
		rc = err_set(err, SC_EOS, "out of memory");
		goto out;
	}
	/* the first story in order that is on a cycle, then its first
	 * dependency that is: the cycle a person meets reading the list */
	for (i = 0; i < n; i++) {
		if (color[i] != 0)
			continue;
		if (cycle_visit(s, i, color, stack, 0, msg, sizeof(msg)) != 0) {
			rc = err_set(err, SC_EDATA, "%s", msg);
			goto out;
		}
	}
out:
	free(color);
	free(stack);
	return rc;
}

int
schedule_order(
    size_t *order, const struct sched_story *s, size_t n, struct sc_err *err)
{
	bool *placed = NULL;
	size_t done = 0, i, k;
	bool ok;
	int rc;

	rc = schedule_check_cycles(s, n, err);
	if (rc < 0)
		return rc;
	placed = calloc(n ? n : 1, sizeof(*placed));
	if (placed == NULL)
		return err_set(err, SC_EOS, "out of memory");
	while (done < n) {
		/* the earliest story in config order that can go next */
		for (i = 0; i < n; i++) {
			if (placed[i])
				continue;
			ok = true;
			for (k = 0; k < s[i].ndeps && ok; k++)
				ok = placed[s[i].deps[k]];
			if (ok)
				break;
		}
		if (i == n) {
			/* schedule_check_cycles() found none: cannot be */
			rc = err_set(err, SC_ESOFTWARE, "dependency cycle");
			goto out;
		}
		placed[i] = true;
		order[done++] = i;
	}
out:
	free(placed);
	return rc;
}

enum sched_state
schedule_deps_state(size_t *why, size_t ndeps,
    enum story_status (*status)(const void *ctx, size_t k), const void *ctx)
{
	enum sched_state st = SCHED_READY;
	size_t k;

	*why = SIZE_MAX;
	for (k = 0; k < ndeps; k++) {
		switch (status(ctx, k)) {
		case STATUS_DONE:
			break;
		case STATUS_DEFERRED:
		case STATUS_ESCALATED:
		case STATUS_BLOCKED:
		case STATUS_INVALID:
			*why = k;
			return SCHED_BLOCKED;
		default:
			st = SCHED_WAIT;
			if (*why == SIZE_MAX)
				*why = k;
			break;
		}
	}
	return st;
}

/* The status of dependency k of one story of an array. */
struct dep_view {
	const struct sched_story *s;
	size_t i;
};

static enum story_status
dep_status(const void *ctx, size_t k)
{
	const struct dep_view *v = ctx;

	return v->s[v->s[v->i].deps[k]].status;
}

enum sched_state
schedule_state(const struct sched_story *s, size_t i, int *why)
{
	struct dep_view v = {s, i};
	enum sched_state st;
	size_t k;

	st = schedule_deps_state(&k, s[i].ndeps, dep_status, &v);
	*why = k == SIZE_MAX ? -1 : s[i].deps[k];
	return st;
}
