/* watchdog.c - see watchdog.h and
 * docs/runner.md#when-the-controller-dies. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdbool.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "controller/engine/pgroup.h"
#include "controller/engine/watchdog.h"

/* Groups (and spawns under way) one watchdog follows at once. */
#define WD_MAX 256
/* What it signals at the end: the groups, and for each spawn under way
 * the processes holding its pipe (one, the new agent, in practice). */
#define WD_TARGETS (2 * WD_MAX)
/* The longest grace it honours (ms). */
#define WD_GRACE_MAX 600000

enum { WD_UNWATCH = 0, WD_WATCH = 1 };
struct wd_rec {
	int32_t op;
	int32_t pgid;
	int32_t grace_ms;
	int32_t pad;
	uint64_t ino;
};

static int wd_fd = -1; /* our end of the socketpair */
static pid_t wd_pid = -1;
static pid_t wd_owner = -1; /* the process that started it */
static struct watchdog_entry *wd_list; /* the registered entries */
static pid_t wd_list_owner = -1;

/*
 * The watchdog process.  It is a fork of a controller that may have had
 * other threads, so it makes plain system calls only (async-signal-safe):
 * no stdio, no malloc, no opendir.
 */

/* Close every descriptor but keep. */
static void
wd_close_all_but(int keep)
{
	struct rlimit rl;
	rlim_t fd, lim = 65536;

#ifdef SYS_close_range
	if ((keep == 0 ||
		syscall(SYS_close_range, 0U, (unsigned)keep - 1, 0U) == 0) &&
	    syscall(SYS_close_range, (unsigned)keep + 1, ~0U, 0U) == 0)
		return;
#endif
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < lim)
		lim = rl.rlim_cur;
	for (fd = 0; fd < lim; fd++)
		if ((int)fd != keep)
			close((int)fd);
}

/* Append the decimal digits of v at s; returns the end. */
static char *
wd_utoa(char *s, uint64_t v)
{
	char d[24];
	int n = 0;

	do
		d[n++] = (char)('0' + v % 10);
	while ((v /= 10) != 0);
	while (n > 0)
		*s++ = d[--n];
	return s;
}

/* A /proc entry's name as a pid, or -1. */
static int
wd_pid_of(const char *name)
{
	int v = 0;

	if (*name < '1' || *name > '9')
		return -1;
	for (; *name >= '0' && *name <= '9'; name++) {
		if (v > 100000000)
			return -1;
		v = v * 10 + (*name - '0');
	}
	return *name == '\0' ? v : -1;
}

/* Whether process pid holds a descriptor whose link reads want. */
static bool
wd_holds(int pid, const char *want, size_t wlen)
{
	static char buf[8192];
	struct dirent64 *de;
	char path[48], link[64], *e;
	ssize_t got, l;
	long off;
	int fd;
	bool found = false;

	memcpy(path, "/proc/", 6);
	e = wd_utoa(path + 6, (uint64_t)pid);
	memcpy(e, "/fd", 4);
	fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return false;
	while (!found && (got = getdents64(fd, buf, sizeof(buf))) > 0) {
		for (off = 0; off < got && !found; off += de->d_reclen) {
			de = (struct dirent64 *)(buf + off);
			if (de->d_name[0] < '0' || de->d_name[0] > '9')
				continue;
			l = readlinkat(fd, de->d_name, link, sizeof(link));
			found =
			    l == (ssize_t)wlen && memcmp(link, want, wlen) == 0;
		}
	}
	close(fd);
	return found;
}

/*
 * The processes holding pipe ino, into out[0..max) (their count): a spawn
 * the controller died in.  Only the new agent can hold that pipe (it was
 * made for it, close-on-exec, right before the spawn); the dying
 * controller (ctl) may still, and is skipped: its group must not be hit.
 */
static int
wd_holders(int32_t *out, int max, uint64_t ino, pid_t ctl)
{
	static char buf[8192];
	struct dirent64 *de;
	char want[40], *e;
	ssize_t got;
	long off;
	int proc, pid, n = 0;

	memcpy(want, "pipe:[", 6);
	e = wd_utoa(want + 6, ino);
	*e++ = ']';
	proc = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (proc < 0)
		return 0;
	while (n < max && (got = getdents64(proc, buf, sizeof(buf))) > 0) {
		for (off = 0; off < got && n < max; off += de->d_reclen) {
			de = (struct dirent64 *)(buf + off);
			pid = wd_pid_of(de->d_name);
			if (pid <= 1 || pid == ctl || pid == getpid())
				continue;
			if (wd_holds(pid, want, (size_t)(e - want)))
				out[n++] = pid;
		}
	}
	close(proc);
	return n;
}

