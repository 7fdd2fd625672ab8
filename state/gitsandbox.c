/*
 * gitsandbox.c - see gitsandbox.h and docs/sandbox.md#git: the private
 * git directory P a confined agent works in.
 *
 * Making P copies bytes and never parses them: HEAD, the index, config
 * and the refs are files git reads the same way whichever directory
 * holds them.  The copy costs a file created for every loose ref, and
 * nothing else grows with the repository but the index's bytes; it runs
 * before every attempt (docs/sandbox.md#git has the figures).
 * Everything of the common directory the agent must see but not change
 * is a symbolic link to the read-only view the sandbox mounts at SHOWN.
 * Taking the branch back is gitsandbox_collect.c's.
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

#include "state/gitsandbox_int.h"

static void
gs_free(struct gitsandbox *gs)
{
	free(gs->gitdir);
	free(gs->commondir);
	free(gs->private_dir);
	free(gs->branch);
	memset(gs, 0, sizeof(*gs));
}

void
gitsandbox_release(struct gitsandbox *gs)
{
	if (gs == NULL)
		return;
	if (gs->private_dir != NULL)
		fsutil_rm_tree(gs->private_dir);
	gs_free(gs);
}

/* A git lock file ("index.lock", "refs/heads/x.lock"): a stale one
 * copied into P would fail the agent's own update of that file. */
static bool
gs_is_lock(const char *name)
{
	size_t n = strlen(name);

	return n >= 5 && strcmp(name + n - 5, ".lock") == 0;
}

/*
 * Per-worktree state git keeps at the top of a git dir: the pseudo-refs
 * and messages (ORIG_HEAD, MERGE_HEAD, MERGE_MSG, BISECT_LOG, ...: all
 * capitals, as git names them) and the directories of an operation in
 * progress.  In a linked worktree the common dir's are the main tree's:
 * shown to the agent, its `git commit` would finish the main tree's
 * merge.
 */
static bool
gs_per_worktree(const char *name)
{
	static const char *const dirs[] = {
	    "rebase-merge", "rebase-apply", "sequencer"};
	const char *c;
	size_t i;

	for (i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++)
		if (strcmp(name, dirs[i]) == 0)
			return true;
	for (c = name; *c != '\0'; c++)
		if (!((*c >= 'A' && *c <= 'Z') || *c == '_'))
			return false;
	return true;
}

/* Whether the common dir's top-level entry name is left out of P's
 * links: copied or made new there, or nothing the agent may see. */
static bool
gs_unlinked(const char *name, bool linked_worktree)
{
	static const char *const own[] = {".", "..", "objects", "refs",
	    "worktrees", "logs", "HEAD", "index", "config", "packed-refs",
	    "shallow"};
	size_t i;

	for (i = 0; i < sizeof(own) / sizeof(own[0]); i++)
		if (strcmp(name, own[i]) == 0)
			return true;
	return gs_is_lock(name) || (linked_worktree && gs_per_worktree(name));
}

/* dir + "/" + name into buf (PATH_MAX bytes). */
int
gs_path(char *buf, const char *dir, const char *name, struct sc_err *err)
{
	if ((size_t)snprintf(buf, PATH_MAX, "%s/%s", dir, name) >= PATH_MAX)
		return err_set(err, SC_EIO, "%s/%s: path too long", dir, name);
	return 0;
}

/* Write all n bytes of buf to fd; -1 with errno set. */
static int
gs_write_all(int fd, const char *buf, size_t n)
{
	ssize_t k;
	int rc = 0;

	while (n > 0 && rc == 0) {
		k = write(fd, buf, n);
		if (k < 0 && errno != EINTR)
			rc = -1;
		if (k > 0) {
			buf += k;
			n -= (size_t)k;
		}
	}
	return rc;
}

/* Create the file name in directory dfd (dir in messages), which must
 * not exist, holding text. */
int
gs_write_at(int dfd, const char *dir, const char *name, const char *text,
    struct sc_err *err)
{
	int fd, rc = 0;

	fd = openat(dfd, name,
	    O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0 || gs_write_all(fd, text, strlen(text)) < 0)
		rc = err_set(err, SC_EIO, "%s/%s: cannot write: %s", dir, name,
		    strerror(errno));
	if (fd >= 0 && close(fd) != 0 && rc == 0)
		rc = err_set(err, SC_EIO, "%s/%s: cannot write: %s", dir, name,
		    strerror(errno));
	return rc;
}

