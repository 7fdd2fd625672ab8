/*
 * attempt_end.c - the end of an attempt: what the agent left read back
 * (its exit, the story file, its output tail) and classified by the one
 * reader into the attempt's row (docs/classification.md), ready for the
 * decision; or the attempt abandoned, recorded as interrupted, when the
 * controller stops on an error.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "controller/engine/attempt_end.h"
#include "controller/engine/attempt_evidence.h"
#include "controller/engine/attempt_run.h"
#include "controller/engine/checks.h"
#include "controller/tz.h"
#include "state/redact.h"
#include "strategies/adapter.h"
#include "strategies/agentout.h"

static void
copy_redacted(
    char *dst, size_t len, const char *src, const struct attempt_run *ar)
{
	/* cut at a character boundary: the marks redaction puts in can
	 * make the text longer than dst; the values storyctl gave the
	 * agent go too (docs/reliability.md#redaction) */
	redact_text_copy(ar->b->secrets, dst, len, src);
}

/* r's end time, exit and progress from the agent's result and the
 * story file as the agent left it. */
static void
row_from_result(struct attempt_row *r, const struct attempt_run *ar)
{
	const struct runner_result *res = &ar->agent_res;

	r->ended_ms = ar->b->o->clock.now_ms(ar->b->o->clock.ctx);
	r->exit_code = res->term_signal ? -1 : res->exit_code;
	r->signal = res->term_signal;
	r->counts = ar->end.counts;
	copy_redacted(
	    r->stalled_task, sizeof(r->stalled_task), ar->end.stalled_task, ar);
}

/* The one reader over the agent's output: outcome, code, message, wait
 * hint, cost, final message and session id from one walk over the
 * tail (docs/classification.md). */
static void
classify_run(struct agent_report *rep, const struct attempt_run *ar,
    bool gate_failed, bool stopped)
{
	const struct config *cfg = ar->b->cfg;
	const struct runner_result *res = &ar->agent_res;
	struct classify_input ci;

	memset(&ci, 0, sizeof(ci));
	ci.exit_code = res->term_signal ? -1 : res->exit_code;
	ci.term_signal = res->term_signal;
	ci.timed_out = res->timed_out;
	ci.stalled = res->stalled;
	ci.dead_end = res->dead_end;
	/* a stop during the gates or the review interrupts the attempt too */
	ci.interrupted = res->interrupted ||
	    (ar->phase != PH_AGENT && stopped && gate_failed);
	ci.gate_failed = gate_failed;
	ci.tasks_completed = ar->end.counts.tasks_completed;
	ci.tasks_total = ar->end.counts.tasks_total;
	ci.tail = res->tail;
	ci.tail_len = res->tail_len;
	ci.network_on = &cfg->policy.network_on;
	ci.permanent_on = &cfg->policy.permanent_on;
	ci.retry_on = &cfg->policy.retry_on;
	ci.adapter = adapter_for(cfg->agents[ar->r.role].preset);
	adapter_read(rep, &ci);
}

/* The agent never ran (docs/runner.md): a crash, or permanent when the
 * command is over execve's limits. */
static void
classify_spawn_failed(struct classification *cls, const struct attempt_run *ar)
{
	const struct runner_result *res = &ar->agent_res;

	cls->outcome = OUTCOME_CRASH;
	cls->code = ERRC_CRASH;
	snprintf(cls->message, sizeof(cls->message), "cannot run %s: %s",
	    ar->argv.items[0],
	    res->spawn_detail[0] != '\0' ? res->spawn_detail
					 : strerror(res->spawn_errno));
	/* over execve's limits: every attempt of this agent would fail the
	 * same way, so permanent (D2 disables the agent) rather than a
	 * crash that burns every attempt; the kernel refused to run the
	 * command, the nearest permanent code */
	if (res->spawn_errno == E2BIG) {
		cls->outcome = OUTCOME_PERMANENT;
		cls->code = ERRC_PERMISSION_DENIED;
	}
}

/* r's outcome, error, cost and final message from the reader's report,
 * with what the runner saw (a signal, a failed log) added. */
static void
row_from_report(struct attempt_row *r, const struct agent_report *rep,
    const struct attempt_run *ar)
{
	const struct classification *cls = &rep->verdict;
	const struct agent_output *ao = &rep->output;
	const struct runner_result *res = &ar->agent_res;
	size_t used;

	if (ao->has_cost)
		r->cost_usd = ao->cost_usd;
	if (ao->result_text[0] != '\0')
		r->result_text = redact_text(ar->b->secrets, ao->result_text,
		    strlen(ao->result_text), NULL);
	copy_redacted(r->session_id, sizeof(r->session_id), ao->session_id, ar);
	r->outcome = cls->outcome;
	r->error_code = cls->code;
	copy_redacted(
	    r->error_message, sizeof(r->error_message), cls->message, ar);
	if (r->error_message[0] == '\0' && res->term_signal != 0)
		snprintf(r->error_message, sizeof(r->error_message),
		    "killed by signal %d (%s)", res->term_signal,
		    strsignal(res->term_signal));
	if (res->log_errno != 0) {
		used = strlen(r->error_message);
		snprintf(r->error_message + used,
		    sizeof(r->error_message) - used,
		    "%swriting the attempt log failed: %s", used ? "; " : "",
		    strerror(res->log_errno));
	}
}

/* The head of an attempt's log read back for its session id: codex and
 * gemini print theirs first, claude with every event. */
