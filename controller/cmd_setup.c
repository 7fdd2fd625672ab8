/*
 * cmd_setup.c - the commands that prepare a night: init, check, agents.
 */
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "controller/argv.h"
#include "controller/cli.h"
#include "controller/config.h"
#include "controller/discover.h"
#include "controller/presets.h"
#include "controller/prompt.h"
#include "controller/runner.h"
#include "controller/stories.h"

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
	size_t i;
	int rc = 0;

	if (d->layout == LAYOUT_BMAD_V6)
		return json_object_set_new(cfg, "stories",
		    json_pack("{s:s}", "sprint_status", d->sprint_status));
	if (d->layout == LAYOUT_BMAD_V4)
		return json_object_set_new(
		    cfg, "stories_glob", json_string(d->glob));
	files = json_array();
	for (i = 0; files != NULL && i < d->files.n; i++)
		rc |= json_array_append_new(
		    files, json_string(d->files.items[i]));
	rc |= json_object_set_new(cfg, "stories", files);
	if (d->glob != NULL)
		rc |= json_object_set_new(
		    cfg, "stories_glob", json_string(d->glob));
	return rc;
}

/* What check will find with the config just written: the story count,
 * or why it cannot load (said now rather than at check). */
static void
init_summary(struct cli *cli, const struct discovery *d)
{
	struct config cfg;
	struct sc_err e;

	memset(&cfg, 0, sizeof(cfg));
	if (d->layout != LAYOUT_PLAIN)
		fprintf(cli->out, "found a %s project: stories from %s\n",
		    layout_name(d->layout), d->from);
	if (config_load(&cfg, CONFIG_FILE_NAME, &e) < 0) {
		fprintf(cli->out,
		    "wrote %s (primary claude, fallback codex) and ignored "
		    ".storyctl/ in .gitignore\nnote: it does not load yet: "
		    "%s\n",
		    CONFIG_FILE_NAME, e.msg);
		return;
	}
	fprintf(cli->out, "wrote %s (%zu stor%s", CONFIG_FILE_NAME,
	    cfg.nstories, cfg.nstories == 1 ? "y" : "ies");
	if (cfg.stories_skipped.n > 0)
		fprintf(cli->out, ", %zu more in %s without a story file yet",
		    cfg.stories_skipped.n, cfg.sprint_status);
	fprintf(cli->out,
	    "; primary claude, fallback codex) and ignored .storyctl/ in "
	    ".gitignore\nnext: storyctl check, then storyctl run\n");
	config_release(&cfg);
}

int
cmd_init(struct cli *cli, int argc, char **argv, struct sc_err *err)
{
	struct discovery d;
	json_t *cfg = NULL, *rest = NULL;
	char *text = NULL;
	int fd = -1, rc = 0;
	ssize_t len;

	memset(&d, 0, sizeof(d));
	if (argc > 1) {
		return err_set(err, SC_EUSAGE, "init takes no arguments");
	}
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
	init_summary(cli, &d);
out:
	if (fd >= 0)
		close(fd);
	free(text);
	json_decref(cfg);
	json_decref(rest);
	discovery_release(&d);
	return rc;
}

/* --- check ----------------------------------------------------------- */

/*
 * The first attempt's argv of every story and agent must pass execve's
 * size limits (argv_fits), with the environment the agent gets: a prompt
 * over one argument's limit, or a huge env value, would fail
 * every attempt of the night.  Prints each problem; 0 when none, else
 * SC_EDATA naming the first.
 */
