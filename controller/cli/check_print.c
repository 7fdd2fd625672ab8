/*
 * check_print.c - how `storyctl check` shows what it found: the header
 * (config, state, policy, agents), the stories in run order with their
 * counts, the warnings and errors, and the same as JSON
 * (docs/configuration.md, "storyctl check"; docs/json.md).
 */
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "controller/cli/check_int.h"
#include "controller/cli/cli.h"
#include "controller/engine/preflight.h"
#include "state/fsutil.h"
#include "state/gitwork.h"
#include "strategies/text.h"

/* argv for people: words with spaces or quotes are single-quoted. */
/* The argv template role r runs with: the preset's full-autonomy one
 * when confined (docs/sandbox.md#presets). */
static const struct strlist *
check_run_template(const struct check *c, int r)
{
	return preflight_template(&c->cfg.agents[r], c->confined[r]);
}

static void
print_argv(FILE *f, const struct strlist *argv)
{
	size_t i;

	for (i = 0; i < argv->n && argv->items[i] != NULL; i++) {
		const char *a = argv->items[i];
		if (strpbrk(a, " \t\"'\\$") != NULL || a[0] == '\0')
			fprintf(f, "%s'%s'", i ? " " : "", a);
		else
			fprintf(f, "%s%s", i ? " " : "", a);
	}
}

static void
print_problems(FILE *f, const char *title, json_t *list)
{
	json_t *o;
	size_t i;

	if (json_array_size(list) == 0)
		return;
	fprintf(f, "%s:\n", title);
	json_array_foreach(list, i, o)
	{
		const char *id = json_string_value(json_object_get(o, "story"));
		const char *file =
		    json_string_value(json_object_get(o, "file"));
		const char *msg =
		    json_string_value(json_object_get(o, "message"));
		if (id != NULL)
			fprintf(f, "  %s (%s): %s\n", id, file ? file : "",
			    msg ? msg : "");
		else
			fprintf(f, "  %s\n", msg ? msg : "");
	}
}

/* One worktree.copy glob: the main tree's files it matches now, and
 * those git does not ignore, which are never copied
 * (docs/git-work.md#copied-files). */
static void
print_copy(FILE *f, const struct config *cfg, const char *glob_pat)
{
	struct sc_err e2;
	struct stat sb;
	glob_t g;
	char *pat = fsutil_path_join(cfg->root, glob_pat);
	size_t i, files = 0, rootlen = strlen(cfg->root);
	int ign;

	fprintf(f, "  copy   %s:", glob_pat);
	memset(&g, 0, sizeof(g));
	if (pat != NULL && glob(pat, GLOB_NOSORT, NULL, &g) == 0) {
		for (i = 0; i < g.gl_pathc; i++) {
			if (lstat(g.gl_pathv[i], &sb) < 0 ||
			    !S_ISREG(sb.st_mode))
				continue;
			files++;
			if (gitwork_path_ignored(&ign, cfg->root,
				g.gl_pathv[i] + rootlen + 1, &e2) < 0 ||
			    !ign)
				fprintf(f,
				    " %s (not ignored by git: not copied)",
				    g.gl_pathv[i] + rootlen + 1);
		}
	}
	fprintf(f, " %zu file%s now\n", files, files == 1 ? "" : "s");
	globfree(&g);
	free(pat);
}

/* What a -j N slot's worktree gets besides its checkout
 * (docs/configuration.md#worktree); nothing when none is set. */
static void
print_worktree(FILE *f, const struct config *cfg)
{
	const struct worktree_conf *w = &cfg->worktree;
	size_t i;

	if (w->setup.n == 0 && w->copy.n == 0)
		return;
	fprintf(f, "worktree (run -j N, one per slot):\n");
	if (w->setup.n > 0) {
		fprintf(f,
		    "  setup  on %s%s%s: ", w->setup_on_create ? "create" : "",
		    w->setup_on_create && w->setup_on_switch ? ", " : "",
		    w->setup_on_switch ? "switch" : "");
		print_argv(f, &w->setup);
		fprintf(f, "\n");
	}
	for (i = 0; i < w->copy.n; i++)
		print_copy(f, cfg, w->copy.items[i]);
}

