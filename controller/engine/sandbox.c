/* sandbox.c - see sandbox.h and docs/sandbox.md. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "controller/engine/agentenv.h"
#include "controller/config/argv.h"
#include "controller/config/presets.h"
#include "controller/engine/sandbox.h"
#include "controller/engine/sandbox_int.h"
#include "controller/engine/spawn.h"
#include "state/fsutil.h"
#include "strategies/confine.h"

/* Where the sandbox shows the real common git dir: under the state
 * dir, which is an empty tmpfs inside, so the path exists nowhere
 * else. */
#define SHOWN_COMMON "repo.git"

/* The most paths one attempt hides (secrets, sockets) or opens. */
#define HIDE_MAX 40

void
sandbox_host_release(struct sandbox_host *h)
{
	if (h == NULL)
		return;
	free(h->bwrap);
	free(h->bpf);
	memset(h, 0, sizeof(*h));
}

/* The first line bwrap printed, without its newline, into h->why. */
static void
probe_why(struct sandbox_host *h, const char *out, size_t len, int status)
{
	size_t n = 0;

	while (n < len && out[n] != '\n' && n < sizeof(h->why) - 40)
		n++;
	if (n > 0)
		snprintf(h->why, sizeof(h->why), "%.*s", (int)n, out);
	else if (WIFSIGNALED(status))
		snprintf(h->why, sizeof(h->why),
		    "bubblewrap (%s) was killed by signal %d", h->bwrap,
		    WTERMSIG(status));
	else
		snprintf(h->why, sizeof(h->why),
		    "bubblewrap (%s) exited %d starting an empty sandbox",
		    h->bwrap, WEXITSTATUS(status));
}

/* Start an empty sandbox with an attempt's namespaces, mounts and
 * seccomp program; h->works when it ran /bin/true. */
static int
probe_run(struct sandbox_host *h, struct sc_err *err)
{
	const char *argv[] = {h->bwrap, "--new-session", "--die-with-parent",
	    "--unshare-all", "--share-net", "--cap-drop", "ALL", "--ro-bind",
	    "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp",
	    "--seccomp", "3", "--", "true", NULL};
	struct spawn_req rq = {0};
	char out[512];
	size_t got = 0;
	ssize_t r;
	uint64_t ino;
	int rd = -1, wr = -1, bfd = -1, xe = 0, status = 0, rc;
	pid_t pid = 0;

	rc = sandbox_bpf_fd(&bfd, h->bpf, h->bpf_len, err);
	if (rc == 0)
		rc = spawn_pipe(&rd, &wr, &ino, err);
	if (rc < 0)
		goto out;
	/* blocking: we read until it exits */
	fcntl(rd, F_SETFL, fcntl(rd, F_GETFL) & ~O_NONBLOCK);
	rq.argv = argv;
	rq.envp = environ;
	rq.out_fd = wr;
	rq.keep_fd = bfd;
	rc = spawn_start(&pid, &xe, &rq, err);
	close(wr);
	wr = -1;
	if (rc < 0)
		goto out;
	if (pid == 0) {
		snprintf(h->why, sizeof(h->why), "cannot run %s: %s", h->bwrap,
		    strerror(xe));
		goto out;
	}
	while (got < sizeof(out) &&
	    ((r = read(rd, out + got, sizeof(out) - got)) > 0 ||
		(r < 0 && errno == EINTR)))
		if (r > 0)
			got += (size_t)r;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		h->works = true;
	else
		probe_why(h, out, got, status);
out:
	if (rd >= 0)
		close(rd);
	if (wr >= 0)
		close(wr);
	if (bfd >= 0)
		close(bfd);
	return rc;
}

