/*
 * test_batch.c - the batch loop (controller/engine/batch.c, attempt.c,
 * console.c) driven through its seams: a fake clock that never really
 * sleeps (sleep_until records the deadline and jumps the clock to it)
 * and a scripted fake agent runner that checks boxes in the story file,
 * advances the fake clock and returns a canned runner_result.
 *
 * Every test gets a fresh mkdtemp directory holding a git repository
 * (one commit on main), storyctl.json and the story files; the state
 * dir is the default <root>/.storyctl.  What the loop did is read back
 * from the fake's call log, the fake clock's sleep log, the database
 * and the state branch.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <git2.h>
#include <jansson.h>

#include "controller/engine/batch.h"
#include "controller/engine/batch_notify.h"
#include "controller/config/config.h"
#include "controller/config/stories.h"
#include "state/db.h"
#include "state/gitstate.h"
#include "state/lock.h"

/* The fake wall clock starts here (2023-11-14T22:13:20Z), whole seconds. */
#define T0 1700000000000LL
#define MAXCALLS 16
#define MAXSLEEPS 16
#define KEEP (-1)

#define FAKE_CMD "[\"fake\", \"{role}\", \"{attempt}\", \"{story_file}\"]"
#define PRIMARY \
	"\"primary\": {\"command\": " FAKE_CMD ", \"name\": " \
	"\"prim\", \"timeout_s\": 100, \"env\": {\"FOO\": \"bar\"}}"
#define FALLBACK \
	"\"fallback\": {\"command\": " FAKE_CMD ", \"name\": " \
	"\"fall\", \"timeout_s\": 100}"
#define BOTH "{" PRIMARY ", " FALLBACK "}"
#define ONLY_PRIMARY "{" PRIMARY "}"
/* A policy whose delays are easy to predict: 1 s fixed, no jitter. */
#define FIXED \
	"{\"backoff\": {\"strategy\": \"fixed\", " \
	"\"base_delay_ms\": 1000, \"jitter\": 0}}"

/* One scripted attempt of the fake runner. */
struct step {
	int done; /* boxes checked when it ends; KEEP = as is */
	int64_t dur_ms; /* fake time the attempt takes */
	int exit_code;
	int sig;
	bool interrupted; /* killed because of stop: also raises *stop */
	bool timed_out;
	bool stalled;
	int spawn_errno; /* != 0: exec failed (exit 127) */
	int log_errno; /* != 0: writing the log failed */
	const char *tail; /* printf format: %lld is the reset epoch */
	int64_t reset_in_s; /* the reset epoch is now_s + this */
	bool poll; /* check poll_done boxes, then poll 4 x 100 ms */
	int poll_done;
};

/* What the fake runner saw in one call. */
struct call {
	char role[16];
	int attempt; /* {attempt} from argv (relative to a requeue) */
	char story[64]; /* {story_file} */
	int64_t start_ms; /* the fake clock at the call */
	int64_t timeout_ms, poll_ms, stall_ms, grace_ms;
	bool env_foo; /* env_add had FOO=bar */
	int tokens[4]; /* on_poll returns, with step.poll */
	char insane[160]; /* "" when the runner_opts looked right */
};

struct fx {
	char dir[PATH_MAX];
	char cfgpath[PATH_MAX];
	struct config cfg;
	struct story *stories;
	size_t nstories;
	struct batch_opts o;
	struct batch_result res;
	struct sc_err err;
	volatile sig_atomic_t stop;
	/* the fake clock */
	int64_t now;
	double rnd;
	int sleep_ret; /* what sleep_until returns */
	int64_t sleeps[MAXSLEEPS]; /* deadlines asked for */
	int64_t sleep_from[MAXSLEEPS]; /* the clock when asked */
	size_t nsleeps;
	/* the fake runner */
	const struct step *steps;
	size_t nsteps;
	struct call calls[MAXCALLS];
	size_t ncalls;
	int64_t epoch_s; /* the last reset epoch written in a tail */
	/* progress lines */
	char *outbuf;
	size_t outlen;
};

/* ------------------------------------------------------------------ */
/* files */

static int
rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	return remove(path);
}

static void
path_in(char *out, const char *dir, const char *name)
{
	int n = snprintf(out, PATH_MAX, "%s/%s", dir, name);

	assert_true(n > 0 && n < PATH_MAX);
}

static void
file_put(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	assert_true(fputs(text, f) >= 0);
	assert_int_equal(fclose(f), 0);
}

/* A story with total tasks under "## Tasks", the first done checked, and
 * an unchecked box under a later heading that must not count. */
static void
story_write(const char *path, int total, int done)
{
	FILE *f = fopen(path, "w");
	int i;

	assert_non_null(f);
	fprintf(f, "# Story\n\nAs a user I want things.\n\n## Tasks\n\n");
	for (i = 0; i < total; i++)
		fprintf(f, "- [%c] task %d\n", i < done ? 'x' : ' ', i + 1);
	fprintf(f, "\n## Notes\n\n- [ ] not a task: outside Tasks\n");
	assert_int_equal(fclose(f), 0);
}

static void
fx_story(struct fx *fx, const char *name, int total, int done)
{
	char path[PATH_MAX];

	path_in(path, fx->dir, name);
	story_write(path, total, done);
}

/* A repository whose HEAD is main with one commit (README). */
static void
repo_init(const char *dir)
{
	git_repository *repo = NULL;
	git_index *idx = NULL;
	git_signature *sig = NULL;
	git_tree *tree = NULL;
	git_oid tree_id, commit_id;
	char path[PATH_MAX];

	path_in(path, dir, "README");
	file_put(path, "hello\n");
	assert_int_equal(git_repository_init(&repo, dir, 0), 0);
	assert_int_equal(git_repository_set_head(repo, "refs/heads/main"), 0);
	assert_int_equal(git_repository_index(&idx, repo), 0);
	assert_int_equal(git_index_add_bypath(idx, "README"), 0);
	assert_int_equal(git_index_write(idx), 0);
	assert_int_equal(git_index_write_tree(&tree_id, idx), 0);
	assert_int_equal(git_tree_lookup(&tree, repo, &tree_id), 0);
	assert_int_equal(
	    git_signature_new(&sig, "t", "t@example.org", 1700000000, 0), 0);
	assert_int_equal(git_commit_create_v(&commit_id, repo, "HEAD", sig, sig,
			     NULL, "initial", tree, 0),
	    0);
	git_signature_free(sig);
	git_tree_free(tree);
	git_index_free(idx);
	git_repository_free(repo);
}

/* HEAD's symbolic target and the commit it resolves to. */
static void
repo_head(const char *dir, char *target, size_t len, char *hex)
{
	git_repository *repo = NULL;
	git_reference *head = NULL;
	git_oid oid;

	assert_int_equal(git_repository_open(&repo, dir), 0);
	assert_int_equal(git_reference_lookup(&head, repo, "HEAD"), 0);
	assert_int_equal(git_reference_type(head), GIT_REFERENCE_SYMBOLIC);
	snprintf(target, len, "%s", git_reference_symbolic_target(head));
	assert_int_equal(git_reference_name_to_id(&oid, repo, "HEAD"), 0);
	git_oid_tostr(hex, GIT_OID_HEXSZ + 1, &oid);
	git_reference_free(head);
	git_repository_free(repo);
}

/* ------------------------------------------------------------------ */
/* the fake clock */

static int64_t
fake_now(void *ctx)
{
	struct fx *fx = ctx;

	return fx->now;
}

static int
fake_sleep(void *ctx, int64_t deadline_ms, const volatile sig_atomic_t *stop,
    int wake_fd)
{
	struct fx *fx = ctx;

	if (fx->nsleeps < MAXSLEEPS) {
		fx->sleeps[fx->nsleeps] = deadline_ms;
		fx->sleep_from[fx->nsleeps] = fx->now;
	}
	fx->nsleeps++;
	if (fx->sleep_ret != 0)
		return fx->sleep_ret;
	if (deadline_ms > fx->now)
		fx->now = deadline_ms;
	return 0;
}

static double
fake_random(void *ctx)
{
	struct fx *fx = ctx;

	return fx->rnd;
}

/* ------------------------------------------------------------------ */
/* the fake runner */

static void
insane(struct call *c, const char *why)
{
	if (c->insane[0] == '\0')
		snprintf(c->insane, sizeof(c->insane), "%s", why);
}

/* What every call must look like, whatever the script. */
static void
check_opts(struct fx *fx, struct call *c, const struct runner_opts *o)
{
	char logdir[PATH_MAX];
	size_t i;

	path_in(logdir, fx->cfg.state_dir, "logs/");
	if (o->argv == NULL || o->argv[0] == NULL || o->argv[1] == NULL ||
	    o->argv[2] == NULL || o->argv[3] == NULL || o->argv[4] != NULL) {
		insane(c, "argv is not fake ROLE ATTEMPT FILE");
		return;
	}
	if (strcmp(o->argv[0], "fake") != 0)
		insane(c, "argv[0] is not fake");
	if (o->cwd == NULL || strcmp(o->cwd, fx->cfg.root) != 0)
		insane(c, "cwd is not the project root");
	if (o->log_path == NULL ||
	    strncmp(o->log_path, logdir, strlen(logdir)) != 0 ||
	    strchr(o->log_path + strlen(logdir), '/') != NULL)
		insane(c, "log_path is not in <state dir>/logs");
	if (o->stop != &fx->stop)
		insane(c, "stop is not the batch's stop flag");
	if (o->wake_fd != -1)
		insane(c, "wake_fd is not the batch's");
	if (o->on_poll == NULL || o->on_start == NULL)
		insane(c, "on_poll or on_start missing");
	if (o->timeout_ms <= 0)
		insane(c, "an attempt without a time limit");
	for (i = 0; o->env_add != NULL && i < o->env_add->n; i++)
		if (strcmp(o->env_add->items[i], "FOO=bar") == 0)
			c->env_foo = true;
}

static int
fake_run(void *ctx, struct runner_result *out, const struct runner_opts *o,
    struct sc_err *err)
{
	struct fx *fx = ctx;
	const struct step *s;
	struct call *c;
	struct progress pr;
	char path[PATH_MAX];
	char tail[512] = "";
	int j;

	memset(out, 0, sizeof(*out));
	if (fx->ncalls >= fx->nsteps || fx->ncalls >= MAXCALLS)
		return err_set(err, SC_ESOFTWARE,
		    "fake runner: unscripted "
		    "call %zu",
		    fx->ncalls + 1);
	s = &fx->steps[fx->ncalls];
	c = &fx->calls[fx->ncalls++];
	memset(c, 0, sizeof(*c));
	check_opts(fx, c, o);
	if (c->insane[0] != '\0' && o->argv == NULL)
		return err_set(err, SC_ESOFTWARE, "fake runner: %s", c->insane);
	snprintf(c->role, sizeof(c->role), "%s", o->argv[1]);
	c->attempt = atoi(o->argv[2]);
	snprintf(c->story, sizeof(c->story), "%s", o->argv[3]);
	c->start_ms = fx->now;
	c->timeout_ms = o->timeout_ms;
	c->poll_ms = o->poll_interval_ms;
	c->stall_ms = o->stall_timeout_ms;
	c->grace_ms = o->kill_grace_ms;

	path_in(path, fx->cfg.root, o->argv[3]);
	assert_int_equal(story_read_progress(&pr, path, NULL, NULL, NULL), 0);
	if (s->poll) {
		story_write(path, pr.counts.tasks_total, s->poll_done);
		for (j = 0; j < 4; j++) {
			fx->now += 100;
			c->tokens[j] = o->on_poll(o->ctx, (j + 1) * 100, 0);
		}
	}
	fx->now += s->dur_ms;
	if (s->done != KEEP)
		story_write(path, pr.counts.tasks_total, s->done);
	if (s->interrupted)
		fx->stop = 1;
	if (s->tail != NULL) {
		fx->epoch_s = fx->now / 1000 + s->reset_in_s;
		snprintf(tail, sizeof(tail), s->tail, (long long)fx->epoch_s);
	}
	out->exit_code = s->sig != 0 ? -1 : s->exit_code;
	out->term_signal = s->sig;
	out->interrupted = s->interrupted;
	out->timed_out = s->timed_out;
	out->stalled = s->stalled;
	out->spawn_failed = s->spawn_errno != 0;
	out->spawn_errno = s->spawn_errno;
	out->log_errno = s->log_errno;
	out->duration_ms = s->dur_ms;
	out->tail = strdup(tail);
	assert_non_null(out->tail);
	out->tail_len = strlen(tail);
	out->output_bytes = out->tail_len;
	return 0;
}

/* ------------------------------------------------------------------ */
/* fixture */

