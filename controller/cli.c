/* cli.c - helpers shared by the commands, and the command table. */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "controller/cli.h"
#include "controller/config.h"

static const struct cli_command commands[] = {
    {"init", "", "write a starter storyctl.json and ignore the state dir",
	cmd_init},
    {"check", "[--json]",
	"validate config, stories and agents: every problem run would hit",
	cmd_check},
    {"tasks", "STORY [--json]",
	"the lines of a story that were counted as tasks, and why", cmd_tasks},
    {"run", "[-j N] [--include-drafts] [STORY...]",
	"start a batch, drafts left out (or continue the unfinished one)",
	cmd_run},
    {"resume", "[-j N]", "continue the unfinished batch", cmd_resume},
    {"status", "[--json]", "the batch at a glance", cmd_status},
    {"list", "[--status S] [--json]",
	"stories with status, attempts, "
	"progress, reason",
	cmd_list},
    {"show", "STORY [--json]",
	"one story's attempts with the reason of "
	"each decision",
	cmd_show},
    {"log", "[--follow] [--json]", "the event log", cmd_log},
    {"requeue", "STORY",
	"put a deferred, escalated or blocked story back "
	"to pending",
	cmd_requeue},
    {"simulate", "[--tasks N] [--json] OUTCOME[:TASKS]...",
	"feed a hypothetical attempt history through the policy", cmd_simulate},
    {"agents", "[--json]", "list presets and the configured agents",
	cmd_agents},
};

const struct cli_command *
cli_commands(size_t *n)
{
	*n = sizeof(commands) / sizeof(commands[0]);
	return commands;
}

const struct cli_command *
cli_command_find(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (strcmp(commands[i].name, name) == 0)
			return &commands[i];
	return NULL;
}

int
cli_load_config(struct config *out, const struct cli *cli, bool optional,
    struct sc_err *err)
{
	char *found = NULL;
	char cwd[PATH_MAX];
	int rc = 0;

	if (cli->config_path != NULL) {
		rc = config_load(out, cli->config_path, err);
		goto out;
	}
	if (getcwd(cwd, sizeof(cwd)) == NULL) {
		rc = err_set(err, SC_EOS,
		    "cannot read the current directory: "
		    "%s",
		    strerror(errno));
		goto out;
	}
	rc = config_find(&found, cwd, err);
	if (rc == SC_EUSAGE && optional) {
		/* no storyctl.json anywhere up: the built-in defaults */
		err_clear(err);
		rc = config_defaults(out, cwd, err);
		goto out;
	}
	if (rc < 0)
		goto out;
	rc = config_load(out, found, err);
out:
	free(found);
	return rc;
}

int
cli_opt_value(const char **out, int argc, char **argv, int *i, const char *name,
    struct sc_err *err)
{
	const char *a = argv[*i];
	size_t len = strlen(name);

	if (strncmp(a, name, len) != 0)
		return 0;
	if (a[len] == '=') {
		*out = a + len + 1;
		return 1;
	}
	if (a[len] != '\0')
		return 0;
	if (*i + 1 >= argc)
		return err_set(err, SC_EUSAGE, "option %s needs a value", name);
	*out = argv[++*i];
	return 1;
}

int
cli_parse_int(int *out, const char *s, const char *what, int min, int max,
    struct sc_err *err)
{
	char *end = NULL;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno != 0 || end == s || *end != '\0' || v < min || v > max)
		return err_set(err, SC_EUSAGE,
		    "%s must be a whole number from "
		    "%d to %d, not '%s'",
		    what, min, max, s);
	*out = (int)v;
	return 0;
}

int
cli_want_help(
    const struct cli *cli, const struct cli_command *cmd, int argc, char **argv)
{
	int i;

	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--") == 0)
			break;
		if (strcmp(argv[i], "-h") == 0 ||
		    strcmp(argv[i], "--help") == 0) {
			fprintf(cli->out,
			    "usage: storyctl [-C DIR] [-c CONFIG] "
			    "%s %s\n\n%s\n",
			    cmd->name, cmd->usage, cmd->summary);
			return 1;
		}
	}
	return 0;
}

int
cli_print_json(const struct cli *cli, const json_t *j, struct sc_err *err)
{
	if (json_dumpf(j, cli->out, JSON_INDENT(2) | JSON_PRESERVE_ORDER) < 0 ||
	    fputc('\n', cli->out) == EOF)
		return err_set(err, SC_EIO, "cannot write to standard output");
	return 0;
}
