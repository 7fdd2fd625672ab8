/*
 * cmd_setup.c - the commands that prepare a night: init, agents (check
 * is cmd_check.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "controller/config/argv.h"
#include "controller/cli/cli.h"
#include "controller/cli/help.h"
#include "controller/config/config.h"
#include "controller/config/discover.h"
#include "controller/engine/preflight.h"
#include "controller/config/presets.h"
#include "controller/engine/prompt.h"
#include "controller/engine/runner.h"
#include "controller/engine/sandbox.h"
#include "controller/config/stories.h"
#include "strategies/text.h"

static json_t *
strlist_json(const struct strlist *l)
{
	json_t *a = json_array();
	size_t i;

	for (i = 0; a != NULL && i < l->n; i++)
		json_array_append_new(a, json_string(l->items[i]));
	return a;
}

/* argv for people: words with spaces or quotes are single-quoted. */
static void
print_argv(FILE *f, const char *const *argv, size_t n)
{
	size_t i;

	for (i = 0; i < n && argv[i] != NULL; i++) {
		if (strpbrk(argv[i], " \t\"'\\$") != NULL || argv[i][0] == '\0')
			fprintf(f, "%s'%s'", i ? " " : "", argv[i]);
		else
			fprintf(f, "%s%s", i ? " " : "", argv[i]);
	}
}

/* --- init ------------------------------------------------------------ */

static int
ignore_state_dir(const char *entry, struct sc_err *err)
{
	FILE *f = NULL;
	char line[512];
	int found = 0, last_nl = 1, c;
	int rc = 0;

	f = fopen(".gitignore", "r");
	if (f != NULL) {
		while (fgets(line, sizeof(line), f) != NULL) {
			line[strcspn(line, "\r\n")] = '\0';
			if (strcmp(line, entry) == 0 ||
			    (strncmp(line, entry, strlen(entry) - 1) == 0 &&
				line[strlen(entry) - 1] == '\0'))
				found = 1;
		}
		if (fseek(f, -1, SEEK_END) == 0 && (c = fgetc(f)) != EOF)
			last_nl = c == '\n';
		fclose(f);
	}
	if (found)
		return 0;
	f = fopen(".gitignore", "a");
	if (f == NULL)
		return err_set(err, SC_EIO, "cannot write .gitignore: %s",
		    strerror(errno));
	fprintf(f, "%s%s\n", last_nl ? "" : "\n", entry);
	if (fclose(f) != 0)
		rc = err_set(err, SC_EIO, "cannot write .gitignore: %s",
		    strerror(errno));
	return rc;
}

/* The "stories" part of the starter config for what discover_stories()
 * found (docs/stories.md "Discovery"), into cfg (insertion order kept:
 * it comes first). */
static int
init_stories(json_t *cfg, const struct discovery *d)
{
	json_t *files;
	const char *id;
	size_t i;
	int rc = 0;

	if (d->sprint_status != NULL)
		return json_object_set_new(cfg, "stories",
		    json_pack("{s:s}", "sprint_status", d->sprint_status));
	if (d->layout != LAYOUT_PLAIN && d->files.n == 0)
		return json_object_set_new(
		    cfg, "stories_glob", json_string(d->glob));
	files = json_array();
	for (i = 0; files != NULL && i < d->files.n; i++) {
		id = i < d->ids.n ? d->ids.items[i] : "";
		rc |= json_array_append_new(files,
		    id[0] != '\0' ? json_pack("{s:s, s:s}", "file",
					d->files.items[i], "id", id)
				  : json_string(d->files.items[i]));
	}
	rc |= json_object_set_new(cfg, "stories", files);
	if (d->glob != NULL)
		rc |= json_object_set_new(
		    cfg, "stories_glob", json_string(d->glob));
	return rc;
}

