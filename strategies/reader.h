/*
 * reader.h - the one reader of an ended attempt's output (docs/agents.md
 * "One reader").  Pure.
 *
 * adapter_read() reads the tail of the attempt's combined stdout/stderr
 * once and yields everything the rest of storyctl needs from it: the
 * outcome, error code, message and wait hint (or reset time) that
 * classify.h describes, and what the agent reported about its run that
 * agentout.h describes: cost, tokens, final message and session id.
 *
 * One walk, oldest line first: the tail is split into lines once and
 * every JSON event in it is parsed once (a line that holds a JSON value,
 * or a line "{" that opens a pretty-printed object, gemini
 * --output-format json).  Each event goes to agentout.c in the order it
 * was printed; the last CLASSIFY_WINDOW non-empty lines, with the events
 * they hold, go to classify.c, which decides from the end of the output
 * only.  in->adapter names the CLI that printed it (its documented exit
 * statuses); the events of claude, codex and gemini are read whatever
 * the adapter, since a custom command may wrap one of them.
 *
 * classify_attempt() and agentout_parse() are this reader with one half
 * of its report dropped.
 */
#ifndef STORYCTL_READER_H
#define STORYCTL_READER_H

#include "strategies/agentout.h"
#include "strategies/classify.h"

struct agent_report {
	/* outcome, error code, message, wait hint (classify.h) */
	struct classification verdict;
	/* cost, tokens, final message, session id (agentout.h) */
	struct agent_output output;
};

/* Read the attempt *in (its exit, progress and tail).  Never fails:
 * *out is always filled. */
void adapter_read(struct agent_report *out, const struct classify_input *in);

struct transcript;

/*
 * adapter_read() that also normalizes the tail: each line it walks goes
 * to tr (strategies/transcript.h) with the JSON value parsed for the
 * verdict, and tr is ended; tr NULL is adapter_read().  *out is always
 * filled, exactly as adapter_read() fills it; returns 0 or the
 * transcript callback's negative return.
 */
int adapter_read_transcript(struct agent_report *out,
    const struct classify_input *in, struct transcript *tr);

#endif
