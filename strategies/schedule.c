/* schedule.c - see schedule.h. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "strategies/schedule.h"

/* Describe one cycle among the stories left unplaced: follow unplaced
 * dependencies from an unplaced story until one repeats. */
static void
describe_cycle(char *msg, size_t cap, const struct sched_story *s, size_t n,
    const bool *placed)
{
	size_t *path = calloc(n + 1, sizeof(*path));
	int *seen_at = calloc(n, sizeof(*seen_at));
	size_t len = 0, i, k, cur = 0, o;

	if (path == NULL || seen_at == NULL) {
		snprintf(msg, cap, "dependency cycle");
		goto out;
	}
	for (i = 0; i < n; i++)
		seen_at[i] = -1;
	for (cur = 0; cur < n && placed[cur]; cur++)
		;
	while (cur < n && seen_at[cur] < 0) {
		seen_at[cur] = (int)len;
		path[len++] = cur;
		for (k = 0; k < s[cur].ndeps; k++)
			if (!placed[s[cur].deps[k]])
				break;
		cur = (size_t)s[cur].deps[k];
	}
	o = (size_t)snprintf(msg, cap, "dependency cycle: ");
	for (i = (size_t)seen_at[cur]; i < len && o < cap; i++)
		o +=
		    (size_t)snprintf(msg + o, cap - o, "%s -> ", s[path[i]].id);
	if (o < cap)
		snprintf(msg + o, cap - o, "%s", s[cur].id);
out:
	free(path);
	free(seen_at);
}

int
schedule_order(
    size_t *order, const struct sched_story *s, size_t n, struct sc_err *err)
{
	bool *placed = calloc(n ? n : 1, sizeof(*placed));
	size_t done = 0, i, k;
	char msg[900];
	bool ok;
	int rc = 0;

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
			describe_cycle(msg, sizeof(msg), s, n, placed);
			rc = err_set(err, SC_EDATA, "%s", msg);
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
schedule_state(const struct sched_story *s, size_t i, int *why)
{
	enum sched_state st = SCHED_READY;
	size_t k;

	*why = -1;
	for (k = 0; k < s[i].ndeps; k++) {
		int d = s[i].deps[k];
		switch (s[d].status) {
		case STATUS_DONE:
			break;
		case STATUS_DEFERRED:
		case STATUS_ESCALATED:
		case STATUS_BLOCKED:
		case STATUS_INVALID:
			*why = d;
			return SCHED_BLOCKED;
		default:
			st = SCHED_WAIT;
			if (*why < 0)
				*why = d;
			break;
		}
	}
	return st;
}
