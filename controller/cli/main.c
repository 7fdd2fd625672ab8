/*
 * main.c - storyctl's entry point: global options, finding the command
 * (with a suggestion when it is unknown), and the one place that prints
 * a fatal error and picks the exit code.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "controller/cli/cli.h"
#include "controller/cli/cmd_table.h"
#include "controller/cli/help.h"

/* SIGINT and SIGTERM held from the first instruction: run and resume
 * take them over once their handler is in place (controller/cli/cmd_run.c),
 * so a stop during start-up exits 130/143 with the batch resumable
 * (docs/reliability.md#stops-during-start-up).  *old is the mask to go
 * back to. */
static void
stops_hold(sigset_t *old)
{
	sigset_t stops;

	sigemptyset(&stops);
	sigaddset(&stops, SIGINT);
	sigaddset(&stops, SIGTERM);
	sigprocmask(SIG_BLOCK, &stops, old);
}

/* The global options before the command: *i past them.  1 when one
 * was answered here (--help, --version) and storyctl is done. */
static int
main_options(struct cli *cli, int argc, char **argv, int *i, struct sc_err *err)
{
	while (*i < argc && argv[*i][0] == '-') {
		if (strcmp(argv[*i], "-C") == 0 && *i + 1 < argc) {
			cli->dir = argv[*i + 1];
			*i += 2;
		} else if (strcmp(argv[*i], "-c") == 0 && *i + 1 < argc) {
			cli->config_path = argv[*i + 1];
			*i += 2;
		} else if (strcmp(argv[*i], "-h") == 0 ||
		    strcmp(argv[*i], "--help") == 0) {
			cmd_table_overview(stdout);
			return 1;
		} else if (strcmp(argv[*i], "--version") == 0) {
			printf("storyctl %s\n", STORYCTL_VERSION);
			return 1;
		} else {
			return err_set(err, SC_EUSAGE,
			    "unknown option '%s' (see "
			    "storyctl --help)",
			    argv[*i]);
		}
	}
	return 0;
}

int
main(int argc, char **argv)
{
	struct cli cli;
	struct sc_err err;
	const struct cli_command *cmd = NULL;
	sigset_t old;
	const char *nc;
	int i = 1;
	int rc = 0;

	stops_hold(&old);
	memset(&cli, 0, sizeof(cli));
	err_clear(&err);
	cli.out = stdout;
	rc = main_options(&cli, argc, argv, &i, &err);
	/* --help or --version: answered, nothing more to run */
	if (rc > 0)
		return 0;
	if (rc < 0)
		goto out;
	if (i >= argc) {
		cmd_table_overview(stderr);
		rc = SC_EUSAGE;
		err.msg[0] = '\0';
		goto out;
	}
	if (cli.dir != NULL && chdir(cli.dir) < 0) {
		rc = err_set(&err, SC_EUSAGE,
		    "cannot change to directory %s: "
		    "%s",
		    cli.dir, strerror(errno));
		goto out;
	}
	cli.tty = isatty(STDOUT_FILENO) == 1;
	nc = getenv("NO_COLOR");
	cli.color = cli.tty && (nc == NULL || nc[0] == '\0');
	cmd = cmd_table_find(argv[i]);
	if (cmd == NULL) {
		rc = cmd_table_unknown(argv[i], &err);
		goto out;
	}
	if (cli_want_help(&cli, cmd, argc - i, argv + i))
		goto out;
	/* a held stop of any other command acts now, as it would have */
	if (!cmd_table_catches_stops(cmd))
		sigprocmask(SIG_SETMASK, &old, NULL);
	rc = cmd->run(&cli, argc - i, argv + i, &err);
out:
	if (fflush(stdout) == EOF && rc == 0)
		rc = err_set(&err, SC_EIO, "cannot write to standard output");
	if (rc < 0 && err.msg[0] != '\0')
		fprintf(stderr, "storyctl: %s\n", err.msg);
	return rc > 0 ? rc : err_exit_status(rc);
}
