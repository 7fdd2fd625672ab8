/*
 * batch_slottree.c - the life of a slot's kept worktree under -j N
 * (docs/git-work.md#the-life-of-a-slots-worktree): taken by a story
 * (made, made ahead, switched, or a story's own taken up), parked when
 * the story is final, removed when the batch's loop ends.  What a
 * worktree is made of in git is in batch_work.c; its setup and copies
 * in batch_setup.c.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "controller/engine/batch_run_int.h"
#include "controller/engine/console.h"
#include "state/fsutil.h"
#include "state/gitevidence.h"
#include "state/gitwork.h"

/* Slot sl's kept worktree, the slots' array made on first use. */
static struct slot_tree *
slot_tree_of(struct batch *b, const struct slot *sl)
{
	if (b->trees == NULL)
		b->trees = calloc(b->nslots, sizeof(*b->trees));
	return b->trees != NULL ? &b->trees[sl - b->slots] : NULL;
}

/* Forget t: its checkout stays where it is (a story still open in it
 * takes it up again, or start-up settles it). */
static void
slot_tree_forget(struct slot_tree *t)
{
	free(t->path);
	strlist_release(&t->copied);
	memset(t, 0, sizeof(*t));
}

/* Remove t's checkout (parked: its work is committed) and forget it. */
static int
slot_tree_drop(struct batch *b, struct slot_tree *t, struct sc_err *err)
{
	int rc;

	gitevidence_watches_drop(b->evw, t->path);
	rc = gitwork_worktree_remove(b->cfg->root, t->name, err);
	if (rc == 0 && access(t->path, F_OK) == 0)
		fsutil_rm_tree(t->path);
	slot_tree_forget(t);
	return rc;
}

/* A setup is due in t after it was made ("create") or switched. */
static void
slot_tree_due(struct batch *b, struct slot_tree *t, const char *why)
{
	const struct worktree_conf *w = &b->cfg->worktree;

	t->why = why;
	t->setup_due = w->setup.n > 0 &&
	    (strcmp(why, "switch") == 0 ? w->setup_on_switch
					: w->setup_on_create);
}

/* Switch t, parked, to story branch and move it to path: only the
 * files that differ are written, nothing uncommitted of the story
 * before stays (docs/git-work.md#switching); what the evidence watch
 * saw change since the tree was last clean says which files need a
 * look (docs/git-work.md#what-a-switch-looks-at). */
static int
slot_tree_switch(struct batch *b, struct slot_tree *t, const char *path,
    const char *branch, const char *base, struct sc_err *err)
{
	char hex[GITWORK_HEXSZ], ref[256];
	struct strlist dirty = {0};
	struct sc_err e2;
	bool known = false;
	char *np = NULL;
	int rc = 0;

	/* "HEAD" is the main tree's, not the slot's previous story's */
	if (strcmp(base, "HEAD") == 0 &&
	    (rc = gitwork_head(hex, ref, sizeof(ref), b->cfg->root, err)) ==
		0 &&
	    hex[0] == '\0')
		rc = err_set(
		    err, SC_EDATA, "%s: HEAD has no commit yet", b->cfg->root);
	if (rc == 0)
		rc = gitevidence_changed(&dirty, &known, b->evw, t->path, err);
	if (rc == 0)
		rc = gitwork_worktree_switch(t->path, branch,
		    strcmp(base, "HEAD") == 0 ? hex : base,
		    known ? &dirty : NULL, err);
	if (rc == 0)
		rc = gitwork_worktree_move(b->cfg->root, t->name, path, err);
	if (rc == 0 && (np = strdup(path)) == NULL)
		rc = err_set(err, SC_EOS, "out of memory");
	if (rc == 0) {
		/* the watch follows; should it not, the next look is
		 * whole (slower, never wrong) */
		if (gitevidence_watches_move(b->evw, t->path, path, &e2) < 0 ||
		    gitevidence_mark(b->evw, path, b->cfg->state_dir, &e2) < 0)
			gitevidence_watches_drop(b->evw, path);
		free(t->path);
		t->path = np;
		t->parked = false;
	}
	strlist_release(&dirty);
	return rc;
}

