/*
 * report_html.c - see report.h: the report as one HTML page
 * (docs/report.md): the stories that need a person first, with their
 * reasons and the commands to act, then the counts, the timeline
 * (report_svg.c) and every story's attempts in text.
 *
 * One file with its styles inline and no external resource, so that it
 * can be mailed, attached to a CI run or opened from disk; colours are
 * the Okabe-Ito palette (distinguishable with the common colour-vision
 * deficiencies) and every colour has a text label beside it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "controller/report/report.h"
#include "controller/report/report_int.h"

static const char page_css[] =
    ":root{color-scheme:light;--fg:#1b1b1b;--muted:#555;--line:#d0d0d0;"
    "--band:#f4f4f4}\n"
    "body{font:16px/1.45 system-ui,-apple-system,'Segoe UI',Roboto,"
    "'DejaVu Sans',sans-serif;color:var(--fg);background:#fff;margin:0}\n"
    "main{max-width:1100px;margin:0 auto;padding:16px}\n"
    "h1{font-size:1.5rem;margin:.2em 0}h2{font-size:1.2rem;margin:1.4em 0 "
    ".5em;border-bottom:1px solid var(--line)}\n"
    ".meta{color:var(--muted);margin:.2em 0}\n"
    ".banner{border:2px solid #D55E00;padding:8px 12px;border-radius:6px}\n"
    ".needs{list-style:none;padding:0;margin:0}\n"
    ".needs li{border:1px solid var(--line);border-left:6px solid #D55E00;"
    "border-radius:6px;padding:8px 12px;margin:0 0 8px}\n"
    ".needs li.st-deferred{border-left-color:#E69F00}\n"
    ".needs li.st-blocked,.needs li.st-invalid{border-left-color:#555}\n"
    ".needs .reason{margin:.3em 0;overflow-wrap:anywhere}\n"
    "code{font:14px/1.3 ui-monospace,'DejaVu Sans Mono',monospace;"
    "background:#eef;padding:1px 4px;border-radius:3px;"
    "overflow-wrap:anywhere}\n"
    ".badge{display:inline-block;font-size:.8rem;font-weight:600;"
    "padding:0 6px;border-radius:9px;border:1px solid currentColor}\n"
    ".counts{display:flex;flex-wrap:wrap;gap:8px;padding:0;margin:0;"
    "list-style:none}\n"
    ".counts li{border:1px solid var(--line);border-radius:6px;padding:4px "
    "10px}\n"
    ".counts b{font-size:1.2rem}\n"
    ".scroll{overflow-x:auto;-webkit-overflow-scrolling:touch}\n"
    "svg.timeline{display:block;font:12px system-ui,'DejaVu Sans',"
    "sans-serif}\n"
    "svg .band{fill:transparent}svg .row:nth-child(odd) .band{fill:"
    "var(--band)}\n"
    "svg .label{font-weight:600;fill:var(--fg)}svg .label .st{font-weight:"
    "400;fill:var(--muted)}\n"
    "svg .axis line{stroke:#e3e3e3}svg .axis text{fill:var(--muted)}\n"
    "svg .bar rect{stroke:#1b1b1b;stroke-width:.6}svg .bar text{fill:#000;"
    "font-size:11px}\n"
    "svg .o-success rect{fill:#009E73}svg .o-success text{fill:#fff}\n"
    "svg .o-incomplete rect{fill:#E69F00}\n"
    "svg .o-gate_failed rect{fill:#CC79A7}\n"
    "svg .o-crash rect{fill:#D55E00}svg .o-crash text{fill:#fff}\n"
    "svg .o-timeout rect{fill:#F0E442}\n"
    "svg .o-network rect{fill:#56B4E9}\n"
    "svg .o-rate_limit rect{fill:#0072B2}svg .o-rate_limit text{fill:"
    "#fff}\n"
    "svg .o-usage_limit rect{fill:#3B4B73}svg .o-usage_limit text{fill:"
    "#fff}\n"
    "svg .o-permanent rect{fill:#000}svg .o-permanent text{fill:#fff}\n"
    "svg .o-interrupted rect{fill:#999}\n"
    "svg .o-running rect{fill:#fff;stroke-dasharray:3 2}\n"
    "svg .wait line{stroke:#555;stroke-dasharray:4 3}\n"
    "svg .limit line{stroke:#3B4B73;stroke-width:3;stroke-dasharray:2 2}"
    "svg .limit text{fill:#3B4B73;font-size:10px}\n"
    "svg .mark line{stroke:#D55E00;stroke-width:2;stroke-dasharray:6 3}"
    "svg .mark text{fill:#D55E00;font-weight:600}\n"
    ".legend{display:flex;flex-wrap:wrap;gap:4px 14px;padding:0;"
    "list-style:none;font-size:.9rem}\n"
    ".sw{display:inline-block;width:14px;height:14px;border:1px solid "
    "#1b1b1b;vertical-align:-2px;margin-right:4px}\n"
    "table{border-collapse:collapse;width:100%}th,td{text-align:left;"
    "padding:4px 8px;border-bottom:1px solid var(--line);vertical-align:"
    "top}\n"
    "td.reason{overflow-wrap:anywhere;min-width:12em}\n"
    "ol.attempts{margin:0;padding-left:1.4em}\n"
    "a.att{font-size:.85rem;margin-left:.3em}\n"
    "section.part{margin:1rem 0}section.part h3{font-size:1rem;margin:0 0 "
    ".3rem}section.part pre{max-height:24rem;overflow:auto;white-space:"
    "pre-wrap;overflow-wrap:anywhere;background:#f6f6f6;padding:.5rem;"
    "font-size:.8rem}section.part:target{outline:2px solid #0072B2}\n"
    ".hint{display:none;color:var(--muted);font-size:.85rem}\n"
    ".needs li.flag{border-left-color:#CC79A7}\n"
    ".change{color:var(--muted);font-size:.9rem}.flagtext{color:#A0306E;"
    "font-weight:600}\n"
    "svg .flagged rect{stroke:#A0306E;stroke-width:2.5}\n"
    ".stats{display:flex;flex-wrap:wrap;gap:8px 24px}\n"
    "table.stat{width:auto}table.stat caption{text-align:left;font-weight:"
    "600;padding:4px 0}\n"
    /* a phone: the table's rows become blocks, each cell labelled */
    "@media (max-width:600px){main{padding:10px}h1{font-size:1.25rem}"
    ".hint{display:block}table.stories thead{display:none}"
    "table.stories,table.stories tbody,table.stories tr,table.stories td"
    "{display:block;width:auto}table.stories tr{border-bottom:1px solid "
    "var(--line);padding:4px 0}table.stories td{border:0;padding:1px 0}"
    "table.stories td::before{content:attr(data-label) ': ';font-weight:"
    "600}}\n";

