/* agentenv.c - see agentenv.h and docs/runner.md#environment. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "controller/engine/agentenv.h"

const char *const agentenv_scrubbed[] = {
    "CLAUDECODE", /* claude: refuses to nest */
    "CLAUDE_CODE_ENTRYPOINT", /* claude: the parent's entry */
    "CLAUDE_CODE_SSE_PORT", /* claude: the parent's IDE link */
    "CODEX_SANDBOX", /* codex: set inside its sandbox */
    "CODEX_SANDBOX_NETWORK_DISABLED", /* codex: claims no network */
    "CODEX_THREAD_ID", /* codex: the parent's thread */
    "GEMINI_CLI", /* gemini: set in its shell tool */
    "STORYCTL_ATTEMPT", /* an outer storyctl's mark: the agent gets its
			 * own (controller/engine/agentmark.h) */
    NULL};

static bool
env_is_named(const char *entry, const char *name, size_t len)
{
	return strncmp(entry, name, len) == 0 && entry[len] == '=';
}

static bool
env_scrubbed(const char *entry)
{
	size_t i;

	for (i = 0; agentenv_scrubbed[i] != NULL; i++)
		if (env_is_named(entry, agentenv_scrubbed[i],
			strlen(agentenv_scrubbed[i])))
			return true;
	return false;
}

/* Whether add[from..] sets the variable that entry sets. */
static bool
env_overridden(const char *entry, const struct strlist *add, size_t from)
{
	size_t len = strcspn(entry, "=");
	size_t i;

	if (add == NULL)
		return false;
	for (i = from; i < add->n; i++)
		if (env_is_named(add->items[i], entry, len))
			return true;
	return false;
}

int
agentenv_build(char ***out, const struct strlist *add, const char *mark,
    struct sc_err *err)
{
	char **env = NULL;
	size_t n = 0, k = 0, i;
	size_t nadd = add ? add->n : 0;
	int rc = 0;

	for (i = 0; add != NULL && i < add->n; i++) {
		if (add->items[i][0] == '=' ||
		    strchr(add->items[i], '=') == NULL) {
			rc = err_set(err, SC_EDATA,
			    "bad agent environment "
			    "entry \"%s\" (want KEY=VALUE)",
			    add->items[i]);
			goto out;
		}
	}
	while (environ != NULL && environ[n] != NULL)
		n++;
	env = calloc(n + nadd + 2, sizeof(*env));
	if (env == NULL) {
		rc = err_set(err, SC_EOS,
		    "out of memory building the agent "
		    "environment");
		goto out;
	}
	for (i = 0; i < n; i++) {
		if (env_scrubbed(environ[i]) ||
		    env_overridden(environ[i], add, 0))
			continue;
		env[k++] = environ[i];
	}
	for (i = 0; i < nadd; i++)
		if (!env_overridden(add->items[i], add, i + 1) &&
		    (mark == NULL ||
			!env_is_named(add->items[i], mark, strcspn(mark, "="))))
			env[k++] = add->items[i];
	if (mark != NULL)
		env[k++] = (char *)mark;
	env[k] = NULL;
	*out = env;
	env = NULL;
out:
	free(env);
	return rc;
}

const char *
agentenv_value(char *const *envp, const char *name)
{
	size_t len = strlen(name);
	size_t i;

	for (i = 0; envp[i] != NULL; i++)
		if (env_is_named(envp[i], name, len))
			return envp[i] + len + 1;
	return NULL;
}
