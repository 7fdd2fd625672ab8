/*
 * cmd_job.c - `storyctl job`: one attempt on a worker, started by the
 * remote executor's launcher (docs/cluster.md#storyctl-job).  It clones
 * the story's branch into a scratch directory, runs the agent there with
 * the runner (own process group, the agent environment of agentenv.h, the
 * watchdog), streams its output to stdout, commits what it changed, pushes
 * the branch back and exits with the agent's status.  Nothing here needs
 * the controller's files: the branch carries everything.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "controller/cli/cli.h"
#include "controller/cli/help.h"
#include "controller/cli/opts.h"
#include "controller/engine/runner.h"
#include "controller/engine/sandbox.h"
#include "state/fsutil.h"
#include "state/gitremote.h"
#include "state/gitwork.h"
#include "strategies/number.h"

static volatile sig_atomic_t job_stop;
static int job_wake[2] = {-1, -1};

/* SIGTERM, SIGINT, SIGHUP (the launcher's forwarding, scancel): stop the
 * agent gracefully, then commit and push what it did. */
static void
job_on_signal(int sig)
{
	int saved = errno;

	(void)sig;
	job_stop = 1;
	if (job_wake[1] >= 0 && write(job_wake[1], "x", 1) < 0) {
		/* full: the reader is awake already */
	}
	errno = saved;
}

static int
job_signals(struct sc_err *err)
{
	struct sigaction sa;

	if (pipe2(job_wake, O_CLOEXEC | O_NONBLOCK) < 0)
		return err_set(err, SC_EOS, "pipe: %s", strerror(errno));
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = job_on_signal;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGINT, &sa, NULL) < 0 ||
	    sigaction(SIGTERM, &sa, NULL) < 0 ||
	    sigaction(SIGHUP, &sa, NULL) < 0)
		return err_set(err, SC_EOS, "sigaction: %s", strerror(errno));
	/* a reader gone (the launcher died) ends the echo, not the job */
	sa.sa_handler = SIG_IGN;
	sigaction(SIGPIPE, &sa, NULL);
	return 0;
}

struct job_args {
	const char *remote, *branch, *story, *scratch;
	int attempt;
	int grace_ms;
	/* --sandbox: confine the agent or refuse to run it
	 * (docs/sandbox.md#remote); --sandbox-no-network,
	 * --sandbox-preset NAME (its state directories) */
	bool sandbox;
	bool no_network;
	const char *preset;
	char **agent; /* NULL-terminated, after "--" */
};

/* The values of job's options, checked (its help table,
 * controller/cli/opts.h). */
static int
job_parse_values(struct job_args *a, const struct opts *o, struct sc_err *err)
{
	const char *v;
	int rc = 0;

	a->remote = opts_value(o, "--remote");
	a->branch = opts_value(o, "--branch");
	a->story = opts_value(o, "--story");
	a->scratch = opts_value(o, "--scratch");
	a->sandbox = opts_has(o, "--sandbox");
	a->no_network = opts_has(o, "--sandbox-no-network");
	a->preset = opts_value(o, "--sandbox-preset");
	v = opts_value(o, "--attempt");
	if (v != NULL)
		rc = number_parse_int(
		    &a->attempt, v, "--attempt", 0, 1000000, err);
	v = opts_value(o, "--kill-grace-ms");
	if (rc == 0 && v != NULL)
		rc = number_parse_int(
		    &a->grace_ms, v, "--kill-grace-ms", 0, 3600000, err);
	return rc;
}

/* job --remote URL --branch BRANCH [...] -- AGENT [ARG...]: a->agent
 * points into argv, at the words after "--". */
