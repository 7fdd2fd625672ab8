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

#include "controller/cli.h"
#include "controller/runner.h"
#include "state/fsutil.h"
#include "state/gitremote.h"
#include "state/gitwork.h"

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
	char **agent; /* NULL-terminated, after "--" */
};

static int
job_parse(struct job_args *a, int argc, char **argv, struct sc_err *err)
{
	const char *v = NULL;
	int i, r;

	memset(a, 0, sizeof(*a));
	a->grace_ms = 5000;
	for (i = 1; i < argc && a->agent == NULL; i++) {
		if (strcmp(argv[i], "--") == 0) {
			a->agent = argv + i + 1;
			break;
		}
		if ((r = cli_opt_value(
			 &a->remote, argc, argv, &i, "--remote", err)) != 0 ||
		    (r = cli_opt_value(
			 &a->branch, argc, argv, &i, "--branch", err)) != 0 ||
		    (r = cli_opt_value(
			 &a->story, argc, argv, &i, "--story", err)) != 0 ||
		    (r = cli_opt_value(
			 &a->scratch, argc, argv, &i, "--scratch", err)) != 0) {
			if (r < 0)
				return r;
			continue;
		}
		if ((r = cli_opt_value(&v, argc, argv, &i, "--attempt", err)) !=
		    0) {
			if (r < 0 ||
			    (r = cli_parse_int(&a->attempt, v, "--attempt", 0,
				 1000000, err)) < 0)
				return r;
			continue;
		}
		if ((r = cli_opt_value(
			 &v, argc, argv, &i, "--kill-grace-ms", err)) != 0) {
			if (r < 0 ||
			    (r = cli_parse_int(&a->grace_ms, v,
				 "--kill-grace-ms", 0, 3600000, err)) < 0)
				return r;
			continue;
		}
		return err_set(
		    err, SC_EUSAGE, "job: unknown option '%s'", argv[i]);
	}
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

/* Run the agent in the clone; its output to our stdout as it comes. */
static int
job_agent(struct runner_result *res, const struct job_args *a, const char *work,
    struct sc_err *err)
{
	struct runner_opts ro;

	memset(&ro, 0, sizeof(ro));
	ro.argv = (const char *const *)a->agent;
	ro.cwd = work;
	ro.kill_grace_ms = a->grace_ms;
	ro.stop = &job_stop;
	ro.wake_fd = job_wake[0];
	ro.tail_max = 4096;
	ro.echo_stdout = true;
	return runner_run(res, &ro, err);
}

/* Commit what the agent changed and push the branch back (a
 * fast-forward of what was cloned). */
static int
job_push(const struct job_args *a, const char *work, struct sc_err *err)
{
	char msg[300];
	int committed = 0;
	int rc;

	snprintf(msg, sizeof(msg), "storyctl job: %s attempt %d", a->story,
	    a->attempt);
	rc = gitwork_commit_all(
	    &committed, NULL, work, NULL, NULL, msg, (int64_t)time(NULL), err);
	if (rc == 0 && committed)
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
		rc = job_agent(&res, &a, work, err);
	if (rc < 0)
		goto out;
	fflush(stdout);
	rc = job_push(&a, work, err);
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
