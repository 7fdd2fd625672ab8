/*
 * cmd_tasks.c - `storyctl tasks STORY`: every item the parser saw in
 * one story, with its line, whether it was counted and why
 * (docs/stories.md).  The file is read through stories.c, as run reads
 * it, and counted by the same walk as run's progress
 * (progress_items()), so the two cannot disagree.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "controller/cli/cli.h"
#include "controller/cli/help.h"
#include "controller/cli/opts.h"
#include "controller/config/config.h"
#include "controller/config/stories.h"
#include "state/fsutil.h"
#include "strategies/progress.h"
#include "strategies/suggest.h"
#include "strategies/text.h"

/* The story named by id, or by its file as configured. */
static int
story_find(const struct config *cfg, const char *name)
{
	size_t i;
	int k = config_story_index(cfg, name);

	for (i = 0; k < 0 && i < cfg->nstories; i++)
		if (strcmp(cfg->stories[i].file, name) == 0)
			k = (int)i;
	return k;
}

/* "no story X in the config", with the nearest id when one is close
 * (docs/stories.md#ids), as show and requeue say it. */
static int
no_such_story(const struct config *cfg, const char *name, struct sc_err *err)
{
	struct suggest sg;
	size_t i;
	int best;

	suggest_init(&sg, name);
	for (i = 0; i < cfg->nstories && i < INT_MAX; i++)
		suggest_add(&sg, cfg->stories[i].id, (int)i);
	best = suggest_best(&sg);
	if (best >= 0)
		return err_set(err, SC_EUSAGE,
		    "tasks: no story '%s' in the config; did you mean %s?",
		    name, cfg->stories[best].id);
	return err_set(err, SC_EUSAGE,
	    "tasks: no story '%s' in the config (storyctl check lists them)",
	    name);
}

/* A story file that leads out of the root is refused as stories_load()
 * refuses it, with its message; story_read_text() would refuse it too,
 * but as a symlink swapped in while the batch runs. */
static int
story_inside(
    const char *path, const char *root, const char *file, struct sc_err *err)
{
	char *real = realpath(path, NULL), *rroot = realpath(root, NULL);
	char shown[256];
	size_t n = rroot != NULL ? strlen(rroot) : 0;
	int rc = 0;

	if (real != NULL && rroot != NULL && strcmp(rroot, "/") != 0 &&
	    (strncmp(real, rroot, n) != 0 || real[n] != '/')) {
		/* the target is named by whoever made the link */
		text_clean(shown, sizeof(shown), real, strlen(real),
		    TEXT_MARK_INVALID, NULL);
		rc = err_set(err, SC_EDATA,
		    "%s: story file resolves to %s, outside the project root "
		    "%s",
		    file, shown, rroot);
	}
	free(real);
	free(rroot);
	return rc;
}

static json_t *
items_json(const struct progress_item *it, size_t n)
{
	json_t *a = json_array();
	size_t i;

	for (i = 0; a != NULL && i < n; i++)
		json_array_append_new(a,
		    json_pack("{s:i, s:s, s:b, s:s, s:s}", "line", it[i].line,
			"kind", progress_item_kind_name(it[i].kind), "checked",
			it[i].checked, "text", it[i].text, "why", it[i].why));
	return a;
}

/* A heading of the story and its line, or null when line is 0. */
static json_t *
heading_json(const char *written, int line)
{
	return line > 0
	    ? json_pack("{s:s, s:i}", "heading", written, "line", line)
	    : json_null();
}

static int
print_json(const struct cli *cli, const struct story_conf *sc,
    const struct progress *p, const struct progress_item *it, size_t n,
    struct sc_err *err)
{
	json_t *o;
	int rc;

	o = json_pack("{s:i, s:s, s:s, s:o, s:b, s:i, s:i, s:i, s:i, s:i, "
		      "s:o, s:b, s:o, s:o, s:o, s:i}",
	    "format_version", CLI_JSON_FORMAT_VERSION, "story", sc->id, "file",
	    sc->file, "heading",
	    p->heading[0] != '\0' ? json_string(p->heading) : json_null(),
	    "whole_file", p->whole_file, "tasks_completed",
	    p->counts.tasks_completed, "tasks_total", p->counts.tasks_total,
	    "subtasks_completed", p->counts.subtasks_completed,
	    "subtasks_total", p->counts.subtasks_total, "skipped_items",
	    p->skipped_items, "items", items_json(it, n), "items_truncated",
	    n >= PROGRESS_ITEMS_MAX, "section",
	    heading_json(p->heading_written, p->heading_line), "passed_over",
	    heading_json(p->passed_over, p->passed_over_line), "rejected",
	    heading_json(p->rejected, p->rejected_line), "copies", p->copies);
	rc = o != NULL ? cli_print_json(cli, o, err)
		       : err_set(err, SC_EOS, "out of memory");
	json_decref(o);
	return rc;
}

