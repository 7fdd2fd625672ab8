/*
 * discover.c - see discover.h.  The rules, in order (docs/stories.md
 * "Discovery"):
 *  1. BMAD v6: a sprint-status.yaml at one of the places BMAD writes it
 *     (v6_paths).  The config names it (stories.sprint_status) and the
 *     loader lists its story entries, so retrospectives, tech specs and
 *     other artifacts beside the stories are never taken for stories,
 *     as a glob over that directory would.
 *  2. BMAD v4: .bmad-core/core-config.yaml, or N.M.story.md files in
 *     docs/stories: the glob of the *.story.md files in its
 *     devStoryLocation (docs/stories by default), or of all its *.md
 *     files when the stories there are named otherwise.
 *  3. Otherwise the *.md files of docs/stories, listed, or that glob.
 */
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "controller/discover.h"
#include "strategies/sprintstatus.h"

/* Where BMAD v6 writes sprint-status.yaml: the current default
 * (implementation_artifacts), then earlier releases' sprint_artifacts
 * and docs folder. */
static const char *const v6_paths[] = {
    "_bmad-output/implementation-artifacts/sprint-status.yaml",
    "docs/sprint-artifacts/sprint-status.yaml",
    "docs/sprint-status.yaml",
    NULL,
};

#define V4_CORE_CONFIG ".bmad-core/core-config.yaml"
#define V4_DEFAULT_LOCATION "docs/stories"
/* a core-config.yaml is a page of settings; anything larger is not one */
#define CORE_CONFIG_MAX (1024 * 1024)

static bool
is_file(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* The regular files pattern matches, listed into *files when given. */
static size_t
glob_files(const char *pattern, struct strlist *files)
{
	glob_t g;
	size_t i, n = 0;

	memset(&g, 0, sizeof(g));
	if (glob(pattern, GLOB_MARK, NULL, &g) == 0) {
		for (i = 0; i < g.gl_pathc; i++) {
			const char *m = g.gl_pathv[i];
			if (m[strlen(m) - 1] == '/' || !is_file(m))
				continue;
			if (files != NULL && strlist_push(files, m) < 0)
				continue; /* the caller sees it short */
			n++;
		}
	}
	globfree(&g);
	return n;
}

/* The whole small file at path, or NULL. */
static char *
read_small(const char *path, size_t *len)
{
	struct stat st;
	char *buf = NULL;
	ssize_t n;
	int fd;

	*len = 0;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
	    st.st_size <= CORE_CONFIG_MAX &&
	    (buf = malloc((size_t)st.st_size + 1)) != NULL) {
		while (*len < (size_t)st.st_size) {
			n = read(fd, buf + *len, (size_t)st.st_size - *len);
			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0)
				break;
			*len += (size_t)n;
		}
		buf[*len] = '\0';
	}
	close(fd);
	return buf;
}

/*
 * devStoryLocation of BMAD v4's core config, as a relative directory
 * without a trailing slash ("{project-root}/" and "./" dropped); NULL
 * when absent, unreadable, or not a plain path inside the repository.
 */
static char *
v4_location(void)
{
	struct sc_err e;
	char *text, *v = NULL, *loc = NULL;
	const char *p;
	size_t len, n;

	text = read_small(V4_CORE_CONFIG, &len);
	if (text == NULL ||
	    yaml_top_scalar(&v, text, len, "devStoryLocation", &e) < 0 ||
	    v == NULL)
		goto out;
	p = v;
	if (strncmp(p, "{project-root}", 14) == 0)
		p += 14;
	while (*p == '/' || (p[0] == '.' && p[1] == '/'))
		p += *p == '/' ? 1 : 2;
	n = strlen(p);
	while (n > 0 && p[n - 1] == '/')
		n--;
	if (n == 0 || v[0] == '/' || strstr(p, "..") != NULL ||
	    strpbrk(p, "{}*?[]\\") != NULL)
		goto out;
	loc = strndup(p, n);
out:
	free(v);
	free(text);
	return loc;
}

static int
discover_v4(struct discovery *out, bool *found)
{
	char *loc = v4_location(), *story = NULL, *any = NULL;
	bool core = is_file(V4_CORE_CONFIG);
	const char *dir = loc != NULL ? loc : V4_DEFAULT_LOCATION;
	size_t nstory;
	int rc = 0;

	*found = false;
	if (asprintf(&story, "%s/*.story.md", dir) < 0 ||
	    asprintf(&any, "%s/*.md", dir) < 0) {
		free(story);
		free(loc);
		return SC_EOS;
	}
	nstory = glob_files(story, NULL);
	if (!core && nstory == 0)
		goto out;
	*found = true;
	out->layout = LAYOUT_BMAD_V4;
	if (core)
		snprintf(out->from, sizeof(out->from), "%s%s", V4_CORE_CONFIG,
		    loc != NULL ? " (devStoryLocation)" : "");
	else
		snprintf(out->from, sizeof(out->from), "%s", story);
	/* stories named otherwise ("1.1.login.md") are taken as they are */
	if (nstory == 0 && glob_files(any, NULL) > 0) {
		out->glob = any;
		any = NULL;
	} else {
		out->glob = story;
		story = NULL;
	}
out:
	free(story);
	free(any);
	free(loc);
	return rc;
}

int
discover_stories(struct discovery *out, struct sc_err *err)
{
	bool found = false;
	size_t i;
	int rc = 0;

	memset(out, 0, sizeof(*out));
	for (i = 0; v6_paths[i] != NULL; i++) {
		if (!is_file(v6_paths[i]))
			continue;
		out->layout = LAYOUT_BMAD_V6;
		out->sprint_status = strdup(v6_paths[i]);
		snprintf(out->from, sizeof(out->from), "%s", v6_paths[i]);
		if (out->sprint_status == NULL)
			rc = SC_EOS;
		goto out;
	}
	if ((rc = discover_v4(out, &found)) < 0 || found)
		goto out;
	out->layout = LAYOUT_PLAIN;
	if (glob_files("docs/stories/*.md", &out->files) == 0 &&
	    (out->glob = strdup("docs/stories/*.md")) == NULL)
		rc = SC_EOS;
out:
	if (rc < 0) {
		discovery_release(out);
		rc = err_set(err, SC_EOS, "out of memory");
	}
	return rc;
}

void
discovery_release(struct discovery *d)
{
	if (d == NULL)
		return;
	free(d->sprint_status);
	free(d->glob);
	strlist_release(&d->files);
	memset(d, 0, sizeof(*d));
}

const char *
layout_name(enum layout l)
{
	switch (l) {
	case LAYOUT_BMAD_V6:
		return "BMAD v6";
	case LAYOUT_BMAD_V4:
		return "BMAD v4";
	default:
		return "plain";
	}
}
