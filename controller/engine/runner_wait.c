/* runner_wait.c - waiting for several supervised attempts at once from
 * one single-threaded loop: one poll() over every attempt's pipe and
 * pidfd, the wake fds and the watchdog's socket (runner.h, docs/runner.md,
 * docs/scheduling.md).  What one attempt does when looked at is
 * runner.c's. */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/param.h> /* MIN */
#include <unistd.h>

#include "controller/clock.h"
#include "controller/engine/runner.h"
#include "controller/engine/runner_proc.h"
#include "controller/engine/watchdog.h"

/* pollfds runner_wait() keeps on its stack (more are malloc'd). */
#define RUNNER_LOCAL_PFDS 16

/* Add fd to pf[from..nf) unless it is there already; returns the new nf. */
static size_t
pf_add_once(struct pollfd *pf, size_t nf, size_t from, int fd)
{
	size_t k;

	for (k = from; k < nf; k++)
		if (pf[k].fd == fd)
			return nf;
	pf[nf].fd = fd;
	pf[nf].events = POLLIN;
	pf[nf].revents = 0;
	return nf + 1;
}

/* A hung-up o->wake_fd would poll readable forever: stop polling it (the
 * 100 ms check of *stop takes over). */
static void
wake_hung_up(struct runner_proc *const *procs, size_t n, int fd)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (procs[i]->o->wake_fd == fd)
			procs[i]->wake_dead = true;
}

/* What runner_wait() polls in one pass: per attempt its pipe and pidfd,
 * then (from wbase) the wake fds, then the watchdog's socket (wdi, or
 * -1). */
struct wait_set {
	struct pollfd *pf;
	size_t nf;
	size_t wbase;
	int wdi;
};

/* Append fd (POLLIN) to ws; returns its index. */
static size_t
wait_add(struct wait_set *ws, int fd)
{
	ws->pf[ws->nf].fd = fd;
	ws->pf[ws->nf].events = POLLIN;
	ws->pf[ws->nf].revents = 0;
	return ws->nf++;
}

/* Fill ws for one poll; returns how long it may wait (ms, >= 0), the
 * nearest deadline of every attempt and of until. */
static int
wait_fill(struct wait_set *ws, struct runner_proc *const *procs, size_t n,
    int wake_fd, int64_t now, int64_t until)
{
	struct runner_proc *p;
	int64_t wait = until - now, due;
	size_t i;

	ws->nf = 0;
	for (i = 0; i < n; i++) {
		p = procs[i];
		due = runner_proc_deadline(p, now);
		wait = MIN(wait, due - now);
		p->pf_out = p->out_fd >= 0 ? (int)wait_add(ws, p->out_fd) : -1;
		/* Readable once the agent exits: the next pass reaps it. */
		if (p->pidfd >= 0)
			wait_add(ws, p->pidfd);
	}
	ws->wbase = ws->nf;
	for (i = 0; i < n; i++) {
		p = procs[i];
		if (p->o->stop != NULL && p->o->wake_fd >= 0 && !p->wake_dead)
			ws->nf = pf_add_once(
			    ws->pf, ws->nf, ws->wbase, p->o->wake_fd);
	}
	if (wake_fd >= 0)
		ws->nf = pf_add_once(ws->pf, ws->nf, ws->wbase, wake_fd);
	/* A watchdog that died (killed on its own) is replaced at once, and
	 * told about every live agent: while agents run, nothing else would
	 * end them if we died (watchdog.h). */
	ws->wdi =
	    n > 0 && watchdog_fd() >= 0 ? (int)wait_add(ws, watchdog_fd()) : -1;
	return wait < 0 ? 0 : wait > INT_MAX ? INT_MAX : (int)wait;
}

/* Act on what poll() found: a dead watchdog, output, wake fds.  Returns
 * whether runner_wait() should return (output read, a wake fd). */
static bool
wait_handle(struct wait_set *ws, struct runner_proc *const *procs, size_t n)
{
	struct runner_proc *p;
	struct pollfd *pf = ws->pf;
	char junk[256];
	size_t i, k, nwake = ws->nf;
	ssize_t got;
	bool moved = false;

	if (ws->wdi >= 0) {
		nwake = (size_t)ws->wdi; /* not a wake fd to drain */
		/* Best effort: when it cannot be replaced now, the next
		 * runner_start() reports why. */
		if (pf[ws->wdi].revents != 0)
			watchdog_ensure(NULL);
	}
	for (i = 0; i < n; i++) {
		p = procs[i];
		if (p->pf_out >= 0 && pf[p->pf_out].revents != 0 &&
		    runner_proc_read(p, 4))
			moved = true;
	}
	/* Drain the self-pipes; *stop is the truth, looked at in the next
	 * pass. */
	for (k = ws->wbase; k < nwake; k++) {
		if (pf[k].revents == 0)
			continue;
		moved = true;
		got = read(pf[k].fd, junk, sizeof(junk));
		if (got == 0 || (got < 0 && errno != EINTR && errno != EAGAIN))
			wake_hung_up(procs, n, pf[k].fd);
	}
	return moved;
}

