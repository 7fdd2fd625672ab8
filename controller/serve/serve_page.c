/*
 * serve_page.c - see serve_page.h: the live dashboard at / (docs/report.md#live,
 * docs/api.md#the-dashboard).
 *
 * No cookie: a browser sends its cookies for a host to every port of it,
 * so another app on 127.0.0.1 would get one.  The key is typed once into
 * the sign-in form (POST /session, never an address) and exchanged for a
 * random session id (serve_session.c); the answer's script keeps the id
 * in sessionStorage, which is the page's origin's alone (its port
 * included), and the page's own script sends it in X-Storyctl-Session,
 * a header no other origin's page can make the browser send here.  A
 * session reads the page, its event stream and an attempt's transcript
 * and diff (docs/api.md#attempts), nothing else: a write
 * always needs X-API-Key, so that no page can make the browser write.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "controller/optlib_mhd.h"
#include "controller/report/report.h"
#include "controller/serve/serve_page.h"
#include "controller/views/view.h"

/* Sec-Fetch-Site as browsers send it; NULL (a client that is not a
 * browser, or an old one) is allowed by the callers. */
static const char *
page_fetch_site(struct MHD_Connection *c)
{
	return MHD_lookup_connection_value(
	    c, MHD_HEADER_KIND, "Sec-Fetch-Site");
}

const char *
serve_page_session(struct MHD_Connection *c)
{
	const char *site = page_fetch_site(c);

	/* only the page's own script sends the header, same-origin; a
	 * request another origin's page makes is not read with one (and a
	 * browser would not send it there without a CORS preflight, which
	 * this server never allows) */
	if (site != NULL && strcmp(site, "same-origin") != 0)
		return NULL;
	return MHD_lookup_connection_value(
	    c, MHD_HEADER_KIND, SERVE_PAGE_SESSION_HEADER);
}

bool
serve_page_is_shell(struct MHD_Connection *c, const char *url)
{
	const char *part =
	    MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "part");

	return strcmp(url, "/") == 0 &&
	    (part == NULL || strcmp(part, "main") != 0);
}

bool
serve_page_key_in_url(struct MHD_Connection *c, const char *url)
{
	return strcmp(url, "/") == 0 &&
	    MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "key") !=
	    NULL;
}

bool
serve_page_signin_allowed(struct MHD_Connection *c)
{
	const char *site = page_fetch_site(c),
		   *origin = MHD_lookup_connection_value(
		       c, MHD_HEADER_KIND, "Origin"),
		   *host =
		       MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Host"),
		   *rest;

	/* Sec-Fetch-Site, when sent, is the browser's own word */
	if (site != NULL)
		return strcmp(site, "same-origin") == 0;
	/* else Origin, scheme://host[:port], against Host, host[:port];
	 * "null" is what the page's own form sends under its
	 * Referrer-Policy: no-referrer, so it proves nothing either way */
	if (origin == NULL || strcmp(origin, "null") == 0)
		return true;
	if (strncmp(origin, "http://", 7) == 0)
		rest = origin + 7;
	else if (strncmp(origin, "https://", 8) == 0)
		rest = origin + 8;
	else
		return false;
	return host != NULL && strcmp(rest, host) == 0;
}

/* One hex digit's value, or -1. */
static int
page_hex(char ch)
{
	if (ch >= '0' && ch <= '9')
		return ch - '0';
	if (ch >= 'a' && ch <= 'f')
		return ch - 'a' + 10;
	if (ch >= 'A' && ch <= 'F')
		return ch - 'A' + 10;
	return -1;
}

