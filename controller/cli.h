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

struct serve_config;

struct cli {
	const char *config_path; /* -c FILE, or NULL to search */
	const char *dir; /* -C DIR (already chdir'd to), or NULL */
	FILE *out; /* stdout */
	bool color; /* stdout is a terminal and NO_COLOR unset */
	bool tty; /* stdout is a terminal */
	/* the server's kept config (controller/serve_config.h), in its own
	 * copy of this struct; NULL elsewhere: view_open() loads one */
	struct serve_config *serve;
};

struct cli_command {
	const char *name;
	const char *usage; /* arguments, for the help text */
	const char *summary; /* one line */
	int (*run)(struct cli *cli, int argc, char **argv, struct sc_err *err);
	/* the full help (controller/help.c); a name starting with '_' is a
	 * command for the completion scripts, left out of every list */
	const struct cli_help *help;
};

/* run and resume: SIGINT and SIGTERM stay blocked from main's first
 * instruction until the command has put its own handler in place, so
 * that a stop during start-up is never lost
 * (docs/reliability.md#stops-during-start-up); every other command gets
 * them unblocked (the default action) before it runs. */
bool cli_command_catches_stops(const struct cli_command *c);

/* Load the config: -c FILE, else storyctl.json in the current directory
 * or the nearest parent.  When none exists and optional is true, the
 * built-in defaults are used (root = the current directory); otherwise
 * SC_EUSAGE "no storyctl.json ...". */
int cli_load_config(struct config *out, const struct cli *cli, bool optional,
    struct sc_err *err);

/* Options shared by the commands' own parsers.  cli_opt_value() handles
 * "--name VALUE" and "--name=VALUE"; returns 1 when argv[*i] is that
 * option (advancing *i past a separate value), 0 when it is not, and
 * SC_EUSAGE when the value is missing. */
int cli_opt_value(const char **out, int argc, char **argv, int *i,
    const char *name, struct sc_err *err);
int cli_parse_int(int *out, const char *s, const char *what, int min, int max,
    struct sc_err *err);

/* Print a command's help (controller/help.c) when argv holds -h/--help
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

const struct cli_command *cli_commands(size_t *n);
const struct cli_command *cli_command_find(const char *name);
/* SC_EUSAGE "unknown command 'NAME'", with "; did you mean X?" when a
 * command is close (strategies/suggest.c). */
int cli_command_unknown(const char *name, struct sc_err *err);

#endif
