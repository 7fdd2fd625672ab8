/*
 * treewatch.c - a work tree's changed paths from inotify; see
 * treewatch.h and docs/evidence.md#cost.
 *
 * Written here, not taken from a library: what is needed is one
 * inotify descriptor per tree and a table from watch descriptor to
 * directory, drained from the controller's own thread when a snapshot
 * is taken.  The libraries that wrap inotify (libinotifytools, GLib's
 * GFileMonitor) bring a global table or a main loop of their own, and
 * libgit2 has no file-system monitor.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include "state/treewatch.h"

/* What a directory's watch reports: every change to a name in it. */
#define TW_MASK \
	(IN_CREATE | IN_DELETE | IN_MODIFY | IN_ATTRIB | IN_CLOSE_WRITE | \
	    IN_MOVED_FROM | IN_MOVED_TO | IN_DELETE_SELF | IN_MOVE_SELF | \
	    IN_ONLYDIR | IN_DONT_FOLLOW | IN_EXCL_UNLINK)

/* One watched directory: rel is "" for the root, NULL once its watch is
 * gone. */
struct tw_dir {
	int wd;
	char *rel;
};

struct treewatch {
	char *root;
	char *exclude; /* relative to root, "" when none */
	int fd; /* -1 until armed */
	struct tw_dir *dirs; /* by wd, which the kernel hands out rising */
	size_t ndirs, alloc;
	bool full; /* the next take says "full" */
	bool gone;
	/* the caller moved the root this many times since the last take:
	 * as many of the root's IN_MOVE_SELF are its own (treewatch_moved) */
	unsigned moved;
};

static void
tw_disarm(struct treewatch *tw)
{
	size_t i;

	if (tw->fd >= 0)
		close(tw->fd);
	tw->fd = -1;
	for (i = 0; i < tw->ndirs; i++)
		free(tw->dirs[i].rel);
	tw->ndirs = 0;
}

void
treewatch_free(struct treewatch *tw)
{
	if (tw == NULL)
		return;
	tw_disarm(tw);
	free(tw->dirs);
	free(tw->root);
	free(tw->exclude);
	free(tw);
}

const char *
treewatch_root(const struct treewatch *tw)
{
	return tw->root;
}

void
treewatch_forget(struct treewatch *tw)
{
	if (tw != NULL)
		tw->full = true;
}

int
treewatch_moved(struct treewatch *tw, const char *newroot, struct sc_err *err)
{
	char *copy = strdup(newroot);

	if (copy == NULL)
		return err_set(err, SC_EOS, "%s: out of memory", newroot);
	free(tw->root);
	tw->root = copy;
	/* the watches follow the directories' inodes: only the name the
	 * new directories' paths are built from changes, and the root's
	 * own move event is not the tree going away */
	if (tw->fd >= 0)
		tw->moved++;
	return 0;
}

int
treewatch_open(struct treewatch **out, const char *root, const char *exclude,
    struct sc_err *err)
{
	struct treewatch *tw = NULL;
	size_t n = strlen(root);
	const char *ex = "";
	int rc = 0;

	*out = NULL;
	if (exclude != NULL && strncmp(exclude, root, n) == 0 &&
	    exclude[n] == '/')
		ex = exclude + n + 1;
	if ((tw = calloc(1, sizeof(*tw))) == NULL ||
	    (tw->root = strdup(root)) == NULL ||
	    (tw->exclude = strdup(ex)) == NULL) {
		rc = err_set(err, SC_EOS, "%s: out of memory", root);
		goto out;
	}
	tw->fd = -1;
	tw->full = true;
	*out = tw;
	tw = NULL;
out:
	treewatch_free(tw);
	return rc;
}