/*
 * Copy the first size bytes of in to out (name, in w's directories, in
 * messages).  Stopping at size spares a read for the end, an eighth of
 * the calls a ref costs: git replaces refs and the index by renaming a
 * new file over them, it never grows one in place.
 */
static int
gs_copy_bytes(struct gs_walk *w, int in, int out, size_t size, const char *name,
    struct sc_err *err)
{
	size_t done = 0;
	ssize_t n;
	int rc = 0;

	while (done < size) {
		n = read(in, w->buf,
		    size - done < sizeof(w->buf) ? size - done
						 : sizeof(w->buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			rc = err_set(err, SC_EIO, "%s/%s: cannot read: %s",
			    w->src, name, strerror(errno));
			goto out;
		}
		if (n == 0)
			break; /* shorter than it was */
		if (gs_write_all(out, w->buf, (size_t)n) < 0) {
			rc = err_set(err, SC_EIO, "%s/%s: cannot write: %s",
			    w->dst, name, strerror(errno));
			goto out;
		}
		done += (size_t)n;
	}
out:
	return rc;
}

/*
 * Copy the regular file name of directory sfd (w->src) into directory
 * dfd (w->dst) as bytes.  *copied is false, and 0 returned, when there
 * is no such regular file (with O_NOFOLLOW in oflags, a symbolic link
 * is none).  Opened non-blocking: a FIFO must not stop the copy.
 */
static int
gs_copy_file(bool *copied, struct gs_walk *w, int sfd, int dfd,
    const char *name, int oflags, struct sc_err *err)
{
	struct stat st;
	int in, out = -1, rc = 0;

	*copied = false;
	in = openat(sfd, name, O_RDONLY | O_NONBLOCK | O_CLOEXEC | oflags);
	if (in < 0) {
		if (errno != ENOENT && errno != ELOOP)
			rc = err_set(err, SC_EIO, "%s/%s: cannot open: %s",
			    w->src, name, strerror(errno));
		goto out;
	}
	if (fstat(in, &st) != 0) {
		rc = err_set(err, SC_EIO, "%s/%s: cannot read: %s", w->src,
		    name, strerror(errno));
		goto out;
	}
	if (!S_ISREG(st.st_mode))
		goto out;
	out = openat(dfd, name,
	    O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (out < 0) {
		rc = err_set(err, SC_EIO, "%s/%s: cannot create: %s", w->dst,
		    name, strerror(errno));
		goto out;
	}
	if ((rc = gs_copy_bytes(w, in, out, (size_t)st.st_size, name, err)) < 0)
		goto out;
	*copied = true;
out:
	if (out >= 0 && close(out) != 0 && rc == 0)
		rc = err_set(err, SC_EIO, "%s/%s: cannot write: %s", w->dst,
		    name, strerror(errno));
	if (in >= 0)
		close(in);
	return rc;
}

/* Append "/name" to the walk's path buf (PATH_MAX bytes). */
static int
gs_descend(char *buf, const char *name, struct sc_err *err)
{
	size_t n = strlen(buf);

	if ((size_t)snprintf(buf + n, PATH_MAX - n, "/%s", name) >=
	    PATH_MAX - n)
		return err_set(err, SC_EIO, "%s/%s: path too long", buf, name);
	return 0;
}

/* An entry's type when readdir() did not say: DT_DIR, DT_REG, or DT_LNK
 * for anything else (not copied, refused when checking). */
static int
gs_entry_type(unsigned char *type, const struct gs_walk *w, int sfd,
    const char *name, struct sc_err *err)
{
	struct stat st;

	if (*type != DT_UNKNOWN)
		return 0;
	if (fstatat(sfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0)
		return err_set(
		    err, SC_EIO, "%s/%s: %s", w->src, name, strerror(errno));
	*type = S_ISDIR(st.st_mode) ? DT_DIR
	    : S_ISREG(st.st_mode)   ? DT_REG
				    : DT_LNK;
	return 0;
}

/* Is directory name of w->src the one the copy leaves out (w->skip)? */
static bool
gs_skipped(const struct gs_walk *w, const char *name)
{
	size_t slen = strlen(w->src);

	return w->skip[0] != '\0' &&
	    slen + 1 + strlen(name) == strlen(w->skip) &&
	    strncmp(w->src, w->skip, slen) == 0 &&
	    strcmp(w->skip + slen + 1, name) == 0;
}

/* Walk directory name of sfd (see gs_walk_dir), into its copy made in
 * dfd unless dfd < 0. */
static int
gs_walk_sub(
    struct gs_walk *w, int sfd, int dfd, const char *name, struct sc_err *err)
{
	int csfd = -1, cdfd = -1, rc = 0;

	if ((rc = gs_descend(w->src, name, err)) < 0 ||
	    (dfd >= 0 && (rc = gs_descend(w->dst, name, err)) < 0))
		goto out;
	csfd =
	    openat(sfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (csfd < 0) {
		rc = err_set(err, SC_EIO, "%s: cannot open: %s", w->src,
		    strerror(errno));
		goto out;
	}
	if (dfd >= 0 &&
	    ((mkdirat(dfd, name, 0755) != 0 && errno != EEXIST) ||
		(cdfd = openat(dfd, name,
		     O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)) {
		rc = err_set(err, SC_EIO, "%s: cannot create: %s", w->dst,
		    strerror(errno));
		goto out;
	}
	rc = gs_walk_dir(w, csfd, cdfd, err);
	csfd = -1; /* gs_walk_dir closed it */
out:
	if (cdfd >= 0)
		close(cdfd);
	if (csfd >= 0)
		close(csfd);
	return rc;
}

/*
 * One entry of a walk (see gs_walk_dir): a regular file is copied
 * (lock files are not), a directory walked; anything else, a symbolic
 * link above all, is skipped when copying and refused when checking.
 */
static int
gs_walk_entry(struct gs_walk *w, int sfd, int dfd, const char *name,
    unsigned char type, struct sc_err *err)
{
	bool copied;
	int rc;

	if ((rc = gs_entry_type(&type, w, sfd, name, err)) < 0)
		return rc;
	if (type == DT_REG) {
		if (dfd >= 0 && !gs_is_lock(name))
			rc = gs_copy_file(
			    &copied, w, sfd, dfd, name, O_NOFOLLOW, err);
		return rc;
	}
	/* every story's branch: not the agent's, and as many as the
	 * batch has stories (gs_copy_branch() copies its own) */
	if (type == DT_DIR && dfd >= 0 && gs_skipped(w, name))
		return 0;
	if (type != DT_DIR) {
		if (dfd < 0)
			rc = err_set(err, SC_EDATA,
			    "%s/%s: not a regular file or directory", w->src,
			    name);
		return rc;
	}
	return gs_walk_sub(w, sfd, dfd, name, err);
}

/*
 * Copy directory sfd's regular files and directories into directory dfd
 * recursively, or, with dfd < 0, check that sfd holds nothing else.
 * sfd is consumed (closed).
 */
int
gs_walk_dir(struct gs_walk *w, int sfd, int dfd, struct sc_err *err)
{
	DIR *d;
	struct dirent *de;
	size_t slen = strlen(w->src), dlen = strlen(w->dst);
	int rc = 0;

	if ((d = fdopendir(sfd)) == NULL) {
		rc = err_set(err, SC_EIO, "%s: cannot read: %s", w->src,
		    strerror(errno));
		close(sfd);
		goto out;
	}
	for (;;) {
		errno = 0;
		if ((de = readdir(d)) == NULL) {
			if (errno != 0)
				rc = err_set(err, SC_EIO, "%s: cannot read: %s",
				    w->src, strerror(errno));
			break;
		}
		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
		rc = gs_walk_entry(
		    w, dirfd(d), dfd, de->d_name, de->d_type, err);
		w->src[slen] = '\0';
		w->dst[dlen] = '\0';
		if (rc < 0)
			break;
	}
	closedir(d);
out:
	return rc;
}

/* The tree's git dir and common dir, as libgit2 finds them, into gs
 * (absolute, no trailing '/'). */
static int
gs_find_dirs(struct gitsandbox *gs, const char *tree, struct sc_err *err)
{
	git_repository *repo = NULL;
	size_t n;
	int rc;

	if ((rc = gitwork_open(&repo, tree, err)) < 0)
		goto out;
	gs->gitdir = strdup(git_repository_path(repo));
	gs->commondir = strdup(git_repository_commondir(repo));
	if (gs->gitdir == NULL || gs->commondir == NULL) {
		rc = err_set(err, SC_EOS, "%s: out of memory", tree);
		goto out;
	}
	for (n = strlen(gs->gitdir); n > 1 && gs->gitdir[n - 1] == '/'; n--)
		gs->gitdir[n - 1] = '\0';
	for (n = strlen(gs->commondir); n > 1 && gs->commondir[n - 1] == '/';
	     n--)
		gs->commondir[n - 1] = '\0';
out:
	gitwork_close(repo);
	return rc;
}

/* Make P itself (removed first; parents made), 0700, and its absolute
 * path into gs->private_dir. */
static int
gs_make_private(
    struct gitsandbox *gs, const char *private_dir, struct sc_err *err)
{
	int rc;

	fsutil_rm_tree(private_dir);
	if ((rc = fsutil_mkdir_parents(private_dir, 0700, err)) < 0)
		goto out;
	/* EEXIST: private_dir ended in '/', and its parents included it */
	if ((mkdir(private_dir, 0700) != 0 && errno != EEXIST) ||
	    chmod(private_dir, 0700) != 0) {
		rc = err_set(err, SC_EIO, "%s: cannot create: %s", private_dir,
		    strerror(errno));
		goto out;
	}
	if ((gs->private_dir = realpath(private_dir, NULL)) == NULL)
		rc = err_set(err, errno == ENOMEM ? SC_EOS : SC_EIO, "%s: %s",
		    private_dir, strerror(errno));
out:
	return rc;
}

/* Copy the regular file name from sfd (w->src) to dfd (w->dst), a
 * missing one being an error when must is set. */
static int
gs_copy_top(struct gs_walk *w, int sfd, int dfd, const char *name, bool must,
    struct sc_err *err)
{
	bool copied;
	int rc;

	rc = gs_copy_file(&copied, w, sfd, dfd, name, 0, err);
	if (rc == 0 && must && !copied)
		rc = err_set(
		    err, SC_EDATA, "%s/%s: no such regular file", w->src, name);
	return rc;
}

/* Whether name in directory fd is a directory (not a link to one). */
static bool
gs_is_dir_at(int fd, const char *name, unsigned char type)
{
	struct stat st;

	if (type != DT_UNKNOWN)
		return type == DT_DIR;
	return fstatat(fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
	    S_ISDIR(st.st_mode);
}

/* P/<entry> -> shown/<entry> for each top-level entry of the common dir
 * (cfd) the agent may see but not change. */
static int
gs_link_rest(const struct gitsandbox *gs, int cfd, int pfd, const char *shown,
    struct sc_err *err)
{
	char target[PATH_MAX];
	struct dirent *de;
	DIR *d = NULL;
	bool linked = strcmp(gs->gitdir, gs->commondir) != 0;
	int fd, rc = 0;

	if ((fd = openat(cfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0 ||
	    (d = fdopendir(fd)) == NULL) {
		rc = err_set(err, SC_EIO, "%s: cannot read: %s", gs->commondir,
		    strerror(errno));
		if (fd >= 0)
			close(fd);
		goto out;
	}
	for (;;) {
		errno = 0;
		if ((de = readdir(d)) == NULL) {
			if (errno != 0)
				rc = err_set(err, SC_EIO, "%s: cannot read: %s",
				    gs->commondir, strerror(errno));
			break;
		}
		/* directories only: a file at the top (COMMIT_EDITMSG,
		 * FETCH_HEAD, description) is one git writes anew, and a
		 * link to the read-only view would fail the agent's write */
		if (gs_unlinked(de->d_name, linked) ||
		    !gs_is_dir_at(cfd, de->d_name, de->d_type))
			continue;
		if ((rc = gs_path(target, shown, de->d_name, err)) < 0)
			break;
		if (symlinkat(target, pfd, de->d_name) != 0) {
			rc = err_set(err, SC_EIO, "%s/%s: cannot link: %s",
			    gs->private_dir, de->d_name, strerror(errno));
			break;
		}
	}
out:
	if (d != NULL)
		closedir(d);
	return rc;
}

/* Open the directory path into *fd. */
static int
gs_open_dir(int *fd, const char *path, struct sc_err *err)
{
	*fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (*fd < 0)
		return err_set(
		    err, SC_EIO, "%s: cannot open: %s", path, strerror(errno));
	return 0;
}

/* The branch's own loose ref when the walk left it out (a story's
 * branch, under GS_STORY_REFS): its directories made in P, the file
 * copied.  A packed one is in the packed-refs copy already. */
static int
gs_copy_branch(const struct gitsandbox *gs, struct gs_walk *w, int cfd, int pfd,
    struct sc_err *err)
{
	const char *name, *prefix = "refs/" GS_STORY_REFS "/";
	char dir[PATH_MAX];
	bool copied;
	int sfd = -1, dfd = -1, rc = 0;

	if (gs->branch == NULL ||
	    strncmp(gs->branch, prefix, strlen(prefix)) != 0 ||
	    strchr(gs->branch + strlen(prefix), '/') != NULL)
		goto out;
	name = gs->branch + strlen(prefix);
	snprintf(w->src, sizeof(w->src), "%s/%.*s", gs->commondir,
	    (int)(strlen(prefix) - 1), prefix);
	snprintf(w->dst, sizeof(w->dst), "%s/%.*s", gs->private_dir,
	    (int)(strlen(prefix) - 1), prefix);
	/* the parents of the ref's file: the last directory included */
	if ((rc = gs_path(dir, w->dst, name, err)) < 0 ||
	    (rc = fsutil_mkdir_parents(dir, 0755, err)) < 0)
		goto out;
	snprintf(dir, sizeof(dir), "%.*s", (int)(strlen(prefix) - 1), prefix);
	sfd = openat(cfd, dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (sfd < 0)
		goto out; /* no loose story branch at all */
	dfd = openat(pfd, dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0) {
		rc = err_set(err, SC_EIO, "%s: cannot open: %s", w->dst,
		    strerror(errno));
		goto out;
	}
	rc = gs_copy_file(&copied, w, sfd, dfd, name, O_NOFOLLOW, err);
out:
	if (sfd >= 0)
		close(sfd);
	if (dfd >= 0)
		close(dfd);
	return rc;
}

/* P's HEAD and index from the git dir gfd, config, packed-refs and
 * shallow from the common dir cfd. */
static int
gs_fill_top(const struct gitsandbox *gs, struct gs_walk *w, int gfd, int cfd,
    int pfd, struct sc_err *err)
{
	int rc;

	snprintf(w->dst, sizeof(w->dst), "%s", gs->private_dir);
	snprintf(w->src, sizeof(w->src), "%s", gs->gitdir);
	if ((rc = gs_copy_top(w, gfd, pfd, "HEAD", true, err)) < 0 ||
	    (rc = gs_copy_top(w, gfd, pfd, "index", false, err)) < 0)
		return rc;
	snprintf(w->src, sizeof(w->src), "%s", gs->commondir);
	if ((rc = gs_copy_top(w, cfd, pfd, "config", false, err)) < 0 ||
	    (rc = gs_copy_top(w, cfd, pfd, "packed-refs", false, err)) < 0 ||
	    (rc = gs_copy_top(w, cfd, pfd, "shallow", false, err)) < 0)
		return rc;
	return 0;
}

/* P's refs: the common dir's loose refs but the stories' branches, then
 * the agent's own branch among those. */
static int
gs_fill_refs(const struct gitsandbox *gs, struct gs_walk *w, int cfd, int pfd,
    struct sc_err *err)
{
	int sfd = -1, dfd = -1, rc = 0;

	if ((rc = gs_path(w->src, gs->commondir, "refs", err)) < 0 ||
	    (rc = gs_path(w->dst, gs->private_dir, "refs", err)) < 0)
		goto out;
	if (mkdirat(pfd, "refs", 0755) != 0 ||
	    (dfd = openat(pfd, "refs",
		 O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0) {
		rc = err_set(err, SC_EIO, "%s: cannot create: %s", w->dst,
		    strerror(errno));
		goto out;
	}
	sfd = openat(
	    cfd, "refs", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (sfd < 0 && errno != ENOENT) {
		rc = err_set(err, SC_EIO, "%s: cannot open: %s", w->src,
		    strerror(errno));
		goto out;
	}
	if ((rc = gs_path(w->skip, w->src, GS_STORY_REFS, err)) < 0)
		goto out;
	if (sfd >= 0) {
		rc = gs_walk_dir(w, sfd, dfd, err);
		sfd = -1; /* gs_walk_dir closed it */
		if (rc < 0)
			goto out;
	}
	w->skip[0] = '\0';
	rc = gs_copy_branch(gs, w, cfd, pfd, err);
out:
	if (sfd >= 0)
		close(sfd);
	if (dfd >= 0)
		close(dfd);
	return rc;
}

/* P's object store: new objects land in P; the real ones are read
 * through SHOWN (an alternate). */
static int
gs_fill_objects(
    const struct gitsandbox *gs, int pfd, const char *shown, struct sc_err *err)
{
	char alt[PATH_MAX];

	if (mkdirat(pfd, "objects", 0755) != 0 ||
	    mkdirat(pfd, "objects/info", 0755) != 0 ||
	    mkdirat(pfd, "objects/pack", 0755) != 0)
		return err_set(err, SC_EIO, "%s/objects: cannot create: %s",
		    gs->private_dir, strerror(errno));
	if ((size_t)snprintf(alt, sizeof(alt), "%s/objects\n", shown) >=
	    sizeof(alt))
		return err_set(err, SC_EIO, "%s/objects: path too long", shown);
	return gs_write_at(
	    pfd, gs->private_dir, "objects/info/alternates", alt, err);
}

/* Fill P (gs->private_dir, empty) from the tree's git dir and the
 * common dir, as gitsandbox.h lists. */
static int
gs_fill(const struct gitsandbox *gs, const char *shown, struct sc_err *err)
{
	struct gs_walk *w = NULL;
	int gfd = -1, cfd = -1, pfd = -1, rc = 0;

	if ((w = calloc(1, sizeof(*w))) == NULL) {
		rc = err_set(err, SC_EOS, "%s: out of memory", gs->private_dir);
		goto out;
	}
	if ((rc = gs_open_dir(&gfd, gs->gitdir, err)) < 0 ||
	    (rc = gs_open_dir(&cfd, gs->commondir, err)) < 0 ||
	    (rc = gs_open_dir(&pfd, gs->private_dir, err)) < 0)
		goto out;
	if ((rc = gs_fill_top(gs, w, gfd, cfd, pfd, err)) < 0 ||
	    (rc = gs_fill_refs(gs, w, cfd, pfd, err)) < 0 ||
	    (rc = gs_fill_objects(gs, pfd, shown, err)) < 0)
		goto out;
	rc = gs_link_rest(gs, cfd, pfd, shown, err);
out:
	if (pfd >= 0)
		close(pfd);
	if (cfd >= 0)
		close(cfd);
	if (gfd >= 0)
		close(gfd);
	free(w);
	return rc;
}

int
gitsandbox_prepare(struct gitsandbox *out, const char *tree,
    const char *private_dir, const char *shown, struct sc_err *err)
{
	struct gitsandbox gs;
	char ref[GITWORK_REFMAX];
	bool valid = false, started = false;
	int rc = 0;

	memset(&gs, 0, sizeof(gs));
	if (out != NULL)
		memset(out, 0, sizeof(*out));
	if (out == NULL || tree == NULL || private_dir == NULL ||
	    private_dir[0] == '\0' || shown == NULL) {
		rc = err_set(
		    err, SC_ESOFTWARE, "gitsandbox_prepare: bad arguments");
		goto out;
	}
	valid = true;
	/* one start of libgit2 for the two opens below, not one each: a
	 * start loads the system's CA certificates, 4 to 6 ms */
	if (gitlib_init() < 0) {
		rc = err_set(err, SC_EIO, "cannot initialise libgit2: %s",
		    gitwork_git_msg());
		goto out;
	}
	started = true;
	if ((rc = gs_find_dirs(&gs, tree, err)) < 0 ||
	    (rc = gitwork_head(gs.start_oid, ref, sizeof(ref), tree, err)) < 0)
		goto out;
	if (ref[0] == '\0')
		gs.start_oid[0] = '\0'; /* detached: no branch, no tip */
	else if ((gs.branch = strdup(ref)) == NULL) {
		rc = err_set(err, SC_EOS, "%s: out of memory", tree);
		goto out;
	}
	if ((rc = gs_make_private(&gs, private_dir, err)) < 0)
		goto out;
	rc = gs_fill(&gs, shown, err);
out:
	/* a P from an earlier attempt goes too: the caller must not mount
	 * it by mistake */
	if (started)
		git_libgit2_shutdown();
	if (rc < 0 && valid)
		fsutil_rm_tree(private_dir);
	if (rc < 0)
		gs_free(&gs);
	else
		*out = gs;
	return rc;
}
