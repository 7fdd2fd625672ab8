/*
 * fuzz_failure.c - libFuzzer target for failure_parse(), the body of
 * POST /v1/stories/ID/failures (docs/api.md#the-body-of-a-post): any
 * bytes a client may send.  Checks that a body is either refused with
 * 400 or 422 (and nothing filled) or read into the ranges failure.h
 * states, the message clean text; and failure_time_parse() on the same
 * bytes as a string.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "strategies/failure.h"
#include "tests/fuzz/fuzz_utf8.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
check_report(const struct failure_report *r)
{
	if (r->error_code <= ERRC_NONE || r->error_code >= ERRC__COUNT)
		abort();
	if (memchr(r->error_message, 0, sizeof(r->error_message)) == NULL ||
	    memchr(r->agent_id, 0, sizeof(r->agent_id)) == NULL)
		abort();
	if (!fuzz_clean_utf8(r->error_message) || !fuzz_clean_utf8(r->agent_id))
		abort();
	if (r->attempt_number < 0 || r->attempt_number > FAILURE_ATTEMPT_MAX)
		abort();
	if (r->retry_scheduled_ms < 0)
		abort();
	if (r->http_status != 0 &&
	    (r->http_status < 100 || r->http_status > 599))
		abort();
	if (r->exit_code < -1 || r->exit_code > 255 || r->signal < 0 ||
	    r->signal > 64)
		abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct failure_report r;
	struct sc_err err = {0};
	char *s;
	int64_t ms = -7;
	int rc;

	rc = failure_parse(&r, (const char *)data, size, "s1", &err);
	if (rc == 0) {
		check_report(&r);
	} else {
		if (rc != SC_EUSAGE && rc != SC_EDATA)
			abort();
		if (strncmp(err.msg, "failure: ", 9) != 0 ||
		    r.error_code != ERRC_NONE || r.exit_code != -1 ||
		    r.error_message[0] != '\0')
			abort();
	}
	/* the same bytes as a time: refused untouched, or after 1970 */
	s = malloc(size + 1);
	if (s == NULL)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';
	rc = failure_time_parse(&ms, s);
	if ((rc == 0 && ms <= 0) || (rc != 0 && (rc != -1 || ms != -7)))
		abort();
	free(s);
	return 0;
}
