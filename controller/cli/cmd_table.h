/*
 * cmd_table.h - the table of commands (controller/cli/cmd_table.c), linked
 * into the program beside main(), not into libstoryctl.a.
 */
#ifndef STORYCTL_CMD_TABLE_H
#define STORYCTL_CMD_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "common/err.h"
#include "controller/cli/cli.h"

/* Every command, *n of them, in the order help lists them. */
const struct cli_command *cmd_table(size_t *n);
/* The command called name, or NULL. */
const struct cli_command *cmd_table_find(const char *name);
/* SC_EUSAGE "unknown command 'NAME'", with "; did you mean X?" when a
 * command is close (strategies/suggest.c). */
int cmd_table_unknown(const char *name, struct sc_err *err);
/* run and resume: SIGINT and SIGTERM stay blocked from main's first
 * instruction until the command has put its own handler in place, so
 * that a stop during start-up is never lost
 * (docs/reliability.md#stops-during-start-up); every other command gets
 * them unblocked (the default action) before it runs. */
bool cmd_table_catches_stops(const struct cli_command *c);
/* help's overview of every command, to f (controller/cli/help_print.c). */
void cmd_table_overview(FILE *f);

#endif