/* Signal target i: its group, and itself when it may not lead one yet
 * (a spawn under way: a child before its setpgid). */
static void
wd_signal(int32_t t, bool self, int sig)
{
	kill(-t, sig);
	if (self)
		kill(t, sig);
}

/* The controller is gone: end every group, and whatever holds the pipe of
 * a spawn under way. */
static void __attribute__((noreturn)) wd_finish(const int32_t *pg,
    const int32_t *grace, const uint64_t *ino, int n, pid_t ctl)
{
	static int32_t tgt[WD_TARGETS];
	static bool self[WD_TARGETS];
	struct timespec tick = {0, PGROUP_TICK_MS * 1000000L};
	int32_t wait_ms = 0, waited;
	int nt = 0, i, k, got, live;

	for (i = 0; i < n; i++) {
		if (grace[i] > wait_ms)
			wait_ms = grace[i];
		if (pg[i] > 1 && nt < WD_TARGETS) {
			tgt[nt] = pg[i];
			self[nt++] = false;
		} else if (pg[i] == 0) {
			got =
			    wd_holders(tgt + nt, WD_TARGETS - nt, ino[i], ctl);
			for (k = 0; k < got; k++)
				self[nt + k] = true;
			nt += got;
		}
	}
	for (i = 0; i < nt; i++)
		wd_signal(tgt[i], self[i], SIGTERM);
	/* Members reparented elsewhere may linger as zombies, which kill()
	 * still finds: then the full grace passes, which is harmless. */
	for (waited = 0; waited < wait_ms; waited += PGROUP_TICK_MS) {
		for (i = 0, live = 0; i < nt; i++)
			if (kill(-tgt[i], 0) == 0 ||
			    (self[i] && kill(tgt[i], 0) == 0))
				live++;
		if (live == 0)
			break;
		nanosleep(&tick, NULL);
	}
	for (i = 0; i < nt; i++)
		wd_signal(tgt[i], self[i], SIGKILL);
	_exit(0);
}

/* Leave the controller's session and its signals behind, keeping only
 * the socket sk. */
static void
wd_detach(int sk)
{
	struct sigaction sa;
	sigset_t none;
	int sig;

	/* A session (and so a process group) of its own: a kill of the
	 * controller's whole group (a terminal's kill of the job, kill -9
	 * -- -PGID) must not take the watchdog with it, or the agents would
	 * outlive both (test_watchdog.sh).  The parent also moves it into a
	 * group of its own right after the fork (then this setsid() fails,
	 * harmlessly): whichever runs first, it has left the controller's
	 * group before any agent starts. */
	setsid();
	/* Terminal and service signals are meant for the controller, which
	 * stops its agents itself; this process ends with it. */
	memset(&sa, 0, sizeof(sa));
	sigemptyset(&sa.sa_mask);
	for (sig = 1; sig < NSIG; sig++) {
		if (sig == SIGKILL || sig == SIGSTOP)
			continue;
		sa.sa_handler =
		    (sig == SIGINT || sig == SIGTERM || sig == SIGHUP ||
			sig == SIGQUIT || sig == SIGPIPE || sig == SIGTSTP ||
			sig == SIGTTIN || sig == SIGTTOU)
		    ? SIG_IGN
		    : SIG_DFL;
		sigaction(sig, &sa, NULL);
	}
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	prctl(PR_SET_NAME, "storyctl-watch", 0, 0, 0);
	wd_close_all_but(sk);
}

/* One record into the table of n watched groups: a watch adds its pipe
 * or updates it (a full table drops the new one), an unwatch removes it
 * (the last moved into its place). */
static void
wd_apply(const struct wd_rec *rec, int32_t *pg, int32_t *grace, uint64_t *ino,
    int *n)
{
	int i;

	for (i = 0; i < *n && ino[i] != rec->ino; i++)
		;
	if (rec->op == WD_WATCH && rec->pgid >= 0 && rec->pgid != 1) {
		if (i == *n && *n < WD_MAX)
			(*n)++;
		if (i < *n) {
			pg[i] = rec->pgid;
			grace[i] = rec->grace_ms;
			ino[i] = rec->ino;
		}
	} else if (rec->op == WD_UNWATCH && i < *n) {
		(*n)--;
		pg[i] = pg[*n];
		grace[i] = grace[*n];
		ino[i] = ino[*n];
	}
}

static void __attribute__((noreturn)) wd_main(int sk, pid_t ctl)
{
	static int32_t pg[WD_MAX], grace[WD_MAX];
	static uint64_t ino[WD_MAX];
	struct wd_rec rec;
	int n = 0;
	ssize_t got;

	wd_detach(sk);
	for (;;) {
		got = recv(sk, &rec, sizeof(rec), 0);
		if (got < 0 && errno == EINTR)
			continue;
		if (got != (ssize_t)sizeof(rec))
			break; /* 0: the controller is gone */
		wd_apply(&rec, pg, grace, ino, &n);
	}
	wd_finish(pg, grace, ino, n, ctl);
}

