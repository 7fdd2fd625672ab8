/*
 * serve_listen.h - where and how the service listens, shared by
 * `storyctl serve` and `storyctl run --serve` (docs/api.md#serve): the
 * address (numeric, loopback unless a key exists) and TLS (a
 * certificate and key, both or neither, docs/api.md#tls).
 */
#ifndef STORYCTL_SERVE_LISTEN_H
#define STORYCTL_SERVE_LISTEN_H

#include <stdbool.h>
#include <stdio.h>
#include <sys/socket.h>

#include "common/err.h"

/* The command line's part: what the options said (argv's strings). */
struct serve_args {
	const char *listen; /* ADDR:PORT */
	const char *tls_cert; /* file names, NULL without TLS */
	const char *tls_key;
};

/* What the server starts with.  Owns tls_cert and tls_key (the PEM
 * texts, NULL without TLS); serve_listen_release() frees them. */
struct serve_listen {
	struct sockaddr_storage addr;
	char spec[96]; /* ADDR:PORT as given, for the line printed */
	char *tls_cert;
	char *tls_key;
	bool loopback; /* the address is 127.0.0.0/8 or ::1 */
};

/* Check a and fill *out: the address parsed; not loopback only when a
 * key exists in state_dir's database (brought up to this schema); the
 * TLS files read (both or neither, the library able to).  cmd names the
 * command in messages ("serve", "run --serve"). */
int serve_listen_prepare(struct serve_listen *out, const struct serve_args *a,
    const char *state_dir, const char *cmd, struct sc_err *err);
/* The line that says where it serves, to out ("serving on port N
 * (ADDR[, https])"), and to err a warning when it serves plain HTTP on
 * an address that is not loopback (docs/api.md#serve). */
void serve_listen_announce(
    FILE *out, FILE *err, int port, const struct serve_listen *l);
/* Free the PEM texts (wiped first: the key is a secret).  A zeroed l
 * is fine. */
void serve_listen_release(struct serve_listen *l);

#endif
