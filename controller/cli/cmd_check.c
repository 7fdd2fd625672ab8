/*
 * cmd_check.c - `storyctl check [--json]`: the preflight.  It looks for
 * every problem `run` would hit, in one go (docs/configuration.md,
 * "storyctl check"): the config, every story file, the agent, gate and
 * reviewer programs, the git repository and the state branch, prompts
 * too long for one argument; and warns about what run would do that
 * the author may not expect (a draft skipped, a whole file counted,
 * items that look like tasks but are not counted, no fallback agent).
 * The checks use the functions run uses (stories.c, argv.c,
 * gitstate.c), so check cannot pass what run then refuses.
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "controller/engine/agentenv.h"
#include "controller/config/argv.h"
#include "controller/cli/check_int.h"
#include "controller/cli/cli.h"
#include "controller/cli/help.h"
#include "controller/config/config.h"
#include "controller/engine/preflight.h"
#include "controller/engine/prompt.h"
#include "controller/engine/sandbox.h"
#include "controller/config/stories.h"
#include "state/fsutil.h"
#include "state/gitstate.h"
#include "state/gitwork.h"
#include "strategies/text.h"

/* Record a problem (warning or error) of story cs (NULL: of the whole
 * project).  stops_run: run fails on it before any attempt. */
static void
problem(struct check *c, struct cstory *cs, bool warning, int code,
    bool stops_run, const char *fmt, ...)
{
	char raw[1024], msg[1024];
	const char *m = raw;
	size_t flen;
	json_t *o;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(raw, sizeof(raw), fmt, ap);
	va_end(ap);
	/* the story's file is named apart: not twice */
	flen = cs != NULL ? strlen(cs->sc->file) : 0;
	if (flen > 0 && strncmp(m, cs->sc->file, flen) == 0 && m[flen] == ':' &&
	    m[flen + 1] == ' ')
		m += flen + 2;
	/* story text and file names reach the terminal and JSON: no
	 * control characters, valid UTF-8 */
	text_clean(msg, sizeof(msg), m, strlen(m),
	    TEXT_COLLAPSE | TEXT_MARK_INVALID | TEXT_TRIM, NULL);
	o = json_object();
	if (cs != NULL) {
		json_object_set_new(o, "story", json_string(cs->sc->id));
		json_object_set_new(o, "file", json_string(cs->sc->file));
		json_array_append_new(
		    warning ? cs->warnings : cs->errors, json_string(msg));
	}
	json_object_set_new(o, "message", json_string(msg));
	json_array_append_new(warning ? c->warnings : c->errors, o);
	if (warning)
		return;
	if (c->nerrors++ == 0)
		err_set(&c->first, code, "%s%s%s", cs ? cs->sc->file : "",
		    cs ? ": " : "", msg);
	if (c->any_code == 0)
		c->any_code = code;
	if (stops_run && c->run_code == 0)
		c->run_code = code;
}

/* --- stories --------------------------------------------------------- */

/*
 * Read every story as run reads it.  stories_load() stops at the first
 * file it cannot read; each file is then read on its own, so that every
 * unreadable one is named.
 */
static void
check_stories(struct check *c)
{
	struct story *s = NULL;
	struct sc_err e, le;
	char *path = NULL, *text = NULL;
	size_t ns = 0, i, len;
	int before = (int)c->nerrors;

	err_clear(&le);
	if (stories_load(&s, &ns, &c->cfg, &le) < 0) {
		s = NULL;
		ns = 0;
	}
	for (i = 0; i < c->n; i++) {
		struct cstory *cs = &c->st[i];
		err_clear(&e);
		if (ns == c->n) {
			cs->draft = s[i].draft;
			cs->skipped = story_skipped(&s[i], &c->cfg);
			cs->status_line = strdup(s[i].status_line);
		}
		if ((path = fsutil_path_join(c->cfg.root, cs->sc->file)) ==
		    NULL) {
			err_set(&e, SC_EOS, "out of memory");
		} else if (story_read_text(
			       &text, &len, path, c->cfg.root, &e) == 0) {
			progress_parse_heading(
			    &cs->pr, text, len, c->cfg.tasks_heading);
			cs->read_ok = true;
		}
		/* the message stories_load() gave for the file it stopped at
		 * says it best ("resolves to ..., outside the project
		 * root") */
		if (!cs->read_ok && le.code != 0 &&
		    strncmp(le.msg, cs->sc->file, strlen(cs->sc->file)) == 0 &&
		    le.msg[strlen(cs->sc->file)] == ':')
			e = le;
		if (!cs->read_ok)
			problem(c, cs, false, e.code, true, "%s", e.msg);
		free(text);
		text = NULL;
		free(path);
	}
	/* stories_load() failed for a reason no single file showed */
	if (le.code != 0 && (int)c->nerrors == before)
		problem(c, NULL, false, le.code, true, "%s", le.msg);
	stories_free(s, ns);
}

