/*
 * report_attempts.c - each attempt's transcript and diff in the report
 * (docs/report.md#attempts): the end of the transcript and the diff
 * put in the model of a report file, which holds them (one file, no
 * script), and the links and sections that show them.  The live
 * dashboard's model has none: its page fetches an attempt's transcript
 * or diff from the service when its link is followed
 * (docs/api.md#attempts), so that the page the stream reloads after
 * every event reads no log.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "controller/report/report_int.h"
#include "controller/views/views_diff.h"
#include "controller/views/views_transcript.h"

/* How much of an attempt a report file holds: the last lines of its
 * transcript and the start of its diff; `show` and `diff` have all. */
#define REPORT_TRANSCRIPT_LINES 60
/* ... read from the log's last 4 MiB, so that a night of big logs
 * is reported in seconds */
#define REPORT_TRANSCRIPT_TAIL ((size_t)4 << 20)
#define REPORT_DIFF_MAX 32768

/* "transcript" and "transcript_omitted" of attempt a into o, or
 * "transcript_why". */
static int
embed_transcript(json_t *o, const struct attempt_row *a,
    const struct redact_values *rv, struct sc_err *err)
{
	struct sc_err lerr = {0};
	char *text = NULL;
	size_t omitted = 0, first = 0;
	int rc;

	if (a->log_path[0] == '\0')
		return json_object_set_new(o, "transcript_why",
			   json_string("no log: its agent never started")) < 0
		    ? err_set(err, SC_EOS, "out of memory")
		    : 0;
	rc = views_transcript_tail_from(&text, &omitted, &first, a->log_path,
	    rv, REPORT_TRANSCRIPT_LINES, REPORT_TRANSCRIPT_TAIL, &lerr);
	if (rc == SC_EOS)
		return err_set(err, SC_EOS, "%s", lerr.msg);
	/* a log that is gone (cleaned up) is said, not an error */
	if (rc < 0)
		rc = json_object_set_new(
		    o, "transcript_why", json_string(lerr.msg));
	else
		rc = json_object_set_new(o, "transcript", json_string(text)) |
		    json_object_set_new(o, "transcript_omitted",
			json_integer((json_int_t)omitted));
	free(text);
	return rc < 0 ? err_set(err, SC_EOS, "out of memory") : 0;
}

/* "diff" (cut at a line end past REPORT_DIFF_MAX, "diff_cut") or
 * "diff_why" of attempt a of r into o. */
static int
embed_diff(json_t *o, const struct config *cfg, const struct story_record *r,
    const struct attempt_row *a, struct sc_err *err)
{
	struct views_diff d;
	struct sc_err lerr = {0};
	const char *nl;
	size_t len;
	int rc;

	rc = views_diff_of(&d, cfg, r, a, &lerr);
	if (rc == SC_EOS)
		return err_set(err, SC_EOS, "%s", lerr.msg);
	if (rc < 0 || d.text == NULL) {
		rc = json_object_set_new(
		    o, "diff_why", json_string(rc < 0 ? lerr.msg : d.why));
		goto out;
	}
	len = d.len;
	if (len > REPORT_DIFF_MAX) {
		nl = memrchr(d.text, '\n', REPORT_DIFF_MAX);
		len = nl != NULL ? (size_t)(nl - d.text) + 1 : REPORT_DIFF_MAX;
		rc = json_object_set_new(o, "diff_cut", json_true());
	}
	rc |= json_object_set_new(o, "diff", json_stringn(d.text, len));
out:
	views_diff_release(&d);
	return rc < 0 ? err_set(err, SC_EOS, "out of memory") : 0;
}

int
report_attempts_embed(json_t *story, const struct config *cfg,
    const struct story_record *r, const struct redact_values *rv,
    struct sc_err *err)
{
	json_t *atts = json_object_get(story, "attempts");
	size_t i;
	int rc = 0;

	for (i = 0; rc == 0 && i < r->n && i < json_array_size(atts); i++) {
		rc = embed_transcript(
		    json_array_get(atts, i), &r->rows[i], rv, err);
		if (rc == 0)
			rc = embed_diff(
			    json_array_get(atts, i), cfg, r, &r->rows[i], err);
	}
	return rc;
}

void
report_attempt_links(FILE *f, size_t story, size_t k)
{
	fprintf(f,
	    " <a class=\"att\" href=\"#t-%zu-%zu\">transcript</a> "
	    "<a class=\"att\" href=\"#d-%zu-%zu\">diff</a>",
	    story, k, story, k);
}

/* One part (the transcript or the diff) of attempt a of story s. */
static void
html_part(
    FILE *f, const json_t *s, const json_t *a, size_t i, size_t k, bool diff)
{
	const char *id = report_str(s, "id"),
		   *text = report_str(a, diff ? "diff" : "transcript"),
		   *why = report_str(a, diff ? "diff_why" : "transcript_why");
	long long n = (long long)report_int(a, "attempt");

	fprintf(f, "<section class=\"part\" id=\"%c-%zu-%zu\" data-story=\"",
	    diff ? 'd' : 't', i, k);
	report_put_html(f, id);
	fprintf(f, "\" data-attempt=\"%lld\" data-part=\"%s\"><h3>", n,
	    diff ? "diff" : "transcript");
	report_put_html(f, id);
	fprintf(f, " attempt %lld: %s</h3><pre>", n,
	    diff ? "what it changed" : "transcript");
	if (json_is_string(json_object_get(a, diff ? "diff" : "transcript")))
		report_put_html(f, text[0] != '\0' ? text : "(no change)");
	else if (why[0] != '\0')
		report_put_html(f, why);
	else
		fputs("(follow the attempt's link to load it)", f);
	fputs("</pre><p class=\"more\">", f);
	if (!diff && report_int(a, "transcript_first_line") > 0)
		fprintf(f, "the log's first %lld lines left out; ",
		    (long long)report_int(a, "transcript_first_line"));
	else if (!diff && report_int(a, "transcript_omitted") > 0)
		fprintf(f, "%lld earlier events left out; ",
		    (long long)report_int(a, "transcript_omitted"));
	if (diff && json_is_true(json_object_get(a, "diff_cut")))
		fputs("cut here; ", f);
	fprintf(f, "the whole: <code>storyctl %s ", diff ? "diff" : "show");
	report_put_html(f, id);
	fprintf(f, " --attempt %lld</code></p></section>\n", n);
}

void
report_attempts_html(FILE *f, const json_t *model)
{
	const json_t *s, *a;
	size_t i, k;

	fputs("<section id=\"attempts\" aria-labelledby=\"attempts-h\"><h2 "
	      "id=\"attempts-h\">Attempts</h2>\n",
	    f);
	json_array_foreach(json_object_get(model, "stories"), i, s)
	{
		json_array_foreach(json_object_get(s, "attempts"), k, a)
		{
			html_part(f, s, a, i, k, false);
			html_part(f, s, a, i, k, true);
		}
	}
	fputs("</section>\n", f);
}
