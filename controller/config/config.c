/*
 * config.c - see config.h: the whole file (read, resolve paths, load,
 * defaults, find, release); the sections are read by config_*.c
 * (config_int.h).
 *
 * The loader walks the JSON tree section by section.  Every object is
 * first checked against its list of allowed keys (so a typo is an error
 * naming the full key path), then each key is read with a getter that
 * checks the type and the range and leaves the default in place when the
 * key is absent.  Messages are "FILE: KEY: what is wrong".
 */
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
#include "controller/config/presets.h"
#include "state/fsutil.h"
#include "state/gitwork.h"
#include "strategies/schedule.h"
#include "strategies/sprintstatus.h"
#include "strategies/suggest.h"
#include "strategies/text.h"

/* ---- the whole file ---- */

static void
config_init(struct config *c)
{
	memset(c, 0, sizeof(*c));
	policy_init_default(&c->policy);
	config_agent_init(&c->agents[ROLE_PRIMARY]);
	config_agent_init(&c->agents[ROLE_FALLBACK]);
	c->review.retries = 2;
	c->breaker.cooldown_s = 1800;
	config_sandbox_init(&c->sandbox);
}

/*
 * The whole file at path (at most CONFIG_MAX_BYTES), NUL-terminated.
 * Messages name key and shown when given (a file the config names:
 * "FILE: stories.sprint_status: docs/x.yaml: cannot open: ..."), else
 * the config itself.
 */