static int
fx_setup(void **state)
{
	struct fx *fx = calloc(1, sizeof(*fx));
	const char *tmp = getenv("TMPDIR");
	char tmpl[PATH_MAX];

	assert_non_null(fx);
	snprintf(tmpl, sizeof(tmpl), "%s/batchtest-XXXXXX",
	    tmp != NULL && *tmp != '\0' ? tmp : "/tmp");
	assert_non_null(mkdtemp(tmpl));
	assert_non_null(realpath(tmpl, fx->dir));
	git_libgit2_init();
	repo_init(fx->dir);
	fx->now = T0;
	fx->o.out = open_memstream(&fx->outbuf, &fx->outlen);
	assert_non_null(fx->o.out);
	*state = fx;
	return 0;
}

static int
fx_teardown(void **state)
{
	struct fx *fx = *state;

	if (fx == NULL)
		return 0;
	stories_free(fx->stories, fx->nstories);
	config_release(&fx->cfg);
	fclose(fx->o.out);
	free(fx->outbuf);
	nftw(fx->dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	git_libgit2_shutdown();
	free(fx);
	*state = NULL;
	return 0;
}

/* Write storyctl.json (stories: a JSON array; agents and policy: JSON
 * objects) and load it with the stories; fill the batch options. */
static void
fx_config(
    struct fx *fx, const char *stories, const char *agents, const char *policy)
{
	char text[4096];
	int n;

	n = snprintf(text, sizeof(text),
	    "{\"stories\": %s, \"agents\": %s, "
	    "\"policy\": %s}\n",
	    stories, agents, policy);
	assert_true(n > 0 && (size_t)n < sizeof(text));
	path_in(fx->cfgpath, fx->dir, CONFIG_FILE_NAME);
	file_put(fx->cfgpath, text);
	stories_free(fx->stories, fx->nstories);
	fx->stories = NULL;
	fx->nstories = 0;
	config_release(&fx->cfg);
	if (config_load(&fx->cfg, fx->cfgpath, &fx->err) != 0)
		fail_msg("config_load: %s", fx->err.msg);
	if (stories_load(&fx->stories, &fx->nstories, &fx->cfg, &fx->err) != 0)
		fail_msg("stories_load: %s", fx->err.msg);
	fx->o.cfg = &fx->cfg;
	fx->o.stories = fx->stories;
	fx->o.nstories = fx->nstories;
	fx->o.mode = BATCH_RUN;
	fx->o.clock.now_ms = fake_now;
	fx->o.clock.sleep_until = fake_sleep;
	fx->o.clock.random01 = fake_random;
	fx->o.clock.ctx = fx;
	fx->o.run_agent = fake_run;
	fx->o.run_ctx = fx;
	fx->o.tty = false;
	fx->o.stop = &fx->stop;
	fx->o.wake_fd = -1;
	fx->o.kill_grace_ms_override = 0;
}

static void
fx_script(struct fx *fx, const struct step *steps, size_t n)
{
	fx->steps = steps;
	fx->nsteps = n;
	fx->ncalls = 0;
}

/* batch_run; it must return 0, every call must have looked right, and
 * the script must be used up. */
static void
fx_run(struct fx *fx)
{
	size_t i;

	memset(&fx->err, 0, sizeof(fx->err));
	if (batch_run(&fx->res, &fx->o, &fx->err) != 0)
		fail_msg("batch_run: %s", fx->err.msg);
	for (i = 0; i < fx->ncalls; i++)
		if (fx->calls[i].insane[0] != '\0')
			fail_msg("call %zu: %s", i + 1, fx->calls[i].insane);
	assert_int_equal(fx->ncalls, fx->nsteps);
	fflush(fx->o.out);
}

static bool
out_has(struct fx *fx, const char *s)
{
	fflush(fx->o.out);
	return fx->outbuf != NULL && strstr(fx->outbuf, s) != NULL;
}

/* ------------------------------------------------------------------ */
/* reading the state back */

static struct db *
fx_db(struct fx *fx)
{
	struct db *db = NULL;

	if (db_open(&db, fx->cfg.state_dir, &fx->err) != 0)
		fail_msg("db_open: %s", fx->err.msg);
	return db;
}

static int64_t
fx_batch_id(struct fx *fx, struct db *db)
{
	struct batch_row br;
	int found = 0;

	assert_int_equal(db_batch_latest(db, &br, &found, &fx->err), 0);
	assert_int_equal(found, 1);
	return br.id;
}

/* The rows of story id in the latest batch (attempt_rows_free them). */
static struct attempt_row *
fx_rows(struct fx *fx, const char *id, size_t *n)
{
	struct db *db = fx_db(fx);
	struct attempt_row *rows = NULL;

	assert_int_equal(db_attempts_for_story(
			     db, &rows, n, fx_batch_id(fx, db), id, &fx->err),
	    0);
	db_close(db);
	return rows;
}

static struct story_row
fx_story_row(struct fx *fx, const char *id)
{
	struct db *db = fx_db(fx);
	struct story_row st;
	int found = 0;

	assert_int_equal(
	    db_story_get(db, &st, &found, fx_batch_id(fx, db), id, &fx->err),
	    0);
	assert_int_equal(found, 1);
	db_close(db);
	return st;
}

static void
assert_prefix(const char *s, const char *prefix)
{
	if (strncmp(s, prefix, strlen(prefix)) != 0)
		fail_msg("\"%s\" does not start with \"%s\"", s, prefix);
}

/* No attempt of any batch is left running. */
static void
assert_none_running(struct fx *fx)
{
	struct db *db = fx_db(fx);
	struct attempt_row *rows = NULL;
	size_t n = 0;

	assert_int_equal(db_attempts_running(db, &rows, &n, &fx->err), 0);
	attempt_rows_free(rows, n);
	db_close(db);
	assert_int_equal(n, 0);
}

/* stories/<id>.json on the state branch lists the attempts with these
 * outcomes (space-separated, in order). */
static void
assert_branch_outcomes(struct fx *fx, const char *id, const char *want)
{
	struct gitstate *gs = NULL;
	char path[256], got[256] = "";
	char *text = NULL;
	size_t len = 0, i;
	int found = 0;
	json_t *j, *a;
	json_error_t jerr;

	snprintf(path, sizeof(path), "stories/%s.json", id);
	assert_int_equal(
	    gitstate_open(&gs, fx->dir, "storyctl/state", &fx->err), 0);
	assert_int_equal(
	    gitstate_read(gs, &text, &len, &found, path, &fx->err), 0);
	gitstate_free(gs);
	assert_int_equal(found, 1);
	j = json_loadb(text, len, 0, &jerr);
	free(text);
	if (j == NULL)
		fail_msg("%s: %s", path, jerr.text);
	a = json_object_get(j, "attempts");
	for (i = 0; json_is_array(a) && i < json_array_size(a); i++)
		snprintf(got + strlen(got), sizeof(got) - strlen(got), "%s%s",
		    i > 0 ? " " : "",
		    json_string_value(
			json_object_get(json_array_get(a, i), "outcome")));
	json_decref(j);
	assert_string_equal(got, want);
}

/* ------------------------------------------------------------------ */
/* tests */

/* The worked example of docs/retry-strategy.md: 5/9, crash at 4, 5, 5 ->
 * deferred by D8. */
static void
test_worked_example(void **state)
{
	static const struct step steps[] = {
	    {.done = 5, .dur_ms = 60000, .exit_code = 0},
	    {.done = 4, .dur_ms = 30000, .exit_code = 1},
	    {.done = 5, .dur_ms = 60000, .exit_code = 0},
	    {.done = 5, .dur_ms = 60000, .exit_code = 0},
	};
	static const char *const roles[] = {
	    "primary", "fallback", "primary", "fallback"};
	static const char *const rules[] = {"D11", "D11", "D11", "D8"};
	static const enum outcome outcomes[] = {OUTCOME_INCOMPLETE,
	    OUTCOME_CRASH, OUTCOME_INCOMPLETE, OUTCOME_INCOMPLETE};
	struct fx *fx = *state;
	struct attempt_row *rows;
	struct story_row st;
	size_t n = 0, i;

	fx_story(fx, "s1.md", 9, 0);
	fx_config(fx, "[\"s1.md\"]", BOTH, FIXED);
	fx_script(fx, steps, 4);
	fx_run(fx);

	for (i = 0; i < 4; i++) {
		assert_string_equal(fx->calls[i].role, roles[i]);
		assert_int_equal(fx->calls[i].attempt, (int)i + 1);
		assert_string_equal(fx->calls[i].story, "s1.md");
	}
	assert_int_equal(fx->res.counts[STATUS_DEFERRED], 1);
	assert_int_equal(fx->res.counts[STATUS_PENDING], 0);
	assert_false(fx->res.stopped);
	assert_false(fx->res.interrupted);
	rows = fx_rows(fx, "s1", &n);
	assert_int_equal(n, 4);
	for (i = 0; i < n; i++) {
		assert_int_equal(rows[i].attempt, (int)i + 1);
		assert_int_equal(rows[i].seq, (int)i + 1);
		assert_true(rows[i].counted);
		assert_int_equal(rows[i].outcome, outcomes[i]);
		assert_string_equal(role_name(rows[i].role), roles[i]);
		assert_prefix(rows[i].reason, rules[i]);
		assert_string_equal(rows[i].agent, i % 2 ? "fall" : "prim");
	}
	assert_int_equal(rows[1].counts.tasks_completed, 4);
	assert_int_equal(rows[3].counts.tasks_completed, 5);
	assert_int_equal(rows[3].counts.tasks_total, 9);
	assert_int_equal(rows[3].decision, DECISION_DEFER);
	assert_int_equal(rows[2].decision, DECISION_RETRY);
	attempt_rows_free(rows, n);
	st = fx_story_row(fx, "s1");
	assert_int_equal(st.status, STATUS_DEFERRED);
	assert_int_equal(st.attempts, 4);
	assert_int_equal(st.counts.tasks_completed, 5);
	assert_string_equal(st.last_agent, "fall");
	/* the exact deferred line (docs/retry-strategy.md) */
	assert_true(out_has(fx,
	    "Story s1 deferred - dev-story hit complexity "
	    "limit at 5/9\n"));
	assert_branch_outcomes(fx, "s1",
	    "incomplete crash incomplete "
	    "incomplete");
	assert_none_running(fx);
}

/* A network failure sleeps network_sleep_s after the attempt's end,
 * without jitter and without really sleeping. */
static void
test_network_sleep(void **state)
{
	static const struct step steps[] = {
	    {.done = 0,
		.dur_ms = 5000,
		.exit_code = 1,
		.tail = "Error: getaddrinfo ENOTFOUND api.anthropic.com\n"},
	    {.done = 3, .dur_ms = 5000, .exit_code = 0},
	};
	struct fx *fx = *state;
	struct attempt_row *rows;
	struct timespec a, b;
	int64_t wall_ms;
	size_t n = 0;

	fx_story(fx, "s1.md", 3, 0);
	fx_config(fx, "[\"s1.md\"]", BOTH,
	    "{\"network_sleep_s\": 60, \"backoff\": {\"jitter\": 0.5}}");
	fx->rnd = 0.5;
	fx_script(fx, steps, 2);
	clock_gettime(CLOCK_MONOTONIC, &a);
	fx_run(fx);
	clock_gettime(CLOCK_MONOTONIC, &b);
	wall_ms =
	    (b.tv_sec - a.tv_sec) * 1000 + (b.tv_nsec - a.tv_nsec) / 1000000;

	assert_int_equal(fx->nsleeps, 1);
	assert_int_equal(fx->sleeps[0], T0 + 5000 + 60000);
	assert_int_equal(fx->sleep_from[0], T0 + 5000);
	assert_int_equal(fx->calls[1].start_ms, T0 + 5000 + 60000);
	/* a real 60 s sleep would show; anything under 30 s proves none */
	assert_true(wall_ms < 30000);
	rows = fx_rows(fx, "s1", &n);
	assert_int_equal(n, 2);
	assert_int_equal(rows[0].outcome, OUTCOME_NETWORK);
	assert_int_equal(rows[0].error_code, ERRC_NETWORK_ERROR);
	assert_int_equal(rows[0].delay_ms, 60000);
	assert_non_null(strstr(rows[0].error_message, "ENOTFOUND"));
	assert_int_equal(rows[1].outcome, OUTCOME_SUCCESS);
	assert_int_equal(rows[1].decision, DECISION_DONE);
	attempt_rows_free(rows, n);
	assert_int_equal(fx->res.counts[STATUS_DONE], 1);
	assert_true(out_has(fx, "s1: waiting 1m00s before attempt 2"));
}

/* Backoff delays between crashes, jitter drawn from the clock seam. */
static void
test_backoff_delays(void **state)
{
	static const struct step steps[] = {
	    {.done = 0, .dur_ms = 1000, .exit_code = 1},
	    {.done = 0, .dur_ms = 1000, .exit_code = 1},
	    {.done = 2, .dur_ms = 1000, .exit_code = 0},
	};
	static const struct {
		const char *policy;
		double u;
		int64_t d1, d2;
	} cases[] = {
	    {FIXED, 0.0, 1000, 1000},
	    {"{\"backoff\": {\"strategy\": \"fixed\", \"base_delay_ms\": "
	     "1000, \"jitter\": 0.5}}",
		1.0, 1500, 1500},
	    {"{\"backoff\": {\"strategy\": \"exponential\", "
	     "\"base_delay_ms\": 1000, \"jitter\": 0}}",
		0.7, 1000, 2000},
	    {"{\"backoff\": {\"strategy\": \"linear\", \"base_delay_ms\": "
	     "1000, \"jitter\": 0.5}}",
		0.5, 1250, 2500},
	    {"{\"backoff\": {\"strategy\": \"none\"}}", 0.5, 0, 0},
	};
	struct fx *fx = *state;
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		if (i > 0) {
			fx_teardown((void **)&fx);
			fx_setup((void **)&fx);
			*state = fx;
		}
		fx_story(fx, "s1.md", 2, 0);
		fx_config(fx, "[\"s1.md\"]", BOTH, cases[i].policy);
		fx->rnd = cases[i].u;
		fx_script(fx, steps, 3);
		fx_run(fx);
		if (cases[i].d1 == 0) {
			assert_int_equal(fx->nsleeps, 0);
			assert_int_equal(fx->calls[1].start_ms, T0 + 1000);
			assert_int_equal(fx->calls[2].start_ms, T0 + 2000);
		} else {
			assert_int_equal(fx->nsleeps, 2);
			assert_int_equal(
			    fx->sleeps[0], T0 + 1000 + cases[i].d1);
			assert_int_equal(fx->sleeps[1],
			    T0 + 2000 + cases[i].d1 + cases[i].d2);
			assert_int_equal(fx->calls[2].start_ms, fx->sleeps[1]);
		}
		assert_int_equal(fx->res.counts[STATUS_DONE], 1);
	}
}

