/*
 * capture.h - where an agent's output goes
 * (docs/runner.md#supervision-one-loop-any-number-of-agents): all of it to the attempt's log file, the last tail_max bytes to memory
 * for the classifier.  Memory stays O(tail_max) whatever the agent prints.
 */
#ifndef STORYCTL_CAPTURE_H
#define STORYCTL_CAPTURE_H

#include <stddef.h>
#include <stdint.h>

#include "common/err.h"

struct capture {
	char *buf; /* the ring of the last cap bytes */
	size_t cap;
	size_t pos; /* next write offset */
	size_t len; /* bytes held, <= cap */
	int log_fd; /* -1 when there is no log (or once closed) */
	int log_errno; /* the first error writing the log, else 0 */
	int echo_fd; /* also written here (storyctl job's stdout), or -1 */
	uint64_t bytes; /* everything added */
};

/*
 * Set c up for a tail of tail_max bytes and the log at log_path (none when
 * NULL).  The log is opened O_APPEND|O_NOFOLLOW and made mode 0600 even
 * when it existed (agent output may hold secrets).  SC_EOS when out of
 * memory, SC_EIO when the log cannot be opened; c is then released.
 */
int capture_open(struct capture *c, const char *log_path, size_t tail_max,
    struct sc_err *err);

/* Append n bytes: to the log (a write error is kept in log_errno and the
 * output keeps flowing) and to the tail. */
void capture_add(struct capture *c, const char *p, size_t n);

/* A line of the runner's own (such as "cannot execute"): to the log and
 * the tail like the agent's output, but not counted in bytes. */
void capture_note(struct capture *c, const char *p, size_t n);

/* Close the log (the tail stays readable). */
void capture_close_log(struct capture *c);

/* The tail in order, NUL-terminated, malloc'd (NULL when out of memory);
 * *len its length. */
char *capture_tail(const struct capture *c, size_t *len);

/* Release everything c holds.  c must have been through capture_open()
 * (a failed one leaves it released); a second release is a no-op. */
void capture_release(struct capture *c);

#endif