int
serve_page_form_key(char *out, size_t size, const char *body, size_t len)
{
	const char *p = body, *end, *amp;
	size_t n = 0;

	out[0] = '\0';
	if (body == NULL)
		return -1;
	/* not before the check: NULL + 0 is undefined behaviour */
	end = body + len;
	/* application/x-www-form-urlencoded: name=value pairs joined by &,
	 * + a space and %HH a byte; only "key" is read */
	for (; p < end; p = amp + 1) {
		amp = memchr(p, '&', (size_t)(end - p));
		if (amp == NULL)
			amp = end;
		if (amp - p < 4 || memcmp(p, "key=", 4) != 0)
			continue;
		for (p += 4; p < amp; p++) {
			int ch = (unsigned char)*p;

			if (ch == '+')
				ch = ' ';
			else if (ch == '%' && amp - p >= 3 &&
			    page_hex(p[1]) >= 0 && page_hex(p[2]) >= 0) {
				ch = page_hex(p[1]) * 16 + page_hex(p[2]);
				p += 2;
			}
			if (ch == '\0' || n + 1 >= size)
				goto bad;
			out[n++] = (char)ch;
		}
		out[n] = '\0';
		return n > 0 ? 0 : -1;
	}
bad:
	memset(out, 0, size);
	return -1;
}

/* Headers every answer of the page carries: nothing cached, nothing
 * loaded but from here, no referrer, forms only to here (the sign-in). */
static void
page_headers(struct MHD_Response *resp, const char *type)
{
	char csp[300], hash[80];

	MHD_add_response_header(resp, "Content-Type", type);
	MHD_add_response_header(resp, "Cache-Control", "no-store");
	MHD_add_response_header(resp, "Referrer-Policy", "no-referrer");
	MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff");
	if (report_live_script_hash(hash, sizeof(hash)) < 0)
		snprintf(hash, sizeof(hash), "none");
	snprintf(csp, sizeof(csp),
	    "default-src 'none'; style-src 'unsafe-inline'; script-src '%s'; "
	    "connect-src 'self'; base-uri 'none'; form-action 'self'; "
	    "frame-ancestors 'none'",
	    hash);
	MHD_add_response_header(resp, "Content-Security-Policy", csp);
}

static enum MHD_Result
page_send(struct MHD_Connection *c, unsigned int status, char *text)
{
	struct MHD_Response *resp;
	enum MHD_Result ret;

	resp = MHD_create_response_from_buffer_with_free_callback(
	    strlen(text), text, free);
	if (resp == NULL) {
		free(text);
		return MHD_NO;
	}
	page_headers(resp, "text/html; charset=utf-8");
	ret = MHD_queue_response(c, status, resp);
	MHD_destroy_response(resp);
	return ret;
}

/* The sign-in form: one password field, posted to /session; no
 * script. */
#define PAGE_FORM \
	"<form method=\"post\" action=\"/session\"><label>Key " \
	"<input type=\"password\" name=\"key\" " \
	"autocomplete=\"current-password\" required></label> " \
	"<button type=\"submit\">Sign in</button></form>"

/* A short page in words, for what is not the dashboard; with the
 * sign-in form after the words when form. */
static enum MHD_Result
page_words(struct MHD_Connection *c, unsigned int status, const char *title,
    const char *text, bool form)
{
	char *html = NULL;

	if (asprintf(&html,
		"<!doctype html>\n<html lang=\"en\"><head><meta "
		"charset=\"utf-8\"><meta name=\"viewport\" "
		"content=\"width=device-width, initial-scale=1\"><title>"
		"storyctl: %s</title></head><body><h1>storyctl: %s</h1>"
		"<p>%s</p>%s</body></html>\n",
		title, title, text, form ? PAGE_FORM : "") < 0)
		return MHD_NO;
	return page_send(c, status, html);
}

/* A page of the report's frame (its styles, the live script) around
 * main_html, with title: the sign-in's shell and the page of a sign-in
 * (docs/api.md#the-dashboard). */
static enum MHD_Result
page_framed(struct MHD_Connection *c, unsigned int status, const char *title,
    const char *main_html)
{
	struct report_html_opts o = {true, false, main_html, title};
	struct sc_err err = {0};
	char *html = NULL;

	if (report_html(&html, NULL, &o, &err) < 0)
		return MHD_NO;
	return page_send(c, status, html);
}

