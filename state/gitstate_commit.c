/*
 * gitstate_commit.c - see gitstate.h and docs/state-branch.md: the
 * state branch's commits and the packing of what they wrote.
 *
 * A commit is made the way `git commit-tree` plus `git update-ref`
 * would make it: write the blobs, let git_tree_create_updated() rebuild
 * only the trees on the paths to them (sibling subtrees are reused by
 * id), write the commit object, then move the ref with a
 * compare-and-swap.  No step reads the history, so a commit costs the
 * same on the ten-thousandth decision as on the first.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include <git2.h>

#include "state/gitobjects.h"
#include "state/gitstate_int.h"

/*
 * Attempts when another writer moves or locks the branch under us.  A
 * ref lock is held for well under a millisecond and state/ may not
 * sleep, so we simply rebuild on the new tip and try again; 100 tries
 * (tens of milliseconds) outlast any live writer, and a stale lock file
 * is reported with libgit2's message naming it.
 */
#define GITSTATE_CAS_TRIES 100
/*
 * Loose objects are packed once this many have been written: about 230
 * decisions of a large batch, 400 of a small one (git gc --auto packs a
 * repository once 6700 objects are loose).  A loose object takes at
 * least one file-system block and one inode, about 40 KiB a decision;
 * packed with deltas a decision takes about 1 KiB.  Packing costs 50 to
 * 150 us an object (libgit2's delta search, deflate and index, then the
 * unlinks): a pause of 0.1 to 0.3 s every few hundred decisions, never
 * at every decision, and the same pause whatever the batch's size.
 * 1024 would lower the peak memory by about 0.6 MiB, but a page changed
 * only once in a pack is stored whole: at N=5000 (100 pages) the
 * repository grew 5.06 times as much as at N=1000, over the target of 5
 * (docs/performance.md#pack-memory).
 */
#define GS_PACK_AT 2048
#define GS_RETRY_MOVED 1
#define GS_RETRY_LOCKED 2

/* A commit being put together: blobs are written as files are added,
 * the trees, the commit and the ref move at gitstate_tx_commit(). */
struct gitstate_tx {
	struct gitstate *gs;
	int replace;
	git_tree_update *updates; /* .path owned */
	size_t n, alloc;
};

/* How many new objects make a pack: gitstate_pack_at()'s, or the
 * default. */
static size_t
gs_pack_at(const struct gitstate *gs)
{
	return gs->pack_at ? gs->pack_at : GS_PACK_AT;
}

/* Forget the objects noted since the last pack. */
void
gitstate_forget(struct gitstate *gs)
{
	size_t i;

	for (i = 0; i < gs->nfresh; i++)
		free(gs->fresh_path[i]);
	gs->nfresh = 0;
	gs->nlisted = 0;
	/* grown past two packs' worth by a large commit (the first of a
	 * large batch notes an object per story): given back, not kept
	 * resident for the rest of the batch
	 * (docs/performance.md#per-story) */
	if (gs->afresh > 2 * gs_pack_at(gs)) {
		free(gs->fresh);
		free(gs->fresh_path);
		gs->fresh = NULL;
		gs->fresh_path = NULL;
		gs->afresh = 0;
	}
}

/* message with trailing blank space trimmed and one '\n' appended. */
char *
gitstate_clean_message(const char *message)
{
	size_t n = strlen(message);
	char *m;

	while (n > 0 &&
	    (message[n - 1] == '\n' || message[n - 1] == '\r' ||
		message[n - 1] == ' ' || message[n - 1] == '\t'))
		n--;
	if ((m = malloc(n + 2)) == NULL)
		return NULL;
	memcpy(m, message, n);
	m[n] = '\n';
	m[n + 1] = '\0';
	return m;
}

/*
 * The path goes with the id because libgit2's packer tries deltas
 * between objects of the same path first (a page's successive
 * versions), which makes packing about a tenth cheaper
 * (docs/performance.md#packing-through-libgit2).
 */
