/*
 * cmd_help.c - `storyctl help [COMMAND]`, and the two commands the build
 * and the shells use: `__man` prints man/storyctl.1 and `__complete`
 * the words a shell offers (docs/commands.md#help-man-page-completion).
 */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "controller/cli/cli.h"
#include "controller/cli/cmd_table.h"
#include "controller/cli/opts.h"
#include "controller/config/config.h"
#include "controller/cli/help.h"
#include "controller/config/stories.h"
#include "state/db.h"

int
cmd_help(struct cli *cli, int argc, char **argv, struct sc_err *err)
{
	const struct cli_command *cmd;

	if (argc > 2)
		return err_set(err, SC_EUSAGE,
		    "help takes one command, not '%s'", argv[2]);
	if (argc == 2 && argv[1][0] == '-')
		return err_set(
		    err, SC_EUSAGE, "help: unknown option '%s'", argv[1]);
	if (argc == 1) {
		cmd_table_overview(cli->out);
		return 0;
	}
	cmd = cmd_table_find(argv[1]);
	if (cmd == NULL || cmd->help == NULL)
		return cmd_table_unknown(argv[1], err);
	help_print_command(cli->out, cmd);
	return 0;
}

int
cmd_man(struct cli *cli, int argc, char **argv, struct sc_err *err)
{
	const struct cli_command *cmds;
	size_t n;

	if (argc > 1)
		return err_set(err, SC_EUSAGE, "__man takes no arguments");
	cmds = cmd_table(&n);
	help_print_man(cli->out, cmds, n);
	return 0;
}

/* The story ids of the latest batch, before the first batch the config's
 * (as `storyctl list` shows them), one a line. */
static int
complete_ids(const struct cli *cli, struct sc_err *err)
{
	struct config cfg;
	struct db *db = NULL;
	struct batch_row batch;
	struct story_row *rows = NULL;
	struct story *s = NULL;
	struct stat sb;
	char path[4096];
	size_t n = 0, i;
	int found = 0, rc;

	memset(&cfg, 0, sizeof(cfg));
	rc = cli_load_config(&cfg, cli, false, err);
	if (rc < 0)
		goto out;
	snprintf(path, sizeof(path), "%s/state.db", cfg.state_dir);
	if (stat(path, &sb) == 0) {
		rc = db_open_readonly(&db, cfg.state_dir, err);
		if (rc == 0)
			rc = db_batch_latest(db, &batch, &found, err);
		if (rc < 0)
			goto out;
	}
	if (found) {
		rc = db_story_list(db, &rows, &n, batch.id, NULL, err);
		for (i = 0; rc == 0 && i < n; i++)
			fprintf(cli->out, "%s\n", rows[i].id);
		goto out;
	}
	rc = stories_load(&s, &n, &cfg, err);
	for (i = 0; rc == 0 && i < n; i++)
		fprintf(cli->out, "%s\n", s[i].id);
out:
	if (s != NULL)
		stories_free(s, n);
	free(rows);
	db_close(db);
	config_release(&cfg);
	return rc;
}

/* Print the words of values ("a b c", "@ids", "@commands"), one a line. */
static int
complete_values(const struct cli *cli, const char *values, struct sc_err *err)
{
	const struct cli_command *cmds;
	size_t n, i, len;

	if (values == NULL)
		return 0;
	if (strcmp(values, "@ids") == 0)
		return complete_ids(cli, err);
	if (strcmp(values, "@commands") == 0) {
		cmds = cmd_table(&n);
		for (i = 0; i < n; i++)
			if (cmds[i].name[0] != '_')
				fprintf(cli->out, "%s\n", cmds[i].name);
		return 0;
	}
	while (*values != '\0') {
		len = strcspn(values, " ");
		fprintf(cli->out, "%.*s\n", (int)len, values);
		values += len;
		values += strspn(values, " ");
	}
	return 0;
}

static void
complete_options(const struct cli *cli, const struct cli_help *h)
{
	const char *t;
	size_t i, len;

	for (i = 0; h->options[i].term != NULL; i++) {
		for (t = h->options[i].term; *t != '\0';) {
			len = strcspn(t, " ,");
			if (t[0] == '-')
				fprintf(cli->out, "%.*s\n", (int)len, t);
			t += len;
			t += strcspn(t, ",");
			t += strspn(t, " ,");
		}
	}
}

/*
 * storyctl __complete commands          the commands
 * storyctl __complete options CMD       CMD's options, one flag a line
 * storyctl __complete args CMD          what CMD's other words can be
 * storyctl __complete values CMD OPT    what OPT's value can be
 * Quiet on purpose: a shell shows nothing rather than an error, and the
 * exit status is 0 unless the command line itself is wrong.
 */
int
cmd_complete(struct cli *cli, int argc, char **argv, struct sc_err *err)
{
	const struct cli_command *cmd = NULL;
	const struct cli_help *h;
	size_t i;

	if (argc >= 2 && strcmp(argv[1], "commands") == 0 && argc == 2)
		return complete_values(cli, "@commands", err);
	if (argc >= 3)
		cmd = cmd_table_find(argv[2]);
	if (cmd == NULL || cmd->help == NULL)
		return err_set(err, SC_EUSAGE,
		    "usage: storyctl __complete commands | options CMD | "
		    "args CMD | values CMD OPTION");
	h = cmd->help;
	if (strcmp(argv[1], "options") == 0 && argc == 3) {
		complete_options(cli, h);
		return 0;
	}
	if (strcmp(argv[1], "args") == 0 && argc == 3) {
		if (complete_values(cli, h->args, err) < 0)
			err_clear(err);
		return 0;
	}
	if (strcmp(argv[1], "values") == 0 && argc == 4) {
		for (i = 0; h->options[i].term != NULL; i++)
			if (opts_term_has(h->options[i].term, argv[3]))
				break;
		if (h->options[i].term != NULL &&
		    complete_values(cli, h->options[i].values, err) < 0)
			err_clear(err);
		return 0;
	}
	return err_set(err, SC_EUSAGE,
	    "usage: storyctl __complete commands | options CMD | args CMD | "
	    "values CMD OPTION");
}