static int
check_prompt_sizes(FILE *f, const struct config *cfg, const struct story *s,
    size_t n, struct sc_err *err)
{
	struct argv_vars v;
	struct prompt_prev prev;
	struct strlist argv;
	struct sc_err e;
	char **envp[2] = {NULL, NULL};
	char *prompt = NULL;
	size_t i;
	int r, bad = 0;

	/* the environment each agent will get, as the runner builds it: a
	 * huge value in an agent's env fails execve just the same */
	for (r = ROLE_PRIMARY; r <= ROLE_FALLBACK; r++)
		if (cfg->agents[r].configured &&
		    runner_env_build(&envp[r], &cfg->agents[r].env, &e) < 0)
			envp[r] = NULL; /* the config check reports it */
	memset(&prev, 0, sizeof(prev));
	for (i = 0; i < n; i++) {
		if (s[i].load_status == STATUS_INVALID)
			continue;
		memset(&v, 0, sizeof(v));
		v.story_file = s[i].file;
		v.story_id = s[i].id;
		v.repo = cfg->root;
		v.attempt = 1;
		v.max_attempts = cfg->policy.max_attempts;
		v.prompt_file = "/state/logs/story.a1.prompt";
		err_clear(&e);
		if (prompt_render(&prompt, cfg->prompt, &v, &prev, &e) < 0)
			continue; /* placeholders: the config check says so */
		v.prompt = prompt;
		for (r = ROLE_PRIMARY; r <= ROLE_FALLBACK; r++) {
			const struct agent_conf *a = &cfg->agents[r];
			if (!a->configured)
				continue;
			memset(&argv, 0, sizeof(argv));
			v.role = role_name((enum role)r);
			if (argv_expand(&argv, &a->command, &v, &e) == 0 &&
			    argv_fits(&argv, envp[r], &e) < 0) {
				fprintf(f, "  %s: agent %s (%s): %s\n", s[i].id,
				    role_name((enum role)r), a->name, e.msg);
				if (bad++ == 0) {
					*err = e;
					err_prefix(err, "%s: agent %s", s[i].id,
					    role_name((enum role)r));
				}
			}
			strlist_release(&argv);
		}
		free(prompt);
		prompt = NULL;
	}
	free(envp[0]);
	free(envp[1]);
	return bad ? SC_EDATA : 0;
}

int
cmd_check(struct cli *cli, int argc, char **argv, struct sc_err *err)
{
	struct config cfg;
	struct story *s = NULL;
	size_t *order = NULL;
	size_t n = 0, i, k;
	int r, invalid = 0, rc;
	struct sc_err agent_err;

	memset(&cfg, 0, sizeof(cfg));
	err_clear(&agent_err);
	if (argc > 1)
		return err_set(err, SC_EUSAGE, "check takes no arguments");
	rc = cli_load_config(&cfg, cli, false, err);
	if (rc < 0)
		goto out;
	rc = stories_load(&s, &n, &cfg, err);
	if (rc < 0)
		goto out;
	fprintf(cli->out, "config: %s\nstate:  %s (branch %s)\n", cfg.path,
	    cfg.state_dir, cfg.git.state_branch);
	fprintf(cli->out,
	    "policy: %s, max_attempts %d, network_sleep %gs, "
	    "backoff %s %lld..%lld ms jitter %g\n",
	    strategy_name(cfg.policy.strategy), cfg.policy.max_attempts,
	    cfg.policy.network_sleep_s,
	    backoff_kind_name(cfg.policy.backoff.kind),
	    (long long)cfg.policy.backoff.base_delay_ms,
	    (long long)cfg.policy.backoff.max_delay_ms,
	    cfg.policy.backoff.jitter);
	fprintf(cli->out, "agents:\n");
	for (r = ROLE_PRIMARY; r <= ROLE_FALLBACK; r++) {
		const struct agent_conf *a = &cfg.agents[r];
		if (!a->configured) {
			fprintf(cli->out, "  %-8s (none)\n",
			    role_name((enum role)r));
			continue;
		}
		fprintf(cli->out,
		    "  %-8s %-8s timeout %gs: ", role_name((enum role)r),
		    a->name, a->timeout_s);
		print_argv(cli->out, (const char *const *)a->command.items,
		    a->command.n);
		fprintf(cli->out, "\n");
	}
	rc = stories_order(&order, &cfg, err);
	if (rc < 0)
		goto out;
	fprintf(cli->out, "stories (%zu, in this order):\n", n);
	for (k = 0; k < n; k++) {
		i = order[k];
		fprintf(cli->out, "  %3zu  %-16s %-32s %d/%d tasks%s%s\n",
		    k + 1, s[i].id, s[i].file, s[i].tasks_completed,
		    s[i].tasks_total,
		    s[i].load_status == STATUS_INVALID ? "  INVALID: " : "",
		    s[i].load_status == STATUS_INVALID ? s[i].reason : "");
		if (s[i].load_status == STATUS_INVALID)
			invalid++;
	}
	rc = check_prompt_sizes(cli->out, &cfg, s, n, err);
	if (rc < 0)
		goto out;
	if (cmd_run_check_agents(&cfg, &agent_err) < 0) {
		*err = agent_err;
		rc = agent_err.code;
		goto out;
	}
	if (invalid) {
		size_t first = 0;
		for (k = 0; k < n; k++)
			if (s[k].load_status == STATUS_INVALID) {
				first = k;
				break;
			}
		rc = err_set(err, SC_EDATA, "%s: %s%s", s[first].file,
		    s[first].reason,
		    invalid > 1 ? " (and more stories, "
				  "listed above)"
				: "");
		goto out;
	}
	fprintf(cli->out, "ok: %zu stor%s ready\n", n, n == 1 ? "y" : "ies");
out:
	free(order);
	stories_free(s, n);
	config_release(&cfg);
	return rc;
}

