/* spawn.c - see spawn.h and docs/runner.md#starting-an-agent. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "controller/engine/agentenv.h"
#include "controller/engine/spawn.h"

/* execvp()'s search path when the environment has no PATH (glibc's
 * _CS_PATH). */
#define SPAWN_DEFAULT_PATH "/bin:/usr/bin"

/* What posix_spawn needs for every try, and the answer so far. */
struct spawn_ctx {
	const struct spawn_req *rq;
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	const char **sh_argv; /* "/bin/sh", the candidate, argv[1..] */
	int dir_fd; /* the agent's cwd, or AT_FDCWD */
	int keep_fd; /* a copy of rq->keep_fd above 3, or -1 */
	pid_t pid;
};

/* Move fd above the standard descriptors, so that the child's dup2() onto
 * 0, 1 and 2 cannot clobber one of its own sources. */
static int
spawn_fd_high(int fd)
{
	int nfd;

	if (fd < 0 || fd > 2)
		return fd;
	nfd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	close(fd);
	return nfd;
}

int
spawn_pipe(int *rd, int *wr, uint64_t *ino, struct sc_err *err)
{
	struct stat st;
	int pfd[2] = {-1, -1};
	int rc = 0, fl;

	*rd = *wr = -1;
	*ino = 0;
	if (pipe2(pfd, O_CLOEXEC) < 0) {
		rc = err_set(err, SC_EOS, "cannot set up the agent's pipes: %s",
		    strerror(errno));
		goto out;
	}
	pfd[0] = spawn_fd_high(pfd[0]);
	pfd[1] = spawn_fd_high(pfd[1]);
	if (pfd[0] < 0 || pfd[1] < 0 || fstat(pfd[1], &st) < 0) {
		rc = err_set(err, SC_EOS, "cannot set up the agent's pipes: %s",
		    strerror(errno));
		goto out;
	}
	/* Our end only: never blocking on it is what lets one loop serve
	 * every agent; the agent's end stays blocking. */
	fl = fcntl(pfd[0], F_GETFL);
	if (fl >= 0)
		fcntl(pfd[0], F_SETFL, fl | O_NONBLOCK);
	*rd = pfd[0];
	*wr = pfd[1];
	*ino = (uint64_t)st.st_ino;
	pfd[0] = pfd[1] = -1;
out:
	if (pfd[0] >= 0)
		close(pfd[0]);
	if (pfd[1] >= 0)
		close(pfd[1]);
	return rc;
}

/* Whether execvp() goes on to the next PATH element after this errno:
 * the file is not there, or not for us; anything else means it was
 * found and failed, which is the answer. */
static bool
spawn_next(int e)
{
	return e == EACCES || e == ENOENT || e == ESTALE || e == ENOTDIR ||
	    e == ENODEV || e == ETIMEDOUT;
}

/*
 * Execute candidate path: 0 with sc->pid set, or the errno execvp()
 * would see.  A candidate that is not there or that we may not execute is
 * not spawned: access() walks the same path with the same ids and
 * permission checks (noexec mounts included) as execve, and answers the
 * same ENOENT, ENOTDIR or EACCES, where a failed spawn costs a clone and
 * an exec (and under valgrind would not even be reported, spawn.h).
 */
static int
spawn_try(struct spawn_ctx *sc, const char *path)
{
	const struct spawn_req *rq = sc->rq;
	int e;

	if (faccessat(sc->dir_fd, path, X_OK, AT_EACCESS) < 0 &&
	    (errno == ENOENT || errno == ENOTDIR || errno == EACCES))
		return errno;
	e = posix_spawn(&sc->pid, path, &sc->fa, &sc->at,
	    (char *const *)rq->argv, rq->envp);
	if (e == ENOEXEC) {
		/* No #! line: glibc's execvp() hands the file to the shell
		 * (a file, never a command string); its posix_spawn does
		 * not. */
		sc->sh_argv[1] = path;
		e = posix_spawn(&sc->pid, sc->sh_argv[0], &sc->fa, &sc->at,
		    (char *const *)sc->sh_argv, rq->envp);
	}
	return e;
}

