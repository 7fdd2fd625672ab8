/* test_failure.c - failure_parse() and failure_time_parse(): the body of
 * POST /v1/stories/ID/failures (strategies/failure.c,
 * docs/api.md#failure-records), as tables. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "strategies/failure.h"

/* A body refused: the code (SC_EUSAGE 400, SC_EDATA 422) and a part of
 * the message. */
struct bad {
	const char *body;
	int rc;
	const char *msg;
};

static const struct bad bads[] = {
    {"", SC_EUSAGE, "failure: the body is not JSON"},
    {"{\"error_code\": ", SC_EUSAGE, "the body is not JSON"},
    {"{\"error_code\": \"CRASH\", \"error_code\": \"AUTH\"}", SC_EUSAGE,
	"duplicate"},
    {"[]", SC_EDATA, "the body: expected an object, got an array"},
    {"\"CRASH\"", SC_EDATA, "expected an object, got a string"},
    {"{}", SC_EDATA, "error_code is required"},
    {"{\"error_message\": \"x\"}", SC_EDATA, "error_code is required"},
    {"{\"error_code\": \"CRASH\", \"eror_message\": \"x\"}", SC_EDATA,
	"unknown key eror_message (did you mean error_message?)"},
    {"{\"error_code\": \"CRASH\", \"zzz\": 1}", SC_EDATA,
	"failure: unknown key zzz"},
    {"{\"error_code\": \"CRASH\", \"id\": \"x\"}", SC_EDATA, "unknown key id"},
    {"{\"error_code\": \"CRASH\", \"resolved_at\": null}", SC_EDATA,
	"unknown key resolved_at"},
    {"{\"error_code\": 3}", SC_EDATA,
	"error_code: expected a string, got an integer"},
    {"{\"error_code\": \"RATE_LIMITED\"}", SC_EDATA,
	"RATE_LIMITED is not an error code of storyctl (did you mean "
	"RATE_LIMIT?)"},
    {"{\"error_code\": \"INVALID_OUTPT\"}", SC_EDATA,
	"INVALID_OUTPT is not an error code of storyctl (did you mean "
	"INVALID_OUTPUT?)"},
    {"{\"error_code\": \"invalid_output\"}", SC_EDATA,
	"did you mean INVALID_OUTPUT?"},
    {"{\"error_code\": \"NONE\"}", SC_EDATA, "not an error code"},
    {"{\"error_code\": \"crash\"}", SC_EDATA, "did you mean CRASH?"},
    {"{\"error_code\": \"CRASH\", \"error_message\": 5}", SC_EDATA,
	"error_message: expected a string or null, got an integer"},
    {"{\"error_code\": \"CRASH\", \"attempt_number\": \"2\"}", SC_EDATA,
	"attempt_number: expected an integer or null, got a string"},
    {"{\"error_code\": \"CRASH\", \"attempt_number\": 2.0}", SC_EDATA,
	"got a number with a fraction"},
    {"{\"error_code\": \"CRASH\", \"attempt_number\": 0}", SC_EDATA,
	"attempt_number: must be 1 to 1000000, got 0"},
    {"{\"error_code\": \"CRASH\", \"agent_id\": true}", SC_EDATA,
	"agent_id: expected a string or null, got a boolean"},
    {"{\"error_code\": \"CRASH\", \"agent_id\": "
     "\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\"}",
	SC_EDATA, "agent_id: at most 63 bytes, got 64"},
    {"{\"error_code\": \"CRASH\", \"retry_scheduled_at\": \"tomorrow\"}",
	SC_EDATA, "retry_scheduled_at: tomorrow is not an RFC 3339"},
    {"{\"error_code\": \"CRASH\", \"retry_scheduled_at\": 12}", SC_EDATA,
	"expected an RFC 3339 time or null, got an integer"},
    {"{\"error_code\": \"CRASH\", \"intent_id\": \"other\"}", SC_EDATA,
	"intent_id: other is not the story of the path (s1)"},
    {"{\"error_code\": \"CRASH\", \"metadata\": []}", SC_EDATA,
	"metadata: expected an object or null, got an array"},
    {"{\"error_code\": \"CRASH\", \"metadata\": {\"http\": 1}}", SC_EDATA,
	"unknown key metadata.http"},
    {"{\"error_code\": \"CRASH\", \"metadata\": {\"http_status\": 99}}",
	SC_EDATA, "metadata.http_status: must be 100 to 599, got 99"},
    {"{\"error_code\": \"CRASH\", \"metadata\": {\"exit_code\": 256}}",
	SC_EDATA, "metadata.exit_code: must be 0 to 255"},
    {"{\"error_code\": \"CRASH\", \"metadata\": {\"signal\": 0}}", SC_EDATA,
	"metadata.signal: must be 1 to 64"},
    {"{\"error_code\": \"CRASH\", \"metadata\": {\"source\": \"storyctl\"}}",
	SC_EDATA, "metadata.source: only \"external\""},
    {"{\"error_code\": \"CRASH\", \"metadata\": {\"a\": [[[[[[[[[1]]]]]]]]]}}",
	SC_EDATA, "nests deeper than 8"},
};