/* check's header: the config, the state, the policy, the agents. */
static void
print_header(FILE *f, const struct check *c)
{
	const struct config *cfg = &c->cfg;
	int r;

	fprintf(f, "config: %s\nstate:  %s (branch %s)\n", cfg->path,
	    cfg->state_dir, cfg->git.state_branch);
	fprintf(f,
	    "policy: %s, max_attempts %d, network_sleep %gs, "
	    "backoff %s %lld..%lld ms jitter %g\n",
	    strategy_name(cfg->policy.strategy), cfg->policy.max_attempts,
	    cfg->policy.network_sleep_s,
	    backoff_kind_name(cfg->policy.backoff.kind),
	    (long long)cfg->policy.backoff.base_delay_ms,
	    (long long)cfg->policy.backoff.max_delay_ms,
	    cfg->policy.backoff.jitter);
	fprintf(f, "agents:\n");
	for (r = ROLE_PRIMARY; r <= ROLE_FALLBACK; r++) {
		const struct agent_conf *a = &cfg->agents[r];
		if (!a->configured) {
			fprintf(f, "  %-8s (none)\n", role_name((enum role)r));
			continue;
		}
		fprintf(f,
		    "  %-8s %-8s timeout %gs, %s: ", role_name((enum role)r),
		    a->name, a->timeout_s,
		    c->confined[r] ? "confined" : "unconfined");
		print_argv(f, check_run_template(c, r));
		fprintf(f, "\n");
	}
	print_worktree(f, cfg);
}

/* One story's line after its number, id and file. */
static void
print_story_state(FILE *f, const struct cstory *cs)
{
	const struct progress *p = &cs->pr;
	char why[400];

	if (!cs->read_ok) {
		fprintf(f, "UNREADABLE\n");
		return;
	}
	fprintf(
	    f, "%d/%d tasks", p->counts.tasks_completed, p->counts.tasks_total);
	if (p->counts.subtasks_total > 0)
		fprintf(f, ", %d/%d subtasks", p->counts.subtasks_completed,
		    p->counts.subtasks_total);
	if (cs->skipped) {
		fprintf(f, "  DRAFT: skipped\n");
		return;
	}
	if (cs->draft)
		fprintf(f, "  DRAFT (included)");
	if (p->counts.tasks_total == 0)
		fprintf(f, "  INVALID: %s",
		    progress_no_tasks_reason(why, sizeof(why), p));
	fprintf(f, "\n");
}

/* The widest id and file the table shows whole; longer ones are cut
 * with an ellipsis, so that one very long name does not push every line
 * off the screen (docs/configuration.md#check). */
#define CHECK_ID_MAX 64
#define CHECK_FILE_MAX 80

/* Characters of UTF-8 s (continuation bytes not counted): the columns
 * it takes for the ids and paths of a story table. */
static size_t
cell_width(const char *s)
{
	size_t w = 0;

	for (; *s != '\0'; s++)
		w += !text_utf8_cont((unsigned char)*s);
	return w;
}

/* s in a column of width characters: padded with spaces, or cut to
 * width - 1 and an ellipsis, at the end (ids) or, keep_end, at the
 * start (paths, whose file name is at the end). */
static void
print_cell(FILE *f, const char *s, size_t width, bool keep_end)
{
	size_t w = cell_width(s), skip, i;
	const char *p = s;

	if (w <= width) {
		fprintf(f, "%s%*s", s, (int)(width - w), "");
		return;
	}
	if (keep_end) {
		/* drop the first w - (width - 1) characters */
		skip = w - (width - 1);
		for (i = 0; *p != '\0'; p++) {
			if (!text_utf8_cont((unsigned char)*p) && i++ == skip)
				break;
		}
		fprintf(f, "\u2026%s", p);
		return;
	}
	for (i = 0; *p != '\0'; p++) {
		if (!text_utf8_cont((unsigned char)*p) && i++ == width - 1)
			break;
	}
	fprintf(f, "%.*s\u2026", (int)(p - s), s);
}

