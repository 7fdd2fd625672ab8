/*
 * cmd_diff.c - `storyctl diff STORY [--attempt N]`: what an attempt
 * changed in its work tree, as `git diff` prints it, from the diff its
 * evidence kept when its agent ended (docs/evidence.md#the-attempts-diff,
 * docs/commands.md#diff).  Reads the database like show.
 */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "controller/cli/cli.h"
#include "controller/cli/help.h"
#include "controller/cli/opts.h"
#include "controller/views/view.h"
#include "controller/views/views_diff.h"
#include "strategies/number.h"

#define C_META "\033[1m"
#define C_HUNK "\033[36m"
#define C_ADD "\033[32m"
#define C_DEL "\033[31m"
#define C_OFF "\033[m"

/* The story and --attempt N (0: the last) of argv. */
static int
parse_args(
    const char **id, int *attempt, int argc, char **argv, struct sc_err *err)
{
	struct opts o;
	const char *val;
	int rc;

	*id = NULL;
	*attempt = 0;
	rc = opts_parse(&o, "diff", help_diff.options, argc, argv, err);
	if (rc < 0)
		goto out;
	val = opts_value(&o, "--attempt");
	if (val != NULL &&
	    (rc = number_parse_int(
		 attempt, val, "diff: --attempt", 1, INT_MAX, err)) < 0)
		goto out;
	if (o.nargs == 0)
		rc = err_set(
		    err, SC_EUSAGE, "diff: which story? (storyctl diff STORY)");
	else if (o.nargs > 1)
		rc = err_set(err, SC_EUSAGE, "diff: unexpected argument '%s'",
		    o.args[1]);
	else
		*id = o.args[0];
out:
	opts_release(&o);
	return rc;
}

/*
 * The diff as it is, or on a terminal with colour as git colours it: a
 * file's header lines bold (from "diff --git" to its first hunk, so that
 * "--- a/x" is not taken for a removed line), hunk headers cyan, added
 * lines green, removed lines red.
 */
static void
print_diff(const struct cli *cli, const char *text, size_t len)
{
	const char *p = text, *end = text + len, *nl, *c;
	bool meta = false;
	size_t n;

	if (!cli->color) {
		fwrite(text, 1, len, cli->out);
		return;
	}
	while (p < end) {
		nl = memchr(p, '\n', (size_t)(end - p));
		n = nl != NULL ? (size_t)(nl - p) : (size_t)(end - p);
		if (n >= 10 && strncmp(p, "diff --git", 10) == 0)
			meta = true;
		else if (n >= 2 && strncmp(p, "@@", 2) == 0)
			meta = false;
		c = meta	? C_META
		    : *p == '@' ? C_HUNK
		    : *p == '+' ? C_ADD
		    : *p == '-' ? C_DEL
				: NULL;
		fprintf(cli->out, "%s%.*s%s\n", c != NULL ? c : "", (int)n, p,
		    c != NULL ? C_OFF : "");
		p = nl != NULL ? nl + 1 : end;
	}
}

int
cmd_diff(struct cli *cli, int argc, char **argv, struct sc_err *err)
{
	struct view v;
	struct views_diff d;
	const char *id;
	int attempt, rc;

	memset(&d, 0, sizeof(d));
	rc = parse_args(&id, &attempt, argc, argv, err);
	if (rc < 0)
		return rc;
	rc = view_open(&v, cli->config_path, cli->lender, false, err);
	if (rc == 0)
		rc = views_diff_read(&d, &v, id, attempt, err);
	if (rc == 0 && d.text != NULL)
		print_diff(cli, d.text, d.len);
	else if (rc == 0) {
		/* nothing to print is not an error of the command: the
		 * reason goes where errors go, with its own status */
		fprintf(stderr, "storyctl: diff: attempt %d of %s: %s\n",
		    d.attempt, d.story, d.why);
		rc = 1;
	}
	views_diff_release(&d);
	view_close(&v);
	return rc;
}