/* The swatch colours of the legend, as the stylesheet colours bars. */
static const struct {
	const char *outcome, *colour, *meaning;
} legend[] = {
    {"success", "#009E73", "every task done"},
    {"incomplete", "#E69F00", "ended with tasks left"},
    {"gate_failed", "#CC79A7", "a gate or the review refused it"},
    {"crash", "#D55E00", "the agent failed"},
    {"timeout", "#F0E442", "killed at its time limit or stalled"},
    {"network", "#56B4E9", "the network dropped"},
    {"rate_limit", "#0072B2", "rate limited"},
    {"usage_limit", "#3B4B73", "a usage limit paused the agent"},
    {"permanent", "#000000", "an error no retry fixes"},
    {"interrupted", "#999999", "stopped by a signal or a crash"},
    {"running", "#ffffff", "still running"},
};

/* The header: what batch, its state, when. */
static void
html_head(FILE *f, const json_t *model)
{
	const json_t *st = json_object_get(model, "status");
	const json_t *batch = json_object_get(st, "batch");

	fputs("<header><h1>storyctl: ", f);
	if (json_is_integer(batch))
		fprintf(f, "batch %lld", (long long)json_integer_value(batch));
	else
		fputs("no batch yet", f);
	fputs("</h1><p class=\"meta\">", f);
	if (json_is_string(json_object_get(st, "state"))) {
		fputs("state <b id=\"batch-state\">", f);
		report_put_html(f, report_str(st, "state"));
		fputs("</b> &middot; ", f);
	}
	fprintf(f, "%lld stor%s &middot; $%.2f spent &middot; generated ",
	    (long long)report_int(st, "stories"),
	    report_int(st, "stories") == 1 ? "y" : "ies",
	    json_number_value(json_object_get(st, "cost_usd")));
	report_put_html(f, report_str(model, "generated_at"));
	fputs("</p></header>\n", f);
	if (strcmp(report_str(st, "state"), "stopped") == 0)
		fputs("<p class=\"banner\" id=\"stopped\">The batch stopped "
		      "before the end: <code>storyctl resume</code> goes "
		      "on.</p>\n",
		    f);
}

