/* test_config.c - config_load(), config_defaults(), config_find(),
 * presets: every key and validation rule of docs/configuration.md. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "controller/config/config.h"
#include "controller/config/presets.h"

/* ---- temp dir helpers ---- */

struct tmp {
	char dir[1024]; /* resolved, so it compares with cfg->root */
	char cfg[PATH_MAX]; /* <dir>/storyctl.json */
};

/* snprintf that fails the test instead of cutting a path short. */
static void fmt_into(char *buf, size_t cap, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void
fmt_into(char *buf, size_t cap, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, cap, fmt, ap);
	va_end(ap);
	assert_true(n >= 0 && (size_t)n < cap);
}

static int
rm_entry(const char *path, const struct stat *st, int flag, struct FTW *f)
{
	return remove(path);
}

static void
write_file(const char *dir, const char *name, const char *text)
{
	char path[PATH_MAX];
	FILE *f;

	fmt_into(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(fputs(text, f) >= 0, 1);
	assert_int_equal(fclose(f), 0);
}

static void
make_dir(const char *dir, const char *name)
{
	char path[PATH_MAX];

	fmt_into(path, sizeof(path), "%s/%s", dir, name);
	assert_int_equal(mkdir(path, 0755), 0);
}

static int
tmp_setup(void **state)
{
	struct tmp *t = calloc(1, sizeof(*t));
	char templ[] = "/tmp/test_config.XXXXXX";
	char *made, *real;

	if (t == NULL)
		return -1;
	made = mkdtemp(templ);
	if (made == NULL) {
		free(t);
		return -1;
	}
	real = realpath(made, NULL);
	fmt_into(t->dir, sizeof(t->dir), "%s", real != NULL ? real : made);
	free(real);
	fmt_into(t->cfg, sizeof(t->cfg), "%s/storyctl.json", t->dir);
	*state = t;
	return 0;
}

static int
tmp_teardown(void **state)
{
	struct tmp *t = *state;

	if (t != NULL) {
		nftw(t->dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
		free(t);
	}
	return 0;
}

/* Write text as storyctl.json and load it; the config is released by
 * the caller. */
static int
load_text(struct config *c, struct sc_err *err, struct tmp *t, const char *text)
{
	write_file(t->dir, "storyctl.json", text);
	memset(c, 0, sizeof(*c));
	err_clear(err);
	return config_load(c, t->cfg, err);
}

static void
assert_argv(const struct strlist *l, const char *const *want)
{
	size_t i;

	for (i = 0; want[i] != NULL; i++) {
		assert_true(i < l->n);
		assert_string_equal(l->items[i], want[i]);
	}
	assert_int_equal(l->n, i);
	assert_null(l->items[l->n]);
}

/* ---- defaults ---- */

static void
test_defaults(void **state)
{
	struct tmp *t = *state;
	struct config c;
	struct sc_err err;
	char want[PATH_MAX + 16];

	memset(&c, 0, sizeof(c));
	assert_int_equal(config_defaults(&c, t->dir, &err), 0);
	assert_null(c.path);
	assert_string_equal(c.root, t->dir);
	fmt_into(want, sizeof(want), "%s/.storyctl", t->dir);
	assert_string_equal(c.state_dir, want);
	assert_true(c.agents[ROLE_PRIMARY].configured);
	assert_string_equal(c.agents[ROLE_PRIMARY].preset, "claude");
	assert_string_equal(c.agents[ROLE_PRIMARY].name, "claude");
	assert_string_equal(c.agents[ROLE_PRIMARY].command.items[0], "claude");
	assert_true(c.agents[ROLE_FALLBACK].configured);
	assert_string_equal(c.agents[ROLE_FALLBACK].preset, "codex");
	assert_true(c.agents[ROLE_PRIMARY].timeout_s == 3600);
	assert_true(c.agents[ROLE_PRIMARY].stall_timeout_s < 0);
	assert_int_equal(c.policy.strategy, STRATEGY_ADAPTIVE);
	assert_int_equal(c.policy.max_attempts, 5);
	assert_true(c.policy.network_sleep_s == 60);
	assert_true(c.policy.max_wait_s == 21600);
	assert_true(c.policy.poll_interval_s == 30);
	assert_true(c.policy.kill_grace_s == 10);
	assert_true(c.policy.extended_timeout_factor == 2);
	assert_int_equal(c.policy.backoff.kind, BACKOFF_EXPONENTIAL);
	assert_int_equal(c.policy.backoff.base_delay_ms, 1000);
	assert_int_equal(c.policy.backoff.max_delay_ms, 60000);
	assert_true(c.policy.backoff.jitter == 0.5);
	assert_int_equal(c.nstories, 0);
	assert_null(c.stories_glob);
	assert_null(c.prompt);
	assert_int_equal(c.ngates, 0);
	assert_int_equal(c.review.nagents, 0);
	assert_int_equal(c.breaker.after, 0);
	assert_true(c.breaker.cooldown_s == 1800);
	assert_true(c.budget.max_cost_usd == 0);
	assert_string_equal(c.git.state_branch, "storyctl/state");
	assert_false(c.git.commit_work);
	assert_false(c.verify.require_diff);
	config_release(&c);
	assert_null(c.root);
	config_release(&c); /* twice: no-op */
}

static void
test_defaults_bad_root(void **state)
{
	struct config c;
	struct sc_err err;

	memset(&c, 0, sizeof(c));
	assert_int_equal(
	    config_defaults(&c, "/nonexistent/storyctl-x", &err), SC_EOS);
	assert_non_null(strstr(err.msg, "/nonexistent/storyctl-x"));
	assert_null(c.root);
}

static void
test_empty_object(void **state)
{
	struct tmp *t = *state;
	struct config c;
	struct sc_err err;

	assert_int_equal(load_text(&c, &err, t, "{}"), 0);
	assert_string_equal(c.path, t->cfg);
	assert_string_equal(c.root, t->dir);
	/* no "agents" key: the built-in pair */
	assert_string_equal(c.agents[ROLE_PRIMARY].preset, "claude");
	assert_string_equal(c.agents[ROLE_FALLBACK].preset, "codex");
	assert_int_equal(c.policy.max_attempts, 5);
	config_release(&c);
}

/* ---- a full config (docs/configuration.md#example) ---- */

static const char spec_example[] =
    "{\n"
    "  \"stories\": [\"docs/stories/1-1.md\",\n"
    "              {\"file\": \"docs/stories/1-2.md\", \"id\": \"1-2\",\n"
    "               \"depends_on\": [\"1-1\"], \"include_dependency_result\": "
    "true}],\n"
    "  \"stories_glob\": \"docs/stories/*.md\",\n"
    "  \"prompt\": \"Implement {story_file}\",\n"
    "  \"agents\": {\n"
    "    \"primary\":  {\"preset\": \"claude\", \"timeout_s\": 3600},\n"
    "    \"fallback\": {\"command\": [\"codex\", \"exec\", \"{prompt}\"], "
    "\"env\": {}}\n"
    "  },\n"
    "  \"policy\": {\n"
    "    \"strategy\": \"adaptive\",\n"
    "    \"max_attempts\": 5,\n"
    "    \"max_time_s\": 0,\n"
    "    \"network_sleep_s\": 60,\n"
    "    \"max_wait_s\": 21600,\n"
    "    \"poll_interval_s\": 30,\n"
    "    \"stall_timeout_s\": 0,\n"
    "    \"kill_grace_s\": 10,\n"
    "    \"extended_timeout_factor\": 2,\n"
    "    \"retry_count\": 0,\n"
    "    \"retry_max_time_ms\": 0,\n"
    "    \"retry_on\": [], \"network_on\": [], \"permanent_on\": [],\n"
    "    \"backoff\": {\"strategy\": \"exponential\", \"base_delay_ms\": 1000,"
    "\n"
    "                \"max_delay_ms\": 60000, \"jitter\": 0.5}\n"
    "  },\n"
    "  \"gates\": [{\"name\": \"tests\", \"command\": [\"make\", \"test\"], "
    "\"timeout_s\": 1800}],\n"
    "  \"review\": {\"agents\": [[\"claude\", \"-p\", \"{prompt}\"], "
    "[\"codex\", \"exec\", \"{prompt}\"],\n"
    "                        [\"gemini\", \"-p\", \"{prompt}\"]],\n"
    "             \"quorum\": 2, \"retries\": 2, \"prompt\": \"Review "
    "{story_file}\"},\n"
    "  \"breaker\": {\"after\": 3, \"cooldown_s\": 1800},\n"
    "  \"budget\": {\"max_cost_usd\": 0, \"story_max_cost_usd\": 0},\n"
    "  \"git\": {\"state_branch\": \"storyctl/state\", \"commit_work\": "
    "false},\n"
    "  \"state\": {\"dir\": \".storyctl\"}\n"
    "}\n";

static void
test_spec_example(void **state)
{
	static const char *const fb[] = {"codex", "exec", "{prompt}", NULL};
	static const char *const gate[] = {"make", "test", NULL};
	static const char *const rev2[] = {"gemini", "-p", "{prompt}", NULL};
	struct tmp *t = *state;
	struct config c;
	struct sc_err err;
	char want[PATH_MAX + 16];

	make_dir(t->dir, "docs");
	make_dir(t->dir, "docs/stories");
	write_file(t->dir, "docs/stories/1-1.md", "- [ ] a\n");
	write_file(t->dir, "docs/stories/1-2.md", "- [ ] a\n");
	write_file(t->dir, "docs/stories/1-3.md", "- [ ] a\n");
	write_file(t->dir, "docs/stories/notes.txt", "x\n");
	if (load_text(&c, &err, t, spec_example) != 0)
		fail_msg("%s", err.msg);

	assert_int_equal(c.nstories, 3);
	assert_string_equal(c.stories[0].id, "1-1");
	assert_string_equal(c.stories[0].file, "docs/stories/1-1.md");
	assert_false(c.stories[0].include_dependency_result);
	assert_string_equal(c.stories[1].id, "1-2");
	assert_int_equal(c.stories[1].depends_on.n, 1);
	assert_string_equal(c.stories[1].depends_on.items[0], "1-1");
	assert_true(c.stories[1].include_dependency_result);
	assert_string_equal(c.stories[2].id, "1-3"); /* from the glob */
	assert_string_equal(c.stories_glob, "docs/stories/*.md");
	assert_string_equal(c.prompt, "Implement {story_file}");

	assert_string_equal(c.agents[ROLE_PRIMARY].preset, "claude");
	assert_true(c.agents[ROLE_PRIMARY].timeout_s == 3600);
	assert_true(c.agents[ROLE_FALLBACK].configured);
	assert_string_equal(c.agents[ROLE_FALLBACK].preset, "");
	assert_string_equal(c.agents[ROLE_FALLBACK].name, "codex");
	assert_argv(&c.agents[ROLE_FALLBACK].command, fb);
	assert_int_equal(c.agents[ROLE_FALLBACK].env.n, 0);

	assert_int_equal(c.policy.strategy, STRATEGY_ADAPTIVE);
	assert_int_equal(c.policy.max_attempts, 5);
	assert_true(c.policy.stall_timeout_s == 0);
	assert_int_equal(c.policy.retry_on.n, 0);
	assert_int_equal(c.policy.backoff.max_delay_ms, 60000);

	assert_int_equal(c.ngates, 1);
	assert_string_equal(c.gates[0].name, "tests");
	assert_argv(&c.gates[0].command, gate);
	assert_true(c.gates[0].timeout_s == 1800);

	assert_int_equal(c.review.nagents, 3);
	assert_argv(&c.review.agents[2], rev2);
	assert_int_equal(c.review.quorum, 2);
	assert_int_equal(c.review.retries, 2);
	assert_string_equal(c.review.prompt, "Review {story_file}");

	assert_int_equal(c.breaker.after, 3);
	assert_true(c.breaker.cooldown_s == 1800);
	assert_string_equal(c.git.state_branch, "storyctl/state");
	fmt_into(want, sizeof(want), "%s/.storyctl", t->dir);
	assert_string_equal(c.state_dir, want);
	config_release(&c);
}

/* Every key set to a non-default value lands in the struct. */
static void
test_all_values(void **state)
{
	struct tmp *t = *state;
	struct config c;
	struct sc_err err;

	if (load_text(&c, &err, t,
		"{\"agents\": {\"primary\": {\"command\": "
		"[\"/usr/local/bin/fake-agent\","
		" \"{prompt}\"], \"stall_timeout_s\": 0, \"timeout_s\": 0.5}},"
		" \"policy\": {\"strategy\": \"retry\", \"max_attempts\": 7,"
		" \"max_time_s\": 12.5, \"network_sleep_s\": 0.25, "
		"\"max_wait_s\": 100,"
		" \"poll_interval_s\": 0.1, \"stall_timeout_s\": 300, "
		"\"kill_grace_s\": 0,"
		" \"extended_timeout_factor\": 1.5, \"retry_count\": 3,"
		" \"retry_max_time_ms\": 1e3, \"retry_on\": [\"a\", \"b\"],"
		" \"on_usage_limit\": \"switch\", \"max_limit_waits\": 2,"
		" \"network_on\": [\"n\"], \"permanent_on\": [\"p\"],"
		" \"backoff\": {\"strategy\": \"linear\", \"base_delay_ms\": 5,"
		" \"max_delay_ms\": 5.0, \"jitter\": 0}},"
		" \"breaker\": {\"after\": 2, \"cooldown_s\": 0.5},"
		" \"budget\": {\"max_cost_usd\": 12.5, \"story_max_cost_usd\": "
		"1},"
		" \"git\": {\"state_branch\": \"night/state-2\", "
		"\"commit_work\": "
		"true},"
		" \"state\": {\"dir\": \"/var/tmp/sc-state/\"},"
		" \"gates\": [{\"command\": [\"./scripts/check\"]}],"
		" \"review\": {\"agents\": [\"claude\", [\"x\"], [\"y\"], "
		"[\"z\"]],"
		" \"retries\": 0}}") != 0)
		fail_msg("%s", err.msg);
	assert_string_equal(c.agents[ROLE_PRIMARY].name, "fake-agent");
	assert_true(c.agents[ROLE_PRIMARY].stall_timeout_s == 0);
	assert_true(c.agents[ROLE_PRIMARY].timeout_s == 0.5);
	assert_false(c.agents[ROLE_FALLBACK].configured);
	assert_int_equal(c.agents[ROLE_FALLBACK].command.n, 0);
	assert_int_equal(c.policy.strategy, STRATEGY_RETRY);
	assert_int_equal(c.policy.max_attempts, 7);
	assert_true(c.policy.max_time_s == 12.5);
	assert_true(c.policy.network_sleep_s == 0.25);
	assert_true(c.policy.max_wait_s == 100);
	assert_true(c.policy.poll_interval_s == 0.1);
	assert_true(c.policy.stall_timeout_s == 300);
	assert_true(c.policy.kill_grace_s == 0);
	assert_true(c.policy.extended_timeout_factor == 1.5);
	assert_int_equal(c.policy.retry_count, 3);
	assert_int_equal(c.policy.retry_max_time_ms, 1000);
	assert_int_equal(c.policy.on_usage_limit, ON_LIMIT_SWITCH);
	assert_int_equal(c.policy.max_limit_waits, 2);
	assert_int_equal(c.policy.retry_on.n, 2);
	assert_string_equal(c.policy.permanent_on.items[0], "p");
	assert_int_equal(c.policy.backoff.kind, BACKOFF_LINEAR);
	assert_int_equal(c.policy.backoff.base_delay_ms, 5);
	assert_int_equal(c.policy.backoff.max_delay_ms, 5);
	assert_true(c.policy.backoff.jitter == 0);
	assert_int_equal(c.breaker.after, 2);
	assert_true(c.breaker.cooldown_s == 0.5);
	assert_true(c.budget.max_cost_usd == 12.5);
	assert_true(c.budget.story_max_cost_usd == 1);
	assert_string_equal(c.git.state_branch, "night/state-2");
	assert_true(c.git.commit_work);
	assert_string_equal(c.state_dir, "/var/tmp/sc-state");
	assert_string_equal(c.gates[0].name, "check");
	assert_true(c.gates[0].timeout_s == 1800);
	assert_int_equal(c.review.nagents, 4);
	assert_string_equal(c.review.agents[0].items[0], "claude");
	assert_true(c.review.agents[0].n > 2);
	assert_int_equal(c.review.quorum, 3); /* majority of 4 */
	assert_int_equal(c.review.retries, 0);
	config_release(&c);
}

static void
test_preset_override(void **state)
{
	static const char *const mine[] = {
	    "mycodex", "--fast", "{prompt}", NULL};
	const struct preset *claude = presets_find("claude");
	struct tmp *t = *state;
	struct config c;
	struct sc_err err;
	const struct agent_conf *p, *f;
	size_t i;

	if (load_text(&c, &err, t,
		"{\"agents\": {"
		"\"primary\": {\"preset\": \"claude\", \"timeout_s\": 100,"
		" \"env\": {\"A\": \"b\", \"CLAUDE_X\": \"1=2\"}},"
		"\"fallback\": {\"preset\": \"codex\", \"command\": "
		"[\"mycodex\","
		" \"--fast\", \"{prompt}\"], \"name\": \"cx\", "
		"\"stall_timeout_s\": 60}"
		"}}") != 0)
		fail_msg("%s", err.msg);
	p = &c.agents[ROLE_PRIMARY];
	f = &c.agents[ROLE_FALLBACK];
	/* primary: preset argv kept, timeout and env overridden */
	assert_string_equal(p->preset, "claude");
	assert_string_equal(p->name, "claude");
	for (i = 0; claude->argv[i] != NULL; i++)
		assert_string_equal(p->command.items[i], claude->argv[i]);
	assert_int_equal(p->command.n, i);
	assert_true(p->timeout_s == 100);
	assert_true(p->stall_timeout_s < 0);
	assert_int_equal(p->env.n, 2);
	assert_string_equal(p->env.items[0], "A=b");
	assert_string_equal(p->env.items[1], "CLAUDE_X=1=2");
	/* fallback: command and name overridden, preset remembered */
	assert_string_equal(f->preset, "codex");
	assert_string_equal(f->name, "cx");
	assert_argv(&f->command, mine);
	assert_true(f->timeout_s == 3600);
	assert_true(f->stall_timeout_s == 60);
	config_release(&c);
}

/* The preset argv, flag for flag, as checked against the --help of the
 * real CLIs (claude 2.1.197, codex-cli 0.169.0, gemini 0.61.0) and run
 * offline: docs/agents.md. */
static const char *const want_claude[] = {"claude", "-p", "--output-format",
    "stream-json", "--verbose", "--permission-mode", "acceptEdits", "{prompt}",
    NULL};
static const char *const want_codex[] = {"codex", "exec", "--json", "--sandbox",
    "workspace-write", "{prompt}", NULL};
static const char *const want_gemini[] = {"gemini", "--output-format",
    "stream-json", "--approval-mode", "auto_edit", "--skip-trust", "--prompt",
    "{prompt}", NULL};
static const char *const want_aider[] = {"aider", "--message", "{prompt}",
    "--yes-always", "--no-pretty", "--no-auto-commits", "{story_file}", NULL};

/* Inside the sandbox: full tool autonomy (docs/configuration.md#presets),
 * each flag checked against the same pinned CLIs. */
static const char *const want_claude_confined[] = {"claude", "-p",
    "--output-format", "stream-json", "--verbose", "--permission-mode",
    "bypassPermissions", "{prompt}", NULL};
static const char *const want_codex_confined[] = {"codex", "exec", "--json",
    "--dangerously-bypass-approvals-and-sandbox", "{prompt}", NULL};
static const char *const want_gemini_confined[] = {"gemini", "--output-format",
    "stream-json", "--approval-mode", "yolo", "--skip-trust", "--prompt",
    "{prompt}", NULL};

/* The CLIs' own state: directories end in '/' (presets.h). */
static const char *const want_claude_state[] = {
    "~/.claude/", "~/.claude.json", NULL};
static const char *const want_codex_state[] = {"~/.codex/", NULL};
static const char *const want_gemini_state[] = {"~/.gemini/", NULL};
static const char *const want_aider_state[] = {"~/.aider/", NULL};

static void
assert_vec(const char *const *got, const char *const *want)
{
	size_t k;

	assert_non_null(got);
	for (k = 0; got[k] != NULL; k++) {
		assert_non_null(want[k]);
		assert_string_equal(got[k], want[k]);
	}
	assert_null(want[k]);
}

static void
test_presets(void **state)
{
	static const char *const names[] = {
	    "claude", "codex", "gemini", "aider"};
	static const char *const *const want[] = {
	    want_claude, want_codex, want_gemini, want_aider};
	static const char *const *const want_confined[] = {want_claude_confined,
	    want_codex_confined, want_gemini_confined, want_aider};
	static const char *const *const want_state[] = {want_claude_state,
	    want_codex_state, want_gemini_state, want_aider_state};
	const struct preset *all, *p;
	size_t n, i, k;
	bool has_prompt;

	all = presets_all(&n);
	assert_true(n >= 4);
	for (i = 0; i < 4; i++) {
		p = presets_find(names[i]);
		assert_non_null(p);
		assert_string_equal(p->argv[0], names[i]);
		assert_non_null(p->description);
		has_prompt = false;
		for (k = 0; p->argv[k] != NULL; k++) {
			if (strcmp(p->argv[k], "{prompt}") == 0)
				has_prompt = true;
			assert_non_null(want[i][k]);
			assert_string_equal(p->argv[k], want[i][k]);
		}
		assert_null(want[i][k]);
		assert_true(has_prompt);
		assert_vec(p->confined_argv, want_confined[i]);
		assert_vec(p->state_paths, want_state[i]);
		assert_non_null(p->confined_description);
		/* the prompt stays the last argument where it was */
		if (i < 3) {
			assert_string_equal(p->argv[k - 1], "{prompt}");
			for (k = 0; p->confined_argv[k] != NULL; k++)
				;
			assert_string_equal(
			    p->confined_argv[k - 1], "{prompt}");
		}
	}
	assert_ptr_equal(presets_find("codex"), &all[1]);
	assert_null(presets_find("claud"));
	assert_null(presets_find(NULL));
}

/* ---- stories and the glob ---- */

static void
test_glob_order_and_dedupe(void **state)
{
	struct tmp *t = *state;
	struct config c;
	struct sc_err err;

	make_dir(t->dir, "s");
	write_file(t->dir, "s/c.md", "");
	write_file(t->dir, "s/a.md", "");
	write_file(t->dir, "s/b.md", "");
	write_file(t->dir, "s/.hidden.md", "");
	make_dir(t->dir, "s/dir.md");
	if (load_text(&c, &err, t,
		"{\"stories\": [\"./s//b.md\", {\"file\": \"s/x/../c.md\", "
		"\"id\": \"C\"}],"
		" \"stories_glob\": \"s/*.md\"}") != 0)
		fail_msg("%s", err.msg);
	assert_int_equal(c.nstories, 3);
	assert_string_equal(c.stories[0].file, "s/b.md");
	assert_string_equal(c.stories[0].id, "b");
	assert_string_equal(c.stories[1].file, "s/c.md");
	assert_string_equal(c.stories[1].id, "C");
	assert_string_equal(c.stories[2].file, "s/a.md");
	assert_string_equal(c.stories[2].id, "a");
	assert_int_equal(config_story_index(&c, "C"), 1);
	assert_int_equal(config_story_index(&c, "c"), -1);
	config_release(&c);
}

static void
test_glob_no_match(void **state)
{
	struct tmp *t = *state;
	struct config c;
	struct sc_err err;

	assert_int_equal(
	    load_text(&c, &err, t, "{\"stories_glob\": \"docs/stories/*.md\"}"),
	    0);
	assert_int_equal(c.nstories, 0);
	config_release(&c);
}

/* A project root whose name has glob metacharacters is taken literally. */
static void
test_glob_root_metachars(void **state)
{
	struct tmp *t = *state;
	struct config c;
	struct sc_err err;
	char root[PATH_MAX], cfg[PATH_MAX + 32];

	make_dir(t->dir, "we[ir]d*");
	fmt_into(root, sizeof(root), "%s/we[ir]d*", t->dir);
	write_file(root, "one.md", "");
	write_file(root, "storyctl.json", "{\"stories_glob\": \"*.md\"}");
	fmt_into(cfg, sizeof(cfg), "%s/storyctl.json", root);
	memset(&c, 0, sizeof(c));
	if (config_load(&c, cfg, &err) != 0)
		fail_msg("%s", err.msg);
	assert_int_equal(c.nstories, 1);
	assert_string_equal(c.stories[0].file, "one.md");
	config_release(&c);
}

/* BMAD v4 names its stories N.M.story.md: the id is N.M (docs/stories.md
 * "Ids"), from the glob and from an entry without an id. */
static void
test_story_ids(void **state)
{
	struct tmp *t = *state;
	struct config c;
	struct sc_err err;

	make_dir(t->dir, "docs");
	make_dir(t->dir, "docs/stories");
	write_file(t->dir, "docs/stories/1.1.story.md", "");
	write_file(t->dir, "docs/stories/1.2.story.md", "");
	write_file(t->dir, "docs/stories/2.10.story.md", "");
	write_file(t->dir, "docs/stories/2.9.story.md", "");
	write_file(t->dir, "docs/stories/story.md", "");
	if (load_text(&c, &err, t,
		"{\"stories\": [\"docs/stories/1.2.story.md\", {\"file\": "
		"\"x.story.md\", \"id\": \"x.story\"}],"
		" \"stories_glob\": \"docs/stories/*.md\"}") != 0)
		fail_msg("%s", err.msg);
	assert_int_equal(c.nstories, 6);
	assert_string_equal(c.stories[0].id, "1.2");
	assert_string_equal(c.stories[1].id, "x.story"); /* given: kept */
	assert_string_equal(c.stories[2].id, "1.1");
	assert_string_equal(c.stories[2].file, "docs/stories/1.1.story.md");
	/* the glob's matches in version order: 2.9 before 2.10 */
	assert_string_equal(c.stories[3].id, "2.9");
	assert_string_equal(c.stories[4].id, "2.10");
	assert_string_equal(c.stories[5].id, "story"); /* no ".story" */
	assert_string_equal(c.stories[0].sprint_status, "");
	config_release(&c);
}

/* "stories" as an object: files, glob, tasks_heading, include_drafts. */
static void
test_stories_object(void **state)
{
	struct tmp *t = *state;
	struct config c;
	struct sc_err err;

	make_dir(t->dir, "s");
	write_file(t->dir, "s/a.md", "");
	write_file(t->dir, "s/b.md", "");
	if (load_text(&c, &err, t,
		"{\"stories\": {\"files\": [{\"file\": \"s/b.md\", "
		"\"depends_on\": [\"a\"]}], \"glob\": \"s/*.md\", "
		"\"tasks_heading\": \"Work Items\", \"include_drafts\": "
		"true}}") != 0)
		fail_msg("%s", err.msg);
	assert_int_equal(c.nstories, 2);
	assert_string_equal(c.stories[0].id, "b");
	assert_string_equal(c.stories[1].id, "a");
	assert_string_equal(c.stories_glob, "s/*.md");
	assert_string_equal(c.tasks_heading, "Work Items");
	assert_true(c.include_drafts);
	assert_null(c.sprint_status);
	config_release(&c);
	assert_null(c.tasks_heading);
	/* the defaults, and the old array form has none of them */
	if (load_text(&c, &err, t, "{\"stories\": [\"s/a.md\"]}") != 0)
		fail_msg("%s", err.msg);
	assert_null(c.tasks_heading);
	assert_false(c.include_drafts);
	config_release(&c);
	if (load_text(&c, &err, t, "{\"stories\": {}}") != 0)
		fail_msg("%s", err.msg);
	assert_int_equal(c.nstories, 0);
	config_release(&c);
}

static const char sprint_yaml[] =
    "# story_location: somewhere\n"
    "generated: 2026-01-12\n"
    "story_location: \"{project-root}/_bmad-output/implementation-"
    "artifacts\"\n"
    "development_status:\n"
    "  epic-1: in-progress\n"
    "  1-2-sign-in: done\n"
    "  1-1-sign-up: review\n"
    "  1-3-reset: drafted\n"
    "  epic-1-retrospective: optional\n"
    "  epic-2: backlog\n"
    "  2-1-list: backlog\n"
    "  2-2-add: backlog\n"
    "  2-3-edit: ready-for-dev\n";

/* BMAD v6: the story entries of sprint-status.yaml, in its order, with
 * their statuses; a backlog entry without a file is skipped with its
 * reason, and so is any other whose file is missing. */
static void
test_sprint_status(void **state)
{
	struct tmp *t = *state;
	struct config c;
	struct sc_err err;
	const char *dir = "_bmad-output/implementation-artifacts";
	char name[256];

	make_dir(t->dir, "_bmad-output");
	make_dir(t->dir, dir);
	write_file(t->dir,
	    "_bmad-output/implementation-artifacts/"
	    "sprint-status.yaml",
	    sprint_yaml);
	fmt_into(name, sizeof(name), "%s/1-1-sign-up.md", dir);
	write_file(t->dir, name, "");
	fmt_into(name, sizeof(name), "%s/1-2-sign-in.md", dir);
	write_file(t->dir, name, "");
	fmt_into(name, sizeof(name), "%s/1-3-reset.md", dir);
	write_file(t->dir, name, "");
	fmt_into(name, sizeof(name), "%s/2-1-list.md", dir); /* ahead */
	write_file(t->dir, name, "");
	/* a retrospective and a tech spec beside them are not stories */
	fmt_into(name, sizeof(name), "%s/epic-1-retro-2026-01-10.md", dir);
	write_file(t->dir, name, "");
	fmt_into(name, sizeof(name), "%s/tech-spec-epic-2.md", dir);
	write_file(t->dir, name, "");
	if (load_text(&c, &err, t,
		"{\"stories\": {\"sprint_status\": \"./_bmad-output/"
		"implementation-artifacts/sprint-status.yaml\"}}") != 0)
		fail_msg("%s", err.msg);
	assert_string_equal(c.sprint_status,
	    "_bmad-output/implementation-artifacts/sprint-status.yaml");
	assert_int_equal(c.nstories, 4);
	assert_string_equal(c.stories[0].id, "1-2-sign-in");
	assert_string_equal(c.stories[0].file,
	    "_bmad-output/implementation-artifacts/1-2-sign-in.md");
	assert_string_equal(c.stories[0].sprint_status, "done");
	assert_string_equal(c.stories[1].id, "1-1-sign-up");
	assert_string_equal(c.stories[1].sprint_status, "review");
	assert_string_equal(c.stories[2].id, "1-3-reset");
	assert_string_equal(c.stories[2].sprint_status, "drafted");
	assert_string_equal(c.stories[3].id, "2-1-list");
	assert_string_equal(c.stories[3].sprint_status, "backlog");
	assert_int_equal(c.stories_skipped.n, 2);
	assert_string_equal(c.stories_skipped.items[0],
	    "2-2-add: backlog, no story file yet "
	    "(_bmad-output/implementation-artifacts/2-2-add.md)");
	assert_string_equal(c.stories_skipped.items[1],
	    "2-3-edit: ready-for-dev, but its file "
	    "_bmad-output/implementation-artifacts/2-3-edit.md is missing");
	config_release(&c);
	assert_int_equal(c.stories_skipped.n, 0);

	/* an explicit entry keeps its place and settings; dependencies on
	 * sprint stories resolve */
	if (load_text(&c, &err, t,
		"{\"stories\": {\"files\": [{\"file\": \"_bmad-output/"
		"implementation-artifacts/1-3-reset.md\", \"id\": \"R\", "
		"\"depends_on\": [\"1-1-sign-up\"]}], \"sprint_status\": "
		"\"_bmad-output/implementation-artifacts/"
		"sprint-status.yaml\"}}") != 0)
		fail_msg("%s", err.msg);
	assert_int_equal(c.nstories, 4);
	assert_string_equal(c.stories[0].id, "R");
	assert_string_equal(c.stories[0].sprint_status, "");
	assert_string_equal(c.stories[1].id, "1-2-sign-in");
	assert_int_equal(config_story_index(&c, "1-3-reset"), -1);
	config_release(&c);
}

/* story_location that is not there (or cannot be resolved): the story
 * files are looked for beside the yaml. */
static void
test_sprint_status_location(void **state)
{
	struct tmp *t = *state;
	struct config c;
	struct sc_err err;

	make_dir(t->dir, "docs");
	make_dir(t->dir, "docs/sprint-artifacts");
	write_file(t->dir, "docs/sprint-artifacts/1-1-a.md", "");
	write_file(t->dir, "docs/sprint-artifacts/sprint-status.yaml",
	    "story_location: \"{output_folder}/stories\"\n"
	    "development_status:\n  1-1-a: ready-for-dev\n");
	if (load_text(&c, &err, t,
		"{\"stories\": {\"sprint_status\": "
		"\"docs/sprint-artifacts/sprint-status.yaml\"}}") != 0)
		fail_msg("%s", err.msg);
	assert_int_equal(c.nstories, 1);
	assert_string_equal(
	    c.stories[0].file, "docs/sprint-artifacts/1-1-a.md");
	config_release(&c);
	/* a relative story_location is relative to the project root */
	write_file(t->dir, "1-1-a.md", "");
	write_file(t->dir, "docs/sprint-artifacts/sprint-status.yaml",
	    "story_location: .\ndevelopment_status:\n  1-1-a: done\n");
	if (load_text(&c, &err, t,
		"{\"stories\": {\"sprint_status\": "
		"\"docs/sprint-artifacts/sprint-status.yaml\"}}") != 0)
		fail_msg("%s", err.msg);
	assert_int_equal(c.nstories, 1);
	assert_string_equal(c.stories[0].file, "1-1-a.md");
	config_release(&c);
	/* and an absolute one inside the root is taken as relative */
	{
		char yaml[PATH_MAX + 128];
		fmt_into(yaml, sizeof(yaml),
		    "story_location: %s/docs\ndevelopment_status:\n"
		    "  1-1-a: done\n",
		    t->dir);
		write_file(t->dir, "docs/1-1-a.md", "");
		write_file(
		    t->dir, "docs/sprint-artifacts/sprint-status.yaml", yaml);
	}
	if (load_text(&c, &err, t,
		"{\"stories\": {\"sprint_status\": "
		"\"docs/sprint-artifacts/sprint-status.yaml\"}}") != 0)
		fail_msg("%s", err.msg);
	assert_int_equal(c.nstories, 1);
	assert_string_equal(c.stories[0].file, "docs/1-1-a.md");
	config_release(&c);
}

/* Where an entry's file is found (docs/stories.md "BMAD v6"): in
 * story_location, its subfolders (two levels), under a v4 name, beside
 * sprint-status.yaml; the nearest wins, two alike are neither, a v4
 * name two entries share is neither's. */
static void
test_sprint_status_search(void **state)
{
	static const char *const dirs[] = {"docs", "docs/stories",
	    "docs/stories/stories", "docs/stories/archive", "docs/stories/x",
	    "docs/stories/y", "docs/stories/e5", "docs/stories/e5/stories",
	    "docs/stories/e5/stories/old", "docs/stories/.hidden",
	    "docs/sprint", NULL};
	static const char *const files[] = {
	    "docs/stories/stories/1-1-a.md", /* one folder down */
	    "docs/stories/1.2.story.md", /* v4 name */
	    "docs/stories/1-3-c.md", /* nearest of two */
	    "docs/stories/archive/1-3-c.md",
	    "docs/stories/x/1-4-d.md", /* two alike */
	    "docs/stories/y/1-4-d.md",
	    "docs/stories/2.1.story.md", /* 2-1-e's and 2-1-f's number */
	    "docs/stories/2-2-old-title.md", /* 2-2-g renamed */
	    "docs/stories/e5/stories/5-1-h.md", /* two folders down */
	    "docs/stories/e5/stories/old/5-2-i.md", /* three: too far */
	    "docs/stories/.hidden/5-3-j.md", /* hidden: not searched */
	    "docs/sprint/6-1-k.md", /* beside sprint-status.yaml */
	    "docs/stories/2.6-story.md", /* v4 with a dash */
	    "docs/stories/6-2-l.md", /* exact before the v4 name */
	    "docs/sprint/6.2.story.md", NULL};
	struct tmp *t = *state;
	const struct sprint_found *f;
	struct config c;
	struct sc_err err;
	size_t i;

	for (i = 0; dirs[i] != NULL; i++)
		make_dir(t->dir, dirs[i]);
	for (i = 0; files[i] != NULL; i++)
		write_file(t->dir, files[i], "");
	write_file(t->dir, "docs/sprint/sprint-status.yaml",
	    "story_location: docs/stories\n"
	    "development_status:\n"
	    "  1-1-a: done\n  1-2-b: done\n  1-3-c: review\n"
	    "  1-4-d: ready-for-dev\n  2-1-e: done\n  2-1-f: backlog\n"
	    "  2-2-g: done\n  2-6-m: done\n  5-1-h: done\n"
	    "  5-2-i: ready-for-dev\n  5-3-j: ready-for-dev\n"
	    "  6-1-k: in-progress\n  6-2-l: done\n");
	if (load_text(&c, &err, t,
		"{\"stories\": {\"sprint_status\": "
		"\"docs/sprint/sprint-status.yaml\"}}") != 0)
		fail_msg("%s", err.msg);
	assert_int_equal(c.nstories, 7);
	assert_string_equal(c.stories[0].id, "1-1-a");
	assert_string_equal(c.stories[0].file, "docs/stories/stories/1-1-a.md");
	assert_string_equal(c.stories[1].id, "1-2-b");
	assert_string_equal(c.stories[1].file, "docs/stories/1.2.story.md");
	assert_string_equal(c.stories[2].file, "docs/stories/1-3-c.md");
	assert_string_equal(c.stories[3].id, "2-6-m");
	assert_string_equal(c.stories[3].file, "docs/stories/2.6-story.md");
	assert_string_equal(
	    c.stories[4].file, "docs/stories/e5/stories/5-1-h.md");
	assert_string_equal(c.stories[5].file, "docs/sprint/6-1-k.md");
	assert_string_equal(c.stories[6].file, "docs/stories/6-2-l.md");
	assert_int_equal(c.stories_skipped.n, 6);
	assert_string_equal(c.stories_skipped.items[0],
	    "1-4-d: docs/stories/x/1-4-d.md and docs/stories/y/1-4-d.md "
	    "both match it alike (rename or move one)");
	assert_string_equal(c.stories_skipped.items[1],
	    "2-1-e: done, but docs/stories/2.1.story.md has the number 2.1 "
	    "of more than one entry, so it is not taken for either");
	assert_non_null(strstr(c.stories_skipped.items[2], "2-1-f: backlog"));
	assert_string_equal(c.stories_skipped.items[3],
	    "2-2-g: done, but its file docs/stories/2-2-g.md is missing "
	    "(docs/stories/2-2-old-title.md has its number under another "
	    "title)");
	assert_string_equal(c.stories_skipped.items[4],
	    "5-2-i: ready-for-dev, but its file docs/stories/5-2-i.md is "
	    "missing");
	assert_non_null(strstr(c.stories_skipped.items[5], "5-3-j: "));
	f = &c.sprint_found;
	assert_int_equal(f->entries, 13);
	assert_int_equal(f->listed, 7);
	assert_int_equal(f->in_sub, 2);
	assert_int_equal(f->nsubs, 2);
	assert_int_equal(f->v4, 2);
	assert_int_equal(f->beside, 1);
	assert_int_equal(f->farther, 2); /* archive/1-3-c.md, 6.2.story.md */
	assert_string_equal(f->farther_ex, "docs/stories/archive/1-3-c.md");
	assert_int_equal(f->missing, 5);
	assert_int_equal(f->backlog, 1);
	assert_int_equal(f->renamed, 1);
	assert_int_equal(f->ambiguous, 1);
	assert_string_equal(f->location_note, "");
	config_release(&c);
}

/* A sprint-status.yaml that cannot be used is an error naming it. */
static void
test_sprint_status_errors(void **state)
{
	struct tmp *t = *state;
	struct config c;
	struct sc_err err;

	assert_int_equal(load_text(&c, &err, t,
			     "{\"stories\": {\"sprint_status\": "
			     "\"nope.yaml\"}}"),
	    SC_EDATA);
	assert_non_null(strstr(err.msg,
	    ": stories.sprint_status: nope.yaml: cannot open: No such file"));
	write_file(t->dir, "s.yaml", "development_status:\n  a: [\n");
	assert_int_equal(load_text(&c, &err, t,
			     "{\"stories\": {\"sprint_status\": "
			     "\"s.yaml\"}}"),
	    SC_EDATA);
	assert_non_null(
	    strstr(err.msg, ": stories.sprint_status: s.yaml: line "));
	write_file(t->dir, "s.yaml", "project: x\n");
	assert_int_equal(load_text(&c, &err, t,
			     "{\"stories\": {\"sprint_status\": "
			     "\"s.yaml\"}}"),
	    SC_EDATA);
	assert_non_null(strstr(err.msg, "s.yaml: no development_status map"));
	write_file(t->dir, "s.yaml",
	    "development_status:\n  \"../x\": ready-for-dev\n");
	assert_int_equal(load_text(&c, &err, t,
			     "{\"stories\": {\"sprint_status\": "
			     "\"s.yaml\"}}"),
	    SC_EDATA);
	assert_non_null(strstr(err.msg, "story key \"../x\" is not a valid"));
	assert_null(c.stories);
}

static void
test_relative_config_path(void **state)
{
	struct tmp *t = *state;
	struct config c;
	struct sc_err err;
	char old[PATH_MAX];

	write_file(t->dir, "storyctl.json",
	    "{\"policy\": {\"max_attempts\": "
	    "0}}");
	assert_non_null(getcwd(old, sizeof(old)));
	assert_int_equal(chdir(t->dir), 0);
	memset(&c, 0, sizeof(c));
	assert_int_equal(config_load(&c, "storyctl.json", &err), SC_EDATA);
	/* the message starts with the file name as given */
	assert_string_equal(
	    err.msg, "storyctl.json: policy.max_attempts: must be >= 1, got 0");
	write_file(t->dir, "storyctl.json", "{}");
	assert_int_equal(config_load(&c, "storyctl.json", &err), 0);
	assert_string_equal(c.path, t->cfg);
	assert_string_equal(c.root, t->dir);
	config_release(&c);
	assert_int_equal(chdir(old), 0);
}

static void
test_missing_file(void **state)
{
	struct tmp *t = *state;
	struct config c;
	struct sc_err err;
	char path[PATH_MAX + 16];

	fmt_into(path, sizeof(path), "%s/nope.json", t->dir);
	memset(&c, 0, sizeof(c));
	assert_int_equal(config_load(&c, path, &err), SC_EDATA);
	assert_non_null(strstr(err.msg, "nope.json: cannot open"));
	assert_null(c.root);
	assert_int_equal(config_load(&c, t->dir, &err), SC_EDATA);
	assert_non_null(strstr(err.msg, "not a regular file"));
}

static void
test_cycles_in_code(void **state)
{
	struct config c;
	struct story_conf s[3];
	struct sc_err err;
	char a[] = "a", b[] = "b", cc[] = "c";

	memset(&c, 0, sizeof(c));
	memset(s, 0, sizeof(s));
	s[0].id = a;
	s[1].id = b;
	s[2].id = cc;
	assert_int_equal(strlist_push(&s[0].depends_on, "b"), 0);
	assert_int_equal(strlist_push(&s[1].depends_on, "c"), 0);
	c.stories = s;
	c.nstories = 3;
	assert_int_equal(config_check_cycles(&c, &err), 0);
	assert_int_equal(strlist_push(&s[2].depends_on, "b"), 0);
	assert_int_equal(config_check_cycles(&c, &err), SC_EDATA);
	assert_string_equal(err.msg, "dependency cycle: b -> c -> b");
	strlist_release(&s[0].depends_on);
	strlist_release(&s[1].depends_on);
	strlist_release(&s[2].depends_on);
}

static void
test_id_valid(void **state)
{
	char long_id[200];

	assert_true(config_id_valid("1-1"));
	assert_true(config_id_valid("a.b_c-D9"));
	assert_false(config_id_valid(""));
	assert_false(config_id_valid(NULL));
	assert_false(config_id_valid(".hidden"));
	assert_false(config_id_valid("-x"));
	assert_false(config_id_valid("../x"));
	assert_false(config_id_valid("/abs"));
	assert_false(config_id_valid("a b"));
	assert_false(config_id_valid("a/b"));
	memset(long_id, 'a', sizeof(long_id) - 1);
	long_id[sizeof(long_id) - 1] = '\0';
	assert_false(config_id_valid(long_id));
	long_id[127] = '\0';
	assert_true(config_id_valid(long_id));
}

/* ---- config_find ---- */

static void
test_find_upward(void **state)
{
	struct tmp *t = *state;
	struct sc_err err;
	char sub[PATH_MAX], want[PATH_MAX + 32], *found = NULL;

	make_dir(t->dir, "a");
	make_dir(t->dir, "a/b");
	make_dir(t->dir, "a/b/c");
	write_file(t->dir, "storyctl.json", "{}");
	fmt_into(sub, sizeof(sub), "%s/a/b/c", t->dir);
	assert_int_equal(config_find(&found, sub, &err), 0);
	assert_string_equal(found, t->cfg);
	free(found);

	/* the nearest one wins; a directory of that name does not count */
	write_file(t->dir, "a/storyctl.json", "{}");
	make_dir(t->dir, "a/b/storyctl.json");
	assert_int_equal(config_find(&found, sub, &err), 0);
	fmt_into(want, sizeof(want), "%s/a/storyctl.json", t->dir);
	assert_string_equal(found, want);
	free(found);

	/* from the directory itself */
	assert_int_equal(config_find(&found, t->dir, &err), 0);
	assert_string_equal(found, t->cfg);
	free(found);
}

static void
test_find_none(void **state)
{
	struct tmp *t = *state;
	struct sc_err err;
	char *found = (char *)"x";

	if (access("/tmp/storyctl.json", F_OK) == 0 ||
	    access("/storyctl.json", F_OK) == 0)
		skip();
	assert_int_equal(config_find(&found, t->dir, &err), SC_EUSAGE);
	assert_null(found);
	assert_non_null(strstr(err.msg, "no storyctl.json in"));
	assert_non_null(strstr(err.msg, t->dir));
	assert_int_equal(config_find(&found, "/nonexistent/x/y", &err), SC_EOS);
}

/* ---- errors: one row per bad config ---- */

struct ecase {
	const char *name;
	const char *json;
	const char *want; /* substring of the message after "FILE" */
};

static const struct ecase ecases[] = {
    {"unknown top key", "{\"polcy\": {}}",
	": unknown key polcy (did you mean policy?)"},
    {"unknown policy key", "{\"policy\": {\"max_atempts\": 3}}",
	": unknown key policy.max_atempts (did you mean max_attempts?)"},
    {"unknown agent key", "{\"agents\": {\"primary\": {\"comand\": [\"x\"]}}}",
	": unknown key agents.primary.comand (did you mean command?)"},
    {"unknown backoff key", "{\"policy\": {\"backoff\": {\"jiter\": 0}}}",
	": unknown key policy.backoff.jiter"},
    {"unknown story key",
	"{\"stories\": [\"a.md\", {\"file\": \"b.md\", \"dependson\": "
	"[]}]}",
	": unknown key stories[1].dependson (did you mean depends_on?)"},
    {"unknown key no hint", "{\"zzzzzzzz\": 1}", ": unknown key zzzzzzzz"},
    /* the one text cleaner (text_clean): an escape sequence or a control
     * is a space in the message, never raw on the terminal */
    {"unknown key with an escape", "{\"zz\\u001b]0;t\\u0007zz\\nq\": 1}",
	": unknown key zz zz q"},
    {"unknown role",
	"{\"agents\": {\"primary\": {\"preset\": \"claude\"},"
	" \"secondary\": {}}}",
	": unknown key agents.secondary"},
    {"unknown gate key",
	"{\"gates\": [{\"command\": [\"x\"], "
	"\"timeout\": 1}]}",
	": unknown key gates[0].timeout (did you mean timeout_s?)"},
    {"unknown state key", "{\"state\": {\"directory\": \"x\"}}",
	": unknown key state.directory"},
    {"broken json line",
	"{\n  \"policy\": {\n    \"max_attempts\": 5,\n  "
	"}\n}\n",
	":4:3: string or '}' expected"},
    {"empty file", "", ":1:0: "},
    {"duplicate key", "{\"policy\": {},\n \"policy\": {}}", ":2:"},
    {"not an object", "[1, 2]", ": expected a JSON object, got an array"},
    {"wrong type int", "{\"policy\": {\"max_attempts\": \"5\"}}",
	": policy.max_attempts: expected an integer, got a string"},
    {"wrong type section", "{\"policy\": []}",
	": policy: expected an object, got an array"},
    {"wrong type number", "{\"policy\": {\"max_wait_s\": true}}",
	": policy.max_wait_s: expected a number, got a boolean"},
    {"wrong type bool", "{\"git\": {\"commit_work\": \"yes\"}}",
	": git.commit_work: expected a boolean"},
    {"verify.require_diff not a boolean", "{\"verify\": {\"require_diff\": 1}}",
	": verify.require_diff: expected a boolean"},
    {"verify unknown key", "{\"verify\": {\"require_dif\": true}}",
	": unknown key verify.require_dif (did you mean require_diff?)"},
    {"null value", "{\"prompt\": null}",
	": prompt: expected a string, "
	"got null"},
    {"negative delay", "{\"policy\": {\"network_sleep_s\": -1}}",
	": policy.network_sleep_s: must be >= 0, got -1"},
    {"negative base delay",
	"{\"policy\": {\"backoff\": {\"base_delay_ms\": -5}}}",
	": policy.backoff.base_delay_ms: must be >= 0, got -5"},
    {"negative kill grace", "{\"policy\": {\"kill_grace_s\": -0.5}}",
	": policy.kill_grace_s: must be >= 0, got -0.5"},
    {"max_attempts 0", "{\"policy\": {\"max_attempts\": 0}}",
	": policy.max_attempts: must be >= 1, got 0"},
    {"max_attempts fraction", "{\"policy\": {\"max_attempts\": 2.5}}",
	": policy.max_attempts: must be an integer, got 2.5"},
    {"jitter 1.5", "{\"policy\": {\"backoff\": {\"jitter\": 1.5}}}",
	": policy.backoff.jitter: must be between 0 and 1, got 1.5"},
    {"jitter negative", "{\"policy\": {\"backoff\": {\"jitter\": -0.1}}}",
	": policy.backoff.jitter: must be between 0 and 1, got -0.1"},
    {"ms fraction", "{\"policy\": {\"retry_max_time_ms\": 1.5}}",
	": policy.retry_max_time_ms: must be an integer, got 1.5"},
    {"ms fraction backoff",
	"{\"policy\": {\"backoff\": {\"max_delay_ms\": 100.25}}}",
	": policy.backoff.max_delay_ms: must be an integer, got 100.25"},
    {"base above max",
	"{\"policy\": {\"backoff\": {\"base_delay_ms\": 120000}}}",
	": policy.backoff.base_delay_ms: must be <= max_delay_ms (60000), "
	"got 120000"},
    {"poll interval 0", "{\"policy\": {\"poll_interval_s\": 0}}",
	": policy.poll_interval_s: must be > 0, got 0"},
    {"timeout factor below 1",
	"{\"policy\": {\"extended_timeout_factor\": 0.5}}",
	": policy.extended_timeout_factor: must be between 1 and 100, "
	"got 0.5"},
    {"timeout factor too big",
	"{\"policy\": {\"extended_timeout_factor\": 1000}}",
	": policy.extended_timeout_factor: must be between 1 and 100, "
	"got 1000"},
    {"retry_count negative", "{\"policy\": {\"retry_count\": -1}}",
	": policy.retry_count: must be >= 0, got -1"},
    {"huge duration", "{\"policy\": {\"max_wait_s\": 1e12}}",
	": policy.max_wait_s: must be <= 1e+09"},
    {"bad strategy", "{\"policy\": {\"strategy\": \"fast\"}}",
	": policy.strategy: must be adaptive, retry or none, got \"fast\""},
    {"bad backoff strategy",
	"{\"policy\": {\"backoff\": {\"strategy\": \"quadratic\"}}}",
	": policy.backoff.strategy: must be none, fixed, linear or "
	"exponential"},
    {"empty pattern", "{\"policy\": {\"retry_on\": [\"429\", \"\"]}}",
	": policy.retry_on[1]: must not be empty"},
    {"pattern not string", "{\"policy\": {\"network_on\": [1]}}",
	": policy.network_on[0]: expected a string, got a number"},
    {"bad explicit id",
	"{\"stories\": [{\"file\": \"a.md\", \"id\": \"../x\"}]}",
	": stories[0].id: invalid story id \"../x\" for a.md"},
    {"bad derived id", "{\"stories\": [\"docs/-x.md\"]}",
	": stories[0]: invalid story id \"-x\" for docs/-x.md"},
    {"hidden derived id", "{\"stories\": [\"docs/.hidden.md\"]}",
	": stories[0]: invalid story id \".hidden\" for docs/.hidden.md"},
    {"absolute id",
	"{\"stories\": [{\"file\": \"a.md\", \"id\": "
	"\"/abs\"}]}",
	"invalid story id \"/abs\" for a.md"},
    {"duplicate id", "{\"stories\": [\"a/x.md\", \"b/x.md\"]}",
	": stories[1]: duplicate story id \"x\" (a/x.md and b/x.md)"},
    {"duplicate explicit id",
	"{\"stories\": [\"a.md\", {\"file\": \"b.md\", \"id\": \"a\"}]}",
	"duplicate story id \"a\""},
    {"listed twice", "{\"stories\": [\"a.md\", \"./a.md\"]}",
	": stories[1]: story file a.md is listed twice"},
    {"unknown depends_on",
	"{\"stories\": [\"a.md\", {\"file\": \"b.md\", \"depends_on\": "
	"[\"a\", \"zz\"]}]}",
	": stories[1]: story b depends on unknown story id \"zz\""},
    {"depends_on not array",
	"{\"stories\": [{\"file\": \"b.md\", \"depends_on\": \"a\"}]}",
	": stories[0].depends_on: expected an array of strings"},
    {"cycle",
	"{\"stories\": [{\"file\": \"a.md\", \"depends_on\": [\"b\"]},"
	" {\"file\": \"b.md\", \"depends_on\": [\"a\"]}]}",
	": dependency cycle: a -> b -> a"},
    {"self cycle",
	"{\"stories\": [{\"file\": \"a.md\", \"depends_on\": [\"a\"]}]}",
	": dependency cycle: a -> a"},
    {"long cycle",
	"{\"stories\": [\"z.md\", {\"file\": \"a.md\", \"depends_on\": "
	"[\"z\", \"b\"]},"
	" {\"file\": \"b.md\", \"depends_on\": [\"c\"]},"
	" {\"file\": \"c.md\", \"depends_on\": [\"a\"]}]}",
	": dependency cycle: a -> b -> c -> a"},
    {"story absolute path", "{\"stories\": [\"/etc/passwd\"]}",
	": stories[0]: story file \"/etc/passwd\" must be relative"},
    {"story escape", "{\"stories\": [\"../x.md\"]}",
	": stories[0]: story file \"../x.md\" is outside the project root"},
    {"story escape deep",
	"{\"stories\": [{\"file\": "
	"\"docs/../../x.md\"}]}",
	"is outside the project root"},
    {"story is root", "{\"stories\": [\".\"]}", "is outside the project root"},
    {"story empty", "{\"stories\": [\"\"]}",
	": stories[0]: must not be "
	"empty"},
    {"story without file", "{\"stories\": [{\"id\": \"a\"}]}",
	": stories[0]: needs a file"},
    {"story wrong type", "{\"stories\": [3]}",
	": stories[0]: expected a file name or an object, got a number"},
    {"unknown stories key", "{\"stories\": {\"foo\": 1}}",
	": unknown key stories.foo"},
    {"stories key typo", "{\"stories\": {\"tasks_headin\": \"x\"}}",
	": unknown key stories.tasks_headin (did you mean tasks_heading?)"},
    {"unknown key in stories.files",
	"{\"stories\": {\"files\": [{\"file\": \"a.md\", \"idd\": "
	"\"a\"}]}}",
	": unknown key stories.files[0].idd (did you mean id?)"},
    {"stories.files not array", "{\"stories\": {\"files\": \"a.md\"}}",
	": stories.files: expected an array, got a string"},
    {"stories.files entry", "{\"stories\": {\"files\": [\"/a.md\"]}}",
	": stories.files[0]: story file \"/a.md\" must be relative"},
    {"tasks_heading empty", "{\"stories\": {\"tasks_heading\": \"\"}}",
	": stories.tasks_heading: must not be empty"},
    {"tasks_heading not string", "{\"stories\": {\"tasks_heading\": 1}}",
	": stories.tasks_heading: expected a string, got a number"},
    {"include_drafts not bool", "{\"stories\": {\"include_drafts\": \"yes\"}}",
	": stories.include_drafts: expected a boolean"},
    {"glob given twice",
	"{\"stories\": {\"glob\": \"*.md\"}, \"stories_glob\": "
	"\"*.md\"}",
	": stories_glob: give the pattern once"},
    {"stories.glob escape", "{\"stories\": {\"glob\": \"../*.md\"}}",
	": stories.glob: must be relative to the project root"},
    {"sprint_status absolute",
	"{\"stories\": {\"sprint_status\": \"/etc/x.yaml\"}}",
	": stories.sprint_status: \"/etc/x.yaml\" must be relative"},
    {"sprint_status outside",
	"{\"stories\": {\"sprint_status\": \"../x.yaml\"}}",
	": stories.sprint_status: \"../x.yaml\" is outside the project "
	"root"},
    {"depends_on with a did-you-mean",
	"{\"stories\": [\"1.1.story.md\", {\"file\": \"b.md\", "
	"\"depends_on\": [\"1.1.story\"]}]}",
	": stories[1]: story b depends on unknown story id \"1.1.story\" "
	"(did you mean 1.1?)"},
    {"duplicate id from .story",
	"{\"stories\": [\"a/1.1.story.md\", "
	"\"b/1.1.md\"]}",
	": stories[1]: duplicate story id \"1.1\" (a/1.1.story.md and "
	"b/1.1.md)"},
    {"stories not array", "{\"stories\": \"a.md\"}",
	": stories: expected an array or an object, got a string"},
    {"glob absolute", "{\"stories_glob\": \"/etc/*\"}",
	": stories_glob: must be relative to the project root"},
    {"glob escape", "{\"stories_glob\": \"../*/x.md\"}",
	": stories_glob: must be relative to the project root"},
    {"unknown preset",
	"{\"agents\": {\"primary\": {\"preset\": "
	"\"claud\"}}}",
	": agents.primary.preset: unknown preset \"claud\" (known: claude, "
	"codex, gemini, aider)"},
    {"agent without command",
	"{\"agents\": {\"primary\": {\"timeout_s\": 10}}}",
	": agents.primary: needs a preset or a command"},
    {"agent not object", "{\"agents\": {\"primary\": \"claude\"}}",
	": agents.primary: expected an object, got a string"},
    {"no primary", "{\"agents\": {\"fallback\": {\"preset\": \"codex\"}}}",
	": agents.primary: missing"},
    {"empty command",
	"{\"agents\": {\"primary\": {\"preset\": \"claude\"},"
	" \"fallback\": {\"command\": []}}}",
	": agents.fallback.command: must not be empty"},
    {"command item not string",
	"{\"agents\": {\"primary\": {\"command\": [\"x\", 1]}}}",
	": agents.primary.command[1]: expected a string, got a number"},
    {"command empty program",
	"{\"agents\": {\"primary\": {\"command\": [\"\", \"x\"]}}}",
	": agents.primary.command[0]: the program name must not be empty"},
    {"command is string",
	"{\"agents\": {\"primary\": {\"command\": \"claude -p\"}}}",
	": agents.primary.command: expected an array of strings, got a "
	"string"},
    {"agent timeout 0",
	"{\"agents\": {\"primary\": {\"preset\": \"claude\", "
	"\"timeout_s\": 0}}}",
	": agents.primary.timeout_s: must be >= 0.1, got 0"},
    /* issue 11: below a millisecond it used to mean no limit at all */
    {"agent timeout under a millisecond",
	"{\"agents\": {\"primary\": {\"preset\": \"claude\", "
	"\"timeout_s\": 0.0004}}}",
	": agents.primary.timeout_s: must be >= 0.1, got 0.0004"},
    {"agent timeout under the minimum",
	"{\"agents\": {\"primary\": {\"preset\": \"claude\", "
	"\"timeout_s\": 0.05}}}",
	": agents.primary.timeout_s: must be >= 0.1, got 0.05"},
    {"on_usage_limit unknown", "{\"policy\": {\"on_usage_limit\": \"sleep\"}}",
	": policy.on_usage_limit: must be wait or switch, got \"sleep\""},
    {"on_usage_limit not a string", "{\"policy\": {\"on_usage_limit\": 1}}",
	": policy.on_usage_limit: expected a string, got a number"},
    {"max_limit_waits negative", "{\"policy\": {\"max_limit_waits\": -1}}",
	": policy.max_limit_waits: must be"},
    {"agent stall negative",
	"{\"agents\": {\"primary\": {\"preset\": \"claude\","
	" \"stall_timeout_s\": -1}}}",
	": agents.primary.stall_timeout_s: must be >= 0, got -1"},
    {"env value not string",
	"{\"agents\": {\"primary\": {\"preset\": \"claude\","
	" \"env\": {\"FOO\": 1}}}}",
	": agents.primary.env.FOO: expected a string, got a number"},
    {"env bad name",
	"{\"agents\": {\"primary\": {\"preset\": \"claude\","
	" \"env\": {\"A=B\": \"x\"}}}}",
	": agents.primary.env.A=B: not a valid environment variable name"},
    {"env not object",
	"{\"agents\": {\"primary\": {\"preset\": \"claude\", \"env\": "
	"[\"A=b\"]}}}",
	": agents.primary.env: expected an object of strings, got an "
	"array"},
    {"agent name empty",
	"{\"agents\": {\"primary\": {\"preset\": \"claude\", \"name\": "
	"\"\"}}}",
	": agents.primary.name: must be 1 to 63 bytes long"},
    {"gate without command", "{\"gates\": [{\"name\": \"t\"}]}",
	": gates[0]: needs a command"},
    {"gates not array", "{\"gates\": {}}",
	": gates: expected an array, got an object"},
    {"gate timeout negative",
	"{\"gates\": [{\"command\": [\"make\"], \"timeout_s\": -1}]}",
	": gates[0].timeout_s: must be >= 0.1, got -1"},
    {"gate timeout under a millisecond",
	"{\"gates\": [{\"command\": [\"make\"], \"timeout_s\": 1e-6}]}",
	": gates[0].timeout_s: must be >= 0.1, got 1e-06"},
    {"quorum too big",
	"{\"review\": {\"agents\": [[\"a\"], [\"b\"], [\"c\"]], "
	"\"quorum\": 4}}",
	": review.quorum: must be between 1 and 3 (the number of "
	"reviewers), "
	"got 4"},
    {"quorum 0", "{\"review\": {\"agents\": [[\"a\"]], \"quorum\": 0}}",
	": review.quorum: must be between 1 and 1"},
    {"quorum without reviewers", "{\"review\": {\"quorum\": 1}}",
	": review.quorum: there are no reviewers"},
    {"review unknown preset",
	"{\"review\": {\"agents\": [[\"a\"], "
	"\"gemeni\"]}}",
	": review.agents[1]: unknown preset \"gemeni\""},
    {"review retries negative", "{\"review\": {\"retries\": -2}}",
	": review.retries: must be >= 0, got -2"},
    {"breaker negative", "{\"breaker\": {\"after\": -1}}",
	": breaker.after: must be >= 0, got -1"},
    {"budget negative", "{\"budget\": {\"max_cost_usd\": -0.01}}",
	": budget.max_cost_usd: must be >= 0, got -0.01"},
    {"branch with space", "{\"git\": {\"state_branch\": \"my branch\"}}",
	": git.state_branch: not a valid branch name: \"my branch\""},
    {"branch dotdot", "{\"git\": {\"state_branch\": \"a..b\"}}",
	": git.state_branch: not a valid branch name"},
    {"branch leading dash", "{\"git\": {\"state_branch\": \"-x\"}}",
	": git.state_branch: not a valid branch name"},
    {"branch trailing slash", "{\"git\": {\"state_branch\": \"x/\"}}",
	": git.state_branch: not a valid branch name"},
    {"branch lock", "{\"git\": {\"state_branch\": \"x.lock\"}}",
	": git.state_branch: not a valid branch name"},
    {"branch empty", "{\"git\": {\"state_branch\": \"\"}}",
	": git.state_branch: must not be empty"},
    {"prompt empty", "{\"prompt\": \"\"}", ": prompt: must not be empty"},
    {"state dir empty", "{\"state\": {\"dir\": \"\"}}",
	": state.dir: must not be empty"},
    {"nul in string", "{\"prompt\": \"a\\u0000b\"}", "JSON_ALLOW_NUL"},
};

static void
test_error_case(void **state)
{
	const struct ecase *e = *state;
	struct tmp *t = NULL;
	struct config c;
	struct sc_err err;
	size_t plen;
	int rc;

	assert_int_equal(tmp_setup((void **)&t), 0);
	rc = load_text(&c, &err, t, e->json);
	if (rc != SC_EDATA)
		fail_msg("rc %d, msg \"%s\"", rc, rc ? err.msg : "");
	plen = strlen(t->cfg);
	/* the message starts with the file name */
	if (strncmp(err.msg, t->cfg, plen) != 0 ||
	    strstr(err.msg + plen, e->want) == NULL)
		fail_msg("got \"%s\", want \"%s\"", err.msg + plen, e->want);
	/* released on error */
	assert_null(c.root);
	assert_null(c.stories);
	assert_int_equal(c.agents[0].command.n, 0);
	tmp_teardown((void **)&t);
}

/* verify.require_diff (docs/configuration.md#verify) */
static void
test_verify_require_diff(void **state)
{
	struct tmp *t = *state;
	struct config c;
	struct sc_err err;

	assert_int_equal(
	    load_text(&c, &err, t, "{\"verify\": {\"require_diff\": true}}"),
	    0);
	assert_true(c.verify.require_diff);
	config_release(&c);
}

int
main(void)
{
	static const struct CMUnitTest fixed[] = {
	    cmocka_unit_test_setup_teardown(
		test_verify_require_diff, tmp_setup, tmp_teardown),
	    cmocka_unit_test_setup_teardown(
		test_defaults, tmp_setup, tmp_teardown),
	    cmocka_unit_test(test_defaults_bad_root),
	    cmocka_unit_test_setup_teardown(
		test_empty_object, tmp_setup, tmp_teardown),
	    cmocka_unit_test_setup_teardown(
		test_spec_example, tmp_setup, tmp_teardown),
	    cmocka_unit_test_setup_teardown(
		test_all_values, tmp_setup, tmp_teardown),
	    cmocka_unit_test_setup_teardown(
		test_preset_override, tmp_setup, tmp_teardown),
	    cmocka_unit_test(test_presets),
	    cmocka_unit_test_setup_teardown(
		test_glob_order_and_dedupe, tmp_setup, tmp_teardown),
	    cmocka_unit_test_setup_teardown(
		test_glob_no_match, tmp_setup, tmp_teardown),
	    cmocka_unit_test_setup_teardown(
		test_glob_root_metachars, tmp_setup, tmp_teardown),
	    cmocka_unit_test_setup_teardown(
		test_story_ids, tmp_setup, tmp_teardown),
	    cmocka_unit_test_setup_teardown(
		test_stories_object, tmp_setup, tmp_teardown),
	    cmocka_unit_test_setup_teardown(
		test_sprint_status, tmp_setup, tmp_teardown),
	    cmocka_unit_test_setup_teardown(
		test_sprint_status_location, tmp_setup, tmp_teardown),
	    cmocka_unit_test_setup_teardown(
		test_sprint_status_search, tmp_setup, tmp_teardown),
	    cmocka_unit_test_setup_teardown(
		test_sprint_status_errors, tmp_setup, tmp_teardown),
	    cmocka_unit_test_setup_teardown(
		test_relative_config_path, tmp_setup, tmp_teardown),
	    cmocka_unit_test_setup_teardown(
		test_missing_file, tmp_setup, tmp_teardown),
	    cmocka_unit_test(test_cycles_in_code),
	    cmocka_unit_test(test_id_valid),
	    cmocka_unit_test_setup_teardown(
		test_find_upward, tmp_setup, tmp_teardown),
	    cmocka_unit_test_setup_teardown(
		test_find_none, tmp_setup, tmp_teardown),
	};
	enum { NFIXED = sizeof(fixed) / sizeof(fixed[0]) };
	enum { NECASES = sizeof(ecases) / sizeof(ecases[0]) };
	struct CMUnitTest tests[NFIXED + NECASES];
	size_t i;

	memset(tests, 0, sizeof(tests));
	for (i = 0; i < NFIXED; i++)
		tests[i] = fixed[i];
	for (i = 0; i < NECASES; i++) {
		tests[NFIXED + i].name = ecases[i].name;
		tests[NFIXED + i].test_func = test_error_case;
		tests[NFIXED + i].initial_state = (void *)&ecases[i];
	}
	return _cmocka_run_group_tests(
	    "config", tests, NFIXED + NECASES, NULL, NULL);
}
