/*
 * argv.h - agent argv templates: placeholder substitution and program
 * lookup (docs/runner.md#argv-templates).
 *
 * An agent is an argv template, never a shell string.  Each template
 * argument may hold any number of {name} placeholders with literal text
 * around them; "{{" and "}}" stand for literal braces.  Substituted values
 * are copied verbatim and never scanned again, so a story that contains
 * "{prompt}" or "$(rm -rf /)" reaches the agent as those very characters,
 * as one argument, and no shell ever sees it.
 *
 * Known placeholders: {prompt} {story_file} {story_id} {attempt}
 * {max_attempts} {role} {stalled_task} {repo} {prompt_file} (the path of
 * a file, mode 0600, holding the prompt: for agents that read it from a
 * file, and for prompts too long for one argument).
 */
#ifndef STORYCTL_ARGV_H
#define STORYCTL_ARGV_H

#include <stdbool.h>

#include "common/err.h"
#include "common/strlist.h"

/* The values for one attempt.  A NULL string expands to "". */
struct argv_vars {
	const char *prompt;
	const char *story_file; /* relative to the repo root */
	const char *story_id;
	const char *role; /* "primary" or "fallback" */
	const char *stalled_task;
	const char *repo; /* absolute repo root */
	const char *prompt_file; /* a file holding the prompt, or NULL */
	int attempt;
	int max_attempts;
};

/*
 * Expand every placeholder of every argument of tmpl into out (which must
 * be empty; on success it is a NULL-terminated argv the caller releases
 * with strlist_release(); on failure it is left empty).
 * Errors: SC_EDATA for an empty template, an unknown {name} (named in the
 * message with the argument's position), an unterminated "{" or a lone
 * "}"; SC_EOS when out of memory.
 */
int argv_expand(struct strlist *out, const struct strlist *tmpl,
    const struct argv_vars *v, struct sc_err *err);

/* Check tmpl's placeholders without expanding (for `check`); the same
 * errors as argv_expand(). */
int argv_validate(const struct strlist *tmpl, struct sc_err *err);

/* Whether some argument of tmpl holds {name}. */
bool argv_uses(const struct strlist *tmpl, const char *name);

/*
 * Whether argv (and the environment envp, NULL for none) can be passed
 * to execve(): no argument over the kernel's limit of one argument
 * (32 pages, 131072 bytes with 4 KiB pages) and not over ARG_MAX in
 * all.  SC_EDATA saying which and what to do ({prompt_file}) otherwise.
 */
int argv_fits(
    const struct strlist *argv, char *const *envp, struct sc_err *err);

/* The same for a NULL-terminated argv (and envp, NULL for none), as
 * handed to execve(); an environment string over the limit is named by
 * its variable, never its value. */
int argv_fits_vec(
    const char *const *argv, const char *const *envp, struct sc_err *err);

/*
 * Resolve argv0 the way execvp() would.  A name containing '/' must be an
 * executable regular file (a relative one is taken from the caller's
 * current directory); any other name is searched in the caller's PATH
 * (or "/bin:/usr/bin" when PATH is unset; an empty PATH entry means the
 * current directory).  On success *out_path is a malloc'd path the caller
 * frees.  Not found or not executable: SC_EUNAVAIL "agent program not
 * found: NAME" / "agent program not executable: NAME" (the caller adds
 * which agent).
 */
int argv_resolve_program(
    char **out_path, const char *argv0, struct sc_err *err);

#endif
