/*
 * config_worktree.c - the `worktree` section
 * (docs/configuration.md#worktree): what a -j N slot's worktree gets
 * besides its checkout, a setup command and copies of ignored files
 * (docs/git-work.md#the-life-of-a-slots-worktree).
 */
#include <stdlib.h>
#include <string.h>

#include "controller/config/config_int.h"

static const char *const worktree_keys[] = {"setup", "setup_on", "copy", NULL};

/* setup_on: when the setup runs, "create" and/or "switch". */
static int
parse_setup_on(struct loader *ld, json_t *v, struct worktree_conf *w)
{
	struct strlist on = {0};
	size_t i;
	int rc;

	rc = config_parse_strings(ld, v, "worktree.setup_on", &on, true, true);
	if (rc != 0)
		goto out;
	w->setup_on_create = false;
	for (i = 0; i < on.n && rc == 0; i++) {
		if (strcmp(on.items[i], "create") == 0)
			w->setup_on_create = true;
		else if (strcmp(on.items[i], "switch") == 0)
			w->setup_on_switch = true;
		else
			rc = config_fail(ld, "worktree.setup_on",
			    "\"%s\" is not \"create\" or \"switch\"",
			    on.items[i]);
	}
out:
	strlist_release(&on);
	return rc;
}

/* A copy glob names files of the project: relative, never above the
 * root (docs/configuration.md#worktree). */
static int
check_copy(struct loader *ld, const struct strlist *copy)
{
	const char *g;
	size_t i;

	for (i = 0; i < copy->n; i++) {
		g = copy->items[i];
		if (g[0] == '/' || strcmp(g, "..") == 0 ||
		    strncmp(g, "../", 3) == 0 || strstr(g, "/../") != NULL ||
		    (strlen(g) >= 3 && strcmp(g + strlen(g) - 3, "/..") == 0))
			return config_fail(ld, "worktree.copy",
			    "\"%s\" must be relative to the project root and "
			    "stay inside it",
			    g);
		if (strcmp(g, ".git") == 0 || strncmp(g, ".git/", 5) == 0)
			return config_fail(ld, "worktree.copy",
			    "\"%s\" names git's own files", g);
	}
	return 0;
}

int
config_parse_worktree(struct loader *ld, json_t *v, struct config *c)
{
	struct worktree_conf *w = &c->worktree;
	json_t *x;
	int rc = 0;

	w->setup_on_create = true;
	if (v == NULL)
		goto out;
	if ((rc = config_want_object(ld, v, "worktree")) != 0 ||
	    (rc = config_check_keys(ld, v, "worktree", worktree_keys)) != 0)
		goto out;
	if ((x = json_object_get(v, "setup")) != NULL &&
	    (rc = config_parse_argv(ld, x, "worktree.setup", &w->setup)) != 0)
		goto out;
	if ((x = json_object_get(v, "setup_on")) != NULL &&
	    (rc = parse_setup_on(ld, x, w)) != 0)
		goto out;
	if ((x = json_object_get(v, "copy")) != NULL &&
	    ((rc = config_parse_strings(
		  ld, x, "worktree.copy", &w->copy, false, true)) != 0 ||
		(rc = check_copy(ld, &w->copy)) != 0))
		goto out;
out:
	return rc;
}

void
config_worktree_release(struct worktree_conf *w)
{
	if (w == NULL)
		return;
	strlist_release(&w->setup);
	strlist_release(&w->copy);
	memset(w, 0, sizeof(*w));
}
