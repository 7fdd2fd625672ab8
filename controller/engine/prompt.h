/*
 * prompt.h - the text an agent gets as {prompt}
 * (docs/configuration.md#prompt).
 */
#ifndef STORYCTL_PROMPT_H
#define STORYCTL_PROMPT_H

#include <stddef.h>

#include "controller/config/argv.h"
#include "common/err.h"

/* The failures quoted, the last ones, and how much of each message. */
#define PROMPT_FAILURES_MAX 5
#define PROMPT_FAILURE_TEXT 2000

/* The built-in prompt template (placeholders as in argv templates). */
extern const char prompt_default_template[];

/* A failure reported from outside storyctl that no attempt has
 * resolved yet (docs/api.md#in-the-next-prompt). */
struct prompt_failure {
	const char *error_code;
	const char *error_message; /* "" when none was sent */
	const char *agent_id; /* "" when unknown */
	const char *reported_at; /* ISO 8601 */
	int http_status; /* 0 unknown */
	int exit_code; /* -1 unknown */
};

/* Where the previous attempt stopped, for the retry note. */
struct prompt_prev {
	int attempt; /* 0 = this is the first attempt */
	int tasks_completed;
	int tasks_total;
	const char *stalled_task; /* "" or NULL when unknown */
	const char *outcome; /* e.g. "timeout", or NULL */
	const char *dependency_result; /* NULL when not wanted
					* (docs/scheduling.md#the-dependencys-result) */
	const char *check_note; /* a failed gate or review, or NULL */
	const struct prompt_failure *failures; /* reported from outside */
	size_t nfailures;
};

/* Render tmpl (NULL = the built-in template) with v's placeholders
 * ({prompt} itself is empty there), then, from attempt 2 on, a note that
 * says which attempt this is and where the previous one stopped, then
 * the section "[Failures reported from outside storyctl]" quoting the
 * last PROMPT_FAILURES_MAX of prev->failures (each message cut to
 * PROMPT_FAILURE_TEXT bytes).  *out is malloc'd.  SC_EDATA for an
 * unknown placeholder. */
int prompt_render(char **out, const char *tmpl, const struct argv_vars *v,
    const struct prompt_prev *prev, struct sc_err *err);

/* Write text to a new file at path, mode 0600 ({prompt_file}).  SC_EIO
 * naming path when it cannot be written, or exists already. */
int prompt_write_file(const char *path, const char *text, struct sc_err *err);

#endif
