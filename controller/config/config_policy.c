/* config_policy.c - see config_int.h: the policy, gates, review,
 * breaker, budget, git and state sections (docs/configuration.md). */
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "controller/config/config_int.h"
#include "controller/config/presets.h"
#include "state/fsutil.h"
#include "state/gitwork.h"
#include "strategies/schedule.h"
#include "strategies/sprintstatus.h"
#include "strategies/suggest.h"
#include "strategies/text.h"

/* ---- policy ---- */

static const char *const backoff_keys[] = {
    "strategy", "base_delay_ms", "max_delay_ms", "jitter", NULL};

static int
parse_backoff(struct loader *ld, json_t *v, struct backoff *b)
{
	const char *path = "policy.backoff";
	json_t *sv;
	long long n;
	int rc;

	if ((rc = config_want_object(ld, v, path)) != 0)
		return rc;
	if ((rc = config_check_keys(ld, v, path, backoff_keys)) != 0)
		return rc;
	sv = json_object_get(v, "strategy");
	if (sv != NULL) {
		if (!json_is_string(sv))
			return config_wrong_type(
			    ld, "policy.backoff.strategy", "a string", sv);
		if (backoff_kind_parse(&b->kind, json_string_value(sv)) < 0)
			return config_fail(ld, "policy.backoff.strategy",
			    "must be none, fixed, linear or exponential, "
			    "got \"%s\"",
			    json_string_value(sv));
	}
	n = b->base_delay_ms;
	if ((rc = config_get_integer(
		 ld, v, path, "base_delay_ms", &n, 0, MS_MAX)) != 0)
		return rc;
	b->base_delay_ms = n;
	n = b->max_delay_ms;
	if ((rc = config_get_integer(
		 ld, v, path, "max_delay_ms", &n, 0, MS_MAX)) != 0)
		return rc;
	b->max_delay_ms = n;
	if ((rc = config_get_number(
		 ld, v, path, "jitter", &b->jitter, 0, 1, false)) != 0)
		return rc;
	/* A base above the cap would make every delay the cap: a mistake. */
	if (b->base_delay_ms > b->max_delay_ms)
		return config_fail(ld, "policy.backoff.base_delay_ms",
		    "must be <= max_delay_ms (%lld), got %lld",
		    (long long)b->max_delay_ms, (long long)b->base_delay_ms);
	return 0;
}

static const char *const policy_keys[] = {"strategy", "max_attempts",
    "max_time_s", "network_sleep_s", "network_stall_s", "max_wait_s",
    "poll_interval_s", "stall_timeout_s", "kill_grace_s",
    "extended_timeout_factor", "retry_count", "retry_max_time_ms", "retry_on",
    "network_on", "permanent_on", "backoff", "on_usage_limit",
    "max_limit_waits", NULL};

/* policy's two words: strategy and on_usage_limit. */
static int
policy_parse_words(struct loader *ld, json_t *v, struct policy *p)
{
	json_t *sv;

	sv = json_object_get(v, "strategy");
	if (sv != NULL) {
		if (!json_is_string(sv))
			return config_wrong_type(
			    ld, "policy.strategy", "a string", sv);
		if (strategy_parse(&p->strategy, json_string_value(sv)) < 0)
			return config_fail(ld, "policy.strategy",
			    "must be adaptive, retry or none, got \"%s\"",
			    json_string_value(sv));
	}
	sv = json_object_get(v, "on_usage_limit");
	if (sv != NULL) {
		if (!json_is_string(sv))
			return config_wrong_type(
			    ld, "policy.on_usage_limit", "a string", sv);
		if (on_usage_limit_parse(
			&p->on_usage_limit, json_string_value(sv)) < 0)
			return config_fail(ld, "policy.on_usage_limit",
			    "must be wait or switch, got \"%s\"",
			    json_string_value(sv));
	}
	return 0;
}