/*
 * Slot sl's kept worktree for its story, at sl->worktree: one a dead
 * controller left there for this story is taken up; else the slot's
 * parked one is switched to the story; else one is made
 * (docs/git-work.md#the-life-of-a-slots-worktree).
 */
int
batch_slot_tree_take(struct batch *b, struct slot *sl, const char *branch,
    const char *base, size_t want, struct sc_err *err)
{
	struct slot_tree *t = slot_tree_of(b, sl);
	struct batch_premake *pm = NULL;
	struct stat sb;
	struct sc_err e2;
	int rc = 0;

	if (t == NULL)
		return err_set(err, SC_EOS, "out of memory");
	if (t->path != NULL && !t->parked && strcmp(t->path, sl->worktree) == 0)
		goto out; /* the story it holds, back in its slot */
	if (t->path != NULL && !t->parked)
		slot_tree_forget(t); /* a story still open works there */
	if (stat(sl->worktree, &sb) == 0) {
		/* the story's own, left by an earlier run */
		if (t->path != NULL)
			rc = slot_tree_drop(b, t, err);
		if (rc == 0 &&
		    gitwork_worktree_name_at(
			t->name, sizeof(t->name), sl->worktree, &e2) < 0)
			snprintf(t->name, sizeof(t->name), "%s", sl->st->id);
		if (rc == 0)
			rc = batch_worktree_add_at(
			    b, t->name, sl->worktree, branch, base, err);
		slot_tree_due(b, t, "create");
		goto out;
	}
	if (t->path != NULL) {
		rc = slot_tree_switch(b, t, sl->worktree, branch, base, err);
		if (rc == 0) {
			slot_tree_due(b, t, t->fresh ? "create" : "switch");
			t->fresh = false;
			goto out;
		}
		console_line(b,
		    "%s: cannot switch the slot's worktree (%s); "
		    "making a new one",
		    sl->st->id, err->msg);
		err_clear(err);
		if ((rc = slot_tree_drop(b, t, err)) < 0)
			goto out;
	}
	/* unique per controller: a dead one's slot names may still be in
	 * use by the worktrees of stories it left open; a leading '_' is
	 * no story id's (config_id_valid) and no option to git */
	snprintf(t->name, sizeof(t->name), "_slot%zu-%lld",
	    (size_t)(sl - b->slots) + 1, (long long)b->started_ms);
	/* the batch's first: the other slots' are made meanwhile
	 * (docs/git-work.md#made-ahead) */
	if (!b->trees_premade) {
		b->trees_premade = true;
		if (batch_premake_start(&pm, b, sl, want, &e2) < 0)
			console_line(b,
			    "cannot make the slots' worktrees ahead: %s",
			    e2.msg);
	}
	rc = batch_worktree_add_at(b, t->name, sl->worktree, branch, base, err);
	batch_premake_join(pm, b);
	/* new and clean: what changes in it is counted from here
	 * (docs/git-work.md#what-a-switch-looks-at) */
	if (rc == 0 &&
	    gitevidence_mark(b->evw, sl->worktree, b->cfg->state_dir, &e2) < 0)
		gitevidence_watches_drop(b->evw, sl->worktree);
	slot_tree_due(b, t, "create");
out:
	if (rc == 0 && t->path == NULL &&
	    (t->path = strdup(sl->worktree)) == NULL)
		rc = err_set(err, SC_EOS, "out of memory");
	t->parked = false;
	if (rc == 0)
		rc = batch_tree_copy(b, sl, err);
	return rc;
}

/* A worktree.copy file that git no longer ignores in the tree (the
 * story changed .gitignore) is taken out before the work commit: a
 * copy never reaches one (docs/git-work.md#copied-files). */