/* The directory watched as wd, or NULL. */
static struct tw_dir *
tw_find(struct treewatch *tw, int wd)
{
	size_t lo = 0, hi = tw->ndirs, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (tw->dirs[mid].wd == wd)
			return tw->dirs[mid].rel != NULL ? &tw->dirs[mid]
							 : NULL;
		if (tw->dirs[mid].wd < wd)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/* Whether rel (relative to the root) is left out: .git, the excluded
 * directory and what is under them. */
static bool
tw_skipped(const struct treewatch *tw, const char *rel)
{
	const char *base = strrchr(rel, '/');
	size_t n = strlen(tw->exclude);

	base = base != NULL ? base + 1 : rel;
	if (strcmp(base, ".git") == 0)
		return true;
	return n > 0 && strncmp(rel, tw->exclude, n) == 0 &&
	    (rel[n] == '\0' || rel[n] == '/');
}

/* Record wd as rel.  -1 when out of memory. */
static int
tw_note(struct treewatch *tw, int wd, const char *rel)
{
	struct tw_dir *d;
	size_t i;
	char *copy;

	if ((copy = strdup(rel)) == NULL)
		return -1;
	/* the same directory watched again gives its old wd back */
	for (i = tw->ndirs; i > 0 && tw->dirs[i - 1].wd >= wd; i--)
		if (tw->dirs[i - 1].wd == wd) {
			free(tw->dirs[i - 1].rel);
			tw->dirs[i - 1].rel = copy;
			return 0;
		}
	if (tw->ndirs == tw->alloc) {
		size_t na = tw->alloc ? 2 * tw->alloc : 64;
		if ((d = realloc(tw->dirs, na * sizeof(*d))) == NULL) {
			free(copy);
			return -1;
		}
		tw->dirs = d;
		tw->alloc = na;
	}
	memmove(&tw->dirs[i + 1], &tw->dirs[i],
	    (tw->ndirs - i) * sizeof(*tw->dirs));
	tw->dirs[i].wd = wd;
	tw->dirs[i].rel = copy;
	tw->ndirs++;
	return 0;
}

static int tw_add_tree(struct treewatch *tw, const char *rel);

/* Is path (the directory rel of the tree) a nested repository?  Not
 * part of the tree (git-work.md); the tree's own root never is. */
static bool
tw_nested_repo(const char *path, const char *rel)
{
	char sub[PATH_MAX];
	struct stat st;

	return rel[0] != '\0' &&
	    snprintf(sub, sizeof(sub), "%s/.git", path) < (int)sizeof(sub) &&
	    lstat(sub, &st) == 0;
}

/* Is entry e of dir a directory (not a symbolic link to one)? */
static bool
tw_is_dir(DIR *dir, const struct dirent *e)
{
	struct stat st;

	if (e->d_type == DT_UNKNOWN)
		return fstatat(dirfd(dir), e->d_name, &st,
			   AT_SYMLINK_NOFOLLOW) == 0 &&
		    S_ISDIR(st.st_mode);
	return e->d_type == DT_DIR;
}

/* Watch the directories under rel, dir open on it, as tw_add_tree(). */
static int
tw_add_subdirs(struct treewatch *tw, const char *rel, DIR *dir)
{
	char sub[PATH_MAX];
	struct dirent *e;
	int rc = 0;

	while (rc == 0 && (e = readdir(dir)) != NULL) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		if (snprintf(sub, sizeof(sub), "%s%s%s", rel,
			rel[0] != '\0' ? "/" : "",
			e->d_name) >= (int)sizeof(sub))
			return -1;
		if (tw_skipped(tw, sub) || !tw_is_dir(dir, e))
			continue;
		rc = tw_add_tree(tw, sub);
	}
	return rc;
}

/*
 * Watch the directory rel and every directory under it.  Returns 0, or
 * -1 when a watch could not be added (the limits of inotify, out of
 * memory): the changes under rel are then not known.  A directory that
 * went away meanwhile is no error.
 */
static int
tw_add_tree(struct treewatch *tw, const char *rel)
{
	char path[PATH_MAX];
	DIR *dir = NULL;
	int wd, rc;

	if (snprintf(path, sizeof(path), "%s%s%s", tw->root,
		rel[0] != '\0' ? "/" : "", rel) >= (int)sizeof(path))
		return -1;
	if (tw_nested_repo(path, rel))
		return 0;
	wd = inotify_add_watch(tw->fd, path, TW_MASK);
	if (wd < 0)
		return errno == ENOENT || errno == ENOTDIR ? 0 : -1;
	if (tw_note(tw, wd, rel) < 0 || (dir = opendir(path)) == NULL)
		return errno == ENOENT || errno == ENOTDIR ? 0 : -1;
	rc = tw_add_subdirs(tw, rel, dir);
	closedir(dir);
	return rc;
}