static int
job_parse(struct job_args *a, int argc, char **argv, struct sc_err *err)
{
	struct opts o;
	int rc;

	memset(a, 0, sizeof(*a));
	a->grace_ms = 5000;
	rc = opts_parse(&o, "job", help_job.options, argc, argv, err);
	if (rc == 0 && o.nbefore > 0)
		rc = err_set(
		    err, SC_EUSAGE, "job: unknown option '%s'", o.args[0]);
	if (rc == 0)
		rc = job_parse_values(a, &o, err);
	if (rc == 0 && o.dashdash)
		a->agent = argv + argc - (o.nargs - o.nbefore);
	opts_release(&o);
	if (rc < 0)
		return rc;
	if (a->remote == NULL || a->branch == NULL)
		return err_set(
		    err, SC_EUSAGE, "job: --remote and --branch are required");
	if (a->agent == NULL || a->agent[0] == NULL)
		return err_set(
		    err, SC_EUSAGE, "job: the agent's argv must follow '--'");
	if (a->story == NULL)
		a->story = a->branch;
	return 0;
}

/* A fresh directory under --scratch, $TMPDIR or /tmp; *out malloc'd. */
static int
job_scratch(char **out, const struct job_args *a, struct sc_err *err)
{
	const char *base = a->scratch;
	char *tmpl;

	*out = NULL;
	if (base == NULL || base[0] == '\0')
		base = getenv("TMPDIR");
	if (base == NULL || base[0] == '\0')
		base = "/tmp";
	tmpl = fsutil_path_join(base, "storyctl-job.XXXXXX");
	if (tmpl == NULL)
		return err_set(err, SC_EOS, "out of memory");
	if (fsutil_mkdir_parents(tmpl, 0700, err) < 0) {
		free(tmpl);
		return SC_EOS;
	}
	if (mkdtemp(tmpl) == NULL) {
		err_set(err, SC_EOS, "%s: cannot make a scratch directory: %s",
		    base, strerror(errno));
		free(tmpl);
		return SC_EOS;
	}
	*out = tmpl;
	return 0;
}

/* --sandbox: the agent's argv wrapped as the controller's own
 * attempts are, the scratch directory standing for the state dir
 * (hidden, the clone inside it bound again); no sandbox here is an
 * error, not a fallback, since the argv is the full-autonomy one. */
static int
job_confine(struct sandbox_run *sr, struct sandbox_host *h,
    struct strlist *argv, const struct job_args *a, const char *dir,
    const char *work, struct sc_err *err)
{
	struct sandbox_conf conf;
	struct sandbox_req rq;
	char *pdir = NULL;
	bool confined = false;
	int rc;

	memset(&conf, 0, sizeof(conf));
	conf.enabled = SANDBOX_ON;
	conf.network = !a->no_network;
	rc = sandbox_probe(h, err);
	if (rc == 0)
		rc = sandbox_decide(&confined, h, &conf, "job", err);
	if (rc < 0)
		goto out;
	pdir = fsutil_path_join(dir, "sandbox-git");
	if (pdir == NULL) {
		rc = err_set(err, SC_EOS, "out of memory");
		goto out;
	}
	memset(&rq, 0, sizeof(rq));
	rq.host = h;
	rq.conf = &conf;
	rq.preset = a->preset != NULL ? a->preset : "";
	rq.home = getenv("HOME");
	rq.tree = work;
	rq.state_dir = dir;
	rq.private_dir = pdir;
	rc = sandbox_begin(sr, argv, &rq, err);
out:
	free(pdir);
	return rc;
}