static void
test_parse_refused(void **state)
{
	struct failure_report r;
	struct sc_err err;
	size_t i;
	int rc;

	(void)state;
	for (i = 0; i < sizeof(bads) / sizeof(bads[0]); i++) {
		memset(&err, 0, sizeof(err));
		rc = failure_parse(
		    &r, bads[i].body, strlen(bads[i].body), "s1", &err);
		if (rc != bads[i].rc || strstr(err.msg, bads[i].msg) == NULL ||
		    strncmp(err.msg, "failure: ", 9) != 0)
			fail_msg("%s: rc %d, message '%s'", bads[i].body, rc,
			    err.msg);
		/* refused: nothing half-filled */
		assert_int_equal(r.error_code, ERRC_NONE);
		assert_int_equal(r.exit_code, -1);
		assert_string_equal(r.error_message, "");
	}
}

static void
test_parse_full(void **state)
{
	static const char body[] =
	    "{\"agent_id\": \"ci\", \"attempt_number\": 2,"
	    " \"error_code\": \"TIMEOUT\","
	    " \"error_message\": \"timed out\\u001b[31m after 30s\\nline 2\","
	    " \"retry_scheduled_at\": \"2026-02-15T10:05:00Z\","
	    " \"intent_id\": \"s1\","
	    " \"metadata\": {\"http_status\": 504, \"exit_code\": 124,"
	    " \"signal\": 15, \"source\": \"external\"}}";
	struct failure_report r;
	struct sc_err err = {0};

	(void)state;
	assert_int_equal(failure_parse(&r, body, strlen(body), "s1", &err), 0);
	assert_int_equal(r.error_code, ERRC_TIMEOUT);
	/* the escape sequence is dropped, the newline kept */
	assert_string_equal(r.error_message, "timed out after 30s\nline 2");
	assert_string_equal(r.agent_id, "ci");
	assert_int_equal(r.attempt_number, 2);
	assert_int_equal(r.retry_scheduled_ms, 1771149900000LL);
	assert_int_equal(r.http_status, 504);
	assert_int_equal(r.exit_code, 124);
	assert_int_equal(r.signal, 15);
}

/* Only error_code is required; nulls mean "not sent". */
static void
test_parse_minimal_and_nulls(void **state)
{
	static const char body[] =
	    "{\"error_code\": \"GATE_FAILED\", \"agent_id\": null,"
	    " \"attempt_number\": null, \"retry_scheduled_at\": null,"
	    " \"error_message\": null, \"intent_id\": null,"
	    " \"metadata\": {\"http_status\": null, \"source\": null}}";
	struct failure_report r;
	struct sc_err err = {0};

	(void)state;
	assert_int_equal(failure_parse(&r, body, strlen(body), "s1", &err), 0);
	assert_int_equal(r.error_code, ERRC_GATE_FAILED);
	assert_string_equal(r.error_message, "");
	assert_string_equal(r.agent_id, "");
	assert_int_equal(r.attempt_number, 0);
	assert_int_equal(r.retry_scheduled_ms, 0);
	assert_int_equal(r.http_status, 0);
	assert_int_equal(r.exit_code, -1);
	assert_int_equal(r.signal, 0);
	assert_int_equal(
	    failure_parse(&r, "{\"error_code\":\"AUTH\"}", 21, "s1", &err), 0);
	assert_int_equal(r.error_code, ERRC_AUTH);
}