/* One attempt under Boxes to check (report_each_flag()). */
static void
html_flag(void *ctx, const json_t *s, const json_t *a, const char *why, int n)
{
	FILE *f = ctx;

	if (n == 0)
		fputs(
		    "<h3 id=\"flagged-h\">Boxes to check</h3><ul "
		    "class=\"needs flagged\" aria-labelledby=\"flagged-h\">\n",
		    f);
	fputs("<li class=\"flag\" data-story=\"", f);
	report_put_html(f, report_str(s, "id"));
	fprintf(f,
	    "\" data-attempt=\"%lld\"><span class=\"badge\">flagged</span> "
	    "<b>",
	    (long long)report_int(a, "attempt"));
	report_put_html(f, report_str(s, "id"));
	fprintf(f, "</b> attempt %lld (", (long long)report_int(a, "attempt"));
	report_put_html(f, report_str(a, "agent"));
	fputs(")<p class=\"reason\">", f);
	report_put_html(f, why);
	fputs("</p><code class=\"act\">storyctl show ", f);
	report_put_html(f, report_str(s, "id"));
	fputs("</code></li>\n", f);
}

/* Attempts whose boxes do not match their work (docs/evidence.md): a
 * person should look even when the story is done. */
static void
html_flagged(FILE *f, const json_t *model)
{
	if (report_each_flag(model, html_flag, f) > 0)
		fputs("</ul>\n", f);
}

/* The stories that need a person, first on the page. */
static void
html_needs(FILE *f, const json_t *model)
{
	json_t *needs = report_needs(model), *s;
	char act[REPORT_ACTIONS_MAX][200];
	size_t i;
	int k, n;

	fprintf(f,
	    "<section id=\"needs-you\" aria-labelledby=\"needs-h\">"
	    "<h2 id=\"needs-h\">Needs you (%zu)</h2>\n",
	    json_array_size(needs));
	if (json_array_size(needs) == 0)
		fputs("<p id=\"nothing-needed\">Nothing needs you: every "
		      "story is done or still in the batch.</p>\n",
		    f);
	else
		fputs("<ul class=\"needs\">\n", f);
	json_array_foreach(needs, i, s)
	{
		fprintf(f, "<li class=\"story st-%s\" data-story=\"",
		    report_str(s, "status"));
		report_put_html(f, report_str(s, "id"));
		fprintf(f,
		    "\" data-status=\"%s\"><span class=\"badge\">%s"
		    "</span> <b>",
		    report_str(s, "status"), report_str(s, "status"));
		report_put_html(f, report_str(s, "id"));
		fprintf(f,
		    "</b> &middot; %lld/%lld tasks &middot; %zu "
		    "attempts<p class=\"reason\">",
		    (long long)report_int(s, "tasks_completed"),
		    (long long)report_int(s, "tasks_total"),
		    json_array_size(json_object_get(s, "attempts")));
		report_put_html(f, report_str(s, "reason"));
		fputs("</p>", f);
		n = report_actions(
		    act, report_str(s, "status"), report_str(s, "id"));
		for (k = 0; k < n; k++) {
			fputs(k ? " " : "", f);
			fputs("<code class=\"act\">", f);
			report_put_html(f, act[k]);
			fputs("</code>", f);
		}
		fputs("</li>\n", f);
	}
	if (json_array_size(needs) > 0)
		fputs("</ul>\n", f);
	html_flagged(f, model);
	fputs("</section>\n", f);
	json_decref(needs);
}

