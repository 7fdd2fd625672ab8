/*
 * cmd_run.c - `storyctl run` and `storyctl resume`: load and check
 * everything, make sure every agent can be started, catch SIGINT and
 * SIGTERM, run the batch, print the summary, pick the exit status.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "controller/config/argv.h"
#include "controller/engine/batch.h"
#include "controller/cli/cli.h"
#include "controller/cli/help.h"
#include "controller/cli/opts.h"
#include "controller/engine/preflight.h"
#include "controller/engine/sandbox.h"
#include "controller/serve/serve.h"
#include "controller/serve/serve_listen.h"
#include "strategies/number.h"

static volatile sig_atomic_t stop_flag;
static volatile sig_atomic_t stop_signal;
static int wake_pipe[2] = {-1, -1};

static void
on_signal(int sig)
{
	int saved = errno;

	/* a second SIGINT kills at once */
	if (stop_flag && sig == SIGINT)
		stop_flag = 2;
	else if (!stop_flag)
		stop_flag = 1;
	if (!stop_signal)
		stop_signal = sig;
	if (wake_pipe[1] >= 0 && write(wake_pipe[1], "x", 1) < 0) {
		/* the pipe is full: the reader is already awake */
	}
	errno = saved;
}

static int
signals_install(struct sc_err *err)
{
	struct sigaction sa;
	sigset_t held;

	if (pipe2(wake_pipe, O_CLOEXEC | O_NONBLOCK) < 0)
		return err_set(err, SC_EOS, "pipe: %s", strerror(errno));
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGINT, &sa, NULL) < 0 ||
	    sigaction(SIGTERM, &sa, NULL) < 0)
		return err_set(err, SC_EOS, "sigaction: %s", strerror(errno));
	sa.sa_handler = SIG_IGN;
	sigaction(SIGPIPE, &sa, NULL);
	/* main held them until now: one that came meanwhile is delivered
	 * here, to the handler (docs/reliability.md#stops-during-start-up) */
	sigemptyset(&held);
	sigaddset(&held, SIGINT);
	sigaddset(&held, SIGTERM);
	sigprocmask(SIG_UNBLOCK, &held, NULL);
	return 0;
}

static void
summary(const struct cli *cli, const struct batch_result *res)
{
	static const enum story_status order[] = {STATUS_DONE, STATUS_DEFERRED,
	    STATUS_ESCALATED, STATUS_BLOCKED, STATUS_INVALID, STATUS_PENDING,
	    STATUS_RUNNING};
	size_t i;
	int total = 0, shown = 0;

	for (i = 0; i < STATUS__COUNT; i++)
		total += res->counts[i];
	fprintf(cli->out, "\nbatch %lld: ", (long long)res->batch_id);
	for (i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
		if (res->counts[order[i]] == 0)
			continue;
		fprintf(cli->out, "%s%d %s", shown++ ? ", " : "",
		    res->counts[order[i]], status_name(order[i]));
	}
	fprintf(cli->out, "%s(%d stor%s)", shown ? " " : "", total,
	    total == 1 ? "y" : "ies");
	if (res->spend_usd > 0)
		fprintf(cli->out, ", $%.4f spent", res->spend_usd);
	fprintf(cli->out, "\n");
	if (res->stopped)
		fprintf(cli->out,
		    "stopped: %s\nrun 'storyctl resume' when the "
		    "cause is fixed\n",
		    res->stop_reason);
	else if (res->interrupted)
		fprintf(cli->out,
		    "interrupted: run 'storyctl resume' to "
		    "continue\n");
	if (res->counts[STATUS_DEFERRED] || res->counts[STATUS_ESCALATED] ||
	    res->counts[STATUS_BLOCKED] || res->counts[STATUS_INVALID])
		fprintf(cli->out,
		    "next: storyctl list --status deferred; "
		    "storyctl show STORY; storyctl requeue STORY\n");
	fprintf(cli->out, "record: %s/state.db, git log %s\n", res->state_dir,
	    res->branch);
	if (res->jobs > 1)
		fprintf(cli->out,
		    "work: one branch per story, git branch --list "
		    "'storyctl/story/*'\n");
}