/* D9: no plateau after four attempts -> the fifth runs with the timeout
 * multiplied by extended_timeout_factor. */
static void
test_d9_extended_timeout(void **state)
{
	static const struct step steps[] = {
	    {.done = 3, .dur_ms = 1000, .exit_code = 0},
	    {.done = 1, .dur_ms = 1000, .exit_code = 0},
	    {.done = 2, .dur_ms = 1000, .exit_code = 0},
	    {.done = 4, .dur_ms = 1000, .exit_code = 0},
	    {.done = 9, .dur_ms = 1000, .exit_code = 0},
	};
	struct fx *fx = *state;
	struct attempt_row *rows;
	size_t n = 0, i;

	fx_story(fx, "s1.md", 9, 0);
	fx_config(fx, "[\"s1.md\"]", BOTH,
	    "{\"extended_timeout_factor\": 2.5, \"backoff\": {\"strategy\": "
	    "\"none\"}}");
	fx_script(fx, steps, 5);
	fx_run(fx);

	for (i = 0; i < 4; i++)
		assert_int_equal(fx->calls[i].timeout_ms, 100 * 1000);
	assert_int_equal(fx->calls[4].timeout_ms, 250 * 1000);
	assert_string_equal(fx->calls[4].role, "primary");
	rows = fx_rows(fx, "s1", &n);
	assert_int_equal(n, 5);
	assert_prefix(rows[3].reason, "D9");
	assert_true(
	    rows[3].timeout_factor > 2.49 && rows[3].timeout_factor < 2.51);
	assert_true(
	    rows[2].timeout_factor > 0.99 && rows[2].timeout_factor < 1.01);
	assert_int_equal(rows[4].outcome, OUTCOME_SUCCESS);
	attempt_rows_free(rows, n);
	assert_int_equal(fx->res.counts[STATUS_DONE], 1);
}

/* D10: attempt 2 beat attempt 1 -> attempt 3 polls half as often, which
 * shows both in the poll interval the runner gets and in when on_poll
 * re-reads the story file. */
static void
test_d10_poll_doubled(void **state)
{
	static const struct step steps[] = {
	    {.done = 1,
		.dur_ms = 1000,
		.exit_code = 0,
		.poll = true,
		.poll_done = 1},
	    {.done = 3, .dur_ms = 1000, .exit_code = 0},
	    {.done = 6,
		.dur_ms = 1000,
		.exit_code = 0,
		.poll = true,
		.poll_done = 5},
	};
	struct fx *fx = *state;
	struct attempt_row *rows;
	size_t n = 0;

	fx_story(fx, "s1.md", 6, 0);
	fx_config(fx, "[\"s1.md\"]", BOTH,
	    "{\"poll_interval_s\": 0.2, "
	    "\"backoff\": {\"strategy\": \"none\"}}");
	fx_script(fx, steps, 3);
	fx_run(fx);

	assert_int_equal(fx->calls[0].poll_ms, 200);
	assert_int_equal(fx->calls[1].poll_ms, 200);
	assert_int_equal(fx->calls[2].poll_ms, 400);
	/* 200 ms: the file is re-read from the second poll on */
	assert_int_equal(fx->calls[0].tokens[0], 0);
	assert_int_equal(fx->calls[0].tokens[1], 1);
	assert_int_equal(fx->calls[0].tokens[3], 1);
	/* 400 ms: only the fourth poll re-reads it */
	assert_int_equal(fx->calls[2].tokens[0], 3);
	assert_int_equal(fx->calls[2].tokens[2], 3);
	assert_int_equal(fx->calls[2].tokens[3], 5);
	rows = fx_rows(fx, "s1", &n);
	assert_int_equal(n, 3);
	assert_prefix(rows[1].reason, "D10");
	assert_true(rows[1].poll_factor > 1.99 && rows[1].poll_factor < 2.01);
	assert_true(rows[0].poll_factor > 0.99 && rows[0].poll_factor < 1.01);
	attempt_rows_free(rows, n);
}

/* The default poll interval (30 s) is capped at 1 s for the runner; the
 * kill grace comes from the policy without the override; stall and env
 * come from the agent. */
static void
test_runner_opts_from_config(void **state)
{
	static const struct step steps[] = {
	    {.done = 2, .dur_ms = 1000, .exit_code = 0},
	};
	struct fx *fx = *state;

	fx_story(fx, "s1.md", 2, 0);
	fx_config(fx, "[\"s1.md\"]",
	    "{\"primary\": {\"command\": " FAKE_CMD
	    ", \"timeout_s\": 7, \"stall_timeout_s\": 5, \"env\": "
	    "{\"FOO\": \"bar\"}}}",
	    "{\"kill_grace_s\": 3}");
	fx->o.kill_grace_ms_override = -1;
	fx_script(fx, steps, 1);
	fx_run(fx);

	assert_int_equal(fx->calls[0].poll_ms, 1000);
	assert_int_equal(fx->calls[0].grace_ms, 3000);
	assert_int_equal(fx->calls[0].stall_ms, 5000);
	assert_int_equal(fx->calls[0].timeout_ms, 7000);
	assert_true(fx->calls[0].env_foo);
	assert_int_equal(fx->res.counts[STATUS_DONE], 1);
}

/* D3: a usage limit waits until the reset epoch, then the same attempt
 * number runs again; the limited attempt is recorded but not counted. */
static void
test_usage_limit_wait(void **state)
{
	static const struct step steps[] = {
	    {.done = 1,
		.dur_ms = 2000,
		.exit_code = 1,
		.tail = "Claude AI usage limit reached|%lld\n",
		.reset_in_s = 3600},
	    {.done = 4, .dur_ms = 2000, .exit_code = 0},
	};
	struct fx *fx = *state;
	struct attempt_row *rows;
	struct story_row st;
	size_t n = 0;

	fx_story(fx, "s1.md", 4, 0);
	fx_config(fx, "[\"s1.md\"]", BOTH, "{}");
	fx->rnd = 0.0;
	fx_script(fx, steps, 2);
	fx_run(fx);

	assert_int_equal(fx->epoch_s, (T0 + 2000) / 1000 + 3600);
	assert_int_equal(fx->nsleeps, 1);
	assert_int_equal(fx->sleeps[0], fx->epoch_s * 1000);
	assert_int_equal(fx->calls[1].start_ms, fx->epoch_s * 1000);
	assert_int_equal(fx->calls[0].attempt, 1);
	assert_int_equal(fx->calls[1].attempt, 1);
	assert_string_equal(fx->calls[1].role, "primary");
	rows = fx_rows(fx, "s1", &n);
	assert_int_equal(n, 2);
	assert_int_equal(rows[0].outcome, OUTCOME_USAGE_LIMIT);
	assert_false(rows[0].counted);
	assert_int_equal(rows[0].decision, DECISION_WAIT);
	assert_prefix(rows[0].reason, "D3");
	assert_int_equal(rows[0].delay_ms, 3600 * 1000 - 0);
	assert_int_equal(rows[1].attempt, 1);
	assert_true(rows[1].counted);
	assert_int_equal(rows[1].decision, DECISION_DONE);
	attempt_rows_free(rows, n);
	st = fx_story_row(fx, "s1");
	assert_int_equal(st.status, STATUS_DONE);
	assert_int_equal(st.attempts, 1);
}

/*
 * D9 then a usage limit on attempt 5: the rerun of attempt 5 is still
 * "the next attempt" of D9 and must keep its extended timeout (and a
 * D10 rerun its doubled poll interval).
 */
static void
test_d9_survives_usage_limit_rerun(void **state)
{
	static const struct step steps[] = {
	    {.done = 3, .dur_ms = 1000, .exit_code = 0},
	    {.done = 1, .dur_ms = 1000, .exit_code = 0},
	    {.done = 2, .dur_ms = 1000, .exit_code = 0},
	    {.done = 4, .dur_ms = 1000, .exit_code = 0},
	    {.done = KEEP,
		.dur_ms = 1000,
		.exit_code = 1,
		.tail = "Claude AI usage limit reached|%lld\n",
		.reset_in_s = 60},
	    {.done = 9, .dur_ms = 1000, .exit_code = 0},
	};
	struct fx *fx = *state;

	fx_story(fx, "s1.md", 9, 0);
	fx_config(
	    fx, "[\"s1.md\"]", BOTH, "{\"backoff\": {\"strategy\": \"none\"}}");
	fx_script(fx, steps, 6);
	fx_run(fx);

	assert_int_equal(fx->calls[4].attempt, 5);
	assert_int_equal(fx->calls[4].timeout_ms, 200 * 1000);
	assert_int_equal(fx->calls[5].attempt, 5);
	/* the same attempt 5, rerun after the wait */
	assert_int_equal(fx->calls[5].timeout_ms, 200 * 1000);
}

/* D2: the primary's permanent failure disables it for the rest of the
 * run: the story goes on with the fallback, and so does the next one. */
static void
test_permanent_disables_primary(void **state)
{
	static const struct step steps[] = {
	    {.done = 0,
		.dur_ms = 1000,
		.exit_code = 1,
		.tail = "Invalid API key \xc2\xb7 Please run /login\n"},
	    {.done = 2, .dur_ms = 1000, .exit_code = 0},
	    {.done = 1, .dur_ms = 1000, .exit_code = 1},
	    {.done = 3, .dur_ms = 1000, .exit_code = 0},
	};
	struct fx *fx = *state;
	struct attempt_row *rows;
	size_t n = 0;

	fx_story(fx, "a.md", 2, 0);
	fx_story(fx, "b.md", 3, 0);
	fx_config(fx, "[\"a.md\", \"b.md\"]", BOTH, FIXED);
	fx_script(fx, steps, 4);
	fx_run(fx);

	assert_string_equal(fx->calls[0].role, "primary");
	assert_string_equal(fx->calls[0].story, "a.md");
	assert_string_equal(fx->calls[1].role, "fallback");
	assert_int_equal(fx->calls[1].attempt, 2);
	assert_string_equal(fx->calls[2].story, "b.md");
	assert_string_equal(fx->calls[2].role, "fallback");
	assert_int_equal(fx->calls[2].attempt, 1);
	assert_string_equal(fx->calls[3].role, "fallback");
	assert_int_equal(fx->calls[3].attempt, 2);
	rows = fx_rows(fx, "a", &n);
	assert_int_equal(n, 2);
	assert_int_equal(rows[0].outcome, OUTCOME_PERMANENT);
	assert_int_equal(rows[0].error_code, ERRC_AUTH);
	assert_non_null(strstr(rows[0].reason, "D2"));
	attempt_rows_free(rows, n);
	rows = fx_rows(fx, "b", &n);
	assert_int_equal(n, 2);
	assert_int_equal(rows[0].role, ROLE_FALLBACK);
	assert_int_equal(rows[1].role, ROLE_FALLBACK);
	attempt_rows_free(rows, n);
	assert_int_equal(fx->res.counts[STATUS_DONE], 2);
	assert_false(fx->res.stopped);
	assert_true(out_has(fx,
	    "primary agent (prim) disabled for the rest "
	    "of this run"));
}