/* The stories in run order, then the sprint's entries without a file. */
static void
print_stories(FILE *f, const struct check *c, const size_t *order)
{
	size_t k, i, wid = 2, wfile = 4, w;
	const struct cstory *cs;

	/* columns as wide as the longest id and file, up to a cap, so
	 * that none runs into the next */
	for (i = 0; i < c->n; i++) {
		w = cell_width(c->st[i].sc->id);
		if (w > wid)
			wid = w < CHECK_ID_MAX ? w : CHECK_ID_MAX;
		w = cell_width(c->st[i].sc->file);
		if (w > wfile)
			wfile = w < CHECK_FILE_MAX ? w : CHECK_FILE_MAX;
	}
	if (c->n == 0)
		fprintf(f, "stories: none\n");
	else
		fprintf(f, "stories (%zu, in this order):\n", c->n);
	for (k = 0; k < c->n; k++) {
		cs = &c->st[order[k]];
		fprintf(f, "  %3zu  ", k + 1);
		print_cell(f, cs->sc->id, wid, false);
		fputc(' ', f);
		print_cell(f, cs->sc->file, wfile, true);
		fputc(' ', f);
		print_story_state(f, cs);
	}
	/* a sprint's entries without a story file: run skips them too */
	for (k = 0; k < c->cfg.stories_skipped.n; k++)
		fprintf(f, "%s  skipping %s\n", k == 0 ? "\n" : "",
		    c->cfg.stories_skipped.items[k]);
}

void
check_print_text(FILE *f, struct check *c, const size_t *order)
{
	size_t i, skipped = 0;

	for (i = 0; i < c->n; i++)
		skipped += c->st[i].skipped;
	print_header(f, c);
	print_stories(f, c, order);
	print_problems(f, "warnings", c->warnings);
	print_problems(f, "errors", c->errors);
	if (c->nerrors == 0)
		fprintf(f, "ok: %zu stor%s ready", c->n - skipped,
		    c->n - skipped == 1 ? "y" : "ies");
	else
		fprintf(
		    f, "%zu error%s", c->nerrors, c->nerrors == 1 ? "" : "s");
	if (json_array_size(c->warnings) > 0)
		fprintf(f, " (%zu warning%s)", json_array_size(c->warnings),
		    json_array_size(c->warnings) == 1 ? "" : "s");
	fprintf(f, "\n");
}

static json_t *
story_json(const struct cstory *cs)
{
	const struct progress *p = &cs->pr;

	return json_pack("{s:s, s:s, s:i, s:i, s:i, s:i, s:o, s:b, s:o, s:b, "
			 "s:i, s:o, s:O, s:O}",
	    "id", cs->sc->id, "file", cs->sc->file, "tasks_completed",
	    p->counts.tasks_completed, "tasks_total", p->counts.tasks_total,
	    "subtasks_completed", p->counts.subtasks_completed,
	    "subtasks_total", p->counts.subtasks_total, "heading",
	    p->heading[0] != '\0' ? json_string(p->heading) : json_null(),
	    "whole_file", p->whole_file, "status_line",
	    cs->status_line != NULL && cs->status_line[0] != '\0'
		? json_string(cs->status_line)
		: json_null(),
	    "draft", cs->draft, "skipped_items", p->skipped_items,
	    "skipped_first_line",
	    p->skipped_items > 0 ? json_integer(p->skipped_first_line)
				 : json_null(),
	    "warnings", cs->warnings, "errors", cs->errors);
}

int
check_print_json(const struct cli *cli, struct check *c, const size_t *order,
    struct sc_err *err)
{
	json_t *o = NULL, *stories, *skipped;
	size_t k;
	int rc;

	stories = json_array();
	for (k = 0; stories != NULL && k < c->n; k++)
		json_array_append_new(stories, story_json(&c->st[order[k]]));
	/* sprint-status entries with no story file: "ID: why" */
	skipped = json_array();
	for (k = 0; skipped != NULL && k < c->cfg.stories_skipped.n; k++)
		json_array_append_new(
		    skipped, json_string(c->cfg.stories_skipped.items[k]));
	o = json_pack("{s:i, s:b, s:o, s:O, s:O, s:o, s:O, s:o}",
	    "format_version", CLI_JSON_FORMAT_VERSION, "ok", c->nerrors == 0,
	    "config", c->cfg.path ? json_string(c->cfg.path) : json_null(),
	    "errors", c->errors, "warnings", c->warnings, "stories", stories,
	    "agents", c->agents, "not_stories_yet", skipped);
	rc = o != NULL ? cli_print_json(cli, o, err)
		       : err_set(err, SC_EOS, "out of memory");
	json_decref(o);
	return rc;
}