/* Run the agent in the clone; its output to our stdout as it comes. */
static int
job_agent(struct runner_result *res, const struct job_args *a, const char *dir,
    const char *work, struct sc_err *err)
{
	struct runner_opts ro;
	struct sandbox_host h;
	struct sandbox_run sr;
	struct strlist argv = {0};
	struct sc_err e = {0};
	char oid[41];
	bool moved = false;
	size_t i;
	int rc = 0;

	memset(&h, 0, sizeof(h));
	memset(&sr, 0, sizeof(sr));
	for (i = 0; a->agent[i] != NULL && rc == 0; i++)
		if (strlist_push(&argv, a->agent[i]) < 0)
			rc = err_set(err, SC_EOS, "out of memory");
	if (rc == 0 && a->sandbox)
		rc = job_confine(&sr, &h, &argv, a, dir, work, err);
	if (rc < 0)
		goto out;
	memset(&ro, 0, sizeof(ro));
	ro.argv = (const char *const *)argv.items;
	ro.cwd = work;
	ro.kill_grace_ms = a->grace_ms;
	ro.stop = &job_stop;
	ro.wake_fd = job_wake[0];
	ro.tail_max = 4096;
	ro.echo_stdout = true;
	ro.keep_fd = sr.seccomp_fd > 2 ? sr.seccomp_fd : 0;
	rc = runner_run(res, &ro, err);
	/* the agent's own commits on its branch, then job_push() commits
	 * the rest */
	if (rc == 0 && sandbox_end(&sr, &moved, oid, work, &e) < 0)
		fprintf(stderr, "storyctl job: %s\n", e.msg);
out:
	sandbox_run_release(&sr);
	sandbox_host_release(&h);
	strlist_release(&argv);
	return rc;
}

/* Commit what the agent changed and push the branch back (a
 * fast-forward of what was cloned). */
static int
job_push(const struct job_args *a, const char *work, const char *cloned,
    struct sc_err *err)
{
	char msg[300], tip[GITWORK_HEXSZ], ref[256];
	int committed = 0;
	int rc;

	snprintf(msg, sizeof(msg), "storyctl job: %s attempt %d", a->story,
	    a->attempt);
	rc = gitwork_commit_all(
	    &committed, NULL, work, NULL, NULL, msg, (int64_t)time(NULL), err);
	/* the agent's own commits count as much as ours: pushed whenever
	 * the branch is not where it was cloned */
	if (rc == 0)
		rc = gitwork_head(tip, ref, sizeof(ref), work, err);
	if (rc == 0 && (committed || strcmp(tip, cloned) != 0))
		rc = gitremote_push(work, a->remote, a->branch, false, err);
	return rc;
}

/* The agent's status as ours: its exit code, or the same signal. */
static int
job_status(const struct runner_result *res)
{
	if (res->term_signal != 0) {
		fflush(stdout);
		signal(res->term_signal, SIG_DFL);
		raise(res->term_signal);
		return 128 + res->term_signal;
	}
	return res->exit_code;
}

int
cmd_job(struct cli *cli, int argc, char **argv, struct sc_err *err)
{
	struct job_args a;
	struct runner_result res;
	char *dir = NULL, *work = NULL;
	char cloned[GITWORK_HEXSZ] = "", ref[256];
	int rc, status = 0;

	(void)cli;
	memset(&res, 0, sizeof(res));
	rc = job_parse(&a, argc, argv, err);
	if (rc == 0)
		rc = job_signals(err);
	if (rc == 0)
		rc = job_scratch(&dir, &a, err);
	if (rc < 0)
		goto out;
	if ((work = fsutil_path_join(dir, "work")) == NULL) {
		rc = err_set(err, SC_EOS, "out of memory");
		goto out;
	}
	rc = gitremote_clone(work, a.remote, a.branch, err);
	if (rc == 0)
		rc = gitwork_head(cloned, ref, sizeof(ref), work, err);
	if (rc == 0)
		rc = job_agent(&res, &a, dir, work, err);
	if (rc < 0)
		goto out;
	fflush(stdout);
	rc = job_push(&a, work, cloned, err);
	if (rc < 0) {
		/* the work is lost: never report it as the agent's success */
		fprintf(stderr, "storyctl job: %s\n", err->msg);
		err->msg[0] = '\0';
		status = res.exit_code == 0 && res.term_signal == 0
		    ? 1
		    : job_status(&res);
		rc = 0;
		goto out;
	}
	status = job_status(&res);
out:
	runner_result_release(&res);
	if (dir != NULL)
		fsutil_rm_tree(dir);
	free(work);
	free(dir);
	return rc < 0 ? rc : status;
}
