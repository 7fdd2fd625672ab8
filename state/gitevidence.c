/*
 * gitevidence.c - an attempt's change in its work tree: snapshots of the
 * tree and the diff between two of them (docs/evidence.md).  See
 * gitevidence.h.
 */
#include <errno.h>
#include <stdint.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <git2.h>
#include <git2/sys/mempack.h>
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

/*
 * A work tree as snapshots see it: its repository (the snapshots' store
 * in front), the index a snapshot starts from and, while a
 * gitevidence_watches keeps it, the watch that says which of its files
 * changed since the last snapshot (state/treewatch.h).
 */
struct ev_tree {
	char *dir; /* as the caller named it: the key */
	git_repository *repo;
	git_index *idx;
	struct treewatch *tw; /* NULL: the whole tree every time */
	bool own_index; /* the snapshots' own, written after a full look */
	bool kept; /* in a gitevidence_watches, its index in memory only */
	bool have_start; /* idx is the tree as the last snapshot saw it, */
	char start[GITWORK_HEXSZ]; /* which that snapshot named so */
	unsigned long nsnap; /* snapshots taken: the names' numbers */
	char *store; /* the snapshots' store (state_dir/evidence-objects) */
	git_repository *scratch; /* the small trees of a diff: in memory */
	git_odb_backend *mempack; /* scratch's, emptied after each diff */
	char ex[PATH_MAX]; /* the state dir, relative to the work tree */
	char *state_dir; /* as given: the tree is opened again after a move */
	/* what gitevidence_changed() took from the watch, for the next
	 * snapshot (pending_full: look at the whole tree) */
	struct strlist pending;
	bool pending_full;
	/* the paths changed since gitevidence_mark(), since_known false
	 * when they are not known (no mark, the watch lost track, too
	 * many) */
	struct strlist since;
	bool since_known;
};

struct gitevidence_watches {
	struct ev_tree *t[GITEVIDENCE_WATCH_MAX]; /* [0] the oldest */
	size_t n;
};

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
 * this call only; ev_tree_put() closes it), and in *only what changed
 * in it since the last snapshot, or *only NULL when not known (the
 * whole tree is looked at).
 */