static void
html_counts(FILE *f, const json_t *model)
{
	const json_t *counts =
	    json_object_get(json_object_get(model, "status"), "counts");
	const char *k;
	const json_t *v;

	fputs("<section id=\"counts\" aria-labelledby=\"counts-h\"><h2 "
	      "id=\"counts-h\">Counts</h2><ul class=\"counts\">",
	    f);
	json_object_foreach((json_t *)counts, k, v)
	{
		fprintf(f, "<li data-status=\"%s\"><b>%lld</b> %s</li>", k,
		    (long long)json_integer_value(v), k);
	}
	fputs("</ul></section>\n", f);
}

static void
html_timeline(FILE *f, const json_t *model)
{
	size_t i;

	fputs("<section id=\"timeline-s\" aria-labelledby=\"tl-h\"><h2 "
	      "id=\"tl-h\">The night</h2><div class=\"scroll\">",
	    f);
	report_svg(f, model);
	fputs("</div><p class=\"hint\">The picture scrolls sideways.</p>"
	      "<ul class=\"legend\" aria-label=\"outcomes\">",
	    f);
	for (i = 0; i < sizeof(legend) / sizeof(legend[0]); i++)
		fprintf(f,
		    "<li><span class=\"sw\" style=\"background:%s\"></span>"
		    "<b>%s</b> %s</li>",
		    legend[i].colour, legend[i].outcome, legend[i].meaning);
	fputs("<li><svg width=\"28\" height=\"10\" aria-hidden=\"true\">"
	      "<line x1=\"0\" x2=\"28\" y1=\"5\" y2=\"5\" stroke=\"#555\" "
	      "stroke-dasharray=\"4 3\"/></svg> a wait before the next "
	      "attempt</li><li><svg width=\"10\" height=\"14\" "
	      "aria-hidden=\"true\"><line x1=\"5\" x2=\"5\" y1=\"0\" "
	      "y2=\"14\" stroke=\"#D55E00\" stroke-width=\"2\" "
	      "stroke-dasharray=\"6 3\"/></svg> breaker pause or stop</li>"
	      "</ul></section>\n",
	    f);
}

/* Story number i's attempts as an ordered list of text, each linked to
 * its transcript and diff (report_attempts.c). */
static void
html_attempts(FILE *f, const json_t *s, size_t i)
{
	const json_t *a;
	size_t k;
	char d[64], why[400];

	fputs("<ol class=\"attempts\">", f);
	json_array_foreach(json_object_get(s, "attempts"), k, a)
	{
		fprintf(f, "<li value=\"%lld\">",
		    (long long)report_int(a, "attempt"));
		report_put_html(f, report_str(a, "agent"));
		fputs(": ", f);
		report_put_html(f,
		    json_is_string(json_object_get(a, "outcome"))
			? report_str(a, "outcome")
			: "running");
		if (json_is_integer(json_object_get(a, "duration_ms"))) {
			report_fmt_ms(
			    d, sizeof(d), report_int(a, "duration_ms"));
			fprintf(f, ", %s", d);
		}
		if (json_is_string(json_object_get(a, "decision"))) {
			fputs(" &rarr; ", f);
			report_put_html(f, report_str(a, "decision"));
		}
		report_fmt_change(d, sizeof(d), a);
		if (d[0] != '\0')
			fprintf(f, " <span class=\"change\">%s</span>", d);
		if (report_flag_text(why, sizeof(why), a) > 0) {
			fputs(" <span class=\"flagtext\">\xe2\x9a\x91 ", f);
			report_put_html(f, why);
			fputs("</span>", f);
		}
		report_attempt_links(f, i, k);
		fputs("</li>", f);
	}
	fputs("</ol>", f);
}

