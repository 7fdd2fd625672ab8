/* serve_policy.c - see serve_policy.h: the effective policy in the RFC's
 * fields and storyctl's, overrides checked by the config's own rules
 * (config_policy_override) and stored in one short transaction each
 * (docs/api.md#retry-policy). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "controller/config/config.h"
#include "controller/serve/serve_policy.h"
#include "controller/views/view.h"
#include "state/db.h"

/* The answer's status and JSON; 0, or SC_EOS when j could not be built. */
struct answer {
	int status;
	json_t *j;
};

static void
answer_error(struct answer *a, int status, const char *code, const char *msg)
{
	a->status = status;
	json_decref(a->j);
	a->j =
	    json_pack("{s:{s:s, s:s}}", "error", "code", code, "message", msg);
}

/* The keys an override can set, as GET shows them: the RFC's fields
 * and storyctl's policy (docs/api.md#retry-policy). */
static json_t *
policy_json(const struct policy *p, const struct config *c, const char *id,
    const char *stored)
{
	const struct agent_conf *fb = &c->agents[ROLE_FALLBACK];
	json_t *ov = stored ? json_loads(stored, 0, NULL) : json_null();

	return json_pack(
	    "{s:s, s:s?, s:s, s:i, s:I, s:I, s:s?, s:i, s:{s:s, s:i, s:f, s:f, "
	    "s:f, s:s, s:i, s:f, s:i, s:I, s:{s:s, s:I, s:I, s:f}}, s:o}",
	    "scope", id ? "story" : "batch", "story_id", id, "strategy",
	    backoff_kind_name(p->backoff.kind), "max_retries",
	    p->max_attempts - 1, "base_delay_ms",
	    (json_int_t)p->backoff.base_delay_ms, "max_delay_ms",
	    (json_int_t)p->backoff.max_delay_ms, "fallback_agent_id",
	    fb->configured ? fb->name : NULL, "failure_threshold",
	    c->breaker.after, "policy", "strategy", strategy_name(p->strategy),
	    "max_attempts", p->max_attempts, "max_time_s", p->max_time_s,
	    "network_sleep_s", p->network_sleep_s, "max_wait_s", p->max_wait_s,
	    "on_usage_limit", on_usage_limit_name(p->on_usage_limit),
	    "max_limit_waits", p->max_limit_waits, "extended_timeout_factor",
	    p->extended_timeout_factor, "retry_count", p->retry_count,
	    "retry_max_time_ms", (json_int_t)p->retry_max_time_ms, "backoff",
	    "strategy", backoff_kind_name(p->backoff.kind), "base_delay_ms",
	    (json_int_t)p->backoff.base_delay_ms, "max_delay_ms",
	    (json_int_t)p->backoff.max_delay_ms, "jitter", p->backoff.jitter,
	    "override", ov ? ov : json_null());
}

/* The stored overrides of id's scope (NULL: the batch's). */
static int
stored_read(
    struct view *v, char **bb, char **sb, const char *id, struct sc_err *err)
{
	*bb = *sb = NULL;
	if (v->db == NULL)
		return 0;
	return db_policy_for_story(v->db, bb, sb, id ? id : "", err);
}

/* 200 with the effective policy of id's scope as stored now. */
static void
answer_effective(struct answer *a, struct view *v, const char *id)
{
	struct sc_err err = {0};
	struct policy p;
	char *bb = NULL, *sb = NULL;

	if (stored_read(v, &bb, &sb, id, &err) < 0) {
		answer_error(a, 500, "internal", err.msg);
		goto out;
	}
	/* a stored override the config no longer admits is left out, as
	 * the controller does (attempt_decide.c) */
	config_policy_effective(&p, &v->cfg, bb, sb, &err);
	a->status = 200;
	a->j = policy_json(&p, &v->cfg, id, id ? sb : bb);
out:
	free(bb);
	free(sb);
}