/* What run and resume were given on the command line. */
struct run_args {
	char **only; /* the stories named, argv's strings */
	size_t nonly;
	int jobs;
	bool include_drafts;
	struct serve_args serve; /* .listen NULL: no --serve */
};

/* run [-j N] [--include-drafts] [--serve ADDR:PORT [--tls-cert FILE
 * --tls-key FILE]] [STORY...], resume [-j N] [--serve ...], by their
 * help tables (controller/cli/opts.h, docs/commands.md); args->only takes
 * over the parser's arguments. */
static int
parse_run_args(struct run_args *args, int argc, char **argv,
    enum batch_mode mode, struct sc_err *err)
{
	const struct help_item *table =
	    mode == BATCH_RESUME ? help_resume.options : help_run.options;
	struct opts o;
	const char *v;
	int rc;

	rc = opts_parse(&o, argv[0], table, argc, argv, err);
	if (rc < 0)
		goto out;
	v = opts_value(&o, "--jobs");
	if (v != NULL) {
		rc = number_parse_int(&args->jobs, v, "-j", 1, 64, err);
		if (rc < 0)
			goto out;
	}
	/* a draft (Status: Draft) runs too (docs/stories.md) */
	args->include_drafts = opts_has(&o, "--include-drafts");
	args->serve.listen = opts_value(&o, "--serve");
	args->serve.tls_cert = opts_value(&o, "--tls-cert");
	args->serve.tls_key = opts_value(&o, "--tls-key");
	if (mode == BATCH_RESUME && o.nargs > 0) {
		rc = err_set(err, SC_EUSAGE,
		    "resume takes no stories (use 'storyctl run STORY')");
		goto out;
	}
	args->only = o.args;
	args->nonly = (size_t)o.nargs;
	o.args = NULL;
out:
	opts_release(&o);
	return rc;
}

/* --serve ADDR:PORT: the service inside this process, in the library's
 * thread, reading the database read-only per request; the batch's loop
 * does not know it is there (docs/api.md#run-serve).  *s stays NULL
 * without --serve. */
static int
run_serve_start(struct serve **s, struct serve_listen *l, const struct cli *cli,
    const struct config *cfg, const struct run_args *args, struct sc_err *err)
{
	int port = 0, rc;

	*s = NULL;
	if (args->serve.listen == NULL) {
		if (args->serve.tls_cert != NULL || args->serve.tls_key != NULL)
			return err_set(err, SC_EUSAGE,
			    "--tls-cert and --tls-key go with --serve "
			    "ADDR:PORT");
		return 0;
	}
	rc = serve_listen_prepare(
	    l, &args->serve, cfg->state_dir, "run --serve", err);
	if (rc == 0)
		rc = serve_start(s, &port, cli, cfg->state_dir, l, err);
	if (rc < 0)
		return rc;
	serve_listen_announce(cli->out, stderr, port, l);
	return 0;
}

/* The batch's options: the real clock, runner and signals. */
static void
run_opts_fill(struct batch_opts *o, const struct cli *cli,
    const struct config *cfg, struct story *stories, size_t nstories,
    const struct run_args *args, enum batch_mode mode)
{
	memset(o, 0, sizeof(*o));
	o->cfg = cfg;
	o->stories = stories;
	o->nstories = nstories;
	o->only = args->only;
	o->nonly = args->nonly;
	o->mode = mode;
	clock_real(&o->clock);
	o->run_agent = batch_real_runner;
	batch_real_ops(&o->agent_ops);
	o->jobs = args->jobs;
	o->out = cli->out;
	o->tty = cli->tty;
	o->color = cli->color;
	o->stop = &stop_flag;
	o->wake_fd = wake_pipe[0];
	o->kill_grace_ms_override = -1;
}