static void
html_stories(FILE *f, const json_t *model)
{
	const json_t *s;
	size_t i;

	fputs("<section id=\"stories\" aria-labelledby=\"stories-h\"><h2 "
	      "id=\"stories-h\">Stories</h2><div class=\"scroll\"><table "
	      "class=\"stories\">"
	      "<thead><tr><th>story</th><th>status</th><th>tasks</th>"
	      "<th>attempts</th><th>cost</th>"
	      "<th>reason</th></tr></thead><tbody>\n",
	    f);
	json_array_foreach(json_object_get(model, "stories"), i, s)
	{
		fputs("<tr data-story=\"", f);
		report_put_html(f, report_str(s, "id"));
		fputs("\"><td data-label=\"story\">", f);
		report_put_html(f, report_str(s, "id"));
		fprintf(f,
		    "</td><td data-label=\"status\">%s</td><td "
		    "data-label=\"tasks\">%lld/%lld</td><td "
		    "data-label=\"attempts\">",
		    report_str(s, "status"),
		    (long long)report_int(s, "tasks_completed"),
		    (long long)report_int(s, "tasks_total"));
		html_attempts(f, s, i);
		fprintf(f,
		    "</td><td data-label=\"cost\">"
		    "$%.2f</td><td class=\"reason\" data-label=\"reason\">",
		    json_number_value(json_object_get(s, "cost_usd")));
		report_put_html(f, report_str(s, "reason"));
		fputs("</td></tr>\n", f);
	}
	fputs("</tbody></table></div></section>\n", f);
}

/*
 * The live page's script (docs/report.md#live, docs/api.md#the-dashboard),
 * one for every page of the dashboard, allowed by its hash:
 * - on the page of a sign-in (an element #session with the id in
 *   data-id), it keeps the id in sessionStorage (this origin's, its port
 *   included, under a name with the port) and goes on to / with
 *   location.replace, so the sign-in is not in the history;
 * - with a session held, it fetches the page's main part with the id in
 *   X-Storyctl-Session and swaps it in (the sign-in's shell at / holds
 *   the form in its place), again after each event of the stream (at
 *   most one fetch at a time, a burst of events gives one);
 * - the stream is read with fetch, which can send the header (an
 *   EventSource cannot): "data:" lines end an event, "id:" is kept for
 *   Last-Event-ID when it reconnects (after 2 s, as the stream's retry
 *   says); while it is down the page is polled every 5 s;
 * - a 401 with a session drops it and puts the sign-in form back;
 * - following an attempt's link (a.att) fetches that part, its
 *   transcript as text or its diff, into the section the link points
 *   to (docs/report.md#attempts).
 * No cookie is read or written.
 */
static const char live_js[] =
    "(function(){var n='storyctl_session_'+location.port,st=null,s=null,"
    "g=document.getElementById('session'),sh=document.getElementById("
    "'signin'),form=sh?document.getElementById('report').outerHTML:'';"
    "try{st=window.sessionStorage;if(g){st.setItem(n,g.getAttribute("
    "'data-id'));location.replace('/');return}s=st.getItem(n)}catch(e){}"
    "if(!s)return;"
    "var busy=false,again=false,over=false,poll=null,last=null;"
    "function hd(){var h={'X-Storyctl-Session':s};if(last!==null)"
    "h['Last-Event-ID']=last;return h}"
    "function end(){over=true;try{st.removeItem(n)}catch(e){}"
    "clearInterval(poll);var m=document.getElementById('report');"
    "if(m&&sh){m.outerHTML=form;document.title='storyctl: sign in';"
    "document.getElementById('signin').textContent='The session has "
    "ended (expired, or its key revoked): sign in again.'}}"
    "function get(u){return fetch(u,{headers:hd(),cache:'no-store',"
    "credentials:'omit'}).then(function(r){if(r.status==401){end();"
    "throw 401}if(!r.ok)throw r.status;return r})}"
    "function load(){if(over)return;if(busy){again=true;return}busy=true;"
    "get('/?part=main').then(function(r){return r.text()}).then("
    "function(t){var m=document.getElementById('report');if(m&&!over){"
    "m.outerHTML=t;document.title='storyctl report';document.body."
    "setAttribute('data-updated',String(Date.now()))}}).catch("
    "function(){}).then(function(){busy=false;if(again){again=false;"
    "load()}})}"
    "function fallback(){if(!poll&&!over)poll=setInterval(load,5000)}"
    "function stream(){if(over)return;get('/v1/events/stream').then("
    "function(r){var rd=r.body.getReader(),dec=new TextDecoder(),b='',"
    "d=false;document.body.setAttribute('data-live','1');"
    "function more(){return rd.read().then(function(x){if(x.done)return;"
    "b+=dec.decode(x.value,{stream:true});var i,l;while((i=b.indexOf("
    "'\\n'))>=0){l=b.slice(0,i).replace(/\\r$/,'');b=b.slice(i+1);"
    "if(l===''){if(d)load();d=false}else if(l.indexOf('data:')==0)d=true;"
    "else if(l.indexOf('id:')==0)last=l.slice(3).trim()}return more()})}"
    "return more()}).catch(function(){fallback()}).then(function(){"
    "if(!over)setTimeout(stream,2000)})}"
    "document.addEventListener('click',function(e){var a=e.target.closest"
    "?e.target.closest('a.att'):null,p,q,u;if(!a||over)return;p=document."
    "getElementById(a.getAttribute('href').slice(1));if(!p||p."
    "getAttribute('data-got'))return;q=p.querySelector('pre');q."
    "textContent='loading...';u='/v1/stories/'+encodeURIComponent(p."
    "getAttribute('data-story'))+'/attempts/'+p.getAttribute("
    "'data-attempt')+'/'+p.getAttribute('data-part');if(p.getAttribute("
    "'data-part')=='transcript')u+='?format=text';fetch(u,{headers:hd(),"
    "cache:'no-store',credentials:'omit'}).then(function(r){return r.text()"
    ".then(function(t){if(r.status==401){end();return}if(!r.ok){try{t=JSON"
    ".parse(t).error.message}catch(x){}}else p.setAttribute('data-got','1');"
    "q.textContent=t||'(no change)'})}).catch(function(){q.textContent="
    "'cannot reach storyctl serve'})});"
    "load();stream()})();";

