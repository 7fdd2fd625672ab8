/*
 * serve_page.c - see serve_page.h: the live dashboard at / (docs/report.md#live,
 * docs/api.md#the-dashboard).
 *
 * A browser cannot put a header on the requests of an <img> or an
 * EventSource, so the page's key travels in a cookie: /?key=KEY sets it
 * (HttpOnly, SameSite=Strict, Secure under TLS) and sends the browser on
 * to / so that the key leaves the address bar.  A cookie is a key for
 * GET and HEAD only: a write always needs X-API-Key, so that a page on
 * another site can never make the browser write.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "controller/optlib_mhd.h"
#include "controller/report.h"
#include "controller/serve_page.h"
#include "controller/view.h"

/* The cookie that carries a browser's key. */
#define PAGE_COOKIE "storyctl_key"

const char *
serve_page_key(
    struct MHD_Connection *c, const char *url, bool get, bool *from_query)
{
	const char *key =
	    MHD_lookup_connection_value(c, MHD_HEADER_KIND, "X-API-Key");

	*from_query = false;
	if (key != NULL || !get)
		return key;
	if (strcmp(url, "/") == 0 &&
	    (key = MHD_lookup_connection_value(
		 c, MHD_GET_ARGUMENT_KIND, "key")) != NULL) {
		*from_query = true;
		return key;
	}
	return MHD_lookup_connection_value(c, MHD_COOKIE_KIND, PAGE_COOKIE);
}

/* Headers every answer of the page carries: nothing cached, nothing
 * loaded but from here, no referrer (the first URL held a key). */
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
	    "connect-src 'self'; base-uri 'none'; form-action 'none'; "
	    "frame-ancestors 'none'",
	    hash);
	MHD_add_response_header(resp, "Content-Security-Policy", csp);
}

static enum MHD_Result
page_send(struct MHD_Connection *c, unsigned int status, char *text,
    const char *set_cookie, const char *location)
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
	if (set_cookie != NULL)
		MHD_add_response_header(resp, "Set-Cookie", set_cookie);
	if (location != NULL)
		MHD_add_response_header(resp, "Location", location);
	ret = MHD_queue_response(c, status, resp);
	MHD_destroy_response(resp);
	return ret;
}

/* A short page in words, for what is not the dashboard. */
static enum MHD_Result
page_words(struct MHD_Connection *c, unsigned int status, const char *title,
    const char *text, const char *set_cookie, const char *location)
{
	char *html = NULL;

	if (asprintf(&html,
		"<!doctype html>\n<html lang=\"en\"><head><meta "
		"charset=\"utf-8\"><meta name=\"viewport\" "
		"content=\"width=device-width, initial-scale=1\"><title>"
		"storyctl: %s</title></head><body><h1>storyctl: %s</h1>"
		"<p>%s</p></body></html>\n",
		title, title, text) < 0)
		return MHD_NO;
	return page_send(c, status, html, set_cookie, location);
}

enum MHD_Result
serve_page_unauthorized(struct MHD_Connection *c)
{
	return page_words(c, MHD_HTTP_UNAUTHORIZED, "a key is needed",
	    "Open this page as <code>/?key=KEY</code> with a key of this "
	    "storyctl (<code>storyctl key add NAME</code> prints one): the "
	    "browser keeps it in a cookie for the next visits.",
	    NULL, NULL);
}

enum MHD_Result
serve_page(struct MHD_Connection *c, const struct cli *cli,
    const char *query_key, bool tls)
{
	struct report_html_opts o = {true, false};
	struct sc_err err = {0};
	struct view v;
	const char *part =
	    MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "part");
	json_t *model = NULL;
	char *html = NULL, cookie[256];
	int rc;

	if (query_key != NULL) {
		/* a key is [A-Za-z0-9_-] (docs/api.md#keys): nothing in it
		 * can end the cookie's value */
		snprintf(cookie, sizeof(cookie),
		    PAGE_COOKIE "=%.160s; Path=/; HttpOnly; SameSite=Strict%s",
		    query_key, tls ? "; Secure" : "");
		return page_words(c, MHD_HTTP_SEE_OTHER, "signed in",
		    "The key is kept in a cookie: <a href=\"/\">go on to the "
		    "dashboard</a>.",
		    cookie, "/");
	}
	o.fragment = part != NULL && strcmp(part, "main") == 0;
	memset(&v, 0, sizeof(v));
	rc = view_open(&v, cli, false, &err);
	if (rc == 0)
		rc = report_model(&model, &v, view_now_ms(), &err);
	if (rc == 0)
		rc = report_html(&html, model, &o, &err);
	json_decref(model);
	view_close(&v);
	if (rc < 0)
		return page_words(c, MHD_HTTP_INTERNAL_SERVER_ERROR,
		    "cannot read the batch",
		    "The config or the database cannot be read; "
		    "<code>storyctl status</code> says why.",
		    NULL, NULL);
	return page_send(c, MHD_HTTP_OK, html, NULL, NULL);
}