int
gitstate_note(struct gitstate *gs, const git_oid *id, const char *path)
{
	char *copy = NULL;
	size_t want;
	void *p;

	if (gs->nfresh == gs->afresh) {
		want = gs->afresh ? gs->afresh * 2 : 256;
		if ((p = realloc(gs->fresh, want * sizeof(*gs->fresh))) == NULL)
			return -1;
		gs->fresh = p;
		p = realloc(gs->fresh_path, want * sizeof(*gs->fresh_path));
		if (p == NULL)
			return -1;
		gs->fresh_path = p;
		gs->afresh = want;
	}
	if (path != NULL && (copy = gitstate_strdup(path)) == NULL)
		return -1;
	gs->fresh_path[gs->nfresh] = copy;
	git_oid_cpy(&gs->fresh[gs->nfresh++], id);
	return 0;
}

/*
 * Note the trees a commit wrote: the root and every directory on the
 * updated paths (sorted, so a directory's paths are adjacent and each
 * directory is looked up once).
 */
static void
gs_note_trees(struct gitstate *gs, git_tree *root,
    const git_tree_update *updates, size_t n)
{
	git_tree_entry *e = NULL;
	const char *prev = "", *path, *slash;
	char dir[4096];
	size_t i, len;

	gitstate_note(gs, git_tree_id(root), "");
	for (i = 0; i < n; prev = updates[i++].path) {
		path = updates[i].path;
		for (slash = strchr(path, '/'); slash != NULL;
		     slash = strchr(slash + 1, '/')) {
			len = (size_t)(slash - path);
			if (strncmp(prev, path, len + 1) == 0 ||
			    len >= sizeof(dir))
				continue;
			memcpy(dir, path, len);
			dir[len] = '\0';
			if (git_tree_entry_bypath(&e, root, dir) == 0) {
				gitstate_note(gs, git_tree_entry_id(e), dir);
				git_tree_entry_free(e);
				e = NULL;
			}
		}
	}
}

void
gitstate_pack_at(struct gitstate *gs, size_t nobjects)
{
	if (gs != NULL)
		gs->pack_at = nobjects;
}

/*
 * Replace gs's repository handle with a fresh one.  Each pack the
 * handle has read keeps libgit2's cache of delta bases (up to 16 MiB a
 * pack, not configurable) for as long as the handle lives: at 5000
 * decisions that was 4 MiB of resident memory.  A handle opened after
 * the pack starts with empty caches, for one open every few hundred
 * decisions (docs/performance.md#packing-through-libgit2).
 * If it cannot be opened the old handle, whose odb was refreshed, goes
 * on.
 */
static void
gs_reopen(struct gitstate *gs)
{
	git_repository *fresh = NULL;

	if (git_repository_open_ext(
		&fresh, gs->workdir, GIT_REPOSITORY_OPEN_NO_SEARCH, NULL) < 0 ||
	    git_repository_set_ident(fresh, GITSTATE_NAME, GITSTATE_EMAIL) <
		0) {
		git_repository_free(fresh);
		return;
	}
	git_repository_free(gs->repo);
	gs->repo = fresh;
}

/*
 * Pack in n / pack_at pieces of equal size (one piece below twice
 * pack_at, so a commit that crosses the threshold makes one pack, not a
 * tiny second one): the first commit of a large batch writes a JSON
 * file per story at once (5100 objects at 5000 stories), and the
 * packbuilder's and the indexer's memory grows with the objects of one
 * pack; in pieces the peak stays under that of two ordinary packs
 * (docs/performance.md#packing-through-libgit2).
 */
int
gitstate_flush(struct gitstate *gs, struct sc_err *err)
{
	size_t at, k, most, pieces;
	int rc = 0;

	if (gs == NULL || gs->nfresh == 0)
		return 0;
	pieces = gs->nfresh / gs_pack_at(gs);
	pieces = pieces > 1 ? pieces : 1;
	most = (gs->nfresh + pieces - 1) / pieces;
	for (at = 0; rc == 0 && at < gs->nfresh; at += k) {
		k = gs->nfresh - at < most ? gs->nfresh - at : most;
		rc = gitobjects_pack(gs->repo, gs->fresh + at,
		    (const char *const *)gs->fresh_path + at, k, err);
	}
	/* packed or not, forget them and their list: a failed pack leaves
	 * them loose, readable, for git gc; trying again at once would fail
	 * again */
	gitstate_forget(gs);
	gitstate_loose_clear(gs);
	if (rc == 0)
		gs_reopen(gs);
	return rc;
}

