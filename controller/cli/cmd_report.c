/*
 * cmd_report.c - `storyctl report`: the morning report of the latest
 * batch as one self-contained HTML file and/or markdown
 * (docs/report.md).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "controller/cli/cli.h"
#include "controller/cli/help.h"
#include "controller/cli/opts.h"
#include "controller/report/report.h"
#include "controller/views/view.h"

/* Write len bytes of buf to path ("-": standard output) whole or not at
 * all: a temporary file beside it, renamed over it, so that a browser
 * reloading the report never reads half of one. */
static int
report_write(const struct cli *cli, const char *path, const char *buf,
    struct sc_err *err)
{
	char *tmp = NULL;
	size_t len = strlen(buf), off = 0;
	ssize_t w;
	int fd = -1, rc = 0;

	if (strcmp(path, "-") == 0) {
		if (fwrite(buf, 1, len, cli->out) != len || fflush(cli->out))
			rc = err_set(err, SC_EIO,
			    "report: cannot write to "
			    "standard output");
		return rc;
	}
	if (asprintf(&tmp, "%s.tmp%ld", path, (long)getpid()) < 0) {
		tmp = NULL;
		return err_set(err, SC_EOS, "out of memory");
	}
	/* 0600: the report may hold agent output, as the logs do
	 * (docs/report.md); fchmod for a temporary file left by a crash */
	fd = open(
	    tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd >= 0 && fchmod(fd, 0600) != 0) {
		rc = err_set(err, SC_EIO, "report: cannot write %s: %s", path,
		    strerror(errno));
		goto out;
	}
	if (fd < 0) {
		rc = err_set(err, SC_EIO, "report: cannot write %s: %s", path,
		    strerror(errno));
		goto out;
	}
	while (off < len) {
		w = write(fd, buf + off, len - off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			rc = err_set(err, SC_EIO, "report: cannot write %s: %s",
			    path, strerror(errno));
			goto out;
		}
		off += (size_t)w;
	}
	if (close(fd) != 0 || rename(tmp, path) != 0) {
		fd = -1;
		rc = err_set(err, SC_EIO, "report: cannot write %s: %s", path,
		    strerror(errno));
		goto out;
	}
	fd = -1;
out:
	if (fd >= 0)
		close(fd);
	if (rc < 0)
		unlink(tmp);
	free(tmp);
	return rc;
}

static int
report_args(const char **html, const char **md, int argc, char **argv,
    struct sc_err *err)
{
	struct opts o;
	int rc;

	rc = opts_parse(&o, "report", help_report.options, argc, argv, err);
	if (rc == 0 && o.nargs > 0)
		rc = err_set(err, SC_EUSAGE,
		    "report: unexpected argument '%s' (see storyctl help "
		    "report)",
		    o.args[0]);
	*html = opts_value(&o, "--html");
	*md = opts_value(&o, "--md");
	opts_release(&o);
	if (rc < 0)
		return rc;
	if (*html == NULL && *md == NULL)
		*md = "-";
	if (*html != NULL && *md != NULL && strcmp(*html, "-") == 0 &&
	    strcmp(*md, "-") == 0)
		return err_set(err, SC_EUSAGE,
		    "report: --html - and --md - would both write to standard "
		    "output");
	return 0;
}

int
cmd_report(struct cli *cli, int argc, char **argv, struct sc_err *err)
{
	struct report_html_opts o = {false, false, NULL, NULL};
	struct view v;
	const char *html = NULL, *md = NULL;
	json_t *model = NULL;
	char *text = NULL;
	int rc;

	memset(&v, 0, sizeof(v));
	rc = report_args(&html, &md, argc, argv, err);
	if (rc < 0)
		return rc;
	rc = view_open(&v, cli->config_path, cli->lender, false, err);
	if (rc == 0)
		rc = report_model(&model, &v, view_now_ms(), true, err);
	if (rc == 0 && html != NULL)
		rc = report_html(&text, model, &o, err);
	if (rc == 0 && html != NULL)
		rc = report_write(cli, html, text, err);
	free(text);
	text = NULL;
	if (rc == 0 && md != NULL)
		rc = report_md(&text, model, err);
	if (rc == 0 && md != NULL)
		rc = report_write(cli, md, text, err);
	free(text);
	json_decref(model);
	view_close(&v);
	return rc;
}