#define SESSION_HEAD_MAX (64 * 1024)

/* An agent that printed more than the tail holds has its first lines,
 * and so codex's thread.started or gemini's init with the session id,
 * only in its log (docs/agents.md#the-session-id): read the log's head
 * when the tail named no session.  Best effort: a log that cannot be
 * read leaves the id empty, as before. */
static void
session_from_log_head(char *dst, size_t len, const struct attempt_run *ar)
{
	const struct runner_result *res = &ar->agent_res;
	struct agent_output *ao = NULL;
	char *buf = NULL;
	ssize_t n;
	size_t got = 0;
	int fd = -1;

	if (dst[0] != '\0' || res->output_bytes <= res->tail_len ||
	    ar->r.log_path[0] == '\0')
		return;
	fd = open(ar->r.log_path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0 || (buf = malloc(SESSION_HEAD_MAX)) == NULL ||
	    (ao = malloc(sizeof(*ao))) == NULL)
		goto out;
	while (got < SESSION_HEAD_MAX) {
		n = read(fd, buf + got, SESSION_HEAD_MAX - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	agentout_parse(ao, buf, got);
	copy_redacted(dst, len, ao->session_id, ar);
out:
	if (fd >= 0)
		close(fd);
	free(ao);
	free(buf);
}

void
attempt_end_read(struct agent_report *rep, int64_t *hint_ms,
    struct attempt_run *ar, bool gate_failed, bool stopped)
{
	struct attempt_row *r = &ar->r;
	struct classification *cls = &rep->verdict;

	*hint_ms = -1;
	row_from_result(r, ar);
	classify_run(rep, ar, gate_failed, stopped);
	if (ar->agent_res.spawn_failed && !ar->agent_res.interrupted)
		classify_spawn_failed(cls, ar);
	if (cls->outcome == OUTCOME_GATE_FAILED && r->gate[0] != '\0')
		snprintf(cls->message, sizeof(cls->message), "%s %s",
		    strcmp(r->gate, "review") == 0 ? "review panel" : "gate",
		    strcmp(r->gate, "review") == 0 ? r->consensus : r->gate);
	/* boxes checked with nothing else changed, taken back under
	 * verify.require_diff: an ordinary end is incomplete, with its own
	 * code (docs/evidence.md#require-diff); a failure keeps its own */
	if (ar->ev_verdict.no_evidence &&
	    (cls->outcome == OUTCOME_SUCCESS ||
		cls->outcome == OUTCOME_INCOMPLETE)) {
		cls->outcome = OUTCOME_INCOMPLETE;
		cls->code = ERRC_NO_EVIDENCE;
		snprintf(cls->message, sizeof(cls->message),
		    "%d box%s checked with no other change in the work tree; "
		    "opened again (verify.require_diff)",
		    ar->ev.ticked, ar->ev.ticked == 1 ? "" : "es");
	}
	if (cls->hint.kind != WAITHINT_NONE &&
	    waithint_resolve(hint_ms, &cls->hint, r->ended_ms, NULL) < 0)
		*hint_ms = -1;
	row_from_report(r, rep, ar);
	session_from_log_head(r->session_id, sizeof(r->session_id), ar);
}

void
attempt_abandon(struct batch *b, struct attempt_run *ar)
{
	struct runner_result res;
	struct sc_err ignore;
	char oid[41];
	bool moved;

	if (ar->handle != NULL) {
		memset(&res, 0, sizeof(res));
		if (b->ops.finish(b->ops.ctx, ar->handle, &res, &ignore) == 0)
			runner_result_release(&res);
		ar->handle = NULL;
	}
	/* a confined agent's commits are its work too, stopped or not
	 * (docs/sandbox.md#git) */
	(void)sandbox_end(&ar->sbx, &moved, oid, slot_root(b, ar->sl), &ignore);
	/* The controller stops on an error while this attempt runs: record
	 * it as interrupted (not counted), best effort, so that the failure
	 * does not use up one of its attempts. */
	ar->r.ended_ms = b->o->clock.now_ms(b->o->clock.ctx);
	ar->r.outcome = OUTCOME_INTERRUPTED;
	ar->r.error_code = ERRC_INTERRUPTED;
	ar->r.counted = false;
	ar->r.decision = DECISION_NONE;
	/* what D4 decides: the same attempt, the same agent */
	ar->r.next_attempt = ar->r.attempt;
	ar->r.next_role = ar->r.role;
	ar->r.not_before_ms = ar->r.ended_ms;
	snprintf(ar->r.reason, sizeof(ar->r.reason),
	    "D4: the controller stopped on an error; attempt %d runs "
	    "again on resume (not counted)",
	    ar->r.attempt);
	ar->sl->st->status = STATUS_PENDING;
	db_attempt_finish(
	    b->db, &ar->r, ar->sl->st, "interrupted", ar->r.reason, &ignore);
	attempt_run_free(ar);
}

void
attempt_run_free(struct attempt_run *ar)
{
	if (ar == NULL)
		return;
	checks_free(ar->b, ar);
	attempt_evidence_release(ar);
	runner_result_release(&ar->agent_res);
	free(ar->review_prompt);
	attempt_row_release(&ar->r);
	strlist_release(&ar->argv);
	free(ar->prompt);
	free(ar->prompt_file);
	free(ar->depres);
	sandbox_run_release(&ar->sbx);
	free(ar);
}
