/*
 * cli.h - what every command gets from main(): the global options and
 * small shared helpers for loading the config and printing JSON.
 */
#ifndef STORYCTL_CLI_H
#define STORYCTL_CLI_H

#include <stdbool.h>
#include <stdio.h>

#include <jansson.h>

#include "common/err.h"

struct config;
struct cli_help;
struct help_item;

struct view_lender;

struct cli {
	const char *config_path; /* -c FILE, or NULL to search */
	const char *dir; /* -C DIR (already chdir'd to), or NULL */
	FILE *out; /* stdout */
	bool color; /* stdout is a terminal and NO_COLOR unset */
	bool tty; /* stdout is a terminal */
	/* the server's kept config (controller/serve/serve_config.h), lent in its
	 * own copy of this struct; NULL elsewhere: view_open() loads one */
	const struct view_lender *lender;
};

struct cli_command {
	const char *name;
	const char *usage; /* arguments, for the help text */
	const char *summary; /* one line */
	int (*run)(struct cli *cli, int argc, char **argv, struct sc_err *err);
	/* the full help (controller/cli/help.c); a name starting with '_' is a
	 * command for the completion scripts, left out of every list */
	const struct cli_help *help;
};

/* Load the config: -c FILE, else storyctl.json in the current directory
 * or the nearest parent.  When none exists and optional is true, the
 * built-in defaults are used (root = the current directory); otherwise
 * SC_EUSAGE "no storyctl.json ...". */
int cli_load_config(struct config *out, const struct cli *cli, bool optional,
    struct sc_err *err);

/* The command line of a command cmd that takes at most --json,
 * --status S and one story (status, list, show, requeue, check, init,
 * agents), parsed by its help table (controller/cli/opts.h): --json and
 * --status S when the out-pointer is not NULL; story != NULL: one story
 * id is required, else no argument is taken. */
int cli_view_flags(const char *cmd, const struct help_item *table, int argc,
    char **argv, int *json, const char **status, const char **story,
    struct sc_err *err);

/* Print a command's help (controller/cli/help.c) when argv holds -h/--help
 * before any "--"; returns 1 if so. */
int cli_want_help(const struct cli *cli, const struct cli_command *cmd,
    int argc, char **argv);

/* The format_version every --json object carries: the top-level object,
 * or each element of a top-level array (docs/json.md#versions). */
#define CLI_JSON_FORMAT_VERSION 1

/* Print j (not consumed) as indented JSON and a newline. */
int cli_print_json(const struct cli *cli, const json_t *j, struct sc_err *err);

/* Commands (controller/cmd_*.c).  Each returns 0, a positive exit status
 * that is not an error (3: run ended with stories not done), or a negative
 * SC_E* code with err filled. */
int cmd_simulate(struct cli *cli, int argc, char **argv, struct sc_err *err);
int cmd_check(struct cli *cli, int argc, char **argv, struct sc_err *err);
int cmd_tasks(struct cli *cli, int argc, char **argv, struct sc_err *err);
int cmd_agents(struct cli *cli, int argc, char **argv, struct sc_err *err);
int cmd_run(struct cli *cli, int argc, char **argv, struct sc_err *err);
int cmd_resume(struct cli *cli, int argc, char **argv, struct sc_err *err);
int cmd_init(struct cli *cli, int argc, char **argv, struct sc_err *err);
int cmd_status(struct cli *cli, int argc, char **argv, struct sc_err *err);
int cmd_list(struct cli *cli, int argc, char **argv, struct sc_err *err);
int cmd_show(struct cli *cli, int argc, char **argv, struct sc_err *err);
int cmd_diff(struct cli *cli, int argc, char **argv, struct sc_err *err);
/* show with --attempt N: that attempt's transcript (show_attempt.c);
 * *handled false when argv has no --attempt, and nothing was done. */
int show_attempt(
    bool *handled, struct cli *cli, int argc, char **argv, struct sc_err *err);
int cmd_log(struct cli *cli, int argc, char **argv, struct sc_err *err);
int cmd_stats(struct cli *cli, int argc, char **argv, struct sc_err *err);
int cmd_requeue(struct cli *cli, int argc, char **argv, struct sc_err *err);
int cmd_key(struct cli *cli, int argc, char **argv, struct sc_err *err);
int cmd_serve(struct cli *cli, int argc, char **argv, struct sc_err *err);
int cmd_report(struct cli *cli, int argc, char **argv, struct sc_err *err);
int cmd_job(struct cli *cli, int argc, char **argv, struct sc_err *err);
int cmd_help(struct cli *cli, int argc, char **argv, struct sc_err *err);
int cmd_complete(struct cli *cli, int argc, char **argv, struct sc_err *err);
int cmd_man(struct cli *cli, int argc, char **argv, struct sc_err *err);

#endif