/* policy's counts and durations. */
static int
policy_parse_numbers(struct loader *ld, json_t *v, struct policy *p)
{
	const char *path = "policy";
	long long n;
	int rc;

	if ((rc = config_get_int(ld, v, path, "max_limit_waits",
		 &p->max_limit_waits, 0, INT_MAX)) != 0)
		return rc;
	if ((rc = config_get_int(ld, v, path, "max_attempts", &p->max_attempts,
		 1, INT_MAX)) != 0 ||
	    (rc = config_get_number(ld, v, path, "max_time_s", &p->max_time_s,
		 0, SECONDS_MAX, false)) != 0 ||
	    (rc = config_get_number(ld, v, path, "network_sleep_s",
		 &p->network_sleep_s, 0, SECONDS_MAX, false)) != 0 ||
	    (rc = config_get_number(ld, v, path, "network_stall_s",
		 &p->network_stall_s, 0, SECONDS_MAX, false)) != 0 ||
	    (rc = config_get_number(ld, v, path, "max_wait_s", &p->max_wait_s,
		 0, SECONDS_MAX, false)) != 0 ||
	    (rc = config_get_number(ld, v, path, "poll_interval_s",
		 &p->poll_interval_s, 0, SECONDS_MAX, true)) != 0 ||
	    (rc = config_get_number(ld, v, path, "stall_timeout_s",
		 &p->stall_timeout_s, 0, SECONDS_MAX, false)) != 0 ||
	    (rc = config_get_number(ld, v, path, "kill_grace_s",
		 &p->kill_grace_s, 0, SECONDS_MAX, false)) != 0 ||
	    (rc = config_get_number(ld, v, path, "extended_timeout_factor",
		 &p->extended_timeout_factor, 1, FACTOR_MAX, false)) != 0 ||
	    (rc = config_get_int(
		 ld, v, path, "retry_count", &p->retry_count, 0, INT_MAX)) != 0)
		return rc;
	n = p->retry_max_time_ms;
	if ((rc = config_get_integer(
		 ld, v, path, "retry_max_time_ms", &n, 0, MS_MAX)) != 0)
		return rc;
	p->retry_max_time_ms = n;
	return 0;
}

int
config_parse_policy(struct loader *ld, json_t *v, struct policy *p)
{
	const char *path = "policy";
	json_t *bv;
	int rc;

	if (v == NULL)
		return 0;
	if ((rc = config_want_object(ld, v, path)) != 0)
		return rc;
	if ((rc = config_check_keys(ld, v, path, policy_keys)) != 0)
		return rc;
	if ((rc = policy_parse_words(ld, v, p)) != 0 ||
	    (rc = policy_parse_numbers(ld, v, p)) != 0)
		return rc;
	if ((rc = config_get_strings(ld, v, path, "retry_on", &p->retry_on)) !=
		0 ||
	    (rc = config_get_strings(
		 ld, v, path, "network_on", &p->network_on)) != 0 ||
	    (rc = config_get_strings(
		 ld, v, path, "permanent_on", &p->permanent_on)) != 0)
		return rc;
	bv = json_object_get(v, "backoff");
	if (bv != NULL && (rc = parse_backoff(ld, bv, &p->backoff)) != 0)
		return rc;
	return 0;
}

/* ---- gates, review, breaker, budget, git, state ---- */

static const char *const gate_keys[] = {"name", "command", "timeout_s", NULL};

int
config_parse_gates(struct loader *ld, json_t *v, struct config *c)
{
	struct gate_conf *g;
	char key[KEY_MAX], ckey[KEY_MAX];
	const char *base;
	json_t *item, *cv;
	size_t i;
	int rc;

	if (v == NULL)
		return 0;
	if (!json_is_array(v))
		return config_wrong_type(ld, "gates", "an array", v);
	if (json_array_size(v) == 0)
		return 0;
	c->gates = calloc(json_array_size(v), sizeof(*c->gates));
	if (c->gates == NULL)
		return config_fail_nomem(ld);
	json_array_foreach(v, i, item)
	{
		config_key_index(key, "gates", i);
		g = &c->gates[i];
		c->ngates = i + 1;
		g->timeout_s = 1800;
		if ((rc = config_want_object(ld, item, key)) != 0 ||
		    (rc = config_check_keys(ld, item, key, gate_keys)) != 0)
			return rc;
		cv = json_object_get(item, "command");
		if (cv == NULL)
			return config_fail(ld, key, "needs a command");
		config_key_join(ckey, key, "command");
		if ((rc = config_parse_argv(ld, cv, ckey, &g->command)) != 0 ||
		    (rc = config_get_string(ld, item, key, "name", &g->name)) !=
			0 ||
		    (rc = config_get_number(ld, item, key, "timeout_s",
			 &g->timeout_s, TIMEOUT_MIN_S, SECONDS_MAX, false)) !=
			0)
			return rc;
		if (g->name == NULL) {
			base = strrchr(g->command.items[0], '/');
			base = base != NULL && base[1] != '\0'
			    ? base + 1
			    : g->command.items[0];
			g->name = strdup(base);
			if (g->name == NULL)
				return config_fail_nomem(ld);
		}
	}
	return 0;
}

static const char *const review_keys[] = {
    "agents", "quorum", "retries", "prompt", NULL};

