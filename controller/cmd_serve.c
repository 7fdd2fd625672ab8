/*
 * cmd_serve.c - `storyctl serve [--listen ADDR:PORT]`: the service
 * beside a batch (docs/api.md).  Loopback by default; any other address
 * only once a key exists.  Runs until SIGINT or SIGTERM, then exits 0.
 */
#include <arpa/inet.h>
#include <limits.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "controller/cli.h"
#include "controller/config.h"
#include "controller/serve.h"
#include "state/db.h"

#define SERVE_LISTEN_DEFAULT "127.0.0.1:8420"

/* ADDR:PORT, or [ADDR6]:PORT: numeric addresses only, so what is
 * checked for loopback is what is bound (docs/api.md#serve). */
static int
serve_parse_addr(struct sockaddr_storage *ss, bool *loopback, const char *spec,
    struct sc_err *err)
{
	struct sockaddr_in *in4 = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;
	char host[64];
	const char *colon = strrchr(spec, ':');
	size_t hl;
	int port = 0;

	memset(ss, 0, sizeof(*ss));
	if (colon == NULL || (hl = (size_t)(colon - spec)) == 0 ||
	    hl >= sizeof(host) ||
	    cli_parse_int(&port, colon + 1, "--listen port", 0, 65535, err) < 0)
		return err_set(err, SC_EUSAGE,
		    "serve: --listen '%.80s' is not ADDR:PORT (e.g. "
		    "127.0.0.1:8420)",
		    spec);
	memcpy(host, spec, hl);
	host[hl] = '\0';
	if (inet_pton(AF_INET, host, &in4->sin_addr) == 1) {
		in4->sin_family = AF_INET;
		in4->sin_port = htons((uint16_t)port);
		*loopback = (ntohl(in4->sin_addr.s_addr) >> 24) == 127;
		return 0;
	}
	if (hl > 2 && host[0] == '[' && host[hl - 1] == ']') {
		host[hl - 1] = '\0';
		if (inet_pton(AF_INET6, host + 1, &in6->sin6_addr) == 1) {
			in6->sin6_family = AF_INET6;
			in6->sin6_port = htons((uint16_t)port);
			*loopback = IN6_IS_ADDR_LOOPBACK(&in6->sin6_addr);
			return 0;
		}
	}
	return err_set(err, SC_EUSAGE,
	    "serve: '%.64s' is not a numeric IPv4 or [IPv6] address", host);
}

/* Bring the database to this schema (the keys' table) and count the
 * keys; no database yet is no key. */
static int
serve_count_keys(size_t *n, const char *state_dir, struct sc_err *err)
{
	struct db *db = NULL;
	struct key_row *rows = NULL;
	struct stat sb;
	char path[4096];
	int rc = 0;

	*n = 0;
	snprintf(path, sizeof(path), "%s/state.db", state_dir);
	if (stat(path, &sb) < 0)
		return 0;
	rc = db_open(&db, state_dir, err);
	if (rc == 0)
		rc = db_key_list(db, &rows, n, err);
	free(rows);
	db_close(db);
	return rc;
}

static int
serve_parse_args(const char **listen, int argc, char **argv, struct sc_err *err)
{
	int i, r;

	for (i = 1; i < argc; i++) {
		r = cli_opt_value(listen, argc, argv, &i, "--listen", err);
		if (r < 0)
			return r;
		if (r == 0)
			return err_set(err, SC_EUSAGE,
			    "serve: unexpected argument '%s'", argv[i]);
	}
	return 0;
}

int
cmd_serve(struct cli *cli, int argc, char **argv, struct sc_err *err)
{
	struct sockaddr_storage ss;
	struct config cfg;
	struct serve *s = NULL;
	const char *listen = SERVE_LISTEN_DEFAULT;
	sigset_t set;
	size_t nkeys = 0;
	bool loopback = false;
	int port = 0, sig = 0, rc;

	memset(&cfg, 0, sizeof(cfg));
	rc = serve_parse_args(&listen, argc, argv, err);
	if (rc == 0)
		rc = serve_parse_addr(&ss, &loopback, listen, err);
	if (rc == 0)
		rc = cli_load_config(&cfg, cli, false, err);
	if (rc == 0)
		rc = serve_count_keys(&nkeys, cfg.state_dir, err);
	if (rc == 0 && !loopback && nkeys == 0)
		rc = err_set(err, SC_EUSAGE,
		    "serve: %s is not a loopback address and no key exists: "
		    "add one first (storyctl key add NAME)",
		    listen);
	if (rc < 0)
		goto out;
	/* the library's thread inherits the mask: only this thread takes
	 * the signals, in sigwait() */
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	rc = serve_start(
	    &s, &port, cli, cfg.state_dir, (struct sockaddr *)&ss, err);
	if (rc < 0)
		goto out;
	fprintf(cli->out, "serving on port %d (%s)\n", port, listen);
	fflush(cli->out);
	sigwait(&set, &sig);
	serve_stop(s);
out:
	config_release(&cfg);
	return rc;
}
