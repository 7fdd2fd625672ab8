/*
 * reader_int.h - the parts of the one reader (strategies/reader.c), for
 * reader.c, classify.c and agentout.c only.  Pure.
 *
 * reader.c splits the tail into lines once and parses each JSON event
 * once; it hands every line to the two parts below:
 *
 *   classify.c  gets the window, the last CLASSIFY_WINDOW non-empty
 *               lines, each with the JSON object it holds (or NULL), and
 *               decides the outcome, error code, message and wait hint;
 *   agentout.c  gets every event in order (agentout_event) and every
 *               plain line (agentout_text), and keeps the cost, tokens,
 *               final message and session id.
 */
#ifndef STORYCTL_READER_INT_H
#define STORYCTL_READER_INT_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "strategies/agentout.h"
#include "strategies/classify.h"

/* ---- classify.c ---- */

/* the classifier reads only the last this many non-empty lines */
#define CLASSIFY_WINDOW 40

struct classify_line {
	size_t off; /* the line in the tail, without its '\n' */
	size_t len;
	/* the JSON object the line holds (the one a line "{" opens, for a
	 * pretty-printed one), or NULL; the reader owns it */
	json_t *event;
	bool skip; /* classify.c's own: a content or success event */
};

/*
 * Classify the attempt from *in and the window v[0..n), newest line
 * first (n <= CLASSIFY_WINDOW; a line is non-empty when it holds a byte
 * that is not a blank or NUL).  Sets v[i].skip.
 */
void classify_window(struct classification *out,
    const struct classify_input *in, struct classify_line *v, int n);

/* ---- agentout.c ---- */

/* of a longer plain line only its last AGENTOUT_VIEW_MAX bytes are
 * looked at: more than the result can hold in any case */
#define AGENTOUT_VIEW_MAX (2 * AGENTOUT_RESULT_MAX)

struct agentout_span {
	size_t off;
	size_t len;
};

/* agentout.c's state while the reader walks the tail: on the stack of
 * the reader, bounded, nothing allocated */
struct agentout_state {
	struct agent_output *out;
	const char *tail;
	/* out->result_text holds the newest structured message, raw */
	bool have_msg;
	size_t msg_len;
	/* gemini: the assistant message being streamed in delta chunks */
	char run[AGENTOUT_RESULT_MAX];
	size_t run_len;
	bool run_open;
	/* the newest visible plain lines; ring[i % AGENTOUT_TEXT_LINES] */
	struct agentout_span ring[AGENTOUT_TEXT_LINES];
	size_t nring;
	char tmp[AGENTOUT_VIEW_MAX + 1];
};

/* Start on the tail (never NULL); *out is cleared. */
void agentout_begin(
    struct agentout_state *st, struct agent_output *out, const char *tail);
/* One JSON event (an object), in the order printed. */
void agentout_event(struct agentout_state *st, json_t *o);
/* One plain line, tail[p..e) (e is its '\n' or the end). */
void agentout_text(struct agentout_state *st, size_t p, size_t e);
/* The tail is read: the final message, or the last plain lines. */
void agentout_end(struct agentout_state *st);

#endif