/* "storyctl: <first line of msg>" for the reflog, into buf. */
static void
gs_reflog_message(char *buf, size_t size, const char *msg)
{
	size_t n = strcspn(msg, "\n");

	if (n > 200)
		n = 200;
	snprintf(buf, size, "storyctl: %.*s", (int)n, msg);
}

/*
 * One try: build the commit on the current tip and move the ref if the
 * tip is still the same.  Returns 0, a negative SC_E* code, or
 * GS_RETRY_MOVED / GS_RETRY_LOCKED when another writer moved or locked
 * the branch (the caller tries again).
 */
static int
gs_commit_once(struct gitstate *gs, int *out_committed,
    const git_tree_update *updates, size_t nfiles, int replace, const char *msg,
    const git_signature *sig, struct sc_err *err)
{
	git_commit *parent = NULL;
	git_tree *base = NULL, *tree = NULL;
	git_reference *ref = NULL;
	git_oid tip, tree_id, commit_id;
	const git_commit *parents[1];
	char rlmsg[256];
	int rc = 0, grc, have_tip = 0;

	if ((rc = gitstate_tip_find(gs, &tip, &have_tip, err)) < 0)
		goto out;
	if (have_tip &&
	    (git_commit_lookup(&parent, gs->repo, &tip) < 0 ||
		git_commit_tree(&base, parent) < 0)) {
		rc = gitstate_fail_tip(gs, err);
		goto out;
	}
	if (!have_tip && nfiles == 0)
		goto out; /* nothing to record, no branch to make */
	/* replace: the tree holds only the files given */
	if (git_tree_create_updated(&tree_id, gs->repo, replace ? NULL : base,
		nfiles, updates) < 0) {
		rc = gitstate_fail(gs, err);
		goto out;
	}
	if (have_tip && git_oid_equal(&tree_id, git_commit_tree_id(parent)))
		goto out; /* same state as the tip: no empty commits */
	if (git_tree_lookup(&tree, gs->repo, &tree_id) < 0) {
		rc = gitstate_fail(gs, err);
		goto out;
	}
	parents[0] = parent;
	if (git_commit_create(&commit_id, gs->repo, NULL, sig, sig, NULL, msg,
		tree, have_tip ? 1 : 0, parents) < 0) {
		rc = gitstate_fail(gs, err);
		goto out;
	}
	gs_reflog_message(rlmsg, sizeof(rlmsg), msg);
	/* Compare-and-swap under the ref's lock file.  A zero expected id
	 * means "must not exist yet", checked under the lock too: a plain
	 * git_reference_create(force=0) checks existence before locking and
	 * lets two first commits race (one is lost). */
	if (!have_tip)
		memset(&tip, 0, sizeof(tip));
	grc = git_reference_create_matching(
	    &ref, gs->repo, gs->refname, &commit_id, 1, &tip, rlmsg);
	/* EMODIFIED: tip moved; EEXISTS: someone created the branch;
	 * ENOTFOUND: someone deleted it; ELOCKED: someone holds the ref's
	 * lock file.  Build again on what is there. */
	if (grc == GIT_EMODIFIED || grc == GIT_EEXISTS ||
	    grc == GIT_ENOTFOUND) {
		rc = GS_RETRY_MOVED;
		goto out;
	}
	if (grc == GIT_ELOCKED) {
		/* let the lock holder finish (not a sleep: no clock here) */
		sched_yield();
		rc = GS_RETRY_LOCKED;
		goto out;
	}
	if (grc < 0) {
		rc = gitstate_fail(gs, err);
		goto out;
	}
	*out_committed = 1;
	gs_note_trees(gs, tree, updates, nfiles);
	gitstate_note(gs, &commit_id, NULL);
out:
	git_reference_free(ref);
	git_tree_free(tree);
	git_tree_free(base);
	git_commit_free(parent);
	return rc;
}

/*
 * The branch's ref lock file, left behind by a writer that died while
 * holding it (a controller killed inside a commit).  git holds a ref
 * lock for milliseconds, and storyctl's own state-dir lock keeps other
 * controllers out, so a lock older than a few seconds is stale: remove
 * it once (now_s is the controller's clock).  1 when one was removed.
 */