/* runner_wait()'s arguments (runner.h): SC_ESOFTWARE when they make no
 * sense. */
static int
wait_check(struct runner_proc *const *procs, size_t n, int64_t timeout_ms,
    int wake_fd, struct sc_err *err)
{
	size_t i;

	if (n > 0 && procs == NULL)
		return err_set(
		    err, SC_ESOFTWARE, "runner: no attempts to wait for");
	for (i = 0; i < n; i++)
		if (procs[i] == NULL)
			return err_set(err, SC_ESOFTWARE,
			    "runner: attempt %zu to wait for is null", i);
	if (n == 0 && timeout_ms < 0 && wake_fd < 0)
		return err_set(
		    err, SC_ESOFTWARE, "runner: waiting for nothing, forever");
	/* Per attempt its pipe, its pidfd and its wake fd; wake_fd and the
	 * watchdog's socket. */
	if (n > (SIZE_MAX - 2) / 3 / sizeof(struct pollfd))
		return err_set(err, SC_ESOFTWARE, "runner: too many attempts");
	return 0;
}

/* Look at every attempt not done yet (runner.c): *moved set when one
 * moved on; returns how many are done. */
static int
wait_service(struct runner_proc *const *procs, size_t n, bool *moved)
{
	struct runner_proc *p;
	size_t i;
	int ndone = 0;

	for (i = 0; i < n; i++) {
		p = procs[i];
		if (p->phase != PHASE_DONE && runner_proc_service(p))
			*moved = true;
		if (p->phase == PHASE_DONE)
			ndone++;
	}
	return ndone;
}

/* One poll() until the nearest deadline, and what it found acted on:
 * *moved set when runner_wait() should return; SC_EOS when poll()
 * fails. */
static int
wait_poll(struct wait_set *ws, struct runner_proc *const *procs, size_t n,
    int wake_fd, int64_t now, int64_t until, bool *moved, struct sc_err *err)
{
	int pr, wait;

	wait = wait_fill(ws, procs, n, wake_fd, now, until);
	pr = poll(ws->pf, (nfds_t)ws->nf, wait);
	if (pr < 0 && errno == EINTR) {
		/* A signal: let the caller look at its flags. */
		*moved = true;
		return 0;
	}
	if (pr < 0)
		return err_set(
		    err, SC_EOS, "cannot poll the agents: %s", strerror(errno));
	/* pr == 0: a deadline, which the next pass acts on */
	if (pr > 0 && wait_handle(ws, procs, n))
		*moved = true;
	return 0;
}

int
runner_wait(struct runner_proc *const *procs, size_t n, int64_t timeout_ms,
    int wake_fd, struct sc_err *err)
{
	struct pollfd local[RUNNER_LOCAL_PFDS];
	struct wait_set ws = {.pf = local};
	int64_t now, until;
	int rc = 0, ndone = 0;
	bool moved = false;

	rc = wait_check(procs, n, timeout_ms, wake_fd, err);
	if (rc < 0)
		goto out;
	if (3 * n + 2 > RUNNER_LOCAL_PFDS) {
		ws.pf = calloc(3 * n + 2, sizeof(*ws.pf));
		if (ws.pf == NULL) {
			rc = err_set(err, SC_EOS,
			    "out of memory waiting for %zu agents", n);
			goto out;
		}
	}
	until = timeout_ms >= 0 ? clock_mono_ms() + timeout_ms : INT64_MAX;
	for (;;) {
		ndone = wait_service(procs, n, &moved);
		if (moved || ndone > 0)
			break;
		now = clock_mono_ms();
		if (now >= until)
			break;
		rc = wait_poll(&ws, procs, n, wake_fd, now, until, &moved, err);
		if (rc < 0)
			break;
	}
out:
	if (ws.pf != NULL && ws.pf != local)
		free(ws.pf);
	return rc < 0 ? rc : ndone;
}
