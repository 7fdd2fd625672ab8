/*
 * recovery.h - how an attempt left running by a dead controller is
 * closed at the next start (docs/reliability.md#controller-deaths).
 * Pure: no I/O, no clock.
 *
 * The controller's own death must not cost a story an attempt: the
 * first time an attempt number is cut short by its controller's death
 * (SIGKILL, OOM, power loss, a stop on an error such as a full disk) it
 * is `interrupted`, not counted, and the same number runs again.  The
 * second time the same attempt number is cut short this way it is a
 * counted `crash` naming both deaths, so that a story whose agent kills
 * its controller cannot run forever.
 */
#ifndef STORYCTL_RECOVERY_H
#define STORYCTL_RECOVERY_H

#include <stdbool.h>
#include <stdint.h>

#include "common/model.h"

#define RECOVERY_MSG_MAX 512

struct recovery_in {
	int attempt; /* the attempt's number */
	int64_t controller_pid; /* the controller that ran it (0 unknown) */
	/* that controller left a note that it stopped on an error (the lock
	 * file's, state/lock.h), and what the error was ("" none) */
	bool stopped;
	const char *stop_why;
	/* controller deaths recorded earlier for the same attempt number of
	 * the same story, and the controller of the latest of them */
	int earlier_deaths;
	int64_t earlier_pid;
};

struct recovery_out {
	enum outcome outcome; /* OUTCOME_INTERRUPTED or OUTCOME_CRASH */
	enum error_code code; /* ERRC_INTERRUPTED or ERRC_CRASH */
	char message[RECOVERY_MSG_MAX];
};

void recovery_close(struct recovery_out *out, const struct recovery_in *in);

#endif
