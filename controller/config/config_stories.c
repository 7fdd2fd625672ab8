/* config_stories.c - see config_int.h: the story list (files, glob,
 * ids, dependencies and their one cycle check), docs/stories.md. */
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "controller/config/config_int.h"
#include "state/db.h"
#include "controller/config/presets.h"
#include "state/fsutil.h"
#include "state/gitwork.h"
#include "strategies/schedule.h"
#include "strategies/sprintstatus.h"
#include "strategies/suggest.h"
#include "strategies/text.h"

/*
 * Lexically normalise a path relative to the root: drop "." and empty
 * components, resolve ".." against earlier ones.  -1 when in is empty,
 * absolute, names the root itself or climbs out of it, -2 when out of
 * memory (*out NULL on failure).
 */
int
config_path_normalize(char **out, const char *in)
{
	const char *p = in, *seg;
	char *buf = NULL, *slash;
	size_t o = 0, len;
	int rc = -1;

	*out = NULL;
	if (in[0] == '\0' || in[0] == '/')
		goto out;
	buf = malloc(strlen(in) + 1);
	if (buf == NULL) {
		rc = -2;
		goto out;
	}
	while (*p != '\0') {
		seg = p;
		while (*p != '\0' && *p != '/')
			p++;
		len = (size_t)(p - seg);
		while (*p == '/')
			p++;
		if (len == 0 || (len == 1 && seg[0] == '.'))
			continue;
		if (len == 2 && seg[0] == '.' && seg[1] == '.') {
			if (o == 0)
				goto out;
			buf[o] = '\0';
			slash = strrchr(buf, '/');
			o = slash != NULL ? (size_t)(slash - buf) : 0;
			continue;
		}
		if (o > 0)
			buf[o++] = '/';
		memcpy(buf + o, seg, len);
		o += len;
	}
	if (o == 0)
		goto out;
	buf[o] = '\0';
	*out = buf;
	buf = NULL;
	rc = 0;
out:
	free(buf);
	return rc;
}

bool
config_id_valid(const char *s)
{
	size_t i;
	char c;

	if (s == NULL || s[0] == '\0' || strlen(s) >= CONFIG_ID_MAX)
		return false;
	for (i = 0; s[i] != '\0'; i++) {
		c = s[i];
		if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
		    (c >= '0' && c <= '9'))
			continue;
		if (i > 0 && (c == '.' || c == '_' || c == '-'))
			continue;
		return false;
	}
	return true;
}

/* ---- stories ---- */

/*
 * The id goes in one block with the file: two blocks of a few bytes were
 * 64 bytes a story where one is 32, kept all night for each of a large
 * batch's stories (docs/performance.md#per-story).  id may point into
 * s->file (a globbed story's id is its file's name), so the old block is
 * freed only once both are copied.
 */
int
config_story_set_id(struct story_conf *s, const char *id, size_t len)
{
	size_t flen = strlen(s->file);
	char *block;

	if (len >= CONFIG_ID_MAX)
		len = CONFIG_ID_MAX - 1;
	if ((block = malloc(flen + 1 + len + 1)) == NULL)
		return -1;
	memcpy(block, s->file, flen + 1);
	memcpy(block + flen + 1, id, len);
	block[flen + 1 + len] = '\0';
	free(s->file);
	s->file = block;
	s->id = block + flen + 1;
	return 0;
}

/* The id a file gets when the config gives none: its name without .md,
 * and without a ".story" before it: BMAD v4's 1.1.story.md is 1.1
 * (docs/stories.md "Ids").  -1 when out of memory. */
static int
id_from_file(struct story_conf *s)
{
	const char *base = strrchr(s->file, '/');
	size_t len;

	base = base != NULL ? base + 1 : s->file;
	len = strlen(base);
	if (len >= 3 && strcmp(base + len - 3, ".md") == 0) {
		len -= 3;
		if (len > 6 && strncmp(base + len - 6, ".story", 6) == 0)
			len -= 6;
	}
	return config_story_set_id(s, base, len);
}