/* Which agents run confined (docs/sandbox.md): bubblewrap probed once
 * for the night, the one line said when "auto" finds none, exit 69
 * when an agent's sandbox.enabled is true and none can start. */
static int
run_sandbox(struct batch_opts *o, struct sandbox_host *host,
    const struct cli *cli, const struct config *cfg, struct sc_err *err)
{
	char line[512];
	int r, rc;
	bool wanted = false;

	for (r = ROLE_PRIMARY; r <= ROLE_FALLBACK; r++)
		if (cfg->agents[r].configured &&
		    cfg->agents[r].sandbox.enabled != SANDBOX_OFF)
			wanted = true;
	if (!wanted)
		return 0;
	rc = sandbox_probe(host, err);
	if (rc == 0)
		rc = sandbox_decide_roles(
		    o->confined, line, sizeof(line), host, cfg, err);
	if (rc < 0)
		return rc;
	if (line[0] != '\0') {
		fprintf(cli->out, "%s\n", line);
		fflush(cli->out);
	}
	o->sandbox = host;
	return 0;
}

/* The exit status of a batch that ran (docs/commands.md#exit-codes). */
static int
run_exit_status(const struct batch_result *res)
{
	if (res->interrupted)
		return 128 + (stop_signal ? stop_signal : SIGINT);
	if (res->stopped)
		return 75;
	if (res->counts[STATUS_DEFERRED] || res->counts[STATUS_ESCALATED] ||
	    res->counts[STATUS_BLOCKED] || res->counts[STATUS_INVALID])
		return 3;
	return 0;
}

static int
run_or_resume(struct cli *cli, int argc, char **argv, enum batch_mode mode,
    struct sc_err *err)
{
	struct config cfg;
	struct story *stories = NULL;
	struct batch_opts o;
	struct batch_result res;
	struct run_args args = {NULL, 0, 1, false, {NULL, NULL, NULL}};
	struct serve_listen l;
	struct serve *srv = NULL;
	struct sandbox_host host;
	size_t nstories = 0;
	int rc;

	memset(&cfg, 0, sizeof(cfg));
	memset(&l, 0, sizeof(l));
	memset(&host, 0, sizeof(host));
	/* first: a stop from here on is an interrupted batch, 130/143 */
	rc = signals_install(err);
	if (rc == 0)
		rc = parse_run_args(&args, argc, argv, mode, err);
	if (rc == 0)
		rc = cli_load_config(&cfg, cli, false, err);
	if (rc < 0)
		goto out;
	if (args.include_drafts)
		cfg.include_drafts = true;
	rc = stories_load(&stories, &nstories, &cfg, err);
	if (rc == 0)
		rc = preflight_run(&cfg, err);
	if (rc == 0)
		rc = run_serve_start(&srv, &l, cli, &cfg, &args, err);
	if (rc < 0)
		goto out;
	run_opts_fill(&o, cli, &cfg, stories, nstories, &args, mode);
	rc = run_sandbox(&o, &host, cli, &cfg, err);
	if (rc < 0)
		goto out;
	rc = batch_run(&res, &o, err);
	/* the server ends with the batch, its streams with the last event */
	serve_stop(srv);
	srv = NULL;
	if (rc < 0)
		goto out;
	if (res.nothing) {
		fprintf(cli->out, "nothing to resume: no unfinished batch\n");
		goto out;
	}
	summary(cli, &res);
	rc = run_exit_status(&res);
out:
	serve_stop(srv);
	sandbox_host_release(&host);
	serve_listen_release(&l);
	stories_free(stories, nstories);
	config_release(&cfg);
	free(args.only);
	return rc;
}

int
cmd_run(struct cli *cli, int argc, char **argv, struct sc_err *err)
{
	return run_or_resume(cli, argc, argv, BATCH_RUN, err);
}

int
cmd_resume(struct cli *cli, int argc, char **argv, struct sc_err *err)
{
	return run_or_resume(cli, argc, argv, BATCH_RESUME, err);
}