/* What run would do with each readable story that the author may not
 * expect (docs/stories.md). */
static void
check_story_shapes(struct check *c)
{
	size_t i;

	/* a sprint status naming stories without files says so
	 * (docs/stories.md#bmad-v6-sprint-statusyaml) */
	if (c->n == 0 && c->cfg.sprint_found.entries > 0)
		problem(c, NULL, false, SC_EDATA, false,
		    "no stories: none of the %zu story entries of %s has a "
		    "story file (each is listed with why)",
		    c->cfg.sprint_found.entries, c->cfg.sprint_status);
	else if (c->n == 0)
		problem(c, NULL, false, SC_EDATA, false, "no stories: %s",
		    c->cfg.stories_glob != NULL
			? "stories_glob matches no file and \"stories\" "
			  "names none"
			: "the config names none (\"stories\" or "
			  "\"stories_glob\")");
	for (i = 0; i < c->n; i++) {
		struct cstory *cs = &c->st[i];
		const struct progress *p = &cs->pr;
		char why[400];

		if (!cs->read_ok)
			continue;
		if (cs->skipped) {
			/* run leaves it out of the batch: what it would
			 * trip on is not run's problem yet */
			problem(c, cs, true, 0, false,
			    "Status: Draft: run skips it (--include-drafts)");
			continue;
		}
		if (p->counts.tasks_total == 0)
			problem(c, cs, false, SC_EDATA, false, "%s",
			    progress_no_tasks_reason(why, sizeof(why), p));
		if (p->whole_file && p->counts.tasks_total > 0)
			problem(c, cs, true, 0, false,
			    "no headings: the whole file is counted as its "
			    "Tasks section, so any checklist in it counts "
			    "(a \"## Tasks / Subtasks\" heading makes it "
			    "exact)%s",
			    p->code_heading_line > 0
				? "; a line indented 4 spaces or more looks "
				  "like a heading but is code"
				: "");
		if (p->passed_over_line > 0)
			problem(c, cs, true, 0, false,
			    "two task lists disagree: %s (line %d) is all "
			    "checked but %s (line %d) has open tasks, so it "
			    "is counted and the story is not done "
			    "(stories.tasks_heading names the one you mean)",
			    p->passed_over, p->passed_over_line,
			    p->heading_written, p->heading_line);
		if (p->copies > 0)
			problem(c, cs, true, 0, false,
			    "%s is written again with the same tasks (line "
			    "%d): counted once, a box checked in either copy "
			    "is checked",
			    p->heading_written, p->copy_line);
		if (p->skipped_items > 0)
			problem(c, cs, true, 0, false,
			    "%d item%s that look%s like tasks but %s not "
			    "counted, the first on line %d: %s (storyctl "
			    "tasks %s lists them)",
			    p->skipped_items, p->skipped_items == 1 ? "" : "s",
			    p->skipped_items == 1 ? "s" : "",
			    p->skipped_items == 1 ? "is" : "are",
			    p->skipped_first_line, p->skipped_first,
			    cs->sc->id);
	}
}

/*
 * The first attempt's argv of every story and agent must pass execve's
 * size limits (argv_fits), with the environment the agent gets: a prompt
 * over one argument's limit, or a huge env value, would fail every
 * attempt of the night (docs/configuration.md).
 */
