/*
 * gitsandbox_collect.c - see gitsandbox.h and docs/sandbox.md#git:
 * taking a confined agent's branch back from its private git dir P.
 *
 * This is the one place P is read, and the agent had it to itself:
 * before libgit2 opens it, the few files that steer libgit2 itself
 * (HEAD, config, commondir) are put back as they must be, and what it
 * reads of the agent's (the branch's ref file, packed-refs, objects/)
 * must be plain files and directories.  Then every object taken is
 * read through libgit2, which checks its hash.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <git2.h>
#include <git2/sys/odb_backend.h>

#include "state/fsutil.h"
#include "state/gitlib.h"
#include "state/gitsandbox.h"
#include "state/gitwork.h"
#include "state/gitwork_int.h"

#include "state/gitobjects.h"
#include "state/gitsandbox_int.h"

/* Remove whatever P (pfd) has at name: a file, a link or a tree. */
static int
gs_remove_at(int pfd, const char *pdir, const char *name, struct sc_err *err)
{
	char path[PATH_MAX];
	struct stat st;
	int rc = 0;

	if (unlinkat(pfd, name, 0) == 0 || errno == ENOENT)
		goto out;
	if ((rc = gs_path(path, pdir, name, err)) < 0)
		goto out;
	fsutil_rm_tree(path);
	if (fstatat(pfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0)
		rc = err_set(err, SC_EIO, "%s: cannot remove", path);
out:
	return rc;
}

/* P/name must be a real directory; made when missing. */
static int
gs_need_dir(int pfd, const char *pdir, const char *name, struct sc_err *err)
{
	struct stat st;
	int rc = 0;

	if (fstatat(pfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0) {
		if (!S_ISDIR(st.st_mode))
			rc = err_set(err, SC_EDATA, "%s/%s: not a directory",
			    pdir, name);
	} else if (errno != ENOENT || mkdirat(pfd, name, 0755) != 0) {
		rc = err_set(
		    err, SC_EIO, "%s/%s: %s", pdir, name, strerror(errno));
	}
	return rc;
}

/*
 * Every existing part of the path rel below P must be a regular file or
 * a real directory: libgit2 is about to open it, and a FIFO would block
 * the controller, a symbolic link read something outside P.
 */
static int
gs_plain_path(int pfd, const char *pdir, const char *rel, struct sc_err *err)
{
	char buf[PATH_MAX];
	struct stat st;
	size_t i, n = strlen(rel);
	int rc = 0;

	if (n >= sizeof(buf)) {
		rc = err_set(err, SC_EDATA, "%s/%s: path too long", pdir, rel);
		goto out;
	}
	memcpy(buf, rel, n + 1);
	for (i = 0; i <= n; i++) {
		if (rel[i] != '/' && rel[i] != '\0')
			continue;
		buf[i] = '\0';
		if (fstatat(pfd, buf, &st, AT_SYMLINK_NOFOLLOW) != 0) {
			if (errno != ENOENT && errno != ENOTDIR)
				rc = err_set(err, SC_EIO, "%s/%s: %s", pdir,
				    buf, strerror(errno));
			goto out;
		}
		if (S_ISREG(st.st_mode))
			goto out; /* nothing can be below a file */
		if (!S_ISDIR(st.st_mode)) {
			rc = err_set(err, SC_EDATA,
			    "%s/%s: not a regular file or directory", pdir,
			    buf);
			goto out;
		}
		buf[i] = rel[i];
	}
out:
	return rc;
}

/*
 * Make P safe for libgit2 to open and read the branch from (see the top
 * of this file): HEAD, config and commondir as collect needs them, and
 * nothing but regular files and directories where libgit2 will read.
 */
static int
gs_tame(const struct gitsandbox *gs, struct sc_err *err)
{
	const char *pdir = gs->private_dir;
	struct gs_walk *w = NULL;
	char head[GITWORK_REFMAX + 8];
	int pfd, ofd, rc = 0;

	pfd = open(pdir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (pfd < 0) {
		rc = err_set(
		    err, SC_EIO, "%s: cannot open: %s", pdir, strerror(errno));
		goto out;
	}
	if ((size_t)snprintf(head, sizeof(head), "ref: %s\n", gs->branch) >=
	    sizeof(head)) {
		rc = err_set(err, SC_EDATA, "%s: name too long", gs->branch);
		goto out;
	}
	if ((rc = gs_remove_at(pfd, pdir, "commondir", err)) < 0 ||
	    (rc = gs_remove_at(pfd, pdir, "HEAD", err)) < 0 ||
	    (rc = gs_write_at(pfd, pdir, "HEAD", head, err)) < 0 ||
	    (rc = gs_remove_at(pfd, pdir, "config", err)) < 0 ||
	    (rc = gs_write_at(pfd, pdir, "config", GS_CONFIG, err)) < 0 ||
	    (rc = gs_need_dir(pfd, pdir, "refs", err)) < 0 ||
	    (rc = gs_need_dir(pfd, pdir, "objects", err)) < 0 ||
	    (rc = gs_plain_path(pfd, pdir, "packed-refs", err)) < 0 ||
	    (rc = gs_plain_path(pfd, pdir, gs->branch, err)) < 0)
		goto out;
	if ((w = calloc(1, sizeof(*w))) == NULL) {
		rc = err_set(err, SC_EOS, "%s: out of memory", pdir);
		goto out;
	}
	w->dst[0] = '\0';
	if ((rc = gs_path(w->src, pdir, "objects", err)) < 0)
		goto out;
	ofd = openat(
	    pfd, "objects", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (ofd < 0) {
		rc = err_set(err, SC_EIO, "%s: cannot open: %s", w->src,
		    strerror(errno));
		goto out;
	}
	rc = gs_walk_dir(w, ofd, -1, err);
out:
	free(w);
	if (pfd >= 0)
		close(pfd);
	return rc;
}

/* The branch's tip in P into *tip; *found false when P has no such
 * branch (the agent deleted it). */
static int
gs_read_tip(
    git_oid *tip, bool *found, const struct gitsandbox *gs, struct sc_err *err)
{
	git_repository *prepo = NULL;
	int rc = 0, grc;

	*found = false;
	/* bare: P's work tree is no business of libgit2's here */
	if (git_repository_open_ext(&prepo, gs->private_dir,
		GIT_REPOSITORY_OPEN_NO_SEARCH | GIT_REPOSITORY_OPEN_BARE,
		NULL) < 0) {
		rc = err_set(err, SC_EDATA, "%s: cannot open: %s",
		    gs->private_dir, gitwork_git_msg());
		goto out;
	}
	grc = git_reference_name_to_id(tip, prepo, gs->branch);
	if (grc == GIT_ENOTFOUND)
		goto out;
	if (grc < 0) {
		rc = err_set(err, SC_EDATA, "%s: branch %s: %s",
		    gs->private_dir, gs->branch, gitwork_git_msg());
		goto out;
	}
	*found = true;
out:
	git_repository_free(prepo);
	return rc;
}

/*
 * The real repository must still be where P was made from: the same git
 * dir, HEAD naming the branch, the branch at start_oid (or absent when
 * it was unborn).  Anything else means someone moved it meanwhile, and
 * moving it again would lose their change.
 */
static int
gs_check_real(git_repository *repo, const struct gitsandbox *gs,
    const char *tree, struct sc_err *err)
{
	git_reference *head = NULL;
	char hex[GIT_OID_HEXSZ + 1] = "";
	git_oid cur;
	size_t n = strlen(gs->gitdir);
	int rc = 0, grc;

	if (strncmp(git_repository_path(repo), gs->gitdir, n) != 0 ||
	    strspn(git_repository_path(repo) + n, "/") !=
		strlen(git_repository_path(repo) + n)) {
		rc = err_set(err, SC_EDATA,
		    "%s: not the tree the sandbox was made for (%s)", tree,
		    gs->gitdir);
		goto out;
	}
	if (git_reference_lookup(&head, repo, "HEAD") < 0) {
		rc = err_set(err, SC_EIO, "%s: cannot read HEAD: %s", tree,
		    gitwork_git_msg());
		goto out;
	}
	if (git_reference_type(head) != GIT_REFERENCE_SYMBOLIC ||
	    strcmp(git_reference_symbolic_target(head), gs->branch) != 0) {
		rc = err_set(err, SC_EDATA,
		    "%s: HEAD no longer names branch %s", tree, gs->branch);
		goto out;
	}
	grc = git_reference_name_to_id(&cur, repo, gs->branch);
	if (grc < 0 && grc != GIT_ENOTFOUND) {
		rc = err_set(err, SC_EIO, "%s: branch %s: %s", tree, gs->branch,
		    gitwork_git_msg());
		goto out;
	}
	if (grc == 0)
		git_oid_tostr(hex, sizeof(hex), &cur);
	if (strcmp(hex, gs->start_oid) != 0)
		rc = err_set(err, SC_EDATA,
		    "%s: branch %s: moved from %s to %s while the agent ran",
		    tree, gs->branch,
		    gs->start_oid[0] != '\0' ? gs->start_oid : "nothing",
		    hex[0] != '\0' ? hex : "nothing");
out:
	git_reference_free(head);
	return rc;
}

/*
 * Let odb read P's objects (objdir): a loose and a pack backend on it,
 * added as alternates (never written to) below the real ones.  Not
 * P's own alternates file: the agent could have pointed it anywhere.
 */
static int
gs_add_objects(git_odb *odb, const char *objdir, struct sc_err *err)
{
	git_odb_backend *loose = NULL, *pack = NULL;
	int rc = 0;

	if (git_odb_backend_loose(&loose, objdir, -1, 0, 0, 0) < 0 ||
	    git_odb_add_alternate(odb, loose, GS_ODB_PRIORITY) < 0) {
		rc = err_set(err, SC_EIO, "%s: %s", objdir, gitwork_git_msg());
		goto out;
	}
	loose = NULL; /* the odb's now */
	if (git_odb_backend_pack(&pack, objdir) < 0 ||
	    git_odb_add_alternate(odb, pack, GS_ODB_PRIORITY) < 0) {
		rc = err_set(err, SC_EIO, "%s: %s", objdir, gitwork_git_msg());
		goto out;
	}
	pack = NULL;
out:
	if (pack != NULL)
		pack->free(pack);
	if (loose != NULL)
		loose->free(loose);
	return rc;
}

/*
 * The code for libgit2's failure grc while the agent's objects were
 * read: SC_EDATA when an object was missing, would not parse or failed
 * its hash check (what the agent wrote), SC_EIO for the rest (the disk,
 * memory).
 */
static int
gs_read_code(int grc)
{
	const git_error *e = git_error_last();
	bool data = grc == GIT_EMISMATCH || grc == GIT_ENOTFOUND ||
	    (e != NULL &&
		(e->klass == GIT_ERROR_ODB || e->klass == GIT_ERROR_ZLIB ||
		    e->klass == GIT_ERROR_OBJECT ||
		    e->klass == GIT_ERROR_TREE));

	return data ? SC_EDATA : SC_EIO;
}

/* What taking one tip back works on. */
struct gs_take {
	git_repository *repo;
	const struct gitsandbox *gs;
	const char *tree;
	const git_oid *tip;
	char hex[GIT_OID_HEXSZ + 1]; /* tip's */
	char objdir[PATH_MAX]; /* P/objects */
};

/* A growing array of object ids. */
struct gs_oids {
	git_oid *id;
	size_t n, cap;
};

/* Append id to the gs_oids payload (a git_odb_foreach() callback too);
 * -1 when out of memory. */
static int
gs_oids_add(const git_oid *id, void *payload)
{
	struct gs_oids *a = payload;
	git_oid *grown;
	size_t cap;
	int rc = 0;

	if (a->n == a->cap) {
		cap = a->cap > 0 ? a->cap * 2 : 64;
		grown = realloc(a->id, cap * sizeof(*grown));
		if (grown == NULL) {
			rc = -1;
			goto out;
		}
		a->id = grown;
		a->cap = cap;
	}
	git_oid_cpy(&a->id[a->n++], id);
out:
	return rc;
}

static int
gs_oid_cmp(const void *a, const void *b)
{
	return git_oid_cmp(a, b);
}

/* Fail with libgit2's grc while reading the agent's objects. */
static int
gs_take_fail(const struct gs_take *t, int grc, struct sc_err *err)
{
	return err_set(err, gs_read_code(grc),
	    "%s: branch %s: cannot take %s from the sandbox: %s", t->tree,
	    t->gs->branch, t->hex, gitwork_git_msg());
}

/*
 * Read every commit of the agent's between the tip and the real
 * history (a commit in P reachable from the tip through commits in P),
 * through libgit2's hash check, and see that each parent outside P is
 * in the real object store.  The walk that packs them would fail on a
 * bad one too, but libgit2's limited revwalk then leaks what it had
 * queued; and here the message names the commit.
 */
static int
gs_check_commits(const struct gs_take *t, struct sc_err *err)
{
	struct gs_oids in_p = {NULL, 0, 0}, todo = {NULL, 0, 0};
	git_odb *podb = NULL, *odb = NULL;
	git_commit *c = NULL;
	const git_oid *hit;
	char hex[GIT_OID_HEXSZ + 1];
	bool *seen = NULL;
	git_oid id;
	size_t i;
	int rc = 0, grc;

	/* what P holds, sorted: the commits to read and a mark each */
	if (git_odb_new(&podb) < 0) {
		rc = err_set(
		    err, SC_EIO, "%s: %s", t->objdir, gitwork_git_msg());
		goto out;
	}
	if ((rc = gs_add_objects(podb, t->objdir, err)) < 0)
		goto out;
	if ((grc = git_odb_foreach(podb, gs_oids_add, &in_p)) < 0) {
		rc = gs_take_fail(t, grc, err);
		goto out;
	}
	if (in_p.n > 0)
		qsort(in_p.id, in_p.n, sizeof(*in_p.id), gs_oid_cmp);
	if ((seen = calloc(in_p.n + 1, sizeof(*seen))) == NULL ||
	    gs_oids_add(t->tip, &todo) < 0) {
		rc = err_set(err, SC_EOS, "%s: out of memory", t->tree);
		goto out;
	}
	if (git_repository_odb(&odb, t->repo) < 0) {
		rc = err_set(err, SC_EIO, "%s: %s", t->tree, gitwork_git_msg());
		goto out;
	}
	while (todo.n > 0) {
		git_oid_cpy(&id, &todo.id[--todo.n]);
		hit = in_p.n > 0 ? bsearch(&id, in_p.id, in_p.n,
				       sizeof(*in_p.id), gs_oid_cmp)
				 : NULL;
		if (hit == NULL) {
			/* the real history: trusted, and where this stops */
			if (git_odb_exists(odb, &id) != 1) {
				rc = err_set(err, SC_EDATA,
				    "%s: branch %s: cannot take %s from the "
				    "sandbox: commit %s not found",
				    t->tree, t->gs->branch, t->hex,
				    git_oid_tostr(hex, sizeof(hex), &id));
				goto out;
			}
			continue;
		}
		if (seen[hit - in_p.id])
			continue;
		seen[hit - in_p.id] = true;
		if ((grc = git_commit_lookup(&c, t->repo, &id)) < 0) {
			rc = gs_take_fail(t, grc, err);
			goto out;
		}
		for (i = 0; i < git_commit_parentcount(c); i++)
			if (gs_oids_add(git_commit_parent_id(c, i), &todo) <
			    0) {
				rc = err_set(
				    err, SC_EOS, "%s: out of memory", t->tree);
				goto out;
			}
		git_commit_free(c);
		c = NULL;
	}
out:
	git_commit_free(c);
	git_odb_free(odb);
	git_odb_free(podb);
	free(seen);
	free(todo.id);
	free(in_p.id);
	return rc;
}

/*
 * Write the objects reachable from the tip and not from the old tip into
 * the real object store as one synced pack.  The walk reads every
 * commit and tree, the pack every object it holds, each through
 * libgit2's hash check; a failure writes nothing.
 */
static int
gs_pack(const struct gs_take *t, struct sc_err *err)
{
	git_revwalk *walk = NULL;
	git_packbuilder *pb = NULL;
	git_oid old;
	char packdir[PATH_MAX];
	int rc = 0, grc;

	if ((grc = git_revwalk_new(&walk, t->repo)) < 0 ||
	    (grc = git_revwalk_push(walk, t->tip)) < 0 ||
	    (t->gs->start_oid[0] != '\0' &&
		((grc = git_oid_fromstr(&old, t->gs->start_oid)) < 0 ||
		    (grc = git_revwalk_hide(walk, &old)) < 0)) ||
	    (grc = git_packbuilder_new(&pb, t->repo)) < 0) {
		rc = gs_take_fail(t, grc, err);
		goto out;
	}
	/* one thread: the controller's, agents run beside it */
	git_packbuilder_set_threads(pb, 1);
	if ((grc = git_packbuilder_insert_walk(pb, walk)) < 0) {
		rc = gs_take_fail(t, grc, err);
		goto out;
	}
	/* none: the branch went back to a commit the old tip reaches */
	if (git_packbuilder_object_count(pb) == 0)
		goto out;
	if ((size_t)snprintf(packdir, sizeof(packdir), "%sobjects/pack",
		git_repository_commondir(t->repo)) >= sizeof(packdir)) {
		rc = err_set(err, SC_EIO, "%sobjects/pack: path too long",
		    git_repository_commondir(t->repo));
		goto out;
	}
	if (mkdir(packdir, 0755) != 0 && errno != EEXIST) {
		rc = err_set(err, SC_EIO, "%s: cannot create: %s", packdir,
		    strerror(errno));
		goto out;
	}
	if ((grc = git_packbuilder_write(
		 pb, packdir, GS_PACK_MODE, NULL, NULL)) < 0) {
		rc = gs_take_fail(t, grc, err);
		goto out;
	}
	rc = gitobjects_sync_pack(packdir, git_packbuilder_name(pb), err);
out:
	git_packbuilder_free(pb);
	git_revwalk_free(walk);
	return rc;
}

/* Take the tip back into t->repo: pack, then move the branch and the
 * index (git reset --mixed: HEAD names the branch, files untouched). */
static int
gs_take(const struct gs_take *t, struct sc_err *err)
{
	git_object *obj = NULL;
	git_odb *odb = NULL;
	int rc = 0, grc;

	if (git_repository_odb(&odb, t->repo) < 0) {
		rc = err_set(err, SC_EIO, "%s: %s", t->tree, gitwork_git_msg());
		goto out;
	}
	if ((rc = gs_add_objects(odb, t->objdir, err)) < 0)
		goto out;
	if ((grc = git_object_lookup(&obj, t->repo, t->tip, GIT_OBJECT_ANY)) <
	    0) {
		rc = gs_take_fail(t, grc, err);
		goto out;
	}
	if (git_object_type(obj) != GIT_OBJECT_COMMIT) {
		rc = err_set(err, SC_EDATA,
		    "%s: branch %s: %s in the sandbox is a %s, not a commit",
		    t->tree, t->gs->branch, t->hex,
		    git_object_type2string(git_object_type(obj)));
		goto out;
	}
	if ((rc = gs_check_commits(t, err)) < 0 || (rc = gs_pack(t, err)) < 0)
		goto out;
	if (git_reset(t->repo, obj, GIT_RESET_MIXED, NULL) < 0)
		rc =
		    err_set(err, SC_EIO, "%s: branch %s: cannot move to %s: %s",
			t->tree, t->gs->branch, t->hex, gitwork_git_msg());
out:
	git_object_free(obj);
	git_odb_free(odb);
	return rc;
}

int
gitsandbox_collect(bool *moved, char *new_oid, const struct gitsandbox *gs,
    const char *tree, struct sc_err *err)
{
	struct gs_take t;
	git_oid tip;
	bool found = false;
	int rc = 0;

	memset(&t, 0, sizeof(t));
	if (moved != NULL)
		*moved = false;
	if (new_oid != NULL)
		new_oid[0] = '\0';
	if (moved == NULL || gs == NULL || tree == NULL ||
	    gs->private_dir == NULL || gs->gitdir == NULL) {
		rc = err_set(
		    err, SC_ESOFTWARE, "gitsandbox_collect: bad arguments");
		goto out;
	}
	if (gs->branch == NULL)
		goto out; /* detached: no branch to take */
	if ((rc = gs_tame(gs, err)) < 0 ||
	    (rc = gitwork_open(&t.repo, tree, err)) < 0 ||
	    (rc = gs_read_tip(&tip, &found, gs, err)) < 0)
		goto out;
	if (!found)
		goto out; /* deleted in P: the real one stays */
	git_oid_tostr(t.hex, sizeof(t.hex), &tip);
	if (strcmp(t.hex, gs->start_oid) == 0)
		goto out;
	if ((rc = gs_check_real(t.repo, gs, tree, err)) < 0)
		goto out;
	t.gs = gs;
	t.tree = tree;
	t.tip = &tip;
	if ((rc = gs_path(t.objdir, gs->private_dir, "objects", err)) < 0)
		goto out;
	if ((rc = gs_take(&t, err)) < 0)
		goto out;
	*moved = true;
	if (new_oid != NULL)
		memcpy(new_oid, t.hex, sizeof(t.hex));
out:
	gitwork_close(t.repo);
	return rc;
}