/* D2 with no agent left: escalate, the batch stops, the rest stays
 * pending. */
static void
test_both_permanent_stop(void **state)
{
	static const struct step steps[] = {
	    {.done = 0,
		.dur_ms = 1000,
		.exit_code = 1,
		.tail = "Invalid API key \xc2\xb7 Please run /login\n"},
	    {.done = 0,
		.dur_ms = 1000,
		.exit_code = 1,
		.tail = "Error: invalid_api_key: Incorrect API key "
			"provided\n"},
	};
	struct fx *fx = *state;
	struct story_row st;
	struct db *db;
	struct batch_row br;
	int found = 0;

	fx_story(fx, "a.md", 2, 0);
	fx_story(fx, "b.md", 2, 0);
	fx_story(fx, "c.md", 2, 0);
	fx_config(fx, "[\"a.md\", \"b.md\", \"c.md\"]", BOTH, FIXED);
	fx_script(fx, steps, 2);
	fx_run(fx);

	assert_true(fx->res.stopped);
	assert_false(fx->res.interrupted);
	/* stopped by the decision itself, which says why */
	assert_prefix(fx->res.stop_reason, "D2");
	assert_non_null(strstr(fx->res.stop_reason, "no enabled agent"));
	assert_int_equal(fx->ncalls, 2);
	assert_int_equal(fx->res.counts[STATUS_ESCALATED], 1);
	assert_int_equal(fx->res.counts[STATUS_PENDING], 2);
	assert_string_equal(fx->calls[1].role, "fallback");
	st = fx_story_row(fx, "a");
	assert_int_equal(st.status, STATUS_ESCALATED);
	assert_prefix(st.reason, "D2");
	st = fx_story_row(fx, "b");
	assert_int_equal(st.status, STATUS_PENDING);
	assert_int_equal(st.attempts, 0);
	st = fx_story_row(fx, "c");
	assert_int_equal(st.status, STATUS_PENDING);
	db = fx_db(fx);
	assert_int_equal(db_batch_current(db, &br, &found, &fx->err), 0);
	assert_int_equal(found, 1);
	assert_string_equal(br.status, "stopped");
	db_close(db);
}

/* No fallback configured: every attempt is the primary's. */
static void
test_no_fallback(void **state)
{
	static const struct step steps[] = {
	    {.done = 1, .dur_ms = 1000, .exit_code = 1},
	    {.done = 2, .dur_ms = 1000, .exit_code = 0},
	    {.done = 1, .dur_ms = 1000, .exit_code = 0},
	    {.done = 5, .dur_ms = 1000, .exit_code = 0},
	};
	struct fx *fx = *state;
	struct attempt_row *rows;
	size_t n = 0, i;

	fx_story(fx, "s1.md", 5, 0);
	fx_config(fx, "[\"s1.md\"]", ONLY_PRIMARY, FIXED);
	assert_false(fx->cfg.agents[ROLE_FALLBACK].configured);
	fx_script(fx, steps, 4);
	fx_run(fx);

	for (i = 0; i < 4; i++) {
		assert_string_equal(fx->calls[i].role, "primary");
		assert_int_equal(fx->calls[i].attempt, (int)i + 1);
	}
	rows = fx_rows(fx, "s1", &n);
	assert_int_equal(n, 4);
	for (i = 0; i < n; i++)
		assert_int_equal(rows[i].role, ROLE_PRIMARY);
	attempt_rows_free(rows, n);
	assert_int_equal(fx->res.counts[STATUS_DONE], 1);
}

/* With one agent, three counted attempts at the same T confirm the
 * plateau (D8 at k >= 4). */
static void
test_no_fallback_plateau(void **state)
{
	static const struct step steps[] = {
	    {.done = 2, .dur_ms = 1000, .exit_code = 0},
	    {.done = 3, .dur_ms = 1000, .exit_code = 0},
	    {.done = 3, .dur_ms = 1000, .exit_code = 0},
	    {.done = 3, .dur_ms = 1000, .exit_code = 0},
	};
	struct fx *fx = *state;
	struct story_row st;

	fx_story(fx, "s1.md", 7, 0);
	fx_config(fx, "[\"s1.md\"]", ONLY_PRIMARY, FIXED);
	fx_script(fx, steps, 4);
	fx_run(fx);

	st = fx_story_row(fx, "s1");
	assert_int_equal(st.status, STATUS_DEFERRED);
	assert_prefix(st.reason, "D8");
	assert_non_null(strstr(st.reason, "a2, a3, a4"));
}

/* SIGINT during an attempt: recorded as interrupted (not counted, no
 * decision); the next run reruns the same attempt number. */
static void
test_interrupt_and_resume(void **state)
{
	static const struct step steps[] = {
	    {.done = 1,
		.dur_ms = 3000,
		.exit_code = -1,
		.sig = SIGTERM,
		.interrupted = true},
	};
	static const struct step more[] = {
	    {.done = 4, .dur_ms = 3000, .exit_code = 0},
	    {.done = 1, .dur_ms = 1000, .exit_code = 0},
	};
	struct fx *fx = *state;
	struct attempt_row *rows;
	struct story_row st;
	size_t n = 0, i, j;

	fx_story(fx, "s1.md", 4, 0);
	fx_story(fx, "s2.md", 1, 0);
	fx_config(fx, "[\"s1.md\", \"s2.md\"]", BOTH, FIXED);
	fx_script(fx, steps, 1);
	fx_run(fx);

	assert_true(fx->res.interrupted);
	assert_false(fx->res.stopped);
	assert_int_equal(fx->res.counts[STATUS_PENDING], 2);
	rows = fx_rows(fx, "s1", &n);
	assert_int_equal(n, 1);
	assert_int_equal(rows[0].outcome, OUTCOME_INTERRUPTED);
	assert_false(rows[0].counted);
	assert_int_equal(rows[0].decision, DECISION_NONE);
	assert_int_equal(rows[0].signal, SIGTERM);
	assert_prefix(rows[0].reason, "D4");
	attempt_rows_free(rows, n);
	st = fx_story_row(fx, "s1");
	assert_int_equal(st.status, STATUS_PENDING);
	assert_int_equal(st.attempts, 0);
	/* the interrupted attempt is on the state branch too */
	assert_branch_outcomes(fx, "s1", "interrupted");

	/* resume: stop cleared, the same batch goes on */
	fx->stop = 0;
	fx_script(fx, more, 2);
	fx_run(fx);
	assert_false(fx->res.interrupted);
	assert_int_equal(fx->calls[0].attempt, 1);
	assert_string_equal(fx->calls[0].role, "primary");
	assert_string_equal(fx->calls[1].story, "s2.md");
	assert_int_equal(fx->res.counts[STATUS_DONE], 2);
	rows = fx_rows(fx, "s1", &n);
	assert_int_equal(n, 2);
	assert_int_equal(rows[1].attempt, 1);
	assert_true(rows[1].counted);
	for (i = 0; i < n; i++)
		for (j = i + 1; j < n; j++)
			assert_false(rows[i].counted && rows[j].counted &&
			    rows[i].attempt == rows[j].attempt);
	attempt_rows_free(rows, n);
	st = fx_story_row(fx, "s1");
	assert_int_equal(st.attempts, 1);
	assert_none_running(fx);
}

/* Stop raised while waiting before a retry: no further agent runs. */
static void
test_sleep_interrupted(void **state)
{
	static const struct step steps[] = {
	    {.done = 0, .dur_ms = 1000, .exit_code = 1},
	};
	struct fx *fx = *state;
	struct story_row st;

	fx_story(fx, "s1.md", 2, 0);
	fx_story(fx, "s2.md", 2, 0);
	fx_config(fx, "[\"s1.md\", \"s2.md\"]", BOTH, FIXED);
	fx->sleep_ret = 1;
	fx_script(fx, steps, 1);
	fx_run(fx);

	assert_true(fx->res.interrupted);
	assert_int_equal(fx->ncalls, 1);
	assert_int_equal(fx->nsleeps, 1);
	assert_int_equal(fx->sleeps[0], T0 + 1000 + 1000);
	st = fx_story_row(fx, "s1");
	assert_int_equal(st.status, STATUS_PENDING);
	assert_int_equal(st.attempts, 1);
	st = fx_story_row(fx, "s2");
	assert_int_equal(st.status, STATUS_PENDING);
}

/* A story without tasks is invalid and never run; the batch goes on. */
static void
test_invalid_story(void **state)
{
	static const struct step steps[] = {
	    {.done = 2, .dur_ms = 1000, .exit_code = 0},
	};
	struct fx *fx = *state;
	char path[PATH_MAX];
	struct story_row st;
	size_t n = 0;
	struct attempt_row *rows;

	path_in(path, fx->dir, "bad.md");
	file_put(path,
	    "# Story\n\nNo checkboxes at all.\n\n## Tasks\n\n"
	    "```\n- [ ] in a code block: no task on GitHub\n```\n");
	fx_story(fx, "good.md", 2, 0);
	fx_config(fx, "[\"bad.md\", \"good.md\"]", BOTH, FIXED);
	fx_script(fx, steps, 1);
	fx_run(fx);

	assert_string_equal(fx->calls[0].story, "good.md");
	st = fx_story_row(fx, "bad");
	assert_int_equal(st.status, STATUS_INVALID);
	assert_non_null(strstr(st.reason, "no tasks"));
	rows = fx_rows(fx, "bad", &n);
	assert_int_equal(n, 0);
	attempt_rows_free(rows, n);
	st = fx_story_row(fx, "good");
	assert_int_equal(st.status, STATUS_DONE);
	assert_int_equal(fx->res.counts[STATUS_INVALID], 1);
	assert_int_equal(fx->res.counts[STATUS_DONE], 1);
}

/* Every box already checked: done without running anything. */
static void
test_already_done(void **state)
{
	struct fx *fx = *state;
	struct story_row st;

	fx_story(fx, "s1.md", 3, 3);
	fx_config(fx, "[\"s1.md\"]", BOTH, FIXED);
	fx_script(fx, NULL, 0);
	fx_run(fx);

	assert_int_equal(fx->ncalls, 0);
	st = fx_story_row(fx, "s1");
	assert_int_equal(st.status, STATUS_DONE);
	assert_int_equal(st.attempts, 0);
	assert_int_equal(st.counts.tasks_completed, 3);
	assert_non_null(strstr(st.reason, "already checked"));
	assert_int_equal(fx->res.counts[STATUS_DONE], 1);
}

/* A batch whose story s1 (5 tasks) has attempt 1 left `running` by a
 * dead controller (pid cpid) with a heartbeat at t + 5000; with
 * earlier_pid > 0, an earlier row of attempt 1 was already cut short
 * by the death of controller earlier_pid.  The database is closed. */
static int64_t
fx_left_running(struct fx *fx, int64_t t, int64_t cpid, int64_t earlier_pid)
{
	struct db *db;
	struct story_row st;
	struct attempt_row r;
	struct task_counts hb = {1, 5, 0, 0};
	int64_t bid = 0;

	fx_story(fx, "s1.md", 5, 0);
	fx_config(fx, "[\"s1.md\"]", BOTH, "{}");
	db = fx_db(fx);
	assert_int_equal(db_batch_create(db, &bid, t, &fx->err), 0);
	memset(&st, 0, sizeof(st));
	st.batch_id = bid;
	snprintf(st.id, sizeof(st.id), "s1");
	snprintf(st.file, sizeof(st.file), "s1.md");
	st.status = STATUS_RUNNING;
	st.counts.tasks_total = 5;
	st.updated_ms = t;
	assert_int_equal(db_story_add(db, &st, &fx->err), 0);
	memset(&r, 0, sizeof(r));
	r.batch_id = bid;
	snprintf(r.story_id, sizeof(r.story_id), "s1");
	r.attempt = 1;
	r.counted = true;
	r.role = ROLE_PRIMARY;
	snprintf(r.agent, sizeof(r.agent), "prim");
	r.started_ms = t;
	r.exit_code = -1;
	r.counts.tasks_total = 5;
	r.timeout_factor = 1;
	r.poll_factor = 1;
	if (earlier_pid > 0) {
		struct attempt_row e = r;

		e.controller_pid = earlier_pid;
		assert_int_equal(db_attempt_begin(db, &e, &fx->err), 0);
		e.counted = false;
		e.ended_ms = t + 1000;
		e.outcome = OUTCOME_INTERRUPTED;
		e.error_code = ERRC_INTERRUPTED;
		assert_int_equal(
		    db_attempt_finish(db, &e, &st, NULL, NULL, &fx->err), 0);
		assert_int_equal(db_death_add(db, e.id, earlier_pid, false,
				     t + 2000, &fx->err),
		    0);
		r.started_ms = t + 2000;
	}
	r.controller_pid = cpid;
	assert_int_equal(db_attempt_begin(db, &r, &fx->err), 0);
	assert_int_equal(
	    db_attempt_heartbeat(db, r.id, t + 5000, &hb, &fx->err), 0);
	db_close(db);
	return bid;
}

