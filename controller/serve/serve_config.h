/*
 * serve_config.h - the server's loaded config, kept between requests,
 * and the one read-only database handle a request's key check and its
 * views share (docs/api.md#what-a-request-costs).
 *
 * serve.c owns one struct serve_config for the server's life and puts
 * its lender in its own copy of struct cli (cli->lender); view_open()
 * then asks it first, and a read view borrows the kept config instead
 * of loading storyctl.json again (controller/views/view.c).  Everything here runs on the daemon's one polling
 * thread (controller/serve/serve.c); nothing is locked.
 */
#ifndef STORYCTL_SERVE_CONFIG_H
#define STORYCTL_SERVE_CONFIG_H

#include <stdbool.h>

#include "common/err.h"
#include "controller/views/view.h"
#include "state/db.h"

struct serve_config;

/* An empty cache: the first view loads the config.  *out is the
 * caller's, to serve_config_free(). */
int serve_config_new(struct serve_config **out, struct sc_err *err);
/* NULL ok.  No view may still borrow from sc. */
void serve_config_free(struct serve_config *sc);

/*
 * What view_open() asks first for a read view (struct view_lender):
 * while no other view borrows, v->cfg is the kept config (loaded again
 * first when it may be stale, see serve_config.c) and v->db the
 * request's handle when one is set for v->cfg.state_dir, else one of
 * v's own; view_close() gives both back.  Owned by sc.
 */
const struct view_lender *serve_config_lender(struct serve_config *sc);

/* The request's read-only handle on state_dir's database (borrowed: the
 * caller closes it after serve_config_use_db(sc, NULL, NULL)). */
void serve_config_use_db(
    struct serve_config *sc, struct db *db, const char *state_dir);

/* How many times storyctl.json was loaded (tests/unit/
 * test_serve_config.c). */
unsigned long serve_config_loads(const struct serve_config *sc);

#endif