int
sandbox_probe(struct sandbox_host *h, struct sc_err *err)
{
	struct sc_err e = {0};
	int rc;

	memset(h, 0, sizeof(*h));
	rc = sandbox_bpf_build(&h->bpf, &h->bpf_len, err);
	if (rc < 0)
		goto out;
	if (argv_resolve_program(&h->bwrap, "bwrap", &e) < 0) {
		h->bwrap = NULL;
		snprintf(h->why, sizeof(h->why),
		    "bubblewrap (bwrap) not found in PATH");
		goto out;
	}
	rc = probe_run(h, err);
out:
	if (rc < 0)
		sandbox_host_release(h);
	return rc;
}

int
sandbox_decide(bool *confined, const struct sandbox_host *h,
    const struct sandbox_conf *c, const char *agent, struct sc_err *err)
{
	*confined = false;
	if (c->enabled == SANDBOX_OFF || h == NULL)
		return 0;
	if (h->works) {
		*confined = true;
		return 0;
	}
	if (c->enabled == SANDBOX_ON)
		return err_set(err, SC_EUNAVAIL,
		    "agent %s: sandbox.enabled is true but no sandbox can "
		    "start here: %s",
		    agent, h->why);
	return 0;
}

int
sandbox_decide_roles(bool confined[2], char *line, size_t len,
    const struct sandbox_host *h, const struct config *cfg, struct sc_err *err)
{
	bool fell_back = false;
	int r, rc = 0;

	line[0] = '\0';
	for (r = ROLE_PRIMARY; r <= ROLE_FALLBACK; r++) {
		const struct agent_conf *a = &cfg->agents[r];

		confined[r] = false;
		if (!a->configured)
			continue;
		rc = sandbox_decide(&confined[r], h, &a->sandbox, a->name, err);
		if (rc < 0)
			goto out;
		if (h != NULL && !h->works &&
		    a->sandbox.enabled == SANDBOX_AUTO)
			fell_back = true;
	}
	if (fell_back)
		snprintf(line, len,
		    "sandbox: no sandbox can start here, agents run "
		    "unconfined: %s",
		    h->why);
out:
	return rc;
}

/* "~/x" against home, into a malloc'd path; NULL when home is unknown
 * or out of memory. */
static char *
home_path(const char *home, const char *rel)
{
	if (home == NULL || home[0] != '/')
		return NULL;
	if (strncmp(rel, "~/", 2) == 0)
		rel += 2;
	return fsutil_path_join(home, rel);
}

/* What the attempt's plan owns: the paths it names. */
struct plan_paths {
	struct confine_hide hide[HIDE_MAX];
	size_t nhide;
	struct strlist owned; /* every string above and below */
	const char *writable[HIDE_MAX + 16];
	size_t nwritable;
	char *shown_common;
};

/* Keep path (owned) in pp->owned; returns its copy or NULL. */
static const char *
own(struct plan_paths *pp, char *path)
{
	const char *s = NULL;

	if (path != NULL && strlist_push(&pp->owned, path) == 0)
		s = pp->owned.items[pp->owned.n - 1];
	free(path);
	return s;
}

/* Cover path when it exists, unless the tree or an opened path is it
 * or lies under it.  A symbolic link is covered where it leads (a
 * mount on a link lands on its target, and a file's /dev/null on a
 * directory would fail the sandbox): ~/.ssh -> /data/keys hides
 * /data/keys. */
static void
hide_if_there(struct plan_paths *pp, const struct sandbox_req *rq, char *path)
{
	const char *p;
	struct stat st;
	size_t i;

	p = own(pp, path != NULL ? realpath(path, NULL) : NULL);
	free(path);
	if (p == NULL || pp->nhide >= HIDE_MAX || stat(p, &st) < 0)
		return;
	if (confine_path_under(rq->tree, p))
		return;
	for (i = 0; i < rq->conf->readable.n; i++)
		if (strcmp(rq->conf->readable.items[i], p) == 0)
			return;
	pp->hide[pp->nhide].path = p;
	pp->hide[pp->nhide].is_dir = S_ISDIR(st.st_mode);
	pp->nhide++;
}

