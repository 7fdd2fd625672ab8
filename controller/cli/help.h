/*
 * help.h - every command's help in one table: synopsis, description,
 * options with their values, exit codes and examples.  `storyctl help
 * CMD`, `storyctl CMD --help`, the man page and the shell completion
 * are all printed from it (docs/commands.md#help-man-page-completion).
 */
#ifndef STORYCTL_HELP_H
#define STORYCTL_HELP_H

#include <stdio.h>

struct cli_command;

/* One line of a help section: an option, an exit code or an example.
 * values: what the option's value completes to, words separated by
 * spaces, or "@ids" for the current batch's story ids; NULL for none. */
struct help_item {
	const char *term;
	const char *text;
	const char *values;
};

struct cli_help {
	const char *description; /* lines of about 66 columns */
	const struct help_item *options; /* ends with a NULL term */
	const struct help_item *exits;
	const struct help_item *examples;
	/* what a word that is not an option completes to, as values */
	const char *args;
};

extern const struct cli_help help_init, help_check, help_tasks, help_run,
    help_resume, help_status, help_list, help_show, help_log, help_stats,
    help_requeue, help_key, help_serve, help_report, help_simulate, help_agents,
    help_help, help_job, help_diff;

/* The global options (-C, -c, -h, --version) and the exit codes every
 * command shares, for `storyctl help` and the man page. */
extern const struct help_item help_global_options[];
extern const struct help_item help_exit_codes[];

/* `storyctl help`: the commands, the global options, the exit codes. */
void help_print_overview(FILE *f, const struct cli_command *cmds, size_t n);
/* `storyctl help CMD`, `storyctl CMD --help`. */
void help_print_command(FILE *f, const struct cli_command *cmd);
/* The man page, man/storyctl.1, in roff. */
void help_print_man(FILE *f, const struct cli_command *cmds, size_t n);

#endif
