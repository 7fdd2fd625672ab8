/*
 * config_executor.c - the `executor` section: where attempts run
 * (docs/configuration.md#executor, docs/cluster.md): "local" (the
 * default) or "remote" with a git remote, a launch prefix and a cancel
 * command whose only placeholders are {story_id} and {attempt}.
 */
#include <stdlib.h>
#include <string.h>

#include "controller/config/argv.h"
#include "controller/config/config_int.h"
#include "state/fsutil.h"

static const char *const local_keys[] = {"kind", NULL};
static const char *const remote_keys[] = {
    "kind", "remote", "launch", "cancel", NULL};

/* Placeholders an argv template may hold that make no sense in launch
 * or cancel: they are per agent, not per job. */
static const char *const agent_only[] = {"prompt", "story_file", "role",
    "stalled_task", "repo", "prompt_file", "max_attempts", NULL};

static int
check_template(struct loader *ld, const char *key, const struct strlist *l)
{
	struct sc_err e;
	size_t i;

	err_clear(&e);
	if (argv_validate(l, &e) < 0 && l->n > 0)
		return config_fail(ld, key, "%s", e.msg);
	for (i = 0; agent_only[i] != NULL; i++)
		if (argv_uses(l, agent_only[i]))
			return config_fail(ld, key,
			    "{%s} is not known here: only {story_id} and "
			    "{attempt}",
			    agent_only[i]);
	return 0;
}

/* A remote given as a relative path is the project's: made absolute
 * against the root, so that it means the same from a worktree. */
static int
resolve_remote(struct loader *ld, struct config *c)
{
	char *abs;

	if (c->executor.remote[0] == '\0')
		return config_fail(ld, "executor.remote", "must not be empty");
	if (c->executor.remote[0] == '/' ||
	    strstr(c->executor.remote, "://") != NULL ||
	    strchr(c->executor.remote, ':') != NULL)
		return 0; /* absolute, a URL or scp-like host:path */
	abs = fsutil_path_join(c->root, c->executor.remote);
	if (abs == NULL)
		return config_fail_nomem(ld);
	free(c->executor.remote);
	c->executor.remote = abs;
	return 0;
}

static int
parse_remote(struct loader *ld, json_t *v, struct config *c)
{
	int rc;

	if ((rc = config_check_keys(ld, v, "executor", remote_keys)) != 0)
		return rc;
	if (json_object_get(v, "remote") == NULL)
		return config_fail(ld, "executor.remote",
		    "required with kind \"remote\" (a git URL or path)");
	if ((rc = config_get_string(
		 ld, v, "executor", "remote", &c->executor.remote)) != 0 ||
	    (rc = resolve_remote(ld, c)) != 0 ||
	    (rc = config_get_strings(
		 ld, v, "executor", "launch", &c->executor.launch)) != 0 ||
	    (rc = config_get_strings(
		 ld, v, "executor", "cancel", &c->executor.cancel)) != 0 ||
	    (rc = check_template(ld, "executor.launch", &c->executor.launch)) !=
		0 ||
	    (rc = check_template(ld, "executor.cancel", &c->executor.cancel)) !=
		0)
		return rc;
	if (argv_uses(&c->agents[ROLE_PRIMARY].command, "prompt_file") ||
	    argv_uses(&c->agents[ROLE_FALLBACK].command, "prompt_file"))
		return config_fail(ld, "executor.kind",
		    "{prompt_file} names a file on this machine: an agent run "
		    "by the remote executor takes {prompt}");
	c->executor.is_remote = true;
	return 0;
}

int
config_parse_executor(struct loader *ld, json_t *v, struct config *c)
{
	char *kind = NULL;
	int rc;

	if (v == NULL)
		return 0;
	if ((rc = config_want_object(ld, v, "executor")) != 0 ||
	    (rc = config_get_string(ld, v, "executor", "kind", &kind)) != 0)
		goto out;
	if (kind == NULL || strcmp(kind, "local") == 0)
		rc = config_check_keys(ld, v, "executor", local_keys);
	else if (strcmp(kind, "remote") == 0)
		rc = parse_remote(ld, v, c);
	else
		rc = config_fail(ld, "executor.kind",
		    "must be \"local\" or \"remote\", not \"%s\"", kind);
out:
	free(kind);
	return rc;
}

void
config_executor_release(struct executor_conf *e)
{
	free(e->remote);
	strlist_release(&e->launch);
	strlist_release(&e->cancel);
	memset(e, 0, sizeof(*e));
}