static void
plan_hide(struct plan_paths *pp, const struct sandbox_req *rq)
{
	char buf[PATH_MAX];
	const char *const *s;

	for (s = confine_home_secrets; *s != NULL && rq->home != NULL; s++)
		hide_if_there(pp, rq, home_path(rq->home, *s));
	for (s = confine_host_sockets; *s != NULL; s++) {
		const char *u = strstr(*s, "%u");

		if (u == NULL) {
			hide_if_there(pp, rq, strdup(*s));
			continue;
		}
		snprintf(buf, sizeof(buf), "%.*s%u%s", (int)(u - *s), *s,
		    (unsigned)getuid(), u + 2);
		hide_if_there(pp, rq, strdup(buf));
	}
}

/* The CLI's own state (~/.claude ...) made if missing, then writable;
 * then the user's writable paths.  A state path ending in '/' is a
 * directory to create; a file is opened only when it exists. */
static void
plan_writable(struct plan_paths *pp, const struct sandbox_req *rq)
{
	const struct preset *pr = presets_find(rq->preset);
	const char *const *s;
	const char *p;
	size_t i;

	for (s = pr != NULL ? pr->state_paths : NULL; s != NULL && *s != NULL;
	     s++) {
		p = own(pp, home_path(rq->home, *s));
		if (p == NULL || pp->nwritable >= HIDE_MAX)
			continue;
		if ((*s)[strlen(*s) - 1] == '/')
			fsutil_mkdir_parents(p, 0700, NULL);
		pp->writable[pp->nwritable++] = p;
	}
	for (i = 0; i < rq->conf->writable.n && pp->nwritable < HIDE_MAX + 16;
	     i++)
		pp->writable[pp->nwritable++] = rq->conf->writable.items[i];
}

/* Whether argv0 can be found where the agent would look: a program
 * that is not there is left to the ordinary spawn, which reports it as
 * it always has (docs/runner.md).  When it lies in /tmp or /var/tmp,
 * which the sandbox replaces, tops gets the entries under them that
 * hold it and where its links lead (confine_tmp_top(); at most 2). */
static bool
program_found(
    struct strlist *tops, const char *argv0, const struct strlist *env)
{
	char *path = NULL, *real = NULL, top[PATH_MAX];
	struct sc_err e = {0};
	size_t i;

	for (i = 0; env != NULL && i < env->n; i++)
		if (strncmp(env->items[i], "PATH=", 5) == 0)
			return true; /* its own PATH: bwrap searches it */
	if (argv_resolve_program(&path, argv0, &e) < 0)
		return false;
	real = realpath(path, NULL);
	if (confine_tmp_top(top, sizeof(top), path))
		(void)strlist_push(tops, top);
	if (real != NULL && confine_tmp_top(top, sizeof(top), real) &&
	    strlist_find(tops, top) < 0)
		(void)strlist_push(tops, top);
	free(real);
	free(path);
	return true;
}

/* The environment inside: temporary files and caches in the private
 * /tmp (docs/sandbox.md#inside), unless the agent's env sets them. */
static void
plan_env(const char **set, size_t cap, const struct strlist *env)
{
	static const char *const defaults[] = {"TMPDIR", "/tmp",
	    "XDG_CACHE_HOME", "/tmp/.cache", "npm_config_cache", "/tmp/.npm",
	    "CLAUDE_CODE_BUBBLEWRAP", "1", NULL};
	size_t i, j, n = 0, len;
	bool given;

	for (i = 0; defaults[i] != NULL && n + 3 < cap; i += 2) {
		len = strlen(defaults[i]);
		given = false;
		for (j = 0; env != NULL && j < env->n; j++)
			if (strncmp(env->items[j], defaults[i], len) == 0 &&
			    env->items[j][len] == '=')
				given = true;
		if (given)
			continue;
		set[n++] = defaults[i];
		set[n++] = defaults[i + 1];
	}
	set[n] = NULL;
}