int
report_live_script_hash(char *buf, size_t len)
{
	unsigned char h[crypto_hash_sha256_BYTES];
	char b64[sodium_base64_ENCODED_LEN(
	    crypto_hash_sha256_BYTES, sodium_base64_VARIANT_ORIGINAL)];

	if (crypto_hash_sha256(
		h, (const unsigned char *)live_js, sizeof(live_js) - 1) != 0)
		return -1;
	sodium_bin2base64(
	    b64, sizeof(b64), h, sizeof(h), sodium_base64_VARIANT_ORIGINAL);
	if ((size_t)snprintf(buf, len, "sha256-%s", b64) >= len)
		return -1;
	return 0;
}

/* The <main> part: what the live page swaps in. */
static void
html_main(FILE *f, const json_t *model)
{
	fputs("<main id=\"report\">\n", f);
	html_head(f, model);
	html_needs(f, model);
	html_counts(f, model);
	html_timeline(f, model);
	report_stats_html(f, model);
	html_stories(f, model);
	report_attempts_html(f, model);
	fputs("</main>\n", f);
}

int
report_html(char **out, const json_t *model, const struct report_html_opts *o,
    struct sc_err *err)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	*out = NULL;
	if (f == NULL)
		return err_set(err, SC_EOS, "out of memory");
	if (o->fragment) {
		html_main(f, model);
		goto done;
	}
	fputs("<!doctype html>\n<html lang=\"en\"><head><meta "
	      "charset=\"utf-8\"><meta name=\"viewport\" "
	      "content=\"width=device-width, initial-scale=1\">"
	      "<meta name=\"color-scheme\" content=\"light\"><title>",
	    f);
	/* a title of the caller's is its own text, already HTML */
	fputs(o->title != NULL ? o->title : "storyctl report", f);
	fputs("</title><style>\n", f);
	fputs(page_css, f);
	fputs("</style></head><body>\n", f);
	if (o->main != NULL)
		fprintf(f, "<main id=\"report\">%s</main>\n", o->main);
	else
		html_main(f, model);
	if (o->live) {
		fputs("<script>", f);
		fputs(live_js, f);
		fputs("</script>\n", f);
	}
	fputs("</body></html>\n", f);
done:
	if (fclose(f) != 0) {
		free(buf);
		return err_set(err, SC_EOS, "out of memory");
	}
	*out = buf;
	return 0;
}
