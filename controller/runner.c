/* runner.c - see runner.h and docs/runner.md. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "controller/argv.h"
#include "controller/runner.h"

#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif

#define RUNNER_TAIL_DEFAULT ((size_t)64 * 1024)
#define RUNNER_CHUNK 65536
/* How long a group may take to vanish after SIGKILL before we give up
 * waiting (a process in uninterruptible sleep dies when it wakes). */
#define RUNNER_KILL_WAIT_MS 2000
/* Recheck period while waiting for a group to empty. */
#define RUNNER_GROUP_TICK_MS 20
/* pollfds runner_wait() keeps on its stack (more are malloc'd). */
#define RUNNER_LOCAL_PFDS 16

const char *const runner_scrubbed_env[] = {
    "CLAUDECODE", /* claude: refuses to nest */
    "CLAUDE_CODE_ENTRYPOINT", /* claude: the parent's entry */
    "CLAUDE_CODE_SSE_PORT", /* claude: the parent's IDE link */
    "CODEX_SANDBOX", /* codex: set inside its sandbox */
    "CODEX_SANDBOX_NETWORK_DISABLED", /* codex: claims no network */
    "CODEX_THREAD_ID", /* codex: the parent's thread */
    "GEMINI_CLI", /* gemini: set in its shell tool */
    NULL};

/* What the child reports over the status pipe when it cannot exec. */
enum spawn_stage { STAGE_EXEC = 1, STAGE_CHDIR, STAGE_SETUP };
struct spawn_msg {
	int stage;
	int err;
};

/* The stack the clone child runs on until it execs (it needs well under
 * a page; the rest is margin).  A guard page below it turns an overflow
 * into a SIGSEGV of the child instead of a write into our memory. */
#define RUNNER_SPAWN_STACK ((size_t)64 * 1024)
#if defined(__hppa__)
#error "runner.c: the clone child's stack is set up to grow down"
#endif
/* execvp()'s search path when the environment has no PATH (glibc's
 * _CS_PATH). */
#define RUNNER_DEFAULT_PATH "/bin:/usr/bin"

/*
 * What the child tries to exec, worked out by the parent before the
 * clone, because the child shares our memory and must not allocate: the
 * candidates execvp() would try, in its order.  One malloc'd block.
 */
struct spawn_plan {
	const char **paths; /* NULL-terminated; may be empty */
	/* For a file without #! that is not a binary (ENOEXEC): "/bin/sh",
	 * the candidate, argv[1..], NULL.  [1] is the one slot the child
	 * writes, to the candidate it tried; we never read it. */
	const char **sh_argv;
	int none_err; /* errno when there is no candidate at all */
	void *block;
};

/* Everything the clone child reads (it lives on our stack: the child
 * shares our memory and we are suspended until it execs or exits). */
struct spawn_child {
	const struct runner_opts *o;
	const struct spawn_plan *plan;
	char *const *envp;
	int devnull;
	int out_w;
	int status_w;
	pid_t parent;
};

/*
 * Functions that run in the clone child.  It runs on a stack that
 * AddressSanitizer does not know as one (it is mmap'd memory, not a
 * thread's stack), and it shares our shadow memory: instrumented code
 * there would poison and unpoison stack redzones in memory ASan thinks
 * is something else, and __asan_handle_no_return() warns that the stack
 * pointer is outside the thread's stack ("False positive error reports
 * may follow", google/sanitizers#189).  glibc's posix_spawn child is not
 * instrumented either; without ASan the attribute does nothing.
 */
#define CHILD_FN __attribute__((no_sanitize_address))

/* A ring of the last cap bytes of output. */
struct ring {
	char *buf;
	size_t cap;
	size_t pos; /* next write offset */
	size_t len; /* bytes held, <= cap */
};

/* Where an attempt stands. */
enum proc_phase {
	PHASE_RUNNING, /* the agent itself has not been reaped yet */
	PHASE_CLEARING, /* reaped; what it left in its group is ended */
	PHASE_DONE /* the group is gone; only the result is left */
};

/* One supervised attempt (runner.h). */
struct runner_proc {
	const struct runner_opts *o;
	struct runner_result r; /* filled as it goes; tail at finish */
	struct ring ring;
	struct runner_proc *live_next; /* the live list, for the watchdog */
	enum proc_phase phase;
	pid_t pid;
	int out_fd; /* read end of the output pipe, -1 once closed */
	int log_fd; /* -1 when there is no log */
	int pidfd; /* -1 when pidfd_open is unavailable */
	int pf_out; /* runner_wait(): index of out_fd in its pollfds */
	int64_t t0;
	int64_t last_activity;
	int64_t next_poll;
	int64_t kill_at; /* SIGKILL deadline once SIGTERM was sent */
	int64_t give_up; /* stop waiting for the group after SIGKILL */
	bool term_sent;
	bool kill_sent;
	bool have_token;
	bool wake_dead; /* o->wake_fd hung up: stop polling it */
	bool lost; /* someone else reaped our child */
	bool live; /* on the live list */
	int token;
	int wstatus;
};

static int64_t
runner_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void
runner_sleep_ms(int64_t ms)
{
	struct timespec ts;

	if (ms <= 0)
		return;
	ts.tv_sec = ms / 1000;
	ts.tv_nsec = (long)(ms % 1000) * 1000000;
	/* An interruption only shortens the wait: callers loop on time. */
	nanosleep(&ts, NULL);
}

static void
ring_add(struct ring *rg, const char *p, size_t n)
{
	size_t first;

	if (rg->cap == 0)
		return;
	if (n >= rg->cap) {
		memcpy(rg->buf, p + n - rg->cap, rg->cap);
		rg->pos = 0;
		rg->len = rg->cap;
		return;
	}
	first = rg->cap - rg->pos;
	if (first > n)
		first = n;
	memcpy(rg->buf + rg->pos, p, first);
	memcpy(rg->buf, p + first, n - first);
	rg->pos = (rg->pos + n) % rg->cap;
	rg->len = rg->len + n > rg->cap ? rg->cap : rg->len + n;
}

/* The ring's contents in order, NUL-terminated, malloc'd (NULL on OOM). */
static char *
ring_take(const struct ring *rg, size_t *len)
{
	char *s = NULL;
	size_t start;

	s = malloc(rg->len + 1);
	if (s == NULL)
		return NULL;
	if (rg->len < rg->cap) {
		memcpy(s, rg->buf, rg->len);
	} else {
		start = rg->pos;
		memcpy(s, rg->buf + start, rg->cap - start);
		memcpy(s + rg->cap - start, rg->buf, start);
	}
	s[rg->len] = '\0';
	*len = rg->len;
	return s;
}

/* Move fd above the standard descriptors, so that the child's dup2() onto
 * 0, 1 and 2 cannot clobber one of its own sources. */
