/* policy.c - see policy.h. */
#include <string.h>

#include "strategies/policy.h"

void
policy_init_default(struct policy *p)
{
	memset(p, 0, sizeof(*p));
	p->strategy = STRATEGY_ADAPTIVE;
	p->max_attempts = 5;
	p->max_time_s = 0;
	p->network_sleep_s = 60;
	p->max_wait_s = 21600;
	p->on_usage_limit = ON_LIMIT_WAIT;
	p->max_limit_waits = 4;
	p->poll_interval_s = 30;
	p->stall_timeout_s = 0;
	p->kill_grace_s = 10;
	p->extended_timeout_factor = 2;
	p->retry_count = 0;
	p->retry_max_time_ms = 0;
	p->backoff.kind = BACKOFF_EXPONENTIAL;
	p->backoff.base_delay_ms = 1000;
	p->backoff.max_delay_ms = 60000;
	p->backoff.jitter = 0.5;
}

void
policy_release(struct policy *p)
{
	if (p == NULL)
		return;
	strlist_release(&p->retry_on);
	strlist_release(&p->network_on);
	strlist_release(&p->permanent_on);
}

static const char *const strategy_names[] = {"adaptive", "retry", "none"};
static const char *const backoff_names[] = {
    "none", "fixed", "linear", "exponential"};

const char *
strategy_name(enum strategy_kind s)
{
	if ((int)s < 0 ||
	    (size_t)s >= sizeof(strategy_names) / sizeof(*strategy_names))
		return "?";
	return strategy_names[s];
}

int
strategy_parse(enum strategy_kind *out, const char *s)
{
	size_t i;

	for (i = 0; i < sizeof(strategy_names) / sizeof(*strategy_names); i++) {
		if (s != NULL && strcmp(s, strategy_names[i]) == 0) {
			*out = (enum strategy_kind)i;
			return 0;
		}
	}
	return -1;
}

const char *
backoff_kind_name(enum backoff_kind k)
{
	if ((int)k < 0 ||
	    (size_t)k >= sizeof(backoff_names) / sizeof(*backoff_names))
		return "?";
	return backoff_names[k];
}

int
backoff_kind_parse(enum backoff_kind *out, const char *s)
{
	size_t i;

	for (i = 0; i < sizeof(backoff_names) / sizeof(*backoff_names); i++) {
		if (s != NULL && strcmp(s, backoff_names[i]) == 0) {
			*out = (enum backoff_kind)i;
			return 0;
		}
	}
	return -1;
}

static const char *const on_limit_names[] = {"wait", "switch"};

const char *
on_usage_limit_name(enum on_usage_limit m)
{
	if ((int)m < 0 ||
	    (size_t)m >= sizeof(on_limit_names) / sizeof(*on_limit_names))
		return "?";
	return on_limit_names[m];
}

int
on_usage_limit_parse(enum on_usage_limit *out, const char *s)
{
	size_t i;

	for (i = 0; i < sizeof(on_limit_names) / sizeof(*on_limit_names); i++) {
		if (s != NULL && strcmp(s, on_limit_names[i]) == 0) {
			*out = (enum on_usage_limit)i;
			return 0;
		}
	}
	return -1;
}
