/*
 * serve_page.h - the live dashboard of `storyctl serve` at /
 * (docs/report.md#live, docs/api.md#the-dashboard): the report's page
 * with its script, the sign-in form and its shell, the session a tab
 * holds (never a key, never a cookie).
 */
#ifndef STORYCTL_SERVE_PAGE_H
#define STORYCTL_SERVE_PAGE_H

#include <stdbool.h>
#include <stddef.h>

#include "controller/optlib.h" /* libmicrohttpd's types */

#include "controller/cli/cli.h"

/* The header the dashboard's own script sends its session id in; the
 * only place a session is read from (no cookie, no query parameter). */
#define SERVE_PAGE_SESSION_HEADER "X-Storyctl-Session"

/* The session id of the request's X-Storyctl-Session, or NULL: none, or
 * a request another origin's page made (Sec-Fetch-Site other than
 * same-origin).  The string is the library's. */
const char *serve_page_session(struct MHD_Connection *c);

/* Whether the request is for the shell of / (not ?part=main): what a
 * browser without a session header gets, 200, the form and the script. */
bool serve_page_is_shell(struct MHD_Connection *c, const char *url);

/* Whether the request is / with a ?key= (refused: keys never go in
 * addresses). */
bool serve_page_key_in_url(struct MHD_Connection *c, const char *url);

/* Whether a sign-in may come from where this one does: a browser's must
 * be same-origin (Sec-Fetch-Site; without it, an Origin other than
 * "null" against Host); a client that sends neither header is not a
 * browser another site drives. */
bool serve_page_signin_allowed(struct MHD_Connection *c);

/* The value of "key" in a form body (application/x-www-form-urlencoded)
 * of len bytes into out (size bytes): 0, or -1 when there is none, it is
 * empty, holds a NUL or does not fit (out is then zeroed). */
int serve_page_form_key(char *out, size_t size, const char *body, size_t len);

/* Answer GET /: the live page, or its <main> alone for ?part=main. */
enum MHD_Result serve_page(struct MHD_Connection *c, const struct cli *cli);

/* The shell of / (200): the sign-in form where the report goes, and the
 * script that shows the report instead when the tab holds a session. */
enum MHD_Result serve_page_shell(struct MHD_Connection *c);
/* The 401 of /: the shell, saying the session has ended or was none. */
enum MHD_Result serve_page_unauthorized(struct MHD_Connection *c);
/* The 401 of a sign-in with a key that is not one: the form again. */
enum MHD_Result serve_page_signin_failed(struct MHD_Connection *c);
/* The 400 of /?key=: the form, and why a key never goes in an address
 * (the key is not echoed). */
enum MHD_Result serve_page_key_refused(struct MHD_Connection *c);
/* The 200 of a sign-in that made session id: a page whose script keeps
 * the id in sessionStorage and replaces itself with /.  No cookie. */
enum MHD_Result serve_page_signed_in(struct MHD_Connection *c, const char *id);

#endif
