/* secrets.c - see secrets.h. */
#include <stdio.h>
#include <string.h>

#include "controller/config/secrets.h"

extern char **environ;

/* Add the value of entry "NAME=VALUE" to rv under NAME. */
static int
secret_add(struct redact_values *rv, const char *entry, struct sc_err *err)
{
	char name[128];
	size_t len = strcspn(entry, "=");

	if (entry[len] != '=')
		return 0;
	snprintf(name, sizeof(name), "%.*s", (int)len, entry);
	return redact_values_add(rv, name, entry + len + 1, err);
}

int
secrets_values(struct redact_values **out, const struct strlist *const *adds,
    size_t nadds, char *const *envp, struct sc_err *err)
{
	struct redact_values *rv = redact_values_new();
	char name[128];
	size_t i, k, len;
	int rc = 0;

	*out = NULL;
	if (rv == NULL) {
		rc = err_set(err, SC_EOS, "out of memory");
		goto out;
	}
	for (k = 0; k < nadds; k++)
		for (i = 0; adds[k] != NULL && i < adds[k]->n; i++)
			if ((rc = secret_add(rv, adds[k]->items[i], err)) < 0)
				goto out;
	for (i = 0; envp != NULL && envp[i] != NULL; i++) {
		len = strcspn(envp[i], "=");
		snprintf(name, sizeof(name), "%.*s", (int)len, envp[i]);
		if (redact_name_secret(name) &&
		    (rc = secret_add(rv, envp[i], err)) < 0)
			goto out;
	}
	*out = rv;
	rv = NULL;
out:
	redact_values_free(rv);
	return rc;
}

int
secrets_of_config(
    struct redact_values **out, const struct config *cfg, struct sc_err *err)
{
	const struct strlist *adds[2] = {
	    &cfg->agents[ROLE_PRIMARY].env, &cfg->agents[ROLE_FALLBACK].env};

	return secrets_values(out, adds, 2, environ, err);
}
