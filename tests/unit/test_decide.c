/*
 * test_decide.c - every row of docs/retry-strategy.md as a table: a token
 * history in, the roles, decisions and rules out.  Edge cases of plateau
 * detection, delays, budgets and the retry/none strategies follow as direct
 * calls.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "strategies/backoff.h"
#include "strategies/decide.h"
#include "strategies/simulate.h"

struct row_case {
	const char *name;
	enum strategy_kind strategy;
	bool no_fallback;
	int max_attempts; /* 0 = default 5 */
	int retry_count;
	const char *tokens;
	const char *roles; /* expected, one letter each: p/f */
	const char *decisions; /* expected, space separated */
	const char *rules; /* expected rule of the last row */
};

static const struct row_case cases[] = {
    {"D1 success first time", STRATEGY_ADAPTIVE, false, 0, 0, "success", "p",
	"done", "D1"},
    {"D2 permanent with no fallback escalates", STRATEGY_ADAPTIVE, true, 0, 0,
	"permanent", "p", "escalate", "D2"},
    {"D2 permanent hands over to the fallback", STRATEGY_ADAPTIVE, false, 0, 0,
	"permanent incomplete:3 incomplete:5", "pff", "retry retry retry",
	"D11"},
    {"D2 both agents permanent: batch stops", STRATEGY_ADAPTIVE, false, 0, 0,
	"permanent permanent", "pf", "retry escalate", "D2"},
    {"D3 usage limit waits, same attempt again", STRATEGY_ADAPTIVE, false, 0, 0,
	"usage_limit success", "pp", "wait done", "D1"},
    {"D4 interrupted decides nothing", STRATEGY_ADAPTIVE, false, 0, 0,
	"interrupted incomplete:2", "pp", "none retry", "D11"},
    {"D5 plateau at the last attempt defers", STRATEGY_ADAPTIVE, false, 0, 0,
	"incomplete:5 crash:4 incomplete:3 incomplete:6 incomplete:6", "pfpfp",
	"retry retry retry retry defer", "D5"},
    {"D6 zero progress escalates", STRATEGY_ADAPTIVE, false, 0, 0,
	"crash crash timeout crash incomplete:0", "pfpfp",
	"retry retry retry retry escalate", "D6"},
    {"D6 only network failures is zero progress", STRATEGY_ADAPTIVE, false, 0,
	0, "network network network network network", "pfpfp",
	"retry retry retry retry escalate", "D6"},
    {"D7 variable progress exhausts retries", STRATEGY_ADAPTIVE, false, 0, 0,
	"incomplete:1 incomplete:2 incomplete:3 incomplete:4 "
	"incomplete:5",
	"pfpfp", "retry retry retry retry escalate", "D7"},
    {"D8 the worked example defers at 4", STRATEGY_ADAPTIVE, false, 0, 0,
	"incomplete:5 crash:4 incomplete:5 incomplete:5", "pfpf",
	"retry retry retry defer", "D8"},
    {"D9 variable progress at 4 retries", STRATEGY_ADAPTIVE, false, 0, 0,
	"incomplete:5 crash:4 incomplete:3 incomplete:6", "pfpf",
	"retry retry retry retry", "D9"},
    {"D10 more progress at 2", STRATEGY_ADAPTIVE, false, 0, 0,
	"incomplete:2 incomplete:4", "pf", "retry retry", "D10"},
    {"D10 not when attempt 2 did less", STRATEGY_ADAPTIVE, false, 0, 0,
	"incomplete:4 incomplete:2", "pf", "retry retry", "D11"},
    {"D11 any other failure", STRATEGY_ADAPTIVE, false, 0, 0, "incomplete:5",
	"p", "retry", "D11"},
    {"plateau ignores network attempts", STRATEGY_ADAPTIVE, false, 0, 0,
	"incomplete:5 network:5 incomplete:5 network:5 incomplete:5", "pfpfp",
	"retry retry retry retry escalate", "D7"},
    {"plateau at T == tasks_total (gate failed)", STRATEGY_ADAPTIVE, false, 0,
	0,
	"gate_failed:9 gate_failed:9 gate_failed:9 "
	"gate_failed:9",
	"pfpf", "retry retry retry defer", "D8"},
    {"plateau at 0 is not a plateau", STRATEGY_ADAPTIVE, false, 0, 0,
	"incomplete:0 incomplete:0 incomplete:0 incomplete:0", "pfpf",
	"retry retry retry retry", "D9"},
    {"single agent: three at the same T", STRATEGY_ADAPTIVE, true, 0, 0,
	"incomplete:3 incomplete:3 incomplete:3 incomplete:3", "pppp",
	"retry retry retry defer", "D8"},
    {"single agent: two at the same T are not enough", STRATEGY_ADAPTIVE, true,
	0, 0,
	"incomplete:1 incomplete:3 incomplete:3 incomplete:4 "
	"incomplete:3",
	"ppppp", "retry retry retry retry escalate", "D7"},
    {"disabled primary: fallback runs odd attempts too", STRATEGY_ADAPTIVE,
	false, 0, 0, "permanent incomplete:4 incomplete:4 incomplete:4", "pfff",
	"retry retry retry defer", "D8"},
    {"max_attempts 2 escalates early", STRATEGY_ADAPTIVE, false, 2, 0,
	"incomplete:1 incomplete:2", "pf", "retry escalate", "D7"},
    {"max_attempts 2 with plateau defers", STRATEGY_ADAPTIVE, false, 2, 0,
	"incomplete:2 incomplete:2", "pf", "retry defer", "D5"},
    {"usage limit is not counted", STRATEGY_ADAPTIVE, false, 0, 0,
	"incomplete:5 usage_limit crash:4 incomplete:5 incomplete:5", "pffpf",
	"retry wait retry retry defer", "D8"},
    {"retry strategy: primary budget then fallback", STRATEGY_RETRY, false, 0,
	2, "crash crash crash crash crash crash", "pppfff",
	"retry retry retry retry retry escalate", "R4"},
    {"retry strategy: no fallback", STRATEGY_RETRY, true, 0, 1, "crash crash",
	"pp", "retry escalate", "R4"},
    {"retry strategy: permanent goes to the fallback", STRATEGY_RETRY, false, 0,
	3, "permanent success", "pf", "retry done", "D1"},
    {"retry strategy never defers", STRATEGY_RETRY, false, 0, 4,
	"incomplete:5 incomplete:5 incomplete:5 incomplete:5 incomplete:5",
	"ppppp", "retry retry retry retry retry", "R3"},
    {"none strategy escalates a failure", STRATEGY_NONE, false, 0, 0, "crash",
	"p", "escalate", "N1"},
    {"none strategy: success is done", STRATEGY_NONE, false, 0, 0, "success",
	"p", "done", "D1"},
};