/* A running row left by a dead controller is closed at its last
 * heartbeat with the progress the file shows now, as `interrupted`, not
 * counted: the controller's death costs the story nothing, and attempt
 * 1 runs again (docs/reliability.md#controller-deaths). */
static void
test_reconcile_dead_controller(void **state)
{
	static const struct step steps[] = {
	    {.done = 5, .dur_ms = 1000, .exit_code = 0},
	};
	struct fx *fx = *state;
	struct story_row st;
	struct attempt_row *rows;
	char path[PATH_MAX];
	int64_t bid, t = T0 - 100000;
	size_t n = 0;

	bid = fx_left_running(fx, t, 4242, 0);
	/* the dead agent got to 2 boxes and one subtask of 2 before it died
	 * (the file, not the heartbeat, is what is recorded) */
	path_in(path, fx->dir, "s1.md");
	file_put(path,
	    "# Story\n\n## Tasks\n\n- [x] task 1\n  - [x] sub 1.1\n"
	    "  - [ ] sub 1.2\n- [x] task 2\n- [ ] task 3\n- [ ] task 4\n"
	    "- [ ] task 5\n");
	fx->rnd = 0.0;
	fx_script(fx, steps, 1);
	fx_run(fx);

	assert_int_equal(fx->res.batch_id, bid);
	assert_int_equal(fx->calls[0].attempt, 1);
	assert_string_equal(fx->calls[0].role, "primary");
	assert_int_equal(fx->nsleeps, 0);
	rows = fx_rows(fx, "s1", &n);
	assert_int_equal(n, 2);
	assert_int_equal(rows[0].outcome, OUTCOME_INTERRUPTED);
	assert_int_equal(rows[0].error_code, ERRC_INTERRUPTED);
	assert_non_null(strstr(rows[0].error_message,
	    "controller (pid 4242) "
	    "died"));
	assert_non_null(strstr(rows[0].error_message, "not counted"));
	assert_int_equal(rows[0].decision, DECISION_NONE);
	assert_false(rows[0].counted);
	assert_int_equal(rows[0].counts.tasks_completed, 2);
	assert_int_equal(rows[0].counts.subtasks_completed, 1);
	assert_int_equal(rows[0].counts.subtasks_total, 2);
	assert_int_equal(rows[0].ended_ms, t + 5000);
	assert_int_equal(rows[1].attempt, 1);
	assert_true(rows[1].counted);
	assert_int_equal(rows[1].outcome, OUTCOME_SUCCESS);
	attempt_rows_free(rows, n);
	assert_none_running(fx);
	assert_true(out_has(fx,
	    "attempt 1 was left running by a dead "
	    "controller"));
	st = fx_story_row(fx, "s1");
	assert_int_equal(st.status, STATUS_DONE);
	assert_int_equal(st.attempts, 1);
}

/* The second death of the same attempt number counts it: a crash that
 * names both controllers, decided like any crash (D11: the fallback
 * runs attempt 2), so a story that kills its controller cannot loop. */
static void
test_reconcile_second_death_counts(void **state)
{
	static const struct step steps[] = {
	    {.done = 5, .dur_ms = 1000, .exit_code = 0},
	};
	struct fx *fx = *state;
	struct story_row st;
	struct attempt_row *rows;
	int64_t t = T0 - 100000;
	size_t n = 0;

	(void)fx_left_running(fx, t, 4242, 4141);
	fx->rnd = 0.0;
	fx_script(fx, steps, 1);
	fx_run(fx);

	assert_int_equal(fx->calls[0].attempt, 2);
	assert_string_equal(fx->calls[0].role, "fallback");
	rows = fx_rows(fx, "s1", &n);
	assert_int_equal(n, 3);
	assert_int_equal(rows[0].outcome, OUTCOME_INTERRUPTED);
	assert_int_equal(rows[1].attempt, 1);
	assert_int_equal(rows[1].outcome, OUTCOME_CRASH);
	assert_int_equal(rows[1].error_code, ERRC_CRASH);
	assert_true(rows[1].counted);
	assert_non_null(strstr(rows[1].error_message, "second time"));
	assert_non_null(
	    strstr(rows[1].error_message, "pid 4141 then pid 4242"));
	assert_int_equal(rows[1].decision, DECISION_RETRY);
	assert_int_equal(rows[2].attempt, 2);
	assert_int_equal(rows[2].outcome, OUTCOME_SUCCESS);
	attempt_rows_free(rows, n);
	st = fx_story_row(fx, "s1");
	assert_int_equal(st.status, STATUS_DONE);
	assert_int_equal(st.attempts, 2);
}

/* The state branch: progress.md and stories/<id>.json after every
 * decision, one commit per decision plus the batch start, HEAD kept. */
static void
test_state_branch(void **state)
{
	static const struct step steps[] = {
	    {.done = 1, .dur_ms = 1000, .exit_code = 1},
	    {.done = 1, .dur_ms = 1000, .exit_code = 0},
	    {.done = 3, .dur_ms = 1000, .exit_code = 0},
	};
	struct fx *fx = *state;
	struct gitstate *gs = NULL;
	char head0[256], head1[256], hex0[41], hex1[41];
	char *text = NULL;
	size_t len = 0, count = 0;
	int found = 0;
	json_t *j, *a;
	json_error_t jerr;

	repo_head(fx->dir, head0, sizeof(head0), hex0);
	fx_story(fx, "s1.md", 3, 0);
	fx_story(fx, "s2.md", 2, 2);
	fx_config(fx, "[\"s1.md\", \"s2.md\"]", BOTH, FIXED);
	fx_script(fx, steps, 3);
	fx_run(fx);

	repo_head(fx->dir, head1, sizeof(head1), hex1);
	assert_string_equal(head0, "refs/heads/main");
	assert_string_equal(head1, head0);
	assert_string_equal(hex1, hex0);

	assert_int_equal(
	    gitstate_open(&gs, fx->dir, "storyctl/state", &fx->err), 0);
	assert_int_equal(
	    gitstate_read(gs, &text, &len, &found, "progress.md", &fx->err), 0);
	assert_int_equal(found, 1);
	assert_non_null(strstr(text, "s1"));
	assert_non_null(strstr(text, "done"));
	free(text);
	text = NULL;
	assert_int_equal(
	    gitstate_read(gs, &text, &len, &found, "stories/s1.json", &fx->err),
	    0);
	assert_int_equal(found, 1);
	j = json_loadb(text, len, 0, &jerr);
	if (j == NULL)
		fail_msg("stories/s1.json: %s", jerr.text);
	a = json_object_get(j, "attempts");
	assert_true(json_is_array(a));
	assert_int_equal(json_array_size(a), 3);
	json_decref(j);
	free(text);
	text = NULL;
	assert_int_equal(
	    gitstate_read(gs, &text, &len, &found, "stories/s2.json", &fx->err),
	    0);
	assert_int_equal(found, 1);
	free(text);
	/* batch started + 3 decisions of s1 + s2 settled as done */
	assert_int_equal(gitstate_count(gs, &count, &fx->err), 0);
	assert_int_equal(count, 1 + 3 + 1);
	assert_int_equal(gitstate_tip_message(gs, &text, &found, &fx->err), 0);
	assert_int_equal(found, 1);
	free(text);
	gitstate_free(gs);
}

/* The commit message of a decision names the story, the attempt, the
 * agent, the outcome and the decision (docs/state-branch.md). */
static void
test_state_commit_message(void **state)
{
	static const struct step steps[] = {
	    {.done = 0, .dur_ms = 1000, .exit_code = 1},
	    {.done = 2, .dur_ms = 1000, .exit_code = 0},
	};
	struct fx *fx = *state;
	struct gitstate *gs = NULL;
	char *msg = NULL;
	int found = 0;

	fx_story(fx, "s1.md", 2, 0);
	fx_config(fx, "[\"s1.md\"]", BOTH, FIXED);
	fx_script(fx, steps, 2);
	fx_run(fx);
	assert_int_equal(
	    gitstate_open(&gs, fx->dir, "storyctl/state", &fx->err), 0);
	assert_int_equal(gitstate_tip_message(gs, &msg, &found, &fx->err), 0);
	assert_int_equal(found, 1);
	assert_prefix(msg, "s1: attempt 2 (fallback fall) success -> done");
	free(msg);
	gitstate_free(gs);
}

/* A requeued story: the history is kept but the strategy starts
 * counting again after it (attempt_base + 1, primary, {attempt} 1). */
static void
test_requeue_restarts_counting(void **state)
{
	static const struct step steps[] = {
	    {.done = 5, .dur_ms = 1000, .exit_code = 0},
	    {.done = 4, .dur_ms = 1000, .exit_code = 1},
	    {.done = 5, .dur_ms = 1000, .exit_code = 0},
	    {.done = 5, .dur_ms = 1000, .exit_code = 0},
	};
	static const struct step again[] = {
	    {.done = 6, .dur_ms = 1000, .exit_code = 0},
	    {.done = 9, .dur_ms = 1000, .exit_code = 0},
	};
	struct fx *fx = *state;
	struct db *db;
	struct story_row st;
	struct attempt_row *rows;
	size_t n = 0;

	fx_story(fx, "s1.md", 9, 0);
	fx_config(fx, "[\"s1.md\"]", BOTH, FIXED);
	fx_script(fx, steps, 4);
	fx_run(fx);
	st = fx_story_row(fx, "s1");
	assert_int_equal(st.status, STATUS_DEFERRED);

	/* what `storyctl requeue s1` does */
	db = fx_db(fx);
	st.seq_base = 4;
	st.attempt_base = st.attempts;
	st.status = STATUS_PENDING;
	assert_int_equal(db_story_update(db, &st, &fx->err), 0);
	assert_int_equal(
	    db_batch_set_status(db, st.batch_id, "stopped", fx->now, &fx->err),
	    0);
	db_close(db);

	fx_script(fx, again, 2);
	fx_run(fx);
	assert_int_equal(fx->calls[0].attempt, 1);
	assert_string_equal(fx->calls[0].role, "primary");
	assert_int_equal(fx->calls[0].timeout_ms, 100 * 1000);
	assert_int_equal(fx->calls[1].attempt, 2);
	assert_string_equal(fx->calls[1].role, "fallback");
	rows = fx_rows(fx, "s1", &n);
	assert_int_equal(n, 6);
	assert_int_equal(rows[4].attempt, 5);
	assert_int_equal(rows[4].role, ROLE_PRIMARY);
	/* rule numbers relative to the requeue: a1 of the new run */
	assert_prefix(rows[4].reason, "D11");
	assert_int_equal(rows[5].attempt, 6);
	attempt_rows_free(rows, n);
	st = fx_story_row(fx, "s1");
	assert_int_equal(st.status, STATUS_DONE);
	assert_int_equal(st.attempts, 6);
	assert_int_equal(fx->res.counts[STATUS_DONE], 1);
}

/* policy.retry_on set: a failure that matches none of it is escalated
 * after the first attempt. */
static void
test_retry_on_escalates(void **state)
{
	static const struct step steps[] = {
	    {.done = 1,
		.dur_ms = 1000,
		.exit_code = 1,
		.tail = "segmentation fault\n"},
	};
	struct fx *fx = *state;
	struct story_row st;

	fx_story(fx, "s1.md", 3, 0);
	fx_config(fx, "[\"s1.md\"]", BOTH, "{\"retry_on\": [\"overloaded\"]}");
	fx_script(fx, steps, 1);
	fx_run(fx);

	st = fx_story_row(fx, "s1");
	assert_int_equal(st.status, STATUS_ESCALATED);
	assert_non_null(strstr(st.reason, "retry_on"));
	assert_int_equal(st.attempts, 1);
	assert_int_equal(fx->res.counts[STATUS_ESCALATED], 1);
	assert_int_equal(fx->nsleeps, 0);
}

/* ... and one that matches is retried. */
static void
test_retry_on_matches(void **state)
{
	static const struct step steps[] = {
	    {.done = 1,
		.dur_ms = 1000,
		.exit_code = 1,
		.tail = "API Error: 529 {\"type\":\"error\",\"error\":"
			"{\"type\":\"overloaded_error\",\"message\":"
			"\"Overloaded\"}}\n"},
	    {.done = 3, .dur_ms = 1000, .exit_code = 0},
	};
	struct fx *fx = *state;

	fx_story(fx, "s1.md", 3, 0);
	fx_config(fx, "[\"s1.md\"]", BOTH,
	    "{\"retry_on\": [\"overloaded\"], "
	    "\"backoff\": {\"strategy\": \"none\"}}");
	fx_script(fx, steps, 2);
	fx_run(fx);
	assert_int_equal(fx->res.counts[STATUS_DONE], 1);
}

