/*
 * attempt_run.h - an attempt between its start and its end, shared by
 * attempt*.c (the agent) and checks.c (its gates and reviewers), and
 * read by console.c for the live status line.  Data, and one accessor
 * of it.
 */
#ifndef STORYCTL_ATTEMPT_RUN_H
#define STORYCTL_ATTEMPT_RUN_H

#include "controller/engine/agentmark.h"
#include "controller/engine/batch_int.h"
#include "controller/engine/sandbox.h"
#include "state/db_evidence.h"
#include "strategies/deadend.h"
#include "strategies/evidence.h"
#include "strategies/review.h"

/* A gate or a reviewer of an attempt (controller/engine/checks.c). */
struct check_job {
	struct attempt_run *ar;
	char name[64];
	struct strlist argv;
	struct runner_opts ro;
	char log_path[600];
	void *handle; /* the agent seam's, NULL when not running */
	int tries;
	int64_t next_ms; /* a reviewer's retry: start again then */
	bool resolved;
	struct review_vote vote;
	struct runner_result res;
};

enum run_phase { PH_AGENT, PH_GATE, PH_REVIEW };

/* An attempt between its start and its end: everything its runner
 * options point to lives here until the agent (then its gates and its
 * reviewers) are done. */
struct attempt_run {
	struct batch *b;
	struct slot *sl;
	struct attempt_row r;
	struct strlist argv;
	char *prompt;
	char *prompt_file; /* {prompt_file}: its path, or NULL */
	char *depres;
	char *review_prompt;
	struct progress start; /* the story file when it started */
	struct progress end; /* ... and when the agent ended */
	struct runner_opts ro;
	char mark
	    [AGENTMARK_MAX]; /* its agents' mark (controller/engine/agentmark.h) */
	struct deadend_state dead; /* what on_tail saw (strategies/deadend.h) */
	void *handle; /* the agent seam's */
	struct runner_result agent_res;
	enum run_phase phase;
	size_t gate; /* PH_GATE: which one runs */
	struct check_job *jobs; /* PH_GATE: one; PH_REVIEW: a reviewer each */
	size_t njobs;
	int64_t poll_ms;
	int64_t last_read_ms;
	int token; /* tasks checked, for stall detection */
	struct sc_err err; /* what a callback failed with */
	int rc;
	/* evidence (controller/engine/attempt_evidence.c): the tree's snapshot
	 * and the story's boxes at the start, then what was measured */
	char ev_base[48]; /* "" when the tree could not be snapshotted */
	struct progress_item *ev_before;
	size_t ev_nbefore;
	bool ev_started; /* the boxes at the start were read */
	bool ev_ended; /* ev is filled */
	struct evidence_row ev;
	struct evidence_verdict ev_verdict;
	/* its sandbox (docs/sandbox.md), when its agent runs confined */
	bool confined;
	struct sandbox_run sbx;
};

/* The tree slot sl's story must stay in: its worktree, or the project. */
static inline const char *
slot_root(const struct batch *b, const struct slot *sl)
{
	return sl->worktree != NULL ? sl->worktree : b->cfg->root;
}

#endif
