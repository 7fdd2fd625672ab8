/*
 * gitevidence_tree.c - the work trees a batch snapshots, kept open with
 * a watch of their files from one snapshot to the next, what changed in
 * each since it was marked clean, and a kept tree renamed by the caller
 * (docs/evidence.md#cost, docs/git-work.md#what-a-switch-looks-at).
 * See gitevidence.h; the snapshots and diffs are in gitevidence.c.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <git2.h>
#include <git2/sys/odb_backend.h>
#include <git2/sys/repository.h>

#include "state/fsutil.h"
#include "state/gitevidence.h"
#include "state/gitevidence_int.h"
#include "state/gitwork_int.h"
#include "state/treewatch.h"

/*
 * Open the repository containing dir with the snapshots' own object
 * database in front: state_dir/evidence-objects, a loose-object store
 * at a priority above the repository's, so that every object a snapshot
 * writes (its trees, the blobs of new and changed files) lands there
 * and never in the repository's .git.  A snapshot is referenced by no
 * ref: in .git, `git gc` would keep its objects loose for two weeks.
 * Reads see both stores.  state_dir NULL or "": the repository's own
 * (docs/evidence.md#how-it-is-measured).
 */
static int
ev_open(git_repository **repo, const char *dir, const char *state_dir,
    struct sc_err *err)
{
	git_odb *odb = NULL;
	git_odb_backend *be = NULL;
	char *path = NULL;
	int rc;

	if ((rc = gitwork_open(repo, dir, err)) < 0 || state_dir == NULL ||
	    state_dir[0] == '\0')
		return rc;
	if ((path = fsutil_path_join(state_dir, GITEVIDENCE_ODB)) == NULL) {
		rc = err_set(err, SC_EOS, "out of memory");
		goto out;
	}
	/* the store itself too: libgit2 makes only its fan-out dirs, and a
	 * write it cannot make there would go on to .git's own store */
	if ((rc = fsutil_mkdir_parents(path, 0700, err)) < 0)
		goto out;
	if (mkdir(path, 0700) < 0 && errno != EEXIST) {
		rc = err_set(err, SC_EIO, "%s: %s", path, strerror(errno));
		goto out;
	}
	if (git_repository_odb(&odb, *repo) < 0 ||
	    git_odb_backend_loose(&be, path, -1, 0, 0700, 0600) < 0 ||
	    git_odb_add_backend(odb, be, 10) < 0) {
		if (be != NULL && odb != NULL)
			be->free(be);
		rc = err_set(err, SC_EIO,
		    "%s: cannot open the snapshots' "
		    "objects: %s",
		    path, gitwork_git_msg());
	}
out:
	git_odb_free(odb);
	free(path);
	if (rc < 0) {
		gitwork_close(*repo);
		*repo = NULL;
	}
	return rc;
}

void
gitevidence_forget(const char *state_dir)
{
	char *path = fsutil_path_join(state_dir, GITEVIDENCE_ODB);

	if (path != NULL)
		fsutil_rm_tree(path);
	free(path);
}

static void
ev_tree_close(struct ev_tree *t)
{
	if (t == NULL)
		return;
	treewatch_free(t->tw);
	strlist_release(&t->pending);
	strlist_release(&t->since);
	free(t->state_dir);
	git_repository_free(t->scratch); /* its odb frees the mempack */
	free(t->store);
	git_index_free(t->idx);
	gitwork_close(t->repo);
	free(t->dir);
	free(t);
}

/* *out: the work tree containing dir, opened, with its index. */
static int
ev_tree_open(struct ev_tree **out, const char *dir, const char *state_dir,
    struct sc_err *err)
{
	struct ev_tree *t = NULL;
	int rc;

	*out = NULL;
	if ((t = calloc(1, sizeof(*t))) == NULL ||
	    (t->dir = strdup(dir)) == NULL) {
		free(t);
		return err_set(err, SC_EOS, "%s: out of memory", dir);
	}
	t->own_index = state_dir != NULL && state_dir[0] != '\0';
	if (t->own_index &&
	    ((t->store = fsutil_path_join(state_dir, GITEVIDENCE_ODB)) ==
		    NULL ||
		(t->state_dir = strdup(state_dir)) == NULL)) {
		ev_tree_close(t);
		return err_set(err, SC_EOS, "%s: out of memory", dir);
	}
	if ((rc = ev_open(&t->repo, dir, state_dir, err)) < 0 ||
	    (rc = gitwork_exclude(t->ex, sizeof(t->ex),
		 git_repository_workdir(t->repo), state_dir, err)) < 0 ||
	    (rc = evindex_open(&t->idx, t->repo, state_dir, dir, err)) < 0) {
		ev_tree_close(t);
		return rc;
	}
	*out = t;
	return 0;
}