static void
slot_tree_uncopy(struct batch *b, struct slot_tree *t, const char *id)
{
	struct sc_err e2;
	char *p;
	size_t i;
	int ign;

	for (i = 0; i < t->copied.n; i++) {
		if (gitwork_path_ignored(
			&ign, t->path, t->copied.items[i], &e2) == 0 &&
		    ign)
			continue;
		if ((p = fsutil_path_join(t->path, t->copied.items[i])) == NULL)
			continue;
		if (unlink(p) == 0)
			console_line(b,
			    "%s: %s is no longer ignored: the copy is taken "
			    "out before the commit",
			    id, t->copied.items[i]);
		free(p);
	}
}

/* Slot sl's story is final: its work is committed on its branch and
 * its worktree waits, as <wtdir>/.slot-<k>, for the slot's next story. */
int
batch_slot_tree_park(struct batch *b, struct slot *sl, struct sc_err *err)
{
	struct slot_tree *t = slot_tree_of(b, sl);
	struct strlist changed = {0};
	struct sc_err e2;
	char dot[32], *parked = NULL;
	int valid = 0, committed = 0;
	bool known = false;
	int rc;

	if (t == NULL || t->path == NULL ||
	    strcmp(t->path, sl->worktree) != 0) {
		rc = batch_worktree_settle(b, sl->st, sl->worktree, err);
		goto out;
	}
	slot_tree_uncopy(b, t, sl->st->id);
	/* the paths changed since the tree was last clean, when the watch
	 * knows them: the commit stages those
	 * (docs/git-work.md#what-a-switch-looks-at) */
	rc = gitevidence_changed(&changed, &known, b->evw, t->path, err);
	if (rc == 0)
		rc = batch_worktree_commit(&valid, &committed, b, sl->st,
		    t->path, t->name, known ? &changed : NULL, err);
	if (rc < 0 || !valid)
		gitevidence_watches_drop(b->evw, t->path);
	if (rc == 0 && !valid) {
		/* a checkout git cannot open: settled as half-made */
		slot_tree_forget(t);
		rc = batch_worktree_settle(b, sl->st, sl->worktree, err);
		goto out;
	}
	snprintf(dot, sizeof(dot), ".slot-%zu", (size_t)(sl - b->slots) + 1);
	if (rc == 0 && (parked = fsutil_path_join(b->wtdir, dot)) == NULL)
		rc = err_set(err, SC_EOS, "out of memory");
	/* a parked tree of a controller that died is removed at start-up;
	 * one still here is ours and committed */
	if (rc == 0 && access(parked, F_OK) == 0)
		fsutil_rm_tree(parked);
	if (rc == 0)
		rc = gitwork_worktree_move(b->cfg->root, t->name, parked, err);
	if (rc == 0 &&
	    gitevidence_watches_move(b->evw, t->path, parked, &e2) < 0)
		gitevidence_watches_drop(b->evw, parked);
	if (rc == 0) {
		free(t->path);
		t->path = parked;
		parked = NULL;
		t->parked = true;
		console_line(b, "%s: work %s on branch storyctl/story/%s",
		    sl->st->id, committed ? "committed" : "(no changes)",
		    sl->st->id);
	}
out:
	strlist_release(&changed);
	free(parked);
	return rc;
}

void
batch_trees_close(struct batch *b)
{
	struct sc_err e2;
	size_t i;

	for (i = 0; b->trees != NULL && i < b->nslots; i++) {
		if (b->trees[i].path != NULL && b->trees[i].parked &&
		    slot_tree_drop(b, &b->trees[i], &e2) < 0)
			console_line(
			    b, "cannot remove a slot's worktree: %s", e2.msg);
		slot_tree_forget(&b->trees[i]);
	}
	free(b->trees);
	b->trees = NULL;
}