static int
fd_high(int fd)
{
	int nfd;

	if (fd < 0 || fd > 2)
		return fd;
	nfd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	close(fd);
	return nfd;
}

static void
fd_close(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

static bool
env_is_named(const char *entry, const char *name, size_t len)
{
	return strncmp(entry, name, len) == 0 && entry[len] == '=';
}

static bool
env_scrubbed(const char *entry)
{
	size_t i;

	for (i = 0; runner_scrubbed_env[i] != NULL; i++)
		if (env_is_named(entry, runner_scrubbed_env[i],
			strlen(runner_scrubbed_env[i])))
			return true;
	return false;
}

/* Whether add[from..] sets the variable that entry sets. */
static bool
env_overridden(const char *entry, const struct strlist *add, size_t from)
{
	size_t len = strcspn(entry, "=");
	size_t i;

	if (add == NULL)
		return false;
	for (i = from; i < add->n; i++)
		if (env_is_named(add->items[i], entry, len))
			return true;
	return false;
}

/*
 * The child's environment: ours minus the scrubbed variables, with add
 * applied (a later entry wins).  The array is malloc'd; its strings are
 * borrowed from environ and add.
 */
int
runner_env_build(char ***out, const struct strlist *add, struct sc_err *err)
{
	char **env = NULL;
	size_t n = 0, k = 0, i;
	size_t nadd = add ? add->n : 0;
	int rc = 0;

	for (i = 0; add != NULL && i < add->n; i++) {
		if (add->items[i][0] == '=' ||
		    strchr(add->items[i], '=') == NULL) {
			rc = err_set(err, SC_EDATA,
			    "bad agent environment "
			    "entry \"%s\" (want KEY=VALUE)",
			    add->items[i]);
			goto out;
		}
	}
	while (environ != NULL && environ[n] != NULL)
		n++;
	env = calloc(n + nadd + 1, sizeof(*env));
	if (env == NULL) {
		rc = err_set(err, SC_EOS,
		    "out of memory building the agent "
		    "environment");
		goto out;
	}
	for (i = 0; i < n; i++) {
		if (env_scrubbed(environ[i]) ||
		    env_overridden(environ[i], add, 0))
			continue;
		env[k++] = environ[i];
	}
	for (i = 0; i < nadd; i++)
		if (!env_overridden(add->items[i], add, i + 1))
			env[k++] = add->items[i];
	env[k] = NULL;
	*out = env;
	env = NULL;
out:
	free(env);
	return rc;
}

/* The value of variable name in envp (the first one, as getenv()), or
 * NULL. */
static const char *
env_value(char *const *envp, const char *name)
{
	size_t len = strlen(name);
	size_t i;

	for (i = 0; envp[i] != NULL; i++)
		if (env_is_named(envp[i], name, len))
			return envp[i] + len + 1;
	return NULL;
}

static void
plan_release(struct spawn_plan *pl)
{
	free(pl->block);
	memset(pl, 0, sizeof(*pl));
}

/*
 * The candidates for argv[0], searched as glibc's execvp() searches:
 * none for "" (ENOENT); the name itself when it holds a '/'; none for a
 * name longer than NAME_MAX (ENAMETOOLONG); else "<dir>/<name>" for each
 * element of the agent's PATH (envp's, not ours; RUNNER_DEFAULT_PATH
 * when it has none), an empty element meaning "<name>" in the current
 * directory: the child's, which has chdir'd to o->cwd by then.  Elements
 * of PATH_MAX bytes or more are skipped, as glibc does.
 */
static int
plan_build(struct spawn_plan *pl, const char *const *argv, char *const *envp,
    struct sc_err *err)
{
	const char *file = argv[0];
	const char *path = NULL, *p = NULL, *e = NULL;
	size_t flen = strlen(file), argc = 0, ncand = 0, strsz = 0;
	size_t k = 0, dlen;
	char *s = NULL;
	int rc = 0;

	memset(pl, 0, sizeof(*pl));
	pl->none_err = ENOENT;
	while (argv[argc] != NULL)
		argc++;
	if (flen > 0 && strchr(file, '/') != NULL) {
		ncand = 1;
	} else if (flen > NAME_MAX) {
		pl->none_err = ENAMETOOLONG;
	} else if (flen > 0) {
		path = env_value(envp, "PATH");
		if (path == NULL)
			path = RUNNER_DEFAULT_PATH;
		ncand = 1;
		for (p = path; *p != '\0'; p++)
			if (*p == ':')
				ncand++;
		/* Every element, plus a '/', the name and its NUL. */
		strsz = strlen(path) + ncand * (flen + 2);
	}
	pl->block = malloc((ncand + 1 + argc + 2) * sizeof(char *) + strsz);
	if (pl->block == NULL) {
		rc = err_set(
		    err, SC_EOS, "out of memory looking up agent %s", file);
		goto out;
	}
	pl->paths = pl->block;
	pl->sh_argv = pl->paths + ncand + 1;
	s = (char *)(pl->sh_argv + argc + 2);
	if (path == NULL && ncand == 1)
		pl->paths[k++] = file;
	for (p = path; p != NULL; p = *e != '\0' ? e + 1 : NULL) {
		e = strchrnul(p, ':');
		dlen = (size_t)(e - p);
		if (dlen >= PATH_MAX)
			continue;
		pl->paths[k++] = s;
		memcpy(s, p, dlen);
		s += dlen;
		if (dlen > 0)
			*s++ = '/';
		memcpy(s, file, flen + 1);
		s += flen + 1;
	}
	pl->paths[k] = NULL;
	pl->sh_argv[0] = "/bin/sh";
	pl->sh_argv[1] = NULL;
	memcpy(pl->sh_argv + 2, argv + 1, argc * sizeof(char *));
out:
	if (rc < 0)
		plan_release(pl);
	return rc;
}

static void CHILD_FN __attribute__((noreturn))
child_fail(int status_w, int stage, int e)
{
	struct spawn_msg m;
	ssize_t w;

	m.stage = stage;
	m.err = e;
	do
		w = write(status_w, &m, sizeof(m));
	while (w < 0 && errno == EINTR);
	_exit(127);
}

/* Mark every descriptor from 3 up close-on-exec (the status pipe already
 * is), so nothing of the controller leaks into the agent. */
static void CHILD_FN
child_cloexec_all(void)
{
	struct rlimit rl;
	rlim_t fd, lim = 65536;

#ifdef SYS_close_range
	if (syscall(SYS_close_range, 3U, ~0U, CLOSE_RANGE_CLOEXEC) == 0)
		return;
#endif
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < lim)
		lim = rl.rlim_cur;
	for (fd = 3; fd < lim; fd++)
		fcntl((int)fd, F_SETFD, FD_CLOEXEC);
}