static size_t
split(char *s, const char **out, size_t max)
{
	size_t n = 0;
	char *save = NULL;
	char *tok;

	for (tok = strtok_r(s, " ", &save); tok != NULL && n < max;
	     tok = strtok_r(NULL, " ", &save))
		out[n++] = tok;
	return n;
}

static void
run_case(const struct row_case *c)
{
	struct policy pol;
	struct sim_opts o;
	struct sim_row *rows = NULL;
	struct sc_err err = {0};
	char buf[512], roles[32] = "", decisions[256] = "";
	const char *toks[32];
	size_t ntok, n = 0, i;

	policy_init_default(&pol);
	pol.strategy = c->strategy;
	if (c->max_attempts)
		pol.max_attempts = c->max_attempts;
	pol.retry_count = c->retry_count;
	snprintf(buf, sizeof(buf), "%s", c->tokens);
	ntok = split(buf, toks, 32);
	o.policy = &pol;
	o.has_fallback = !c->no_fallback;
	o.tasks_total = 9;
	assert_int_equal(simulate_run(&rows, &n, &o, toks, ntok, &err), 0);
	for (i = 0; i < n; i++) {
		strcat(roles, rows[i].role == ROLE_PRIMARY ? "p" : "f");
		if (i)
			strcat(decisions, " ");
		strcat(decisions, decision_name(rows[i].d.decision));
	}
	if (strcmp(roles, c->roles) || strcmp(decisions, c->decisions) ||
	    strcmp(rows[n - 1].d.rule, c->rules))
		print_error("case '%s': roles %s decisions '%s' rule %s (%s)\n",
		    c->name, roles, decisions, rows[n - 1].d.rule,
		    rows[n - 1].d.reason);
	assert_string_equal(roles, c->roles);
	assert_string_equal(decisions, c->decisions);
	assert_string_equal(rows[n - 1].d.rule, c->rules);
	/* every decision names its rule at the start of its reason */
	for (i = 0; i < n; i++)
		assert_non_null(strstr(rows[i].d.reason, rows[i].d.rule));
	free(rows);
	policy_release(&pol);
}

static void
test_table(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		run_case(&cases[i]);
}

/* One test per case as well, so a failure names its row. */
#define ROW_TEST(i) \
	static void test_row_##i(void **state) \
	{ \
		(void)state; \
		if ((i) < sizeof(cases) / sizeof(cases[0])) \
			run_case(&cases[i]); \
	}
/* clang-format off */
ROW_TEST(0)
ROW_TEST(1)
ROW_TEST(2)
ROW_TEST(3)
ROW_TEST(4)
ROW_TEST(5)
ROW_TEST(6)
ROW_TEST(7)
ROW_TEST(8)
ROW_TEST(9)
ROW_TEST(10)
ROW_TEST(11)
ROW_TEST(12)
ROW_TEST(13)
ROW_TEST(14)
ROW_TEST(15)
ROW_TEST(16)
ROW_TEST(17)
ROW_TEST(18)
ROW_TEST(19)
ROW_TEST(20)
ROW_TEST(21)
ROW_TEST(22)
ROW_TEST(23)
ROW_TEST(24)
ROW_TEST(25)
ROW_TEST(26)
ROW_TEST(27)
ROW_TEST(28)
ROW_TEST(29)
/* clang-format on */

/* --- direct calls ------------------------------------------------- */

static struct policy pol;

static int
setup(void **state)
{
	(void)state;
	policy_init_default(&pol);
	return 0;
}

static int
teardown(void **state)
{
	(void)state;
	policy_release(&pol);
	return 0;
}

static struct attempt_rec
rec(int n, enum role r, enum outcome o, int done)
{
	struct attempt_rec a;

	memset(&a, 0, sizeof(a));
	a.attempt = n;
	a.role = r;
	a.outcome = o;
	a.counts.tasks_completed = done;
	a.counts.tasks_total = 9;
	a.hint_ms = -1;
	return a;
}

