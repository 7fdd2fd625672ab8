/*
 * serve_page.h - the live dashboard of `storyctl serve` at /
 * (docs/report.md#live, docs/api.md#the-dashboard): the report's page
 * with its script, the key a browser brings in a cookie.
 */
#ifndef STORYCTL_SERVE_PAGE_H
#define STORYCTL_SERVE_PAGE_H

#include <stdbool.h>

#include "controller/optlib.h" /* libmicrohttpd's types */

#include "controller/cli.h"

/* The key of a request: X-API-Key; for GET and HEAD only, else the
 * ?key= of / (*from_query true: the page then sets the cookie) or the
 * cookie.  NULL when none; the string is the library's. */
const char *serve_page_key(
    struct MHD_Connection *c, const char *url, bool get, bool *from_query);

/* Answer GET /: with query_key (a key just checked, from ?key=), a 303
 * to / that sets the cookie; else the live page, or its <main> alone
 * for ?part=main.  tls: the cookie is Secure. */
enum MHD_Result serve_page(struct MHD_Connection *c, const struct cli *cli,
    const char *query_key, bool tls);

/* The 401 of /, in words a person reads in a browser. */
enum MHD_Result serve_page_unauthorized(struct MHD_Connection *c);

#endif