/* Reference 003's six error codes (its "Error Codes" table), each the
 * code storyctl stores and shows, and the outcome it belongs to
 * (docs/api.md#error-codes-of-a-post): a body failure_parse() takes is
 * a 201. */
struct rfc_code {
	const char *name;
	enum error_code code;
	enum outcome outcome;
};

static const struct rfc_code rfc_codes[] = {
    {"RATE_LIMIT", ERRC_RATE_LIMIT, OUTCOME_RATE_LIMIT},
    {"TIMEOUT", ERRC_TIMEOUT, OUTCOME_TIMEOUT},
    {"NETWORK_ERROR", ERRC_NETWORK_ERROR, OUTCOME_NETWORK},
    {"INVALID_OUTPUT", ERRC_INVALID_OUTPUT, OUTCOME_GATE_FAILED},
    {"BUDGET_EXCEEDED", ERRC_BUDGET_EXCEEDED, OUTCOME_PERMANENT},
    {"PERMISSION_DENIED", ERRC_PERMISSION_DENIED, OUTCOME_PERMANENT},
};

static void
test_parse_rfc_codes(void **state)
{
	struct failure_report r;
	struct sc_err err;
	char body[200];
	size_t i;
	int rc;

	(void)state;
	for (i = 0; i < sizeof(rfc_codes) / sizeof(rfc_codes[0]); i++) {
		const struct rfc_code *c = &rfc_codes[i];

		/* the RFC's own example body, with each code */
		snprintf(body, sizeof(body),
		    "{\"agent_id\": \"agent-research\", \"attempt_number\": 1,"
		    " \"error_code\": \"%s\", \"error_message\": \"x\","
		    " \"retry_scheduled_at\": \"2026-02-15T10:05:00Z\"}",
		    c->name);
		memset(&err, 0, sizeof(err));
		rc = failure_parse(&r, body, strlen(body), "s1", &err);
		if (rc != 0 || r.error_code != c->code)
			fail_msg("%s: rc %d, code %s, message '%s'", c->name,
			    rc, errcode_name(r.error_code), err.msg);
		/* stored and shown as the client sent it */
		assert_string_equal(errcode_name(r.error_code), c->name);
		if (errcode_outcome(r.error_code) != c->outcome)
			fail_msg("%s: outcome %s, want %s", c->name,
			    outcome_name(errcode_outcome(r.error_code)),
			    outcome_name(c->outcome));
		assert_string_equal(r.agent_id, "agent-research");
		assert_int_equal(r.attempt_number, 1);
	}
}

/* Every code of storyctl is taken (a record read back may be sent
 * again), and INVALID_OUTPUT is no outcome's first code: storyctl's own
 * gate failures stay GATE_FAILED. */
static void
test_parse_every_code(void **state)
{
	struct failure_report r;
	struct sc_err err;
	char body[100];
	int i, o;

	(void)state;
	for (i = 1; i < ERRC__COUNT; i++) {
		snprintf(body, sizeof(body), "{\"error_code\": \"%s\"}",
		    errcode_name((enum error_code)i));
		memset(&err, 0, sizeof(err));
		if (failure_parse(&r, body, strlen(body), "s1", &err) != 0 ||
		    (int)r.error_code != i)
			fail_msg("%s: %s", body, err.msg);
	}
	for (o = 0; o < OUTCOME__COUNT; o++)
		assert_int_not_equal(outcome_default_errcode((enum outcome)o),
		    ERRC_INVALID_OUTPUT);
	assert_int_equal(
	    outcome_default_errcode(OUTCOME_GATE_FAILED), ERRC_GATE_FAILED);
}