static void
input(struct decide_input *in, const struct attempt_rec *h, size_t n)
{
	memset(in, 0, sizeof(*in));
	in->policy = &pol;
	in->history = h;
	in->n = n;
	in->has_fallback = true;
	in->retry_on_matched = true;
}

static void
test_worked_example_reason(void **state)
{
	struct attempt_rec h[4];
	struct decide_input in;
	struct decision_out d;

	(void)state;
	h[0] = rec(1, ROLE_PRIMARY, OUTCOME_INCOMPLETE, 5);
	h[1] = rec(2, ROLE_FALLBACK, OUTCOME_CRASH, 4);
	h[2] = rec(3, ROLE_PRIMARY, OUTCOME_INCOMPLETE, 5);
	h[3] = rec(4, ROLE_FALLBACK, OUTCOME_INCOMPLETE, 5);
	input(&in, h, 4);
	assert_int_equal(decide(&d, &in), 0);
	assert_int_equal(d.decision, DECISION_DEFER);
	assert_string_equal(d.reason,
	    "D8: plateau confirmed at 5/9 by "
	    "primary (a3) and fallback (a4)");
	assert_int_equal(d.plateau_tasks, 5);
	assert_int_equal(d.plateau_attempt[ROLE_PRIMARY], 3);
	assert_int_equal(d.plateau_attempt[ROLE_FALLBACK], 4);
}

/* A worktree setup's crash is counted but is no evidence of a plateau
 * (docs/git-work.md#setup): with it, a3 and a4 confirm nothing; as an
 * agent's crash at 5 it would. */
static void
test_setup_crash_no_plateau(void **state)
{
	struct attempt_rec h[4];
	struct decide_input in;
	struct decision_out d;

	(void)state;
	h[0] = rec(1, ROLE_PRIMARY, OUTCOME_INCOMPLETE, 3);
	h[1] = rec(2, ROLE_FALLBACK, OUTCOME_INCOMPLETE, 4);
	h[2] = rec(3, ROLE_PRIMARY, OUTCOME_INCOMPLETE, 5);
	h[3] = rec(4, ROLE_FALLBACK, OUTCOME_CRASH, 5);
	input(&in, h, 4);
	assert_int_equal(decide(&d, &in), 0);
	assert_int_equal(d.decision, DECISION_DEFER);
	assert_int_equal(d.plateau_tasks, 5);
	h[3].setup_crash = true;
	assert_int_equal(decide(&d, &in), 0);
	assert_int_not_equal(d.decision, DECISION_DEFER);
	assert_int_equal(d.plateau_tasks, 0);
	assert_true(d.counted);
}

static void
test_network_sleeps_without_jitter(void **state)
{
	struct attempt_rec h[1];
	struct decide_input in;
	struct decision_out d;

	(void)state;
	pol.network_sleep_s = 60;
	h[0] = rec(1, ROLE_PRIMARY, OUTCOME_NETWORK, 0);
	input(&in, h, 1);
	assert_int_equal(decide(&d, &in), 0);
	assert_int_equal(d.decision, DECISION_RETRY);
	assert_int_equal(d.delay_ms, 60000);
	assert_true(d.jitter == 0);
	assert_int_equal(decide_delay_with_jitter(&d, 0.99), 60000);
	assert_int_equal(d.next_attempt, 2);
	assert_int_equal(d.next_role, ROLE_FALLBACK);
}

static void
test_backoff_grows_per_attempt(void **state)
{
	struct attempt_rec h[3];
	struct decide_input in;
	struct decision_out d;
	int64_t want[] = {1000, 2000, 4000};
	int i;

	(void)state;
	h[0] = rec(1, ROLE_PRIMARY, OUTCOME_INCOMPLETE, 1);
	h[1] = rec(2, ROLE_FALLBACK, OUTCOME_INCOMPLETE, 1);
	h[2] = rec(3, ROLE_PRIMARY, OUTCOME_INCOMPLETE, 2);
	for (i = 0; i < 3; i++) {
		input(&in, h, (size_t)i + 1);
		assert_int_equal(decide(&d, &in), 0);
		assert_int_equal(d.delay_ms, want[i]);
		assert_true(d.jitter == 0.5);
	}
}

static void
test_rate_limit_takes_larger_of_hint_and_backoff(void **state)
{
	struct attempt_rec h[1];
	struct decide_input in;
	struct decision_out d;

	(void)state;
	h[0] = rec(1, ROLE_PRIMARY, OUTCOME_RATE_LIMIT, 0);
	h[0].hint_ms = 30000;
	input(&in, h, 1);
	assert_int_equal(decide(&d, &in), 0);
	assert_int_equal(d.delay_ms, 30000);
	h[0].hint_ms = 10;
	assert_int_equal(decide(&d, &in), 0);
	assert_int_equal(d.delay_ms, 1000);
}

