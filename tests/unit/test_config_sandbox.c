/* test_config_sandbox.c - the "sandbox" keys of storyctl.json (top level
 * and per agent), their paths, the agent merge and the presets'
 * confined argv in an agent (docs/configuration.md#sandbox). */
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

/* ---- temp dir and $HOME ---- */

struct tmp {
	char dir[1024]; /* resolved, so it compares with cfg->root */
	char cfg[PATH_MAX]; /* <dir>/storyctl.json */
	char home[PATH_MAX]; /* <dir>/home: $HOME during the test */
	char *saved_home; /* $HOME before, restored after */
};

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

static int
tmp_setup(void **state)
{
	struct tmp *t = calloc(1, sizeof(*t));
	char templ[] = "/tmp/test_config_sandbox.XXXXXX";
	const char *home = getenv("HOME");
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
	/* a home that need not exist: paths are not looked at */
	fmt_into(t->home, sizeof(t->home), "%s/home", t->dir);
	t->saved_home = home != NULL ? strdup(home) : NULL;
	if (setenv("HOME", t->home, 1) != 0) {
		free(t->saved_home);
		free(t);
		return -1;
	}
	*state = t;
	return 0;
}

static int
tmp_teardown(void **state)
{
	struct tmp *t = *state;

	if (t == NULL)
		return 0;
	if (t->saved_home != NULL)
		setenv("HOME", t->saved_home, 1);
	else
		unsetenv("HOME");
	free(t->saved_home);
	nftw(t->dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	free(t);
	return 0;
}

static int
load_text(struct config *c, struct sc_err *err, struct tmp *t, const char *text)
{
	FILE *f = fopen(t->cfg, "w");

	assert_non_null(f);
	assert_true(fputs(text, f) >= 0);
	assert_int_equal(fclose(f), 0);
	memset(c, 0, sizeof(*c));
	err_clear(err);
	return config_load(c, t->cfg, err);
}

/* l holds exactly want (NULL-terminated). */
static void
assert_list(const struct strlist *l, const char *const *want)
{
	size_t i;

	for (i = 0; want[i] != NULL; i++) {
		if (i >= l->n)
			fail_msg(
			    "%zu items, want \"%s\" at %zu", l->n, want[i], i);
		assert_string_equal(l->items[i], want[i]);
	}
	assert_int_equal(l->n, i);
}

static void
assert_default_sandbox(const struct sandbox_conf *s)
{
	assert_int_equal(s->enabled, SANDBOX_AUTO);
	assert_true(s->network);
	assert_int_equal(s->writable.n, 0);
	assert_int_equal(s->readable.n, 0);
}

/* a's command_confined is the preset's confined argv */
static void
assert_confined(const struct agent_conf *a, const char *preset)
{
	const struct preset *p = presets_find(preset);
	size_t i;

	assert_non_null(p);
	for (i = 0; p->confined_argv[i] != NULL; i++) {
		assert_true(i < a->command_confined.n);
		assert_string_equal(
		    a->command_confined.items[i], p->confined_argv[i]);
	}
	assert_int_equal(a->command_confined.n, i);
	assert_null(a->command_confined.items[i]);
}

/* ---- defaults ---- */

static void
test_defaults_no_file(void **state)
{
	struct tmp *t = *state;
	struct config c;
	struct sc_err err;
	int r;

	memset(&c, 0, sizeof(c));
	assert_int_equal(config_defaults(&c, t->dir, &err), 0);
	assert_default_sandbox(&c.sandbox);
	for (r = 0; r < 2; r++)
		assert_default_sandbox(&c.agents[r].sandbox);
	/* the default pair is two presets: both argvs known */
	assert_confined(&c.agents[ROLE_PRIMARY], "claude");
	assert_confined(&c.agents[ROLE_FALLBACK], "codex");
	config_release(&c);
	assert_int_equal(c.agents[ROLE_PRIMARY].command_confined.n, 0);
}

static void
test_defaults_no_key(void **state)
{
	struct tmp *t = *state;
	struct config c;
	struct sc_err err;

	if (load_text(&c, &err, t,
		"{\"agents\": {\"primary\": {\"preset\": \"gemini\"}}}") != 0)
		fail_msg("%s", err.msg);
	assert_default_sandbox(&c.sandbox);
	assert_default_sandbox(&c.agents[ROLE_PRIMARY].sandbox);
	/* a fallback not configured has the top-level setting too */
	assert_false(c.agents[ROLE_FALLBACK].configured);
	assert_default_sandbox(&c.agents[ROLE_FALLBACK].sandbox);
	config_release(&c);
}

/* ---- each key, at the top level ---- */

struct kcase {
	const char *name;
	const char *sandbox; /* the value of "sandbox" */
	enum sandbox_mode enabled;
	bool network;
	/* expected paths; "@" stands for the root, "~" for $HOME */
	const char *writable[6];
	const char *readable[4];
};

static const struct kcase kcases[] = {
    {"enabled auto", "{\"enabled\": \"auto\"}", SANDBOX_AUTO, true, {NULL},
	{NULL}},
    {"enabled true", "{\"enabled\": true}", SANDBOX_ON, true, {NULL}, {NULL}},
    {"enabled false", "{\"enabled\": false}", SANDBOX_OFF, true, {NULL},
	{NULL}},
    {"network false", "{\"network\": false}", SANDBOX_AUTO, false, {NULL},
	{NULL}},
    {"network true", "{\"network\": true}", SANDBOX_AUTO, true, {NULL}, {NULL}},
    {"empty object", "{}", SANDBOX_AUTO, true, {NULL}, {NULL}},
    {"empty lists", "{\"writable\": [], \"readable\": []}", SANDBOX_AUTO, true,
	{NULL}, {NULL}},
    {"absolute paths normalised",
	"{\"writable\": [\"/var//cache/./x/\", \"/opt/a/../b\"],"
	" \"readable\": [\"/usr/share/\"]}",
	SANDBOX_AUTO, true, {"/var/cache/x", "/opt/b", NULL},
	{"/usr/share", NULL}},
    {"relative to the root",
	"{\"writable\": [\"build\", \"./out/../dist\", \"a/b/\"],"
	" \"readable\": [\".\"]}",
	SANDBOX_AUTO, true, {"@/build", "@/dist", "@/a/b", NULL}, {"@", NULL}},
    {"tilde", "{\"writable\": [\"~\", \"~/.cache/x\", \"~/a/../b\"]}",
	SANDBOX_AUTO, true, {"~", "~/.cache/x", "~/b", NULL}, {NULL}},
    {"named twice kept once",
	"{\"readable\": [\"/srv/data\", \"/srv/./data/\", \"/srv/data\"]}",
	SANDBOX_AUTO, true, {NULL}, {"/srv/data", NULL}},
    {"every key",
	"{\"enabled\": true, \"network\": false, \"writable\": [\"w\"],"
	" \"readable\": [\"~/r\"]}",
	SANDBOX_ON, false, {"@/w", NULL}, {"~/r", NULL}},
};

/* "@/x" and "~/x" of a kcase as the absolute path they stand for */
static void
expand_want(char *buf, size_t cap, const struct tmp *t, const char *w)
{
	if (w[0] == '@')
		fmt_into(buf, cap, "%s%s", t->dir, w + 1);
	else if (w[0] == '~')
		fmt_into(buf, cap, "%s%s", t->home, w + 1);
	else
		fmt_into(buf, cap, "%s", w);
}

static void
assert_paths(
    const struct strlist *got, const struct tmp *t, const char *const *want)
{
	char buf[PATH_MAX];
	size_t i;

	for (i = 0; want[i] != NULL; i++) {
		expand_want(buf, sizeof(buf), t, want[i]);
		if (i >= got->n)
			fail_msg("%zu paths, want %s at %zu", got->n, buf, i);
		assert_string_equal(got->items[i], buf);
	}
	assert_int_equal(got->n, i);
}

static void
test_key_case(void **state)
{
	const struct kcase *k = *state;
	struct tmp *t = NULL;
	struct config c;
	struct sc_err err;
	char *json = NULL;
	int r;

	assert_int_equal(tmp_setup((void **)&t), 0);
	assert_true(asprintf(&json,
			"{\"sandbox\": %s, \"agents\": {"
			"\"primary\": {\"preset\": \"claude\"}}}",
			k->sandbox) > 0);
	if (load_text(&c, &err, t, json) != 0)
		fail_msg("%s", err.msg);
	free(json);
	assert_int_equal(c.sandbox.enabled, k->enabled);
	assert_int_equal(c.sandbox.network, k->network);
	assert_paths(&c.sandbox.writable, t, k->writable);
	assert_paths(&c.sandbox.readable, t, k->readable);
	/* neither agent says otherwise: both have it, as copies */
	for (r = 0; r < 2; r++) {
		const struct sandbox_conf *a = &c.agents[r].sandbox;

		assert_int_equal(a->enabled, k->enabled);
		assert_int_equal(a->network, k->network);
		assert_paths(&a->writable, t, k->writable);
		assert_paths(&a->readable, t, k->readable);
		if (a->writable.n > 0)
			assert_ptr_not_equal(
			    a->writable.items, c.sandbox.writable.items);
	}
	config_release(&c);
	tmp_teardown((void **)&t);
}

/* ---- errors: the whole message ---- */

struct ecase {
	const char *name;
	const char *json;
	const char *want; /* the message after "FILE: " */
};

static const struct ecase ecases[] = {
    {"sandbox not an object", "{\"sandbox\": []}",
	"sandbox: expected an object, got an array"},
    {"sandbox null", "{\"sandbox\": null}",
	"sandbox: expected an object, got null"},
    {"unknown top key", "{\"sandbx\": {}}",
	"unknown key sandbx (did you mean sandbox?)"},
    {"unknown sandbox key", "{\"sandbox\": {\"netwrk\": false}}",
	"unknown key sandbox.netwrk (did you mean network?)"},
    {"unknown sandbox key no hint", "{\"sandbox\": {\"zzzzzz\": 1}}",
	"unknown key sandbox.zzzzzz"},
    {"enabled bad string", "{\"sandbox\": {\"enabled\": \"on\"}}",
	"sandbox.enabled: must be \"auto\", true or false, got \"on\""},
    {"enabled case", "{\"sandbox\": {\"enabled\": \"AUTO\"}}",
	"sandbox.enabled: must be \"auto\", true or false, got \"AUTO\""},
    {"enabled number", "{\"sandbox\": {\"enabled\": 1}}",
	"sandbox.enabled: must be \"auto\", true or false, got a number"},
    {"enabled null", "{\"sandbox\": {\"enabled\": null}}",
	"sandbox.enabled: must be \"auto\", true or false, got null"},
    {"network string", "{\"sandbox\": {\"network\": \"no\"}}",
	"sandbox.network: expected a boolean (true or false), got a string"},
    {"writable string", "{\"sandbox\": {\"writable\": \"/x\"}}",
	"sandbox.writable: expected an array of strings, got a string"},
    {"writable item number", "{\"sandbox\": {\"writable\": [\"/x\", 1]}}",
	"sandbox.writable[1]: expected a string, got a number"},
    {"writable item empty", "{\"sandbox\": {\"writable\": [\"\"]}}",
	"sandbox.writable[0]: must not be empty"},
    {"readable item empty", "{\"sandbox\": {\"readable\": [\"/a\", \"\"]}}",
	"sandbox.readable[1]: must not be empty"},
    {"tilde user", "{\"sandbox\": {\"readable\": [\"~bob/x\"]}}",
	"sandbox.readable[0]: \"~bob/x\": only ~ and ~/ are expanded"},
    {"the root of all", "{\"sandbox\": {\"writable\": [\"/\"]}}",
	"sandbox.writable[0]: \"/\" is the whole file system, not a path in "
	"it"},
    {"back to the root", "{\"sandbox\": {\"writable\": [\"/etc/..\"]}}",
	"sandbox.writable[0]: \"/etc/..\" is the whole file system, not a "
	"path in it"},
    {"above the root", "{\"sandbox\": {\"readable\": [\"/../etc\"]}}",
	"sandbox.readable[0]: \"/../etc\" climbs above /"},
    {"agent sandbox not an object",
	"{\"agents\": {\"primary\": {\"preset\": \"claude\", \"sandbox\": "
	"true}}}",
	"agents.primary.sandbox: expected an object, got a boolean"},
    {"agent sandbox typo",
	"{\"agents\": {\"primary\": {\"preset\": \"claude\", \"sandbx\": "
	"{}}}}",
	"unknown key agents.primary.sandbx (did you mean sandbox?)"},
    {"agent sandbox unknown key",
	"{\"agents\": {\"primary\": {\"preset\": \"claude\", \"sandbox\": "
	"{\"writeable\": []}}}}",
	"unknown key agents.primary.sandbox.writeable (did you mean "
	"writable?)"},
    {"fallback enabled bad",
	"{\"agents\": {\"primary\": {\"preset\": \"claude\"}, \"fallback\": "
	"{\"preset\": \"codex\", \"sandbox\": {\"enabled\": \"yes\"}}}}",
	"agents.fallback.sandbox.enabled: must be \"auto\", true or false, "
	"got \"yes\""},
    {"agent network bad",
	"{\"agents\": {\"primary\": {\"preset\": \"claude\", \"sandbox\": "
	"{\"network\": 0}}}}",
	"agents.primary.sandbox.network: expected a boolean (true or false), "
	"got a number"},
    {"agent path empty",
	"{\"agents\": {\"primary\": {\"command\": [\"x\"], \"sandbox\": "
	"{\"readable\": [\"/a\", \"\"]}}}}",
	"agents.primary.sandbox.readable[1]: must not be empty"},
    /* the value shown is cleaned: no escape reaches the terminal */
    {"path shown cleaned", "{\"sandbox\": {\"writable\": [\"~\\u001b[2Jx\"]}}",
	"sandbox.writable[0]: \"~ x\": only ~ and ~/ are expanded"},
};

static void
test_error_case(void **state)
{
	const struct ecase *e = *state;
	struct tmp *t = NULL;
	struct config c;
	struct sc_err err;
	char want[PATH_MAX + 512];
	int rc;

	assert_int_equal(tmp_setup((void **)&t), 0);
	rc = load_text(&c, &err, t, e->json);
	if (rc != SC_EDATA)
		fail_msg("rc %d, msg \"%s\"", rc, rc ? err.msg : "");
	fmt_into(want, sizeof(want), "%s: %s", t->cfg, e->want);
	assert_string_equal(err.msg, want);
	/* released on error */
	assert_null(c.root);
	assert_int_equal(c.sandbox.writable.n, 0);
	assert_int_equal(c.agents[ROLE_PRIMARY].sandbox.writable.n, 0);
	assert_int_equal(c.agents[ROLE_PRIMARY].command_confined.n, 0);
	tmp_teardown((void **)&t);
}

/* ---- $HOME ---- */

static void
test_home_unset(void **state)
{
	struct tmp *t = *state;
	struct config c;
	struct sc_err err;
	char want[PATH_MAX + 128];

	assert_int_equal(unsetenv("HOME"), 0);
	assert_int_equal(load_text(&c, &err, t,
			     "{\"sandbox\": {\"writable\": [\"/ok\", "
			     "\"~/.cache\"]}}"),
	    SC_EDATA);
	fmt_into(want, sizeof(want),
	    "%s: sandbox.writable[1]: \"~/.cache\": ~ needs $HOME, which is "
	    "not set",
	    t->cfg);
	assert_string_equal(err.msg, want);
	/* an empty one is no better */
	assert_int_equal(setenv("HOME", "", 1), 0);
	assert_int_equal(
	    load_text(&c, &err, t, "{\"sandbox\": {\"readable\": [\"~\"]}}"),
	    SC_EDATA);
	assert_non_null(strstr(err.msg, "~ needs $HOME, which is not set"));
	/* nor a relative one */
	assert_int_equal(setenv("HOME", "rel/home", 1), 0);
	assert_int_equal(
	    load_text(&c, &err, t, "{\"sandbox\": {\"readable\": [\"~\"]}}"),
	    SC_EDATA);
	fmt_into(want, sizeof(want),
	    "%s: sandbox.readable[0]: \"~\": ~ needs an absolute $HOME, got "
	    "\"rel/home\"",
	    t->cfg);
	assert_string_equal(err.msg, want);
	/* paths that do not use ~ never need it */
	assert_int_equal(
	    load_text(&c, &err, t, "{\"sandbox\": {\"readable\": [\"x\"]}}"),
	    0);
	assert_int_equal(c.sandbox.readable.n, 1);
	config_release(&c);
}

static void
test_home_trailing_slash(void **state)
{
	struct tmp *t = *state;
	struct config c;
	struct sc_err err;
	char home[PATH_MAX], want[PATH_MAX];

	fmt_into(home, sizeof(home), "%s//", t->home);
	assert_int_equal(setenv("HOME", home, 1), 0);
	if (load_text(&c, &err, t,
		"{\"sandbox\": {\"writable\": [\"~/\", \"~/x/\"]}}") != 0)
		fail_msg("%s", err.msg);
	assert_int_equal(c.sandbox.writable.n, 2);
	assert_string_equal(c.sandbox.writable.items[0], t->home);
	fmt_into(want, sizeof(want), "%s/x", t->home);
	assert_string_equal(c.sandbox.writable.items[1], want);
	config_release(&c);
}

/* A relative path may leave the root: it names a place, not a file in
 * the project. */
static void
test_relative_leaves_root(void **state)
{
	struct tmp *t = *state;
	struct config c;
	struct sc_err err;
	char want[PATH_MAX], *slash;

	if (load_text(&c, &err, t,
		"{\"sandbox\": {\"readable\": [\"../shared/lib\"]}}") != 0)
		fail_msg("%s", err.msg);
	fmt_into(want, sizeof(want), "%s", t->dir);
	slash = strrchr(want, '/');
	assert_non_null(slash);
	fmt_into(slash, sizeof(want) - (size_t)(slash - want), "/shared/lib");
	assert_int_equal(c.sandbox.readable.n, 1);
	assert_string_equal(c.sandbox.readable.items[0], want);
	config_release(&c);
}

/* ---- the agent merge ---- */

static void
test_merge_network_and_writable(void **state)
{
	struct tmp *t = *state;
	struct config c;
	struct sc_err err;
	const struct sandbox_conf *p, *f;
	static const char *const top_w[] = {"@/top", NULL};
	static const char *const top_r[] = {"/srv/ref", NULL};
	static const char *const mine[] = {"~/.cache/pip", NULL};

	if (load_text(&c, &err, t,
		"{\"sandbox\": {\"network\": false, \"writable\": [\"top\"],"
		" \"readable\": [\"/srv/ref\"]},"
		" \"agents\": {\"primary\": {\"preset\": \"claude\","
		" \"sandbox\": {\"writable\": [\"~/.cache/pip\"]}},"
		" \"fallback\": {\"preset\": \"codex\"}}}") != 0)
		fail_msg("%s", err.msg);
	p = &c.agents[ROLE_PRIMARY].sandbox;
	f = &c.agents[ROLE_FALLBACK].sandbox;
	/* the primary: the top level's network, its own writable list in
	 * place of the top level's, the top level's readable list */
	assert_false(p->network);
	assert_int_equal(p->enabled, SANDBOX_AUTO);
	assert_paths(&p->writable, t, mine);
	assert_paths(&p->readable, t, top_r);
	/* the fallback gave nothing: the top level as it is */
	assert_false(f->network);
	assert_paths(&f->writable, t, top_w);
	assert_paths(&f->readable, t, top_r);
	/* and the top level itself is untouched */
	assert_false(c.sandbox.network);
	assert_paths(&c.sandbox.writable, t, top_w);
	config_release(&c);
}

static void
test_merge_enabled_override(void **state)
{
	struct tmp *t = *state;
	struct config c;
	struct sc_err err;

	if (load_text(&c, &err, t,
		"{\"sandbox\": {\"enabled\": true},"
		" \"agents\": {\"primary\": {\"preset\": \"claude\","
		" \"sandbox\": {\"enabled\": false}},"
		" \"fallback\": {\"command\": [\"x\"],"
		" \"sandbox\": {\"network\": false, \"readable\": []}}}}") != 0)
		fail_msg("%s", err.msg);
	assert_int_equal(c.sandbox.enabled, SANDBOX_ON);
	assert_int_equal(c.agents[ROLE_PRIMARY].sandbox.enabled, SANDBOX_OFF);
	assert_true(c.agents[ROLE_PRIMARY].sandbox.network);
	/* the fallback keeps the top level's enabled, changes network */
	assert_int_equal(c.agents[ROLE_FALLBACK].sandbox.enabled, SANDBOX_ON);
	assert_false(c.agents[ROLE_FALLBACK].sandbox.network);
	assert_int_equal(c.agents[ROLE_FALLBACK].sandbox.readable.n, 0);
	config_release(&c);
}

/* An agent's empty list replaces the top level's: there is no "add". */
static void
test_merge_empty_list_replaces(void **state)
{
	struct tmp *t = *state;
	struct config c;
	struct sc_err err;

	if (load_text(&c, &err, t,
		"{\"sandbox\": {\"writable\": [\"/a\", \"/b\"]},"
		" \"agents\": {\"primary\": {\"preset\": \"aider\","
		" \"sandbox\": {\"writable\": []}}}}") != 0)
		fail_msg("%s", err.msg);
	assert_int_equal(c.sandbox.writable.n, 2);
	assert_int_equal(c.agents[ROLE_PRIMARY].sandbox.writable.n, 0);
	config_release(&c);
}

/* ---- command_confined ---- */

static void
test_command_confined(void **state)
{
	static const char *const mine[] = {"mycodex", "{prompt}", NULL};
	struct tmp *t = *state;
	struct config c;
	struct sc_err err;
	const struct agent_conf *p, *f;

	/* a preset: both argvs */
	if (load_text(&c, &err, t,
		"{\"agents\": {\"primary\": {\"preset\": \"gemini\"},"
		" \"fallback\": {\"command\": [\"mycodex\", "
		"\"{prompt}\"]}}}") != 0)
		fail_msg("%s", err.msg);
	p = &c.agents[ROLE_PRIMARY];
	f = &c.agents[ROLE_FALLBACK];
	assert_confined(p, "gemini");
	assert_string_equal(p->command.items[4], "auto_edit");
	assert_string_equal(p->command_confined.items[4], "yolo");
	/* a command: nothing but it */
	assert_list(&f->command, mine);
	assert_int_equal(f->command_confined.n, 0);
	assert_null(f->command_confined.items);
	config_release(&c);

	/* a preset with its command replaced: the user's argv only */
	if (load_text(&c, &err, t,
		"{\"agents\": {\"primary\": {\"preset\": \"codex\","
		" \"command\": [\"mycodex\", \"{prompt}\"]}}}") != 0)
		fail_msg("%s", err.msg);
	p = &c.agents[ROLE_PRIMARY];
	assert_string_equal(p->preset, "codex");
	assert_list(&p->command, mine);
	assert_int_equal(p->command_confined.n, 0);
	config_release(&c);

	/* no "agents": the default pair, both argvs */
	if (load_text(&c, &err, t, "{}") != 0)
		fail_msg("%s", err.msg);
	assert_confined(&c.agents[ROLE_PRIMARY], "claude");
	assert_confined(&c.agents[ROLE_FALLBACK], "codex");
	config_release(&c);
}

/* ---- the helpers config.h exports ---- */

static void
test_copy_and_release(void **state)
{
	struct sandbox_conf a, b;

	(void)state;
	config_sandbox_init(&a);
	assert_default_sandbox(&a);
	a.enabled = SANDBOX_ON;
	a.network = false;
	assert_int_equal(strlist_push(&a.writable, "/w"), 0);
	assert_int_equal(strlist_push(&a.readable, "/r"), 0);
	assert_int_equal(config_sandbox_copy(&b, &a), 0);
	assert_int_equal(b.enabled, SANDBOX_ON);
	assert_false(b.network);
	assert_string_equal(b.writable.items[0], "/w");
	assert_string_equal(b.readable.items[0], "/r");
	/* deep: the copy outlives the original */
	assert_ptr_not_equal(b.writable.items[0], a.writable.items[0]);
	config_sandbox_release(&a);
	assert_default_sandbox(&a);
	assert_string_equal(b.readable.items[0], "/r");
	config_sandbox_release(&b);
	assert_default_sandbox(&b);
	config_sandbox_release(&b); /* twice: no-op */
}

struct pcase {
	const char *in, *root, *home;
	const char *want; /* NULL: an error */
	int code;
};

static const struct pcase pcases[] = {
    {"~/.claude/", "/r", "/home/u", "/home/u/.claude", 0},
    {"~/.claude.json", "/r", "/home/u/", "/home/u/.claude.json", 0},
    {"~", "/r", "/home/u", "/home/u", 0}, {"x/../y", "/r", NULL, "/r/y", 0},
    {"/abs//p/.", NULL, NULL, "/abs/p", 0},
    {"x", NULL, "/h", NULL, SC_EDATA}, /* relative, no root */
    {"~/x", "/r", NULL, NULL, SC_EDATA}, {"", "/r", "/h", NULL, SC_EDATA},
    {"~root", "/r", "/h", NULL, SC_EDATA},
    {"/a/../..", "/r", "/h", NULL, SC_EDATA},
    {"~", "/r", "/", NULL, SC_EDATA}, /* $HOME=/ is all of it */
};

static void
test_path_function(void **state)
{
	struct sc_err err;
	char *out;
	size_t i;
	int rc;

	(void)state;
	for (i = 0; i < sizeof(pcases) / sizeof(pcases[0]); i++) {
		const struct pcase *p = &pcases[i];

		err_clear(&err);
		out = (char *)1;
		rc = config_sandbox_path(&out, p->in, p->root, p->home, &err);
		if (rc != p->code)
			fail_msg("\"%s\": rc %d, want %d (%s)", p->in, rc,
			    p->code, err.msg);
		if (p->want == NULL) {
			assert_null(out);
			assert_true(err.msg[0] != '\0');
			continue;
		}
		assert_non_null(out);
		assert_string_equal(out, p->want);
		free(out);
	}
}

int
main(void)
{
	static const struct CMUnitTest fixed[] = {
	    cmocka_unit_test_setup_teardown(
		test_defaults_no_file, tmp_setup, tmp_teardown),
	    cmocka_unit_test_setup_teardown(
		test_defaults_no_key, tmp_setup, tmp_teardown),
	    cmocka_unit_test_setup_teardown(
		test_home_unset, tmp_setup, tmp_teardown),
	    cmocka_unit_test_setup_teardown(
		test_home_trailing_slash, tmp_setup, tmp_teardown),
	    cmocka_unit_test_setup_teardown(
		test_relative_leaves_root, tmp_setup, tmp_teardown),
	    cmocka_unit_test_setup_teardown(
		test_merge_network_and_writable, tmp_setup, tmp_teardown),
	    cmocka_unit_test_setup_teardown(
		test_merge_enabled_override, tmp_setup, tmp_teardown),
	    cmocka_unit_test_setup_teardown(
		test_merge_empty_list_replaces, tmp_setup, tmp_teardown),
	    cmocka_unit_test_setup_teardown(
		test_command_confined, tmp_setup, tmp_teardown),
	    cmocka_unit_test(test_copy_and_release),
	    cmocka_unit_test(test_path_function),
	};
	enum { NFIXED = sizeof(fixed) / sizeof(fixed[0]) };
	enum { NK = sizeof(kcases) / sizeof(kcases[0]) };
	enum { NE = sizeof(ecases) / sizeof(ecases[0]) };
	struct CMUnitTest tests[NFIXED + NK + NE];
	size_t i;

	memset(tests, 0, sizeof(tests));
	for (i = 0; i < NFIXED; i++)
		tests[i] = fixed[i];
	for (i = 0; i < NK; i++) {
		tests[NFIXED + i].name = kcases[i].name;
		tests[NFIXED + i].test_func = test_key_case;
		tests[NFIXED + i].initial_state = (void *)&kcases[i];
	}
	for (i = 0; i < NE; i++) {
		tests[NFIXED + NK + i].name = ecases[i].name;
		tests[NFIXED + NK + i].test_func = test_error_case;
		tests[NFIXED + NK + i].initial_state = (void *)&ecases[i];
	}
	return _cmocka_run_group_tests(
	    "config_sandbox", tests, NFIXED + NK + NE, NULL, NULL);
}