/* A watch for t's work tree (its path without the trailing '/'); none
 * when it cannot be made: then the whole tree is looked at each time. */
static void
ev_tree_watch(struct ev_tree *t)
{
	char root[PATH_MAX], ex[PATH_MAX];
	struct sc_err ignore;
	size_t n;

	n = (size_t)snprintf(
	    root, sizeof(root), "%s", git_repository_workdir(t->repo));
	if (n >= sizeof(root))
		return;
	while (n > 1 && root[n - 1] == '/')
		root[--n] = '\0';
	if ((size_t)snprintf(ex, sizeof(ex), "%s/%s", root, t->ex) >=
	    sizeof(ex))
		return;
	(void)treewatch_open(
	    &t->tw, root, t->ex[0] != '\0' ? ex : NULL, &ignore);
}

/* Drop w's entry i. */
static void
ev_watches_drop(struct gitevidence_watches *w, size_t i)
{
	ev_tree_close(w->t[i]);
	memmove(&w->t[i], &w->t[i + 1], (w->n - i - 1) * sizeof(*w->t));
	w->n--;
}

/* w's tree dir, or NULL. */
static struct ev_tree *
ev_watches_find(struct gitevidence_watches *w, const char *dir, size_t *at)
{
	size_t i;

	for (i = 0; w != NULL && i < w->n; i++)
		if (strcmp(w->t[i]->dir, dir) == 0) {
			*at = i;
			return w->t[i];
		}
	return NULL;
}

/* Note what a take said in t->since: the paths, or that they are not
 * known. */
static void
ev_note_since(struct ev_tree *t, const struct strlist *changed, bool full)
{
	size_t i;

	if (!t->since_known)
		return;
	if (full || t->since.n + changed->n > GITEVIDENCE_SINCE_MAX) {
		/* a look at the whole tree costs less than so many paths */
		t->since_known = false;
		strlist_release(&t->since);
		return;
	}
	for (i = 0; i < changed->n && t->since_known; i++)
		if (strlist_push(&t->since, changed->items[i]) < 0) {
			t->since_known = false;
			strlist_release(&t->since);
		}
}

/*
 * What t's watch saw change since the last take, into changed (sorted,
 * unique), or *full when not known; with what gitevidence_changed()
 * took meanwhile for the next snapshot (t->pending), and noted in
 * t->since.  *gone: the tree itself went away.
 */
static void
ev_take(struct ev_tree *t, struct strlist *changed, bool *full, bool *gone)
{
	struct sc_err ignore;
	size_t i;

	*full = true;
	*gone = false;
	if (t->tw != NULL &&
	    treewatch_take(t->tw, changed, full, gone, &ignore) < 0)
		*full = true;
	if (*gone)
		return;
	ev_note_since(t, changed, *full);
	*full = *full || t->pending_full;
	for (i = 0; i < t->pending.n && !*full; i++)
		if (strlist_push(changed, t->pending.items[i]) < 0)
			*full = true;
	if (!*full)
		strlist_sort_unique(changed);
	strlist_release(&t->pending);
	t->pending_full = false;
}

/*
 * *out: the work tree containing dir, kept in w (w NULL: opened for
 * this call only; evtree_put() closes it), and in *only what changed
 * in it since the last snapshot, or *only NULL when not known (the
 * whole tree is looked at).
 */
int
evtree_get(struct ev_tree **out, struct strlist *changed,
    const struct strlist **only, struct gitevidence_watches *w, const char *dir,
    const char *state_dir, struct sc_err *err)
{
	struct ev_tree *t;
	struct sc_err ignore;
	bool full = true, gone = false;
	size_t i = 0;
	int rc;

	*out = NULL;
	*only = NULL;
	if ((t = ev_watches_find(w, dir, &i)) != NULL) {
		ev_take(t, changed, &full, &gone);
		if (!gone) {
			*only = full ? NULL : changed;
			*out = t;
			return 0;
		}
		/* the tree went away (a worktree removed and made again):
		 * its repository and watch are stale */
		ev_watches_drop(w, i);
	}
	if ((rc = ev_tree_open(&t, dir, state_dir, err)) < 0)
		return rc;
	if (w != NULL && t->own_index) {
		if (w->n == GITEVIDENCE_WATCH_MAX)
			ev_watches_drop(w, 0);
		w->t[w->n++] = t;
		t->kept = true;
		ev_tree_watch(t);
		/* the first take says "full" and arms the watch before the
		 * whole tree is looked at */
		if (t->tw != NULL)
			(void)treewatch_take(
			    t->tw, changed, &full, &gone, &ignore);
	}
	*out = t;
	return 0;
}

/* Done with t: closed unless w keeps it; a failed snapshot makes the
 * next one look at the whole tree (what the watch said is spent). */
