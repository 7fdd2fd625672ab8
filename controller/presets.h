/*
 * presets.h - built-in agent presets: each runs one agent CLI headless
 * on {prompt}.  docs/configuration.md#presets lists the argv and why
 * each flag is there.
 *
 * Everything returned is static and read-only: nothing to free.  argv
 * is a NULL-terminated argv template with {placeholders}.
 */
#ifndef STORYCTL_PRESETS_H
#define STORYCTL_PRESETS_H

#include <stddef.h>

struct preset {
	const char *name;
	const char *const *argv;
	const char *description;
};

/* The preset called name, or NULL when there is none. */
const struct preset *presets_find(const char *name);
/* All presets, in a stable order; *n gets their number. */
const struct preset *presets_all(size_t *n);

#endif
