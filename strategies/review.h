/*
 * review.h - the review panel's pure logic
 * (docs/verification.md#the-review-panel): reading a
 * reviewer's verdict from its output, counting the panel's votes and
 * collecting the reasons of the reviewers that did not approve for the
 * next attempt's prompt.  Pure: no I/O, no clock, no allocation besides
 * what jansson needs while parsing a JSON line.
 */
#ifndef STORYCTL_REVIEW_H
#define STORYCTL_REVIEW_H

#include <stdbool.h>
#include <stddef.h>

enum review_verdict { REVIEW_NONE = 0, REVIEW_APPROVE, REVIEW_REJECT };

#define REVIEW_REASON_MAX 1024
/* at most this many non-empty lines before the verdict line are kept */
#define REVIEW_REASON_LINES 12
/* review_tally() counts at most this many votes (so that "k/n" always
 * fits in consensus[]); a real panel has a handful */
#define REVIEW_TALLY_MAX 1000000

struct review_vote {
	enum review_verdict verdict;
	/*
	 * Why: the last REVIEW_REASON_LINES non-empty lines before the
	 * deciding verdict line (from the same text: the plain output, or
	 * the JSON result string the verdict was found in), then the verdict
	 * line itself when it says more than the verdict word ("VERDICT:
	 * REJECT - no test for AC 2").  Each line trimmed; lines joined by
	 * "\n"; valid UTF-8 without NUL, escape sequences or control
	 * characters other than tab and newline.  When longer than
	 * REVIEW_REASON_MAX - 1 bytes the end (nearest the verdict) is kept,
	 * cut at a character boundary after a leading "…".  "" when there is
	 * no verdict (REVIEW_NONE) or nothing came before it.
	 */
	char reason[REVIEW_REASON_MAX];
};

/*
 * Parse a reviewer's output: the len bytes at text (the tail of its
 * combined stdout/stderr; text may be NULL when len is 0).  It may start
 * mid-line and hold NUL bytes, invalid UTF-8, CRLF or bare CR line ends,
 * terminal escape sequences and JSON event lines.  Never fails: *out is
 * always filled.
 *
 * A verdict line is a line that, once escape sequences and control
 * characters are removed and leading whitespace and markdown marks
 * (any of "> * _ ` # -") are skipped, starts with the keyword "VERDICT"
 * (any case), optional emphasis marks ("*", "_", "`"), then ":".  So
 * "VERDICT: APPROVE", "**VERDICT:** APPROVE", "**Verdict**: approve" and
 * "> VERDICT: APPROVE" are verdict lines; "The VERDICT: APPROVE is ..."
 * is not.  The line says APPROVE when the first word after the colon
 * (emphasis marks skipped) is APPROVE or APPROVED (any case) and the rest
 * of the line has no letter or digit ("VERDICT: **APPROVE**." approves);
 * any other verdict line rejects, so "VERDICT: APPROVE or REJECT" (an
 * echoed prompt) and "VERDICT: APPROVE with changes" are rejections.
 *
 * A line whose first non-blank byte is "{" is read as a JSON event (at
 * most 1 MiB, nesting at most 128 deep) and not as text: the text of its
 * top-level "result" string (claude -p --output-format json|stream-json)
 * and of a codex --json {"item":{"type":"agent_message","text":...}} is
 * scanned for verdict lines in the same way, in place of the event line.
 *
 * The last verdict line in output order decides.  No verdict line:
 * REVIEW_NONE with reason "".
 */
void review_parse(struct review_vote *out, const char *text, size_t len);

struct review_tally {
	int approve; /* votes that are REVIEW_APPROVE */
	int total; /* n (at most REVIEW_TALLY_MAX) */
	/* approve == total (full consensus) or approve >= quorum (degraded) */
	bool pass;
	bool degraded; /* pass && approve < total */
	char consensus[16]; /* "k/n": approve/total, e.g. "2/3" */
};

/*
 * Count the panel's votes: votes[0..n) (a reviewer that failed after its
 * retries is passed as REVIEW_NONE, which is not an approval).  quorum is
 * clamped to [1, n].  n should be at least 1; with n == 0 the panel does
 * not pass ("0/0").  Votes beyond REVIEW_TALLY_MAX are not counted.
 */
void review_tally(struct review_tally *out, const struct review_vote *votes,
    size_t n, int quorum);

/*
 * The reasons of the reviewers that did not approve, for the next
 * attempt's prompt: one entry per such reviewer, in panel order, joined
 * by "\n" (no trailing newline):
 *
 *     reviewer 2 (REJECT): first reason line
 *       second reason line
 *     codex (no verdict)
 *
 * The label is names[i] when names and names[i] are non-NULL and not
 * empty (control characters removed, at most 64 bytes), else
 * "reviewer N" (N = i + 1).  The verdict is "REJECT" or "no verdict".
 * Written to out as at most len - 1 bytes and a NUL (nothing when len is
 * 0): when everything does not fit, every entry keeps its label and the
 * room left is shared fairly between the reasons, each keeping its end
 * after a "…" and cut at a character boundary, so one long review cannot
 * crowd out the others.  "" when every reviewer approved.
 */
void review_reasons(char *out, size_t len, const struct review_vote *votes,
    const char *const *names, size_t n);

/*
 * The built-in review prompt (used when the config gives no
 * review.prompt).  An argv template argument: the caller expands its
 * {story_file}, {story_id} and {repo} placeholders with argv_expand()
 * (literal braces would be written "{{" and "}}"; there are none).  It
 * asks the reviewer to check the change against the story's acceptance
 * criteria and tasks, to change nothing, to give its reasons and to end
 * with one line "VERDICT: APPROVE" or "VERDICT: REJECT".  No line of it
 * is a verdict line itself, so a reviewer that echoes its prompt (codex
 * does) and then dies has no verdict.
 */
extern const char review_default_prompt[];

#endif
