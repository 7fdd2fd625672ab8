/*
 * view.h - what the inspect commands (status, list, show, log, requeue)
 * start from: the config, the database opened read-only (or for writing,
 * requeue) beside a working controller, and the latest batch; the story
 * lookups and flag parsing they share (docs/commands.md).
 *
 * view_open() fills v (the caller owns it; release with view_close(),
 * which takes a zeroed or failed-open v too).  v->db is NULL before the
 * first run.  In the server (cli->serve) a read view borrows the kept
 * config and the request's database handle instead
 * (controller/serve_config.c).
 */
#ifndef STORYCTL_VIEW_H
#define STORYCTL_VIEW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/err.h"
#include "controller/cli.h"
#include "controller/config.h"
#include "state/db.h"

struct serve_config;

/* What every inspect command starts from: the config, the database (or
 * none yet) and the latest batch (or none yet). */
struct view {
	struct config cfg;
	struct db *db;
	struct batch_row batch;
	int have_batch;
	/* the server's cache that lent cfg and maybe db
	 * (controller/serve_config.h); NULL: both are v's own */
	struct serve_config *lender;
};

int view_open(
    struct view *v, const struct cli *cli, bool write, struct sc_err *err);
void view_close(struct view *v);
/* The wall clock in ms (what "now" means for a wait shown). */
int64_t view_now_ms(void);
/* Stories of the latest batch, or the config's before the first batch;
 * status NULL for all.  *out is the caller's (free()). */
int view_stories(struct story_row **out, size_t *n, struct view *v,
    const char *status, struct sc_err *err);
/* The flags of cmd: a NULL out-pointer means the command has no such
 * flag; story != NULL means a story id is required. */
int view_parse_flags(const char *cmd, int argc, char **argv, int *json,
    int *follow, const char **status, const char **story, struct sc_err *err);
/* The story id of the latest batch (or the config), else the error of
 * view_no_such_story(). */
int view_find_story(
    struct story_row *st, struct view *v, const char *id, struct sc_err *err);

#endif