static void
test_usage_wait_capped_and_uncounted(void **state)
{
	struct attempt_rec h[1];
	struct decide_input in;
	struct decision_out d;

	(void)state;
	pol.max_wait_s = 600;
	h[0] = rec(3, ROLE_PRIMARY, OUTCOME_USAGE_LIMIT, 2);
	h[0].hint_ms = 3600 * 1000;
	input(&in, h, 1);
	assert_int_equal(decide(&d, &in), 0);
	assert_int_equal(d.decision, DECISION_WAIT);
	assert_false(d.counted);
	assert_int_equal(d.next_attempt, 3);
	assert_int_equal(d.next_role, ROLE_PRIMARY);
	assert_int_equal(d.delay_ms, 600000);
	assert_int_equal(decide_delay_with_jitter(&d, 1.0), 600000);
	h[0].hint_ms = 100000;
	assert_int_equal(decide(&d, &in), 0);
	assert_int_equal(d.delay_ms, 100000);
	assert_true(decide_delay_with_jitter(&d, 1.0) == 150000);
	h[0].hint_ms = -1;
	assert_int_equal(decide(&d, &in), 0);
	assert_int_equal(d.delay_ms, 600000);
	/* a reset already past never makes a tight loop */
	h[0].hint_ms = 0;
	assert_int_equal(decide(&d, &in), 0);
	assert_int_equal(d.delay_ms, 1000);
}

static void
test_usage_wait_reruns_back_off(void **state)
{
	struct attempt_rec h[3];
	struct decide_input in;
	struct decision_out d;

	(void)state;
	h[0] = rec(2, ROLE_FALLBACK, OUTCOME_USAGE_LIMIT, 0);
	h[1] = rec(2, ROLE_FALLBACK, OUTCOME_USAGE_LIMIT, 0);
	h[2] = rec(2, ROLE_FALLBACK, OUTCOME_USAGE_LIMIT, 0);
	h[0].hint_ms = h[1].hint_ms = h[2].hint_ms = 0;
	input(&in, h, 3);
	assert_int_equal(decide(&d, &in), 0);
	assert_int_equal(d.delay_ms, 4000); /* third rerun: 1000 * 2^2 */
}

static void
test_time_budget_counts_as_exhausted(void **state)
{
	struct attempt_rec h[2];
	struct decide_input in;
	struct decision_out d;

	(void)state;
	pol.max_time_s = 100;
	h[0] = rec(1, ROLE_PRIMARY, OUTCOME_INCOMPLETE, 2);
	h[0].started_ms = 1000;
	h[1] = rec(2, ROLE_FALLBACK, OUTCOME_INCOMPLETE, 2);
	input(&in, h, 2);
	in.now_ms = 50000;
	assert_int_equal(decide(&d, &in), 0);
	assert_int_equal(d.decision, DECISION_RETRY);
	in.now_ms = 101000;
	assert_int_equal(decide(&d, &in), 0);
	assert_int_equal(d.decision, DECISION_DEFER);
	assert_string_equal(d.rule, "D5");
	assert_non_null(strstr(d.reason, "time budget"));
}

static void
test_cost_budget_counts_as_exhausted(void **state)
{
	struct attempt_rec h[1];
	struct decide_input in;
	struct decision_out d;

	(void)state;
	h[0] = rec(1, ROLE_PRIMARY, OUTCOME_INCOMPLETE, 0);
	input(&in, h, 1);
	in.budget_spent = true;
	assert_int_equal(decide(&d, &in), 0);
	assert_int_equal(d.decision, DECISION_ESCALATE);
	assert_string_equal(d.rule, "D6");
}

static void
test_retry_on_filter_escalates(void **state)
{
	struct attempt_rec h[1];
	struct decide_input in;
	struct decision_out d;

	(void)state;
	strlist_push(&pol.retry_on, "overloaded");
	h[0] = rec(1, ROLE_PRIMARY, OUTCOME_CRASH, 0);
	input(&in, h, 1);
	in.retry_on_matched = false;
	assert_int_equal(decide(&d, &in), 0);
	assert_int_equal(d.decision, DECISION_ESCALATE);
	assert_non_null(strstr(d.reason, "retry_on"));
	in.retry_on_matched = true;
	assert_int_equal(decide(&d, &in), 0);
	assert_int_equal(d.decision, DECISION_RETRY);
}

static void
test_d9_and_d10_factors(void **state)
{
	struct attempt_rec h[4];
	struct decide_input in;
	struct decision_out d;

	(void)state;
	pol.extended_timeout_factor = 3;
	h[0] = rec(1, ROLE_PRIMARY, OUTCOME_INCOMPLETE, 1);
	h[1] = rec(2, ROLE_FALLBACK, OUTCOME_INCOMPLETE, 3);
	h[2] = rec(3, ROLE_PRIMARY, OUTCOME_INCOMPLETE, 4);
	h[3] = rec(4, ROLE_FALLBACK, OUTCOME_INCOMPLETE, 6);
	input(&in, h, 2);
	assert_int_equal(decide(&d, &in), 0);
	assert_true(d.poll_factor == 2 && d.timeout_factor == 1);
	input(&in, h, 3);
	assert_int_equal(decide(&d, &in), 0);
	assert_true(d.poll_factor == 1 && d.timeout_factor == 1);
	input(&in, h, 4);
	assert_int_equal(decide(&d, &in), 0);
	assert_true(d.poll_factor == 1 && d.timeout_factor == 3);
	assert_int_equal(d.next_attempt, 5);
	assert_int_equal(d.next_role, ROLE_PRIMARY);
}

static void
test_role_parity_and_disabled(void **state)
{
	bool none[2] = {false, false};
	bool pdis[2] = {true, false};
	bool fdis[2] = {false, true};
	int n;

	(void)state;
	for (n = 1; n <= 6; n++) {
		assert_int_equal(decide_role_for(n, true, none),
		    n % 2 ? ROLE_PRIMARY : ROLE_FALLBACK);
		assert_int_equal(decide_role_for(n, false, none), ROLE_PRIMARY);
		assert_int_equal(decide_role_for(n, true, pdis), ROLE_FALLBACK);
		assert_int_equal(decide_role_for(n, true, fdis), ROLE_PRIMARY);
	}
}

