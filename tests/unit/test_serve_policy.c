/* test_serve_policy.c - serve_policy_check(): the body of a retry-policy
 * PUT, parsed and checked without I/O, as the handler and
 * tests/fuzz/fuzz_policy_body.c call it (docs/api.md#retry-policy). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "controller/config/config.h"
#include "controller/serve/serve_policy.h"

static struct config cfg;

static int
setup(void **state)
{
	struct sc_err err = {0};

	memset(&cfg, 0, sizeof(cfg));
	return config_defaults(&cfg, "/tmp", &err);
}

static int
teardown(void **state)
{
	config_release(&cfg);
	return 0;
}

static const char batch_body[] = "{\"base_delay_ms\":50,\"max_delay_ms\":60}";

/* One body: its scope (a story's, over batch_body, or the batch's), the
 * status, and what is stored or a part of the message. */
struct row {
	bool story;
	const char *body;
	size_t len; /* 0: strlen(body) */
	int status;
	const char *want; /* the stored body (200), or in the message */
};

static const struct row rows[] = {
    {false, "{\"max_retries\": 1, \"base_delay_ms\": 20}", 0, 200,
	"{\"base_delay_ms\":20,\"max_retries\":1}"},
    {false, "{}", 0, 200, "{}"},
    /* the batch's own PUT replaces batch_body: checked over the
     * config's base of 1000 ms, not batch_body's 50 */
    {false, "{\"max_delay_ms\": 100}", 0, 422, "base_delay_ms"},
    /* a story's is checked over batch_body (base 50) */
    {true, "{\"max_delay_ms\": 100}", 0, 200, "{\"max_delay_ms\":100}"},
    {true, "{\"max_delay_ms\": 40}", 0, 422, "base_delay_ms"},
    {false, "{\"max_retries\": 1\0}", 19, 400, "a NUL byte"},
    {false, "{\"a\": 1, \"a\": 2}", 0, 400, "duplicate"},
    {false, "", 0, 400, "not JSON"},
    {false, "[1]", 0, 422, "expected an object"},
    {false, "{\"max_retires\": 1}", 0, 422, "unknown key max_retires"},
    {false, "{\"policy\": {\"kill_grace_s\": 1}}", 0, 422,
	"policy.kill_grace_s"},
};

static void
test_table(void **state)
{
	size_t i;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const struct row *r = &rows[i];
		struct policy p;
		char msg[300] = "", *stored = NULL;
		int status = 0, rc;

		rc = serve_policy_check(&stored, &p, &status, msg, sizeof(msg),
		    &cfg, r->story ? batch_body : NULL, r->body,
		    r->len ? r->len : strlen(r->body));
		if (status != r->status)
			fail_msg("row %zu: status %d, want %d (%s)", i, status,
			    r->status, msg);
		if (r->status == 200) {
			assert_int_equal(rc, 0);
			assert_string_equal(stored, r->want);
		} else {
			assert_int_equal(rc, SC_EDATA);
			assert_null(stored);
			if (strstr(msg, r->want) == NULL)
				fail_msg("row %zu: message '%s' lacks '%s'", i,
				    msg, r->want);
		}
		free(stored);
	}
}

/* The policy returned is the one the stored body gives back. */
static void
test_effective(void **state)
{
	struct sc_err err = {0};
	struct policy p, back;
	char msg[300], *stored = NULL;
	int status = 0;

	assert_int_equal(
	    serve_policy_check(&stored, &p, &status, msg, sizeof(msg), &cfg,
		batch_body, "{\"max_retries\": 0}", 18),
	    0);
	assert_int_equal(p.max_attempts, 1);
	assert_int_equal(p.backoff.base_delay_ms, 50);
	assert_int_equal(
	    config_policy_effective(&back, &cfg, batch_body, stored, &err), 0);
	assert_int_equal(back.max_attempts, 1);
	assert_int_equal(back.backoff.max_delay_ms, 60);
	free(stored);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_table),
	    cmocka_unit_test(test_effective),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