/* review.agents: each a preset name (its cautious argv) or a command. */
static int
review_parse_agents(struct loader *ld, json_t *av, struct review_conf *r)
{
	const struct preset *p;
	char key[KEY_MAX], known[256];
	json_t *item;
	size_t i, k;
	int rc;

	r->agents = calloc(json_array_size(av), sizeof(*r->agents));
	if (r->agents == NULL)
		return config_fail_nomem(ld);
	json_array_foreach(av, i, item)
	{
		config_key_index(key, "review.agents", i);
		r->nagents = i + 1;
		if (json_is_string(item)) {
			p = presets_find(json_string_value(item));
			if (p == NULL) {
				config_preset_names(known, sizeof(known));
				return config_fail(ld, key,
				    "unknown preset "
				    "\"%s\" (known: %s)",
				    json_string_value(item), known);
			}
			for (k = 0; p->argv[k] != NULL; k++)
				if (strlist_push(&r->agents[i], p->argv[k]) < 0)
					return config_fail_nomem(ld);
			continue;
		}
		rc = config_parse_argv(ld, item, key, &r->agents[i]);
		if (rc != 0)
			return rc;
	}
	return 0;
}

/* review.quorum, checked against the panel once it is known. */
static int
review_parse_quorum(struct loader *ld, json_t *v, struct review_conf *r)
{
	long long quorum = 0;
	int rc;

	/* Default: a majority of the panel. */
	r->quorum = r->nagents > 0 ? (int)(r->nagents / 2 + 1) : 0;
	if (json_object_get(v, "quorum") != NULL) {
		quorum = r->quorum;
		if ((rc = config_get_integer(ld, v, "review", "quorum", &quorum,
			 LLONG_MIN, LLONG_MAX)) != 0)
			return rc;
		if (r->nagents == 0)
			return config_fail(ld, "review.quorum",
			    "there are no reviewers (review.agents is empty)");
		if (quorum < 1 || quorum > (long long)r->nagents)
			return config_fail(ld, "review.quorum",
			    "must be between 1 "
			    "and %zu (the number of reviewers), got %lld",
			    r->nagents, quorum);
		r->quorum = (int)quorum;
	}
	return 0;
}

int
config_parse_review(struct loader *ld, json_t *v, struct review_conf *r)
{
	json_t *av;
	int rc;

	r->retries = 2;
	if (v == NULL)
		return 0;
	if ((rc = config_want_object(ld, v, "review")) != 0 ||
	    (rc = config_check_keys(ld, v, "review", review_keys)) != 0)
		return rc;
	av = json_object_get(v, "agents");
	if (av != NULL && !json_is_array(av))
		return config_wrong_type(ld, "review.agents",
		    "an array of commands or preset names", av);
	if (av != NULL && json_array_size(av) > 0 &&
	    (rc = review_parse_agents(ld, av, r)) != 0)
		return rc;
	if ((rc = config_get_int(
		 ld, v, "review", "retries", &r->retries, 0, INT_MAX)) != 0 ||
	    (rc = config_get_string(ld, v, "review", "prompt", &r->prompt)) !=
		0)
		return rc;
	return review_parse_quorum(ld, v, r);
}

static const char *const breaker_keys[] = {"after", "cooldown_s", NULL};
static const char *const budget_keys[] = {
    "max_cost_usd", "story_max_cost_usd", NULL};
static const char *const git_keys[] = {"state_branch", "commit_work", NULL};
static const char *const state_keys[] = {"dir", NULL};
static const char *const verify_keys[] = {"require_diff", NULL};

/* verify (docs/configuration.md#verify) */
static int
parse_verify(struct loader *ld, json_t *root, struct config *c)
{
	json_t *v = json_object_get(root, "verify");
	int rc = 0;

	if (v != NULL &&
	    ((rc = config_want_object(ld, v, "verify")) != 0 ||
		(rc = config_check_keys(ld, v, "verify", verify_keys)) != 0 ||
		(rc = config_get_bool(ld, v, "verify", "require_diff",
		     &c->verify.require_diff)) != 0))
		return rc;
	return 0;
}

/* breaker (docs/configuration.md) */
static int
parse_breaker(struct loader *ld, json_t *root, struct config *c)
{
	json_t *v = json_object_get(root, "breaker");
	int rc = 0;

	if (v != NULL &&
	    ((rc = config_want_object(ld, v, "breaker")) != 0 ||
		(rc = config_check_keys(ld, v, "breaker", breaker_keys)) != 0 ||
		(rc = config_get_int(ld, v, "breaker", "after",
		     &c->breaker.after, 0, INT_MAX)) != 0 ||
		(rc = config_get_number(ld, v, "breaker", "cooldown_s",
		     &c->breaker.cooldown_s, 0, SECONDS_MAX, false)) != 0))
		return rc;
	return 0;
}