int
sandbox_begin(struct sandbox_run *sr, struct strlist *argv,
    const struct sandbox_req *rq, struct sc_err *err)
{
	static const char *const unset[] = {"SSH_AUTH_SOCK", "GPG_AGENT_INFO",
	    "DBUS_SESSION_BUS_ADDRESS", NULL};
	struct plan_paths pp;
	struct confine_plan plan;
	struct strlist wrapped = {0};
	struct stat st;
	const char *setenv_[12];
	struct strlist tops = {0};
	int rc = 0;

	memset(sr, 0, sizeof(*sr));
	memset(&pp, 0, sizeof(pp));
	memset(&plan, 0, sizeof(plan));
	sr->seccomp_fd = -1;
	if (argv->n == 0 || !program_found(&tops, argv->items[0], rq->env))
		goto out;
	pp.shown_common = fsutil_path_join(rq->state_dir, SHOWN_COMMON);
	if (pp.shown_common == NULL) {
		rc = err_set(err, SC_EOS, "out of memory");
		goto out;
	}
	rc = gitsandbox_prepare(
	    &sr->gs, rq->tree, rq->private_dir, pp.shown_common, err);
	if (rc < 0)
		goto out;
	sr->has_git = true;
	rc = sandbox_bpf_fd(
	    &sr->seccomp_fd, rq->host->bpf, rq->host->bpf_len, err);
	if (rc < 0)
		goto out;
	plan_hide(&pp, rq);
	plan_writable(&pp, rq);
	plan_env(setenv_, sizeof(setenv_) / sizeof(setenv_[0]), rq->env);
	plan.bwrap = rq->host->bwrap;
	plan.tree = rq->tree;
	plan.cwd = rq->cwd;
	plan.state_dir = rq->state_dir;
	plan.private_git = sr->gs.private_dir;
	plan.gitdir = sr->gs.gitdir;
	plan.commondir = sr->gs.commondir;
	plan.shown_common = pp.shown_common;
	plan.hide = pp.hide;
	plan.nhide = pp.nhide;
	plan.readable = (const char *const *)rq->conf->readable.items;
	plan.nreadable = rq->conf->readable.n;
	plan.writable = pp.writable;
	plan.nwritable = pp.nwritable;
	plan.shown = rq->shown;
	plan.nshown = rq->nshown;
	plan.program_tops = (const char *const *)tops.items;
	plan.nprogram_tops = tops.n;
	plan.setenv = setenv_;
	plan.unsetenv = unset;
	plan.network = rq->conf->network;
	plan.var_tmp = stat("/var/tmp", &st) == 0 && S_ISDIR(st.st_mode);
	/* bubblewrap reads it as its descriptor 3 (runner_opts.keep_fd) */
	plan.seccomp_fd = 3;
	rc = confine_argv(
	    &wrapped, &plan, (const char *const *)argv->items, err);
	if (rc < 0)
		goto out;
	strlist_release(argv);
	*argv = wrapped;
	memset(&wrapped, 0, sizeof(wrapped));
out:
	if (rc < 0)
		sandbox_run_release(sr);
	strlist_release(&wrapped);
	strlist_release(&pp.owned);
	free(pp.shown_common);
	strlist_release(&tops);
	return rc;
}

int
sandbox_end(struct sandbox_run *sr, bool *moved, char *new_oid,
    const char *tree, struct sc_err *err)
{
	*moved = false;
	new_oid[0] = '\0';
	if (sr == NULL || !sr->has_git)
		return 0;
	return gitsandbox_collect(moved, new_oid, &sr->gs, tree, err);
}

void
sandbox_run_release(struct sandbox_run *sr)
{
	if (sr == NULL)
		return;
	/* a zeroed one holds no descriptor, not descriptor 0 */
	if (sr->seccomp_fd > 2)
		close(sr->seccomp_fd);
	if (sr->has_git)
		gitsandbox_release(&sr->gs);
	memset(sr, 0, sizeof(*sr));
	sr->seccomp_fd = -1;
}