/* resume with no unfinished batch does nothing; run with the state dir
 * locked by someone else fails with SC_ETEMPFAIL before any attempt. */
static void
test_resume_nothing_and_locked(void **state)
{
	struct fx *fx = *state;
	struct state_lock *lk = NULL;
	int rc;

	fx_story(fx, "s1.md", 2, 0);
	fx_config(fx, "[\"s1.md\"]", BOTH, FIXED);
	fx->o.mode = BATCH_RESUME;
	fx_script(fx, NULL, 0);
	fx_run(fx);
	assert_true(fx->res.nothing);
	assert_int_equal(fx->ncalls, 0);

	fx->o.mode = BATCH_RUN;
	assert_int_equal(lock_acquire(&lk, fx->cfg.state_dir, &fx->err), 0);
	rc = batch_run(&fx->res, &fx->o, &fx->err);
	lock_release(lk);
	assert_int_equal(rc, SC_ETEMPFAIL);
	assert_int_equal(fx->ncalls, 0);
}

/* On a terminal the wait shows on the live status line. */
static void
test_tty_status_line(void **state)
{
	static const struct step steps[] = {
	    {.done = 0, .dur_ms = 1000, .exit_code = 1},
	    {.done = 2, .dur_ms = 1000, .exit_code = 0},
	};
	struct fx *fx = *state;

	fx_story(fx, "s1.md", 2, 0);
	fx_config(fx, "[\"s1.md\"]", BOTH, FIXED);
	fx->o.tty = true;
	fx_script(fx, steps, 2);
	fx_run(fx);
	assert_true(out_has(fx, "[1 waiting] s1 next attempt 2 in 1s"));
	assert_true(out_has(fx, "\r\033[K"));
	assert_false(out_has(fx, "waiting 1s before attempt"));
}

/* The same bug after an interrupt: D10 doubled the poll interval of
 * attempt 3; attempt 3 is interrupted and rerun on resume, and the rerun
 * must still poll at the doubled interval. */
static void
test_d10_survives_interrupt_rerun(void **state)
{
	static const struct step steps[] = {
	    {.done = 1, .dur_ms = 1000, .exit_code = 0},
	    {.done = 3, .dur_ms = 1000, .exit_code = 0},
	    {.done = 4,
		.dur_ms = 1000,
		.exit_code = -1,
		.sig = SIGINT,
		.interrupted = true},
	};
	static const struct step more[] = {
	    {.done = 6, .dur_ms = 1000, .exit_code = 0},
	};
	struct fx *fx = *state;

	fx_story(fx, "s1.md", 6, 0);
	fx_config(fx, "[\"s1.md\"]", BOTH,
	    "{\"poll_interval_s\": 0.2, "
	    "\"backoff\": {\"strategy\": \"none\"}}");
	fx_script(fx, steps, 3);
	fx_run(fx);
	assert_true(fx->res.interrupted);
	assert_int_equal(fx->calls[2].poll_ms, 400);

	fx->stop = 0;
	fx_script(fx, more, 1);
	fx_run(fx);
	assert_int_equal(fx->calls[0].attempt, 3);
	assert_int_equal(fx->calls[0].poll_ms, 400);
}

/* A usage-limit wait is capped by max_wait_s after the jitter. */
static void
test_usage_limit_capped(void **state)
{
	static const struct step steps[] = {
	    {.done = 0,
		.dur_ms = 1000,
		.exit_code = 1,
		.tail = "Claude AI usage limit reached|%lld\n",
		.reset_in_s = 3600},
	    {.done = 1, .dur_ms = 1000, .exit_code = 0},
	};
	struct fx *fx = *state;

	fx_story(fx, "s1.md", 1, 0);
	fx_config(fx, "[\"s1.md\"]", BOTH, "{\"max_wait_s\": 1800}");
	fx->rnd = 1.0;
	fx_script(fx, steps, 2);
	fx_run(fx);
	assert_int_equal(fx->nsleeps, 1);
	assert_int_equal(fx->sleeps[0], T0 + 1000 + 1800 * 1000);
	assert_int_equal(fx->calls[1].attempt, 1);
}

/* Stopped during a usage-limit wait and restarted ten minutes later: the
 * deadline is wall-clock time, so the new run sleeps until the very same
 * reset, then reruns the same attempt. */
static void
test_usage_wait_survives_restart(void **state)
{
	static const struct step steps[] = {
	    {.done = 0,
		.dur_ms = 1000,
		.exit_code = 1,
		.tail = "Claude AI usage limit reached|%lld\n",
		.reset_in_s = 3600},
	};
	static const struct step more[] = {
	    {.done = 2, .dur_ms = 1000, .exit_code = 0},
	};
	struct fx *fx = *state;
	int64_t reset_ms;

	fx_story(fx, "s1.md", 2, 0);
	fx_config(fx, "[\"s1.md\"]", BOTH, "{}");
	fx->sleep_ret = 1;
	fx_script(fx, steps, 1);
	fx_run(fx);
	reset_ms = fx->epoch_s * 1000;
	assert_true(fx->res.interrupted);
	assert_int_equal(fx->nsleeps, 1);
	assert_int_equal(fx->sleeps[0], reset_ms);

	fx->sleep_ret = 0;
	fx->nsleeps = 0;
	fx->now += 600 * 1000;
	fx_script(fx, more, 1);
	fx_run(fx);
	assert_int_equal(fx->nsleeps, 1);
	assert_int_equal(fx->sleeps[0], reset_ms);
	assert_int_equal(fx->calls[0].start_ms, reset_ms);
	assert_int_equal(fx->calls[0].attempt, 1);
	assert_string_equal(fx->calls[0].role, "primary");
	assert_int_equal(fx->res.counts[STATUS_DONE], 1);
}

/* Issue 12: a usage limit whose reset is past max_wait_s, with a free
 * fallback, waits at most max_wait_s each time and stops the batch (75)
 * after max_limit_waits waits in a row: never a loop that must be
 * killed by hand. */
static void
test_usage_limit_waits_bounded(void **state)
{
	static const struct step steps[] = {
	    {.done = 0,
		.dur_ms = 1000,
		.exit_code = 1,
		.tail = "Claude AI usage limit reached|%lld\n",
		.reset_in_s = 36000},
	    {.done = 0,
		.dur_ms = 1000,
		.exit_code = 1,
		.tail = "Claude AI usage limit reached|%lld\n",
		.reset_in_s = 36000},
	    {.done = 0,
		.dur_ms = 1000,
		.exit_code = 1,
		.tail = "Claude AI usage limit reached|%lld\n",
		.reset_in_s = 36000},
	    {.done = 0,
		.dur_ms = 1000,
		.exit_code = 1,
		.tail = "Claude AI usage limit reached|%lld\n",
		.reset_in_s = 36000},
	    {.done = 0,
		.dur_ms = 1000,
		.exit_code = 1,
		.tail = "Claude AI usage limit reached|%lld\n",
		.reset_in_s = 36000},
	};
	struct fx *fx = *state;
	size_t i;

	fx_story(fx, "s1.md", 1, 0);
	fx_config(fx, "[\"s1.md\"]", BOTH, "{\"max_wait_s\": 60}");
	fx->rnd = 1.0;
	fx_script(fx, steps, 5);
	fx_run(fx);
	assert_true(fx->res.stopped);
	assert_int_equal(fx->nsleeps, 4);
	for (i = 0; i < fx->nsleeps; i++)
		assert_true(fx->sleeps[i] - fx->sleep_from[i] <= 60 * 1000);
	for (i = 0; i < 5; i++)
		assert_int_equal(fx->calls[i].attempt, 1);
	assert_non_null(strstr(fx->res.stop_reason, "max_limit_waits"));
	assert_non_null(strstr(fx->res.stop_reason, "resume after"));
}

/* on_usage_limit "switch": the fallback runs the same attempt number at
 * once (not counted), without waiting for the primary's reset. */
static void
test_usage_limit_switch(void **state)
{
	static const struct step steps[] = {
	    {.done = 0,
		.dur_ms = 1000,
		.exit_code = 1,
		.tail = "Claude AI usage limit reached|%lld\n",
		.reset_in_s = 3600},
	    {.done = 2, .dur_ms = 1000, .exit_code = 0},
	};
	struct fx *fx = *state;

	fx_story(fx, "s1.md", 2, 0);
	fx_config(fx, "[\"s1.md\"]", BOTH, "{\"on_usage_limit\": \"switch\"}");
	fx_script(fx, steps, 2);
	fx_run(fx);
	assert_int_equal(fx->nsleeps, 0);
	assert_string_equal(fx->calls[0].role, "primary");
	assert_string_equal(fx->calls[1].role, "fallback");
	assert_int_equal(fx->calls[1].attempt, 1);
	assert_int_equal(fx->calls[1].start_ms, fx->calls[0].start_ms + 1000);
	assert_int_equal(fx->res.counts[STATUS_DONE], 1);
}

/* Every enabled agent paused past max_wait_s: the batch stops at once
 * (75) and says when to resume; a resume before the reset starts no
 * agent (the pause is read back from the database), one after it runs
 * the same attempt number again. */
static void
test_paused_past_cap_stops_and_resume_honours(void **state)
{
	static const struct step steps[] = {
	    {.done = 0,
		.dur_ms = 1000,
		.exit_code = 1,
		.tail = "Claude AI usage limit reached|%lld\n",
		.reset_in_s = 7200},
	};
	static const struct step more[] = {
	    {.done = 1, .dur_ms = 1000, .exit_code = 0},
	};
	struct fx *fx = *state;
	int64_t reset_ms;

	fx_story(fx, "s1.md", 1, 0);
	fx_config(fx, "[\"s1.md\"]", ONLY_PRIMARY, "{\"max_wait_s\": 1800}");
	fx_script(fx, steps, 1);
	fx_run(fx);
	reset_ms = fx->epoch_s * 1000;
	assert_true(fx->res.stopped);
	assert_int_equal(fx->nsleeps, 0);
	assert_non_null(strstr(fx->res.stop_reason,
	    "every enabled agent is paused past policy.max_wait_s"));

	fx->now += 600 * 1000; /* ten minutes later: still paused */
	fx_script(fx, more, 0);
	fx_run(fx);
	assert_true(fx->res.stopped);
	assert_int_equal(fx->ncalls, 0);
	assert_non_null(strstr(fx->res.stop_reason, "resume after"));

	fx->now = reset_ms + 1000; /* after the reset */
	fx_script(fx, more, 1);
	fx_run(fx);
	assert_false(fx->res.stopped);
	assert_int_equal(fx->calls[0].attempt, 1);
	assert_int_equal(fx->res.counts[STATUS_DONE], 1);
}

/* How the runner's flags end up in the rows. */
static void
test_runner_flags_recorded(void **state)
{
	static const struct step steps[] = {
	    {.done = 1,
		.dur_ms = 1000,
		.exit_code = -1,
		.sig = SIGKILL,
		.timed_out = true},
	    {.done = 1,
		.dur_ms = 1000,
		.exit_code = -1,
		.sig = SIGTERM,
		.stalled = true},
	    {.done = KEEP,
		.dur_ms = 0,
		.exit_code = 127,
		.spawn_errno = ENOENT},
	    {.done = 4, .dur_ms = 1000, .exit_code = 0, .log_errno = ENOSPC},
	};
	struct fx *fx = *state;
	struct attempt_row *rows;
	size_t n = 0;

	fx_story(fx, "s1.md", 4, 0);
	fx_config(
	    fx, "[\"s1.md\"]", BOTH, "{\"backoff\": {\"strategy\": \"none\"}}");
	fx_script(fx, steps, 4);
	fx_run(fx);
	rows = fx_rows(fx, "s1", &n);
	assert_int_equal(n, 4);
	assert_int_equal(rows[0].outcome, OUTCOME_TIMEOUT);
	assert_int_equal(rows[0].error_code, ERRC_TIMEOUT);
	assert_int_equal(rows[0].signal, SIGKILL);
	assert_int_equal(rows[0].exit_code, -1);
	assert_int_equal(rows[1].error_code, ERRC_STALLED);
	assert_int_equal(rows[2].outcome, OUTCOME_CRASH);
	assert_int_equal(rows[2].exit_code, 127);
	assert_string_equal(rows[2].error_message,
	    "cannot run fake: No such file or directory");
	assert_int_equal(rows[3].outcome, OUTCOME_SUCCESS);
	assert_string_equal(rows[3].error_message,
	    "writing the attempt log failed: No space left on device");
	attempt_rows_free(rows, n);
}

/* Secrets in the agent's output never reach the database or the state
 * branch. */