/* execvp() over argv[0] in the agent's PATH; returns 0 or the errno it
 * would have left. */
static int
spawn_search(struct spawn_ctx *sc)
{
	const char *file = sc->rq->argv[0];
	const char *path = NULL, *p = NULL, *end = NULL;
	size_t flen = strlen(file), dlen;
	char *cand = NULL;
	bool eacces = false;
	int e = ENOENT;

	if (flen == 0)
		goto out;
	if (strchr(file, '/') != NULL) {
		e = spawn_try(sc, file);
		goto out;
	}
	if (flen > NAME_MAX) {
		e = ENAMETOOLONG;
		goto out;
	}
	path = agentenv_value(sc->rq->envp, "PATH");
	if (path == NULL)
		path = SPAWN_DEFAULT_PATH;
	cand = malloc(strlen(path) + flen + 2);
	if (cand == NULL) {
		e = ENOMEM;
		goto out;
	}
	for (p = path; p != NULL; p = *end != '\0' ? end + 1 : NULL) {
		end = strchrnul(p, ':');
		dlen = (size_t)(end - p);
		/* glibc skips elements too long to be a path */
		if (dlen >= PATH_MAX)
			continue;
		/* an empty element is the agent's working directory */
		memcpy(cand, p, dlen);
		if (dlen > 0)
			cand[dlen++] = '/';
		memcpy(cand + dlen, file, flen + 1);
		e = spawn_try(sc, cand);
		if (e == 0 || !spawn_next(e))
			goto out;
		if (e == EACCES)
			eacces = true;
	}
	/* Every candidate missing, yet one refused: that one counts. */
	if (eacces)
		e = EACCES;
out:
	free(cand);
	return e;
}

/* The attributes and file actions of every try. */
static int
spawn_setup(struct spawn_ctx *sc, int devnull)
{
	sigset_t all, none;
	int e;

	sigfillset(&all);
	sigemptyset(&none);
	/* Its own group; default dispositions (an ignored SIGPIPE would
	 * otherwise survive the exec); nothing blocked. */
	e = posix_spawnattr_setflags(&sc->at,
	    POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF |
		POSIX_SPAWN_SETSIGMASK);
	if (e == 0)
		e = posix_spawnattr_setpgroup(&sc->at, 0);
	if (e == 0)
		e = posix_spawnattr_setsigdefault(&sc->at, &all);
	if (e == 0)
		e = posix_spawnattr_setsigmask(&sc->at, &none);
	if (e == 0)
		e = posix_spawn_file_actions_adddup2(
		    &sc->fa, sc->rq->in_fd > 2 ? sc->rq->in_fd : devnull, 0);
	if (e == 0)
		e = posix_spawn_file_actions_adddup2(
		    &sc->fa, sc->rq->out_fd, 1);
	if (e == 0)
		e = posix_spawn_file_actions_adddup2(
		    &sc->fa, sc->rq->out_fd, 2);
	if (e == 0 && sc->dir_fd != AT_FDCWD)
		e = posix_spawn_file_actions_addfchdir_np(&sc->fa, sc->dir_fd);
	/* keep_fd is above 3 (spawn_start() made sure), so the dup2()
	 * makes a descriptor 3 without close-on-exec */
	if (e == 0 && sc->keep_fd >= 0)
		e = posix_spawn_file_actions_adddup2(&sc->fa, sc->keep_fd, 3);
	/* Descriptors opened without O_CLOEXEC (by a library, say) must not
	 * leak into the agent: close all but 0, 1, 2 (and 3 when kept),
	 * after the fchdir. */
	if (e == 0)
		e = posix_spawn_file_actions_addclosefrom_np(
		    &sc->fa, sc->keep_fd >= 0 ? 4 : 3);
	return e;
}

/* Open the agent's working directory, and check it can be entered: a
 * repo root we cannot enter is the controller's problem, not a failed
 * exec of the agent. */