/* The controller's side. */

static void
wd_send(int op, const struct watchdog_entry *e)
{
	struct wd_rec rec;
	ssize_t w;

	if (wd_fd < 0 || wd_owner != getpid())
		return;
	memset(&rec, 0, sizeof(rec));
	rec.op = op;
	rec.pgid = e->pgid;
	rec.grace_ms = (int32_t)(e->grace_ms < 0 ? 0
		: e->grace_ms > WD_GRACE_MAX	 ? WD_GRACE_MAX
						 : e->grace_ms);
	rec.ino = e->pipe_ino;
	/* MSG_NOSIGNAL: a dead watchdog must not SIGPIPE the controller. */
	do
		w = send(wd_fd, &rec, sizeof(rec), MSG_NOSIGNAL);
	while (w < 0 && errno == EINTR);
}

/* The entries are the process's that registered them: a forked copy of
 * the controller must not adopt (or have its own watchdog kill) its
 * parent's agents. */
static void
wd_list_reset_if_inherited(void)
{
	if (wd_list_owner != getpid()) {
		wd_list = NULL;
		wd_list_owner = getpid();
	}
}

/*
 * Whether our watchdog still runs; a dead one is reaped.  Its end of the
 * socket hangs up as it exits, a little before it can be reaped: a hung-up
 * socket is a dead watchdog too (it never closes it otherwise), and it is
 * waited for, which is a matter of microseconds.
 */
static bool
wd_alive(void)
{
	struct pollfd pf = {.fd = wd_fd, .events = POLLIN};
	pid_t w;

	w = waitpid(wd_pid, NULL, WNOHANG);
	if (w != 0)
		return false; /* reaped now, or not ours any more */
	if (poll(&pf, 1, 0) <= 0 || (pf.revents & (POLLIN | POLLHUP)) == 0)
		return true;
	kill(wd_pid, SIGKILL);
	while (waitpid(wd_pid, NULL, 0) < 0 && errno == EINTR)
		;
	return false;
}

int
watchdog_fd(void)
{
	return wd_fd >= 0 && wd_owner == getpid() ? wd_fd : -1;
}

int
watchdog_ensure(struct sc_err *err)
{
	struct watchdog_entry *e = NULL;
	sigset_t all, old;
	int sv[2] = {-1, -1};
	pid_t pid, ctl = getpid();
	int rc = 0, fork_errno;

	if (wd_fd >= 0 && wd_owner == ctl && wd_alive())
		goto out;
	/* Dead, or inherited through a fork: that one is not ours (the
	 * parent keeps its own). */
	if (wd_fd >= 0)
		close(wd_fd);
	wd_fd = -1;
	wd_list_reset_if_inherited();
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) {
		rc = err_set(err, SC_EOS, "cannot start the watchdog: %s",
		    strerror(errno));
		goto out;
	}
	sigfillset(&all);
	sigprocmask(SIG_BLOCK, &all, &old);
	pid = fork();
	fork_errno = errno;
	if (pid == 0)
		wd_main(sv[1], ctl);
	if (pid > 0 && setpgid(pid, pid) < 0) {
		/* EPERM: it already made its own session (wd_main) */
	}
	sigprocmask(SIG_SETMASK, &old, NULL);
	close(sv[1]);
	if (pid < 0) {
		rc = err_set(err, SC_EOS, "cannot start the watchdog: %s",
		    strerror(fork_errno));
		close(sv[0]);
		goto out;
	}
	wd_fd = sv[0];
	wd_pid = pid;
	wd_owner = ctl;
	for (e = wd_list; e != NULL; e = e->next)
		wd_send(WD_WATCH, e);
out:
	return rc;
}

void
watchdog_add(struct watchdog_entry *e)
{
	wd_list_reset_if_inherited();
	e->next = wd_list;
	wd_list = e;
	e->on = true;
	wd_send(WD_WATCH, e);
}

void
watchdog_set_group(struct watchdog_entry *e, int pgid)
{
	e->pgid = pgid;
	if (e->on)
		wd_send(WD_WATCH, e);
}

void
watchdog_remove(struct watchdog_entry *e)
{
	struct watchdog_entry **pp;

	if (!e->on)
		return;
	e->on = false;
	wd_send(WD_UNWATCH, e);
	if (wd_list_owner != getpid())
		return;
	for (pp = &wd_list; *pp != NULL; pp = &(*pp)->next) {
		if (*pp == e) {
			*pp = e->next;
			break;
		}
	}
	e->next = NULL;
}