static void
check_prompt_sizes(struct check *c)
{
	const struct config *cfg = &c->cfg;
	struct argv_vars v;
	struct prompt_prev prev;
	struct strlist argv;
	struct sc_err e;
	char **envp[2] = {NULL, NULL};
	char *prompt = NULL;
	size_t i;
	int r;

	/* the environment each agent will get, as the runner builds it: a
	 * huge value in an agent's env fails execve just the same */
	for (r = ROLE_PRIMARY; r <= ROLE_FALLBACK; r++)
		if (cfg->agents[r].configured &&
		    agentenv_build(&envp[r], &cfg->agents[r].env, NULL, &e) < 0)
			envp[r] = NULL; /* the config check reports it */
	memset(&prev, 0, sizeof(prev));
	for (i = 0; i < c->n; i++) {
		struct cstory *cs = &c->st[i];
		if (!cs->read_ok || cs->pr.counts.tasks_total == 0)
			continue;
		memset(&v, 0, sizeof(v));
		v.story_file = cs->sc->file;
		v.story_id = cs->sc->id;
		v.repo = cfg->root;
		v.attempt = 1;
		v.max_attempts = cfg->policy.max_attempts;
		v.prompt_file = "/state/logs/story.a1.prompt";
		err_clear(&e);
		if (prompt_render(&prompt, cfg->prompt, &v, &prev, &e) < 0)
			continue; /* placeholders: the agents check says so */
		v.prompt = prompt;
		for (r = ROLE_PRIMARY; r <= ROLE_FALLBACK; r++) {
			const struct agent_conf *a = &cfg->agents[r];
			if (!a->configured)
				continue;
			memset(&argv, 0, sizeof(argv));
			v.role = role_name((enum role)r);
			if (argv_expand(&argv, &a->command, &v, &e) == 0 &&
			    argv_fits(&argv, envp[r], &e) < 0)
				problem(c, cs, false, SC_EDATA, false,
				    "agent %s (%s): %s",
				    role_name((enum role)r), a->name, e.msg);
			strlist_release(&argv);
		}
		free(prompt);
		prompt = NULL;
	}
	free(envp[0]);
	free(envp[1]);
}

/* --- agents and git ---------------------------------------------------- */

/* One program of the run, as run checks it (preflight.c): its line in
 * the JSON's "agents" when it runs here, a problem when it fails. */
static int
check_program(void *ctx, const struct preflight_prog *p)
{
	struct check *c = ctx;
	struct sc_err e;
	char *path = NULL, prog[1024], res[1024];
	json_t *o;
	int rc;

	err_clear(&e);
	rc = preflight_check(&path, p, &e);
	if (p->here) {
		/* JSON strings must be UTF-8; a path need not be */
		text_clean(prog, sizeof(prog),
		    p->argv->n > 0 ? p->argv->items[0] : "",
		    p->argv->n > 0 ? strlen(p->argv->items[0]) : 0,
		    TEXT_MARK_INVALID, NULL);
		if (path != NULL)
			text_clean(res, sizeof(res), path, strlen(path),
			    TEXT_MARK_INVALID, NULL);
		o = json_pack("{s:s, s:s, s:s, s:o}", "role", p->role, "name",
		    p->name, "program", prog, "resolved",
		    path != NULL ? json_string(res) : json_null());
		if (o != NULL && p->agent >= 0)
			json_object_set_new(o, "sandbox",
			    json_string(c->confined[p->agent] ? "confined"
							      : "unconfined"));
		json_array_append_new(c->agents, o);
	}
	if (rc < 0)
		problem(c, NULL, false, rc, true, "%s: %s", p->what, e.msg);
	free(path);
	return 0;
}

/* Which agents run confined, as run decides: "auto" without a sandbox
 * is a warning, true without one an error that stops run (exit 69). */
static void
check_sandbox(struct check *c)
{
	struct sc_err e;
	char line[512];
	bool wanted = false;
	int r;

	err_clear(&e);
	for (r = ROLE_PRIMARY; r <= ROLE_FALLBACK; r++)
		if (c->cfg.agents[r].configured &&
		    c->cfg.agents[r].sandbox.enabled != SANDBOX_OFF)
			wanted = true;
	if (!wanted)
		return;
	if (sandbox_probe(&c->host, &e) < 0)
		problem(c, NULL, false, e.code, true, "%s", e.msg);
	else if (sandbox_decide_roles(c->confined, line, sizeof(line), &c->host,
		     &c->cfg, &e) < 0)
		problem(c, NULL, false, e.code, true, "%s", e.msg);
	else if (line[0] != '\0')
		problem(c, NULL, true, 0, false, "%s", line);
}

static void
check_agents(struct check *c)
{
	(void)preflight_each(&c->cfg, c->confined, check_program, c);
	if (!c->cfg.agents[ROLE_FALLBACK].configured)
		problem(c, NULL, true, 0, false,
		    "no fallback agent: a story whose primary agent fails for "
		    "good (auth, quota) is escalated, not tried with another "
		    "agent (agents.fallback)");
}

/* The state dir relative to the project root, or NULL (batch.c). */
static const char *
state_rel(const struct config *cfg)
{
	size_t n = strlen(cfg->root);

	if (strncmp(cfg->state_dir, cfg->root, n) == 0 &&
	    cfg->state_dir[n] == '/')
		return cfg->state_dir + n + 1;
	return NULL;
}