/* budget (docs/configuration.md) */
static int
parse_budget(struct loader *ld, json_t *root, struct config *c)
{
	json_t *v = json_object_get(root, "budget");
	int rc = 0;

	if (v != NULL &&
	    ((rc = config_want_object(ld, v, "budget")) != 0 ||
		(rc = config_check_keys(ld, v, "budget", budget_keys)) != 0 ||
		(rc = config_get_number(ld, v, "budget", "max_cost_usd",
		     &c->budget.max_cost_usd, 0, USD_MAX, false)) != 0 ||
		(rc = config_get_number(ld, v, "budget", "story_max_cost_usd",
		     &c->budget.story_max_cost_usd, 0, USD_MAX, false)) != 0))
		return rc;
	return 0;
}

/* git (docs/configuration.md): the state branch must be a valid name. */
static int
parse_git(struct loader *ld, json_t *root, struct config *c)
{
	json_t *v = json_object_get(root, "git");
	int rc;

	if (v == NULL)
		return 0;
	if ((rc = config_want_object(ld, v, "git")) != 0 ||
	    (rc = config_check_keys(ld, v, "git", git_keys)) != 0 ||
	    (rc = config_get_string(
		 ld, v, "git", "state_branch", &c->git.state_branch)) != 0 ||
	    (rc = config_get_bool(
		 ld, v, "git", "commit_work", &c->git.commit_work)) != 0)
		return rc;
	if (!gitwork_branch_valid(c->git.state_branch))
		return config_fail(ld, "git.state_branch",
		    "not a valid branch name: \"%s\"", c->git.state_branch);
	return 0;
}

/* state.dir, made absolute under the root, trailing slashes dropped
 * (.storyctl when not given). */
static int
parse_state(struct loader *ld, json_t *root, struct config *c)
{
	json_t *v;
	char *dir = NULL, *clean = NULL;
	size_t len;
	int rc = 0;

	if ((v = json_object_get(root, "state")) != NULL) {
		if ((rc = config_want_object(ld, v, "state")) != 0 ||
		    (rc = config_check_keys(ld, v, "state", state_keys)) != 0 ||
		    (rc = config_get_string(ld, v, "state", "dir", &dir)) != 0)
			goto out;
	}
	if (dir == NULL)
		clean = fsutil_path_join(c->root, ".storyctl");
	else if (dir[0] == '/')
		clean = strdup(dir);
	else
		clean = fsutil_path_join(c->root, dir);
	if (clean == NULL) {
		rc = config_fail_nomem(ld);
		goto out;
	}
	len = strlen(clean);
	while (len > 1 && clean[len - 1] == '/')
		clean[--len] = '\0';
	c->state_dir = clean;
	clean = NULL;
out:
	free(dir);
	free(clean);
	return rc;
}

int
config_parse_small_sections(struct loader *ld, json_t *root, struct config *c)
{
	int rc;

	if ((rc = parse_breaker(ld, root, c)) != 0 ||
	    (rc = parse_budget(ld, root, c)) != 0 ||
	    (rc = parse_verify(ld, root, c)) != 0 ||
	    (rc = parse_git(ld, root, c)) != 0)
		return rc;
	return parse_state(ld, root, c);
}

/* ---- retry-policy overrides (docs/api.md#retry-policy) ---- */

static const char *const override_keys[] = {"strategy", "max_retries",
    "base_delay_ms", "max_delay_ms", "fallback_agent_id", "failure_threshold",
    "policy", NULL};

/* Keys of policy read when an attempt starts or ends, not when the
 * story's next decision is made: an override of them would do nothing,
 * so it is refused rather than ignored (docs/api.md#retry-policy). */
static const char *const not_at_decision[] = {"poll_interval_s",
    "stall_timeout_s", "kill_grace_s", "retry_on", "network_on", "permanent_on",
    NULL};

/* fallback_agent_id and failure_threshold name what storyctl.json sets
 * for the whole batch (the fallback agent, breaker.after): an override
 * may repeat them, as GET shows them, but not change them. */