/* --- agents ---------------------------------------------------------- */

int
cmd_agents(struct cli *cli, int argc, char **argv, struct sc_err *err)
{
	struct config cfg;
	const struct preset *p;
	json_t *o = NULL, *pa = NULL, *ag = NULL, *one;
	size_t np = 0, i, k;
	int json = 0, r, rc;

	memset(&cfg, 0, sizeof(cfg));
	for (i = 1; i < (size_t)argc; i++) {
		if (strcmp(argv[i], "--json") == 0)
			json = 1;
		else
			return err_set(err, SC_EUSAGE,
			    "agents: unexpected "
			    "argument '%s'",
			    argv[i]);
	}
	rc = cli_load_config(&cfg, cli, true, err);
	if (rc < 0)
		goto out;
	p = presets_all(&np);
	if (json) {
		pa = json_array();
		for (i = 0; i < np; i++) {
			json_t *av = json_array();
			for (k = 0; p[i].argv[k] != NULL; k++)
				json_array_append_new(
				    av, json_string(p[i].argv[k]));
			json_array_append_new(pa,
			    json_pack("{s:s, s:o, s:s}", "name", p[i].name,
				"argv", av, "description", p[i].description));
		}
		ag = json_object();
		for (r = ROLE_PRIMARY; r <= ROLE_FALLBACK; r++) {
			const struct agent_conf *a = &cfg.agents[r];
			one = a->configured
			    ? json_pack("{s:s, s:o, s:o, s:f}", "name", a->name,
				  "preset",
				  a->preset[0] ? json_string(a->preset)
					       : json_null(),
				  "argv", strlist_json(&a->command),
				  "timeout_s", a->timeout_s)
			    : json_null();
			json_object_set_new(ag, role_name((enum role)r), one);
		}
		o = json_pack("{s:O, s:O, s:o}", "presets", pa, "agents", ag,
		    "config", cfg.path ? json_string(cfg.path) : json_null());
		rc = o ? cli_print_json(cli, o, err)
		       : err_set(err, SC_EOS, "out of memory");
		goto out;
	}
	fprintf(cli->out, "presets:\n");
	for (i = 0; i < np; i++) {
		fprintf(cli->out, "  %-8s ", p[i].name);
		print_argv(cli->out, p[i].argv, (size_t)-1);
		fprintf(cli->out, "\n           %s\n", p[i].description);
	}
	fprintf(cli->out, "\nconfigured (%s):\n",
	    cfg.path ? cfg.path : "no storyctl.json: the defaults");
	for (r = ROLE_PRIMARY; r <= ROLE_FALLBACK; r++) {
		const struct agent_conf *a = &cfg.agents[r];
		fprintf(cli->out, "  %-8s ", role_name((enum role)r));
		if (!a->configured) {
			fprintf(cli->out, "(none)\n");
			continue;
		}
		fprintf(cli->out, "%s: ", a->name);
		print_argv(cli->out, (const char *const *)a->command.items,
		    a->command.n);
		fprintf(cli->out, "\n");
	}
out:
	json_decref(o);
	json_decref(pa);
	json_decref(ag);
	config_release(&cfg);
	return rc;
}
