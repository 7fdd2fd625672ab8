/*
 * transcript_int.h - the parts of the transcript (strategies/
 * transcript.h), for transcript.c and transcript_event.c only.  Pure.
 *
 * transcript.c walks the lines (plain text, JSON, pretty-printed
 * objects), builds and emits the events and keeps the final message;
 * transcript_event.c turns one JSON event of claude, codex or gemini
 * into transcript events with the helpers below.
 */
#ifndef STORYCTL_TRANSCRIPT_INT_H
#define STORYCTL_TRANSCRIPT_INT_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "strategies/transcript.h"

/* tool calls remembered so that a result can name its tool */
#define TRANSCRIPT_CALLS 16

struct transcript_call {
	char id[TRANSCRIPT_NAME_MAX];
	char tool[TRANSCRIPT_NAME_MAX];
};

struct transcript {
	transcript_fn fn;
	void *arg;
	int rc; /* the callback's first negative return */
	size_t t; /* the line being read */
	char ts[40]; /* its timestamp, "" none */
	bool any_json; /* a JSON event was read */
	struct transcript_event ev; /* the event being built */
	/* gemini: the assistant's chunks not yet shown (pend) and the
	 * answer they make (run, for the final message) */
	struct transcript_event pend;
	bool pend_open;
	char pend_raw[TRANSCRIPT_TEXT_MAX];
	size_t pend_len;
	bool pend_cut;
	char run[TRANSCRIPT_TEXT_MAX];
	size_t run_len;
	bool run_open;
	/* the final message, raw: the newest structured one */
	char final[TRANSCRIPT_TEXT_MAX];
	size_t final_len;
	bool have_final;
	size_t final_t;
	/* the last plain lines, newest last, for a run without one */
	char plain[TRANSCRIPT_TEXT_MAX];
	size_t plain_len;
	size_t plain_lines;
	bool plain_partial; /* plain is the end of one line too long */
	size_t plain_t;
	/* the last error said, not said again by a summary event */
	char last_err[TRANSCRIPT_TEXT_MAX];
	bool in_trace; /* after a plain error: its stack trace follows */
	struct transcript_call calls[TRANSCRIPT_CALLS];
	size_t ncalls;
	/* a pretty-printed object being gathered (gemini json) */
	char *pretty;
	size_t pretty_len;
	size_t pretty_t;
	bool gathering;
	bool pretty_checked; /* its first key (or end) was seen */
};

/* ---- transcript.c ---- */

/* Start a new event of kind k at the current line. */
struct transcript_event *transcript_ev(
    struct transcript *tr, enum transcript_kind k);
/* Emit tr->ev (after the chunks still pending). */
void transcript_emit(struct transcript *tr);
/* dst (cap bytes) = the cleaned text s[0..n), cut with TRANSCRIPT_CUT
 * (and ev->cut set) when it does not fit. */
void transcript_put(struct transcript_event *ev, char *dst, size_t cap,
    const char *s, size_t n);
/* transcript_put of a JSON string (anything else: ""). */
void transcript_jput(
    struct transcript_event *ev, char *dst, size_t cap, json_t *s);
/* The final message is s[0..n) (append: after a newline). */
void transcript_final(
    struct transcript *tr, const char *s, size_t n, bool append);
/* A summary's error s: emitted unless it is the last error said. */
void transcript_summary_error(struct transcript *tr, json_t *s);
/* A chunk c (a JSON string) of gemini's answer: shown with the next
 * event (one message per stretch of chunks), joined for the final
 * message; a chunk that is no delta starts a new answer. */
void transcript_chunk(struct transcript *tr, json_t *c, bool delta);
/* Remember / look up the tool of a call id. */
void transcript_call_add(
    struct transcript *tr, const char *id, const char *tool);
const char *transcript_call_tool(const struct transcript *tr, const char *id);

/* ---- transcript_event.c ---- */

/* One JSON object of the output.  Returns whether it keeps gemini's
 * answer open (a chunk of it, or an error between two chunks). */
bool transcript_json(struct transcript *tr, json_t *o);

#endif
