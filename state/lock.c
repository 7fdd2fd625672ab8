/* lock.c - see lock.h. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "state/db.h"
#include "state/lock.h"

#define LOCK_FILE "lock"
/* How often, 2 ms apart, a conflict with no live pid recorded is tried
 * again: a status probe or a controller that has not yet written its pid
 * holds the lock for well under this. */
#define LOCK_RETRIES 25

/*
 * The file's layout: the holder's pid on a line at offset 0, and at
 * LOCK_NOTE_OFF a note "stopped PID WHY" that a controller stopping on
 * an error leaves for the next one.  Both are written in place into
 * LOCK_SIZE bytes written out at acquire, so that the note needs no new
 * block on a disk that has just filled up.
 */
#define LOCK_SIZE 1024
#define LOCK_NOTE_OFF 64

struct state_lock {
	int fd;
	bool noted; /* lock_note_stop() wrote a note: keep it */
	int64_t prev_pid; /* the note found at acquire: its pid, or 0 */
	char prev_why[LOCK_SIZE - LOCK_NOTE_OFF];
};

static char *
lock_path(const char *state_dir)
{
	char *p = NULL;
	size_t len = strlen(state_dir);

	while (len > 1 && state_dir[len - 1] == '/')
		len--;
	if (asprintf(&p, "%.*s/%s", (int)len, state_dir, LOCK_FILE) < 0)
		return NULL;
	return p;
}

/* The pid written in the lock file, 0 if none can be read. */
static int64_t
lock_read_pid(int fd)
{
	char buf[32];
	char *end = NULL;
	ssize_t n;
	long long v;

	n = pread(fd, buf, sizeof(buf) - 1, 0);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	errno = 0;
	v = strtoll(buf, &end, 10);
	if (errno != 0 || end == buf || v <= 0 || (*end != '\n' && *end))
		return 0;
	return v;
}

static int
lock_pid_alive(int64_t pid)
{
	return pid > 0 && (kill((pid_t)pid, 0) == 0 || errno == EPERM);
}

static void
lock_nap(void)
{
	struct timespec ts = {0, 2 * 1000 * 1000};

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/* The note a previous controller left ("stopped PID WHY"), if any. */
static void
lock_read_note(int fd, int64_t *pid, char *why, size_t len)
{
	char buf[LOCK_SIZE - LOCK_NOTE_OFF + 1];
	char *end = NULL;
	ssize_t n;
	long long v;

	*pid = 0;
	why[0] = '\0';
	n = pread(fd, buf, sizeof(buf) - 1, LOCK_NOTE_OFF);
	if (n <= 8)
		return;
	buf[n] = '\0';
	if (strncmp(buf, "stopped ", 8) != 0)
		return;
	errno = 0;
	v = strtoll(buf + 8, &end, 10);
	if (errno != 0 || v <= 0 || *end != ' ')
		return;
	*pid = v;
	snprintf(why, len, "%.*s", (int)strcspn(end + 1, "\n"), end + 1);
}

/* Our pid at offset 0 and room for a note, LOCK_SIZE bytes in all.  An
 * earlier note is read and kept until lock_clear_stop(): a controller
 * that dies before it has recovered the attempts leaves it for the
 * next. */
static int
lock_write_pid(struct state_lock *l, int fd)
{
	char buf[LOCK_SIZE];
	struct stat sb;
	size_t len = 32;

	lock_read_note(fd, &l->prev_pid, l->prev_why, sizeof(l->prev_why));
	if (fstat(fd, &sb) < 0)
		return -1;
	memset(buf, 0, sizeof(buf));
	snprintf(buf, 32, "%ld\n", (long)getpid());
	if (l->prev_pid == 0 || sb.st_size < LOCK_SIZE)
		len = sizeof(buf); /* real blocks for a later note */
	if (pwrite(fd, buf, len, 0) != (ssize_t)len)
		return -1;
	return 0;
}

int
lock_acquire(struct state_lock **out, const char *state_dir, struct sc_err *err)
{
	struct state_lock *l = NULL;
	struct stat sb;
	char *path = NULL;
	int64_t pid = 0;
	int fd = -1, tries, ret;

	*out = NULL;
	if ((ret = db_dir_prepare(state_dir, err)) < 0)
		goto out;
	if ((path = lock_path(state_dir)) == NULL) {
		ret = err_set(err, SC_EOS, "%s: out of memory", state_dir);
		goto out;
	}
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0 || fstat(fd, &sb) < 0) {
		ret = err_set(err, SC_EIO, "cannot open lock file %s: %s", path,
		    strerror(errno));
		goto out;
	}
	if ((sb.st_mode & 077) != 0 && fchmod(fd, sb.st_mode & 0600) < 0) {
		ret = err_set(err, SC_EIO, "cannot chmod lock file %s: %s",
		    path, strerror(errno));
		goto out;
	}
	for (tries = 0;; tries++) {
		if (flock(fd, LOCK_EX | LOCK_NB) == 0)
			break;
		if (errno == EINTR)
			continue;
		if (errno != EWOULDBLOCK) {
			ret = err_set(err, SC_EOS, "cannot lock %s: %s", path,
			    strerror(errno));
			goto out;
		}
		pid = lock_read_pid(fd);
		if (lock_pid_alive(pid) || tries >= LOCK_RETRIES) {
			if (pid > 0)
				ret = err_set(err, SC_ETEMPFAIL,
				    "another storyctl (pid %lld) is already "
				    "working on %s",
				    (long long)pid, state_dir);
			else
				ret = err_set(err, SC_ETEMPFAIL,
				    "another storyctl is already working on "
				    "%s",
				    state_dir);
			goto out;
		}
		lock_nap();
	}
	if ((l = calloc(1, sizeof(*l))) == NULL) {
		ret = err_set(err, SC_EOS, "%s: out of memory", path);
		goto out;
	}
	if (lock_write_pid(l, fd) < 0) {
		ret = err_set(err, SC_EIO, "cannot write lock file %s: %s",
		    path, strerror(errno));
		goto out;
	}
	l->fd = fd;
	fd = -1;
	*out = l;
out:
	if (fd >= 0)
		close(fd); /* drops the lock if we had it */
	if (ret < 0)
		free(l);
	free(path);
	return ret;
}