static void
test_disabled_fallback_is_skipped(void **state)
{
	struct attempt_rec h[2];
	struct decide_input in;
	struct decision_out d;

	(void)state;
	h[0] = rec(1, ROLE_PRIMARY, OUTCOME_INCOMPLETE, 1);
	h[1] = rec(2, ROLE_FALLBACK, OUTCOME_PERMANENT, 0);
	input(&in, h, 2);
	assert_int_equal(decide(&d, &in), 0);
	assert_int_equal(d.disable_role, ROLE_FALLBACK);
	assert_false(d.stop_batch);
	assert_int_equal(d.decision, DECISION_RETRY);
	assert_int_equal(d.next_role, ROLE_PRIMARY);
	assert_int_equal(d.next_attempt, 3);
	assert_non_null(strstr(d.reason, "D2: fallback disabled"));
}

static void
test_retry_max_time_bounds_delay(void **state)
{
	struct attempt_rec h[2];
	struct decide_input in;
	struct decision_out d;

	(void)state;
	pol.strategy = STRATEGY_RETRY;
	pol.retry_count = 5;
	pol.retry_max_time_ms = 10000;
	pol.backoff.kind = BACKOFF_FIXED;
	pol.backoff.base_delay_ms = 8000;
	h[0] = rec(1, ROLE_PRIMARY, OUTCOME_CRASH, 0);
	h[0].started_ms = 0;
	h[1] = rec(2, ROLE_PRIMARY, OUTCOME_CRASH, 0);
	h[1].started_ms = 5000;
	input(&in, h, 2);
	in.has_fallback = false;
	in.now_ms = 7000;
	assert_int_equal(decide(&d, &in), 0);
	assert_int_equal(d.decision, DECISION_RETRY);
	assert_int_equal(d.delay_ms, 3000); /* not past the deadline */
	in.now_ms = 10000;
	assert_int_equal(decide(&d, &in), 0);
	assert_int_equal(d.decision, DECISION_ESCALATE);
}

static void
test_empty_history_is_an_error(void **state)
{
	struct decide_input in;
	struct decision_out d;

	(void)state;
	input(&in, NULL, 0);
	assert_int_equal(decide(&d, &in), SC_ESOFTWARE);
}

static void
test_simulate_bad_tokens(void **state)
{
	const char *bad[] = {"bogus", "incomplete:x", "incomplete:10",
	    "success:3", ":4", "running", "crash:-1", "incomplete:4x"};
	struct sc_err err = {0};
	enum outcome o;
	int t;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(
		    simulate_parse_token(&o, &t, bad[i], 9, &err), SC_EUSAGE);
		assert_non_null(strstr(err.msg, bad[i]));
	}
	assert_int_equal(simulate_parse_token(&o, &t, "crash:4", 9, &err), 0);
	assert_int_equal(o, OUTCOME_CRASH);
	assert_int_equal(t, 4);
	assert_int_equal(simulate_parse_token(&o, &t, "success", 9, &err), 0);
	assert_int_equal(t, 9);
}

static void
test_simulate_stops_at_terminal(void **state)
{
	const char *toks[] = {"success", "crash", "crash"};
	struct sim_opts o = {&pol, true, 9};
	struct sim_row *rows = NULL;
	size_t n = 0;

	(void)state;
	assert_int_equal(simulate_run(&rows, &n, &o, toks, 3, NULL), 0);
	assert_int_equal(n, 1);
	free(rows);
}

/* Issue 12: every wait is capped by max_wait_s, whatever its cause,
 * and the reason says when the cap cut it short. */
static void
test_every_wait_capped(void **state)
{
	struct attempt_rec h[1];
	struct decide_input in;
	struct decision_out d;

	(void)state;
	pol.max_wait_s = 30;
	pol.network_sleep_s = 120;
	h[0] = rec(1, ROLE_PRIMARY, OUTCOME_NETWORK, 0);
	input(&in, h, 1);
	assert_int_equal(decide(&d, &in), 0);
	assert_int_equal(d.delay_ms, 30000);
	assert_true(d.wait_capped);
	assert_int_equal(d.uncapped_delay_ms, 120000);
	assert_non_null(strstr(
	    d.reason, "wait capped at 30s by policy.max_wait_s (2m00s asked)"));
	h[0] = rec(1, ROLE_PRIMARY, OUTCOME_RATE_LIMIT, 0);
	h[0].hint_ms = 3600 * 1000;
	assert_int_equal(decide(&d, &in), 0);
	assert_int_equal(d.delay_ms, 30000);
	assert_int_equal(decide_delay_with_jitter(&d, 1.0), 30000);
	assert_true(d.wait_capped);
	/* under the cap: untouched, nothing said */
	h[0].hint_ms = 5000;
	assert_int_equal(decide(&d, &in), 0);
	assert_int_equal(d.delay_ms, 5000);
	assert_false(d.wait_capped);
	assert_null(strstr(d.reason, "capped"));
	/* the jitter never pushes past the cap either */
	h[0].hint_ms = 29000;
	assert_int_equal(decide(&d, &in), 0);
	assert_int_equal(decide_delay_with_jitter(&d, 1.0), 30000);
	/* 0: no cap */
	pol.max_wait_s = 0;
	h[0].hint_ms = 3600 * 1000;
	assert_int_equal(decide(&d, &in), 0);
	assert_int_equal(d.delay_ms, 3600 * 1000);
}

