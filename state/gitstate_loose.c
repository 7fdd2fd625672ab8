/*
 * gitstate_loose.c - the state branch's objects that are written and not
 * yet packed, listed for whichever writer comes next in
 * <commondir>storyctl/loose (docs/state-branch.md#carried-over).
 *
 * A writer packs its objects once GS_PACK_AT of them are loose.  Every
 * commit adds the objects it wrote to the list, and the list goes when
 * they are packed; the next writer takes it over before its first
 * commit, and its first pack holds them with its own.  So what a batch
 * leaves below the threshold, or leaves when it is killed, is packed
 * by a later one, and a night of few decisions leaves a few hundred
 * loose objects (git leaves thousands before `git gc --auto` packs)
 * rather than a small pack of its own, which cost a batch of 50
 * stories 13 ms and left one more pack for every later read to look
 * through (docs/performance.md#carried-over).
 *
 * The file is text, a line an object: its 40 hex digits, then a space
 * and the path it was written at when there is one ("" for the root
 * tree), which the packer uses to pair a page with its earlier
 * versions.  An object listed whose loose file is gone (git gc packed
 * or pruned it), and a line that is not an object (one cut short), are
 * passed over.  Losing the list only leaves objects loose, for git gc,
 * so it is appended to without fsync.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "state/gitobjects.h"
#include "state/gitstate_int.h"

#define GL_DIR "storyctl"
#define GL_FILE "storyctl/loose"

/* <commondir><rel> into buf; 0, or -1 when it does not fit. */
static int
gl_path(char *buf, size_t size, const struct gitstate *gs, const char *rel)
{
	const char *common = git_repository_commondir(gs->repo);

	if (common == NULL ||
	    (size_t)snprintf(buf, size, "%s%s", common, rel) >= size)
		return -1;
	return 0;
}

/* 1 when id's loose file is in objdir (<commondir>objects), else 0. */
static int
gl_is_loose(const char *objdir, const git_oid *id)
{
	char path[PATH_MAX];
	struct stat st;

	return gitobjects_loose_path(path, sizeof(path), objdir, id) == 0 &&
	    stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

void
gitstate_loose_load(struct gitstate *gs)
{
	char path[PATH_MAX], objdir[PATH_MAX], *line = NULL;
	size_t cap = 0, skipped = 0;
	ssize_t len;
	int whole = 1;
	git_oid id;
	FILE *f;

	if (gl_path(path, sizeof(path), gs, GL_FILE) < 0 ||
	    gl_path(objdir, sizeof(objdir), gs, "objects") < 0 ||
	    (f = fopen(path, "re")) == NULL)
		return;
	while ((len = getline(&line, &cap, f)) > 0) {
		if (line[len - 1] == '\n')
			line[--len] = '\0';
		if (len < GIT_OID_HEXSZ ||
		    git_oid_fromstrn(&id, line, GIT_OID_HEXSZ) < 0 ||
		    (line[GIT_OID_HEXSZ] != '\0' &&
			line[GIT_OID_HEXSZ] != ' ') ||
		    !gl_is_loose(objdir, &id)) {
			skipped++;
			continue;
		}
		/* out of memory: the rest simply stays loose */
		if (gitstate_note(gs, &id,
			line[GIT_OID_HEXSZ] == ' ' ? line + GIT_OID_HEXSZ + 1
						   : NULL) < 0) {
			whole = 0;
			break;
		}
	}
	fclose(f);
	/* those are in the list already; when some lines were passed over,
	 * the list is written again without them, so that it does not keep
	 * what git gc took */
	gs->nlisted = gs->nfresh;
	if (skipped > 0 && whole) {
		(void)unlink(path);
		gs->nlisted = 0;
		gitstate_loose_append(gs);
	}
	free(line);
}

void
gitstate_loose_append(struct gitstate *gs)
{
	char dir[PATH_MAX], path[PATH_MAX], hex[GIT_OID_HEXSZ + 1];
	char *buf = NULL, *p;
	size_t i, len = 0, need = 0;
	ssize_t w;
	int fd = -1;

	if (gs->nlisted >= gs->nfresh)
		goto out;
	if (gl_path(dir, sizeof(dir), gs, GL_DIR) < 0 ||
	    gl_path(path, sizeof(path), gs, GL_FILE) < 0)
		goto out;
	for (i = gs->nlisted; i < gs->nfresh; i++)
		need += GIT_OID_HEXSZ + 2 +
		    (gs->fresh_path[i] ? strlen(gs->fresh_path[i]) : 0);
	if ((buf = malloc(need + 1)) == NULL)
		goto out;
	for (i = gs->nlisted; i < gs->nfresh; i++) {
		git_oid_tostr(hex, sizeof(hex), &gs->fresh[i]);
		p = gs->fresh_path[i];
		/* a path with a line break in it is not kept: the packer
		 * then only goes without its hint */
		if (p != NULL && strchr(p, '\n') == NULL)
			len += (size_t)snprintf(
			    buf + len, need + 1 - len, "%s %s\n", hex, p);
		else
			len += (size_t)snprintf(
			    buf + len, need + 1 - len, "%s\n", hex);
	}
	fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0666);
	if (fd < 0 && errno == ENOENT && mkdir(dir, 0777) == 0)
		fd =
		    open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0666);
	if (fd < 0)
		goto out;
	/* O_APPEND and one write: another writer's lines never land inside
	 * ours.  What is not written is tried again with the next commit's
	 * objects (a line twice is harmless). */
	for (p = buf; len > 0;) {
		w = write(fd, p, len);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			goto out;
		p += w;
		len -= (size_t)w;
	}
	gs->nlisted = gs->nfresh;
out:
	if (fd >= 0)
		close(fd);
	free(buf);
}

void
gitstate_loose_clear(struct gitstate *gs)
{
	char path[PATH_MAX];

	if (gl_path(path, sizeof(path), gs, GL_FILE) == 0)
		(void)unlink(path);
	gs->nlisted = 0;
}
