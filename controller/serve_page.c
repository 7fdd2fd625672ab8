/*
 * serve_page.c - see serve_page.h: the live dashboard at / (docs/report.md#live,
 * docs/api.md#the-dashboard).
 *
 * A browser cannot put a header on the requests of an EventSource, so
 * the page is read with a cookie; the cookie never holds a key.  The
 * key is typed once into the sign-in form (POST /session, never an
 * address) and exchanged for a random session id (serve_session.c) kept
 * in a cookie named after the server's port (HttpOnly, SameSite=Strict,
 * Secure under TLS).  A session reads the page and its event stream,
 * nothing else: a write always needs X-API-Key, so that no page can make
 * the browser write.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "controller/optlib_mhd.h"
#include "controller/report.h"
#include "controller/serve_page.h"
#include "controller/serve_session.h"
#include "controller/view.h"

/* The session cookie's name: this prefix and the server's port, so that
 * two dashboards on one host keep a session each. */
#define PAGE_COOKIE "storyctl_session_"

/* The port the connection came in on: the daemon's. */
static unsigned int
page_port(struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo *ci =
	    MHD_get_connection_info(c, MHD_CONNECTION_INFO_DAEMON);
	const union MHD_DaemonInfo *di = ci != NULL
	    ? MHD_get_daemon_info(ci->daemon, MHD_DAEMON_INFO_BIND_PORT)
	    : NULL;

	return di != NULL ? di->port : 0;
}

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
	char name[64];

	/* the page's own requests are same-origin, a typed address or a
	 * bookmark "none"; another site's page (another port of this host
	 * is "same-site") gets no session used for it */
	if (site != NULL && strcmp(site, "same-origin") != 0 &&
	    strcmp(site, "none") != 0)
		return NULL;
	snprintf(name, sizeof(name), PAGE_COOKIE "%u", page_port(c));
	return MHD_lookup_connection_value(c, MHD_COOKIE_KIND, name);
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
	const char *p = body, *end = body + len, *amp;
	size_t n = 0;

	out[0] = '\0';
	if (body == NULL)
		return -1;
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
    const char *text, bool form, const char *set_cookie, const char *location)
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
	return page_send(c, status, html, set_cookie, location);
}

enum MHD_Result
serve_page_unauthorized(struct MHD_Connection *c)
{
	return page_words(c, MHD_HTTP_UNAUTHORIZED, "sign in",
	    "Sign in with a key of this storyctl (<code>storyctl key add "
	    "NAME</code> prints one). The browser keeps a read-only session "
	    "for 12 hours, never the key.",
	    true, NULL, NULL);
}

enum MHD_Result
serve_page_signin_failed(struct MHD_Connection *c)
{
	return page_words(c, MHD_HTTP_UNAUTHORIZED, "sign in",
	    "That is not a key of this storyctl (wrong, or revoked).", true,
	    NULL, NULL);
}

enum MHD_Result
serve_page_key_refused(struct MHD_Connection *c)
{
	return page_words(c, MHD_HTTP_BAD_REQUEST, "keys never go in addresses",
	    "A key in an address stays in the browser's history, so "
	    "<code>/?key=</code> is not read: sign in with the form below, "
	    "which sends the key once and keeps a read-only session "
	    "instead.",
	    true, NULL, NULL);
}

enum MHD_Result
serve_page_signed_in(struct MHD_Connection *c, const char *id, bool tls)
{
	char cookie[256];

	/* an id is 64 hex digits: nothing in it can end the value */
	snprintf(cookie, sizeof(cookie),
	    PAGE_COOKIE "%u=%s; Path=/; Max-Age=%d; HttpOnly; "
			"SameSite=Strict%s",
	    page_port(c), id, SERVE_SESSION_TTL_S, tls ? "; Secure" : "");
	return page_words(c, MHD_HTTP_SEE_OTHER, "signed in",
	    "<a href=\"/\">Go on to the dashboard</a>.", false, cookie, "/");
}

enum MHD_Result
serve_page(struct MHD_Connection *c, const struct cli *cli)
{
	struct report_html_opts o = {true, false};
	struct sc_err err = {0};
	struct view v;
	const char *part =
	    MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "part");
	json_t *model = NULL;
	char *html = NULL;
	int rc;

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
		    false, NULL, NULL);
	return page_send(c, MHD_HTTP_OK, html, NULL, NULL);
}