struct story_conf *
config_story_add(struct config *c, size_t *alloc)
{
	struct story_conf *grown;
	size_t want;

	if (c->nstories == *alloc) {
		want = *alloc ? *alloc * 2 : 16;
		grown = realloc(c->stories, want * sizeof(*grown));
		if (grown == NULL)
			return NULL;
		c->stories = grown;
		*alloc = want;
	}
	memset(&c->stories[c->nstories], 0, sizeof(*c->stories));
	return &c->stories[c->nstories++];
}

int
config_story_find_file(const struct config *c, const char *file)
{
	size_t i;

	for (i = 0; i < c->nstories; i++)
		if (strcmp(c->stories[i].file, file) == 0)
			return (int)i;
	return -1;
}

static int
story_set_file(
    struct loader *ld, const char *key, struct story_conf *s, const char *file)
{
	char shown[KEY_MAX];
	int rc;

	config_shown(shown, sizeof(shown), file);
	if (file[0] == '/')
		return config_fail(ld, key,
		    "story file \"%s\" must be relative to "
		    "the project root",
		    shown);
	rc = config_path_normalize(&s->file, file);
	if (rc == -2)
		return config_fail_nomem(ld);
	if (rc < 0) {
		return config_fail(ld, key,
		    "story file \"%s\" is outside the project "
		    "root",
		    shown);
	}
	return 0;
}

static const char *const story_keys[] = {
    "file", "id", "depends_on", "include_dependency_result", NULL};

/* An entry object's "id", "depends_on" and "include_dependency_result",
 * once its file is known. */
static int
story_parse_fields(
    struct loader *ld, json_t *item, const char *key, struct story_conf *s)
{
	char fkey[KEY_MAX], shown[KEY_MAX];
	json_t *iv, *dv;
	int rc;

	iv = json_object_get(item, "id");
	if (iv != NULL) {
		config_key_join(fkey, key, "id");
		if (!json_is_string(iv))
			return config_wrong_type(ld, fkey, "a string", iv);
		if (!config_id_valid(json_string_value(iv))) {
			config_shown(
			    shown, sizeof(shown), json_string_value(iv));
			return config_fail(ld, fkey,
			    "invalid story id \"%s\" for %s: "
			    "ids match [A-Za-z0-9][A-Za-z0-9._-]* (at most "
			    "127 bytes)",
			    shown, s->file);
		}
		if (config_story_set_id(s, json_string_value(iv),
			strlen(json_string_value(iv))) < 0)
			return config_fail_nomem(ld);
	}
	dv = json_object_get(item, "depends_on");
	if (dv != NULL) {
		config_key_join(fkey, key, "depends_on");
		if ((rc = config_parse_strings(
			 ld, dv, fkey, &s->depends_on, false, true)) != 0)
			return rc;
	}
	return config_get_bool(ld, item, key, "include_dependency_result",
	    &s->include_dependency_result);
}

static int
parse_story(struct loader *ld, json_t *item, const char *key, struct config *c,
    size_t *alloc)
{
	struct story_conf *s;
	char fkey[KEY_MAX];
	json_t *fv;
	int rc;

	if (!json_is_string(item) && !json_is_object(item))
		return config_wrong_type(
		    ld, key, "a file name or an object", item);
	if (json_is_object(item) &&
	    (rc = config_check_keys(ld, item, key, story_keys)) != 0)
		return rc;
	fv = json_is_string(item) ? item : json_object_get(item, "file");
	config_key_join(fkey, key, "file");
	if (fv == NULL)
		return config_fail(ld, key, "needs a file");
	if (!json_is_string(fv))
		return config_wrong_type(ld, fkey, "a string", fv);
	if (json_string_length(fv) == 0)
		return config_fail(
		    ld, json_is_string(item) ? key : fkey, "must not be empty");
	s = config_story_add(c, alloc);
	if (s == NULL)
		return config_fail_nomem(ld);
	if ((rc = story_set_file(ld, key, s, json_string_value(fv))) != 0)
		return rc;
	if (config_story_find_file(c, s->file) != (int)c->nstories - 1)
		return config_fail(
		    ld, key, "story file %s is listed twice", s->file);
	if (id_from_file(s) < 0)
		return config_fail_nomem(ld);
	if (json_is_string(item))
		return 0;
	return story_parse_fields(ld, item, key, s);
}