/* The project is a git repository whose state branch run can write,
 * opened as run opens it. */
static void
check_git(struct check *c)
{
	struct gitstate *gs = NULL;
	struct sc_err e;
	char why[300];
	int dirty = 0;

	err_clear(&e);
	if (gitstate_open(&gs, c->cfg.root, c->cfg.git.state_branch, &e) < 0) {
		problem(c, NULL, false, e.code, true, "%s", e.msg);
		return;
	}
	gitstate_free(gs);
	if (!c->cfg.git.commit_work)
		return;
	err_clear(&e);
	if (gitwork_is_dirty(&dirty, why, sizeof(why), c->cfg.root,
		state_rel(&c->cfg), &e) < 0)
		problem(c, NULL, false, e.code, true, "%s", e.msg);
	else if (dirty)
		problem(c, NULL, true, 0, false,
		    "git.commit_work: the working tree has uncommitted "
		    "changes (%s); run will not start a new batch on it "
		    "(commit or stash them)",
		    why);
}

/* --- the command --------------------------------------------------------- */

/* c's per-story records, one per configured story. */
static int
check_alloc_stories(struct check *c, struct sc_err *err)
{
	size_t i;

	c->n = c->cfg.nstories;
	c->st = calloc(c->n + 1, sizeof(*c->st));
	if (c->st == NULL)
		return err_set(err, SC_EOS, "out of memory");
	for (i = 0; i < c->n; i++) {
		c->st[i].sc = &c->cfg.stories[i];
		c->st[i].warnings = json_array();
		c->st[i].errors = json_array();
	}
	return 0;
}

/* The order run would take the stories in; on a dependency problem
 * (reported) the config's order. */
static int
check_order(size_t **order, struct check *c, struct sc_err *err)
{
	struct sc_err e;
	size_t i;

	err_clear(&e);
	if (stories_order(order, &c->cfg, &e) < 0) {
		problem(c, NULL, false, e.code, true, "%s", e.msg);
		free(*order);
		*order = calloc(c->n + 1, sizeof(**order));
		for (i = 0; *order != NULL && i < c->n; i++)
			(*order)[i] = i;
	}
	if (*order == NULL)
		return err_set(err, SC_EOS, "out of memory");
	return 0;
}

static void
check_release(struct check *c)
{
	size_t i;

	for (i = 0; c->st != NULL && i < c->n; i++) {
		json_decref(c->st[i].warnings);
		json_decref(c->st[i].errors);
		free(c->st[i].status_line);
	}
	free(c->st);
	json_decref(c->errors);
	json_decref(c->warnings);
	json_decref(c->agents);
	sandbox_host_release(&c->host);
	config_release(&c->cfg);
}

int
cmd_check(struct cli *cli, int argc, char **argv, struct sc_err *err)
{
	struct check c;
	size_t *order = NULL;
	struct sc_err e;
	int json = 0, rc = 0;

	memset(&c, 0, sizeof(c));
	rc = cli_view_flags(
	    "check", help_check.options, argc, argv, &json, NULL, NULL, err);
	if (rc < 0)
		return rc;
	c.errors = json_array();
	c.warnings = json_array();
	c.agents = json_array();
	if (c.errors == NULL || c.warnings == NULL || c.agents == NULL) {
		rc = err_set(err, SC_EOS, "out of memory");
		goto out;
	}
	/* a config that does not load stops everything, as for run */
	rc = cli_load_config(&c.cfg, cli, false, err);
	if (rc < 0) {
		if (json) {
			problem(&c, NULL, false, rc, true, "%s", err->msg);
			(void)check_print_json(cli, &c, NULL, &e);
		}
		goto out;
	}
	rc = check_alloc_stories(&c, err);
	if (rc < 0)
		goto out;
	/* in the order run checks: stories, agents, the repository */
	check_stories(&c);
	check_sandbox(&c);
	check_agents(&c);
	check_git(&c);
	check_story_shapes(&c);
	check_prompt_sizes(&c);
	rc = check_order(&order, &c, err);
	if (rc < 0)
		goto out;
	if (json) {
		rc = check_print_json(cli, &c, order, err);
		if (rc < 0)
			goto out;
	} else {
		check_print_text(cli->out, &c, order);
	}
	if (c.nerrors > 0) {
		*err = c.first;
		rc = c.run_code != 0 ? c.run_code : c.any_code;
		err->code = rc;
		if (c.nerrors > 1)
			err_prefix(err, "%zu problems; the first", c.nerrors);
	}
out:
	free(order);
	check_release(&c);
	return rc;
}
