/*
 * opts.h - a command's command line parsed by the very table its help
 * prints (controller/cli/help.c): the options `storyctl help CMD`, the man
 * page and the completion list are the options the command accepts,
 * because they are one table (docs/commands.md#help-man-page-completion).
 *
 * An item's term names the option and says whether it takes a value:
 * "--json" is a flag, "--status S" takes one, "-j N, --jobs N" is one
 * option with two names.  A value is given as the next word, as
 * "--name=VALUE", or for a one-letter name glued on ("-j4").  "--" ends
 * the options; every word after it, and every word before it that does
 * not start with '-', is an argument, in order.  "-h"/"--help" is the
 * caller's (cli_want_help()) and never reaches the parser.
 */
#ifndef STORYCTL_OPTS_H
#define STORYCTL_OPTS_H

#include <stdbool.h>
#include <stddef.h>

#include "common/err.h"
#include "controller/cli/help.h"

/* At most this many options in one table (the longest has 9). */
#define OPTS_MAX 16

struct opts {
	const struct help_item *table;
	const char *value[OPTS_MAX]; /* the last value given, or NULL */
	bool seen[OPTS_MAX];
	char **args; /* the arguments, in order; the caller's, free() */
	int nargs;
	bool dashdash; /* a "--" was given */
	int nbefore; /* how many of args came before it (all, without) */
};

/*
 * Parse argv[1..argc) of the command cmd (for messages) with the
 * options of table (a help table ending with a NULL term).  Errors,
 * SC_EUSAGE: "CMD: unknown option 'X'", "option X needs a value",
 * "option X takes no value"; SC_EOS (memory).  Release with
 * opts_release(), also after an error.
 */
int opts_parse(struct opts *out, const char *cmd, const struct help_item *table,
    int argc, char **argv, struct sc_err *err);
void opts_release(struct opts *o);

/* Whether the help term names flag ("-j N, --jobs N" names -j and
 * --jobs): the completion's lookup of an option's values. */
bool opts_term_has(const char *term, const char *flag);

/* Whether the option named name (any of its names) was given. */
bool opts_has(const struct opts *o, const char *name);
/* Its value (the last one given), or NULL. */
const char *opts_value(const struct opts *o, const char *name);

#endif
