/*
 * view.h - what the inspect commands (status, list, show, log, requeue)
 * start from: the config, the database opened read-only (or for writing,
 * requeue) beside a working controller, and the latest batch; the story
 * lookups and flag parsing they share (docs/commands.md).
 *
 * view_open() fills v (the caller owns it; release with view_close(),
 * which takes a zeroed or failed-open v too) from a config file and
 * its database, never from a command's arguments, so that the CLI, the
 * service and the report open their views alike.  v->db is NULL before
 * the first run.  In the server a read view borrows the kept config and
 * the request's database handle from a lender instead
 * (controller/serve/serve_config.c).
 */
#ifndef STORYCTL_VIEW_H
#define STORYCTL_VIEW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/err.h"
#include "controller/config/config.h"
#include "state/db.h"

struct view;

/* Who may lend a read view its config and database (the server's cache,
 * controller/serve/serve_config.c); view.c knows it only by these calls. */
struct view_lender {
	/* 1: v filled and lent (v->lender set), 0: not now (v is opened
	 * on its own), < 0: an error with v zeroed */
	int (*lend)(struct view *v, void *arg, const char *config_path,
	    struct sc_err *err);
	/* what view_close() does for a lent v */
	void (*give_back)(struct view *v, void *arg);
	void *arg;
};

/* What every inspect command starts from: the config, the database (or
 * none yet) and the latest batch (or none yet). */
struct view {
	struct config cfg;
	struct db *db;
	struct batch_row batch;
	int have_batch;
	/* who lent cfg and maybe db; NULL: both are v's own */
	const struct view_lender *lender;
};

/* config_path: -c FILE, or NULL for the nearest storyctl.json
 * (config_locate()); lender: NULL, or asked first for a read view. */
int view_open(struct view *v, const char *config_path,
    const struct view_lender *lender, bool write, struct sc_err *err);
void view_close(struct view *v);
/* The wall clock in ms (what "now" means for a wait shown). */
int64_t view_now_ms(void);
/* Stories of the latest batch, or the config's before the first batch;
 * status NULL for all.  *out is the caller's (free()). */
int view_stories(struct story_row **out, size_t *n, struct view *v,
    const char *status, struct sc_err *err);
/* The story id of the latest batch (or the config), else the error of
 * view_no_such_story(). */
int view_find_story(
    struct story_row *st, struct view *v, const char *id, struct sc_err *err);

#endif