struct limit_case {
	const char *name;
	enum on_usage_limit mode;
	bool has_fallback;
	bool fb_disabled;
	int64_t reset_s; /* the hint */
	int64_t fb_paused_s; /* fallback paused for this long from now */
	int reruns; /* earlier usage limits of the same attempt */
	/* expected */
	enum decision decision;
	enum role next_role;
	int64_t delay_s;
	bool stop;
	int64_t resume_s; /* resume_after_ms - now, in s; 0 none */
	const char *words;
};

static const struct limit_case limit_cases[] = {
    {"wait: reset within max_wait_s", ON_LIMIT_WAIT, true, false, 600, 0, 0,
	DECISION_WAIT, ROLE_PRIMARY, 600, false, 0, "until the reset"},
    {"wait: reset past the cap, fallback free: capped wait", ON_LIMIT_WAIT,
	true, false, 7200, 0, 0, DECISION_WAIT, ROLE_PRIMARY, 1800, false, 0,
	"capped"},
    {"wait: reset past the cap, no fallback: stop", ON_LIMIT_WAIT, false, false,
	7200, 0, 0, DECISION_WAIT, ROLE_PRIMARY, 0, true, 7200,
	"every enabled agent is paused past policy.max_wait_s"},
    {"wait: reset past the cap, fallback disabled: stop", ON_LIMIT_WAIT, true,
	true, 7200, 0, 0, DECISION_WAIT, ROLE_PRIMARY, 0, true, 7200,
	"the batch stops"},
    {"wait: both paused past the cap: stop, resume at the first reset",
	ON_LIMIT_WAIT, true, false, 9000, 5000, 0, DECISION_WAIT, ROLE_PRIMARY,
	0, true, 5000, "resume after the reset"},
    {"wait: fallback paused but within the cap: capped wait", ON_LIMIT_WAIT,
	true, false, 9000, 1000, 0, DECISION_WAIT, ROLE_PRIMARY, 1800, false, 0,
	"capped"},
    {"switch: the fallback takes the attempt at once", ON_LIMIT_SWITCH, true,
	false, 7200, 0, 0, DECISION_WAIT, ROLE_FALLBACK, 0, false, 0,
	"on_usage_limit switch"},
    {"switch: fallback paused itself: wait", ON_LIMIT_SWITCH, true, false, 600,
	300, 0, DECISION_WAIT, ROLE_PRIMARY, 600, false, 0, "until the reset"},
    {"switch: no fallback: wait", ON_LIMIT_SWITCH, false, false, 600, 0, 0,
	DECISION_WAIT, ROLE_PRIMARY, 600, false, 0, "until the reset"},
    {"max_limit_waits: the 5th limit in a row stops", ON_LIMIT_WAIT, true,
	false, 600, 0, 4, DECISION_WAIT, ROLE_PRIMARY, 0, true, 600,
	"after 4 waits in a row"},
    {"max_limit_waits: the 4th still waits", ON_LIMIT_WAIT, true, false, 600, 0,
	3, DECISION_WAIT, ROLE_PRIMARY, 600, false, 0, "until the reset"},
};

static void
test_usage_limit_policy(void **state)
{
	const int64_t now = 1000000000;
	struct attempt_rec h[8];
	struct decide_input in;
	struct decision_out d;
	size_t i;
	int k;

	(void)state;
	for (i = 0; i < sizeof(limit_cases) / sizeof(*limit_cases); i++) {
		const struct limit_case *c = &limit_cases[i];
		print_message("case: %s\n", c->name);
		pol.max_wait_s = 1800;
		pol.on_usage_limit = c->mode;
		pol.max_limit_waits = 4;
		for (k = 0; k <= c->reruns; k++) {
			h[k] = rec(1, ROLE_PRIMARY, OUTCOME_USAGE_LIMIT, 0);
			h[k].hint_ms = c->reset_s * 1000;
		}
		input(&in, h, (size_t)c->reruns + 1);
		in.now_ms = now;
		in.has_fallback = c->has_fallback;
		in.disabled[ROLE_FALLBACK] = c->fb_disabled;
		in.paused_until[ROLE_PRIMARY] = now + c->reset_s * 1000;
		in.paused_until[ROLE_FALLBACK] =
		    c->fb_paused_s ? now + c->fb_paused_s * 1000 : 0;
		assert_int_equal(decide(&d, &in), 0);
		assert_int_equal(d.decision, c->decision);
		assert_false(d.counted);
		assert_int_equal(d.next_attempt, 1);
		assert_int_equal(d.next_role, c->next_role);
		assert_int_equal(d.stop_batch, c->stop);
		if (!c->stop)
			assert_int_equal(d.delay_ms, c->delay_s * 1000);
		assert_int_equal(d.resume_after_ms,
		    c->resume_s ? now + c->resume_s * 1000 : 0);
		if (strstr(d.reason, c->words) == NULL)
			fail_msg("%s: no \"%s\" in \"%s\"", c->name, c->words,
			    d.reason);
	}
}

/* D6 blames the API or the connection only when the attempts failed
 * that way; an agent that answered and checked nothing is told so. */