static int
gs_stale_lock(struct gitstate *gs, int64_t now_s)
{
	char path[4096];
	struct stat st;

	if (gs->stale_removed ||
	    (size_t)snprintf(path, sizeof(path), "%s%s.lock",
		git_repository_commondir(gs->repo),
		gs->refname) >= sizeof(path))
		return 0;
	if (stat(path, &st) != 0)
		return 0;
	/* made before this controller started: by a dead one (a kill
	 * inside a commit); else give a live writer a few seconds */
	if (!(gs->since_ms > 0 &&
		(int64_t)st.st_mtim.tv_sec * 1000 +
			st.st_mtim.tv_nsec / 1000000 <
		    gs->since_ms) &&
	    now_s - (int64_t)st.st_mtime < 3)
		return 0;
	gs->stale_removed = 1;
	return unlink(path) == 0;
}

void
gitstate_set_owner_since(struct gitstate *gs, int64_t since_ms)
{
	if (gs != NULL)
		gs->since_ms = since_ms;
}

int
gitstate_tx_begin(struct gitstate *gs, struct gitstate_tx **out, int replace,
    struct sc_err *err)
{
	if (out == NULL || gs == NULL)
		return err_set(
		    err, SC_ESOFTWARE, "gitstate_tx_begin: bad arguments");
	if ((*out = calloc(1, sizeof(**out))) == NULL)
		return err_set(
		    err, SC_EOS, "state branch %s: out of memory", gs->branch);
	(*out)->gs = gs;
	(*out)->replace = replace;
	/* a writer takes over what the last one left loose before its
	 * first object, so that its packs hold them too
	 * (docs/state-branch.md#carried-over) */
	if (!gs->loose_taken) {
		gs->loose_taken = 1;
		gitstate_loose_load(gs);
	}
	return 0;
}

void
gitstate_tx_free(struct gitstate_tx *tx)
{
	size_t i;

	if (tx == NULL)
		return;
	for (i = 0; i < tx->n; i++)
		free((char *)tx->updates[i].path);
	free(tx->updates);
	free(tx);
}

int
gitstate_tx_add(struct gitstate_tx *tx, const char *path, const char *data,
    size_t len, struct sc_err *err)
{
	struct gitstate *gs;
	git_tree_update *u;
	size_t want;
	void *p;

	if (tx == NULL)
		return err_set(err, SC_ESOFTWARE, "gitstate_tx_add: no commit");
	gs = tx->gs;
	if (!gitstate_path_ok(path))
		return err_set(err, SC_EDATA,
		    "state branch %s: invalid path '%s'", gs->branch,
		    path != NULL ? path : "(null)");
	if (data == NULL && len > 0)
		return err_set(err, SC_ESOFTWARE,
		    "state branch %s: no data for '%s'", gs->branch, path);
	if (tx->n == tx->alloc) {
		want = tx->alloc ? tx->alloc * 2 : 8;
		p = realloc(tx->updates, want * sizeof(*tx->updates));
		if (p == NULL)
			goto oom;
		tx->updates = p;
		tx->alloc = want;
	}
	u = &tx->updates[tx->n];
	memset(u, 0, sizeof(*u));
	u->action = GIT_TREE_UPDATE_UPSERT;
	u->filemode = GIT_FILEMODE_BLOB;
	if ((u->path = gitstate_strdup(path)) == NULL)
		goto oom;
	tx->n++;
	if (git_blob_create_from_buffer(
		&u->id, gs->repo, len > 0 ? data : "", len) < 0)
		return err_set(err, SC_EIO, "state branch %s: %s: %s",
		    gs->branch, path, gitstate_git_msg());
	gitstate_note(gs, &u->id, path);
	return 0;
oom:
	return err_set(
	    err, SC_EOS, "state branch %s: out of memory", gs->branch);
}

static int
gs_update_cmp(const void *a, const void *b)
{
	return strcmp(((const git_tree_update *)a)->path,
	    ((const git_tree_update *)b)->path);
}

