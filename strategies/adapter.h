/*
 * adapter.h - what storyctl knows of each agent CLI (docs/agents.md):
 * one const struct per CLI, in strategies/adapter.c, that the
 * classifier consults for what the CLI's output cannot say on its own.
 * Pure data and lookups.
 *
 * The structured events of claude, codex and gemini (they decide before any
 * text: docs/classification.md#structured-results) are read by
 * strategies/classify.c whatever the adapter; an adapter adds the CLI's
 * documented process exit codes and says whether the CLI's output was
 * verified against the real CLI
 * (tests/agents/run.sh, make check-agents).  A custom command has the
 * generic adapter: text patterns only.
 */
#ifndef STORYCTL_ADAPTER_H
#define STORYCTL_ADAPTER_H

#include <stdbool.h>

#include "common/model.h"

/* A documented exit status of a CLI and what it means. */
struct adapter_exit {
	int status;
	enum error_code code;
	const char *meaning; /* the CLI's own name for it */
};

struct adapter {
	const char *name; /* the preset's name; "generic" */
	const char *version; /* the version verified, or NULL */
	bool verified; /* run by the conformance suite */
	/* exit statuses with a meaning, ended by {0}; may be NULL */
	const struct adapter_exit *exits;
};

/* The adapter of a preset name ("claude", "codex", "gemini", "aider");
 * the generic one for NULL, "" or any other name.  Never NULL. */
const struct adapter *adapter_for(const char *preset);

/* What exit status means for CLI a: ERRC_NONE when nothing documented;
 * *meaning (may be NULL) gets the CLI's name for it. */
enum error_code adapter_exit_code(
    const struct adapter *a, int status, const char **meaning);

#endif
