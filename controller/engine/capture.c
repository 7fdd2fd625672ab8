/* capture.c - see capture.h. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "controller/engine/capture.h"

static void
capture_ring_add(struct capture *c, const char *p, size_t n)
{
	size_t first;

	if (c->cap == 0)
		return;
	if (n >= c->cap) {
		memcpy(c->buf, p + n - c->cap, c->cap);
		c->pos = 0;
		c->len = c->cap;
		return;
	}
	first = c->cap - c->pos;
	if (first > n)
		first = n;
	memcpy(c->buf + c->pos, p, first);
	memcpy(c->buf, p + first, n - first);
	c->pos = (c->pos + n) % c->cap;
	c->len = c->len + n > c->cap ? c->cap : c->len + n;
}

/* The echo (docs/cluster.md#storyctl-job): best effort, a reader that
 * went away ends it. */
static void
capture_echo(struct capture *c, const char *p, size_t n)
{
	ssize_t w;

	while (c->echo_fd >= 0 && n > 0) {
		w = write(c->echo_fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0) {
			c->echo_fd = -1;
			return;
		}
		p += w;
		n -= (size_t)w;
	}
}

static void
capture_log(struct capture *c, const char *p, size_t n)
{
	ssize_t w;

	capture_echo(c, p, n);
	if (c->log_fd < 0)
		return;
	while (n > 0) {
		w = write(c->log_fd, p, n);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			/* Keep the agent running; report it afterwards.  A
			 * later chunk may fit again once space is freed. */
			if (c->log_errno == 0)
				c->log_errno = errno;
			return;
		}
		p += w;
		n -= (size_t)w;
	}
}

static int
capture_open_log(int *fd, const char *path, struct sc_err *err)
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

int
capture_open(struct capture *c, const char *log_path, size_t tail_max,
    struct sc_err *err)
{
	int rc = 0;

	memset(c, 0, sizeof(*c));
	c->log_fd = -1;
	c->echo_fd = -1;
	c->cap = tail_max;
	c->buf = malloc(c->cap > 0 ? c->cap : 1);
	if (c->buf == NULL) {
		rc = err_set(err, SC_EOS, "out of memory for the output tail");
		goto out;
	}
	rc = capture_open_log(&c->log_fd, log_path, err);
out:
	if (rc < 0)
		capture_release(c);
	return rc;
}

void
capture_note(struct capture *c, const char *p, size_t n)
{
	capture_log(c, p, n);
	capture_ring_add(c, p, n);
}

void
capture_add(struct capture *c, const char *p, size_t n)
{
	capture_note(c, p, n);
	c->bytes += (uint64_t)n;
}

void
capture_close_log(struct capture *c)
{
	if (c->log_fd >= 0)
		close(c->log_fd);
	c->log_fd = -1;
}

char *
capture_tail(const struct capture *c, size_t *len)
{
	char *s = NULL;
	size_t start;

	s = malloc(c->len + 1);
	if (s == NULL)
		return NULL;
	if (c->len < c->cap) {
		memcpy(s, c->buf, c->len);
	} else {
		start = c->pos;
		memcpy(s, c->buf + start, c->cap - start);
		memcpy(s + c->cap - start, c->buf, start);
	}
	s[c->len] = '\0';
	*len = c->len;
	return s;
}

void
capture_release(struct capture *c)
{
	capture_close_log(c);
	free(c->buf);
	c->buf = NULL;
	c->cap = c->pos = c->len = 0;
}
