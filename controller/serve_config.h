/*
 * serve_config.h - the server's loaded config, kept between requests,
 * and the one read-only database handle a request's key check and its
 * views share (docs/api.md#what-a-request-costs).
 *
 * serve.c owns one struct serve_config for the server's life and puts
 * it in its own copy of struct cli (cli->serve); view_open() then lends
 * the read views the kept config instead of loading storyctl.json again
 * (controller/view.c).  Everything here runs on the daemon's one polling
 * thread (controller/serve.c); nothing is locked.
 */
#ifndef STORYCTL_SERVE_CONFIG_H
#define STORYCTL_SERVE_CONFIG_H

#include <stdbool.h>

#include "common/err.h"
#include "controller/cli.h"
#include "controller/view.h"
#include "state/db.h"

struct serve_config;

/* An empty cache: the first view loads the config.  *out is the
 * caller's, to serve_config_free(). */
int serve_config_new(struct serve_config **out, struct sc_err *err);
/* NULL ok.  No view may still borrow from sc. */
void serve_config_free(struct serve_config *sc);

/* Whether a read view can borrow from sc now (none borrows already:
 * the kept config is never replaced under a borrower). */
bool serve_config_can_lend(const struct serve_config *sc);
/*
 * view_open() for a read view in the server: v->cfg is the kept config
 * (loaded again first when it may be stale, see serve_config.c), v->db
 * the request's handle when one is set for v->cfg.state_dir, else one
 * of v's own.  v->lender is sc: view_close() gives both back.  On
 * error v is zeroed.
 */
int serve_config_view_open(struct view *v, struct serve_config *sc,
    const struct cli *cli, struct sc_err *err);
/* What view_close() does for a borrowed v. */
void serve_config_view_close(struct serve_config *sc, struct view *v);

/* The request's read-only handle on state_dir's database (borrowed: the
 * caller closes it after serve_config_use_db(sc, NULL, NULL)). */
void serve_config_use_db(
    struct serve_config *sc, struct db *db, const char *state_dir);

/* How many times storyctl.json was loaded (tests/unit/
 * test_serve_config.c). */
unsigned long serve_config_loads(const struct serve_config *sc);

#endif
