/*
 * cmd_table.c - the table of commands: each one's name, usage line,
 * summary, function and help (controller/cli/help.c), and the lookups main()
 * and `help` make in it (docs/commands.md).  Linked into the program,
 * not into libstoryctl.a, as git keeps git.c's table outside libgit.a:
 * nothing in the library calls up into the commands
 * (docs/design.md#rooms).
 */
#include <stdlib.h>
#include <string.h>

#include "controller/cli/cli.h"
#include "controller/cli/cmd_table.h"
#include "controller/cli/help.h"
#include "strategies/suggest.h"

/* The usage line and summary of each command; the rest of its help is in
 * controller/cli/help.c (docs/commands.md). */
static const struct cli_command commands[] = {
    {"init", "[--json]",
	"write a starter storyctl.json and ignore the state dir", cmd_init,
	&help_init},
    {"check", "[--json]",
	"every problem run would hit: config, stories, agents", cmd_check,
	&help_check},
    {"tasks", "STORY [--json]",
	"the lines of a story that were counted as tasks, and why", cmd_tasks,
	&help_tasks},
    {"run",
	"[-j N] [--include-drafts] [--serve ADDR:PORT [--tls-cert FILE "
	"--tls-key FILE]] [STORY...]",
	"start a batch (or continue the unfinished one)", cmd_run, &help_run},
    {"resume", "[-j N] [--serve ADDR:PORT [--tls-cert FILE --tls-key FILE]]",
	"continue the unfinished batch", cmd_resume, &help_resume},
    {"status", "[--json]", "the batch at a glance", cmd_status, &help_status},
    {"list", "[--status S] [--json]",
	"stories with status, attempts, progress, reason", cmd_list,
	&help_list},
    {"show", "STORY [--attempt N] [--json]",
	"one story's attempts with the reason of each decision", cmd_show,
	&help_show},
    {"diff", "STORY [--attempt N]",
	"what an attempt changed in its tree, as git diff prints it", cmd_diff,
	&help_diff},
    {"log", "[--follow] [-n N] [--since WHEN] [--json] [STORY]",
	"the event log", cmd_log, &help_log},
    {"stats", "[--batch ID | --all] [--json]",
	"the night's telemetry: attempts, success, delays, cost", cmd_stats,
	&help_stats},
    {"requeue", "STORY",
	"put a deferred, escalated or blocked story back to pending",
	cmd_requeue, &help_requeue},
    {"key", "add NAME [--write] | list | revoke NAME",
	"the service's API keys: add (printed once), list, revoke", cmd_key,
	&help_key},
    {"serve", "[--listen ADDR:PORT] [--tls-cert FILE --tls-key FILE]",
	"serve the batch over HTTP with API keys (docs/api.md)", cmd_serve,
	&help_serve},
    {"report", "[--html FILE] [--md FILE]",
	"the morning report: what needs you, the night as a picture",
	cmd_report, &help_report},
    {"job",
	"--remote URL --branch BRANCH [--story ID] [--attempt N] "
	"[--scratch DIR] [--kill-grace-ms MS] [--sandbox "
	"[--sandbox-no-network] [--sandbox-preset NAME]] -- AGENT [ARG...]",
	"run one attempt on a cluster worker (the remote executor)", cmd_job,
	&help_job},
    {"simulate", "[--tasks N] [--json] OUTCOME[:TASKS]...",
	"feed a hypothetical attempt history through the policy", cmd_simulate,
	&help_simulate},
    {"agents", "[--json]", "list presets and the configured agents", cmd_agents,
	&help_agents},
    {"help", "[COMMAND]", "list the commands, or one command's help", cmd_help,
	&help_help},
    {"__complete", "WHAT [COMMAND [OPTION]]", "words for the shell completion",
	cmd_complete, NULL},
    {"__man", "", "print the man page", cmd_man, NULL},
};

const struct cli_command *
cmd_table(size_t *n)
{
	*n = sizeof(commands) / sizeof(commands[0]);
	return commands;
}

bool
cmd_table_catches_stops(const struct cli_command *c)
{
	return c->run == cmd_run || c->run == cmd_resume;
}

const struct cli_command *
cmd_table_find(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (strcmp(commands[i].name, name) == 0)
			return &commands[i];
	return NULL;
}

/* Whether a is b with two neighbouring letters swapped ("stauts"): the
 * commonest typo, which edit distance counts as two changes and so may
 * tie with an unrelated word ("lsit": init and list). */
static int
swapped(const char *a, const char *b)
{
	size_t i, len = strlen(a);

	if (len != strlen(b))
		return 0;
	for (i = 0; i < len && a[i] == b[i]; i++)
		;
	return i + 1 < len && a[i] == b[i + 1] && a[i + 1] == b[i] &&
	    strcmp(a + i + 2, b + i + 2) == 0;
}

int
cmd_table_unknown(const char *name, struct sc_err *err)
{
	const char *names[sizeof(commands) / sizeof(commands[0])];
	size_t i, n = 0;
	int best = -1;

	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (commands[i].name[0] != '_')
			names[n++] = commands[i].name;
	for (i = 0; i < n && best < 0; i++)
		if (swapped(name, names[i]))
			best = (int)i;
	if (best < 0)
		best = suggest_closest(name, names, n);
	if (best >= 0)
		return err_set(err, SC_EUSAGE,
		    "unknown command '%s'; did you mean %s? (see storyctl "
		    "help)",
		    name, names[best]);
	return err_set(
	    err, SC_EUSAGE, "unknown command '%s' (see storyctl help)", name);
}

void
cmd_table_overview(FILE *f)
{
	help_print_overview(
	    f, commands, sizeof(commands) / sizeof(commands[0]));
}
