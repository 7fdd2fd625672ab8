/* lock.c - see lock.h. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
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

struct state_lock {
	int fd;
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

static int
lock_write_pid(int fd)
{
	char buf[32];
	int len;

	len = snprintf(buf, sizeof(buf), "%ld\n", (long)getpid());
	if (ftruncate(fd, 0) < 0 || pwrite(fd, buf, (size_t)len, 0) != len)
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
	if (lock_write_pid(fd) < 0) {
		ret = err_set(err, SC_EIO, "cannot write lock file %s: %s",
		    path, strerror(errno));
		goto out;
	}
	if ((l = calloc(1, sizeof(*l))) == NULL) {
		ret = err_set(err, SC_EOS, "%s: out of memory", path);
		goto out;
	}
	l->fd = fd;
	fd = -1;
	*out = l;
out:
	if (fd >= 0)
		close(fd); /* drops the lock if we had it */
	free(path);
	return ret;
}

void
lock_release(struct state_lock *l)
{
	if (l == NULL)
		return;
	/* no pid left behind for the next reader; the kernel drops the
	 * lock with the last descriptor */
	if (ftruncate(l->fd, 0) < 0) {
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