static void
test_d6_reason(void **state)
{
	struct attempt_rec h[5];
	struct decide_input in;
	struct decision_out d;
	int i;

	(void)state;
	for (i = 0; i < 5; i++)
		h[i] = rec(i + 1, i % 2 ? ROLE_FALLBACK : ROLE_PRIMARY,
		    OUTCOME_INCOMPLETE, 0);
	input(&in, h, 5);
	assert_int_equal(decide(&d, &in), 0);
	assert_string_equal(d.rule, "D6");
	assert_non_null(strstr(d.reason,
	    "zero progress on all attempts: the agent ran to the "
	    "end and checked no box"));
	assert_null(strstr(d.reason, "API"));
	h[2].outcome = OUTCOME_CRASH;
	assert_int_equal(decide(&d, &in), 0);
	assert_non_null(strstr(d.reason,
	    "zero progress on all attempts: likely API or connection issue"));
}

/* D6 says what the attempts showed when their messages name it: a
 * refusal, a prompt too long for the context, a bad request; a refused
 * connection is still the connection (issue 31). */
static void
test_d6_says_what_attempts_showed(void **state)
{
	static const struct {
		const char *msgs[5];
		const char *want;
	} shows[] = {
	    {{"The model response was blocked due to safety settings.",
		 "The model response was blocked due to safety settings.",
		 "The model response was blocked due to safety settings.",
		 "The model response was blocked due to safety settings.",
		 "The model response was blocked due to safety settings."},
		"zero progress on all attempts: the attempts showed "
		"refusals (5)"},
	    {{"prompt is too long: 250000 tokens > 200000 maximum",
		 "prompt is too long: 250000 tokens > 200000 maximum",
		 "Error 400: invalid_request_error: bad field",
		 "prompt is too long: 250000 tokens > 200000 maximum",
		 "prompt is too long: 250000 tokens > 200000 maximum"},
		"the attempts showed the prompt too long for the model's "
		"context (4), bad requests (400) (1)"},
	    {{"connect ECONNREFUSED 127.0.0.1:9", "connection refused",
		 "connection refused", "connection refused",
		 "connection refused"},
		"zero progress on all attempts: likely API or connection "
		"issue"},
	};
	struct attempt_rec h[5];
	struct decide_input in;
	struct decision_out d;
	size_t c;
	int i;

	(void)state;
	for (c = 0; c < sizeof(shows) / sizeof(shows[0]); c++) {
		for (i = 0; i < 5; i++) {
			h[i] = rec(i + 1, i % 2 ? ROLE_FALLBACK : ROLE_PRIMARY,
			    c == 2 ? OUTCOME_NETWORK : OUTCOME_CRASH, 0);
			h[i].message = shows[c].msgs[i];
		}
		input(&in, h, 5);
		assert_int_equal(decide(&d, &in), 0);
		assert_string_equal(d.rule, "D6");
		if (strstr(d.reason, shows[c].want) == NULL)
			fail_msg("case %zu: no \"%s\" in \"%s\"", c,
			    shows[c].want, d.reason);
	}
}

/* --- subtasks and D6 (docs/retry-strategy.md#d6) --------------------- */

struct sub_step {
	enum outcome outcome;
	int tasks, subtasks; /* completed, of 9 tasks and 12 subtasks */
};

struct sub_case {
	const char *name;
	size_t n;
	struct sub_step steps[5];
	const char *rule; /* of the decision after the last step */
	enum decision decision;
	const char *reason; /* a part of its reason; NULL: not checked */
};

#define INC OUTCOME_INCOMPLETE
static const struct sub_case sub_cases[] = {
    {"tasks stay at 0, subtasks moved: retries exhausted, not D6", 5,
	{{INC, 0, 1}, {INC, 0, 2}, {INC, 0, 3}, {INC, 0, 4}, {INC, 0, 5}}, "D7",
	DECISION_ESCALATE, "D7: retries exhausted at 0/9 (subtasks 5/12)"},
    {"nothing moved: still D6", 5,
	{{INC, 0, 0}, {INC, 0, 0}, {INC, 0, 0}, {INC, 0, 0}, {INC, 0, 0}}, "D6",
	DECISION_ESCALATE, "checked no box"},
    {"crashes around one attempt that checked subtasks: D7", 5,
	{{OUTCOME_CRASH, 0, 0}, {OUTCOME_CRASH, 0, 0}, {INC, 0, 3},
	    {OUTCOME_TIMEOUT, 0, 3}, {OUTCOME_CRASH, 0, 3}},
	"D7", DECISION_ESCALATE, "(subtasks 3/12)"},
    {"subtasks checked before the first attempt are progress too", 5,
	{{OUTCOME_CRASH, 0, 2}, {OUTCOME_CRASH, 0, 2}, {OUTCOME_CRASH, 0, 2},
	    {OUTCOME_CRASH, 0, 2}, {OUTCOME_CRASH, 0, 2}},
	"D7", DECISION_ESCALATE, NULL},
    {"subtasks of uncounted attempts say nothing: D6", 5,
	{{OUTCOME_NETWORK, 0, 4}, {OUTCOME_CRASH, 0, 0}, {OUTCOME_CRASH, 0, 0},
	    {OUTCOME_CRASH, 0, 0}, {OUTCOME_CRASH, 0, 0}},
	"D6", DECISION_ESCALATE, "likely API or connection issue"},
    {"plateau stays on tasks: subtasks moving under 5/9 defer at 4", 4,
	{{INC, 5, 1}, {INC, 5, 2}, {INC, 5, 3}, {INC, 5, 4}}, "D8",
	DECISION_DEFER, "plateau confirmed at 5/9"},
    {"subtasks moving at 0/9 are no plateau", 4,
	{{INC, 0, 1}, {INC, 0, 2}, {INC, 0, 3}, {INC, 0, 4}}, "D9",
	DECISION_RETRY, NULL},
};
#undef INC

