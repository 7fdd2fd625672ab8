/*
 * runner_proc.h - one supervised attempt, as runner.c and runner_wait.c
 * share it (docs/runner.md).  Internal to the runner: everyone else
 * holds a struct runner_proc through runner.h only.
 */
#ifndef STORYCTL_RUNNER_PROC_H
#define STORYCTL_RUNNER_PROC_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "controller/engine/capture.h"
#include "controller/engine/runner.h"
#include "controller/engine/watchdog.h"

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
	struct capture cap; /* the log and the tail */
	struct watchdog_entry watch; /* registered while the group may live */
	enum proc_phase phase;
	pid_t pid;
	int out_fd; /* read end of the output pipe, -1 once closed */
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
	int token;
	int wstatus;
};

/* One look at a live attempt: *stop, on_poll, the deadlines, the exit of
 * the agent, the state of its group.  Returns whether anything happened;
 * runner_wait() then returns. */
bool runner_proc_service(struct runner_proc *p);

/* The time (CLOCK_MONOTONIC ms) by which runner_proc_service() must look
 * at a live attempt again, output and exit aside. */
int64_t runner_proc_deadline(const struct runner_proc *p, int64_t now);

/* Read what p's pipe holds now, at most max_chunks reads; returns
 * whether anything was read or the pipe ended. */
bool runner_proc_read(struct runner_proc *p, int max_chunks);

#endif /* STORYCTL_RUNNER_PROC_H */
