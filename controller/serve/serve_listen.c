/*
 * serve_listen.c - see serve_listen.h: the address and TLS of the
 * service, for `serve` and `run --serve` alike (docs/api.md#serve,
 * docs/api.md#tls).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <sodium.h>

#include "controller/optlib_mhd.h"
#include "controller/cli/cli.h"
#include "controller/serve/serve_listen.h"
#include "state/db.h"
#include "strategies/number.h"

/* A PEM certificate chain or key is a few KiB; anything this large is
 * not one. */
#define TLS_FILE_MAX (1024 * 1024)

/* ADDR:PORT, or [ADDR6]:PORT: numeric addresses only, so what is
 * checked for loopback is what is bound (docs/api.md#serve). */
static int
listen_parse_addr(struct sockaddr_storage *ss, bool *loopback, const char *spec,
    const char *cmd, struct sc_err *err)
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
	    number_parse_int(&port, colon + 1, "port", 0, 65535, err) < 0)
		return err_set(err, SC_EUSAGE,
		    "%s: '%.80s' is not ADDR:PORT (e.g. 127.0.0.1:8420)", cmd,
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
	    "%s: '%.64s' is not a numeric IPv4 or [IPv6] address", cmd, host);
}

/* Bring the database to this schema (the keys' table) and count the
 * keys; no database yet is no key. */
static int
listen_count_keys(size_t *n, const char *state_dir, struct sc_err *err)
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

/* The whole of file into *out (NUL-terminated, the caller's). */
static int
listen_read_pem(char **out, const char *file, const char *cmd, const char *opt,
    struct sc_err *err)
{
	FILE *f = fopen(file, "rb");
	char *buf = NULL;
	size_t len = 0;
	int rc = 0;

	*out = NULL;
	if (f == NULL) {
		rc = err_set(err, SC_EUSAGE, "%s: %s %s: %s", cmd, opt, file,
		    strerror(errno));
		goto out;
	}
	if ((buf = malloc(TLS_FILE_MAX + 1)) == NULL) {
		rc = err_set(err, SC_EOS, "out of memory");
		goto out;
	}
	len = fread(buf, 1, TLS_FILE_MAX + 1, f);
	if (ferror(f) || len == 0 || len > TLS_FILE_MAX ||
	    memchr(buf, '\0', len) != NULL) {
		rc = err_set(err, SC_EUSAGE,
		    "%s: %s %s: cannot be read as a PEM file", cmd, opt, file);
		goto out;
	}
	buf[len] = '\0';
	*out = buf;
	buf = NULL;
out:
	if (buf != NULL)
		sodium_memzero(buf, TLS_FILE_MAX + 1);
	free(buf);
	if (f != NULL)
		fclose(f);
	return rc;
}

static int
listen_tls(struct serve_listen *out, const struct serve_args *a,
    const char *cmd, struct sc_err *err)
{
	int rc;

	if (a->tls_cert == NULL && a->tls_key == NULL)
		return 0;
	if (a->tls_cert == NULL || a->tls_key == NULL)
		return err_set(err, SC_EUSAGE,
		    "%s: --tls-cert and --tls-key go together (missing %s)",
		    cmd, a->tls_cert == NULL ? "--tls-cert" : "--tls-key");
	if ((rc = optlib_mhd_load(err)) < 0)
		return rc;
	if (MHD_is_feature_supported(MHD_FEATURE_TLS) != MHD_YES)
		return err_set(err, SC_EUNAVAIL,
		    "%s: this libmicrohttpd was built without TLS: serve "
		    "plain HTTP on loopback, or behind a TLS proxy",
		    cmd);
	rc = listen_read_pem(
	    &out->tls_cert, a->tls_cert, cmd, "--tls-cert", err);
	if (rc == 0)
		rc = listen_read_pem(
		    &out->tls_key, a->tls_key, cmd, "--tls-key", err);
	return rc;
}

int
serve_listen_prepare(struct serve_listen *out, const struct serve_args *a,
    const char *state_dir, const char *cmd, struct sc_err *err)
{
	size_t nkeys = 0;
	bool loopback = false;
	int rc;

	memset(out, 0, sizeof(*out));
	snprintf(out->spec, sizeof(out->spec), "%s", a->listen);
	rc = listen_parse_addr(&out->addr, &loopback, a->listen, cmd, err);
	out->loopback = loopback;
	if (rc == 0)
		rc = listen_tls(out, a, cmd, err);
	if (rc == 0)
		rc = listen_count_keys(&nkeys, state_dir, err);
	if (rc == 0 && !loopback && nkeys == 0)
		rc = err_set(err, SC_EUSAGE,
		    "%s: %s is not a loopback address and no key exists: "
		    "add one first (storyctl key add NAME)",
		    cmd, a->listen);
	if (rc < 0)
		serve_listen_release(out);
	return rc;
}

void
serve_listen_announce(
    FILE *out, FILE *err, int port, const struct serve_listen *l)
{
	fprintf(out, "serving on port %d (%s%s)\n", port, l->spec,
	    l->tls_cert != NULL ? ", https" : "");
	fflush(out);
	/* keys, sessions and the record would cross the network in the
	 * clear: allowed (a trusted network, a proxy on the same host),
	 * never silent */
	if (!l->loopback && l->tls_cert == NULL) {
		fprintf(err,
		    "warning: serving plain HTTP on %s, which is not "
		    "loopback: keys, sessions and the record cross the "
		    "network unencrypted (--tls-cert and --tls-key, or a "
		    "TLS proxy in front)\n",
		    l->spec);
		fflush(err);
	}
}

void
serve_listen_release(struct serve_listen *l)
{
	if (l->tls_key != NULL)
		sodium_memzero(l->tls_key, strlen(l->tls_key));
	free(l->tls_cert);
	free(l->tls_key);
	l->tls_cert = NULL;
	l->tls_key = NULL;
}
