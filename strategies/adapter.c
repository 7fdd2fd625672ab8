/* adapter.c - see adapter.h; the facts are in docs/agents.md. */
#include <stddef.h>
#include <string.h>

#include "strategies/adapter.h"

/* gemini-cli 0.61 ExitCodes (its bundle): 41 FATAL_AUTHENTICATION_ERROR
 * ("Invalid auth method selected.", no credentials); 55 an untrusted
 * folder (FatalUntrustedWorkspaceError, run without --skip-trust). */
static const struct adapter_exit gemini_exits[] = {
    {41, ERRC_AUTH, "FATAL_AUTHENTICATION_ERROR"},
    {55, ERRC_PERMISSION_DENIED, "untrusted workspace"},
    {0, ERRC_NONE, NULL},
};

static const struct adapter adapters[] = {
    {"generic", NULL, false, NULL},
    {"claude", "2.1.197", true, NULL},
    {"codex", "0.169.0", true, NULL},
    {"gemini", "0.61.0", true, gemini_exits},
    /* aider is a Python package: PyPI is not reachable here, so its
     * preset reads text patterns only and is not verified */
    {"aider", NULL, false, NULL},
};

const struct adapter *
adapter_for(const char *preset)
{
	size_t i;

	for (i = 1; preset != NULL && i < sizeof(adapters) / sizeof(*adapters);
	     i++)
		if (strcmp(adapters[i].name, preset) == 0)
			return &adapters[i];
	return &adapters[0];
}

enum error_code
adapter_exit_code(const struct adapter *a, int status, const char **meaning)
{
	const struct adapter_exit *e;

	if (meaning != NULL)
		*meaning = NULL;
	for (e = a != NULL ? a->exits : NULL; e != NULL && e->status != 0;
	     e++) {
		if (e->status != status)
			continue;
		if (meaning != NULL)
			*meaning = e->meaning;
		return e->code;
	}
	return ERRC_NONE;
}
