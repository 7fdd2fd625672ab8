/*
 * preflight.h - the programs a run starts, checked before it starts: one
 * list that `run` stops at the first problem of and `check` reports
 * whole (docs/configuration.md, "storyctl check"), so the two cannot
 * drift apart.
 */
#ifndef STORYCTL_PREFLIGHT_H
#define STORYCTL_PREFLIGHT_H

#include <stdbool.h>

#include "common/err.h"
#include "common/strlist.h"
#include "controller/config/config.h"

/* One program a run starts. */
struct preflight_prog {
	const char
	    *role; /* "primary", "fallback", "launch", "gate", "review" */
	const char *name; /* the agent's or gate's, "executor.launch", ... */
	const char *what; /* in messages: "agent primary (claude)" */
	const struct strlist *argv; /* the template it runs with */
	/* its program runs here, so it must be found; a remote agent's runs
	 * on the worker (docs/cluster.md#storyctl-job): argv only checked */
	bool here;
	int agent; /* ROLE_PRIMARY or ROLE_FALLBACK for an agent, else -1 */
};

/* The argv template agent a runs with: the preset's full-autonomy one
 * when confined and it has one (docs/sandbox.md#presets). */
const struct strlist *preflight_template(
    const struct agent_conf *a, bool confined);

typedef int (*preflight_fn)(void *ctx, const struct preflight_prog *p);

/* Call fn for every program of cfg's run, in the order run checks them:
 * the agents (with their confined template where confined[role], when
 * confined is not NULL), executor.launch, the gates, the reviewers.
 * Stops at the first fn that returns < 0, and returns that. */
int preflight_each(
    const struct config *cfg, const bool *confined, preflight_fn fn, void *ctx);

/* One program's check: its argv valid and, when p->here, its program
 * found; *path (may be NULL) gets the program as found (malloc'd, the
 * caller's), NULL when not resolved. */
int preflight_check(
    char **path, const struct preflight_prog *p, struct sc_err *err);

/* run's preflight: the first program that fails, its message prefixed
 * with p->what. */
int preflight_run(const struct config *cfg, struct sc_err *err);

#endif