int
serve_policy_check(char **stored, struct policy *p, int *status, char *msg,
    size_t msglen, const struct config *c, const char *batch_body,
    const char *body, size_t len)
{
	struct sc_err err = {0};
	json_error_t jerr;
	json_t *j =
	    json_loadb(body ? body : "", len, JSON_REJECT_DUPLICATES, &jerr);
	int rc = SC_EDATA;

	*stored = NULL;
	*status = 400;
	/* jansson reads a NUL between tokens as nothing; JSON has none
	 * (docs/api.md#errors) */
	if (j != NULL && body != NULL && memchr(body, '\0', len) != NULL) {
		snprintf(msg, msglen, "the body is not JSON: a NUL byte");
		goto out;
	}
	if (j == NULL) {
		snprintf(msg, msglen, "the body is not JSON: %s (line %d)",
		    jerr.text, jerr.line);
		goto out;
	}
	config_policy_effective(p, c, batch_body, NULL, &err);
	*status = 422;
	if (config_policy_override(p, c, j, "retry-policy", &err) < 0) {
		snprintf(msg, msglen, "%s", err.msg);
		goto out;
	}
	*status = 500;
	if ((*stored = json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS)) == NULL) {
		snprintf(msg, msglen, "out of memory");
		goto out;
	}
	*status = 200;
	rc = 0;
out:
	json_decref(j);
	return rc;
}

/* Check body onto the policy it overrides (the config's, with the
 * batch's override for a story) and store it. */
static void
answer_put(struct answer *a, struct view *v, const char *id, const char *body,
    size_t len, const char *key_name)
{
	struct sc_err err = {0};
	struct policy_row row;
	struct policy p;
	char *bb = NULL, *sb = NULL, msg[300];
	int status = 500;

	memset(&row, 0, sizeof(row));
	if (stored_read(v, &bb, &sb, id, &err) < 0) {
		answer_error(a, 500, "internal", err.msg);
		goto out;
	}
	if (serve_policy_check(&row.body, &p, &status, msg, sizeof(msg),
		&v->cfg, id ? bb : NULL, body, len) < 0) {
		answer_error(a, status,
		    status == 400 ? "bad_json"
				  : (status == 422 ? "invalid" : "internal"),
		    msg);
		goto out;
	}
	snprintf(row.scope, sizeof(row.scope), "%s", id ? id : DB_POLICY_BATCH);
	snprintf(row.key_name, sizeof(row.key_name), "%s", key_name);
	row.created_ms = view_now_ms();
	if (db_policy_put(v->db, &row, v->have_batch ? v->batch.id : 0, &err) <
	    0) {
		answer_error(a, 500, "internal", err.msg);
		goto out;
	}
	answer_effective(a, v, id);
out:
	free(row.body);
	free(bb);
	free(sb);
}

static void
answer_delete(struct answer *a, struct view *v, const char *id)
{
	struct sc_err err = {0};
	char msg[200];
	int found = 0;

	if (db_policy_del(v->db, &found, id ? id : DB_POLICY_BATCH,
		v->have_batch ? v->batch.id : 0, view_now_ms(), &err) < 0) {
		answer_error(a, 500, "internal", err.msg);
		return;
	}
	if (!found) {
		snprintf(msg, sizeof(msg), "no retry-policy override of %s",
		    id ? id : "the batch");
		answer_error(a, 404, "not_found", msg);
		return;
	}
	answer_effective(a, v, id);
}

int
serve_policy_answer(json_t **out, int *status, const struct cli *cli,
    const char *method, const char *id, const char *body, size_t len,
    const char *key_name)
{
	struct answer a = {500, NULL};
	struct sc_err err = {0};
	struct story_row st;
	struct view v;
	bool get = strcmp(method, "GET") == 0 || strcmp(method, "HEAD") == 0;
	int rc;

	/* a write opens the database for writing: busy timeout, short
	 * transactions, WAL (docs/state.md#opening) */
	rc = view_open(&v, cli->config_path, cli->lender, !get, &err);
	if (rc < 0)
		answer_error(&a, 500, "internal", err.msg);
	else if (id != NULL && (rc = view_find_story(&st, &v, id, &err)) < 0)
		answer_error(&a, rc == SC_EUSAGE ? 404 : 500,
		    rc == SC_EUSAGE ? "not_found" : "internal", err.msg);
	else if (get)
		answer_effective(&a, &v, id);
	else if (strcmp(method, "PUT") == 0)
		answer_put(&a, &v, id, body, len, key_name);
	else
		answer_delete(&a, &v, id);
	view_close(&v);
	*out = a.j;
	*status = a.status;
	return a.j != NULL ? 0 : SC_EOS;
}
