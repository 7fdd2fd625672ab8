/*
 * cmd_simulate.c - `storyctl simulate`: run a hypothetical history through
 * the configured policy (or the defaults) and print every decision.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "controller/cli/cli.h"
#include "controller/cli/help.h"
#include "controller/cli/opts.h"
#include "controller/config/config.h"
#include "strategies/simulate.h"
#include "strategies/number.h"

static json_t *
factor_json(double f)
{
	if (f == floor(f) && fabs(f) < 1e15)
		return json_integer((json_int_t)f);
	return json_real(f);
}

static int
print_json(const struct cli *cli, const struct sim_row *rows, size_t n,
    struct sc_err *err)
{
	json_t *arr = json_array();
	json_t *o;
	size_t i;
	int rc = 0;

	if (arr == NULL)
		return err_set(err, SC_EOS, "out of memory");
	for (i = 0; i < n; i++) {
		const struct sim_row *r = &rows[i];
		/* an array: each row carries the version
		 * (docs/json.md#versions) */
		o = json_pack(
		    "{s:i, s:i, s:s, s:s, s:i, s:o, s:s, s:I, s:o, s:o}",
		    "format_version", CLI_JSON_FORMAT_VERSION, "attempt",
		    r->attempt, "role", role_name(r->role), "outcome",
		    outcome_name(r->outcome), "tasks_completed",
		    r->tasks_completed, "decision",
		    r->d.decision == DECISION_NONE
			? json_null()
			: json_string(decision_name(r->d.decision)),
		    "reason", r->d.reason, "delay_ms",
		    (json_int_t)r->d.delay_ms, "timeout_factor",
		    factor_json(r->d.timeout_factor), "poll_factor",
		    factor_json(r->d.poll_factor));
		if (o == NULL || json_array_append_new(arr, o) < 0) {
			rc = err_set(err, SC_EOS, "out of memory");
			goto out;
		}
	}
	rc = cli_print_json(cli, arr, err);
out:
	json_decref(arr);
	return rc;
}

static void
fmt_delay(char *buf, size_t len, int64_t ms)
{
	if (ms == 0)
		snprintf(buf, len, "-");
	else if (ms % 1000 == 0)
		snprintf(buf, len, "%llds", (long long)(ms / 1000));
	else
		snprintf(buf, len, "%.1fs", (double)ms / 1000.0);
}

static void
print_table(const struct cli *cli, const struct config *cfg,
    const struct sim_row *rows, size_t n, int total, size_t ntok)
{
	char tasks[32], delay[32];
	size_t i;

	fprintf(cli->out,
	    "policy %s, max_attempts %d; primary %s, fallback "
	    "%s; %d tasks\n\n",
	    strategy_name(cfg->policy.strategy), cfg->policy.max_attempts,
	    cfg->agents[ROLE_PRIMARY].name,
	    cfg->agents[ROLE_FALLBACK].configured
		? cfg->agents[ROLE_FALLBACK].name
		: "(none)",
	    total);
	fprintf(cli->out, "%-7s %-8s %-11s %-5s %-8s %-6s %s\n", "attempt",
	    "agent", "outcome", "tasks", "decision", "delay", "reason");
	for (i = 0; i < n; i++) {
		const struct sim_row *r = &rows[i];
		snprintf(
		    tasks, sizeof(tasks), "%d/%d", r->tasks_completed, total);
		fmt_delay(delay, sizeof(delay),
		    r->d.decision == DECISION_RETRY ||
			    r->d.decision == DECISION_WAIT
			? r->d.delay_ms
			: 0);
		fprintf(cli->out, "%-7d %-8s %-11s %-5s %-8s %-6s %s\n",
		    r->attempt, role_name(r->role), outcome_name(r->outcome),
		    tasks,
		    r->d.decision == DECISION_NONE
			? "-"
			: decision_name(r->d.decision),
		    delay, r->d.reason);
	}
	if (n < ntok)
		fprintf(cli->out,
		    "\n(%zu token%s after the final decision "
		    "ignored)\n",
		    ntok - n, ntok - n == 1 ? "" : "s");
}

int
cmd_simulate(struct cli *cli, int argc, char **argv, struct sc_err *err)
{
	struct config cfg;
	struct sim_opts o;
	struct sim_row *rows = NULL;
	const char **toks = NULL;
	const char *v = NULL;
	struct opts op;
	size_t ntok = 0, n = 0;
	int total = 9, json = 0, i;
	int rc = 0;

	memset(&cfg, 0, sizeof(cfg));
	toks = calloc((size_t)argc + 1, sizeof(*toks));
	if (toks == NULL)
		return err_set(err, SC_EOS, "out of memory");
	rc =
	    opts_parse(&op, "simulate", help_simulate.options, argc, argv, err);
	if (rc < 0)
		goto out;
	json = opts_has(&op, "--json");
	v = opts_value(&op, "--tasks");
	if (v != NULL) {
		rc = number_parse_int(&total, v, "--tasks", 1, 1000000, err);
		if (rc < 0)
			goto out;
	}
	for (i = 0; i < op.nargs; i++)
		toks[ntok++] = op.args[i];
	if (ntok == 0) {
		rc = err_set(err, SC_EUSAGE,
		    "simulate: give at least one "
		    "OUTCOME[:TASKS] token, e.g. storyctl simulate "
		    "incomplete:5 crash:4 incomplete:5 incomplete:5");
		goto out;
	}
	rc = cli_load_config(&cfg, cli, true, err);
	if (rc < 0)
		goto out;
	o.policy = &cfg.policy;
	o.has_fallback = cfg.agents[ROLE_FALLBACK].configured;
	o.tasks_total = total;
	rc = simulate_run(&rows, &n, &o, toks, ntok, err);
	if (rc < 0)
		goto out;
	if (json)
		rc = print_json(cli, rows, n, err);
	else
		print_table(cli, &cfg, rows, n, total, ntok);
out:
	free(rows);
	free(toks);
	opts_release(&op);
	config_release(&cfg);
	return rc;
}