static void
test_subtasks_and_d6(void **state)
{
	struct attempt_rec h[5];
	struct decide_input in;
	struct decision_out d;
	const bool none[2] = {false, false};
	size_t c, i;

	(void)state;
	for (c = 0; c < sizeof(sub_cases) / sizeof(sub_cases[0]); c++) {
		const struct sub_case *sc = &sub_cases[c];
		for (i = 0; i < sc->n; i++) {
			h[i] = rec((int)i + 1,
			    decide_role_for((int)i + 1, true, none),
			    sc->steps[i].outcome, sc->steps[i].tasks);
			h[i].counts.subtasks_completed = sc->steps[i].subtasks;
			h[i].counts.subtasks_total = 12;
		}
		input(&in, h, sc->n);
		assert_int_equal(decide(&d, &in), 0);
		if (strcmp(d.rule, sc->rule) != 0 ||
		    d.decision != sc->decision ||
		    (sc->reason != NULL &&
			strstr(d.reason, sc->reason) == NULL))
			print_error("case '%s': %s %s (%s)\n", sc->name, d.rule,
			    decision_name(d.decision), d.reason);
		assert_string_equal(d.rule, sc->rule);
		assert_int_equal(d.decision, sc->decision);
		if (sc->reason != NULL)
			assert_non_null(strstr(d.reason, sc->reason));
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_table),
	    cmocka_unit_test(test_row_0),
	    cmocka_unit_test(test_row_1),
	    cmocka_unit_test(test_row_2),
	    cmocka_unit_test(test_row_3),
	    cmocka_unit_test(test_row_4),
	    cmocka_unit_test(test_row_5),
	    cmocka_unit_test(test_row_6),
	    cmocka_unit_test(test_row_7),
	    cmocka_unit_test(test_row_8),
	    cmocka_unit_test(test_row_9),
	    cmocka_unit_test(test_row_10),
	    cmocka_unit_test(test_row_11),
	    cmocka_unit_test(test_row_12),
	    cmocka_unit_test(test_row_13),
	    cmocka_unit_test(test_row_14),
	    cmocka_unit_test(test_row_15),
	    cmocka_unit_test(test_row_16),
	    cmocka_unit_test(test_row_17),
	    cmocka_unit_test(test_row_18),
	    cmocka_unit_test(test_row_19),
	    cmocka_unit_test(test_row_20),
	    cmocka_unit_test(test_row_21),
	    cmocka_unit_test(test_row_22),
	    cmocka_unit_test(test_row_23),
	    cmocka_unit_test(test_row_24),
	    cmocka_unit_test(test_row_25),
	    cmocka_unit_test(test_row_26),
	    cmocka_unit_test(test_row_27),
	    cmocka_unit_test(test_row_28),
	    cmocka_unit_test(test_row_29),
	    cmocka_unit_test_setup_teardown(
		test_worked_example_reason, setup, teardown),
	    cmocka_unit_test_setup_teardown(
		test_setup_crash_no_plateau, setup, teardown),
	    cmocka_unit_test_setup_teardown(
		test_network_sleeps_without_jitter, setup, teardown),
	    cmocka_unit_test_setup_teardown(
		test_backoff_grows_per_attempt, setup, teardown),
	    cmocka_unit_test_setup_teardown(
		test_rate_limit_takes_larger_of_hint_and_backoff, setup,
		teardown),
	    cmocka_unit_test_setup_teardown(
		test_usage_wait_capped_and_uncounted, setup, teardown),
	    cmocka_unit_test_setup_teardown(
		test_usage_wait_reruns_back_off, setup, teardown),
	    cmocka_unit_test_setup_teardown(
		test_every_wait_capped, setup, teardown),
	    cmocka_unit_test_setup_teardown(
		test_usage_limit_policy, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_d6_reason, setup, teardown),
	    cmocka_unit_test_setup_teardown(
		test_d6_says_what_attempts_showed, setup, teardown),
	    cmocka_unit_test_setup_teardown(
		test_subtasks_and_d6, setup, teardown),
	    cmocka_unit_test_setup_teardown(
		test_time_budget_counts_as_exhausted, setup, teardown),
	    cmocka_unit_test_setup_teardown(
		test_cost_budget_counts_as_exhausted, setup, teardown),
	    cmocka_unit_test_setup_teardown(
		test_retry_on_filter_escalates, setup, teardown),
	    cmocka_unit_test_setup_teardown(
		test_d9_and_d10_factors, setup, teardown),
	    cmocka_unit_test(test_role_parity_and_disabled),
	    cmocka_unit_test_setup_teardown(
		test_disabled_fallback_is_skipped, setup, teardown),
	    cmocka_unit_test_setup_teardown(
		test_retry_max_time_bounds_delay, setup, teardown),
	    cmocka_unit_test(test_empty_history_is_an_error),
	    cmocka_unit_test(test_simulate_bad_tokens),
	    cmocka_unit_test_setup_teardown(
		test_simulate_stops_at_terminal, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
