/*
 * batch_premake.c - the slots' worktrees made at the same time
 * (docs/git-work.md#made-ahead).
 *
 * When the first slot of a batch makes its worktree, the other slots
 * that will soon take a story need one too, and making one is the
 * slowest step of a story under -j N: 20,000 files inflated and written
 * take about 0.6 s on a quiet machine, and the loop serves no agent
 * meanwhile.  So the others are made at the same time, each in a thread
 * of its own, parked (<wtdir>/.slot-<k>, HEAD detached at the main
 * tree's HEAD), while the first slot makes its own on the loop's
 * thread.  The loop waits for all of them before it goes on, so nothing
 * else of the batch runs beside the threads: each opens the repository
 * itself (libgit2 objects are not shared between threads), writes only
 * its own worktree, admin directory and temporary branch, and reports
 * into its own job.  A worktree that could not be made is made later,
 * when its slot takes a story, as before.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/err.h"
#include "controller/engine/batch_int.h"
#include "controller/engine/batch_run_int.h"
#include "controller/engine/console.h"
#include "state/fsutil.h"
#include "state/gitevidence.h"
#include "state/gitwork.h"

struct premake_job {
	size_t slot; /* its index in b->slots */
	char name[NAME_MAX + 1];
	char *path;
	const char *root, *base;
	bool started;
	pthread_t th;
	int rc;
	struct sc_err err;
};

struct batch_premake {
	struct premake_job *jobs;
	size_t n;
	char base[GITWORK_HEXSZ];
};

static void *
premake_main(void *arg)
{
	struct premake_job *j = arg;

	j->rc = gitwork_worktree_fill(j->path, &j->err);
	return NULL;
}

/* The jobs for the slots after sl that have no worktree, at most want. */
static int
premake_plan(struct batch_premake *pm, struct batch *b, const struct slot *sl,
    size_t want, struct sc_err *err)
{
	char dot[32];
	struct stat sb;
	struct premake_job *j;
	size_t k;

	pm->jobs = calloc(b->nslots, sizeof(*pm->jobs));
	if (pm->jobs == NULL)
		return err_set(err, SC_EOS, "out of memory");
	for (k = 0; k < b->nslots && pm->n < want; k++) {
		if (&b->slots[k] == sl || b->trees[k].path != NULL)
			continue;
		snprintf(dot, sizeof(dot), ".slot-%zu", k + 1);
		j = &pm->jobs[pm->n];
		if ((j->path = fsutil_path_join(b->wtdir, dot)) == NULL)
			return err_set(err, SC_EOS, "out of memory");
		if (lstat(j->path, &sb) == 0) {
			free(j->path); /* in the way: made when needed */
			j->path = NULL;
			continue;
		}
		j->slot = k;
		snprintf(j->name, sizeof(j->name), "_slot%zu-%lld", k + 1,
		    (long long)b->started_ms);
		j->root = b->cfg->root;
		j->base = pm->base;
		pm->n++;
	}
	return 0;
}

static void
premake_free(struct batch_premake *pm)
{
	size_t i;

	if (pm == NULL)
		return;
	for (i = 0; pm->jobs != NULL && i < pm->n; i++)
		free(pm->jobs[i].path);
	free(pm->jobs);
	free(pm);
}

int
batch_premake_start(struct batch_premake **out, struct batch *b,
    const struct slot *sl, size_t want, struct sc_err *err)
{
	struct batch_premake *pm = NULL;
	char ref[256];
	size_t i;
	int rc;

	*out = NULL;
	if (want == 0 || b->trees == NULL)
		return 0;
	if ((pm = calloc(1, sizeof(*pm))) == NULL)
		return err_set(err, SC_EOS, "out of memory");
	/* a story's branch starts at the main tree's HEAD unless it has a
	 * dependency: the switch to it then writes nothing */
	if ((rc = gitwork_head(pm->base, ref, sizeof(ref), b->cfg->root, err)) <
		0 ||
	    pm->base[0] == '\0' ||
	    (rc = premake_plan(pm, b, sl, want, err)) < 0)
		goto out;
	/* git's records one after the other (libgit2 reads them all
	 * while it adds one), then the files, each in a thread */
	for (i = 0; i < pm->n; i++) {
		struct premake_job *j = &pm->jobs[i];
		j->rc = gitwork_worktree_add_detached(
		    j->root, j->name, j->path, j->base, &j->err);
	}
	for (i = 0; i < pm->n; i++) {
		struct premake_job *j = &pm->jobs[i];
		if (j->rc < 0)
			continue;
		/* a thread that cannot start: the files are written when
		 * the threads are joined */
		j->started = pthread_create(&j->th, NULL, premake_main, j) == 0;
	}
	*out = pm;
	pm = NULL;
out:
	premake_free(pm);
	return rc;
}

/* Job j is done: its slot's parked worktree, or a console line. */
static void
premake_take(struct batch *b, struct premake_job *j)
{
	struct slot_tree *t = &b->trees[j->slot];
	struct sc_err e2;

	if (j->rc < 0) {
		console_line(b,
		    "slot %zu: cannot make its worktree ahead (%s); it is "
		    "made when the slot takes a story",
		    j->slot + 1, j->err.msg);
		/* a worktree made but not detached is of no use */
		if (access(j->path, F_OK) == 0 &&
		    gitwork_worktree_remove(b->cfg->root, j->name, &e2) == 0 &&
		    access(j->path, F_OK) == 0)
			fsutil_rm_tree(j->path);
		return;
	}
	t->path = j->path;
	j->path = NULL;
	snprintf(t->name, sizeof(t->name), "%s", j->name);
	t->parked = true;
	t->fresh = true;
	/* new and clean: changes are counted from here, so its first
	 * switch looks at no file (docs/git-work.md#what-a-switch-looks-at) */
	if (gitevidence_mark(b->evw, t->path, b->cfg->state_dir, &e2) < 0)
		gitevidence_watches_drop(b->evw, t->path);
}

void
batch_premake_join(struct batch_premake *pm, struct batch *b)
{
	size_t i;

	for (i = 0; pm != NULL && i < pm->n; i++) {
		struct premake_job *j = &pm->jobs[i];
		if (j->started)
			(void)pthread_join(j->th, NULL);
		else if (j->rc == 0)
			premake_main(j);
		premake_take(b, j);
	}
	premake_free(pm);
}
