/* fsutil.c - see fsutil.h. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "state/fsutil.h"

char *
fsutil_path_join(const char *a, const char *b)
{
	size_t la = strlen(a);
	bool slash = la > 0 && a[la - 1] == '/';
	char *s = NULL;

	if (asprintf(&s, "%s%s%s", a, slash ? "" : "/", b) < 0)
		return NULL;
	return s;
}

int
fsutil_mkdir_parents(const char *path, mode_t mode, struct sc_err *err)
{
	char buf[PATH_MAX];
	char *p;
	int rc = 0;

	if ((size_t)snprintf(buf, sizeof(buf), "%s", path) >= sizeof(buf))
		return err_set(err, SC_EDATA, "%s: path too long", path);
	for (p = buf + 1; *p != '\0'; p++) {
		if (*p != '/' || p[-1] == '/')
			continue;
		*p = '\0';
		if (mkdir(buf, mode) != 0 && errno != EEXIST) {
			rc = err_set(err, SC_EIO, "%s: cannot create: %s", buf,
			    strerror(errno));
			goto out;
		}
		*p = '/';
	}
out:
	return rc;
}

static int
rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static void rm_at(int dfd, const char *name, const char *path);

/* Empty the directory open as fd (path names it, for the fallback);
 * closes fd. */
static void
rm_dir_entries(int fd, const char *path)
{
	struct dirent *e;
	struct stat st;
	char *sub;
	DIR *d;
	bool dir;

	if ((d = fdopendir(fd)) == NULL) {
		close(fd);
		return;
	}
	while ((e = readdir(d)) != NULL) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		dir = e->d_type == DT_DIR;
		if (e->d_type == DT_UNKNOWN)
			dir = fstatat(dirfd(d), e->d_name, &st,
				  AT_SYMLINK_NOFOLLOW) == 0 &&
			    S_ISDIR(st.st_mode);
		if (!dir) {
			(void)unlinkat(dirfd(d), e->d_name, 0);
			continue;
		}
		if ((sub = fsutil_path_join(path, e->d_name)) != NULL)
			rm_at(dirfd(d), e->d_name, sub);
		free(sub);
	}
	closedir(d);
}

/* rm -rf of the directory name in dfd (path names it). */
static void
rm_at(int dfd, const char *name, const char *path)
{
	int fd =
	    openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	if (fd < 0 && (errno == EMFILE || errno == ENFILE)) {
		/* out of descriptors (a very deep tree): by path */
		nftw(path, rm_one, 16, FTW_DEPTH | FTW_PHYS);
		return;
	}
	if (fd >= 0)
		rm_dir_entries(fd, path);
	(void)unlinkat(dfd, name, AT_REMOVEDIR);
}

void
fsutil_rm_tree(const char *path)
{
	struct stat st;

	/* a directory is emptied through its descriptors (unlinkat(2) by
	 * the name readdir gave, its type from d_type): nftw(3) would
	 * stat every entry and resolve its whole path twice, half the
	 * system time of removing a worktree of 20,000 files
	 * (docs/performance.md#worktrees-kept-per-slot) */
	if (lstat(path, &st) < 0)
		return;
	if (!S_ISDIR(st.st_mode)) {
		(void)unlink(path);
		return;
	}
	rm_at(AT_FDCWD, path, path);
}