/* buf += the printf of fmt, cut at cap. */
static void cat(char *buf, size_t cap, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void
cat(char *buf, size_t cap, const char *fmt, ...)
{
	size_t used = strlen(buf);
	va_list ap;

	if (used + 1 >= cap)
		return;
	va_start(ap, fmt);
	vsnprintf(buf + used, cap - used, fmt, ap);
	va_end(ap);
}

/* ", " between the items of a list, none before the first. */
static const char *
sep(const char *list)
{
	return list[0] != '\0' ? ", " : "";
}

/* Where the sprint status's story files were found, for init's line. */
static void
init_found_where(char *where, size_t cap, const struct sprint_found *f)
{
	if (f->in_sub > 0 && f->nsubs > 1)
		cat(where, cap, "%zu in %zu subfolders, most in %s", f->in_sub,
		    f->nsubs, f->sub);
	else if (f->in_sub > 0)
		cat(where, cap, "%zu in %s", f->in_sub, f->sub);
	if (f->v4 > 0)
		cat(where, cap, "%s%zu with v4 names", sep(where), f->v4);
	if (f->beside > 0)
		cat(where, cap, "%s%zu beside sprint-status.yaml", sep(where),
		    f->beside);
}

/* The entries without a story file, and the why of some of them. */
static void
init_found_missing(char *passed, size_t cap, const struct sprint_found *f)
{
	cat(passed, cap, "%s%zu entr%s without a story file", sep(passed),
	    f->missing, f->missing == 1 ? "y" : "ies");
	if (f->backlog > 0 || f->renamed > 0)
		cat(passed, cap, " (");
	if (f->backlog > 0)
		cat(passed, cap, "%zu backlog", f->backlog);
	if (f->renamed > 0)
		cat(passed, cap,
		    "%s%zu with a file of their number under "
		    "another title",
		    f->backlog > 0 ? "; " : "", f->renamed);
	if (f->backlog > 0 || f->renamed > 0)
		cat(passed, cap, ")");
}

/* What the sprint status's matching passed over, for init's line. */
static void
init_found_passed(char *passed, size_t cap, const struct sprint_found *f)
{
	if (f->location_note[0] != '\0')
		cat(passed, cap, "%s%s", sep(passed), f->location_note);
	if (f->missing > 0)
		init_found_missing(passed, cap, f);
	if (f->ambiguous > 0)
		cat(passed, cap, "%s%zu entr%s two files match alike",
		    sep(passed), f->ambiguous, f->ambiguous == 1 ? "y" : "ies");
	if (f->farther > 0)
		cat(passed, cap, "%s%zu farther cop%s of a story file (%s)",
		    sep(passed), f->farther, f->farther == 1 ? "y" : "ies",
		    f->farther_ex);
}

/*
 * init's line about what it found and what it passed over, and why
 * (docs/stories.md "Discovery"): for a sprint status, how many of its
 * entries have a file and where the files were found, from the config
 * just loaded (loaded false: what discovery saw only).
 */
static void
init_found_line(char *buf, size_t cap, const struct discovery *d,
    const struct config *cfg, bool loaded)
{
	const struct sprint_found *f = &cfg->sprint_found;
	char where[512] = "", passed[1536] = "";

	snprintf(buf, cap, "found a %s project: stories from %s",
	    layout_name(d->layout), d->from);
	if (d->source[0] != '\0')
		cat(buf, cap, " (%s)", d->source);
	if (d->passed[0] != '\0')
		cat(passed, sizeof(passed), "%s", d->passed);
	if (d->sprint_status != NULL && loaded) {
		cat(buf, cap, ": %zu of its %zu story entr%s ha%s a file",
		    f->listed, f->entries, f->entries == 1 ? "y" : "ies",
		    f->listed == 1 ? "s" : "ve");
		init_found_where(where, sizeof(where), f);
		if (where[0] != '\0')
			cat(buf, cap, " (%s)", where);
		init_found_passed(passed, sizeof(passed), f);
	}
	if (passed[0] != '\0')
		cat(buf, cap, "; passed over %s", passed);
}

/* A path as a JSON string: JSON strings are UTF-8, a path need not be;
 * NULL gives null. */
static json_t *
path_json(const char *path)
{
	char buf[4096];

	if (path == NULL)
		return json_null();
	text_clean(
	    buf, sizeof(buf), path, strlen(path), TEXT_MARK_INVALID, NULL);
	return json_string(buf);
}

/* layout's JSON spelling (docs/json.md#init) */
static const char *
layout_id(enum layout l)
{
	return l == LAYOUT_BMAD_V6 ? "bmad-v6"
	    : l == LAYOUT_BMAD_V4  ? "bmad-v4"
				   : "plain";
}

/* The configured agents and where their programs are on PATH, null
 * when not found (docs/json.md#init). */
static json_t *
init_agents_json(const struct config *cfg)
{
	json_t *a = json_array();
	char *path;
	struct sc_err e;
	int r;

	for (r = ROLE_PRIMARY; a != NULL && r <= ROLE_FALLBACK; r++) {
		const struct agent_conf *ag = &cfg->agents[r];
		if (!ag->configured || ag->command.n == 0)
			continue;
		path = NULL;
		(void)argv_resolve_program(&path, ag->command.items[0], &e);
		json_array_append_new(a,
		    json_pack("{s:s, s:s, s:o, s:o, s:o}", "role",
			role_name((enum role)r), "name", ag->name, "preset",
			ag->preset[0] ? json_string(ag->preset) : json_null(),
			"program", path_json(ag->command.items[0]), "resolved",
			path_json(path)));
		free(path);
	}
	return a;
}

/* init --json: what init found and wrote (docs/json.md#init); loaded:
 * the config just written loads, else e says why. */
static int
init_print_json(struct cli *cli, const struct discovery *d,
    const struct config *cfg, bool loaded, const struct sc_err *e,
    struct sc_err *err)
{
	char cwd[4096], where[4200];
	json_t *o = NULL, *files = json_array();
	size_t i;
	int rc;

	for (i = 0; files != NULL && i < d->files.n; i++)
		json_array_append_new(files, path_json(d->files.items[i]));
	if (getcwd(cwd, sizeof(cwd)) != NULL)
		snprintf(where, sizeof(where), "%s/%s", cwd, CONFIG_FILE_NAME);
	else
		snprintf(where, sizeof(where), "%s", CONFIG_FILE_NAME);
	o = json_pack("{s:i, s:o, s:s, s:o, s:o, s:o, s:O, s:o, s:o, s:i, "
		      "s:o, s:s}",
	    "format_version", CLI_JSON_FORMAT_VERSION, "config",
	    path_json(where), "layout", layout_id(d->layout), "found_in",
	    d->from[0] ? path_json(d->from) : json_null(), "sprint_status",
	    path_json(d->sprint_status), "stories_glob", path_json(d->glob),
	    "story_files", files, "loads", json_boolean(loaded), "stories",
	    loaded ? json_integer((json_int_t)cfg->nstories) : json_null(),
	    "not_stories_yet", loaded ? (int)cfg->stories_skipped.n : 0,
	    "load_error", loaded ? json_null() : json_string(e->msg),
	    "gitignore", ".storyctl/");
	if (o != NULL)
		json_object_set_new(
		    o, "agents", loaded ? init_agents_json(cfg) : json_array());
	rc = o ? cli_print_json(cli, o, err)
	       : err_set(err, SC_EOS, "out of memory");
	json_decref(o);
	json_decref(files);
	return rc;
}

/* What check will find with the config just written: the story count,
 * or why it cannot load (said now rather than at check); as JSON with
 * --json. */
static int
init_summary(
    struct cli *cli, const struct discovery *d, bool json, struct sc_err *err)
{
	struct config cfg;
	struct sc_err e;
	char line[3072];
	bool loaded;
	int rc = 0;

	memset(&cfg, 0, sizeof(cfg));
	err_clear(&e);
	loaded = config_load(&cfg, CONFIG_FILE_NAME, &e) == 0;
	if (json) {
		rc = init_print_json(cli, d, &cfg, loaded, &e, err);
		goto out;
	}
	if (d->layout != LAYOUT_PLAIN) {
		init_found_line(line, sizeof(line), d, &cfg, loaded);
		fprintf(cli->out, "%s\n", line);
	}
	if (!loaded) {
		fprintf(cli->out,
		    "wrote %s (primary claude, fallback codex) and ignored "
		    ".storyctl/ in .gitignore\nnote: it does not load yet: "
		    "%s\n",
		    CONFIG_FILE_NAME, e.msg);
		goto out;
	}
	fprintf(cli->out, "wrote %s (%zu stor%s", CONFIG_FILE_NAME,
	    cfg.nstories, cfg.nstories == 1 ? "y" : "ies");
	if (cfg.stories_skipped.n > 0)
		fprintf(cli->out, ", %zu more in %s without a story file yet",
		    cfg.stories_skipped.n, cfg.sprint_status);
	fprintf(cli->out,
	    "; primary claude, fallback codex) and ignored .storyctl/ in "
	    ".gitignore\nnext: storyctl check, then storyctl run\n");
out:
	config_release(&cfg);
	return rc;
}

int
cmd_init(struct cli *cli, int argc, char **argv, struct sc_err *err)
{
	struct discovery d;
	json_t *cfg = NULL, *rest = NULL;
	char *text = NULL;
	int fd = -1, rc = 0, json = 0;
	ssize_t len;

	memset(&d, 0, sizeof(d));
	rc = cli_view_flags(
	    "init", help_init.options, argc, argv, &json, NULL, NULL, err);
	if (rc < 0)
		return rc;
	if (access(CONFIG_FILE_NAME, F_OK) == 0)
		return err_set(err, SC_EUSAGE,
		    "%s already exists here; edit it "
		    "or remove it first",
		    CONFIG_FILE_NAME);
	if ((rc = discover_stories(&d, err)) < 0)
		goto out;
	cfg = json_object();
	rest = json_pack("{s:{s:{s:s}, s:{s:s}}, s:{s:s, s:i, s:i, s:i}}",
	    "agents", "primary", "preset", "claude", "fallback", "preset",
	    "codex", "policy", "strategy", "adaptive", "max_attempts", 5,
	    "network_sleep_s", 60, "poll_interval_s", 30);
	if (cfg == NULL || rest == NULL || init_stories(cfg, &d) != 0 ||
	    json_object_update(cfg, rest) != 0) {
		rc = err_set(err, SC_EOS, "out of memory");
		goto out;
	}
	text = json_dumps(cfg, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	if (text == NULL) {
		rc = err_set(err, SC_EOS, "out of memory");
		goto out;
	}
	fd = open(
	    CONFIG_FILE_NAME, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0) {
		rc = err_set(err, SC_EIO, "cannot create %s: %s",
		    CONFIG_FILE_NAME, strerror(errno));
		goto out;
	}
	len = (ssize_t)strlen(text);
	if (write(fd, text, (size_t)len) != len || write(fd, "\n", 1) != 1) {
		rc = err_set(err, SC_EIO, "cannot write %s: %s",
		    CONFIG_FILE_NAME, strerror(errno));
		goto out;
	}
	rc = ignore_state_dir(".storyctl/", err);
	if (rc < 0)
		goto out;
	rc = init_summary(cli, &d, json != 0, err);
out:
	if (fd >= 0)
		close(fd);
	free(text);
	json_decref(cfg);
	json_decref(rest);
	discovery_release(&d);
	return rc;
}

/* --- agents ---------------------------------------------------------- */

static json_t *
argv_json(const char *const *argv)
{
	json_t *a = json_array();
	size_t k;

	for (k = 0; a != NULL && argv != NULL && argv[k] != NULL; k++)
		json_array_append_new(a, json_string(argv[k]));
	return a;
}

static const char *
enabled_name(enum sandbox_mode m)
{
	return m == SANDBOX_ON ? "true" : m == SANDBOX_OFF ? "false" : "auto";
}

/* `agents --json`: the presets, the sandbox, the configured agents. */
static json_t *
agents_json(const struct config *cfg, const struct sandbox_host *h,
    const bool confined[2])
{
	const struct preset *p;
	json_t *pa = json_array(), *ag = json_object(), *one;
	size_t np = 0, i;
	int r;

	p = presets_all(&np);
	for (i = 0; pa != NULL && i < np; i++)
		json_array_append_new(pa,
		    json_pack("{s:s, s:o, s:s, s:o, s:s, s:o}", "name",
			p[i].name, "argv", argv_json(p[i].argv), "description",
			p[i].description, "confined_argv",
			argv_json(p[i].confined_argv), "confined_description",
			p[i].confined_description, "state_paths",
			argv_json(p[i].state_paths)));
	for (r = ROLE_PRIMARY; ag != NULL && r <= ROLE_FALLBACK; r++) {
		const struct agent_conf *a = &cfg->agents[r];
		one = a->configured
		    ? json_pack("{s:s, s:o, s:o, s:f, s:b, s:{s:s, s:b}}",
			  "name", a->name, "preset",
			  a->preset[0] ? json_string(a->preset) : json_null(),
			  "argv",
			  strlist_json(preflight_template(a, confined[r])),
			  "timeout_s", a->timeout_s, "confined", confined[r],
			  "sandbox", "enabled",
			  enabled_name(a->sandbox.enabled), "network",
			  a->sandbox.network)
		    : json_null();
		json_object_set_new(ag, role_name((enum role)r), one);
	}
	return json_pack("{s:i, s:o, s:{s:b, s:o, s:o}, s:o, s:o}",
	    "format_version", CLI_JSON_FORMAT_VERSION, "presets", pa, "sandbox",
	    "available", h->works, "tool",
	    h->bwrap != NULL ? json_string(h->bwrap) : json_null(), "why",
	    h->works ? json_null() : json_string(h->why), "agents", ag,
	    "config", cfg->path ? json_string(cfg->path) : json_null());
}

static void
agents_print(FILE *f, const struct config *cfg, const struct sandbox_host *h,
    const bool confined[2])
{
	const struct preset *p;
	size_t np = 0, i;
	int r;

	p = presets_all(&np);
	fprintf(f, "presets:\n");
	for (i = 0; i < np; i++) {
		fprintf(f, "  %-8s ", p[i].name);
		print_argv(f, p[i].argv, (size_t)-1);
		fprintf(f, "\n           inside a sandbox: ");
		print_argv(f, p[i].confined_argv, (size_t)-1);
		fprintf(f, "\n           %s\n", p[i].description);
	}
	if (h->works)
		fprintf(f, "\nsandbox: bubblewrap (%s) works here\n", h->bwrap);
	else
		fprintf(f, "\nsandbox: cannot start here: %s\n",
		    h->why[0] != '\0' ? h->why : "every agent has it off");
	fprintf(f, "\nconfigured (%s):\n",
	    cfg->path ? cfg->path : "no storyctl.json: the defaults");
	for (r = ROLE_PRIMARY; r <= ROLE_FALLBACK; r++) {
		const struct agent_conf *a = &cfg->agents[r];
		const struct strlist *t = preflight_template(a, confined[r]);

		fprintf(f, "  %-8s ", role_name((enum role)r));
		if (!a->configured) {
			fprintf(f, "(none)\n");
			continue;
		}
		fprintf(f, "%s, %s: ", a->name,
		    confined[r] ? "confined" : "unconfined");
		print_argv(f, (const char *const *)t->items, t->n);
		fprintf(f, "\n");
	}
}

int
cmd_agents(struct cli *cli, int argc, char **argv, struct sc_err *err)
{
	struct config cfg;
	struct sandbox_host h;
	json_t *o = NULL;
	bool confined[2] = {false, false};
	char line[512];
	int json = 0, rc;

	memset(&cfg, 0, sizeof(cfg));
	memset(&h, 0, sizeof(h));
	rc = cli_view_flags(
	    "agents", help_agents.options, argc, argv, &json, NULL, NULL, err);
	if (rc < 0)
		return rc;
	rc = cli_load_config(&cfg, cli, true, err);
	if (rc == 0)
		rc = sandbox_probe(&h, err);
	if (rc < 0)
		goto out;
	/* an agent that wants a sandbox where none starts is `check`'s
	 * error and run's; here it is shown unconfined */
	if (sandbox_decide_roles(confined, line, sizeof(line), &h, &cfg, err) <
	    0)
		err_clear(err);
	if (json) {
		o = agents_json(&cfg, &h, confined);
		rc = o ? cli_print_json(cli, o, err)
		       : err_set(err, SC_EOS, "out of memory");
		goto out;
	}
	agents_print(cli->out, &cfg, &h, confined);
out:
	json_decref(o);
	sandbox_host_release(&h);
	config_release(&cfg);
	return rc;
}
