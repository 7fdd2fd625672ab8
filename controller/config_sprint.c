/* config_sprint.c - see config_int.h: stories read from a BMAD
 * sprint-status.yaml (docs/stories.md "BMAD v6"). */
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

#include "controller/config_int.h"
#include "controller/presets.h"
#include "state/fsutil.h"
#include "state/gitwork.h"
#include "strategies/schedule.h"
#include "strategies/sprintstatus.h"
#include "strategies/suggest.h"
#include "strategies/text.h"

/*
 * Where the sprint's story files are (docs/stories.md "BMAD v6"): its
 * story_location, "{project-root}/" dropped and relative to the root
 * (an absolute path inside the root made relative), when that is a
 * directory inside the root; otherwise the yaml's own directory.  *out
 * is "" for the root itself.
 */
static int
sprint_dir(char **out, const struct config *c, const char *loc)
{
	const char *p = loc, *slash;
	char *norm = NULL, *full = NULL;
	struct stat st;
	size_t n = strlen(c->root);

	*out = NULL;
	if (p != NULL && strncmp(p, "{project-root}", 14) == 0)
		p += 14;
	else if (p != NULL && p[0] == '/')
		p = strncmp(p, c->root, n) == 0 && (p[n] == '/' || !p[n])
		    ? p + n
		    : NULL;
	while (p != NULL && *p == '/')
		p++;
	/* another placeholder ("{output_folder}") cannot be resolved */
	if (p != NULL && strchr(p, '{') == NULL) {
		if (p[strspn(p, "./")] == '\0' && strstr(p, "..") == NULL)
			norm = strdup(""); /* "", ".", "./": the root */
		else if (config_path_normalize(&norm, p) == -2)
			return -1;
		if (norm != NULL && norm[0] != '\0' &&
		    (full = fsutil_path_join(c->root, norm)) == NULL) {
			free(norm);
			return -1;
		}
		if (norm != NULL &&
		    (norm[0] == '\0' ||
			(stat(full, &st) == 0 && S_ISDIR(st.st_mode)))) {
			free(full);
			*out = norm;
			return 0;
		}
		free(full);
		free(norm);
	}
	slash = strrchr(c->sprint_status, '/');
	*out = slash != NULL
	    ? strndup(c->sprint_status, (size_t)(slash - c->sprint_status))
	    : strdup("");
	return *out != NULL ? 0 : -1;
}

/* One entry of the sprint status: listed when its file exists, else
 * skipped with the reason (docs/stories.md). */
static int
sprint_entry_add(struct loader *ld, struct config *c, size_t *alloc,
    const char *dir, const struct sprint_entry *e)
{
	static const char key[] = "stories.sprint_status";
	struct story_conf *s;
	struct stat st;
	char *file = NULL, *full = NULL, *why = NULL, shown[KEY_MAX];
	int rc = 0;

	if (!config_id_valid(e->key)) {
		config_shown(shown, sizeof(shown), e->key);
		return config_fail(ld, key,
		    "%s: story key \"%s\" is not a valid story id: ids "
		    "match [A-Za-z0-9][A-Za-z0-9._-]*",
		    c->sprint_status, shown);
	}
	if (asprintf(&file, "%s%s%s.md", dir, dir[0] ? "/" : "", e->key) < 0)
		return config_fail_nomem(ld);
	full = fsutil_path_join(c->root, file);
	if (full == NULL) {
		rc = config_fail_nomem(ld);
		goto out;
	}
	if (config_story_find_file(c, file) >= 0)
		goto out; /* listed explicitly: its entry wins */
	if (stat(full, &st) != 0 || !S_ISREG(st.st_mode)) {
		config_shown(shown, sizeof(shown), e->status);
		if (strcmp(e->status, "backlog") == 0)
			rc = asprintf(&why,
			    "%s: backlog, no story file yet (%s)", e->key,
			    file);
		else
			rc =
			    asprintf(&why, "%s: %s, but its file %s is missing",
				e->key, shown, file);
		if (rc < 0)
			why = NULL; /* asprintf leaves it undefined */
		if (rc < 0 || strlist_push(&c->stories_skipped, why) < 0)
			rc = config_fail_nomem(ld);
		else
			rc = 0;
		goto out;
	}
	s = config_story_add(c, alloc);
	if (s == NULL) {
		rc = config_fail_nomem(ld);
		goto out;
	}
	s->file = file;
	file = NULL;
	if (config_story_set_id(s, e->key, strlen(e->key)) < 0) {
		rc = config_fail_nomem(ld);
		goto out;
	}
	snprintf(s->sprint_status, sizeof(s->sprint_status), "%s", e->status);
out:
	free(why);
	free(full);
	free(file);
	return rc;
}

/* stories.sprint_status: BMAD v6's story entries, in the file's order
 * (docs/stories.md "BMAD v6"). */
int
config_expand_sprint(struct loader *ld, struct config *c, size_t *alloc)
{
	static const char key[] = "stories.sprint_status";
	struct sprint_status ss;
	struct sc_err e;
	char *path = NULL, *text = NULL, *dir = NULL;
	size_t len = 0, i;
	int rc = 0;

	memset(&ss, 0, sizeof(ss));
	if (c->sprint_status == NULL)
		return 0;
	path = fsutil_path_join(c->root, c->sprint_status);
	if (path == NULL)
		return config_fail_nomem(ld);
	if ((rc = config_read_file(
		 ld, key, c->sprint_status, path, &text, &len)) != 0)
		goto out;
	err_clear(&e);
	rc = sprint_status_parse(&ss, text, len, &e);
	if (rc == SC_EOS) {
		rc = config_fail_nomem(ld);
		goto out;
	}
	if (rc < 0) {
		rc = config_fail(ld, key, "%s: %s", c->sprint_status, e.msg);
		goto out;
	}
	if (sprint_dir(&dir, c, ss.story_location) < 0) {
		rc = config_fail_nomem(ld);
		goto out;
	}
	for (i = 0; rc == 0 && i < ss.n; i++)
		rc = sprint_entry_add(ld, c, alloc, dir, &ss.entries[i]);
out:
	sprint_status_release(&ss);
	free(dir);
	free(text);
	free(path);
	return rc;
}
