/* test_policy_override.c - config_policy_override() and
 * config_policy_effective(): the retry-policy overrides of the service,
 * checked by the config's own rules (docs/api.md#retry-policy). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "controller/config/config.h"

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

/* Apply text onto the config's policy; the return code, *p the result. */
static int
apply(struct policy *p, const char *text, struct sc_err *err)
{
	json_t *body = json_loads(text, 0, NULL);
	int rc;

	assert_non_null(body);
	*p = cfg.policy;
	rc = config_policy_override(p, &cfg, body, "retry-policy", err);
	json_decref(body);
	return rc;
}

static void
test_rfc_fields(void **state)
{
	struct sc_err err = {0};
	struct policy p;

	assert_int_equal(apply(&p,
			     "{\"strategy\": \"linear\", \"max_retries\": 0,"
			     " \"base_delay_ms\": 10, \"max_delay_ms\": 20,"
			     " \"fallback_agent_id\": \"codex\","
			     " \"failure_threshold\": 0}",
			     &err),
	    0);
	assert_int_equal(p.max_attempts, 1);
	assert_int_equal(p.backoff.kind, BACKOFF_LINEAR);
	assert_int_equal(p.backoff.base_delay_ms, 10);
	assert_int_equal(p.backoff.max_delay_ms, 20);
	/* untouched keys keep the config's values */
	assert_int_equal(p.strategy, STRATEGY_ADAPTIVE);
}

static void
test_policy_object(void **state)
{
	struct sc_err err = {0};
	struct policy p;

	assert_int_equal(apply(&p,
			     "{\"policy\": {\"max_attempts\": 2, \"strategy\":"
			     " \"retry\", \"backoff\": {\"jitter\": 0}}}",
			     &err),
	    0);
	assert_int_equal(p.max_attempts, 2);
	assert_int_equal(p.strategy, STRATEGY_RETRY);
	assert_true(p.backoff.jitter == 0);
	assert_int_equal(p.backoff.base_delay_ms, 1000);
}

/* The messages are the config's, starting with what. */
static void
test_errors(void **state)
{
	static const struct {
		const char *body, *msg;
	} rows[] = {
	    {"{\"max_retires\": 1}",
		"retry-policy: unknown key max_retires (did you mean "
		"max_retries?)"},
	    {"{\"policy\": {\"max_atempts\": 1}}",
		"retry-policy: unknown key policy.max_atempts (did you mean "
		"max_attempts?)"},
	    {"{\"policy\": {\"max_attempts\": 0}}",
		"retry-policy: policy.max_attempts: must be >= 1, got 0"},
	    {"{\"max_retries\": \"2\"}",
		"retry-policy: max_retries: expected an integer, got a "
		"string"},
	    {"{\"max_retries\": -1}", "retry-policy: max_retries: must be"},
	    {"{\"strategy\": \"adaptive\"}",
		"retry-policy: strategy: must be none, fixed, linear or "
		"exponential"},
	    {"{\"base_delay_ms\": 5000, \"max_delay_ms\": 10}",
		"retry-policy: base_delay_ms: must be <= max_delay_ms"},
	    {"{\"fallback_agent_id\": \"gemini\"}",
		"retry-policy: fallback_agent_id: storyctl.json's agents"},
	    {"{\"failure_threshold\": 99}",
		"retry-policy: failure_threshold: storyctl.json's "
		"breaker.after"},
	    {"{\"policy\": {\"stall_timeout_s\": 5}}",
		"retry-policy: policy.stall_timeout_s: is read when an "
		"attempt starts"},
	    {"{\"policy\": {\"retry_on\": [\"x\"]}}",
		"retry-policy: policy.retry_on: is read"},
	    {"[1]", "retry-policy: expected an object"},
	};
	struct sc_err err;
	struct policy p;
	size_t i;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		memset(&err, 0, sizeof(err));
		assert_int_equal(apply(&p, rows[i].body, &err), SC_EDATA);
		if (strncmp(err.msg, rows[i].msg, strlen(rows[i].msg)) != 0)
			fail_msg("%s: got \"%s\"", rows[i].body, err.msg);
	}
}

/* The story's override wins over the batch's, which wins over the
 * config; a stored body that no longer fits leaves the config's. */
static void
test_effective(void **state)
{
	struct sc_err err = {0};
	struct policy p;

	assert_int_equal(config_policy_effective(&p, &cfg,
			     "{\"max_retries\": 3, \"base_delay_ms\": 7}",
			     "{\"max_retries\": 0}", &err),
	    0);
	assert_int_equal(p.max_attempts, 1);
	assert_int_equal(p.backoff.base_delay_ms, 7);
	assert_int_equal(
	    config_policy_effective(&p, &cfg, NULL, NULL, &err), 0);
	assert_int_equal(p.max_attempts, 5);
	assert_int_equal(config_policy_effective(&p, &cfg, NULL,
			     "{\"failure_threshold\": 99}", &err),
	    SC_EDATA);
	assert_int_equal(p.max_attempts, 5);
	assert_non_null(strstr(err.msg, "the story's retry-policy override"));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_rfc_fields, setup, teardown),
	    cmocka_unit_test_setup_teardown(
		test_policy_object, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_errors, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_effective, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