static void
print_text(const struct cli *cli, const struct story_conf *sc,
    const struct progress *p, const struct progress_item *it, size_t n)
{
	char why[400];
	size_t i;

	fprintf(cli->out, "story %s: %s\n", sc->id, sc->file);
	for (i = 0; i < n && it[i].kind != PROGRESS_ITEM_HEADING; i++)
		;
	if (p->whole_file)
		fprintf(cli->out, "section: whole file: no headings\n");
	else if (p->heading[0] != '\0' && i < n)
		fprintf(cli->out, "section: %s (line %d)\n", it[i].text,
		    it[i].line);
	if (p->passed_over_line > 0)
		fprintf(cli->out,
		    "passed over: %s (line %d): all %d checked while this "
		    "one has open tasks (two task lists disagree)\n",
		    p->passed_over, p->passed_over_line, p->passed_over_tasks);
	if (p->rejected_line > 0)
		fprintf(cli->out,
		    "passed over: %s (line %d): a checklist of acceptance "
		    "criteria, QA or done, not a task list\n",
		    p->rejected, p->rejected_line);
	else
		fprintf(cli->out, "section: none (%s)\n",
		    progress_no_tasks_reason(why, sizeof(why), p));
	for (i = 0; i < n; i++)
		fprintf(cli->out, "  %5d  %s  %-8s %s%s(%s)\n", it[i].line,
		    it[i].kind == PROGRESS_ITEM_HEADING ? "   "
			: it[i].checked			? "[x]"
							: "[ ]",
		    progress_item_kind_name(it[i].kind), it[i].text,
		    it[i].text[0] != '\0' ? "  " : "", it[i].why);
	if (n >= PROGRESS_ITEMS_MAX)
		fprintf(cli->out, "  (only the first %d items are listed)\n",
		    PROGRESS_ITEMS_MAX);
	fprintf(cli->out, "%d/%d tasks, %d/%d subtasks",
	    p->counts.tasks_completed, p->counts.tasks_total,
	    p->counts.subtasks_completed, p->counts.subtasks_total);
	if (p->skipped_items > 0)
		fprintf(cli->out,
		    ", %d item%s not counted (the first on line %d)",
		    p->skipped_items, p->skipped_items == 1 ? "" : "s",
		    p->skipped_first_line);
	fprintf(cli->out, "\n");
	if (p->counts.tasks_total == 0)
		fprintf(cli->out, "invalid: %s\n",
		    progress_no_tasks_reason(why, sizeof(why), p));
}

/* tasks STORY [--json] (its help table, controller/cli/opts.h). */
static int
tasks_parse(
    const char **name, int *json, int argc, char **argv, struct sc_err *err)
{
	struct opts o;
	int rc;

	rc = opts_parse(&o, "tasks", help_tasks.options, argc, argv, err);
	if (rc == 0 && o.nargs > 1)
		rc = err_set(err, SC_EUSAGE,
		    "tasks: unexpected argument '%s' (usage: storyctl tasks "
		    "STORY [--json])",
		    o.args[1]);
	if (rc == 0 && o.nargs == 0)
		rc = err_set(err, SC_EUSAGE,
		    "tasks: which story? (usage: storyctl tasks STORY "
		    "[--json]; storyctl check lists them)");
	*json = opts_has(&o, "--json");
	*name = o.nargs > 0 ? o.args[0] : NULL;
	opts_release(&o);
	return rc;
}

int
cmd_tasks(struct cli *cli, int argc, char **argv, struct sc_err *err)
{
	struct config cfg;
	struct progress p;
	struct progress_item *items = NULL;
	const struct story_conf *sc;
	const char *name = NULL;
	char *path = NULL, *text = NULL;
	size_t n = 0, len = 0;
	int k, json = 0, rc;

	memset(&cfg, 0, sizeof(cfg));
	rc = tasks_parse(&name, &json, argc, argv, err);
	if (rc < 0)
		return rc;
	rc = cli_load_config(&cfg, cli, false, err);
	if (rc < 0)
		goto out;
	k = story_find(&cfg, name);
	if (k < 0) {
		rc = no_such_story(&cfg, name, err);
		goto out;
	}
	sc = &cfg.stories[k];
	if ((path = fsutil_path_join(cfg.root, sc->file)) == NULL) {
		rc = err_set(err, SC_EOS, "out of memory");
		goto out;
	}
	rc = story_inside(path, cfg.root, sc->file, err);
	if (rc == 0)
		rc = story_read_text(&text, &len, path, cfg.root, err);
	if (rc < 0)
		goto out;
	rc = progress_items(&items, &n, &p, text, len, cfg.tasks_heading, err);
	if (rc < 0)
		goto out;
	if (json)
		rc = print_json(cli, sc, &p, items, n, err);
	else
		print_text(cli, sc, &p, items, n);
out:
	free(items);
	free(text);
	free(path);
	config_release(&cfg);
	return rc;
}
