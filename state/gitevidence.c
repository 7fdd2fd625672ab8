/*
 * gitevidence.c - an attempt's change in its work tree: snapshots of the
 * tree and the diff between two of them (docs/evidence.md).  See
 * gitevidence.h; the trees a batch keeps are in gitevidence_tree.c.
 */
#include <stdint.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <git2.h>
#include <git2/sys/mempack.h>
#include <git2/sys/odb_backend.h>
#include <git2/sys/repository.h>

#include "state/gitevidence.h"
#include "state/gitevidence_int.h"
#include "state/gitwork_int.h"

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
gitevidence_snapshot(char *tree_hex, struct gitevidence_watches *w,
    const char *dir, const char *exclude_dir, struct sc_err *err)
{
	struct ev_tree *t = NULL;
	struct strlist changed = {0};
	const struct strlist *only;
	git_oid id;
	int rc;

	tree_hex[0] = '\0';
	if ((rc = evtree_get(&t, &changed, &only, w, dir, exclude_dir, err)) <
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
	evtree_put(w, t, rc < 0);
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
	if ((rc = evtree_get(&t, &changed, &only, w, dir, exclude_dir, err)) <
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
		evtree_put(w, t, rc < 0);
	strlist_release(&changed);
	return rc;
}
