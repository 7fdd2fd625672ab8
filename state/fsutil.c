/* fsutil.c - see fsutil.h. */
#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

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

void
fsutil_rm_tree(const char *path)
{
	nftw(path, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}
