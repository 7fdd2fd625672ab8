/*
 * gitwork_filters.c - whether a checkout would run any filter
 * (docs/git-work.md#checkout-filters).  libgit2 looks up the attributes
 * of every file it writes, to choose its filters, and each lookup
 * resolves the file's real path: on a tree of 20,000 files that is
 * 160,000 readlink calls and about a third of a new worktree's system
 * time (docs/performance.md#worktrees-kept-per-slot).  The only filters
 * libgit2 runs are its own crlf and ident (storyctl registers none), and
 * they are chosen by the gitattributes files and core.autocrlf and
 * core.eol alone; when none of those exists, a checkout with
 * disable_filters set writes the same bytes without the
 * lookups.  Measured: tests/unit/test_gitwork.c checks the rule, and
 * test_worktree_slots.sh the bytes of a checkout with attributes.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <git2.h>

#include "state/gitwork_int.h"

static int
attr_file_cb(const char *root, const git_tree_entry *e, void *payload)
{
	(void)root;
	if (strcmp(git_tree_entry_name(e), ".gitattributes") == 0) {
		*(bool *)payload = true;
		return -1; /* found: the walk stops */
	}
	return 0;
}

/* Whether file exists (a path of dir and name). */
static bool
exists_in(const char *dir, const char *name)
{
	char path[4096];

	if (dir == NULL || dir[0] == '\0' ||
	    (size_t)snprintf(path, sizeof(path), "%s/%s", dir, name) >=
		sizeof(path))
		return false;
	return access(path, F_OK) == 0;
}

/* An attributes file outside the tree: the repository's own, the one
 * core.attributesFile names (or the user's default), the system's. */
static bool
attr_files_outside(git_repository *repo, git_config *cfg)
{
	git_buf b = GIT_BUF_INIT;
	const char *xdg = getenv("XDG_CONFIG_HOME"), *home = getenv("HOME");
	bool found =
	    exists_in(git_repository_commondir(repo), "info/attributes");

	if (!found && git_config_get_path(&b, cfg, "core.attributesfile") == 0)
		found = access(b.ptr, F_OK) == 0;
	else if (!found && xdg != NULL && xdg[0] != '\0')
		found = exists_in(xdg, "git/attributes");
	else if (!found)
		found = exists_in(home, ".config/git/attributes");
	git_buf_dispose(&b);
	if (!found && git_config_find_system(&b) == 0) {
		/* the system attributes file sits beside the system config */
		char *slash = strrchr(b.ptr, '/');
		if (slash != NULL) {
			*slash = '\0';
			found = exists_in(b.ptr, "gitattributes");
		}
	}
	git_buf_dispose(&b);
	return found;
}

/* core.autocrlf (unless false) or core.eol set: crlf may apply. */
static bool
eol_config(git_config *cfg)
{
	git_config_entry *e = NULL;
	int on = 0;
	bool set;

	if (git_config_get_entry(&e, cfg, "core.eol") == 0) {
		git_config_entry_free(e);
		return true;
	}
	if (git_config_get_entry(&e, cfg, "core.autocrlf") != 0)
		return false;
	/* "input", "true" or anything not false */
	set = git_config_parse_bool(&on, e->value) != 0 || on;
	git_config_entry_free(e);
	return set;
}

bool
gitwork_no_filters(git_repository *repo, const git_oid *commit)
{
	git_config *cfg = NULL;
	git_commit *c = NULL;
	git_tree *tree = NULL;
	bool found = true;

	if (git_repository_config_snapshot(&cfg, repo) < 0 ||
	    git_commit_lookup(&c, repo, commit) < 0 ||
	    git_commit_tree(&tree, c) < 0)
		goto out;
	found = eol_config(cfg) || attr_files_outside(repo, cfg);
	/* a walk cut short by the callback is no error */
	if (!found &&
	    git_tree_walk(tree, GIT_TREEWALK_PRE, attr_file_cb, &found) < 0 &&
	    !found)
		found = true;
out:
	git_tree_free(tree);
	git_commit_free(c);
	git_config_free(cfg);
	return !found;
}