/* Escape glob metacharacters of a literal path (the root). */
static char *
glob_escape(const char *s)
{
	char *out = malloc(strlen(s) * 2 + 1);
	size_t o = 0;

	if (out == NULL)
		return NULL;
	for (; *s != '\0'; s++) {
		if (strchr("*?[]\\", *s) != NULL)
			out[o++] = '\\';
		out[o++] = *s;
	}
	out[o] = '\0';
	return out;
}

static bool
has_dotdot(const char *s)
{
	const char *p = s;
	size_t len;

	while (*p != '\0') {
		len = strcspn(p, "/");
		if (len == 2 && p[0] == '.' && p[1] == '.')
			return true;
		p += len;
		while (*p == '/')
			p++;
	}
	return false;
}

static int
path_version_cmp(const void *a, const void *b)
{
	return strverscmp(*(char *const *)a, *(char *const *)b);
}

/* The glob's matches as stories, in g's order: directories, paths
 * outside the root and files already listed skipped. */
static int
glob_add_matches(
    struct loader *ld, struct config *c, size_t *alloc, const glob_t *g)
{
	struct story_conf *s;
	char *rel = NULL;
	const char *m;
	size_t i, skip, len;
	int rc = 0;

	len = strlen(c->root);
	skip = len + (len > 0 && c->root[len - 1] == '/' ? 0 : 1);
	for (i = 0; i < g->gl_pathc; i++) {
		m = g->gl_pathv[i];
		len = strlen(m);
		if (len <= skip || m[len - 1] == '/')
			continue;
		free(rel);
		rel = NULL;
		if (config_path_normalize(&rel, m + skip) == -2) {
			rc = config_fail_nomem(ld);
			goto out;
		}
		if (rel == NULL)
			continue;
		if (config_story_find_file(c, rel) >= 0)
			continue;
		s = config_story_add(c, alloc);
		if (s == NULL) {
			rc = config_fail_nomem(ld);
			goto out;
		}
		s->file = rel;
		rel = NULL;
		if (id_from_file(s) < 0) {
			rc = config_fail_nomem(ld);
			goto out;
		}
	}
out:
	free(rel);
	return rc;
}

static int
expand_glob(
    struct loader *ld, struct config *c, size_t *alloc, const char *gkey)
{
	glob_t g;
	char *root = NULL, *pattern = NULL;
	bool have_glob = false;
	int rc = 0, grc;

	memset(&g, 0, sizeof(g));
	if (c->stories_glob == NULL)
		goto out;
	if (c->stories_glob[0] == '/' || has_dotdot(c->stories_glob)) {
		rc = config_fail(ld, gkey,
		    "must be relative to the project "
		    "root and stay inside it, got \"%s\"",
		    c->stories_glob);
		goto out;
	}
	root = glob_escape(c->root);
	if (root != NULL)
		pattern = fsutil_path_join(root, c->stories_glob);
	if (pattern == NULL) {
		rc = config_fail_nomem(ld);
		goto out;
	}
	/* GLOB_MARK marks directories with a trailing '/': skipped by
	 * glob_add_matches(). */
	grc = glob(pattern, GLOB_MARK, NULL, &g);
	have_glob = true;
	if (grc == GLOB_NOMATCH)
		goto out;
	if (grc != 0) {
		rc = config_fail(ld, gkey, "cannot expand \"%s\"%s",
		    c->stories_glob,
		    grc == GLOB_NOSPACE ? ": out of memory"
					: ": a directory cannot be read");
		goto out;
	}
	/* in version order: BMAD's 1.2 before 1.10, story-9 before story-10
	 * (docs/configuration.md) */
	qsort(g.gl_pathv, g.gl_pathc, sizeof(*g.gl_pathv), path_version_cmp);
	rc = glob_add_matches(ld, c, alloc, &g);
out:
	if (have_glob)
		globfree(&g);
	free(root);
	free(pattern);
	return rc;
}

/* Where the stories came from: c->stories[0..nfiles) are the explicit
 * entries, [nfiles..nsprint) the sprint status's, the rest the glob's. */
struct story_src {
	const char *files_key; /* "stories" or "stories.files" */
	size_t nfiles, nsprint;
	const char *glob_key; /* "stories_glob" or "stories.glob" */
};

