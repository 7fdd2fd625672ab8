/*
 * agentenv.h - the environment an agent gets
 * (docs/runner.md#environment): the controller's, minus the variables
 * that make agent CLIs refuse to nest or leak the calling session, plus
 * the agent's own env entries.  The controller's environment is never
 * modified.
 */
#ifndef STORYCTL_AGENTENV_H
#define STORYCTL_AGENTENV_H

#include "common/err.h"
#include "common/strlist.h"
#include "state/redact.h"

/*
 * The environment an agent gets: ours minus agentenv_scrubbed, with add
 * applied (the last entry for a name wins), then mark ("NAME=VALUE",
 * controller/engine/agentmark.h; NULL none), which no add entry overrides.  *out is a malloc'd NULL-terminated array (free() it, not its
 * strings: they are borrowed from environ, add and mark, which must
 * outlive it).  SC_EDATA for an add
 * entry without '=' or with an empty name, SC_EOS when out of memory.
 */
int agentenv_build(char ***out, const struct strlist *add, const char *mark,
    struct sc_err *err);

/* The value of variable name in envp (the first one, as getenv()), or
 * NULL.  The result points into envp. */
const char *agentenv_value(char *const *envp, const char *name);

/* The environment variables removed from every agent's environment
 * (NULL-terminated): they make agent CLIs refuse to nest or leak the
 * calling session's state.  An agent's env can set them again. */
extern const char *const agentenv_scrubbed[];

#endif