/* error_message: FAILURE_MESSAGE_MAX bytes are taken, one more is not. */
static void
test_parse_message_bound(void **state)
{
	static const char pre[] =
	    "{\"error_code\":\"CRASH\",\"error_message\":\"";
	struct failure_report r;
	struct sc_err err = {0};
	size_t k = FAILURE_MESSAGE_MAX, p = sizeof(pre) - 1;
	char *body = malloc(p + k + 8);

	(void)state;
	assert_non_null(body);
	memcpy(body, pre, p);
	memset(body + p, 'x', k);
	memcpy(body + p + k, "\"}", 3);
	assert_int_equal(failure_parse(&r, body, strlen(body), "s1", &err), 0);
	assert_int_equal(strlen(r.error_message), k);
	memset(body + p, 'x', k + 1);
	memcpy(body + p + k + 1, "\"}", 3);
	assert_int_equal(
	    failure_parse(&r, body, strlen(body), "s1", &err), SC_EDATA);
	assert_non_null(strstr(err.msg, "error_message: at most 4096 bytes"));
	free(body);
}

struct tcase {
	const char *text;
	int64_t ms; /* -1: refused */
};

static const struct tcase times[] = {
    {"2026-02-15T10:05:00Z", 1771149900000LL},
    {"2026-02-15t10:05:00z", 1771149900000LL},
    {"2026-02-15T10:05:00.250Z", 1771149900250LL},
    {"2026-02-15T10:05:00.1234567Z", 1771149900123LL},
    {"2026-02-15T11:05:00+01:00", 1771149900000LL},
    {"2026-02-15T05:35:00-04:30", 1771149900000LL},
    {"1970-01-01T00:00:01Z", 1000},
    {"2024-02-29T00:00:00Z", 1709164800000LL},
    {"9999-12-31T23:59:59Z", 253402300799000LL},
    {"9999-12-31T23:59:60Z", -1},
    {"9999-12-31T23:30:00-01:00", -1},
    {"9999-12-31T23:59:59.999Z", 253402300799999LL},
    {"1970-01-01T00:00:00Z", -1},
    {"1969-12-31T23:59:59Z", -1},
    {"2025-02-29T00:00:00Z", -1},
    {"2026-13-01T00:00:00Z", -1},
    {"2026-00-01T00:00:00Z", -1},
    {"2026-04-31T00:00:00Z", -1},
    {"2026-02-15T24:00:00Z", -1},
    {"2026-02-15T10:60:00Z", -1},
    {"2026-02-15T10:05:00", -1},
    {"2026-02-15 10:05:00Z", -1},
    {"2026-02-15T10:05Z", -1},
    {"2026-02-15T10:05:00.Z", -1},
    {"2026-02-15T10:05:00+0100", -1},
    {"2026-02-15T10:05:00+24:00", -1},
    {"2026-02-15T10:05:00Zjunk", -1},
    {"26-02-15T10:05:00Z", -1},
    {"", -1},
};

static void
test_time_table(void **state)
{
	size_t i;
	int64_t ms;
	int rc;

	(void)state;
	for (i = 0; i < sizeof(times) / sizeof(times[0]); i++) {
		ms = -7;
		rc = failure_time_parse(&ms, times[i].text);
		if ((times[i].ms < 0 && (rc != -1 || ms != -7)) ||
		    (times[i].ms >= 0 && (rc != 0 || ms != times[i].ms)))
			fail_msg("'%s': rc %d ms %lld", times[i].text, rc,
			    (long long)ms);
	}
	assert_int_equal(failure_time_parse(&ms, NULL), -1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_parse_refused),
	    cmocka_unit_test(test_parse_full),
	    cmocka_unit_test(test_parse_minimal_and_nulls),
	    cmocka_unit_test(test_parse_rfc_codes),
	    cmocka_unit_test(test_parse_every_code),
	    cmocka_unit_test(test_parse_message_bound),
	    cmocka_unit_test(test_time_table),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