void
lock_note_stop(struct state_lock *l, const char *why)
{
	char buf[LOCK_SIZE - LOCK_NOTE_OFF];
	size_t i;
	int len;

	/* the note an earlier controller left stays until a reconcile has
	 * used it: we have not reconciled yet (lock_clear_stop() was not
	 * called), so we started no attempt our own note could speak for
	 * (docs/reliability.md#faults) */
	if (l == NULL || l->prev_pid != 0)
		return;
	len = snprintf(buf, sizeof(buf) - 1, "stopped %ld %s", (long)getpid(),
	    why != NULL && why[0] != '\0' ? why : "an error");
	if (len < 0)
		return;
	if ((size_t)len > sizeof(buf) - 2)
		len = (int)sizeof(buf) - 2;
	for (i = 0; i < (size_t)len; i++)
		if (buf[i] == '\n' || buf[i] == '\0')
			buf[i] = ' ';
	buf[len++] = '\n';
	memset(buf + len, 0, sizeof(buf) - (size_t)len);
	/* in place: no new block is needed (a full disk is the usual why) */
	if (pwrite(l->fd, buf, sizeof(buf), LOCK_NOTE_OFF) ==
	    (ssize_t)sizeof(buf))
		l->noted = true;
}

void
lock_clear_stop(struct state_lock *l)
{
	char buf[LOCK_SIZE - LOCK_NOTE_OFF];

	if (l == NULL || l->prev_pid == 0)
		return;
	memset(buf, 0, sizeof(buf));
	if (pwrite(l->fd, buf, sizeof(buf), LOCK_NOTE_OFF) ==
	    (ssize_t)sizeof(buf))
		l->prev_pid = 0;
}

int64_t
lock_prev_stop(const struct state_lock *l, const char **why)
{
	if (why != NULL)
		*why = l != NULL ? l->prev_why : "";
	return l != NULL ? l->prev_pid : 0;
}

void
lock_release(struct state_lock *l)
{
	static const char zero[32];

	if (l == NULL)
		return;
	/* no pid left behind for the next reader; the kernel drops the
	 * lock with the last descriptor.  A note stays for the next
	 * controller, so only the pid is cleared then. */
	if (l->noted || l->prev_pid != 0) {
		if (pwrite(l->fd, zero, sizeof(zero), 0) < 0) {
			/* the note says the pid anyway */
		}
	} else if (ftruncate(l->fd, 0) < 0) {
		/* nothing to do: the lock is dropped below all the same */
	}
	close(l->fd);
	free(l);
}

int
lock_holder_pid(const char *state_dir, int64_t *out_pid)
{
	char *path = NULL;
	int fd = -1, ret;

	*out_pid = 0;
	if ((path = lock_path(state_dir)) == NULL)
		return SC_EOS;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0) {
		ret = errno == ENOENT ? 1 : SC_EIO;
		goto out;
	}
	while ((ret = flock(fd, LOCK_SH | LOCK_NB)) < 0 && errno == EINTR)
		;
	if (ret == 0) {
		flock(fd, LOCK_UN);
		ret = 1;
	} else if (errno == EWOULDBLOCK) {
		*out_pid = lock_read_pid(fd);
		ret = 0;
	} else {
		ret = SC_EOS;
	}
out:
	if (fd >= 0)
		close(fd);
	free(path);
	return ret;
}
