/*
 * presets.h - built-in agent presets: each runs one agent CLI headless
 * on {prompt}, with two argvs: a cautious one for an agent that runs
 * unconfined, and one with full tool autonomy for an agent inside the
 * sandbox, where the sandbox and not a permission prompt nobody answers
 * at night is the boundary.  docs/configuration.md#presets lists both
 * and why each flag is there.
 *
 * Everything returned is static and read-only: nothing to free.  The
 * argvs are NULL-terminated argv templates with {placeholders}.
 */
#ifndef STORYCTL_PRESETS_H
#define STORYCTL_PRESETS_H

#include <stddef.h>

struct preset {
	const char *name;
	const char *const *argv; /* outside a sandbox: the cautious mode */
	const char *description;
	/* inside the sandbox: no permission prompts, the CLI's own
	 * sandbox off (the outer one holds) */
	const char *const *confined_argv;
	const char *confined_description;
	/* the CLI's own state that must stay writable inside the sandbox,
	 * "~/"-relative, NULL-terminated; one ending in '/' is a directory
	 * (made when missing), any other a file (kept only when it exists).
	 * A CLI told to keep its state elsewhere (CODEX_HOME, ...) needs
	 * that place in sandbox.writable. */
	const char *const *state_paths;
};

/* The preset called name, or NULL when there is none. */
const struct preset *presets_find(const char *name);
/* All presets, in a stable order; *n gets their number. */
const struct preset *presets_all(size_t *n);

#endif
