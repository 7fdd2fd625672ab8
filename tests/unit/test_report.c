/* test_report.c - the report's renderers on hand-made models
 * (docs/report.md): what needs a person comes first and in order,
 * one timeline row per story and one bar per attempt, waits and marks,
 * hostile text escaped in HTML and markdown, nothing loaded from the
 * network, the live page's script only on the live page. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "controller/report/report.h"
#include "controller/report/report_int.h"

/* A finished night: s-ok done in one attempt; s-stall deferred after
 * two (a wait between them); s-bad escalated, its reason and agent
 * hostile; s-run still running; a breaker pause. */
static const char model_text[] =
    "{\"format_version\": 1, \"generated_at\": \"2026-11-27T03:53:20Z\","
    " \"status\": {\"batch\": 7, \"state\": \"running\", \"counts\":"
    "  {\"pending\": 0, \"running\": 1, \"done\": 1, \"deferred\": 1,"
    "   \"escalated\": 1, \"blocked\": 0, \"invalid\": 0},"
    "  \"stories\": 4, \"cost_usd\": 1.5},"
    " \"stories\": ["
    "  {\"id\": \"s-ok\", \"status\": \"done\", \"reason\": \"D1: success\","
    "   \"tasks_completed\": 3, \"tasks_total\": 3, \"cost_usd\": 0.5,"
    "   \"attempts\": [{\"attempt\": 1, \"agent\": \"claude\", \"role\":"
    "    \"primary\", \"outcome\": \"success\", \"start_ms\": 1795750000000,"
    "    \"end_ms\": 1795750600000, \"duration_ms\": 600000,"
    "    \"decision\": \"done\", \"delay_ms\": 0, \"tasks_completed\": 3,"
    "    \"tasks_total\": 3, \"evidence\": {\"measured\": true,"
    "    \"files_changed\": 0, \"lines_added\": 0, \"lines_removed\": 0,"
    "    \"ticked\": 3, \"unticked\": 0, \"first_unticked\": null,"
    "    \"flags\": [\"ticked_without_change\"]}}]},"
    "  {\"id\": \"s-stall\", \"status\": \"deferred\", \"reason\": \"D8: "
    "plateau\", \"tasks_completed\": 2, \"tasks_total\": 5,"
    "   \"cost_usd\": 0, \"attempts\": ["
    "   {\"attempt\": 1, \"agent\": \"claude\", \"role\": \"primary\","
    "    \"outcome\": \"network\", \"start_ms\": 1795750000000,"
    "    \"end_ms\": 1795750060000, \"decision\": \"retry\","
    "    \"delay_ms\": 300000},"
    "   {\"attempt\": 2, \"agent\": \"codex\", \"role\": \"fallback\","
    "    \"outcome\": \"incomplete\", \"start_ms\": 1795750360000,"
    "    \"end_ms\": 1795751000000, \"decision\": \"defer\","
    "    \"delay_ms\": 0}]},"
    "  {\"id\": \"s-bad\", \"status\": \"escalated\", \"reason\":"
    "   \"<script>alert(1)</script> & | pipes\", \"tasks_completed\": 0,"
    "   \"tasks_total\": 2, \"cost_usd\": 1.0, \"attempts\": ["
    "   {\"attempt\": 1, \"agent\": \"a\\\"gent<b>\", \"role\": \"primary\","
    "    \"outcome\": \"crash\", \"start_ms\": 1795751000000,"
    "    \"end_ms\": 1795751100000, \"decision\": \"escalate\","
    "    \"delay_ms\": 0}]},"
    "  {\"id\": \"s-run\", \"status\": \"running\", \"reason\": null,"
    "   \"tasks_completed\": 0, \"tasks_total\": 1, \"cost_usd\": 0,"
    "   \"attempts\": [{\"attempt\": 1, \"agent\": \"claude\", \"role\":"
    "    \"primary\", \"outcome\": null, \"start_ms\": 1795751500000,"
    "    \"end_ms\": null, \"decision\": null, \"delay_ms\": 0}]}],"
    " \"stats\": {\"success\": {\"stories\": 4, \"done\": 1,"
    "   \"first_try_rate\": 0.25, \"by_attempt\": [{\"attempt\": 1,"
    "   \"tries\": 4, \"success\": 1, \"rate\": 0.25}]},"
    "  \"recovery\": {\"failures\": 1, \"recovered\": 0, \"rate\": 0},"
    "  \"attempts\": {\"by_agent\": [{\"agent\": \"claude\","
    "   \"attempts\": 3, \"success\": 1, \"run_ms\": 660000}]},"
    "  \"delays\": {\"network\": {\"count\": 1, \"mean_ms\": 300000,"
    "   \"p50_ms\": 300000, \"p95_ms\": 300000, \"total_ms\": 300000},"
    "   \"backoff\": {\"count\": 0}},"
    "  \"error_codes\": [{\"code\": \"CRASH\", \"outcome\": \"crash\","
    "   \"class\": \"other\", \"count\": 1}],"
    "  \"time_lost\": {\"total_ms\": 300000, \"breaker_pauses\": 1,"
    "   \"stops\": 0}, \"cost\": {\"cost_usd\": 1.5, \"by_agent\":"
    "   [{\"agent\": \"claude\", \"cost_usd\": 0.5}]}, \"plateaus\": []},"
    " \"marks\": [{\"kind\": \"breaker\", \"time\": "
    "\"2026-11-27T03:40:00Z\", \"message\": \"breaker: pausing\"},"
    "  {\"kind\": \"batch\", \"time\": \"2026-11-27T03:26:40Z\","
    "   \"message\": \"batch started\"}]}";

