/*
 * fuzz_policy_body.c - libFuzzer target for the body of a retry-policy
 * PUT (docs/api.md#retry-policy): serve_policy_check(), the function
 * serve_policy.c's PUT calls, which parses the body (jansson) and checks
 * it with config_policy_override(), the config's own rules.  No I/O per
 * input: the config is the built-in defaults (fallback agent "codex"),
 * made once.
 *
 * The first byte's low bit picks the scope: a story's (checked over a
 * stored batch override) or the batch's; the rest is the body.
 *
 * Checks serve_policy.h's promises: an answer is 200 with a body to
 * store, or 400/422 with a message and nothing to store; what is stored
 * gives, read back as the controller reads it (config_policy_effective),
 * the very policy that was checked, and is itself accepted and stored
 * unchanged (a fixed point); the policy is in the config's ranges.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "controller/config/config.h"
#include "controller/serve/serve_policy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* a stored batch override under the story's (keys sorted, as stored) */
static const char batch_body[] =
    "{\"base_delay_ms\":20,\"policy\":{\"max_attempts\":4}}";

static struct config cfg;
static int cfg_ready;

static void
cfg_free(void)
{
	config_release(&cfg);
}

static void
setup(void)
{
	struct sc_err err = {0};

	if (cfg_ready)
		return;
	if (config_defaults(&cfg, "/", &err) < 0)
		abort();
	cfg.breaker.after = 3; /* failure_threshold may repeat it */
	cfg_ready = 1;
	atexit(cfg_free);
}

/* The fields a decision reads, as GET shows them. */
static int
same_policy(const struct policy *a, const struct policy *b)
{
	return a->strategy == b->strategy &&
	    a->max_attempts == b->max_attempts &&
	    a->max_time_s == b->max_time_s &&
	    a->network_sleep_s == b->network_sleep_s &&
	    a->max_wait_s == b->max_wait_s &&
	    a->on_usage_limit == b->on_usage_limit &&
	    a->max_limit_waits == b->max_limit_waits &&
	    a->extended_timeout_factor == b->extended_timeout_factor &&
	    a->retry_count == b->retry_count &&
	    a->retry_max_time_ms == b->retry_max_time_ms &&
	    a->backoff.kind == b->backoff.kind &&
	    a->backoff.base_delay_ms == b->backoff.base_delay_ms &&
	    a->backoff.max_delay_ms == b->backoff.max_delay_ms &&
	    a->backoff.jitter == b->backoff.jitter;
}

static void
check_refused(int rc, int status, const char *msg, const char *stored)
{
	if (rc != SC_EDATA || stored != NULL || msg[0] == '\0')
		abort();
	if (status == 422 && strncmp(msg, "retry-policy", 12) != 0)
		abort();
	if (status != 400 && status != 422 &&
	    !(status == 500 && strcmp(msg, "out of memory") == 0))
		abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sc_err err = {0};
	struct policy p, back, again;
	const char *bb;
	char msg[300] = "", *stored = NULL, *stored2 = NULL;
	int status = 0, rc;

	if (size == 0)
		return 0;
	setup();
	bb = (data[0] & 1) ? batch_body : NULL;
	rc = serve_policy_check(&stored, &p, &status, msg, sizeof(msg), &cfg,
	    bb, (const char *)data + 1, size - 1);
	if (rc != 0) {
		check_refused(rc, status, msg, stored);
		return 0;
	}
	if (status != 200 || stored == NULL || stored[0] != '{')
		abort();
	if (p.max_attempts < 1 || p.backoff.base_delay_ms < 0 ||
	    p.backoff.base_delay_ms > p.backoff.max_delay_ms ||
	    !(p.backoff.jitter >= 0 && p.backoff.jitter <= 1))
		abort();
	/* read back as the controller reads it at a decision */
	rc = bb ? config_policy_effective(&back, &cfg, bb, stored, &err)
		: config_policy_effective(&back, &cfg, stored, NULL, &err);
	if (rc != 0 || !same_policy(&p, &back))
		abort();
	/* what is stored is accepted again, and stored the same */
	rc = serve_policy_check(&stored2, &again, &status, msg, sizeof(msg),
	    &cfg, bb, stored, strlen(stored));
	if (rc != 0 || strcmp(stored, stored2) != 0 || !same_policy(&p, &again))
		abort();
	free(stored);
	free(stored2);
	return 0;
}