static int
override_fixed(struct loader *ld, json_t *body, const struct config *c)
{
	const struct agent_conf *fb = &c->agents[ROLE_FALLBACK];
	json_t *v = json_object_get(body, "fallback_agent_id");
	int rc;
	int n = c->breaker.after;

	if (v != NULL && !json_is_null(v) && !json_is_string(v))
		return config_wrong_type(
		    ld, "fallback_agent_id", "a string or null", v);
	if (v != NULL &&
	    (json_is_null(v) ? fb->configured
			     : !fb->configured ||
			strcmp(json_string_value(v), fb->name) != 0))
		return config_fail(ld, "fallback_agent_id",
		    "storyctl.json's agents choose the fallback agent (%s); "
		    "an override cannot change it",
		    fb->configured ? fb->name : "none");
	if ((rc = config_get_int(
		 ld, body, "", "failure_threshold", &n, 0, INT_MAX)) != 0)
		return rc;
	if (n != c->breaker.after)
		return config_fail(ld, "failure_threshold",
		    "storyctl.json's breaker.after (%d) holds for the whole "
		    "batch; an override cannot change it",
		    c->breaker.after);
	return 0;
}

/* The RFC's fields onto p: strategy is the backoff's, max_retries the
 * attempts after the first. */
static int
override_rfc(struct loader *ld, json_t *body, struct policy *p)
{
	json_t *sv = json_object_get(body, "strategy");
	long long n;
	int rc, retries = p->max_attempts - 1;

	if (sv != NULL) {
		if (!json_is_string(sv))
			return config_wrong_type(
			    ld, "strategy", "a string", sv);
		if (backoff_kind_parse(
			&p->backoff.kind, json_string_value(sv)) < 0)
			return config_fail(ld, "strategy",
			    "must be none, fixed, linear or exponential, "
			    "got \"%s\"",
			    json_string_value(sv));
	}
	if ((rc = config_get_int(
		 ld, body, "", "max_retries", &retries, 0, INT_MAX - 1)) != 0)
		return rc;
	p->max_attempts = retries + 1;
	n = p->backoff.base_delay_ms;
	if ((rc = config_get_integer(
		 ld, body, "", "base_delay_ms", &n, 0, MS_MAX)) != 0)
		return rc;
	p->backoff.base_delay_ms = n;
	n = p->backoff.max_delay_ms;
	if ((rc = config_get_integer(
		 ld, body, "", "max_delay_ms", &n, 0, MS_MAX)) != 0)
		return rc;
	p->backoff.max_delay_ms = n;
	if (p->backoff.base_delay_ms > p->backoff.max_delay_ms)
		return config_fail(ld, "base_delay_ms",
		    "must be <= max_delay_ms (%lld), got %lld",
		    (long long)p->backoff.max_delay_ms,
		    (long long)p->backoff.base_delay_ms);
	return 0;
}

int
config_policy_override(struct policy *p, const struct config *c, json_t *body,
    const char *what, struct sc_err *err)
{
	struct loader ld = {what, err};
	json_t *pv;
	char key[KEY_MAX];
	size_t i;
	int rc;

	if ((rc = config_want_object(&ld, body, NULL)) != 0 ||
	    (rc = config_check_keys(&ld, body, "", override_keys)) != 0)
		return rc;
	pv = json_object_get(body, "policy");
	if (pv != NULL && json_is_object(pv))
		for (i = 0; not_at_decision[i] != NULL; i++)
			if (json_object_get(pv, not_at_decision[i]) != NULL) {
				config_key_join(
				    key, "policy", not_at_decision[i]);
				return config_fail(&ld, key,
				    "is read when an attempt starts or ends, "
				    "not at a decision: set it in "
				    "storyctl.json");
			}
	if (pv != NULL && (rc = config_parse_policy(&ld, pv, p)) != 0)
		return rc;
	if ((rc = override_rfc(&ld, body, p)) != 0)
		return rc;
	return override_fixed(&ld, body, c);
}

/* One stored body (validated when it was stored; checked again, as the
 * config may have changed since). */
static int
policy_apply_text(struct policy *p, const struct config *c, const char *text,
    const char *what, struct sc_err *err)
{
	json_error_t jerr;
	json_t *body;
	int rc;

	if (text == NULL)
		return 0;
	body = json_loads(text, JSON_REJECT_DUPLICATES, &jerr);
	if (body == NULL)
		return err_set(
		    err, SC_EDATA, "%s: not JSON: %s", what, jerr.text);
	rc = config_policy_override(p, c, body, what, err);
	json_decref(body);
	return rc;
}

int
config_policy_effective(struct policy *out, const struct config *c,
    const char *batch_body, const char *story_body, struct sc_err *err)
{
	int rc;

	/* A plain copy: an override never sets the pattern lists
	 * (not_at_decision), so out shares them with c and is never
	 * released. */
	*out = c->policy;
	rc = policy_apply_text(
	    out, c, batch_body, "the batch's retry-policy override", err);
	if (rc == 0)
		rc = policy_apply_text(out, c, story_body,
		    "the story's retry-policy override", err);
	if (rc < 0)
		*out = c->policy;
	return rc;
}