static json_t *
model(void)
{
	json_error_t je;
	json_t *m = json_loads(model_text, 0, &je);

	if (m == NULL)
		fail_msg("model: %s at %d", je.text, je.position);
	return m;
}

static char *
html(const json_t *m, bool live, bool fragment)
{
	struct report_html_opts o = {live, fragment, NULL, NULL};
	struct sc_err err = {0};
	char *out = NULL;

	assert_int_equal(report_html(&out, m, &o, &err), 0);
	assert_non_null(out);
	return out;
}

static int
count(const char *hay, const char *needle)
{
	int n = 0;

	for (hay = strstr(hay, needle); hay != NULL;
	     hay = strstr(hay + 1, needle))
		n++;
	return n;
}

/* Escalated first, then deferred; done and running stories are not
 * listed; each with its commands. */
static void
test_needs_first_and_ordered(void **state)
{
	json_t *m = model();
	char *h = html(m, false, false);
	const char *needs = strstr(h, "id=\"needs-you\"");
	const char *bad =
	    strstr(h, "<li class=\"story st-escalated\" data-story=\"s-bad\"");
	const char *stall =
	    strstr(h, "<li class=\"story st-deferred\" data-story=\"s-stall\"");
	const char *tl = strstr(h, "<svg class=\"timeline\"");

	(void)state;
	assert_non_null(needs);
	assert_non_null(bad);
	assert_non_null(stall);
	assert_non_null(tl);
	assert_true(needs < bad && bad < stall && stall < tl);
	assert_int_equal(count(h, "<li class=\"story "), 2);
	assert_non_null(strstr(h, "Needs you (2)"));
	assert_non_null(
	    strstr(h, "<code class=\"act\">storyctl requeue s-bad</code>"));
	assert_non_null(
	    strstr(h, "<code class=\"act\">storyctl log s-bad</code>"));
	free(h);
	json_decref(m);
}

/* One row per story, one bar per attempt with the agent in its data
 * and title, a wait line after the retried attempt, the breaker's
 * line; the running attempt is drawn as running. */
