/*
 * policy.h - the decision policy (docs/configuration.md#policy), as plain
 * data.
 *
 * The config loader fills it; strategies read it.  policy_init_default()
 * sets every documented default; policy_release() frees the pattern lists (the
 * struct itself belongs to the caller) and is a no-op on a released or
 * zeroed policy.
 */
#ifndef STORYCTL_POLICY_H
#define STORYCTL_POLICY_H

#include <stdint.h>

#include "common/strlist.h"

enum strategy_kind { STRATEGY_ADAPTIVE = 0, STRATEGY_RETRY, STRATEGY_NONE };

enum backoff_kind {
	BACKOFF_NONE = 0,
	BACKOFF_FIXED,
	BACKOFF_LINEAR,
	BACKOFF_EXPONENTIAL
};

struct backoff {
	enum backoff_kind kind; /* default exponential */
	int64_t base_delay_ms; /* default 1000 */
	int64_t max_delay_ms; /* default 60000 */
	double jitter; /* 0..1, default 0.5 */
};

/* What a usage limit (D3) does: wait for the reset, or hand the same
 * attempt number to the other agent at once. */
enum on_usage_limit { ON_LIMIT_WAIT = 0, ON_LIMIT_SWITCH };

struct policy {
	enum strategy_kind strategy;
	int max_attempts; /* >= 1, default 5 */
	double max_time_s; /* a story's time budget, 0 = none */
	double network_sleep_s; /* default 60 */
	/* an attempt whose output has shown only a network failure this
	 * long ends as network (docs/classification.md#dead-ends); default
	 * 120, 0 = off */
	double network_stall_s;
	double max_wait_s; /* cap of every wait, 21600; 0 = no cap */
	enum on_usage_limit on_usage_limit; /* default wait */
	int max_limit_waits; /* usage-limit waits in a row, default 4 */
	double poll_interval_s; /* default 30 */
	double stall_timeout_s; /* default 0 = off */
	double kill_grace_s; /* default 10 */
	double extended_timeout_factor; /* D9, default 2 */
	int retry_count; /* strategy retry, default 0 */
	int64_t retry_max_time_ms; /* strategy retry, 0 = none */
	struct strlist retry_on; /* case-insensitive substrings */
	struct strlist network_on;
	struct strlist permanent_on;
	struct backoff backoff;
};

void policy_init_default(struct policy *p);
void policy_release(struct policy *p);

const char *strategy_name(enum strategy_kind s);
int strategy_parse(enum strategy_kind *out, const char *s);
const char *backoff_kind_name(enum backoff_kind k);
const char *on_usage_limit_name(enum on_usage_limit m);
int on_usage_limit_parse(enum on_usage_limit *out, const char *s);
int backoff_kind_parse(enum backoff_kind *out, const char *s);

#endif