/* Whether execvp() goes on to the next PATH element after this errno:
 * the file is not there, or not for us; anything else means it was
 * found and failed, which is the answer. */
static bool CHILD_FN
child_exec_next(int e)
{
	return e == EACCES || e == ENOENT || e == ESTALE || e == ENOTDIR ||
	    e == ENODEV || e == ETIMEDOUT;
}

/* execvp() over the candidates the parent prepared; when none runs,
 * reports the errno execvp() would have left. */
static void CHILD_FN __attribute__((noreturn))
child_exec_plan(const struct spawn_child *c)
{
	const struct spawn_plan *pl = c->plan;
	char *const *argv = (char *const *)c->o->argv;
	size_t i;
	int e = pl->none_err;
	bool eacces = false;

	for (i = 0; pl->paths[i] != NULL; i++) {
		execve(pl->paths[i], argv, c->envp);
		e = errno;
		if (e == ENOEXEC) {
			/* No #! line: glibc's execvp() hands the file to
			 * the shell (a file, never a command string). */
			pl->sh_argv[1] = pl->paths[i];
			execve(pl->sh_argv[0], (char *const *)pl->sh_argv,
			    c->envp);
			e = errno;
		}
		if (!child_exec_next(e))
			break;
		if (e == EACCES)
			eacces = true;
	}
	/* Every candidate missing, yet one refused: that one counts. */
	if (pl->paths[i] == NULL && eacces)
		e = EACCES;
	child_fail(c->status_w, STAGE_EXEC, e);
}

/*
 * The clone child, between clone and exec.  It shares our memory
 * (CLONE_VM) while we are suspended (CLONE_VFORK), so it allocates
 * nothing, writes no memory of ours but its own stack, plan->sh_argv[1]
 * and errno (ours too: the same thread pointer; we look at errno only
 * where the child cannot have run), and makes only async-signal-safe
 * calls that are plain system calls.  In particular it must not assign
 * environ: the agent's environment goes to execve() directly.
 */
static int CHILD_FN
child_main(void *arg)
{
	const struct spawn_child *c = arg;
	struct sigaction sa;
	sigset_t none;
	int sig;

	/* Dispositions first, then the mask: a signal pending on unblock
	 * must not run a handler of the controller, here in its memory.
	 * Without CLONE_SIGHAND the child has its own copy of the handler
	 * table (clone(2): "Calls to sigaction(2) performed later by one of
	 * the processes have no effect on the other process"), so this
	 * leaves the controller's handlers alone; the mask is per thread
	 * anyway. */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_DFL;
	sigemptyset(&sa.sa_mask);
	for (sig = 1; sig < NSIG; sig++)
		if (sig != SIGKILL && sig != SIGSTOP)
			sigaction(sig, &sa, NULL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);

	setpgid(0, 0);
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0)
		child_fail(c->status_w, STAGE_SETUP, errno);
	/* The controller may have died before PDEATHSIG was armed: then
	 * nobody would kill us, so do not start at all. */
	if (getppid() != c->parent)
		_exit(127);

	if (dup2(c->devnull, 0) < 0 || dup2(c->out_w, 1) < 0 ||
	    dup2(c->out_w, 2) < 0)
		child_fail(c->status_w, STAGE_SETUP, errno);
	child_cloexec_all();
	if (c->o->cwd != NULL && chdir(c->o->cwd) < 0)
		child_fail(c->status_w, STAGE_CHDIR, errno);
	child_exec_plan(c);
}

/* A stack for the clone child, with a guard page at its low end; NULL
 * with errno set on failure.  Free with spawn_stack_free(). */
