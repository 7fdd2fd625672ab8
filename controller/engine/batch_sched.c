/* batch_sched.c - see batch_run_int.h: the loop's compact schedule of
 * the batch, its dependencies as indexes, and the dependency rule of
 * strategies/schedule.c applied to it (docs/scheduling.md). */
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

#include "controller/engine/batch_run_int.h"
#include "controller/engine/console.h"
#include "controller/engine/requeue.h"
#include "state/fsutil.h"
#include "state/gitwork.h"
#include "strategies/schedule.h"
#include "strategies/suggest.h"

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

bool
batch_status_open(enum story_status s)
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

void
batch_sched_free(struct sched *sc)
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
 * full rows of the batch are never all in memory.  batch_select() gives
 * the stories positions 0..N-1; a batch whose positions have gaps is
 * read whole instead (the same order: by position, then id).
 */
int
batch_sched_build(struct sched *sc, const struct batch *b, struct sc_err *err)
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
	/* what was reopened before the start is in the rows read */
	if (rc == 0)
		rc = db_reopen_seq(b->db, &sc->reopen_seq, err);
out:
	free(rows);
	free(by_id);
	if (rc < 0)
		batch_sched_free(sc);
	return rc;
}

/* Entry i changed (its status, its slot): slot_fill() looks again, from
 * i on when it is open again. */
void
batch_sched_touch(struct sched *sc, size_t i)
{
	if (i < sc->cursor)
		sc->cursor = i;
	sc->gen++;
}

/* Story i's status now: its slot's row while a slot holds it. */
enum story_status
batch_sched_status(const struct batch *b, const struct sched *sc, size_t i)
{
	const struct sched_ent *e = &sc->e[i];

	return e->slot >= 0 ? b->slots[e->slot].st->status : e->status;
}

/* Story i's full row from the database (it is in no slot). */
int
batch_sched_row(struct story_row *out, const struct batch *b,
    const struct sched *sc, size_t i, struct sc_err *err)
{
	int found = 0;
	int rc;

	rc = db_story_get(b->db, out, &found, b->batch_id, sc->e[i].id, err);
	if (rc == 0 && !found)
		rc = err_set(err, SC_EIO, "%s: story %s of batch %lld is gone",
		    db_path(b->db), sc->e[i].id, (long long)b->batch_id);
	return rc;
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

	return batch_sched_status(v->b, v->sc, v->sc->deps[v->e->dep + k]);
}

/* Whether story i may run now given the statuses of its dependencies in
 * the batch (the rule is strategies/schedule.c's, docs/scheduling.md);
 * *why is the dependency that blocks it or that it waits on first
 * (SIZE_MAX when ready). */
enum sched_state
batch_sched_deps_state(
    const struct batch *b, const struct sched *sc, size_t i, size_t *why)
{
	struct dep_view v = {b, sc, &sc->e[i]};
	enum sched_state st;
	size_t k;

	st = schedule_deps_state(&k, v.e->ndeps, dep_status, &v);
	*why = k == SIZE_MAX ? SIZE_MAX : sc->deps[v.e->dep + k];
	return st;
}

/* Put story i back to pending (requeue_story()): in its slot's row
 * while a slot holds it, else in the database and the schedule. */
int
batch_sched_requeue(struct batch *b, struct sched *sc, size_t i,
    const char *reason, int64_t now, struct sc_err *err)
{
	struct sched_ent *e = &sc->e[i];
	struct story_row st;
	int rc;

	if (e->slot >= 0)
		return requeue_story(
		    b->db, b->slots[e->slot].st, reason, now, err);
	rc = batch_sched_row(&st, b, sc, i, err);
	if (rc == 0)
		rc = requeue_story(b->db, &st, reason, now, err);
	if (rc == 0) {
		e->status = st.status;
		batch_sched_touch(sc, i);
	}
	return rc;
}

int
batch_sched_reopened(struct batch *b, struct sched *sc, struct sc_err *err)
{
	struct story_row *rows = NULL;
	int64_t seq = 0;
	size_t n = 0, i, k;
	int rc;

	rc = db_reopen_seq(b->db, &seq, err);
	if (rc < 0 || seq == sc->reopen_seq)
		return rc;
	sc->reopen_seq = seq;
	rc = db_story_list(b->db, &rows, &n, b->batch_id, "pending", err);
	for (k = 0; rc == 0 && k < n; k++) {
		for (i = 0; i < sc->n; i++)
			if (strcmp(sc->e[i].id, rows[k].id) == 0)
				break;
		/* a story in a slot is this controller's own */
		if (i == sc->n || sc->e[i].slot >= 0 ||
		    sc->e[i].status == STATUS_PENDING)
			continue;
		sc->e[i].status = STATUS_PENDING;
		batch_sched_touch(sc, i);
		console_line(b, "%s: pending again (%.300s)", rows[k].id,
		    rows[k].reason);
	}
	free(rows);
	return rc;
}
