/*
 * discover.c - see discover.h.  The rules, in order (docs/stories.md
 * "Discovery"):
 *  1. BMAD v6: a sprint-status.yaml where _bmad/bmm/config.yaml's
 *     implementation_artifacts, sprint_artifacts or output_folder put
 *     it (or a folder below the first two), else at one of the places
 *     BMAD's releases write it (v6_places).  The first one found is
 *     taken, the others are named as passed over.  The config names it
 *     (stories.sprint_status) and the loader lists its story entries,
 *     so retrospectives, tech specs and other artifacts beside the
 *     stories are never taken for stories, as a glob over that
 *     directory would.
 *  2. BMAD v6 without a sprint status: files with v4 names
 *     (1.1.story.md, 2.6-story.md, 1.1.md) in implementation_artifacts
 *     or its stories/ folder.
 *  3. BMAD v4: .bmad-core/core-config.yaml, or N.M.story.md files in
 *     docs/stories: the glob of the *.story.md files in its
 *     devStoryLocation (docs/stories by default), the files listed
 *     when some are named N.M-story.md, or the glob of all its *.md
 *     files when the stories there are named otherwise.
 *  4. Otherwise the *.md files of docs/stories, listed, or that glob.
 */
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "controller/config/discover.h"
#include "strategies/sprintstatus.h"

#define V6_CONFIG "_bmad/bmm/config.yaml"

/* The settings of _bmad/bmm/config.yaml that say where the
 * implementation phase writes, in the order they are looked at. */
static const char *const v6_keys[] = {
    "implementation_artifacts",
    "sprint_artifacts",
    "output_folder",
};
#define V6_NKEYS 3

/* Where BMAD v6 releases write sprint-status.yaml without a config
 * saying otherwise: the current default (implementation_artifacts),
 * the output folder, then earlier releases' sprint_artifacts and docs
 * folder; a "*" is one folder below. */
static const struct {
	const char *path, *why;
} v6_places[] = {
    {"_bmad-output/implementation-artifacts/sprint-status.yaml",
	"BMAD's default place"},
    {"_bmad-output/sprint-status.yaml", "BMAD's default output folder"},
    {"docs/sprint-artifacts/sprint-status.yaml", "an earlier release's place"},
    {"docs/sprint-status.yaml", "an earlier release's place"},
    {"_bmad-output/implementation-artifacts/*/sprint-status.yaml",
	"a folder below BMAD's default place"},
    {NULL, NULL},
};
#define V6_DEFAULT_DIR "_bmad-output/implementation-artifacts"

#define V4_CORE_CONFIG ".bmad-core/core-config.yaml"
#define V4_DEFAULT_LOCATION "docs/stories"
/* a core-config.yaml is a page of settings; anything larger is not one */
#define CORE_CONFIG_MAX (1024 * 1024)
/* sprint-status.yaml files named in init's line, the rest counted */
#define PASSED_NAMED 3

