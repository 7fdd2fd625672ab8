/* cli.c - helpers shared by the commands (the table of commands is
 * cmd_table.c). */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "controller/cli/cli.h"
#include "controller/config/config.h"
#include "controller/cli/help.h"
#include "controller/cli/opts.h"
#include "strategies/suggest.h"

int
cli_load_config(struct config *out, const struct cli *cli, bool optional,
    struct sc_err *err)
{
	return config_locate_load(out, cli->config_path, optional, err);
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
			help_print_command(cli->out, cmd);
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

int
cli_view_flags(const char *cmd, const struct help_item *table, int argc,
    char **argv, int *json, const char **status, const char **story,
    struct sc_err *err)
{
	enum story_status st;
	struct opts o;
	int rc;

	rc = opts_parse(&o, cmd, table, argc, argv, err);
	if (rc < 0)
		goto out;
	if (json != NULL)
		*json = opts_has(&o, "--json");
	if (status != NULL)
		*status = opts_value(&o, "--status");
	if (status != NULL && *status != NULL &&
	    status_parse(&st, *status) < 0) {
		rc = err_set(err, SC_EUSAGE,
		    "%s: unknown status '%s' (pending, running, done, "
		    "deferred, escalated, blocked, invalid)",
		    cmd, *status);
		goto out;
	}
	if (story != NULL && o.nargs == 0) {
		rc = err_set(err, SC_EUSAGE,
		    "%s: which story? (storyctl %s STORY)", cmd, cmd);
		goto out;
	}
	if (o.nargs > (story != NULL ? 1 : 0)) {
		rc = err_set(err, SC_EUSAGE, "%s: unexpected argument '%s'",
		    cmd, o.args[story != NULL ? 1 : 0]);
		goto out;
	}
	if (story != NULL)
		*story = o.args[0];
out:
	opts_release(&o);
	return rc;
}