static void
test_secrets_redacted(void **state)
{
	static const struct step steps[] = {
	    {.done = 0,
		.dur_ms = 1000,
		.exit_code = 1,
		.tail = "Invalid API key sk-ant-api03-AbCdEfGh1234567890"
			"IjKlMnOp \xc2\xb7 Please run /login\n"},
	    {.done = 1, .dur_ms = 1000, .exit_code = 0},
	};
	struct fx *fx = *state;
	struct attempt_row *rows;
	struct gitstate *gs = NULL;
	char *text = NULL;
	size_t n = 0;
	int found = 0;

	fx_story(fx, "s1.md", 1, 0);
	fx_config(fx, "[\"s1.md\"]", BOTH, FIXED);
	fx_script(fx, steps, 2);
	fx_run(fx);
	rows = fx_rows(fx, "s1", &n);
	assert_int_equal(n, 2);
	assert_int_equal(rows[0].outcome, OUTCOME_PERMANENT);
	assert_null(strstr(rows[0].error_message, "sk-ant"));
	assert_non_null(strstr(rows[0].error_message, "[REDACTED]"));
	attempt_rows_free(rows, n);
	assert_int_equal(
	    gitstate_open(&gs, fx->dir, "storyctl/state", &fx->err), 0);
	assert_int_equal(
	    gitstate_read(gs, &text, NULL, &found, "stories/s1.json", &fx->err),
	    0);
	assert_int_equal(found, 1);
	assert_null(strstr(text, "AbCdEfGh1234567890"));
	free(text);
	gitstate_free(gs);
}

/* `run STORY`: a new batch holds only the named stories. */
static void
test_only_named_story(void **state)
{
	static const struct step steps[] = {
	    {.done = 2, .dur_ms = 1000, .exit_code = 0},
	};
	static char b_id[] = "b";
	static char *const only[] = {b_id};
	struct fx *fx = *state;
	struct db *db;
	struct story_row st;
	int found = 1;

	fx_story(fx, "a.md", 2, 0);
	fx_story(fx, "b.md", 2, 0);
	fx_config(fx, "[\"a.md\", \"b.md\"]", BOTH, FIXED);
	fx->o.only = only;
	fx->o.nonly = 1;
	fx_script(fx, steps, 1);
	fx_run(fx);
	assert_string_equal(fx->calls[0].story, "b.md");
	assert_int_equal(fx->res.counts[STATUS_DONE], 1);
	assert_int_equal(fx->res.counts[STATUS_PENDING], 0);
	db = fx_db(fx);
	assert_int_equal(
	    db_story_get(db, &st, &found, fx->res.batch_id, "a", &fx->err), 0);
	db_close(db);
	assert_int_equal(found, 0);
}

/* A draft (Status: Draft) is not part of a new batch: one line says why;
 * with include_drafts it runs (docs/stories.md "Drafts"). */
static void
test_drafts_skipped(void **state)
{
	static const struct step steps[] = {
	    {.done = 2, .dur_ms = 1000, .exit_code = 0},
	};
	struct fx *fx = *state;
	struct db *db;
	struct story_row st;
	char path[PATH_MAX];
	int found = 1;

	path_in(path, fx->dir, "1.1.story.md");
	file_put(path,
	    "# Story 1.1\n\n## Status\n\nDraft\n\n## Tasks\n\n"
	    "- [ ] one\n- [ ] two\n");
	fx_story(fx, "b.md", 2, 0);
	fx_config(fx, "[\"1.1.story.md\", \"b.md\"]", BOTH, FIXED);
	fx_script(fx, steps, 1);
	fx_run(fx);
	assert_string_equal(fx->calls[0].story, "b.md");
	assert_true(out_has(fx,
	    "skipping 1.1: Status: Draft (run --include-drafts to run it)\n"));
	assert_int_equal(fx->res.counts[STATUS_DONE], 1);
	db = fx_db(fx);
	assert_int_equal(
	    db_story_get(db, &st, &found, fx->res.batch_id, "1.1", &fx->err),
	    0);
	db_close(db);
	assert_int_equal(found, 0);
}

static void
test_drafts_included(void **state)
{
	static const struct step steps[] = {
	    {.done = 2, .dur_ms = 1000, .exit_code = 0},
	};
	struct fx *fx = *state;
	char path[PATH_MAX];

	path_in(path, fx->dir, "a.md");
	file_put(path,
	    "# Story\n\nStatus: drafted\n\n## Tasks\n\n"
	    "- [ ] one\n- [ ] two\n");
	fx_config(fx, "[\"a.md\"]", BOTH, FIXED);
	fx->cfg.include_drafts = true; /* run --include-drafts */
	fx_script(fx, steps, 1);
	fx_run(fx);
	assert_string_equal(fx->calls[0].story, "a.md");
	assert_false(out_has(fx, "skipping"));
	assert_int_equal(fx->res.counts[STATUS_DONE], 1);
}

/* `run STORY` with an id the config does not have: did you mean. */
static void
test_only_unknown_story(void **state)
{
	static char id[] = "1.1.story";
	static char *const only[] = {id};
	struct fx *fx = *state;

	fx_story(fx, "1.1.story.md", 2, 0);
	fx_config(fx, "[\"1.1.story.md\"]", BOTH, FIXED);
	fx->o.only = only;
	fx->o.nonly = 1;
	assert_int_equal(batch_run(&fx->res, &fx->o, &fx->err), SC_EUSAGE);
	assert_non_null(strstr(fx->err.msg, "no story '1.1.story' in "));
	assert_non_null(strstr(fx->err.msg, "; did you mean 1.1?"));
}

/* Dependencies: a story whose dependency ended other than done is
 * blocked (naming it and how it ended), in position order and before
 * the next ready story starts; a story blocked by a blocked one too. */
static void
test_blocked_dependents(void **state)
{
	static const struct step steps[] = {
	    {.done = 2, .dur_ms = 1000, .exit_code = 0},
	};
	struct fx *fx = *state;
	struct story_row st;
	char path[PATH_MAX];
	const char *c_line, *x_line, *z_line;

	path_in(path, fx->dir, "a.md");
	file_put(path, "# Story\n\nNo tasks.\n");
	fx_story(fx, "c.md", 2, 0);
	fx_story(fx, "x.md", 2, 0);
	fx_story(fx, "z.md", 2, 0);
	fx_config(fx,
	    "[{\"file\": \"c.md\", \"depends_on\": [\"a\"]}, \"a.md\","
	    " {\"file\": \"x.md\", \"depends_on\": [\"c\", \"a\"]},"
	    " \"z.md\"]",
	    BOTH, FIXED);
	fx_script(fx, steps, 1);
	fx_run(fx);

	assert_string_equal(fx->calls[0].story, "z.md");
	assert_int_equal(fx_story_row(fx, "a").status, STATUS_INVALID);
	st = fx_story_row(fx, "c");
	assert_int_equal(st.status, STATUS_BLOCKED);
	assert_string_equal(st.reason, "blocked: dependency a ended invalid");
	st = fx_story_row(fx, "x");
	assert_int_equal(st.status, STATUS_BLOCKED);
	assert_string_equal(st.reason, "blocked: dependency c ended blocked");
	assert_int_equal(fx_story_row(fx, "z").status, STATUS_DONE);
	assert_int_equal(fx->res.counts[STATUS_BLOCKED], 2);
	c_line = strstr(fx->outbuf, "Story c blocked");
	x_line = strstr(fx->outbuf, "Story x blocked");
	z_line = strstr(fx->outbuf, "z: attempt 1");
	assert_non_null(c_line);
	assert_non_null(x_line);
	assert_non_null(z_line);
	assert_true(c_line < x_line && x_line < z_line);
}

/* A batch made by hand: n rows at positions pos[i] (ids d<i> and done,
 * except the named pending ones, whose files exist). */
static void
fx_batch_by_hand(struct fx *fx, const int *pos, size_t n,
    const char *const *pending, const int *pending_at, size_t npending)
{
	struct db *db = fx_db(fx);
	struct story_row st;
	int64_t id = 0;
	size_t i, k;

	assert_int_equal(db_batch_create(db, &id, T0, &fx->err), 0);
	for (i = 0; i < n; i++) {
		memset(&st, 0, sizeof(st));
		st.batch_id = id;
		snprintf(st.id, sizeof(st.id), "d%zu", i);
		snprintf(st.file, sizeof(st.file), "gone/d%zu.md", i);
		st.status = STATUS_DONE;
		st.counts.tasks_completed = st.counts.tasks_total = 1;
		for (k = 0; k < npending; k++)
			if (pending_at[k] == (int)i) {
				snprintf(
				    st.id, sizeof(st.id), "%s", pending[k]);
				snprintf(st.file, sizeof(st.file), "%s.md",
				    pending[k]);
				st.status = STATUS_PENDING;
				st.counts.tasks_completed = 0;
				st.counts.tasks_total = 2;
			}
		st.position = pos[i];
		st.updated_ms = T0;
		assert_int_equal(db_story_add(db, &st, &fx->err), 0);
	}
	db_close(db);
}

/* The loop reads the batch a page at a time, in position order (not the
 * order the rows were added or the config's); a batch whose positions
 * have gaps is read whole, in the same order. */
static void
test_position_order(void **state)
{
	static const struct step steps[] = {
	    {.done = 2, .dur_ms = 1000, .exit_code = 0},
	    {.done = 2, .dur_ms = 1000, .exit_code = 0},
	    {.done = 2, .dur_ms = 1000, .exit_code = 0},
	};
	static const char *const ids[] = {"a", "b", "c"};
	struct fx *fx = *state;
	static int pos[450];
	int at[3];
	size_t i, round;

	fx_story(fx, "a.md", 2, 0);
	fx_story(fx, "b.md", 2, 0);
	fx_story(fx, "c.md", 2, 0);
	for (round = 0; round < 2; round++) {
		fx_config(fx, "[\"a.md\", \"b.md\", \"c.md\"]", BOTH, FIXED);
		if (round == 0) {
			/* 0..449: three pages; a at 300, b at 10, c at 449 */
			for (i = 0; i < 450; i++)
				pos[i] = (int)i;
			at[0] = 300;
			at[1] = 10;
			at[2] = 449;
			fx_batch_by_hand(fx, pos, 450, ids, at, 3);
		} else {
			/* gaps: c at 0, a at 7, b at 1000 */
			pos[0] = 7;
			pos[1] = 1000;
			pos[2] = 0;
			at[0] = 0;
			at[1] = 1;
			at[2] = 2;
			fx_batch_by_hand(fx, pos, 3, ids, at, 3);
		}
		fx_script(fx, steps, 3);
		fx_run(fx);
		assert_string_equal(
		    fx->calls[0].story, round ? "c.md" : "b.md");
		assert_string_equal(fx->calls[1].story, "a.md");
		assert_string_equal(
		    fx->calls[2].story, round ? "b.md" : "c.md");
		assert_int_equal(fx->res.counts[STATUS_PENDING], 0);
		assert_int_equal(fx->res.counts[STATUS_DONE], round ? 3 : 450);
		fx_story(fx, "a.md", 2, 0);
		fx_story(fx, "b.md", 2, 0);
		fx_story(fx, "c.md", 2, 0);
	}
}

/* A pending story of the batch that the config no longer names stops
 * the loop with an error naming it (a done one does not). */
static void
test_story_left_config(void **state)
{
	static const char *const ids[] = {"gone", "a"};
	static const int pos[] = {0, 1, 2};
	static const int at[] = {1, 2};
	struct fx *fx = *state;

	fx_story(fx, "a.md", 2, 0);
	fx_config(fx, "[\"a.md\"]", BOTH, FIXED);
	fx_batch_by_hand(fx, pos, 3, ids, at, 2);
	fx_script(fx, NULL, 0);
	memset(&fx->err, 0, sizeof(fx->err));
	assert_int_equal(batch_run(&fx->res, &fx->o, &fx->err), SC_EDATA);
	assert_non_null(strstr(fx->err.msg,
	    "story gone of batch 1 is no "
	    "longer in the config"));
	assert_int_equal(fx->ncalls, 0);
}

/* ------------------------------------------------------------------ */
/* notifications through the seam (docs/notifications.md) */

#define MAXPOSTS 16

/* The notifier seam, faked: what was posted, and scripted answers. */
struct fake_notifier {
	size_t n;
	enum notify_event ev[MAXPOSTS];
	size_t target[MAXPOSTS];
	json_t *json[MAXPOSTS];
	bool full; /* post refuses (the queue is full) */
	int failures; /* take_failures reports this many, once */
	size_t left; /* what drain says is still undelivered */
	int drains;
	int64_t drain_ms;
};

static int
fake_post(void *ctx, size_t target, enum notify_event e, const char *json)
{
	struct fake_notifier *fn = ctx;

	if (fn->full)
		return -1;
	assert_true(fn->n < MAXPOSTS);
	fn->ev[fn->n] = e;
	fn->target[fn->n] = target;
	fn->json[fn->n] = json_loads(json, 0, NULL);
	assert_non_null(fn->json[fn->n]);
	fn->n++;
	return 0;
}

