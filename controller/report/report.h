/*
 * report.h - the morning report (docs/report.md): what the night did
 * and what needs a person, as one self-contained HTML page (the same
 * page `storyctl serve` shows live at /) or as markdown.
 *
 * A report is built in two steps: report_model() reads the batch once
 * into a JSON document (the status, every story's show JSON, the
 * batch's marks from the event log); report_html() and report_md()
 * render that document and do no I/O, so the unit tests render
 * hand-made models.
 */
#ifndef STORYCTL_REPORT_H
#define STORYCTL_REPORT_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "common/err.h"
#include "controller/views/view.h"

/* The model of the latest batch of v at now_ms (docs/report.md#model);
 * with embed, each attempt's transcript end and diff in it, for a
 * report file (docs/report.md#attempts).  *out is the caller's
 * (json_decref()). */
int report_model(json_t **out, struct view *v, int64_t now_ms, bool embed,
    struct sc_err *err);

/* How the HTML page is made. */
struct report_html_opts {
	/* The live page of `storyctl serve`: a script follows the event
	 * stream and fetches the page again after each event
	 * (docs/report.md#live).  false: a static file, no script. */
	bool live;
	/* Only the <main> element, which the live page fetches again
	 * after an event and swaps in. */
	bool fragment;
	/* When not NULL, the HTML of the <main> element in place of the
	 * model's (model may then be NULL), and the page's title: the
	 * dashboard's sign-in shell (docs/api.md#the-dashboard). */
	const char *main;
	const char *title;
};

/* The page for model, NUL-terminated, into *out (the caller's, free()).
 * Everything it shows is in the file: styles inline, the timeline as
 * inline SVG, nothing loaded from the network. */
int report_html(char **out, const json_t *model,
    const struct report_html_opts *o, struct sc_err *err);

/* The live page's script as a Content-Security-Policy source,
 * "sha256-BASE64" of its text, into buf: the page may run that script
 * and no other.  -1 when buf is too small. */
int report_live_script_hash(char *buf, size_t len);

/* The same report as markdown, into *out (the caller's, free()). */
int report_md(char **out, const json_t *model, struct sc_err *err);

#endif