int
config_read_file(struct loader *ld, const char *key, const char *shown,
    const char *path, char **out, size_t *out_len)
{
	struct stat st;
	char *buf = NULL;
	const char *sep = shown != NULL ? ": " : "";
	size_t len = 0;
	ssize_t n;
	int fd = -1, rc = 0;

	if (shown == NULL)
		shown = "";
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0 || fstat(fd, &st) < 0) {
		rc = config_fail(ld, key, "%s%scannot open: %s", shown, sep,
		    strerror(errno));
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		rc = config_fail(ld, key, "%s%snot a regular file", shown, sep);
		goto out;
	}
	if (st.st_size > CONFIG_MAX_BYTES) {
		rc = config_fail(ld, key, "%s%stoo large (more than %d bytes)",
		    shown, sep, CONFIG_MAX_BYTES);
		goto out;
	}
	buf = malloc((size_t)st.st_size + 1);
	if (buf == NULL) {
		rc = config_fail_nomem(ld);
		goto out;
	}
	while (len < (size_t)st.st_size) {
		n = read(fd, buf + len, (size_t)st.st_size - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			rc = config_fail(ld, key, "%s%scannot read: %s", shown,
			    sep, strerror(errno));
			goto out;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	buf[len] = '\0';
	*out = buf;
	*out_len = len;
	buf = NULL;
out:
	if (fd >= 0)
		close(fd);
	free(buf);
	return rc;
}

/* path and root, absolute; root resolved, the file name kept as given
 * so that a symlinked storyctl.json still names the directory it is in. */
static int
resolve_paths(struct loader *ld, struct config *c, const char *path)
{
	const char *slash = strrchr(path, '/');
	char *dir = NULL;
	int rc = 0;

	if (slash == NULL)
		dir = strdup(".");
	else if (slash == path)
		dir = strdup("/");
	else
		dir = strndup(path, (size_t)(slash - path));
	if (dir == NULL) {
		rc = config_fail_nomem(ld);
		goto out;
	}
	c->root = realpath(dir, NULL);
	if (c->root == NULL) {
		rc = config_fail(ld, NULL, "cannot resolve its directory: %s",
		    strerror(errno));
		goto out;
	}
	c->path = fsutil_path_join(c->root, slash != NULL ? slash + 1 : path);
	if (c->path == NULL)
		rc = config_fail_nomem(ld);
out:
	free(dir);
	return rc;
}

static const char *const top_keys[] = {"stories", "stories_glob", "prompt",
    "agents", "policy", "gates", "review", "breaker", "budget", "git", "state",
    "verify", "notify", "executor", "sandbox", "worktree", NULL};

int
config_load(struct config *out, const char *path, struct sc_err *err)
{
	struct loader ld = {path, err};
	json_error_t jerr;
	json_t *root = NULL;
	char *text = NULL;
	size_t len = 0;
	int rc = 0;

	config_init(out);
	if ((rc = config_read_file(&ld, NULL, NULL, path, &text, &len)) != 0)
		goto out;
	/* Duplicate keys are rejected: the second would silently win. */
	root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
	if (root == NULL) {
		rc = err_set(err, SC_EDATA, "%s:%d:%d: %s", path, jerr.line,
		    jerr.column, jerr.text);
		goto out;
	}
	if (!json_is_object(root)) {
		rc = config_fail(&ld, NULL, "expected a JSON object, got %s",
		    config_type_word(root));
		goto out;
	}
	if ((rc = resolve_paths(&ld, out, path)) != 0)
		goto out;
	out->git.state_branch = strdup("storyctl/state");
	if (out->git.state_branch == NULL) {
		rc = config_fail_nomem(&ld);
		goto out;
	}
	if ((rc = config_check_keys(&ld, root, NULL, top_keys)) != 0 ||
	    (rc = config_get_string(&ld, root, NULL, "prompt", &out->prompt)) !=
		0 ||
	    /* before the agents: theirs start from it */
	    (rc = config_parse_sandbox(
		 &ld, json_object_get(root, "sandbox"), out)) != 0 ||
	    (rc = config_parse_agents(
		 &ld, json_object_get(root, "agents"), out)) != 0 ||
	    (rc = config_parse_policy(
		 &ld, json_object_get(root, "policy"), &out->policy)) != 0 ||
	    (rc = config_parse_gates(
		 &ld, json_object_get(root, "gates"), out)) != 0 ||
	    (rc = config_parse_review(
		 &ld, json_object_get(root, "review"), &out->review)) != 0 ||
	    (rc = config_parse_small_sections(&ld, root, out)) != 0 ||
	    (rc = config_parse_notify(
		 &ld, json_object_get(root, "notify"), out)) != 0 ||
	    (rc = config_parse_executor(
		 &ld, json_object_get(root, "executor"), out)) != 0 ||
	    (rc = config_parse_worktree(
		 &ld, json_object_get(root, "worktree"), out)) != 0 ||
	    (rc = config_parse_stories(&ld, root, out)) != 0)
		goto out;
out:
	json_decref(root);
	free(text);
	if (rc != 0)
		config_release(out);
	return rc;
}

int
config_defaults(struct config *out, const char *root, struct sc_err *err)
{
	int rc = 0;

	config_init(out);
	out->root = realpath(root, NULL);
	if (out->root == NULL) {
		rc = err_set(err, SC_EOS, "%s: cannot resolve: %s", root,
		    strerror(errno));
		goto out;
	}
	out->git.state_branch = strdup("storyctl/state");
	out->state_dir = fsutil_path_join(out->root, ".storyctl");
	if (out->git.state_branch == NULL || out->state_dir == NULL ||
	    config_agents_default(out) < 0) {
		rc = err_set(err, SC_EOS, "out of memory");
		goto out;
	}
out:
	if (rc != 0)
		config_release(out);
	return rc;
}

int
config_find(char **out_path, const char *start_dir, struct sc_err *err)
{
	struct stat st;
	char *dir = NULL, *candidate = NULL, *slash;
	int rc = 0;

	*out_path = NULL;
	dir = realpath(start_dir, NULL);
	if (dir == NULL) {
		rc = err_set(err, SC_EOS, "%s: cannot resolve: %s", start_dir,
		    strerror(errno));
		goto out;
	}
	for (;;) {
		candidate = fsutil_path_join(dir, CONFIG_FILE_NAME);
		if (candidate == NULL) {
			rc = err_set(err, SC_EOS, "out of memory");
			goto out;
		}
		if (stat(candidate, &st) == 0 && S_ISREG(st.st_mode)) {
			*out_path = candidate;
			candidate = NULL;
			goto out;
		}
		free(candidate);
		candidate = NULL;
		if (strcmp(dir, "/") == 0)
			break;
		slash = strrchr(dir, '/');
		if (slash == dir)
			slash[1] = '\0';
		else
			*slash = '\0';
	}
	free(dir);
	dir = realpath(start_dir, NULL);
	rc = err_set(err, SC_EUSAGE,
	    "no %s in %s or any parent directory "
	    "(run 'storyctl init' to write one)",
	    CONFIG_FILE_NAME, dir != NULL ? dir : start_dir);
out:
	free(dir);
	free(candidate);
	return rc;
}

void
config_release(struct config *c)
{
	size_t i;

	if (c == NULL)
		return;
	free(c->path);
	free(c->root);
	for (i = 0; i < c->nstories; i++) {
		free(c->stories[i].file); /* and the id in it */
		strlist_release(&c->stories[i].depends_on);
	}
	free(c->stories);
	free(c->stories_glob);
	free(c->sprint_status);
	free(c->tasks_heading);
	strlist_release(&c->stories_skipped);
	free(c->prompt);
	config_agent_release(&c->agents[ROLE_PRIMARY]);
	config_agent_release(&c->agents[ROLE_FALLBACK]);
	policy_release(&c->policy);
	for (i = 0; i < c->ngates; i++) {
		free(c->gates[i].name);
		strlist_release(&c->gates[i].command);
	}
	free(c->gates);
	for (i = 0; i < c->review.nagents; i++)
		strlist_release(&c->review.agents[i]);
	free(c->review.agents);
	free(c->review.prompt);
	free(c->git.state_branch);
	config_executor_release(&c->executor);
	config_worktree_release(&c->worktree);
	free(c->state_dir);
	config_notify_release(c);
	config_sandbox_release(&c->sandbox);
	memset(c, 0, sizeof(*c));
}

int
config_locate(char **out, const char *path, struct sc_err *err)
{
	char cwd[PATH_MAX];

	*out = NULL;
	if (path != NULL) {
		*out = strdup(path);
		return *out != NULL ? 0 : err_set(err, SC_EOS, "out of memory");
	}
	if (getcwd(cwd, sizeof(cwd)) == NULL)
		return err_set(err, SC_EOS,
		    "cannot read the current directory: %s", strerror(errno));
	return config_find(out, cwd, err);
}

int
config_locate_load(
    struct config *out, const char *path, bool optional, struct sc_err *err)
{
	char *found = NULL;
	char cwd[PATH_MAX];
	int rc;

	rc = config_locate(&found, path, err);
	if (rc == SC_EUSAGE && path == NULL && optional) {
		/* no storyctl.json anywhere up: the built-in defaults */
		err_clear(err);
		if (getcwd(cwd, sizeof(cwd)) == NULL)
			rc = err_set(err, SC_EOS,
			    "cannot read the current directory: %s",
			    strerror(errno));
		else
			rc = config_defaults(out, cwd, err);
		goto out;
	}
	if (rc == 0)
		rc = config_load(out, found, err);
out:
	free(found);
	return rc;
}
