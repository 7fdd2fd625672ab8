/*
 * serve_frame.c - see serve_frame.h: what a request must look like
 * before it is routed (docs/api.md#errors).
 *
 * libmicrohttpd parses the request in place and keeps C strings, so a
 * raw NUL hides the bytes after it: a target "x1\0/../junk" reads as
 * "x1".  The check finds such hidden bytes by where the library leaves
 * each piece: the target where serve_frame_raw() first saw it, each
 * header's name right after the previous line's end, the empty line
 * where the headers' size says.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "controller/optlib_mhd.h"
#include "controller/serve/serve_frame.h"

void
serve_frame_raw(struct serve_raw *raw, const char *uri)
{
	size_t i;

	memset(raw, 0, sizeof(*raw));
	raw->uri = uri;
	raw->len = strlen(uri);
	for (i = 0; i < raw->len && uri[i] != '?'; i++) {
		if (uri[i] == ' ')
			raw->space = true;
		if (uri[i] == '%' && uri[i + 1] == '2' &&
		    (uri[i + 2] == 'f' || uri[i + 2] == 'F'))
			raw->slash = true;
	}
}

/* What serve_frame_header() gathers, header by header, in the order
 * they came (docs/api.md#errors). */
struct frame {
	const char *end; /* where the previous line's text ended */
	bool hidden; /* bytes hidden behind a NUL */
	int n_length, n_encoding; /* Content-Length, Transfer-Encoding */
	const char *length, *encoding;
};

/* Whether [from, to) is a line's end as the library leaves it: 1 to
 * max bytes, each a CR or LF it overwrote with a NUL.  More, or other
 * bytes, were hidden behind a raw NUL (the library keeps C strings). */
static bool
frame_line_end(const char *from, const char *to, size_t min, size_t max)
{
	const char *p;

	if (to < from || (size_t)(to - from) < min || (size_t)(to - from) > max)
		return false;
	for (p = from; p < to; p++)
		if (*p != '\0')
			return false;
	return true;
}

static enum MHD_Result
serve_frame_header(
    void *cls, enum MHD_ValueKind kind, const char *key, const char *value)
{
	struct frame *f = cls;

	(void)kind;
	/* the library parses in place: each header's name begins right
	 * after the previous line's CR LF (or LF) */
	if (!frame_line_end(f->end, key, 1, 2))
		f->hidden = true;
	f->end = value + strlen(value);
	if (strcasecmp(key, MHD_HTTP_HEADER_CONTENT_LENGTH) == 0) {
		f->n_length++;
		f->length = value;
	} else if (strcasecmp(key, MHD_HTTP_HEADER_TRANSFER_ENCODING) == 0) {
		f->n_encoding++;
		f->encoding = value;
	}
	return MHD_YES;
}

/* Walk the request as the library left it, header by header, into f:
 * whether any piece is not where it should be (bytes hidden behind a
 * NUL), and the body's framing headers. */
static void
frame_scan(struct frame *f, struct MHD_Connection *c,
    const struct serve_raw *raw, const char *url, const char *method,
    const char *version)
{
	const union MHD_ConnectionInfo *hs =
	    MHD_get_connection_info(c, MHD_CONNECTION_INFO_REQUEST_HEADER_SIZE);
	const char *p;

	/* the request line: METHOD, spaces, the target (its length as
	 * the library saw it first, serve_uri_log), a space, the
	 * version; each space it split at is a NUL now */
	p = method + strlen(method);
	if (raw->uri == NULL || raw->uri != url || p >= url ||
	    version != url + raw->len + 1)
		f->hidden = true;
	for (p++; !f->hidden && p < url; p++)
		if (*p != ' ')
			f->hidden = true;
	f->end = version + strlen(version);
	if (!f->hidden)
		MHD_get_connection_values(
		    c, MHD_HEADER_KIND, serve_frame_header, f);
	/* the last header's CR LF, and the empty line's */
	if (!f->hidden &&
	    (hs == NULL ||
		!frame_line_end(f->end, method + hs->header_size, 2, 4)))
		f->hidden = true;
}

/* The first thing wrong with the request's framing, in the order
 * docs/api.md#errors gives; NULL when nothing is. */
static const char *
frame_why(
    const struct frame *f, const struct serve_raw *raw, const char *method)
{
	bool nobody = strcmp(method, "GET") == 0 ||
	    strcmp(method, "HEAD") == 0 || strcmp(method, "DELETE") == 0;

	if (f->hidden)
		return "a NUL byte (or a folded header line) in the request "
		       "line or a header";
	if (raw->space)
		return "a space in the request target";
	if (raw->slash)
		return "an encoded slash (%2F) in the path";
	if (f->n_length > 1)
		return "Content-Length more than once";
	if (f->n_encoding > 1 ||
	    (f->n_encoding == 1 && strcasecmp(f->encoding, "chunked") != 0))
		return "a Transfer-Encoding other than one chunked";
	if (f->n_encoding == 1 && f->n_length == 1)
		return "both Content-Length and Transfer-Encoding";
	if (nobody &&
	    (f->n_encoding == 1 ||
		(f->n_length == 1 && strtoull(f->length, NULL, 10) > 0)))
		return "a body with GET, HEAD or DELETE";
	return NULL;
}

const char *
serve_frame_check(struct MHD_Connection *c, const struct serve_raw *raw,
    const char *url, const char *method, const char *version)
{
	struct frame f = {0};

	frame_scan(&f, c, raw, url, method, version);
	return frame_why(&f, raw, method);
}