static char *
spawn_stack_new(size_t *guard)
{
	long pg = sysconf(_SC_PAGESIZE);
	void *m;

	*guard = pg > 0 ? (size_t)pg : 4096;
	m = mmap(NULL, *guard + RUNNER_SPAWN_STACK, PROT_READ | PROT_WRITE,
	    MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
	if (m == MAP_FAILED)
		return NULL;
	/* Best effort: without the guard it is still a stack. */
	mprotect(m, *guard, PROT_NONE);
	return m;
}

static void
spawn_stack_free(char *stack, size_t guard)
{
	if (stack != NULL)
		munmap(stack, guard + RUNNER_SPAWN_STACK);
}

/* Read one /proc/PID/stat: state, process group and start time. */
static int
proc_stat(int pid, char *state, int *pgrp, uint64_t *start)
{
	char path[64], buf[1024];
	char *p = NULL, *end = NULL;
	ssize_t n;
	int fd, i, rc = -1;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	do
		n = read(fd, buf, sizeof(buf) - 1);
	while (n < 0 && errno == EINTR);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	/* comm may hold spaces and ')': the last ')' ends it. */
	p = strrchr(buf, ')');
	if (p == NULL || p[1] != ' ' || p[2] == '\0')
		goto out;
	p += 2;
	if (state != NULL)
		*state = *p;
	/* Fields after comm: 3 state, 4 ppid, 5 pgrp, ... 22 starttime. */
	for (i = 3; i < 22 && p != NULL; i++) {
		if (i == 5 && pgrp != NULL)
			*pgrp = (int)strtol(p, NULL, 10);
		p = strchr(p, ' ');
		if (p != NULL)
			p++;
	}
	if (p == NULL)
		goto out;
	if (start != NULL) {
		*start = strtoull(p, &end, 10);
		if (end == p)
			goto out;
	}
	rc = 0;
out:
	return rc;
}

/* Whether a live (non-zombie) process is in group pgid. */
static bool
group_alive(int pgid)
{
	struct dirent *de = NULL;
	DIR *d = NULL;
	char state = 0;
	int pgrp = 0;
	bool alive = false;

	if (kill(-pgid, 0) < 0 && errno == ESRCH)
		return false;
	/* kill() also finds zombies, which no signal can end: look closer. */
	d = opendir("/proc");
	if (d == NULL)
		return true;
	while (!alive && (de = readdir(d)) != NULL) {
		if (de->d_name[0] < '1' || de->d_name[0] > '9')
			continue;
		if (proc_stat(atoi(de->d_name), &state, &pgrp, NULL) < 0)
			continue;
		if (pgrp == pgid && state != 'Z' && state != 'X')
			alive = true;
	}
	closedir(d);
	return alive;
}

/* Reap the exited members of group pgid that are our children (the
 * subreaper makes the agent's orphans ours). */
static void
group_reap(int pgid)
{
	siginfo_t si;

	for (;;) {
		memset(&si, 0, sizeof(si));
		if (waitid(P_PGID, (id_t)pgid, &si, WEXITED | WNOHANG) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (si.si_pid == 0)
			break;
	}
}

static int64_t
min64(int64_t a, int64_t b)
{
	return a < b ? a : b;
}

/* Wait until group pgid has no live member (0) or the deadline passes
 * (-1), reaping the members that are our children on the way. */
static int
group_wait(int pgid, int64_t deadline)
{
	int rc = 0;

	for (;;) {
		group_reap(pgid);
		if (!group_alive(pgid))
			break;
		if (runner_now() >= deadline) {
			rc = -1;
			break;
		}
		runner_sleep_ms(
		    min64(RUNNER_GROUP_TICK_MS, deadline - runner_now()));
	}
	/* A member may have become a zombie after the reap above. */
	group_reap(pgid);
	return rc;
}

/*
 * The watchdog.  PR_SET_PDEATHSIG reaches only the agent itself, not what
 * it started, so a controller killed with SIGKILL would leave the agent's
 * grandchildren running.  One small helper process per controller, forked
 * (no exec) on first use, holds one end of a socketpair: the controller
 * tells it which groups are live, and when the controller dies, however
 * it dies, the kernel closes the other end, and the watchdog terminates
 * those groups (SIGTERM, the grace, SIGKILL) and exits.  When the
 * controller exits normally no group is live and it simply exits.  It
 * runs in its own session, so that killing the controller's whole
 * process group leaves it alive to do that (docs/runner.md).
 */
#define WD_MAX 256
enum { WD_UNWATCH = 0, WD_WATCH = 1 };
struct wd_rec {
	int32_t op;
	int32_t pgid;
	int32_t grace_ms;
};

static int wd_fd = -1; /* our end of the socketpair */
static pid_t wd_pid = -1;
static pid_t wd_owner = -1; /* the process that started it */

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

/* The watchdog process: async-signal-safe calls only (it is a fork of a
 * controller that may have had other threads). */
static void __attribute__((noreturn)) wd_main(int sk)
{
	static int32_t pg[WD_MAX], grace[WD_MAX];
	struct wd_rec rec;
	struct sigaction sa;
	struct timespec tick = {0, RUNNER_GROUP_TICK_MS * 1000000L};
	sigset_t none;
	int32_t wait_ms = 0, waited;
	int n = 0, i, sig, live;
	ssize_t got;

	/* A session (and so a process group) of its own: a kill of the
	 * controller's whole group (a terminal's kill of the job, kill -9
	 * -- -PGID) must not take the watchdog with it, or the agents'
	 * grandchildren would outlive both (test_watchdog.sh).  The parent
	 * also moves it into a group of its own right after the fork (then
	 * this setsid() fails, harmlessly): whichever runs first, it has
	 * left the controller's group before any agent starts. */
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

	for (;;) {
		got = recv(sk, &rec, sizeof(rec), 0);
		if (got < 0 && errno == EINTR)
			continue;
		if (got != (ssize_t)sizeof(rec))
			break; /* 0: the controller is gone */
		for (i = 0; i < n && pg[i] != rec.pgid; i++)
			;
		if (rec.op == WD_WATCH && rec.pgid > 1) {
			if (i == n && n < WD_MAX)
				n++;
			if (i < n) {
				pg[i] = rec.pgid;
				grace[i] = rec.grace_ms;
			}
		} else if (rec.op == WD_UNWATCH && i < n) {
			pg[i] = pg[n - 1];
			grace[i] = grace[n - 1];
			n--;
		}
	}
	for (i = 0; i < n; i++) {
		kill(-pg[i], SIGTERM);
		if (grace[i] > wait_ms)
			wait_ms = grace[i];
	}
	/* Members reparented elsewhere may linger as zombies, which kill()
	 * still finds: then the full grace passes, which is harmless. */
	for (waited = 0; waited < wait_ms; waited += RUNNER_GROUP_TICK_MS) {
		for (i = 0, live = 0; i < n; i++)
			if (kill(-pg[i], 0) == 0)
				live++;
		if (live == 0)
			break;
		nanosleep(&tick, NULL);
	}
	for (i = 0; i < n; i++)
		kill(-pg[i], SIGKILL);
	_exit(0);
}

static void
wd_send(int op, int pgid, int64_t grace_ms)
{
	struct wd_rec rec;
	ssize_t w;

	if (wd_fd < 0 || wd_owner != getpid())
		return;
	if (grace_ms < 0)
		grace_ms = 0;
	if (grace_ms > 600000)
		grace_ms = 600000;
	rec.op = op;
	rec.pgid = pgid;
	rec.grace_ms = (int32_t)grace_ms;
	/* MSG_NOSIGNAL: a dead watchdog must not SIGPIPE the controller. */
	do
		w = send(wd_fd, &rec, sizeof(rec), MSG_NOSIGNAL);
	while (w < 0 && errno == EINTR);
}

/*
 * The attempts whose group may still be live, so that a replacement
 * watchdog can be told about all of them.  Owned by the process that
 * started them: a forked copy of the controller must not adopt (or have
 * its own watchdog kill) its parent's agents.
 */
static struct runner_proc *live_list;
static pid_t live_owner = -1;

static void
live_reset_if_inherited(void)
{
	if (live_owner != getpid()) {
		live_list = NULL;
		live_owner = getpid();
	}
}

static void
live_add(struct runner_proc *p)
{
	live_reset_if_inherited();
	p->live_next = live_list;
	live_list = p;
	p->live = true;
	wd_send(WD_WATCH, p->pid, p->o->kill_grace_ms);
}

static void
live_remove(struct runner_proc *p)
{
	struct runner_proc **pp;

	if (!p->live)
		return;
	p->live = false;
	wd_send(WD_UNWATCH, p->pid, 0);
	if (live_owner != getpid())
		return;
	for (pp = &live_list; *pp != NULL; pp = &(*pp)->live_next) {
		if (*pp == p) {
			*pp = p->live_next;
			break;
		}
	}
	p->live_next = NULL;
}

/* Start the watchdog unless ours is running, and tell a new one about
 * every live group.  Best effort: without it, PDEATHSIG still ends the
 * agents themselves. */
static void
wd_ensure(void)
{
	struct runner_proc *p = NULL;
	sigset_t all, old;
	int sv[2] = {-1, -1};
	pid_t pid;

	if (wd_fd >= 0 && wd_owner == getpid() &&
	    waitpid(wd_pid, NULL, WNOHANG) == 0)
		return;
	/* Dead, or inherited through a fork: that one is not ours (the
	 * parent keeps its own). */
	if (wd_fd >= 0)
		close(wd_fd);
	wd_fd = -1;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		return;
	sigfillset(&all);
	sigprocmask(SIG_BLOCK, &all, &old);
	pid = fork();
	if (pid == 0)
		wd_main(sv[1]);
	if (pid > 0 && setpgid(pid, pid) < 0) {
		/* EPERM: it already made its own session (wd_main) */
	}
	sigprocmask(SIG_SETMASK, &old, NULL);
	close(sv[1]);
	if (pid < 0) {
		close(sv[0]);
		return;
	}
	wd_fd = sv[0];
	wd_pid = pid;
	wd_owner = getpid();
	live_reset_if_inherited();
	for (p = live_list; p != NULL; p = p->live_next)
		wd_send(WD_WATCH, p->pid, p->o->kill_grace_ms);
}

static int
proc_pidfd(pid_t pid)
{
#ifdef SYS_pidfd_open
	/* Kernels before 5.3 (and valgrind) lack it: ask only once. */
	static bool unsupported;
	int fd;

	if (unsupported)
		return -1;
	fd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (fd < 0 && errno == ENOSYS)
		unsupported = true;
	return fd;
#else
	(void)pid;
	return -1;
#endif
}

static void
proc_signal(struct runner_proc *p, int sig)
{
	int64_t now = runner_now();

	/* Negative pid: the whole group, grandchildren included.  Never the
	 * bare pid: once reaped, that number may be someone else's (the
	 * group id is not reused while any member lives). */
	kill(-p->pid, sig);
	if (sig == SIGKILL) {
		p->kill_sent = true;
		p->give_up = now + RUNNER_KILL_WAIT_MS;
	}
	if (!p->term_sent) {
		p->term_sent = true;
		p->kill_at =
		    now + (p->o->kill_grace_ms > 0 ? p->o->kill_grace_ms : 0);
	}
}

static void
proc_log(struct runner_proc *p, const char *buf, size_t n)
{
	ssize_t w;

	if (p->log_fd < 0)
		return;
	while (n > 0) {
		w = write(p->log_fd, buf, n);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			/* Keep the agent running; report it afterwards.  A
			 * later chunk may fit again once space is freed. */
			if (p->r.log_errno == 0)
				p->r.log_errno = errno;
			return;
		}
		buf += w;
		n -= (size_t)w;
	}
}

/*
 * Read what the pipe holds now, at most max_chunks reads, so that a
 * flooding agent cannot starve the others.  Returns whether anything
 * was read or the pipe ended (EOF or an error closes it).
 */
static bool
proc_read(struct runner_proc *p, int max_chunks)
{
	char buf[RUNNER_CHUNK];
	ssize_t n;
	int i;
	bool moved = false;

	for (i = 0; i < max_chunks && p->out_fd >= 0; i++) {
		n = read(p->out_fd, buf, sizeof(buf));
		if (n > 0) {
			proc_log(p, buf, (size_t)n);
			ring_add(&p->ring, buf, (size_t)n);
			p->r.output_bytes += (uint64_t)n;
			p->last_activity = runner_now();
			moved = true;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			break;
		fd_close(&p->out_fd); /* EOF, or a read error */
		moved = true;
	}
	return moved;
}

/* Act on *stop.  running: the agent itself still runs, so a stop marks
 * the attempt interrupted (not when only its leftovers are cleared).
 * Returns whether a signal went out. */
static bool
proc_check_stop(struct runner_proc *p, bool running)
{
	int st;

	if (p->o->stop == NULL)
		return false;
	st = *p->o->stop;
	if (st <= 0)
		return false;
	if (running)
		p->r.interrupted = true;
	if (st >= 2 && !p->kill_sent) {
		proc_signal(p, SIGKILL);
		return true;
	}
	if (!p->term_sent) {
		proc_signal(p, SIGTERM);
		return true;
	}
	return false;
}

/* The group is gone (or given up on): take what is still buffered and
 * release the descriptors.  The read is bounded: a descendant that left
 * the group (setsid) may still hold the pipe and write to it. */
static void
proc_done(struct runner_proc *p)
{
	group_reap(p->pid);
	proc_read(p, 16);
	fd_close(&p->out_fd);
	fd_close(&p->log_fd);
	fd_close(&p->pidfd);
	live_remove(p);
	p->phase = PHASE_DONE;
}

/* The agent itself has been reaped (or lost to someone else's wait). */
static void
proc_exited(struct runner_proc *p)
{
	p->r.duration_ms = runner_now() - p->t0;
	if (p->lost) {
		p->r.exit_code = -1;
	} else if (WIFSIGNALED(p->wstatus)) {
		p->r.exit_code = -1;
		p->r.term_signal = WTERMSIG(p->wstatus);
	} else {
		p->r.exit_code = WEXITSTATUS(p->wstatus);
	}
	fd_close(&p->pidfd);
	p->phase = PHASE_CLEARING;
}

/*
 * The agent has exited.  Whatever else is left in its group (a
 * grandchild holding the pipe, a detached helper) is terminated now,
 * SIGTERM then SIGKILL after the grace; we never wait for EOF on the
 * pipe, which such a process may hold forever.  Returns whether the
 * attempt moved on.
 */
static bool
proc_clear(struct runner_proc *p)
{
	int64_t now;
	bool moved;

	group_reap(p->pid);
	if (!group_alive(p->pid)) {
		proc_done(p);
		return true;
	}
	moved = proc_check_stop(p, false);
	now = runner_now();
	if (!p->term_sent) {
		proc_signal(p, SIGTERM);
		moved = true;
	} else if (!p->kill_sent && now >= p->kill_at) {
		proc_signal(p, SIGKILL);
		moved = true;
	}
	if (p->kill_sent && now >= p->give_up) {
		/* Uninterruptible sleep, or gone out of our sight: it
		 * dies when it wakes; the watchdog no longer waits. */
		proc_done(p);
		moved = true;
	}
	return moved;
}

/*
 * One look at a live attempt: *stop, on_poll, the deadlines, the exit of
 * the agent, the state of its group.  Returns whether anything happened
 * (a callback, a signal, an exit): runner_wait() then returns.
 */
static bool
proc_service(struct runner_proc *p)
{
	const struct runner_opts *o = p->o;
	int64_t now = runner_now();
	bool moved = false;
	pid_t w;
	int tok;

	if (p->phase == PHASE_RUNNING) {
		moved = proc_check_stop(p, true);
		if (o->on_poll != NULL && now >= p->next_poll) {
			tok = o->on_poll(o->ctx, now - p->t0, p->pid);
			if (p->have_token && tok != p->token)
				p->last_activity = now;
			p->token = tok;
			p->have_token = true;
			p->next_poll = now +
			    (o->poll_interval_ms > 0 ? o->poll_interval_ms
						     : 1000);
			moved = true;
		}
		if (!p->term_sent && o->timeout_ms > 0 &&
		    now - p->t0 >= o->timeout_ms) {
			p->r.timed_out = true;
			proc_signal(p, SIGTERM);
			moved = true;
		} else if (!p->term_sent && o->stall_timeout_ms > 0 &&
		    now - p->last_activity >= o->stall_timeout_ms) {
			p->r.stalled = true;
			proc_signal(p, SIGTERM);
			moved = true;
		}
		if (p->term_sent && !p->kill_sent && now >= p->kill_at) {
			proc_signal(p, SIGKILL);
			moved = true;
		}
		/* Only our own child, by pid: never waitpid(-1), the
		 * controller has other children. */
		do
			w = waitpid(p->pid, &p->wstatus, WNOHANG);
		while (w < 0 && errno == EINTR);
		if (w == p->pid || w < 0) {
			/* ECHILD: reaped behind our back (a waitpid(-1)
			 * elsewhere); the status is lost. */
			p->lost = w < 0;
			proc_exited(p);
			moved = true;
		}
	}
	if (p->phase == PHASE_CLEARING && proc_clear(p))
		moved = true;
	return moved;
}

/* Whether *stop can change without o->wake_fd telling us. */
static bool
proc_stop_unsignalled(const struct runner_proc *p)
{
	return p->o->stop != NULL && (p->o->wake_fd < 0 || p->wake_dead);
}

/* The time (CLOCK_MONOTONIC ms) by which proc_service() must look at a
 * live attempt again, output and exit aside.  Keep in step with
 * proc_service() and proc_clear(): a deadline they do not act on would
 * make runner_wait() spin. */
static int64_t
proc_deadline(const struct runner_proc *p, int64_t now)
{
	const struct runner_opts *o = p->o;
	int64_t d;

	if (p->phase == PHASE_CLEARING) {
		d = now + RUNNER_GROUP_TICK_MS;
		if (p->term_sent && !p->kill_sent)
			d = min64(d, p->kill_at);
		if (p->kill_sent)
			d = min64(d, p->give_up);
		return d;
	}
	/* A safety net only: exits and output wake poll() by themselves. */
	d = now + 1000;
	if (o->on_poll != NULL)
		d = min64(d, p->next_poll);
	if (!p->term_sent && o->timeout_ms > 0)
		d = min64(d, p->t0 + o->timeout_ms);
	if (!p->term_sent && o->stall_timeout_ms > 0)
		d = min64(d, p->last_activity + o->stall_timeout_ms);
	if (p->term_sent && !p->kill_sent)
		d = min64(d, p->kill_at);
	if (p->pidfd < 0)
		d = min64(d, now + 50); /* no pidfd: look for the exit */
	if (proc_stop_unsignalled(p))
		d = min64(d, now + 100);
	return d;
}

static void
proc_note_spawn_failure(struct runner_proc *p, int e)
{
	char line[512];
	int n;

	n = snprintf(line, sizeof(line), "storyctl: cannot execute %s: %s\n",
	    p->o->argv[0],
	    p->r.spawn_detail[0] != '\0' ? p->r.spawn_detail : strerror(e));
	if (n < 0)
		return;
	if ((size_t)n >= sizeof(line))
		n = (int)sizeof(line) - 1;
	proc_log(p, line, (size_t)n);
	ring_add(&p->ring, line, (size_t)n);
}

static int
proc_open_log(int *fd, const char *path, struct sc_err *err)
{
	struct stat st;

	*fd = -1;
	if (path == NULL)
		return 0;
	*fd = open(
	    path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (*fd < 0)
		return err_set(err, SC_EIO, "cannot open agent log %s: %s",
		    path, strerror(errno));
	/* An existing file keeps its mode on open: agent output may hold
	 * secrets, so make it private either way (a device such as
	 * /dev/null is left alone). */
	if (fstat(*fd, &st) == 0 && S_ISREG(st.st_mode) &&
	    fchmod(*fd, 0600) < 0) {
		close(*fd);
		*fd = -1;
		return err_set(err, SC_EIO, "cannot chmod agent log %s: %s",
		    path, strerror(errno));
	}
	return 0;
}

/* Release everything p holds; NULL is a no-op. */
static void
proc_free(struct runner_proc *p)
{
	if (p == NULL)
		return;
	live_remove(p);
	fd_close(&p->out_fd);
	fd_close(&p->log_fd);
	fd_close(&p->pidfd);
	free(p->ring.buf);
	free(p);
}

/* Supervise p alone until it is done (blocking). */
static void
proc_settle(struct runner_proc *p)
{
	struct runner_proc *one[1];

	one[0] = p;
	while (p->phase != PHASE_DONE) {
		if (runner_wait(one, 1, -1, -1, NULL) >= 0)
			continue;
		/* Cannot happen for one attempt (no allocation); still,
		 * never leave the group behind: end it bluntly. */
		if (!p->kill_sent)
			proc_signal(p, SIGKILL);
		runner_sleep_ms(RUNNER_GROUP_TICK_MS);
	}
}

int
runner_start(
    struct runner_proc **out, const struct runner_opts *o, struct sc_err *err)
{
	struct runner_proc *p = NULL;
	struct spawn_plan plan = {0};
	struct spawn_child child = {0};
	struct spawn_msg msg;
	struct sc_err fit;
	sigset_t all, old;
	char **envp = NULL;
	char *stack = NULL;
	size_t guard = 0;
	int pfd[2] = {-1, -1};
	int sfd[2] = {-1, -1};
	int devnull = -1;
	int rc = 0;
	int fl, clone_errno = 0;
	pid_t parent;
	ssize_t n;
	size_t got = 0;

	*out = NULL;
	if (o == NULL || o->argv == NULL || o->argv[0] == NULL) {
		rc = err_set(err, SC_ESOFTWARE, "runner: empty agent argv");
		goto out;
	}
	/* Orphans of the agent come to us, so we can reap them by group.
	 * The watchdog is forked before this call allocates anything, so
	 * that its copy of our memory holds nothing it could leak. */
	prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
	wd_ensure();
	p = calloc(1, sizeof(*p));
	if (p == NULL) {
		rc = err_set(err, SC_EOS, "out of memory for an agent attempt");
		goto out;
	}
	p->o = o;
	p->out_fd = p->log_fd = p->pidfd = p->pf_out = -1;
	p->ring.cap = o->tail_max ? o->tail_max : RUNNER_TAIL_DEFAULT;
	p->ring.buf = malloc(p->ring.cap);
	if (p->ring.buf == NULL) {
		rc = err_set(err, SC_EOS, "out of memory for the output tail");
		goto out;
	}
	rc = runner_env_build(&envp, o->env_add, err);
	if (rc < 0)
		goto out;
	rc = plan_build(&plan, o->argv, envp, err);
	if (rc < 0)
		goto out;
	stack = spawn_stack_new(&guard);
	if (stack == NULL) {
		rc = err_set(err, SC_EOS,
		    "cannot allocate a stack to start the agent: %s",
		    strerror(errno));
		goto out;
	}
	rc = proc_open_log(&p->log_fd, o->log_path, err);
	if (rc < 0)
		goto out;
	/* execve would fail with E2BIG (a prompt over the limit of one
	 * argument, a huge environment): start nothing and say which and
	 * what to do, instead of a bare 126 on every attempt.  The result
	 * is a failed exec like any other; no process, no group. */
	if (argv_fits_vec(o->argv, (const char *const *)envp, &fit) < 0) {
		snprintf(p->r.spawn_detail, sizeof(p->r.spawn_detail), "%.300s",
		    fit.msg);
		p->r.spawn_failed = true;
		p->r.spawn_errno = E2BIG;
		p->r.exit_code = 126;
		proc_note_spawn_failure(p, E2BIG);
		fd_close(&p->log_fd);
		p->phase = PHASE_DONE;
		goto started;
	}
	devnull = fd_high(open("/dev/null", O_RDONLY | O_CLOEXEC));
	if (devnull < 0 || pipe2(pfd, O_CLOEXEC) < 0 ||
	    pipe2(sfd, O_CLOEXEC) < 0) {
		rc = err_set(err, SC_EOS,
		    "cannot set up the agent's pipes: "
		    "%s",
		    strerror(errno));
		goto out;
	}
	pfd[0] = fd_high(pfd[0]);
	pfd[1] = fd_high(pfd[1]);
	sfd[1] = fd_high(sfd[1]);
	if (pfd[0] < 0 || pfd[1] < 0 || sfd[1] < 0) {
		rc = err_set(err, SC_EOS,
		    "cannot set up the agent's pipes: "
		    "%s",
		    strerror(errno));
		goto out;
	}
	/* Our end only: the agent's end stays blocking.  Never blocking
	 * on it is what lets one loop serve every agent. */
	fl = fcntl(pfd[0], F_GETFL);
	if (fl >= 0)
		fcntl(pfd[0], F_SETFL, fl | O_NONBLOCK);

	parent = getpid();
	child.o = o;
	child.plan = &plan;
	child.envp = envp;
	child.devnull = devnull;
	child.out_w = pfd[1];
	child.status_w = sfd[1];
	child.parent = parent;
	/* No handler of ours may run in the child before it resets them:
	 * with CLONE_VM it would run in our memory. */
	sigfillset(&all);
	sigprocmask(SIG_BLOCK, &all, &old);
	p->t0 = runner_now();
	/*
	 * posix_spawn's technique: the child borrows our address space
	 * instead of copying our page tables (fork costs in proportion to
	 * our size, and then copy-on-write faults), and we are suspended
	 * until it has exec'd or exited, so everything it reads stays valid
	 * and may be freed once clone() returns.  The stack grows down from
	 * its top.
	 */
	p->pid = clone(child_main, stack + guard + RUNNER_SPAWN_STACK,
	    CLONE_VM | CLONE_VFORK | SIGCHLD, &child);
	clone_errno = errno;
	/* The child has set its group before exec already (this fails
	 * with EACCES then); this one matters where the clone runs as a
	 * plain fork without the wait (valgrind does that). */
	if (p->pid > 0)
		setpgid(p->pid, p->pid);
	sigprocmask(SIG_SETMASK, &old, NULL);
	if (p->pid < 0) {
		rc = err_set(err, SC_EOS, "cannot fork the agent: %s",
		    strerror(clone_errno));
		goto out;
	}
	p->r.pid = p->pid;
	live_add(p);
	fd_close(&pfd[1]);
	fd_close(&sfd[1]);
	fd_close(&devnull);
	p->out_fd = pfd[0];
	pfd[0] = -1;

	/* EOF: exec succeeded (the pipe is close-on-exec).  A message: the
	 * child failed and is exiting with 127.  Either comes at once. */
	while (got < sizeof(msg)) {
		n = read(sfd[0], (char *)&msg + got, sizeof(msg) - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	fd_close(&sfd[0]);
	if (got == sizeof(msg)) {
		while (waitpid(p->pid, &p->wstatus, 0) < 0 && errno == EINTR)
			;
		p->r.duration_ms = runner_now() - p->t0;
		if (msg.stage != STAGE_EXEC) {
			rc = err_set(err, SC_EOS,
			    "cannot start agent %s: "
			    "%s%s: %s",
			    o->argv[0],
			    msg.stage == STAGE_CHDIR ? "chdir " : "setup",
			    msg.stage == STAGE_CHDIR ? o->cwd : "",
			    strerror(msg.err));
			goto out;
		}
		p->r.spawn_failed = true;
		p->r.spawn_errno = msg.err;
		p->r.exit_code = msg.err == ENOENT ? 127 : 126;
		proc_note_spawn_failure(p, msg.err);
		proc_done(p);
		goto started;
	}

	p->pidfd = proc_pidfd(p->pid);
	p->last_activity = p->t0;
	p->next_poll =
	    p->t0 + (o->poll_interval_ms > 0 ? o->poll_interval_ms : 1000);
	if (o->on_start != NULL) {
		rc = o->on_start(o->ctx, p->pid);
		if (rc < 0) {
			/* The callback reported through its ctx. */
			proc_signal(p, SIGKILL);
			proc_settle(p);
			goto out;
		}
		rc = 0;
	}
started:
	*out = p;
	p = NULL;
out:
	fd_close(&pfd[0]);
	fd_close(&pfd[1]);
	fd_close(&sfd[0]);
	fd_close(&sfd[1]);
	fd_close(&devnull);
	/* The child has exec'd or exited: nothing uses these any more. */
	spawn_stack_free(stack, guard);
	plan_release(&plan);
	free(envp);
	proc_free(p);
	return rc;
}

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

int
runner_wait(struct runner_proc *const *procs, size_t n, int64_t timeout_ms,
    int wake_fd, struct sc_err *err)
{
	struct pollfd local[RUNNER_LOCAL_PFDS];
	struct pollfd *pf = local;
	struct runner_proc *p = NULL;
	char junk[256];
	size_t i, k, nf, wbase, cap;
	int64_t now, until, wait;
	ssize_t got;
	int rc = 0, ndone = 0, pr;
	bool moved = false;

	if (n > 0 && procs == NULL) {
		rc = err_set(
		    err, SC_ESOFTWARE, "runner: no attempts to wait for");
		goto out;
	}
	for (i = 0; i < n; i++) {
		if (procs[i] == NULL) {
			rc = err_set(err, SC_ESOFTWARE,
			    "runner: attempt %zu to wait for is null", i);
			goto out;
		}
	}
	if (n == 0 && timeout_ms < 0 && wake_fd < 0) {
		rc = err_set(
		    err, SC_ESOFTWARE, "runner: waiting for nothing, forever");
		goto out;
	}
	/* Per attempt its pipe, its pidfd and its wake fd; and wake_fd. */
	if (n > (SIZE_MAX - 1) / 3 / sizeof(*pf)) {
		rc = err_set(err, SC_ESOFTWARE, "runner: too many attempts");
		goto out;
	}
	cap = 3 * n + 1;
	if (cap > RUNNER_LOCAL_PFDS) {
		pf = calloc(cap, sizeof(*pf));
		if (pf == NULL) {
			rc = err_set(err, SC_EOS,
			    "out of memory waiting for %zu agents", n);
			goto out;
		}
	}
	until = timeout_ms >= 0 ? runner_now() + timeout_ms : INT64_MAX;
	for (;;) {
		ndone = 0;
		for (i = 0; i < n; i++) {
			p = procs[i];
			if (p->phase != PHASE_DONE && proc_service(p))
				moved = true;
			if (p->phase == PHASE_DONE)
				ndone++;
		}
		if (moved || ndone > 0)
			break;
		now = runner_now();
		if (now >= until)
			break;
		wait = until - now;
		nf = 0;
		for (i = 0; i < n; i++) {
			p = procs[i];
			wait = min64(wait, proc_deadline(p, now) - now);
			p->pf_out = -1;
			if (p->out_fd >= 0) {
				pf[nf].fd = p->out_fd;
				pf[nf].events = POLLIN;
				pf[nf].revents = 0;
				p->pf_out = (int)nf++;
			}
			/* Readable once the agent exits: the next pass
			 * reaps it. */
			if (p->pidfd >= 0) {
				pf[nf].fd = p->pidfd;
				pf[nf].events = POLLIN;
				pf[nf].revents = 0;
				nf++;
			}
		}
		wbase = nf;
		for (i = 0; i < n; i++) {
			p = procs[i];
			if (p->o->stop != NULL && p->o->wake_fd >= 0 &&
			    !p->wake_dead)
				nf = pf_add_once(pf, nf, wbase, p->o->wake_fd);
		}
		if (wake_fd >= 0)
			nf = pf_add_once(pf, nf, wbase, wake_fd);
		if (wait < 0)
			wait = 0;
		if (wait > INT_MAX)
			wait = INT_MAX;
		pr = poll(pf, (nfds_t)nf, (int)wait);
		if (pr < 0 && errno == EINTR) {
			/* A signal: let the caller look at its flags. */
			moved = true;
			continue;
		}
		if (pr < 0) {
			rc = err_set(err, SC_EOS, "cannot poll the agents: %s",
			    strerror(errno));
			break;
		}
		if (pr == 0)
			continue; /* a deadline: the next pass acts on it */
		for (i = 0; i < n; i++) {
			p = procs[i];
			if (p->pf_out >= 0 && pf[p->pf_out].revents != 0 &&
			    proc_read(p, 4))
				moved = true;
		}
		/* Drain the self-pipes; *stop is the truth, looked at in the
		 * next pass. */
		for (k = wbase; k < nf; k++) {
			if (pf[k].revents == 0)
				continue;
			moved = true;
			got = read(pf[k].fd, junk, sizeof(junk));
			if (got == 0 ||
			    (got < 0 && errno != EINTR && errno != EAGAIN))
				wake_hung_up(procs, n, pf[k].fd);
		}
	}
out:
	if (pf != local)
		free(pf);
	return rc < 0 ? rc : ndone;
}

bool
runner_proc_done(const struct runner_proc *p)
{
	return p == NULL || p->phase == PHASE_DONE;
}

int
runner_proc_pid(const struct runner_proc *p)
{
	return p != NULL ? p->pid : -1;
}

int
runner_proc_finish(
    struct runner_proc *p, struct runner_result *out, struct sc_err *err)
{
	int rc = 0;

	if (out != NULL)
		memset(out, 0, sizeof(*out));
	if (p == NULL) {
		rc = err_set(err, SC_ESOFTWARE, "runner: no attempt to finish");
		goto out;
	}
	if (p->phase == PHASE_RUNNING && !p->term_sent) {
		/* Cancelled by the caller: as if *stop had become 1. */
		p->r.interrupted = true;
		proc_signal(p, SIGTERM);
	}
	proc_settle(p);
	if (out != NULL) {
		*out = p->r;
		out->tail = ring_take(&p->ring, &out->tail_len);
		if (out->tail == NULL) {
			memset(out, 0, sizeof(*out));
			rc = err_set(
			    err, SC_EOS, "out of memory for the output tail");
		}
	}
	proc_free(p);
out:
	return rc;
}

int
runner_run(
    struct runner_result *out, const struct runner_opts *o, struct sc_err *err)
{
	struct runner_proc *p = NULL;
	int rc = 0;

	memset(out, 0, sizeof(*out));
	rc = runner_start(&p, o, err);
	if (rc < 0)
		goto out;
	while (rc >= 0 && !runner_proc_done(p))
		rc = runner_wait(&p, 1, -1, -1, err);
	if (rc < 0) {
		runner_proc_finish(p, NULL, NULL);
		goto out;
	}
	rc = runner_proc_finish(p, out, err);
out:
	return rc;
}

void
runner_result_release(struct runner_result *r)
{
	if (r == NULL)
		return;
	free(r->tail);
	memset(r, 0, sizeof(*r));
}

int
runner_kill_group(int pgid, int64_t grace_ms)
{
	int rc = 0;

	if (pgid <= 1 || pgid == getpgrp()) {
		rc = SC_ESOFTWARE;
		goto out;
	}
	if (!group_alive(pgid)) {
		group_reap(pgid);
		goto out;
	}
	if (kill(-pgid, SIGTERM) < 0 && errno != ESRCH) {
		rc = SC_EOS;
		goto out;
	}
	if (group_wait(pgid, runner_now() + (grace_ms > 0 ? grace_ms : 0)) == 0)
		goto out;
	if (kill(-pgid, SIGKILL) < 0 && errno != ESRCH) {
		rc = SC_EOS;
		goto out;
	}
	if (group_wait(pgid, runner_now() + RUNNER_KILL_WAIT_MS) < 0)
		rc = SC_EOS;
out:
	return rc;
}

int
runner_proc_starttime(uint64_t *out, int pid)
{
	if (pid <= 0 || proc_stat(pid, NULL, NULL, out) < 0)
		return SC_EOS;
	return 0;
}

int
runner_kill_stale_group(int pgid, uint64_t start_ticks, int64_t grace_ms)
{
	uint64_t now_start = 0;

	if (runner_proc_starttime(&now_start, pgid) == 0 &&
	    now_start != start_ticks)
		return 0; /* that pid is another process now: not ours */
	return runner_kill_group(pgid, grace_ms);
}