/* The shell of /: the form in the place of the report's <main>, and the
 * script, which shows the dashboard instead when the tab holds a
 * session; #signin is the paragraph it rewrites when one has ended. */
#define PAGE_SHELL(why) \
	"<h1>storyctl: sign in</h1><p id=\"signin\">" why "</p>" \
	"<noscript><p>The dashboard needs script: the page's own script " \
	"keeps the tab's session and shows the batch. Without it the form " \
	"signs in, but nothing is shown.</p></noscript>" PAGE_FORM

enum MHD_Result
serve_page_shell(struct MHD_Connection *c)
{
	return page_framed(c, MHD_HTTP_OK, "storyctl: sign in",
	    PAGE_SHELL("Sign in with a key of this storyctl (<code>storyctl "
		       "key add NAME</code> prints one). This tab keeps a "
		       "read-only session for 12 hours in its own storage "
		       "for this address and port: never the key, and no "
		       "cookie."));
}

enum MHD_Result
serve_page_unauthorized(struct MHD_Connection *c)
{
	return page_framed(c, MHD_HTTP_UNAUTHORIZED, "storyctl: sign in",
	    PAGE_SHELL("Not signed in, or the session has ended (expired, "
		       "or its key revoked): sign in with a key of this "
		       "storyctl."));
}

enum MHD_Result
serve_page_signin_failed(struct MHD_Connection *c)
{
	return page_words(c, MHD_HTTP_UNAUTHORIZED, "sign in",
	    "That is not a key of this storyctl (wrong, or revoked).", true);
}

enum MHD_Result
serve_page_key_refused(struct MHD_Connection *c)
{
	return page_words(c, MHD_HTTP_BAD_REQUEST, "keys never go in addresses",
	    "A key in an address stays in the browser's history, so "
	    "<code>/?key=</code> is not read: sign in with the form below, "
	    "which sends the key once and keeps a read-only session "
	    "instead.",
	    true);
}

enum MHD_Result
serve_page_signed_in(struct MHD_Connection *c, const char *id)
{
	char *main_html = NULL;
	enum MHD_Result ret;

	/* an id is 64 hex digits: nothing in it ends the attribute; the
	 * answer is no-store (page_headers), and the script leaves it with
	 * location.replace, out of the history */
	if (asprintf(&main_html,
		"<h1>storyctl: signed in</h1><p id=\"session\" "
		"data-id=\"%s\">On to <a href=\"/\">the dashboard</a>.</p>"
		"<noscript><p>The dashboard needs script: this tab keeps its "
		"session with it.</p></noscript>",
		id) < 0)
		return MHD_NO;
	ret = page_framed(c, MHD_HTTP_OK, "storyctl: signed in", main_html);
	sodium_memzero(main_html, strlen(main_html));
	free(main_html);
	return ret;
}

enum MHD_Result
serve_page(struct MHD_Connection *c, const struct cli *cli)
{
	struct report_html_opts o = {true, false, NULL, NULL};
	struct sc_err err = {0};
	struct view v;
	const char *part =
	    MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "part");
	json_t *model = NULL;
	char *html = NULL;
	int rc;

	o.fragment = part != NULL && strcmp(part, "main") == 0;
	memset(&v, 0, sizeof(v));
	rc = view_open(&v, cli->config_path, cli->lender, false, &err);
	if (rc == 0)
		rc = report_model(&model, &v, view_now_ms(), false, &err);
	if (rc == 0)
		rc = report_html(&html, model, &o, &err);
	json_decref(model);
	view_close(&v);
	if (rc < 0)
		return page_words(c, MHD_HTTP_INTERNAL_SERVER_ERROR,
		    "cannot read the batch",
		    "The config or the database cannot be read; "
		    "<code>storyctl status</code> says why.",
		    false);
	return page_send(c, MHD_HTTP_OK, html);
}
