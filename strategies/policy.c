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
	p->network_stall_s = 120;
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
static const char *const on_limit_names[] = {"wait", "switch"};

#define NNAMES(a) (sizeof(a) / sizeof(*(a)))

/* names[v], or "?" out of range: the one name lookup of the enums here. */
static const char *
enum_name(const char *const *names, size_t n, int v)
{
	return v < 0 || (size_t)v >= n ? "?" : names[v];
}

/* The index of s in names, or -1. */
static int
enum_parse(const char *const *names, size_t n, const char *s)
{
	size_t i;

	for (i = 0; s != NULL && i < n; i++)
		if (strcmp(s, names[i]) == 0)
			return (int)i;
	return -1;
}

const char *
strategy_name(enum strategy_kind s)
{
	return enum_name(strategy_names, NNAMES(strategy_names), (int)s);
}

int
strategy_parse(enum strategy_kind *out, const char *s)
{
	int v = enum_parse(strategy_names, NNAMES(strategy_names), s);

	if (v >= 0)
		*out = (enum strategy_kind)v;
	return v < 0 ? -1 : 0;
}

const char *
backoff_kind_name(enum backoff_kind k)
{
	return enum_name(backoff_names, NNAMES(backoff_names), (int)k);
}

int
backoff_kind_parse(enum backoff_kind *out, const char *s)
{
	int v = enum_parse(backoff_names, NNAMES(backoff_names), s);

	if (v >= 0)
		*out = (enum backoff_kind)v;
	return v < 0 ? -1 : 0;
}

const char *
on_usage_limit_name(enum on_usage_limit m)
{
	return enum_name(on_limit_names, NNAMES(on_limit_names), (int)m);
}

int
on_usage_limit_parse(enum on_usage_limit *out, const char *s)
{
	int v = enum_parse(on_limit_names, NNAMES(on_limit_names), s);

	if (v >= 0)
		*out = (enum on_usage_limit)v;
	return v < 0 ? -1 : 0;
}
