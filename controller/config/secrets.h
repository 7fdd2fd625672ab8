/*
 * secrets.h - the values storyctl redacts by value
 * (docs/reliability.md#redaction): what the config hands its agents and
 * what the controller's environment names as a secret.  One set for
 * everything that stores or shows text: the batch, the service's
 * failure records, show --attempt, diff.
 */
#ifndef STORYCTL_SECRETS_H
#define STORYCTL_SECRETS_H

#include <stddef.h>

#include "common/err.h"
#include "common/strlist.h"
#include "controller/config/config.h"
#include "state/redact.h"

/*
 * Every value of the nadds env lists adds (the agents' "env": what
 * storyctl itself hands an agent), then every variable of envp (the
 * controller's environment) whose name says it is a secret
 * (redact_name_secret()), each known by its variable's name; values
 * redact_value_worth() refuses are left out.  *out is the caller's
 * (redact_values_free()).  SC_EOS when out of memory.
 */
int secrets_values(struct redact_values **out,
    const struct strlist *const *adds, size_t nadds, char *const *envp,
    struct sc_err *err);

/* secrets_values() of cfg's two agents' env and this process's
 * environment. */
int secrets_of_config(
    struct redact_values **out, const struct config *cfg, struct sc_err *err);

#endif
