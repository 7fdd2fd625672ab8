/*
 * cmd_key.c - `storyctl key add|list|revoke`: the service's API keys
 * (docs/api.md#keys).  A new key is printed once; the database keeps only
 * its SHA-256, so a lost key is revoked and replaced, never shown again.
 */
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "controller/cli/cli.h"
#include "controller/cli/help.h"
#include "controller/cli/opts.h"
#include "controller/clock.h"
#include "controller/config/config.h"
#include "controller/views/view.h"
#include "state/apikey.h"
#include "state/db.h"

/* key add NAME [--write], parsed by its help table before anything is
 * opened. */
static int
key_add_parse(
    const char **name, bool *write, int argc, char **argv, struct sc_err *err)
{
	struct opts o;
	int rc;

	rc = opts_parse(
	    &o, "key add", help_key.options, argc - 1, argv + 1, err);
	if (rc == 0 && o.nargs > 1)
		rc = err_set(err, SC_EUSAGE,
		    "key add: unexpected argument '%s'", o.args[1]);
	if (rc == 0 && o.nargs == 0)
		rc = err_set(err, SC_EUSAGE,
		    "key add: which name? (storyctl key add NAME [--write])");
	*write = opts_has(&o, "--write");
	*name = o.nargs > 0 ? o.args[0] : NULL;
	opts_release(&o);
	return rc;
}

static int
key_add(struct cli *cli, struct db *db, const char *name, bool write,
    struct sc_err *err)
{
	struct key_row k;
	char key[APIKEY_LEN + 1];
	int rc;

	memset(&k, 0, sizeof(k));
	k.write = write;
	if ((rc = apikey_name_check(name, err)) < 0)
		return rc;
	snprintf(k.name, sizeof(k.name), "%s", name);
	k.created_ms = view_now_ms();
	rc = apikey_generate(key, sizeof(key), err);
	if (rc == 0)
		rc = apikey_hash(k.sha256, key, err);
	if (rc == 0)
		rc = db_key_add(db, &k, err);
	if (rc == 0) {
		/* the key alone on stdout, so KEY=$(storyctl key add N) works;
		 * the note goes to stderr */
		fprintf(cli->out, "%s\n", key);
		fprintf(stderr,
		    "storyctl: key %s (%s) added; it is shown only this "
		    "once\n",
		    k.name, k.write ? "write" : "read");
	}
	sodium_memzero(key, sizeof(key));
	return rc;
}

static int
key_list(struct cli *cli, struct db *db, struct sc_err *err)
{
	struct key_row *rows = NULL;
	char when[40];
	size_t n = 0, i;
	int rc;

	rc = db_key_list(db, &rows, &n, err);
	if (rc == 0 && n == 0)
		fprintf(cli->out, "no keys\n");
	else if (rc == 0)
		fprintf(
		    cli->out, "%-24s %-6s %s\n", "name", "scope", "created");
	for (i = 0; rc == 0 && i < n; i++) {
		clock_fmt_iso(when, sizeof(when), rows[i].created_ms);
		fprintf(cli->out, "%-24s %-6s %s\n", rows[i].name,
		    rows[i].write ? "write" : "read", when);
	}
	free(rows);
	return rc;
}

static int
key_revoke(
    struct cli *cli, struct db *db, int argc, char **argv, struct sc_err *err)
{
	int found = 0, rc;

	if (argc != 3 || argv[2][0] == '-')
		return err_set(err, SC_EUSAGE,
		    "key revoke: which key? (storyctl key revoke NAME)");
	rc = db_key_revoke(db, argv[2], &found, err);
	if (rc == 0 && !found)
		rc = err_set(err, SC_EUSAGE, "no key named '%.80s'", argv[2]);
	if (rc == 0)
		fprintf(cli->out, "key %s revoked\n", argv[2]);
	return rc;
}

int
cmd_key(struct cli *cli, int argc, char **argv, struct sc_err *err)
{
	struct config cfg;
	struct db *db = NULL;
	const char *sub = argc > 1 ? argv[1] : "", *name = NULL;
	bool write = false;
	int rc;

	memset(&cfg, 0, sizeof(cfg));
	if (strcmp(sub, "add") != 0 && strcmp(sub, "list") != 0 &&
	    strcmp(sub, "revoke") != 0)
		return err_set(err, SC_EUSAGE,
		    "key: add, list or revoke? (storyctl key add NAME "
		    "[--write])");
	if (strcmp(sub, "list") == 0 && argc > 2)
		return err_set(err, SC_EUSAGE,
		    "key list: unexpected argument "
		    "'%s'",
		    argv[2]);
	if (strcmp(sub, "add") == 0) {
		rc = key_add_parse(&name, &write, argc, argv, err);
		if (rc < 0)
			return rc;
	}
	rc = cli_load_config(&cfg, cli, false, err);
	if (rc == 0)
		rc = db_open(&db, cfg.state_dir, err);
	if (rc < 0)
		goto out;
	if (strcmp(sub, "add") == 0)
		rc = key_add(cli, db, name, write, err);
	else if (strcmp(sub, "list") == 0)
		rc = key_list(cli, db, err);
	else
		rc = key_revoke(cli, db, argc, argv, err);
out:
	db_close(db);
	config_release(&cfg);
	return rc;
}