void
evtree_put(struct gitevidence_watches *w, struct ev_tree *t, bool failed)
{
	size_t i;

	for (i = 0; w != NULL && i < w->n; i++)
		if (w->t[i] == t) {
			if (failed)
				ev_watches_drop(w, i);
			return;
		}
	ev_tree_close(t);
}

int
gitevidence_watches_new(struct gitevidence_watches **out, struct sc_err *err)
{
	*out = calloc(1, sizeof(**out));
	return *out != NULL ? 0 : err_set(err, SC_EOS, "out of memory");
}

void
gitevidence_watches_free(struct gitevidence_watches *w)
{
	if (w == NULL)
		return;
	while (w->n > 0)
		ev_watches_drop(w, w->n - 1);
	free(w);
}

void
gitevidence_watches_drop(struct gitevidence_watches *w, const char *dir)
{
	size_t i = 0;

	if (ev_watches_find(w, dir, &i) != NULL)
		ev_watches_drop(w, i);
}

int
gitevidence_mark(struct gitevidence_watches *w, const char *dir,
    const char *state_dir, struct sc_err *err)
{
	struct ev_tree *t = NULL;
	struct strlist changed = {0};
	const struct strlist *only;
	size_t i;
	int rc;

	if (w == NULL || state_dir == NULL || state_dir[0] == '\0')
		return 0;
	if ((rc = evtree_get(&t, &changed, &only, w, dir, state_dir, err)) < 0)
		goto out;
	/* what the take found is the next snapshot's, not the mark's */
	t->pending_full = only == NULL;
	for (i = 0; i < changed.n && !t->pending_full; i++)
		if (strlist_push(&t->pending, changed.items[i]) < 0)
			t->pending_full = true;
	strlist_release(&t->since);
	t->since_known = t->tw != NULL;
	evtree_put(w, t, false);
out:
	strlist_release(&changed);
	return rc;
}

int
gitevidence_changed(struct strlist *paths, bool *known,
    struct gitevidence_watches *w, const char *dir, struct sc_err *err)
{
	struct ev_tree *t;
	struct strlist changed = {0};
	bool full, gone;
	size_t i, at = 0;
	int rc = 0;

	*known = false;
	if ((t = ev_watches_find(w, dir, &at)) == NULL)
		return 0;
	ev_take(t, &changed, &full, &gone);
	if (gone) {
		ev_watches_drop(w, at);
		goto out;
	}
	/* back for the next snapshot, which has not seen them */
	t->pending_full = full;
	for (i = 0; i < changed.n && !full; i++)
		if (strlist_push(&t->pending, changed.items[i]) < 0)
			t->pending_full = full = true;
	if (!t->since_known)
		goto out;
	strlist_sort_unique(&t->since);
	if (strlist_copy(paths, &t->since) < 0) {
		rc = err_set(err, SC_EOS, "%s: out of memory", dir);
		goto out;
	}
	*known = true;
out:
	strlist_release(&changed);
	return rc;
}

int
gitevidence_watches_move(struct gitevidence_watches *w, const char *dir,
    const char *newdir, struct sc_err *err)
{
	struct ev_tree *t;
	git_repository *repo = NULL;
	char root[PATH_MAX], ex[PATH_MAX];
	char *nd = NULL;
	size_t at = 0, n;
	int rc;

	if ((t = ev_watches_find(w, dir, &at)) == NULL)
		return 0;
	if ((nd = strdup(newdir)) == NULL) {
		rc = err_set(err, SC_EOS, "%s: out of memory", newdir);
		goto fail;
	}
	if ((rc = ev_open(&repo, newdir, t->state_dir, err)) < 0 ||
	    (rc = gitwork_exclude(ex, sizeof(ex), git_repository_workdir(repo),
		 t->state_dir, err)) < 0)
		goto fail;
	n = (size_t)snprintf(
	    root, sizeof(root), "%s", git_repository_workdir(repo));
	while (n > 1 && n < sizeof(root) && root[n - 1] == '/')
		root[--n] = '\0';
	if (n >= sizeof(root)) {
		rc = err_set(err, SC_EDATA, "%s: path too long", newdir);
		goto fail;
	}
	if (t->tw != NULL && (rc = treewatch_moved(t->tw, root, err)) < 0)
		goto fail;
	/* the old repository lets go of the index before the new one
	 * takes it (libgit2 clears the owner of an index it releases) */
	gitwork_close(t->repo);
	t->repo = repo;
	git_repository_set_index(t->repo, t->idx);
	free(t->dir);
	t->dir = nd;
	memcpy(t->ex, ex, sizeof(t->ex));
	return 0;
fail:
	/* forgotten: the next snapshot opens the tree afresh and looks at
	 * all of it */
	gitwork_close(repo);
	free(nd);
	ev_watches_drop(w, at);
	return rc;
}