/* Where story i came from, for messages. */
static void
story_key(char *key, size_t i, const struct story_src *src)
{
	if (i < src->nfiles)
		config_key_index(key, src->files_key, i);
	else if (i < src->nsprint)
		snprintf(key, KEY_MAX, "stories.sprint_status");
	else
		snprintf(key, KEY_MAX, "%s", src->glob_key);
}

/* " (did you mean ID?)" for an unknown id, or "". */
static void
id_hint(char *buf, size_t cap, const struct config *c, const char *id)
{
	struct suggest sg;
	size_t i;
	int best;

	suggest_init(&sg, id);
	for (i = 0; i < c->nstories && i < INT_MAX; i++)
		suggest_add(&sg, c->stories[i].id, (int)i);
	best = suggest_best(&sg);
	if (best >= 0)
		snprintf(buf, cap, " (did you mean %s?)", c->stories[best].id);
	else
		buf[0] = '\0';
}

static int
check_stories(
    struct loader *ld, const struct config *c, const struct story_src *src)
{
	const struct story_conf *s;
	char key[KEY_MAX], shown[KEY_MAX], hint[160];
	int j;
	size_t i, k;

	for (i = 0; i < c->nstories; i++) {
		s = &c->stories[i];
		story_key(key, i, src);
		if (!config_id_valid(s->id)) {
			char file[256];
			config_shown(shown, sizeof(shown), s->id);
			config_shown(file, sizeof(file), s->file);
			return config_fail(ld, key,
			    "invalid story id \"%s\" for %s: "
			    "ids match [A-Za-z0-9][A-Za-z0-9._-]* (give an "
			    "\"id\" or rename the file)",
			    shown, file);
		}
		if (strlen(s->file) >= DB_FILE_MAX)
			return config_fail(ld, key,
			    "story %s: its file path is %zu bytes, longer than "
			    "the %d the record keeps (move the story up)",
			    s->id, strlen(s->file), DB_FILE_MAX - 1);
		j = config_story_index(c, s->id);
		if (j >= 0 && (size_t)j < i)
			return config_fail(ld, key,
			    "duplicate story id \"%s\" (%s and %s)", s->id,
			    c->stories[j].file, s->file);
	}
	for (i = 0; i < c->nstories; i++) {
		s = &c->stories[i];
		story_key(key, i, src);
		for (k = 0; k < s->depends_on.n; k++) {
			if (config_story_index(c, s->depends_on.items[k]) >= 0)
				continue;
			config_shown(
			    shown, sizeof(shown), s->depends_on.items[k]);
			id_hint(hint, sizeof(hint), c, s->depends_on.items[k]);
			return config_fail(ld, key,
			    "story %s depends on unknown story id \"%s\"%s",
			    s->id, shown, hint);
		}
	}
	return 0;
}

/* The dependency graph of c's stories for schedule_check_cycles() (an
 * unknown id has no edge: load_stories() reports it), then the check,
 * its message prefixed with file when there is one. */
static int
check_cycles(const struct config *c, const char *file, struct sc_err *err)
{
	struct sched_story *s = NULL;
	int *deps = NULL;
	size_t i, k, total = 0, used = 0;
	int j, rc = 0;

	if (c->nstories == 0)
		goto out;
	for (i = 0; i < c->nstories; i++)
		total += c->stories[i].depends_on.n;
	s = calloc(c->nstories, sizeof(*s));
	deps = calloc(total + 1, sizeof(*deps));
	if (s == NULL || deps == NULL) {
		rc = err_set(err, SC_EOS, "out of memory");
		goto out;
	}
	for (i = 0; i < c->nstories; i++) {
		const struct story_conf *sc = &c->stories[i];
		s[i].id = sc->id;
		s[i].deps = deps + used;
		for (k = 0; k < sc->depends_on.n; k++) {
			j = config_story_index(c, sc->depends_on.items[k]);
			if (j >= 0)
				deps[used + s[i].ndeps++] = j;
		}
		used += s[i].ndeps;
	}
	rc = schedule_check_cycles(s, c->nstories, err);
	if (rc == SC_EDATA && file != NULL)
		err_prefix(err, "%s", file);
out:
	free(s);
	free(deps);
	return rc;
}

