/*
 * cmd_serve.c - `storyctl serve [--listen ADDR:PORT] [--tls-cert FILE
 * --tls-key FILE]`: the service beside a batch (docs/api.md).  Loopback
 * by default; any other address only once a key exists
 * (controller/serve/serve_listen.c).  Runs until SIGINT or SIGTERM, then exits
 * 0.
 */
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "controller/cli/cli.h"
#include "controller/cli/help.h"
#include "controller/cli/opts.h"
#include "controller/config/config.h"
#include "controller/serve/serve.h"
#include "controller/serve/serve_listen.h"

#define SERVE_LISTEN_DEFAULT "127.0.0.1:8420"

static int
serve_parse_args(
    struct serve_args *a, int argc, char **argv, struct sc_err *err)
{
	struct opts o;
	int rc;

	rc = opts_parse(&o, "serve", help_serve.options, argc, argv, err);
	if (rc == 0 && o.nargs > 0)
		rc = err_set(err, SC_EUSAGE, "serve: unexpected argument '%s'",
		    o.args[0]);
	if (opts_value(&o, "--listen") != NULL)
		a->listen = opts_value(&o, "--listen");
	a->tls_cert = opts_value(&o, "--tls-cert");
	a->tls_key = opts_value(&o, "--tls-key");
	opts_release(&o);
	return rc;
}

int
cmd_serve(struct cli *cli, int argc, char **argv, struct sc_err *err)
{
	struct serve_args a = {SERVE_LISTEN_DEFAULT, NULL, NULL};
	struct serve_listen l;
	struct config cfg;
	struct serve *s = NULL;
	sigset_t set;
	int port = 0, sig = 0, rc;

	memset(&cfg, 0, sizeof(cfg));
	memset(&l, 0, sizeof(l));
	rc = serve_parse_args(&a, argc, argv, err);
	if (rc == 0)
		rc = cli_load_config(&cfg, cli, false, err);
	if (rc == 0)
		rc = serve_listen_prepare(&l, &a, cfg.state_dir, "serve", err);
	if (rc < 0)
		goto out;
	/* the library's threads inherit the mask: only this thread takes
	 * the signals, in sigwait() */
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	rc = serve_start(&s, &port, cli, cfg.state_dir, &l, err);
	if (rc < 0)
		goto out;
	serve_listen_announce(cli->out, stderr, port, &l);
	sigwait(&set, &sig);
	serve_stop(s);
out:
	serve_listen_release(&l);
	config_release(&cfg);
	return rc;
}