static int
ev_tree_get(struct ev_tree **out, struct strlist *changed,
    const struct strlist **only, struct gitevidence_watches *w, const char *dir,
    const char *state_dir, struct sc_err *err)
{
	struct ev_tree *t = NULL;
	struct sc_err ignore;
	bool full = true, gone = false;
	size_t i;
	int rc;

	*out = NULL;
	*only = NULL;
	for (i = 0; w != NULL && i < w->n; i++)
		if (strcmp(w->t[i]->dir, dir) == 0)
			break;
	if (w != NULL && i < w->n) {
		t = w->t[i];
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
static void
ev_tree_put(struct gitevidence_watches *w, struct ev_tree *t, bool failed)
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

/* The whole of t's tree into the snapshots' store, every directory
 * written (the index's cache names trees only hashed). */
static int
ev_store_tree(git_oid *id, struct ev_tree *t)
{
	git_index *copy = NULL;
	int rc;

	if ((rc = evindex_copy(&copy, t->idx)) == 0)
		rc = git_index_write_tree_to(id, copy, t->repo);
	git_index_free(copy);
	return rc < 0 ? -1 : 0;
}

/*
 * t->scratch: a repository whose writes go to memory (a mempack) and
 * whose reads see the snapshots' store and the repository's objects
 * (as alternates, never written).  The two small trees of an attempt's
 * diff go there, since nothing needs them once it is counted: stored,
 * they were four loose objects a decision, each a file and a zlib
 * stream set up and torn down (docs/evidence.md#cost).
 */
static int
ev_scratch(struct ev_tree *t)
{
	git_odb *odb = NULL;
	char objects[PATH_MAX];
	int rc = 0;

	if (t->scratch != NULL)
		return 0;
	if (t->store == NULL ||
	    (size_t)snprintf(objects, sizeof(objects), "%sobjects",
		git_repository_commondir(t->repo)) >= sizeof(objects))
		return -1;
	if (git_odb_new(&odb) < 0 || git_mempack_new(&t->mempack) < 0)
		rc = -1;
	else if (git_odb_add_backend(odb, t->mempack, 1000) < 0) {
		t->mempack->free(t->mempack); /* not the odb's */
		rc = -1;
	} else if (git_odb_add_disk_alternate(odb, t->store) < 0 ||
	    git_odb_add_disk_alternate(odb, objects) < 0 ||
	    git_repository_wrap_odb(&t->scratch, odb) < 0)
		rc = -1; /* the odb frees the mempack */
	git_odb_free(odb);
	if (rc < 0)
		t->mempack = NULL;
	return rc;
}

/* t's index brought up to date with its work tree: all of it (only
 * NULL), or the paths a watch saw change, skip (or NULL) left as it
 * was.  0 or -1, the reason in libgit2's last error. */
static int
ev_update(struct ev_tree *t, const struct strlist *only, const char *skip)
{
	return only == NULL
	    ? gitwork_add_all(t->idx, t->repo, t->ex, NULL)
	    : evindex_add_paths(t->idx, t->repo, t->ex, only, skip);
}

/*
 * The two trees to diff at an attempt's end, of a kept tree.  When its
 * last snapshot was the attempt's start (ours) and the watch knows the
 * changed paths: the start's and the end's entries for those paths only,
 * two small trees in t->scratch (*in), or *in NULL when they are the
 * same.  Else the whole tree stored before (when ours: the index still
 * holds the start; else *a is the stored start to look up) and after a
 * full look.
 */
static int
ev_end_trees(git_oid *a, git_oid *b, git_repository **in, struct ev_tree *t,
    const struct strlist *only, const char *exfile, bool ours)
{
	git_index *before = NULL, *after = NULL;
	int rc;

	t->have_start = false; /* the index moves on to the end */
	*in = t->repo;
	if (ours && only != NULL) {
		rc = ev_scratch(t);
		if (rc == 0) {
			*in = t->scratch;
			rc = evindex_subset(&before, t->idx, only);
		}
		if (rc == 0)
			rc = ev_update(t, only, exfile);
		if (rc == 0)
			rc = evindex_subset(&after, t->idx, only);
		/* nothing but the story file changed (a ticker): nothing
		 * to write or diff */
		if (rc == 0 && evindex_same(before, after))
			*in = NULL;
		else if (rc == 0 &&
		    (rc = git_index_write_tree_to(a, before, *in)) == 0)
			rc = git_index_write_tree_to(b, after, *in);
		git_index_free(before);
		git_index_free(after);
		return rc < 0 ? -1 : 0;
	}
	if (ours && ev_store_tree(a, t) < 0)
		return -1;
	return ev_update(t, only, NULL) < 0 || ev_store_tree(b, t) < 0 ? -1 : 0;
}

/*
 * The snapshot of a tree that is not kept: its index brought up to
 * date, its tree written into the snapshots' store, and after a look at
 * the whole tree the snapshots' own index written back for the next
 * call, which opens the tree afresh; the repository's index file is
 * never touched.
 */
static int
ev_write_tree(git_oid *tree_id, struct ev_tree *t, const struct strlist *only,
    const char *dir, struct sc_err *err)
{
	if (ev_update(t, only, NULL) < 0 ||
	    git_index_write_tree(tree_id, t->idx) < 0)
		goto fail;
	if (only == NULL && t->own_index && git_index_write(t->idx) < 0)
		goto fail;
	return 0;
fail:
	return err_set(err, SC_EIO, "%s: cannot snapshot the work tree: %s",
	    dir, gitwork_git_msg());
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
	size_t i;

	for (i = 0; w != NULL && i < w->n; i++)
		if (strcmp(w->t[i]->dir, dir) == 0) {
			ev_watches_drop(w, i);
			return;
		}
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
	if ((rc = ev_tree_get(&t, &changed, &only, w, dir, state_dir, err)) < 0)
		goto out;
	/* what the take found is the next snapshot's, not the mark's */
	t->pending_full = only == NULL;
	for (i = 0; i < changed.n && !t->pending_full; i++)
		if (strlist_push(&t->pending, changed.items[i]) < 0)
			t->pending_full = true;
	strlist_release(&t->since);
	t->since_known = t->tw != NULL;
	ev_tree_put(w, t, false);
out:
	strlist_release(&changed);
	return rc;
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

int
gitevidence_snapshot(char *tree_hex, struct gitevidence_watches *w,
    const char *dir, const char *exclude_dir, struct sc_err *err)
{
	struct ev_tree *t = NULL;
	struct strlist changed = {0};
	const struct strlist *only;
	git_oid id;
	int rc;

	tree_hex[0] = '\0';
	if ((rc = ev_tree_get(&t, &changed, &only, w, dir, exclude_dir, err)) <
	    0)
		goto out;
	if (t->kept) {
		/* the start is the index itself: named, not written
		 * (gitevidence.h) */
		if (ev_update(t, only, NULL) < 0)
			rc = err_set(err, SC_EIO,
			    "%s: cannot snapshot the work tree: %s", dir,
			    gitwork_git_msg());
		else {
			snprintf(t->start, sizeof(t->start), "%s%lu",
			    GITEVIDENCE_WATCHED, ++t->nsnap);
			snprintf(tree_hex, GITWORK_HEXSZ, "%s", t->start);
			t->have_start = true;
		}
	} else if ((rc = ev_write_tree(&id, t, only, dir, err)) == 0)
		git_oid_tostr(tree_hex, GITWORK_HEXSZ, &id);
	ev_tree_put(w, t, rc < 0);
out:
	strlist_release(&changed);
	return rc;
}

/* One delta into out's totals and, while there is room, its list; its
 * patch into pt (NULL: none). */
static int
ev_add_delta(struct gitevidence_diff *out, struct gitevidence_patch *pt,
    git_diff *diff, size_t i, const char *path, const char *dir,
    struct sc_err *err)
{
	const git_diff_delta *d = git_diff_get_delta(diff, i);
	static const char codes[] = {[GIT_DELTA_ADDED] = 'A',
	    [GIT_DELTA_DELETED] = 'D',
	    [GIT_DELTA_MODIFIED] = 'M',
	    [GIT_DELTA_RENAMED] = 'R',
	    [GIT_DELTA_COPIED] = 'A',
	    [GIT_DELTA_TYPECHANGE] = 'T'};
	struct gitevidence_file *f = NULL;
	git_patch *patch = NULL;
	size_t adds = 0, dels = 0;
	int rc = 0;

	if (git_patch_from_diff(&patch, diff, i) < 0 ||
	    (patch != NULL &&
		git_patch_line_stats(NULL, &adds, &dels, patch) < 0)) {
		rc = err_set(err, SC_EIO, "%s: cannot diff %s: %s", dir, path,
		    gitwork_git_msg());
		goto out;
	}
	out->files_changed++;
	out->lines_added += (int)adds;
	out->lines_removed += (int)dels;
	if (pt != NULL && patch != NULL)
		evpatch_add(pt, patch);
	if (out->nlisted >= GITEVIDENCE_LIST_MAX)
		goto out;
	f = &out->listed[out->nlisted++];
	snprintf(f->path, sizeof(f->path), "%s", path);
	f->status = (size_t)d->status < sizeof(codes) && codes[d->status]
	    ? codes[d->status]
	    : 'M';
	f->binary = (d->flags & GIT_DIFF_FLAG_BINARY) != 0;
	f->added = (int)adds;
	f->removed = (int)dels;
out:
	git_patch_free(patch);
	return rc;
}

/* The deltas of diff into out (and their patches into pt, NULL: none),
 * leaving out the excluded file and dir. */
static int
ev_count(struct gitevidence_diff *out, struct gitevidence_patch *pt,
    git_diff *diff, const char *ex, const char *exfile, const char *dir,
    struct sc_err *err)
{
	size_t i, n = git_diff_num_deltas(diff);
	const git_diff_delta *d;
	const char *path;
	int rc = 0;

	for (i = 0; rc == 0 && i < n; i++) {
		d = git_diff_get_delta(diff, i);
		path = d->new_file.path != NULL ? d->new_file.path
						: d->old_file.path;
		if ((exfile[0] != '\0' &&
			(strcmp(d->new_file.path, exfile) == 0 ||
			    strcmp(d->old_file.path, exfile) == 0)) ||
		    gitwork_excluded(d->new_file.path, ex) ||
		    gitwork_excluded(d->old_file.path, ex))
			continue;
		rc = ev_add_delta(out, pt, diff, i, path, dir, err);
	}
	return rc;
}

/* The diff of tree a to tree b, renames found as git finds them. */
static int
ev_tree_diff(git_diff **out, git_repository *repo, const git_oid *a,
    const git_oid *b, const char *dir, struct sc_err *err)
{
	git_tree *ta = NULL, *tb = NULL;
	git_diff_find_options fo;
	int rc = 0;

	*out = NULL;
	if (git_tree_lookup(&ta, repo, a) < 0 ||
	    git_tree_lookup(&tb, repo, b) < 0) {
		rc = err_set(err, SC_EIO,
		    "%s: the snapshot of the attempt's start is gone: %s", dir,
		    gitwork_git_msg());
		goto out;
	}
	if (git_diff_find_options_init(&fo, GIT_DIFF_FIND_OPTIONS_VERSION) <
	    0) {
		rc = err_set(
		    err, SC_ESOFTWARE, "%s: %s", dir, gitwork_git_msg());
		goto out;
	}
	fo.flags = GIT_DIFF_FIND_RENAMES;
	if (git_diff_tree_to_tree(out, repo, ta, tb, NULL) < 0 ||
	    git_diff_find_similar(*out, &fo) < 0)
		rc = err_set(err, SC_EIO, "%s: cannot diff the work tree: %s",
		    dir, gitwork_git_msg());
out:
	git_tree_free(ta);
	git_tree_free(tb);
	return rc;
}

int
gitevidence_diff(struct gitevidence_diff *out, struct gitevidence_watches *w,
    const char *dir, const char *base_tree_hex, const char *exclude_dir,
    const char *exclude_file, struct sc_err *err)
{
	return gitevidence_diff_patch(
	    out, NULL, w, dir, base_tree_hex, exclude_dir, exclude_file, err);
}

int
gitevidence_diff_patch(struct gitevidence_diff *out,
    struct gitevidence_patch *patch, struct gitevidence_watches *w,
    const char *dir, const char *base_tree_hex, const char *exclude_dir,
    const char *exclude_file, struct sc_err *err)
{
	struct ev_tree *t = NULL;
	struct strlist changed = {0};
	const struct strlist *only;
	git_diff *diff = NULL;
	git_oid base, now;
	git_repository *in;
	char exfile[PATH_MAX];
	bool ours;
	int rc;

	memset(out, 0, sizeof(*out));
	if ((rc = ev_tree_get(&t, &changed, &only, w, dir, exclude_dir, err)) <
	    0)
		goto out;
	/* the story file is normalised like the state dir: relative to
	 * the work tree, whether given absolute or relative */
	if ((rc = gitwork_exclude(exfile, sizeof(exfile),
		 git_repository_workdir(t->repo), exclude_file, err)) < 0)
		goto out;
	in = t->repo;
	ours = t->kept && t->have_start && strcmp(t->start, base_tree_hex) == 0;
	if (!ours && git_oid_fromstr(&base, base_tree_hex) < 0) {
		rc = err_set(err, SC_ESOFTWARE, "%s: bad snapshot id \"%s\"",
		    dir, base_tree_hex);
		goto out;
	}
	if (t->kept &&
	    ev_end_trees(&base, &now, &in, t, only, exfile, ours) < 0) {
		rc = err_set(err, SC_EIO,
		    "%s: cannot snapshot the work tree: %s", dir,
		    gitwork_git_msg());
		goto out;
	}
	if (in == NULL)
		goto out; /* no change: *out stays zero */
	if ((!t->kept && (rc = ev_write_tree(&now, t, only, dir, err)) < 0) ||
	    (rc = ev_tree_diff(&diff, in, &base, &now, dir, err)) < 0)
		goto out;
	rc = ev_count(out, patch, diff, t->ex, exfile, dir, err);
out:
	git_diff_free(diff);
	if (t != NULL && t->mempack != NULL)
		git_mempack_reset(t->mempack);
	if (t != NULL)
		ev_tree_put(w, t, rc < 0);
	strlist_release(&changed);
	return rc;
}