int
config_check_cycles(const struct config *c, struct sc_err *err)
{
	return check_cycles(c, c->path, err);
}

int
config_story_index(const struct config *c, const char *id)
{
	size_t i;

	for (i = 0; i < c->nstories; i++)
		if (strcmp(c->stories[i].id, id) == 0)
			return (int)i;
	return -1;
}

static const char *const stories_keys[] = {
    "files", "glob", "sprint_status", "tasks_heading", "include_drafts", NULL};

/* "stories" as an object (docs/configuration.md "Stories"); *files is
 * its "files" array (NULL when absent). */
static int
parse_stories_object(
    struct loader *ld, json_t *v, struct config *c, json_t **files)
{
	char *sprint = NULL, shown[KEY_MAX];
	int rc;

	*files = json_object_get(v, "files");
	if ((rc = config_check_keys(ld, v, "stories", stories_keys)) != 0)
		return rc;
	if (*files != NULL && !json_is_array(*files))
		return config_wrong_type(
		    ld, "stories.files", "an array", *files);
	if ((rc = config_get_string(
		 ld, v, "stories", "glob", &c->stories_glob)) != 0 ||
	    (rc = config_get_string(
		 ld, v, "stories", "tasks_heading", &c->tasks_heading)) != 0 ||
	    (rc = config_get_bool(ld, v, "stories", "include_drafts",
		 &c->include_drafts)) != 0 ||
	    (rc = config_get_string(
		 ld, v, "stories", "sprint_status", &sprint)) != 0)
		return rc;
	if (sprint == NULL)
		return 0;
	config_shown(shown, sizeof(shown), sprint);
	if (sprint[0] == '/')
		rc = config_fail(ld, "stories.sprint_status",
		    "\"%s\" must be relative to the project root", shown);
	else if ((rc = config_path_normalize(&c->sprint_status, sprint)) == -2)
		rc = config_fail_nomem(ld);
	else if (rc < 0)
		rc = config_fail(ld, "stories.sprint_status",
		    "\"%s\" is outside the project root", shown);
	free(sprint);
	return rc;
}

/*
 * "stories": an array of entries, or an object with "files" (the same
 * entries), "glob", "sprint_status", "tasks_heading" and
 * "include_drafts"; the top-level "stories_glob" too.  Explicit entries
 * first, then the sprint status's, then the glob's.
 */
int
config_parse_stories(struct loader *ld, json_t *root, struct config *c)
{
	struct story_src src = {"stories", 0, 0, "stories_glob"};
	json_t *v, *files, *item;
	char key[KEY_MAX];
	size_t alloc = 0, i;
	int rc;

	files = v = json_object_get(root, "stories");
	if (v != NULL && json_is_object(v)) {
		if ((rc = parse_stories_object(ld, v, c, &files)) != 0)
			return rc;
		src.files_key = "stories.files";
		if (c->stories_glob != NULL)
			src.glob_key = "stories.glob";
	} else if (v != NULL && !json_is_array(v)) {
		return config_wrong_type(
		    ld, "stories", "an array or an object", v);
	}
	if (c->stories_glob != NULL &&
	    json_object_get(root, "stories_glob") != NULL)
		return config_fail(ld, "stories_glob",
		    "give the pattern once, as stories.glob or as "
		    "stories_glob");
	if (files != NULL) {
		json_array_foreach(files, i, item)
		{
			config_key_index(key, src.files_key, i);
			if ((rc = parse_story(ld, item, key, c, &alloc)) != 0)
				return rc;
		}
	}
	src.nfiles = c->nstories;
	if ((rc = config_get_string(
		 ld, root, NULL, "stories_glob", &c->stories_glob)) != 0 ||
	    (rc = config_expand_sprint(ld, c, &alloc)) != 0)
		return rc;
	src.nsprint = c->nstories;
	if ((rc = expand_glob(ld, c, &alloc, src.glob_key)) != 0 ||
	    (rc = check_stories(ld, c, &src)) != 0)
		return rc;
	return check_cycles(c, ld->file, ld->err);
}