static void
test_timeline_rows_bars_waits_marks(void **state)
{
	json_t *m = model();
	char *h = html(m, false, false);

	(void)state;
	assert_int_equal(count(h, "<g class=\"row "), 4);
	assert_int_equal(count(h, "<g class=\"bar "), 5);
	assert_non_null(strstr(h,
	    "data-story=\"s-stall\" data-attempt=\"2\" "
	    "data-outcome=\"incomplete\" data-agent=\"codex\""));
	assert_non_null(
	    strstr(h, "s-stall attempt 2: codex (fallback), incomplete"));
	assert_int_equal(count(h, "<g class=\"wait\">"), 1);
	assert_non_null(strstr(h, "wait 5m00s after attempt 1"));
	assert_int_equal(count(h, "<g class=\"mark m-breaker\""), 1);
	/* a batch mark widens the window but draws no line */
	assert_int_equal(count(h, "m-batch"), 0);
	assert_non_null(strstr(h, "<g class=\"bar o-running\""));
	/* a 10-minute bar is wide enough for the whole label */
	assert_non_null(strstr(h, ">#1 claude success</text>"));
	free(h);
	json_decref(m);
}

/* Hostile text is text: no tag or attribute can be injected, in the
 * page or the picture; in markdown a '|' cannot open a cell. */
static void
test_escaping(void **state)
{
	json_t *m = model();
	char *h = html(m, false, false), *md = NULL;
	struct sc_err err = {0};

	(void)state;
	assert_null(strstr(h, "<script>alert"));
	assert_null(strstr(h, "<b>\""));
	assert_non_null(
	    strstr(h, "&lt;script&gt;alert(1)&lt;/script&gt; &amp; | pipes"));
	assert_non_null(strstr(h, "data-agent=\"a&quot;gent&lt;b&gt;\""));
	assert_int_equal(report_md(&md, m, &err), 0);
	assert_non_null(strstr(md, "<script>alert(1)</script> & \\| pipes"));
	free(md);
	free(h);
	json_decref(m);
}

/* Self-contained: no script, link, image or import on the static page
 * (the SVG namespace is a name, not a load); the live page alone has
 * the script, which follows the event stream. */
static void
test_self_contained_and_live(void **state)
{
	json_t *m = model();
	char *h = html(m, false, false), *live = html(m, true, false);
	char *frag = html(m, true, true);

	(void)state;
	assert_null(strstr(h, "<script"));
	assert_null(strstr(h, " src="));
	assert_null(strstr(h, "<link"));
	assert_null(strstr(h, "@import"));
	assert_null(strstr(h, "url("));
	assert_int_equal(count(h, "http"), 1); /* xmlns of the SVG */
	/* the stream is read with fetch, which sends the session's header
	 * (docs/api.md#the-dashboard); no cookie is touched */
	assert_non_null(strstr(live, "get('/v1/events/stream')"));
	assert_non_null(strstr(live, "'X-Storyctl-Session'"));
	assert_null(strstr(live, "EventSource"));
	assert_null(strstr(live, "cookie"));
	assert_int_equal(count(live, "<script>"), 1);
	/* the fragment is the <main> alone, which the script swaps in */
	assert_int_equal(strncmp(frag, "<main id=\"report\">", 18), 0);
	assert_null(strstr(frag, "<html"));
	assert_null(strstr(frag, "<script"));
	free(frag);
	free(live);
	free(h);
	json_decref(m);
}

/* Markdown: the sections, the table's rows, the marks. */
static void
test_markdown(void **state)
{
	json_t *m = model();
	char *md = NULL;
	struct sc_err err = {0};

	(void)state;
	assert_int_equal(report_md(&md, m, &err), 0);
	assert_int_equal(strncmp(md, "# storyctl: batch 7\n", 20), 0);
	assert_true(strstr(md, "## Needs you (2)") < strstr(md, "## Counts"));
	assert_true(strstr(md, "- **s-bad** (escalated") <
	    strstr(md, "- **s-stall** (deferred"));
	assert_non_null(strstr(md,
	    "| s-stall | deferred | 2/5 | 1 claude network "
	    "→ retry; 2 codex incomplete → defer |"));
	assert_non_null(
	    strstr(md, "| s-run | running | 0/1 | 1 claude running |"));
	assert_non_null(
	    strstr(md, "- 2026-11-27T03:40:00Z breaker: breaker: pausing"));
	free(md);
	json_decref(m);
}

