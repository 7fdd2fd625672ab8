/*
 * cmd_status.c - `storyctl status`: the batch at a glance, as text or
 * JSON (docs/commands.md).
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "controller/cli/cli.h"
#include "controller/cli/help.h"
#include "controller/clock.h"
#include "controller/views/view.h"
#include "controller/views/views.h"
#include "state/db.h"
#include "state/lock.h"
#include "state/render.h"
#include "strategies/decide.h"

/* One "now:" line per attempt running in this batch
 * (docs/commands.md#status). */
static void
status_print_running(struct cli *cli, const struct views_status *sf,
    const struct attempt_row *cur)
{
	char buf[64], sub[48] = "";

	clock_fmt_duration(buf, sizeof(buf), sf->now - cur->started_ms);
	if (cur->counts.subtasks_total > 0)
		snprintf(sub, sizeof(sub), " (%d/%d subtasks)",
		    cur->counts.subtasks_completed, cur->counts.subtasks_total);
	fprintf(cli->out,
	    "now: %s attempt %d, %s (%s), %d/%d tasks%s, "
	    "%s%s\n",
	    cur->story_id, cur->attempt, role_name(cur->role), cur->agent,
	    cur->counts.tasks_completed, cur->counts.tasks_total, sub, buf,
	    sf->pid > 0 ? "" : " (controller gone: resume closes it)");
}

static void
status_print_text(
    struct cli *cli, const struct view *v, const struct views_status *sf)
{
	char buf[64];
	size_t i;

	if (!v->have_batch)
		fprintf(cli->out, "no batch has run yet\n");
	else
		fprintf(cli->out, "batch %lld: %s%s\n", (long long)v->batch.id,
		    v->batch.status,
		    sf->pid > 0 ? " (controller running)" : "");
	fprintf(cli->out, "stories: %zu", sf->n);
	for (i = 0; i < STATUS__COUNT; i++)
		if (sf->counts[i])
			fprintf(cli->out, ", %d %s", sf->counts[i],
			    status_name((enum story_status)i));
	fprintf(cli->out, "\n");
	for (i = 0; sf->cur != NULL && i < sf->nrun; i++)
		if (sf->run[i].batch_id == v->batch.id)
			status_print_running(cli, sf, &sf->run[i]);
	for (i = 0; i < 2; i++) {
		if (sf->pause_until[i] == 0)
			continue;
		clock_fmt_iso(buf, sizeof(buf), sf->pause_until[i]);
		fprintf(cli->out,
		    "%s agent paused by its usage limit until %s\n",
		    role_name((enum role)i), buf);
	}
	if (sf->wait_story != NULL) {
		clock_fmt_duration(buf, sizeof(buf), sf->wait_until - sf->now);
		fprintf(cli->out, "next wait: %s attempt %d in %s\n",
		    sf->wait_story, sf->wait_attempt, buf);
	}
}

int
cmd_status(struct cli *cli, int argc, char **argv, struct sc_err *err)
{
	struct view v;
	struct views_status sf;
	json_t *j = NULL;
	int json = 0, rc;

	memset(&sf, 0, sizeof(sf));
	rc = cli_view_flags(
	    "status", help_status.options, argc, argv, &json, NULL, NULL, err);
	if (rc < 0)
		return rc;
	rc = view_open(&v, cli->config_path, cli->lender, false, err);
	if (rc < 0)
		goto out;
	if (json) {
		rc = views_status_json(&j, &v, err);
		if (rc == 0)
			rc = cli_print_json(cli, j, err);
		goto out;
	}
	rc = views_status_read(&sf, &v, err);
	if (rc == 0)
		status_print_text(cli, &v, &sf);
out:
	json_decref(j);
	views_status_release(&sf);
	view_close(&v);
	return rc;
}
