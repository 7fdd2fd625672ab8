/*
 * serve_frame.h - the framing of a request, checked before its key or
 * route (docs/api.md#errors): a raw NUL anywhere in the request line or
 * the headers, a space or an encoded slash in the target,
 * Content-Length twice, Transfer-Encoding twice, other than chunked or
 * with Content-Length, a body on GET, HEAD or DELETE.
 */
#ifndef STORYCTL_SERVE_FRAME_H
#define STORYCTL_SERVE_FRAME_H

#include <stdbool.h>
#include <stddef.h>

#include "controller/optlib_mhd.h"

/* The request target as it came, before the library decoded it. */
struct serve_raw {
	const char *uri; /* where it began (the library's buffer) */
	size_t len; /* its length as a C string: a raw NUL cuts it */
	bool slash; /* an encoded slash (%2F) in its path */
	bool space; /* a space in its path */
};

/* Fill *raw from the target uri as the library's URI-log callback
 * gets it, before any decoding. */
void serve_frame_raw(struct serve_raw *raw, const char *uri);

/* Why the request (its connection c, its decoded url, method and
 * version, and raw) is refused: a static string for the 400's message,
 * or NULL when its framing is sound. */
const char *serve_frame_check(struct MHD_Connection *c,
    const struct serve_raw *raw, const char *url, const char *method,
    const char *version);

#endif