int
gitstate_tx_commit(struct gitstate_tx *tx, int *out_committed,
    const char *message, int64_t now_s, struct sc_err *err)
{
	struct gitstate *gs;
	git_signature *sig = NULL;
	char *msg = NULL;
	size_t i;
	int rc = 0, tries;

	if (out_committed != NULL)
		*out_committed = 0;
	if (tx == NULL || out_committed == NULL || message == NULL)
		return err_set(
		    err, SC_ESOFTWARE, "gitstate_commit: bad arguments");
	gs = tx->gs;
	if ((msg = gitstate_clean_message(message)) == NULL) {
		rc = err_set(
		    err, SC_EOS, "state branch %s: out of memory", gs->branch);
		goto out;
	}
	if (msg[0] == '\n') {
		rc = err_set(err, SC_ESOFTWARE,
		    "state branch %s: empty commit message", gs->branch);
		goto out;
	}
	/* sorted, a path given twice is next to itself */
	if (tx->n > 1)
		qsort(tx->updates, tx->n, sizeof(*tx->updates), gs_update_cmp);
	for (i = 1; i < tx->n; i++)
		if (strcmp(tx->updates[i - 1].path, tx->updates[i].path) == 0) {
			rc = err_set(err, SC_EDATA,
			    "state branch %s: path '%s' given twice",
			    gs->branch, tx->updates[i].path);
			goto out;
		}
	if (git_signature_new(&sig, GITSTATE_NAME, GITSTATE_EMAIL,
		(git_time_t)now_s, 0) < 0) {
		rc = gitstate_fail(gs, err);
		goto out;
	}
	for (tries = 0; tries < GITSTATE_CAS_TRIES; tries++) {
		rc = gs_commit_once(gs, out_committed, tx->updates, tx->n,
		    tx->replace, msg, sig, err);
		if (rc <= 0)
			goto done;
		if (rc == GS_RETRY_LOCKED && gs_stale_lock(gs, now_s))
			tries = 0; /* removed a dead writer's lock: go again */
	}
	if (rc == GS_RETRY_LOCKED) {
		rc = err_set(err, SC_EIO,
		    "state branch %s: %s (if no other git process is "
		    "running, remove the stale lock file)",
		    gs->branch, gitstate_git_msg());
		goto out;
	}
	rc = err_set(err, SC_EIO,
	    "state branch %s: moved by another writer %d times in a row; "
	    "giving up",
	    gs->branch, GITSTATE_CAS_TRIES);
	goto out;
done:
	/* the commit is made; a failed pack only leaves objects loose, and
	 * what is not packed yet is listed for whichever writer packs next
	 * (docs/state-branch.md#carried-over) */
	if (rc == 0 && gs->nfresh >= gs_pack_at(gs)) {
		struct sc_err ignore;
		gitstate_flush(gs, &ignore);
	} else if (rc == 0)
		gitstate_loose_append(gs);
out:
	git_signature_free(sig);
	free(msg);
	return rc;
}

int
gitstate_commit(struct gitstate *gs, int *out_committed,
    const struct gitstate_file *files, size_t nfiles, const char *message,
    int64_t now_s, struct sc_err *err)
{
	struct gitstate_tx *tx = NULL;
	size_t i;
	int rc;

	if (out_committed != NULL)
		*out_committed = 0;
	if (gs == NULL || out_committed == NULL ||
	    (files == NULL && nfiles > 0) || message == NULL)
		return err_set(
		    err, SC_ESOFTWARE, "gitstate_commit: bad arguments");
	rc = gitstate_tx_begin(gs, &tx, 0, err);
	/* every path is checked before any blob is written */
	for (i = 0; rc == 0 && i < nfiles; i++)
		if (!gitstate_path_ok(files[i].path))
			rc = err_set(err, SC_EDATA,
			    "state branch %s: invalid path '%s'", gs->branch,
			    files[i].path != NULL ? files[i].path : "(null)");
	for (i = 0; rc == 0 && i < nfiles; i++)
		rc = gitstate_tx_add(
		    tx, files[i].path, files[i].data, files[i].len, err);
	if (rc == 0)
		rc = gitstate_tx_commit(tx, out_committed, message, now_s, err);
	gitstate_tx_free(tx);
	return rc;
}