static bool
is_file(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

static bool
is_dir(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static int
path_version_cmp(const void *a, const void *b)
{
	return strverscmp(*(char *const *)a, *(char *const *)b);
}

/* The regular files pattern matches, listed into *files when given
 * (in version order when sorted). */
static size_t
glob_files(const char *pattern, struct strlist *files, bool sorted)
{
	glob_t g;
	size_t i, n = 0;

	memset(&g, 0, sizeof(g));
	if (glob(pattern, GLOB_MARK, NULL, &g) == 0) {
		if (sorted)
			qsort(g.gl_pathv, g.gl_pathc, sizeof(*g.gl_pathv),
			    path_version_cmp);
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
 * A folder setting of a BMAD config (devStoryLocation,
 * implementation_artifacts) as a relative directory without a trailing
 * slash ("{project-root}/" and "./" dropped); NULL when not a plain path
 * inside the repository (another placeholder, absolute, "..").
 */
static char *
plain_dir(const char *v)
{
	const char *p = v;
	size_t n;

	if (strncmp(p, "{project-root}", 14) == 0)
		p += 14;
	while (*p == '/' || (p[0] == '.' && p[1] == '/'))
		p += *p == '/' ? 1 : 2;
	n = strlen(p);
	while (n > 0 && p[n - 1] == '/')
		n--;
	if (n == 0 || v[0] == '/' || strstr(p, "..") != NULL ||
	    strpbrk(p, "{}*?[]\\") != NULL)
		return NULL;
	return strndup(p, n);
}

/* The folder setting key of the YAML config at path, or NULL. */
static char *
config_dir(const char *path, const char *key)
{
	struct sc_err e;
	char *text, *v = NULL, *dir = NULL;
	size_t len;

	text = read_small(path, &len);
	if (text != NULL && yaml_top_scalar(&v, text, len, key, &e) == 0 &&
	    v != NULL)
		dir = plain_dir(v);
	free(v);
	free(text);
	return dir;
}

/* One more thing passed over: named in out->passed while there are
 * few, counted after (passed_end()). */
static void passed_add(struct discovery *out, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void
passed_add(struct discovery *out, const char *fmt, ...)
{
	size_t used = strlen(out->passed);
	va_list ap;

	if (out->npassed++ >= PASSED_NAMED)
		return;
	if (used > 0)
		used += (size_t)snprintf(out->passed + used,
		    used < sizeof(out->passed) ? sizeof(out->passed) - used : 0,
		    ", ");
	if (used >= sizeof(out->passed))
		return;
	va_start(ap, fmt);
	vsnprintf(out->passed + used, sizeof(out->passed) - used, fmt, ap);
	va_end(ap);
}

/* "a, b, c and 2 more" */
static void
passed_end(struct discovery *out)
{
	size_t used = strlen(out->passed);

	if (out->npassed > PASSED_NAMED && used < sizeof(out->passed))
		snprintf(out->passed + used, sizeof(out->passed) - used,
		    " and %zu more", out->npassed - PASSED_NAMED);
}

/* --- BMAD v4 names --------------------------------------------------- */

/* A folder's .md files as v4_take() sorts them. */
struct v4_sorted {
	struct strlist files, ids; /* the stories, each with its number */
	struct strlist other; /* not a story's name */
	size_t nstory; /* of files, named N.M.story.md */
	size_t ndup; /* passed over: the number of another */
};

static void
v4_sorted_release(struct v4_sorted *vs)
{
	strlist_release(&vs->files);
	strlist_release(&vs->ids);
	strlist_release(&vs->other);
}

/* Sort all (in version order) into stories and the rest; a number
 * twice (1.1.story.md, 1.1.md): the first is it. */
static int
v4_sort(struct v4_sorted *vs, struct discovery *out, const struct strlist *all,
    bool bare)
{
	char num[STORY_NUMBER_MAX];
	const char *base;
	size_t i, len;
	bool story;

	for (i = 0; i < all->n; i++) {
		base = strrchr(all->items[i], '/') + 1;
		len = strlen(base);
		story = len > 9 && strncasecmp(base + len - 8, "story", 5) == 0;
		if (story_name_number(num, base) != STORY_NAME_V4 ||
		    (!bare && !story)) {
			if (strlist_push(&vs->other, all->items[i]) < 0)
				return SC_EOS;
			continue;
		}
		if (strlist_find(&vs->ids, num) >= 0) {
			passed_add(
			    out, "%s (the number of another)", all->items[i]);
			vs->ndup++;
			continue;
		}
		if (strlist_push(&vs->files, all->items[i]) < 0 ||
		    strlist_push(&vs->ids, num) < 0)
			return SC_EOS;
		if (len > 9 && strcmp(base + len - 9, ".story.md") == 0)
			vs->nstory++;
	}
	return 0;
}

/* The id a name gives (docs/stories.md "Ids"): without ".md" and a
 * ".story" before it; "2.6-story" is not one.  Where it is the number,
 * the id is left "" (the name gives it). */
static void
v4_ids_trim(const struct strlist *files, struct strlist *ids)
{
	const char *base;
	size_t i, len;

	for (i = 0; i < files->n; i++) {
		base = strrchr(files->items[i], '/') + 1;
		len = strlen(base);
		if (len > 9 && strcmp(base + len - 9, ".story.md") == 0)
			len -= 9;
		else
			len -= 3;
		if (strlen(ids->items[i]) == len &&
		    strncmp(base, ids->items[i], len) == 0)
			ids->items[i][0] = '\0';
	}
}

/*
 * The v4-named story files of dir (docs/stories.md "Discovery"): a glob
 * of its *.story.md files when they are all so named, else each file
 * listed, with its id where the name does not give it (2.6-story.md is
 * 2.6).  bare: names without "story" count too (1.1.md, 1-1.md: in a
 * v6 folder); else only N.M.story.md, N.M-story.md, N.M_story.md.  Two
 * files with one number: the first (version order) is taken, the other
 * passed over.  *n: how many; 0 leaves out untouched.
 */
static int
v4_take(struct discovery *out, const char *dir, bool bare, size_t *n)
{
	struct strlist all;
	struct v4_sorted vs;
	char *pattern = NULL;
	size_t i;
	int rc = 0;

	memset(&all, 0, sizeof(all));
	memset(&vs, 0, sizeof(vs));
	*n = 0;
	if (asprintf(&pattern, "%s/*.md", dir) < 0)
		return SC_EOS;
	glob_files(pattern, &all, true);
	if ((rc = v4_sort(&vs, out, &all, bare)) < 0)
		goto out;
	*n = vs.files.n;
	if (vs.files.n == 0)
		goto out;
	for (i = 0; i < vs.other.n; i++)
		passed_add(out, "%s (not a story's name)", vs.other.items[i]);
	if (vs.nstory == vs.files.n && vs.ndup == 0) {
		free(pattern);
		if (asprintf(&pattern, "%s/*.story.md", dir) < 0) {
			pattern = NULL;
			rc = SC_EOS;
			goto out;
		}
		out->glob = pattern;
		pattern = NULL;
		goto out;
	}
	v4_ids_trim(&vs.files, &vs.ids);
	out->files = vs.files;
	out->ids = vs.ids;
	memset(&vs.files, 0, sizeof(vs.files));
	memset(&vs.ids, 0, sizeof(vs.ids));
out:
	strlist_release(&all);
	v4_sorted_release(&vs);
	free(pattern);
	return rc;
}

/* --- BMAD v6 --------------------------------------------------------- */

/* A sprint-status.yaml found, and what pointed there. */
struct cand {
	char *path;
	char why[160];
};

static int
cand_add(
    struct cand *c, size_t *n, size_t cap, const char *path, const char *why)
{
	size_t i;

	if (*n >= cap || !is_file(path))
		return 0;
	for (i = 0; i < *n; i++)
		if (strcmp(c[i].path, path) == 0)
			return 0;
	if ((c[*n].path = strdup(path)) == NULL)
		return SC_EOS;
	snprintf(c[*n].why, sizeof(c[*n].why), "%s", why);
	(*n)++;
	return 0;
}

/* Every sprint-status.yaml of pattern (a "*" one folder down). */
static int
cand_glob(
    struct cand *c, size_t *n, size_t cap, const char *pattern, const char *why)
{
	struct strlist m;
	size_t i;
	int rc = 0;

	memset(&m, 0, sizeof(m));
	if (strchr(pattern, '*') == NULL)
		return cand_add(c, n, cap, pattern, why);
	glob_files(pattern, &m, true);
	for (i = 0; rc == 0 && i < m.n; i++)
		rc = cand_add(c, n, cap, m.items[i], why);
	strlist_release(&m);
	return rc;
}

#define V6_CANDS 32

/* Every sprint-status.yaml the config's folders or BMAD's usual places
 * hold, in the order they are preferred. */
static int
v6_gather(struct cand *c, size_t *n, char *const *dirs)
{
	char path[256], why[160];
	size_t k;
	int rc = 0;

	for (k = 0; rc == 0 && k < V6_NKEYS; k++) {
		if (dirs[k] == NULL)
			continue;
		snprintf(path, sizeof(path), "%s/sprint-status.yaml", dirs[k]);
		snprintf(why, sizeof(why), "%s in %s", v6_keys[k], V6_CONFIG);
		rc = cand_add(c, n, V6_CANDS, path, why);
	}
	for (k = 0; rc == 0 && k < 2; k++) {
		if (dirs[k] == NULL)
			continue;
		snprintf(
		    path, sizeof(path), "%s/*/sprint-status.yaml", dirs[k]);
		snprintf(why, sizeof(why), "a folder below %s in %s",
		    v6_keys[k], V6_CONFIG);
		rc = cand_glob(c, n, V6_CANDS, path, why);
	}
	for (k = 0; rc == 0 && v6_places[k].path != NULL; k++)
		rc = cand_glob(
		    c, n, V6_CANDS, v6_places[k].path, v6_places[k].why);
	return rc;
}

/* Rule 1: the first sprint status found is the project's; the others
 * are passed over. */
static int
v6_take_status(
    struct discovery *out, const struct cand *c, size_t n, char *const *dirs)
{
	const char *first;
	size_t i;
	int nfirst;

	out->layout = LAYOUT_BMAD_V6;
	if ((out->sprint_status = strdup(c[0].path)) == NULL)
		return SC_EOS;
	snprintf(out->from, sizeof(out->from), "%s", c[0].path);
	/* the config names a folder without one: say so */
	if (dirs[0] != NULL && strstr(c[0].why, v6_keys[0]) == NULL)
		snprintf(out->source, sizeof(out->source),
		    "%s; %s's implementation_artifacts %s has none", c[0].why,
		    V6_CONFIG, dirs[0]);
	else
		snprintf(out->source, sizeof(out->source), "%s", c[0].why);
	/* why passed over: where it is, and what comes first */
	first = strstr(c[0].why, " in " V6_CONFIG);
	nfirst =
	    first != NULL ? (int)(first - c[0].why) : (int)strlen(c[0].why);
	for (i = 1; i < n; i++)
		passed_add(out, "%s (%s: %.*s comes first)", c[i].path,
		    c[i].why, nfirst, c[0].why);
	return 0;
}

/* Rule 2: no sprint status: v4 names in a v6 folder, or its stories/. */
static int
v6_take_v4(struct discovery *out, char *const *dirs, bool *found)
{
	char path[256];
	const char *dir;
	size_t i, k, nv4 = 0;
	int rc;

	for (k = 0; k < V6_NKEYS + 1 && !*found; k++) {
		dir = k == V6_NKEYS ? V6_DEFAULT_DIR : dirs[k];
		if (dir == NULL || k == 2) /* not the whole output folder */
			continue;
		for (i = 0; i < 2 && !*found; i++) {
			snprintf(path, sizeof(path), "%s%s", dir,
			    i == 0 ? "" : "/stories");
			if (!is_dir(path))
				continue;
			if ((rc = v4_take(out, path, true, &nv4)) < 0)
				return rc;
			if (nv4 == 0)
				continue;
			*found = true;
			out->layout = LAYOUT_BMAD_V6;
			snprintf(out->from, sizeof(out->from), "%s", path);
			if (k < V6_NKEYS)
				snprintf(out->source, sizeof(out->source),
				    "%s in %s; no sprint-status.yaml, %zu "
				    "files with v4 names",
				    v6_keys[k], V6_CONFIG, nv4);
			else
				snprintf(out->source, sizeof(out->source),
				    "BMAD's default place; no "
				    "sprint-status.yaml, %zu files with v4 "
				    "names",
				    nv4);
		}
	}
	return 0;
}

/*
 * Rules 1 and 2.  dirs: the folders of _bmad/bmm/config.yaml (NULL
 * when not set).
 */
static int
discover_v6(struct discovery *out, char *const *dirs, bool *found)
{
	struct cand c[V6_CANDS];
	size_t n = 0, i;
	int rc;

	memset(c, 0, sizeof(c));
	*found = false;
	rc = v6_gather(c, &n, dirs);
	if (rc == 0 && n > 0) {
		*found = true;
		rc = v6_take_status(out, c, n, dirs);
	} else if (rc == 0) {
		rc = v6_take_v4(out, dirs, found);
	}
	for (i = 0; i < n; i++)
		free(c[i].path);
	return rc;
}

/* --- BMAD v4 --------------------------------------------------------- */

/* Rule 3. */
static int
discover_v4(struct discovery *out, bool *found)
{
	char *loc = config_dir(V4_CORE_CONFIG, "devStoryLocation");
	char *any = NULL;
	bool core = is_file(V4_CORE_CONFIG);
	const char *dir = loc != NULL ? loc : V4_DEFAULT_LOCATION;
	size_t nstory = 0;
	int rc = 0;

	*found = false;
	if ((rc = v4_take(out, dir, false, &nstory)) < 0)
		goto out;
	if (!core && nstory == 0)
		goto out;
	*found = true;
	out->layout = LAYOUT_BMAD_V4;
	if (core)
		snprintf(out->from, sizeof(out->from), "%s%s", V4_CORE_CONFIG,
		    loc != NULL ? " (devStoryLocation)" : "");
	else if (out->files.n > 0) /* listed: 2.6-story.md among them */
		snprintf(out->from, sizeof(out->from), "%s", dir);
	else
		snprintf(out->from, sizeof(out->from), "%s/*.story.md", dir);
	if (asprintf(&any, "%s/*.md", dir) < 0) {
		any = NULL;
		rc = SC_EOS;
		goto out;
	}
	/* stories named otherwise ("1.1.login.md") are taken as they are */
	if (nstory == 0 && glob_files(any, NULL, false) > 0) {
		out->glob = any;
		any = NULL;
		goto out;
	}
	if (nstory == 0 && asprintf(&out->glob, "%s/*.story.md", dir) < 0) {
		out->glob = NULL;
		rc = SC_EOS;
		goto out;
	}
out:
	free(any);
	free(loc);
	return rc;
}

int
discover_stories(struct discovery *out, struct sc_err *err)
{
	char *dirs[V6_NKEYS] = {NULL, NULL, NULL};
	bool found = false;
	size_t i;
	int rc = 0;

	memset(out, 0, sizeof(*out));
	for (i = 0; i < V6_NKEYS; i++)
		dirs[i] = config_dir(V6_CONFIG, v6_keys[i]);
	if ((rc = discover_v6(out, dirs, &found)) < 0 || found)
		goto out;
	if ((rc = discover_v4(out, &found)) < 0 || found)
		goto out;
	out->layout = LAYOUT_PLAIN;
	out->passed[0] = '\0'; /* nothing taken, nothing passed over */
	out->npassed = 0;
	if (glob_files("docs/stories/*.md", &out->files, false) == 0 &&
	    (out->glob = strdup("docs/stories/*.md")) == NULL)
		rc = SC_EOS;
out:
	passed_end(out);
	for (i = 0; i < V6_NKEYS; i++)
		free(dirs[i]);
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
	strlist_release(&d->ids);
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
