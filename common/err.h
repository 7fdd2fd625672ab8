/*
 * err.h - the error struct every fallible function fills.
 *
 * Contract (after libgit2's error-handling.md guide): a function that can
 * fail returns int, 0 on success or one of the negative SC_E* codes, and
 * sets the message in the caller's struct sc_err at the place where the
 * failure is found.  Callers pass the code up unchanged; they may add
 * context with err_prefix().  Only main() prints and turns the code into
 * an exit status, which is simply -code (the codes are sysexits values).
 *
 * An err pointer may be NULL: the code is still returned.
 */
#ifndef STORYCTL_ERR_H
#define STORYCTL_ERR_H

enum sc_code {
	SC_OK = 0,
	SC_EUSAGE = -64, /* bad command line */
	SC_EDATA = -65, /* bad config or story data */
	SC_EUNAVAIL = -69, /* an agent or gate program cannot be run */
	SC_ESOFTWARE = -70, /* internal error: a bug */
	SC_EOS = -71, /* a system call failed */
	SC_EIO = -74, /* reading or writing state failed */
	SC_ETEMPFAIL = -75, /* stopped before the end; can be resumed */
	SC_EINTR = -130, /* interrupted by SIGINT */
	SC_ETERM = -143, /* interrupted by SIGTERM */
};

struct sc_err {
	int code;
	char msg[1024];
};

/* Set code and message (printf format, lowercase, no full stop); returns
 * code so that callers can write `return err_set(err, SC_EDATA, ...)`. */
int err_set(struct sc_err *err, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Put "context: " in front of the current message; returns err->code (or
 * SC_ESOFTWARE when err is NULL). */
int err_prefix(struct sc_err *err, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

void err_clear(struct sc_err *err);

/* The process exit status for a code: -code, or 0 for SC_OK. */
int err_exit_status(int code);

#endif