static int
spawn_open_cwd(int *fd, const struct spawn_req *rq, struct sc_err *err)
{
	*fd = AT_FDCWD;
	if (rq->cwd == NULL)
		return 0;
	*fd = spawn_fd_high(open(rq->cwd, O_PATH | O_DIRECTORY | O_CLOEXEC));
	if (*fd < 0 || faccessat(*fd, ".", X_OK, AT_EACCESS) < 0)
		return err_set(err, SC_EOS,
		    "cannot start agent %s: chdir %s: %s", rq->argv[0], rq->cwd,
		    strerror(errno));
	return 0;
}

/* What every try shares that comes from rq: the argv for the shell
 * (ENOEXEC), the working directory, the descriptor kept.  What it
 * opened or allocated is in sc, for the caller to release. */
static int
spawn_prepare(
    struct spawn_ctx *sc, const struct spawn_req *rq, struct sc_err *err)
{
	size_t argc = 0;
	int rc;

	if (rq->argv == NULL || rq->argv[0] == NULL || rq->out_fd <= 2)
		return err_set(err, SC_ESOFTWARE, "spawn: bad request");
	while (rq->argv[argc] != NULL)
		argc++;
	sc->sh_argv = calloc(argc + 2, sizeof(*sc->sh_argv));
	if (sc->sh_argv == NULL)
		return err_set(err, SC_EOS, "out of memory starting agent %s",
		    rq->argv[0]);
	sc->sh_argv[0] = "/bin/sh";
	memcpy(sc->sh_argv + 2, rq->argv + 1, argc * sizeof(char *));
	rc = spawn_open_cwd(&sc->dir_fd, rq, err);
	if (rc < 0)
		return rc;
	if (rq->keep_fd > 2) {
		sc->keep_fd = fcntl(rq->keep_fd, F_DUPFD_CLOEXEC, 4);
		if (sc->keep_fd < 0)
			return err_set(err, SC_EOS,
			    "cannot pass a descriptor to agent %s: %s",
			    rq->argv[0], strerror(errno));
	}
	return 0;
}

int
spawn_start(
    pid_t *pid, int *exec_errno, const struct spawn_req *rq, struct sc_err *err)
{
	struct spawn_ctx sc;
	bool fa_ok = false, at_ok = false;
	int devnull = -1, rc = 0, e;

	*pid = 0;
	*exec_errno = 0;
	memset(&sc, 0, sizeof(sc));
	sc.rq = rq;
	sc.dir_fd = AT_FDCWD;
	sc.keep_fd = -1;
	rc = spawn_prepare(&sc, rq, err);
	if (rc < 0)
		goto out;
	devnull = spawn_fd_high(open("/dev/null", O_RDONLY | O_CLOEXEC));
	if (devnull < 0) {
		rc = err_set(err, SC_EOS,
		    "cannot open /dev/null for the agent: %s", strerror(errno));
		goto out;
	}
	e = posix_spawn_file_actions_init(&sc.fa);
	fa_ok = e == 0;
	if (e == 0)
		e = posix_spawnattr_init(&sc.at);
	at_ok = fa_ok && e == 0;
	if (e == 0)
		e = spawn_setup(&sc, devnull);
	if (e != 0) {
		rc = err_set(err, SC_EOS,
		    "cannot set up the start of agent %s: %s", rq->argv[0],
		    strerror(e));
		goto out;
	}
	e = spawn_search(&sc);
	/* Out of memory or of processes: the system's problem, whether the
	 * clone or the exec found it. */
	if (e == ENOMEM || e == EAGAIN) {
		rc = err_set(err, SC_EOS, "cannot start agent %s: %s",
		    rq->argv[0], strerror(e));
		goto out;
	}
	if (e != 0)
		*exec_errno = e;
	else
		*pid = sc.pid;
out:
	if (at_ok)
		posix_spawnattr_destroy(&sc.at);
	if (fa_ok)
		posix_spawn_file_actions_destroy(&sc.fa);
	if (devnull >= 0)
		close(devnull);
	if (sc.dir_fd >= 0)
		close(sc.dir_fd);
	if (sc.keep_fd >= 0)
		close(sc.keep_fd);
	free(sc.sh_argv);
	return rc;
}
