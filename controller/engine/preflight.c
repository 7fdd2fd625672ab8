/*
 * preflight.c - see preflight.h.
 */
#include <stdio.h>
#include <stdlib.h>

#include "controller/config/argv.h"
#include "controller/engine/preflight.h"

const struct strlist *
preflight_template(const struct agent_conf *a, bool confined)
{
	return confined && a->command_confined.n > 0 ? &a->command_confined
						     : &a->command;
}

int
preflight_each(
    const struct config *cfg, const bool *confined, preflight_fn fn, void *ctx)
{
	struct preflight_prog p;
	char what[128];
	size_t i;
	int r, rc = 0;

	for (r = ROLE_PRIMARY; rc == 0 && r <= ROLE_FALLBACK; r++) {
		const struct agent_conf *a = &cfg->agents[r];

		if (!a->configured)
			continue;
		snprintf(what, sizeof(what), "agent %s (%s)",
		    role_name((enum role)r), a->name);
		p = (struct preflight_prog){role_name((enum role)r), a->name,
		    what,
		    confined != NULL && confined[r] && a->command_confined.n > 0
			? &a->command_confined
			: &a->command,
		    !cfg->executor.is_remote, r};
		rc = fn(ctx, &p);
	}
	if (rc == 0 && cfg->executor.is_remote && cfg->executor.launch.n > 0) {
		p = (struct preflight_prog){"launch", "executor.launch",
		    "executor.launch", &cfg->executor.launch, true, -1};
		rc = fn(ctx, &p);
	}
	for (i = 0; rc == 0 && i < cfg->ngates; i++) {
		snprintf(what, sizeof(what), "gate %s", cfg->gates[i].name);
		p = (struct preflight_prog){"gate", cfg->gates[i].name, what,
		    &cfg->gates[i].command, true, -1};
		rc = fn(ctx, &p);
	}
	for (i = 0; rc == 0 && i < cfg->review.nagents; i++) {
		snprintf(what, sizeof(what), "review.agents[%zu]", i);
		p = (struct preflight_prog){
		    "review", what, what, &cfg->review.agents[i], true, -1};
		rc = fn(ctx, &p);
	}
	return rc;
}

int
preflight_check(char **path, const struct preflight_prog *p, struct sc_err *err)
{
	char *found = NULL;
	int rc;

	rc = argv_validate(p->argv, err);
	if (rc == 0 && p->here)
		rc = argv_resolve_program(&found, p->argv->items[0], err);
	if (path != NULL)
		*path = found;
	else
		free(found);
	return rc;
}

/* run stops at the first problem, naming the program. */
static int
run_one(void *ctx, const struct preflight_prog *p)
{
	struct sc_err *err = ctx;

	if (preflight_check(NULL, p, err) < 0)
		return err_prefix(err, "%s", p->what);
	return 0;
}

int
preflight_run(const struct config *cfg, struct sc_err *err)
{
	return preflight_each(cfg, NULL, run_one, err);
}