/* A new inotify descriptor watching the whole tree.  SC_EOS when
 * inotify itself is not available; a watch that could not be added
 * leaves the tree "full" (looked at whole) until the next take. */
static int
tw_arm(struct treewatch *tw, struct sc_err *err)
{
	tw_disarm(tw);
	tw->fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (tw->fd < 0)
		return err_set(err, SC_EOS, "%s: cannot watch the tree: %s",
		    tw->root, strerror(errno));
	if (tw_add_tree(tw, "") < 0) {
		int e = errno;

		/* keep looking at the whole tree rather than miss a change */
		tw_disarm(tw);
		return err_set(err, SC_EOS, "%s: cannot watch the tree: %s",
		    tw->root, strerror(e ? e : ENOSPC));
	}
	return 0;
}

/* One event into paths (or tw->full / tw->gone).  -1 out of memory. */
static int
tw_event(
    struct treewatch *tw, const struct inotify_event *ev, struct strlist *paths)
{
	struct tw_dir *d;
	char rel[PATH_MAX];
	bool dir = (ev->mask & IN_ISDIR) != 0;

	if (ev->mask & IN_Q_OVERFLOW) {
		tw->full = true;
		return 0;
	}
	if ((d = tw_find(tw, ev->wd)) == NULL)
		return 0;
	if (ev->mask & (IN_IGNORED | IN_DELETE_SELF | IN_MOVE_SELF)) {
		if (d->rel[0] == '\0' && (ev->mask & IN_MOVE_SELF) &&
		    tw->moved > 0)
			tw->moved--; /* the caller's own move */
		else if (d->rel[0] == '\0')
			tw->gone = true;
		else if (ev->mask & IN_MOVE_SELF)
			tw->full = true; /* its watches keep the old names */
		if (ev->mask & IN_IGNORED) {
			free(d->rel);
			d->rel = NULL;
		}
		return 0;
	}
	if (ev->len == 0 || ev->name[0] == '\0')
		return 0;
	if (snprintf(rel, sizeof(rel), "%s%s%s", d->rel,
		d->rel[0] != '\0' ? "/" : "", ev->name) >= (int)sizeof(rel)) {
		tw->full = true;
		return 0;
	}
	if (tw_skipped(tw, rel))
		return 0;
	if (dir && (ev->mask & IN_MOVED_FROM)) {
		tw->full = true; /* the watches under it keep the old names */
		return 0;
	}
	if (dir && (ev->mask & IN_ATTRIB))
		return 0; /* git keeps no directory modes */
	if (dir && (ev->mask & (IN_CREATE | IN_MOVED_TO)) &&
	    tw_add_tree(tw, rel) < 0)
		tw->full = true;
	return strlist_push(paths, rel);
}

int
treewatch_take(struct treewatch *tw, struct strlist *paths, bool *full,
    bool *gone, struct sc_err *err)
{
	/* aligned for struct inotify_event, as inotify(7) shows */
	char buf[16384]
	    __attribute__((aligned(__alignof__(struct inotify_event))));
	struct strlist got = {0};
	const struct inotify_event *ev;
	ssize_t n;
	size_t off;
	int rc = 0;

	*full = *gone = false;
	while (tw->fd >= 0 && !tw->gone) {
		n = read(tw->fd, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break; /* EAGAIN: drained */
		for (off = 0; rc == 0 && off < (size_t)n;
		     off += sizeof(*ev) + ev->len) {
			ev = (const struct inotify_event *)(buf + off);
			if (!tw->full && tw_event(tw, ev, &got) < 0)
				rc = err_set(
				    err, SC_EOS, "%s: out of memory", tw->root);
		}
		if (rc < 0)
			goto out;
	}
	tw->moved = 0; /* drained: any later move of the root is not ours */
	if (tw->gone) {
		*gone = true;
		goto out;
	}
	if (tw->fd < 0 || tw->full) {
		/* set up afresh before the caller looks at the whole tree,
		 * so that nothing changed after this call is missed */
		tw->full = false;
		*full = true;
		if ((rc = tw_arm(tw, err)) < 0)
			tw->full = true;
		rc = 0;
		goto out;
	}
	strlist_sort_unique(&got);
	*paths = got;
	got = (struct strlist){0};
out:
	strlist_release(&got);
	return rc;
}