/* An attempt whose boxes were ticked with nothing else changed is
 * listed under the stories that need a person, marked on its bar and
 * in its story's row (docs/evidence.md); the telemetry is shown. */
static void
test_flags_and_telemetry(void **state)
{
	json_t *m = model();
	char *h = html(m, false, false), *md = NULL;
	struct sc_err err = {0};
	const char *flag = strstr(h,
	    "<li class=\"flag\" data-story=\"s-ok\" "
	    "data-attempt=\"1\">");

	(void)state;
	assert_non_null(flag);
	assert_true(flag < strstr(h, "<svg class=\"timeline\""));
	assert_non_null(
	    strstr(h, "ticked 3 boxes without changing another file"));
	assert_non_null(strstr(h, "<g class=\"bar o-success flagged\""));
	assert_int_equal(count(h, " flagged\" data-story="), 1);
	assert_non_null(strstr(h, "<span class=\"change\">0 files +0 "));
	assert_non_null(strstr(h,
	    "1 of 4 stories done (25% on the first try); "
	    "0 of 1 transient failures recovered (0%)"));
	assert_non_null(strstr(h, "<table class=\"stat\" id=\"t-agents\">"));
	assert_non_null(strstr(h,
	    "<td>claude</td><td>3</td><td>1</td><td>"
	    "11m00s</td><td>$0.50</td>"));
	assert_non_null(strstr(h, "<td>network</td><td>1</td><td>5m00s</td>"));
	/* a table with no row is left out */
	assert_null(strstr(h, "id=\"t-plateaus\""));
	assert_int_equal(report_md(&md, m, &err), 0);
	assert_non_null(strstr(md,
	    "### Boxes to check\n\n- **s-ok** attempt 1 "
	    "(claude): ticked 3 boxes without changing "
	    "another file"));
	assert_non_null(strstr(md, "**Attempts by agent**\n\n| agent |"));
	assert_non_null(strstr(md, "| CRASH | crash | other | 1 |"));
	free(md);
	free(h);
	json_decref(m);
}

/* Nothing needs anyone, and no attempt yet: said in words. */
static void
test_empty_batch(void **state)
{
	json_t *m = json_pack("{s:i, s:s, s:{s:n, s:{}, s:i, s:f}, s:[], s:[]}",
	    "format_version", 1, "generated_at", "2026-11-27T08:00:00Z",
	    "status", "batch", "counts", "stories", 0, "cost_usd", 0.0,
	    "stories", "marks");
	char *h;

	(void)state;
	assert_non_null(m);
	h = html(m, false, false);
	assert_non_null(strstr(h, "Nothing needs you"));
	assert_non_null(strstr(h, "No attempt has started yet."));
	assert_non_null(strstr(h, "no batch yet"));
	free(h);
	json_decref(m);
}

static void
test_helpers(void **state)
{
	char buf[32];
	json_t *t = json_string("2026-11-27T08:00:00Z");

	(void)state;
	assert_true(report_time_ms(t) == 1795766400000LL);
	json_decref(t);
	t = json_string("yesterday");
	assert_true(report_time_ms(t) == 0);
	json_decref(t);
	report_fmt_ms(buf, sizeof(buf), 850);
	assert_string_equal(buf, "850ms");
	report_fmt_ms(buf, sizeof(buf), 185000);
	assert_string_equal(buf, "3m05s");
	report_fmt_ms(buf, sizeof(buf), 7800000);
	assert_string_equal(buf, "2h10m");
	assert_int_equal(report_needs_rank("escalated"), 0);
	assert_int_equal(report_needs_rank("invalid"), 3);
	assert_int_equal(report_needs_rank("done"), -1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_needs_first_and_ordered),
	    cmocka_unit_test(test_timeline_rows_bars_waits_marks),
	    cmocka_unit_test(test_escaping),
	    cmocka_unit_test(test_self_contained_and_live),
	    cmocka_unit_test(test_markdown),
	    cmocka_unit_test(test_flags_and_telemetry),
	    cmocka_unit_test(test_empty_batch),
	    cmocka_unit_test(test_helpers),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