static size_t
fake_take_failures(void *ctx, struct notify_failure *out, size_t cap)
{
	struct fake_notifier *fn = ctx;
	size_t n = 0;

	for (; fn->failures > 0 && n < cap; fn->failures--, n++) {
		memset(&out[n], 0, sizeof(out[n]));
		out[n].event = NOTIFY_STOPPED;
		snprintf(out[n].target, sizeof(out[n].target),
		    "webhook http://127.0.0.1:9");
		snprintf(out[n].msg, sizeof(out[n].msg), "HTTP 500 (3 tries)");
	}
	return n;
}

static size_t
fake_drain(void *ctx, int64_t timeout_ms)
{
	struct fake_notifier *fn = ctx;

	fn->drains++;
	fn->drain_ms = timeout_ms;
	return fn->left;
}

static void
fake_notifier_free(struct fake_notifier *fn)
{
	size_t i;

	for (i = 0; i < fn->n; i++)
		json_decref(fn->json[i]);
}

/* After fx_config(): the same config with "notify": notify, loaded
 * again, and the batch given the fake notifier fn. */
static void
fx_notify(struct fx *fx, struct fake_notifier *fn, const char *notify)
{
	FILE *f = fopen(fx->cfgpath, "r");
	char old[4096], text[8192];
	size_t len;

	assert_non_null(f);
	len = fread(old, 1, sizeof(old) - 1, f);
	old[len] = '\0';
	fclose(f);
	assert_true(old[0] == '{');
	snprintf(text, sizeof(text), "{\"notify\": %s, %s", notify, old + 1);
	file_put(fx->cfgpath, text);
	stories_free(fx->stories, fx->nstories);
	config_release(&fx->cfg);
	if (config_load(&fx->cfg, fx->cfgpath, &fx->err) != 0)
		fail_msg("config_load: %s", fx->err.msg);
	if (stories_load(&fx->stories, &fx->nstories, &fx->cfg, &fx->err) != 0)
		fail_msg("stories_load: %s", fx->err.msg);
	fx->o.cfg = &fx->cfg;
	fx->o.stories = fx->stories;
	fx->o.nstories = fx->nstories;
	fx->o.notify_ops.post = fake_post;
	fx->o.notify_ops.take_failures = fake_take_failures;
	fx->o.notify_ops.drain = fake_drain;
	fx->o.notify_ops.ctx = fn;
}

static const char *
jstr(json_t *j, const char *key)
{
	json_t *v = json_object_get(j, key);

	return json_is_string(v) ? json_string_value(v) : NULL;
}

#define ALL_EVENTS \
	"[\"batch_end\", \"escalated\", \"deferred\", \"stopped\", " \
	"\"breaker_open\", \"usage_limit\"]"

/* The worked example's deferral reaches the targets that want it, then
 * batch_end with the counts; the end waits once, NOTIFY_DRAIN_MS. */
static void
test_notify_deferred_and_end(void **state)
{
	static const struct step steps[] = {
	    {.done = 5, .dur_ms = 60000, .exit_code = 0},
	    {.done = 4, .dur_ms = 30000, .exit_code = 1},
	    {.done = 5, .dur_ms = 60000, .exit_code = 0},
	    {.done = 5, .dur_ms = 60000, .exit_code = 0},
	};
	struct fake_notifier fn = {0};
	struct fx *fx = *state;
	json_t *c;

	fx_story(fx, "s1.md", 9, 0);
	fx_config(fx, "[\"s1.md\"]", BOTH, FIXED);
	fx_notify(fx, &fn,
	    "[{\"on\": " ALL_EVENTS ", \"webhook\": \"http://127.0.0.1:9/h\"}, "
	    "{\"on\": [\"escalated\"], \"command\": [\"true\"]}]");
	fx_script(fx, steps, 4);
	fx_run(fx);

	assert_int_equal(fx->res.counts[STATUS_DEFERRED], 1);
	assert_int_equal(fn.n, 2);
	assert_int_equal(fn.ev[0], NOTIFY_DEFERRED);
	assert_int_equal(fn.target[0], 0);
	assert_string_equal(jstr(fn.json[0], "story_id"), "s1");
	assert_prefix(jstr(fn.json[0], "reason"), "D8");
	assert_string_equal(jstr(fn.json[0], "command"), "storyctl requeue s1");
	assert_string_equal(jstr(fn.json[0], "root"), fx->dir);
	/* the controller's clock, not the machine's */
	assert_int_equal(
	    json_integer_value(json_object_get(fn.json[0], "time_ms")),
	    T0 + 60000 + 1000 + 30000 + 1000 + 60000 + 1000 + 60000);
	assert_int_equal(
	    json_integer_value(json_object_get(fn.json[0], "batch_id")),
	    fx->res.batch_id);
	assert_int_equal(fn.ev[1], NOTIFY_BATCH_END);
	assert_string_equal(jstr(fn.json[1], "batch_status"), "finished");
	assert_string_equal(
	    jstr(fn.json[1], "reason"), "batch 1 finished: 1 deferred");
	c = json_object_get(fn.json[1], "counts");
	assert_int_equal(json_integer_value(json_object_get(c, "deferred")), 1);
	assert_int_equal(json_integer_value(json_object_get(c, "done")), 0);
	assert_int_equal(fn.drains, 1);
	assert_int_equal(fn.drain_ms, NOTIFY_DRAIN_MS);
	assert_false(out_has(fx, "notify:"));
	fake_notifier_free(&fn);
}

/* Both agents refuse their key: escalated (with the agent's error),
 * stopped (why), batch_end (stopped, 2 pending). */
static void
test_notify_escalated_stopped(void **state)
{
	static const struct step steps[] = {
	    {.done = 0,
		.dur_ms = 1000,
		.exit_code = 1,
		.tail = "Invalid API key \xc2\xb7 Please run /login\n"},
	    {.done = 0,
		.dur_ms = 1000,
		.exit_code = 1,
		.tail = "Error: invalid_api_key: Incorrect API key "
			"provided\n"},
	};
	struct fake_notifier fn = {0};
	struct fx *fx = *state;

	fx_story(fx, "a.md", 2, 0);
	fx_story(fx, "b.md", 2, 0);
	fx_story(fx, "c.md", 2, 0);
	fx_config(fx, "[\"a.md\", \"b.md\", \"c.md\"]", BOTH, FIXED);
	fx_notify(
	    fx, &fn, "[{\"on\": " ALL_EVENTS ", \"command\": [\"cat\"]}]");
	fx_script(fx, steps, 2);
	fx_run(fx);

	assert_true(fx->res.stopped);
	assert_int_equal(fn.n, 3);
	assert_int_equal(fn.ev[0], NOTIFY_ESCALATED);
	assert_string_equal(jstr(fn.json[0], "story_id"), "a");
	assert_prefix(jstr(fn.json[0], "reason"), "D2");
	assert_non_null(jstr(fn.json[0], "error"));
	assert_non_null(strstr(jstr(fn.json[0], "error"), "API key"));
	assert_int_equal(fn.ev[1], NOTIFY_STOPPED);
	assert_true(json_is_null(json_object_get(fn.json[1], "story_id")));
	assert_string_equal(jstr(fn.json[1], "reason"), fx->res.stop_reason);
	assert_string_equal(jstr(fn.json[1], "command"), "storyctl resume");
	assert_int_equal(fn.ev[2], NOTIFY_BATCH_END);
	assert_string_equal(jstr(fn.json[2], "batch_status"), "stopped");
	assert_int_equal(json_integer_value(json_object_get(
			     json_object_get(fn.json[2], "counts"), "pending")),
	    2);
	fake_notifier_free(&fn);
}

/* A usage limit: the agent and when it may run again. */
static void
test_notify_usage_limit(void **state)
{
	static const struct step steps[] = {
	    {.done = 1,
		.dur_ms = 2000,
		.exit_code = 1,
		.tail = "Claude AI usage limit reached|%lld\n",
		.reset_in_s = 3600},
	    {.done = 4, .dur_ms = 2000, .exit_code = 0},
	};
	struct fake_notifier fn = {0};
	struct fx *fx = *state;
	char when[40];

	fx_story(fx, "s1.md", 4, 0);
	fx_config(fx, "[\"s1.md\"]", BOTH, "{}");
	fx_notify(fx, &fn,
	    "[{\"on\": [\"usage_limit\"], \"webhook\": \"http://h/\"}]");
	fx->rnd = 0.0;
	fx_script(fx, steps, 2);
	fx_run(fx);

	assert_int_equal(fn.n, 1);
	assert_int_equal(fn.ev[0], NOTIFY_USAGE_LIMIT);
	assert_string_equal(jstr(fn.json[0], "story_id"), "s1");
	assert_string_equal(jstr(fn.json[0], "agent"), "prim");
	assert_true(json_is_null(json_object_get(fn.json[0], "command")));
	clock_fmt_iso(when, sizeof(when), fx->epoch_s * 1000);
	assert_non_null(strstr(jstr(fn.json[0], "reason"), when));
	/* only what a target asked for: no batch_end */
	assert_int_equal(fn.drains, 1);
	fake_notifier_free(&fn);
}

/* Drops, failures and what is given up at the end are console lines and
 * "notify" events; the batch ends as it would have. */
static void
test_notify_failures_logged(void **state)
{
	static const struct step steps[] = {
	    {.done = 2, .dur_ms = 1000, .exit_code = 0},
	};
	struct fake_notifier fn = {.full = true, .failures = 1, .left = 2};
	struct fx *fx = *state;
	struct event_row *ev = NULL;
	struct db *db;
	size_t n = 0, i, nnotify = 0;

	fx_story(fx, "s1.md", 2, 0);
	fx_config(fx, "[\"s1.md\"]", BOTH, FIXED);
	fx_notify(fx, &fn,
	    "[{\"on\": " ALL_EVENTS
	    ", \"webhook\": \"http://127.0.0.1:9/x/SECRETPATH?token=t\"}]");
	fx_script(fx, steps, 1);
	fx_run(fx);

	assert_int_equal(fx->res.counts[STATUS_DONE], 1);
	assert_true(out_has(fx,
	    "notify: batch_end to webhook http://127.0.0.1:9 dropped: 64 "
	    "events already wait for delivery\n"));
	assert_true(out_has(fx,
	    "notify: stopped to webhook http://127.0.0.1:9 failed: HTTP 500 "
	    "(3 tries)\n"));
	assert_true(out_has(fx,
	    "notify: 2 notifications still undelivered 5 s after the batch "
	    "ended: given up\n"));
	assert_false(out_has(fx, "SECRETPATH"));
	db = fx_db(fx);
	assert_int_equal(
	    db_events_list(db, &ev, &n, fx->res.batch_id, 0, &fx->err), 0);
	for (i = 0; i < n; i++)
		if (strcmp(ev[i].kind, "notify") == 0)
			nnotify++;
	event_rows_free(ev, n);
	db_close(db);
	assert_int_equal(nnotify, 3);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(
		test_worked_example, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(
		test_network_sleep, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(
		test_backoff_delays, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(
		test_d9_extended_timeout, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(
		test_d10_poll_doubled, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(
		test_runner_opts_from_config, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(
		test_usage_limit_wait, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(
		test_d9_survives_usage_limit_rerun, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(
		test_permanent_disables_primary, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(
		test_both_permanent_stop, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(
		test_no_fallback, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(
		test_no_fallback_plateau, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(
		test_interrupt_and_resume, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(
		test_sleep_interrupted, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(
		test_invalid_story, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(
		test_already_done, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(
		test_reconcile_dead_controller, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(
		test_reconcile_second_death_counts, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(
		test_state_branch, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(
		test_state_commit_message, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(
		test_requeue_restarts_counting, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(
		test_retry_on_escalates, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(
		test_retry_on_matches, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(
		test_resume_nothing_and_locked, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(
		test_tty_status_line, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(
		test_d10_survives_interrupt_rerun, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(
		test_usage_limit_capped, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(
		test_usage_wait_survives_restart, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(
		test_usage_limit_waits_bounded, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(
		test_usage_limit_switch, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(
		test_paused_past_cap_stops_and_resume_honours, fx_setup,
		fx_teardown),
	    cmocka_unit_test_setup_teardown(
		test_runner_flags_recorded, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(
		test_secrets_redacted, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(
		test_only_named_story, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(
		test_drafts_skipped, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(
		test_drafts_included, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(
		test_only_unknown_story, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(
		test_blocked_dependents, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(
		test_position_order, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(
		test_story_left_config, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(
		test_notify_deferred_and_end, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(
		test_notify_escalated_stopped, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(
		test_notify_usage_limit, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(
		test_notify_failures_logged, fx_setup, fx_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
