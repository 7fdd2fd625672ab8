/*
 * views_transcript.h - an attempt's log rendered as its transcript
 * (`show STORY --attempt N`, docs/agents.md#transcript): the log file
 * streamed through strategies/transcript.h in fixed chunks, so that a
 * log of any size is rendered in bounded memory, and every text the
 * events carry redacted (state/redact.h) before anyone sees it.
 *
 * "t" of an event is the 0-based index of the log line it came from
 * (every CLI's stream has lines; not all have timestamps); "ts" is the
 * stream's own timestamp when the event carried one.
 */
#ifndef STORYCTL_VIEWS_TRANSCRIPT_H
#define STORYCTL_VIEWS_TRANSCRIPT_H

#include <jansson.h>

#include "common/err.h"
#include "state/redact.h"
#include "strategies/transcript.h"

/* a log line longer than this is cut there (the transcript is told),
 * the rest of it skipped */
#define VIEWS_TRANSCRIPT_LINE_CAP TRANSCRIPT_LINE_MAX

/* Called with each event, redacted; a negative return stops the walk
 * and is returned by views_transcript_each(). */
typedef int (*views_transcript_fn)(
    const struct transcript_event *ev, void *arg);

/*
 * The transcript of the log at path, event by event, to fn: each text
 * field redacted with the built-in patterns and secrets' values
 * (secrets NULL: the patterns only).  SC_EIO when the log cannot be
 * opened or read, SC_EOS when out of memory, else fn's negative return.
 */
int views_transcript_each(const char *path, const struct redact_values *secrets,
    views_transcript_fn fn, void *arg, struct sc_err *err);

/* The same for the last tail bytes of the log only (0: all of it): the
 * lines before are counted, not read as events, so "t" stays the line
 * of the log; *first_line (may be NULL) the first line read.  For the
 * service and the report, which show an attempt's end and must not
 * spend seconds on a log of hundreds of MB (docs/api.md#attempts). */
int views_transcript_each_tail(const char *path,
    const struct redact_values *secrets, size_t tail, size_t *first_line,
    views_transcript_fn fn, void *arg, struct sc_err *err);

/* The event as JSON: {"t", "kind", ...} with only the fields it has
 * (docs/agents.md#transcript); NULL when out of memory. */
json_t *views_transcript_event_json(const struct transcript_event *ev);

/*
 * `show --attempt N --json`: *out = the array of the log's events (the
 * caller's, json_decref()).  It holds every event: for a log too big
 * to hold, views_transcript_each() with views_transcript_event_json()
 * prints them one at a time.
 */
int views_transcript_json(json_t **out, const char *path,
    const struct redact_values *secrets, struct sc_err *err);

/* The event as human text, one line (a multi-line text indented under
 * it), into buf (cap > 0 bytes, always NUL-ended, cut to fit); returns
 * the length written. */
size_t views_transcript_text(
    char *buf, size_t cap, const struct transcript_event *ev);

/*
 * The last max_lines events of the log at path as text, one line each as
 * `show --attempt N` prints them ("[t] ..."), each line at most
 * VIEWS_TRANSCRIPT_TAIL_LINE bytes: for the report and the dashboard,
 * which show an attempt's end and point to `show` for the whole
 * (docs/report.md#attempts).  *out malloc'd (the caller's), *omitted
 * the events before the tail.  Errors as views_transcript_each().
 */
#define VIEWS_TRANSCRIPT_TAIL_LINE 600
int views_transcript_tail(char **out, size_t *omitted, const char *path,
    const struct redact_values *secrets, size_t max_lines, struct sc_err *err);

/* The same from the last tail bytes of the log (0: all);
 * *first_line (may be NULL) the first line read, *omitted the events
 * read but not kept. */
int views_transcript_tail_from(char **out, size_t *omitted, size_t *first_line,
    const char *path, const struct redact_values *secrets, size_t max_lines,
    size_t tail, struct sc_err *err);

#endif
