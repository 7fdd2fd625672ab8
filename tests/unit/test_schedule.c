/* test_schedule.c - dependency order, cycles, readiness, the breaker. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "strategies/breaker.h"
#include "strategies/schedule.h"

#define MAXS 8

/* Stories named by letters; deps as a string per story ("" or "ab"). */
struct graph {
	struct sched_story s[MAXS];
	int deps[MAXS][MAXS];
	char names[MAXS][2];
	size_t n;
};

static void
graph(struct graph *g, const char *const *deps, size_t n)
{
	size_t i, k;

	memset(g, 0, sizeof(*g));
	g->n = n;
	for (i = 0; i < n; i++) {
		g->names[i][0] = (char)('a' + i);
		g->s[i].id = g->names[i];
		for (k = 0; deps[i][k] != '\0'; k++)
			g->deps[i][k] = deps[i][k] - 'a';
		g->s[i].deps = g->deps[i];
		g->s[i].ndeps = k;
		g->s[i].status = STATUS_PENDING;
	}
}

static void
order_str(char *out, const struct graph *g)
{
	size_t order[MAXS], i;
	struct sc_err err = {0};

	assert_int_equal(schedule_order(order, g->s, g->n, &err), 0);
	for (i = 0; i < g->n; i++)
		out[i] = g->names[order[i]][0];
	out[g->n] = '\0';
}

static void
test_order_table(void **state)
{
	static const struct {
		const char *deps[MAXS];
		size_t n;
		const char *want;
	} rows[] = {
	    {{"", "", ""}, 3, "abc"}, /* config order kept */
	    {{"b", "", ""}, 3, "bac"}, /* a waits for b */
	    {{"c", "", ""}, 3, "bca"}, /* a moves only as needed */
	    {{"", "a", "b"}, 3, "abc"}, /* a chain in order */
	    {{"b", "c", ""}, 3, "cba"}, /* a chain reversed */
	    {{"", "", "", "ab"}, 4, "abcd"}, /* two deps */
	    {{"d", "", "", ""}, 4, "bcda"},
	    {{"", "a", "a", "bc"}, 4, "abcd"}, /* diamond */
	};
	struct graph g;
	char got[MAXS + 1];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		graph(&g, rows[i].deps, rows[i].n);
		order_str(got, &g);
		assert_string_equal(got, rows[i].want);
	}
}

static void
test_cycle_named(void **state)
{
	const char *deps[] = {"", "c", "b"};
	const char *self[] = {"a"};
	const char *longer[] = {"b", "c", "a", ""};
	struct graph g;
	size_t order[MAXS];
	struct sc_err err = {0};

	(void)state;
	graph(&g, deps, 3);
	assert_int_equal(schedule_order(order, g.s, g.n, &err), SC_EDATA);
	assert_string_equal(err.msg, "dependency cycle: b -> c -> b");
	graph(&g, self, 1);
	assert_int_equal(schedule_order(order, g.s, g.n, &err), SC_EDATA);
	assert_string_equal(err.msg, "dependency cycle: a -> a");
	graph(&g, longer, 4);
	assert_int_equal(schedule_order(order, g.s, g.n, &err), SC_EDATA);
	assert_string_equal(err.msg, "dependency cycle: a -> b -> c -> a");
}

static void
test_state(void **state)
{
	const char *deps[] = {"", "", "ab"};
	struct graph g;
	int why;

	(void)state;
	graph(&g, deps, 3);
	assert_int_equal(schedule_state(g.s, 0, &why), SCHED_READY);
	assert_int_equal(why, -1);
	assert_int_equal(schedule_state(g.s, 2, &why), SCHED_WAIT);
	assert_int_equal(why, 0);
	g.s[0].status = STATUS_DONE;
	g.s[1].status = STATUS_RUNNING;
	assert_int_equal(schedule_state(g.s, 2, &why), SCHED_WAIT);
	assert_int_equal(why, 1);
	g.s[1].status = STATUS_DONE;
	assert_int_equal(schedule_state(g.s, 2, &why), SCHED_READY);
	g.s[1].status = STATUS_DEFERRED;
	assert_int_equal(schedule_state(g.s, 2, &why), SCHED_BLOCKED);
	assert_int_equal(why, 1);
	g.s[1].status = STATUS_INVALID;
	assert_int_equal(schedule_state(g.s, 2, &why), SCHED_BLOCKED);
	g.s[1].status = STATUS_BLOCKED;
	assert_int_equal(schedule_state(g.s, 2, &why), SCHED_BLOCKED);
	g.s[1].status = STATUS_ESCALATED;
	g.s[0].status = STATUS_PENDING;
	/* a bad ending decides even while another dependency is open */
	assert_int_equal(schedule_state(g.s, 2, &why), SCHED_BLOCKED);
	assert_int_equal(why, 1);
}

/* The one cycle check, as the config loader calls it: a dependency the
 * loader could not resolve (< 0) is no edge; no cycle is 0. */
static void
test_check_cycles(void **state)
{
	const char *dag[] = {"", "a", "ab"};
	const char *cyc[] = {"", "c", "b"};
	struct graph g;
	struct sc_err err = {0};

	(void)state;
	graph(&g, dag, 3);
	g.deps[0][0] = -1;
	g.s[0].ndeps = 1;
	assert_int_equal(schedule_check_cycles(g.s, g.n, &err), 0);
	assert_int_equal(schedule_check_cycles(g.s, 0, &err), 0);
	graph(&g, cyc, 3);
	assert_int_equal(schedule_check_cycles(g.s, g.n, &err), SC_EDATA);
	assert_string_equal(err.msg, "dependency cycle: b -> c -> b");
}

static enum story_status
status_at(const void *ctx, size_t k)
{
	return ((const enum story_status *)ctx)[k];
}

/* The rule over the batch loop's own storage: *why is the index of the
 * dependency among the story's, SIZE_MAX when ready. */
static void
test_deps_state(void **state)
{
	enum story_status st[3] = {STATUS_DONE, STATUS_PENDING, STATUS_DONE};
	size_t why = 0;

	(void)state;
	assert_int_equal(
	    schedule_deps_state(&why, 0, status_at, st), SCHED_READY);
	assert_true(why == SIZE_MAX);
	assert_int_equal(
	    schedule_deps_state(&why, 3, status_at, st), SCHED_WAIT);
	assert_int_equal(why, 1);
	st[2] = STATUS_ESCALATED;
	assert_int_equal(
	    schedule_deps_state(&why, 3, status_at, st), SCHED_BLOCKED);
	assert_int_equal(why, 2);
	st[1] = STATUS_DONE;
	st[2] = STATUS_DONE;
	assert_int_equal(
	    schedule_deps_state(&why, 3, status_at, st), SCHED_READY);
}

static struct attempt_rec
rec(enum outcome o, int done)
{
	struct attempt_rec a;

	memset(&a, 0, sizeof(a));
	a.outcome = o;
	a.counts.tasks_completed = done;
	return a;
}

static void
test_transient_zero(void **state)
{
	struct attempt_rec h[3];

	(void)state;
	h[0] = rec(OUTCOME_NETWORK, 0);
	h[1] = rec(OUTCOME_RATE_LIMIT, 0);
	h[2] = rec(OUTCOME_TIMEOUT, 0);
	assert_true(breaker_transient_zero(h, 3));
	h[2] = rec(OUTCOME_CRASH, 0);
	assert_false(breaker_transient_zero(h, 3));
	h[2] = rec(OUTCOME_TIMEOUT, 1);
	assert_false(breaker_transient_zero(h, 3));
	/* a checked subtask is progress: not an outage */
	h[2] = rec(OUTCOME_TIMEOUT, 0);
	h[2].counts.subtasks_completed = 2;
	assert_false(breaker_transient_zero(h, 3));
	assert_false(breaker_transient_zero(h, 0));
}

static void
test_breaker_sequence(void **state)
{
	struct breaker_state b;

	(void)state;
	memset(&b, 0, sizeof(b));
	/* off */
	assert_int_equal(breaker_story_ended(&b, 0, 0, true), BREAKER_NONE);
	/* after 3: two, a good one resets, then three trip the pause */
	assert_int_equal(breaker_story_ended(&b, 3, 0, true), BREAKER_NONE);
	assert_int_equal(breaker_story_ended(&b, 3, 1, true), BREAKER_NONE);
	assert_int_equal(breaker_story_ended(&b, 3, 2, false), BREAKER_NONE);
	assert_int_equal(b.ncounted, 0);
	assert_int_equal(breaker_story_ended(&b, 3, 3, true), BREAKER_NONE);
	assert_int_equal(breaker_story_ended(&b, 3, 4, true), BREAKER_NONE);
	assert_int_equal(breaker_story_ended(&b, 3, 5, true), BREAKER_PAUSE);
	assert_true(b.probing);
	/* the probe ends the same way: stop, with every counted story */
	assert_int_equal(breaker_story_ended(&b, 3, 6, true), BREAKER_STOP);
	assert_int_equal(b.ncounted, 4);
	assert_int_equal(b.counted[0], 3);
	assert_int_equal(b.counted[3], 6);
}

static void
test_breaker_probe_recovers(void **state)
{
	struct breaker_state b;

	(void)state;
	memset(&b, 0, sizeof(b));
	assert_int_equal(breaker_story_ended(&b, 1, 0, true), BREAKER_PAUSE);
	assert_int_equal(breaker_story_ended(&b, 1, 1, false), BREAKER_NONE);
	assert_false(b.probing);
	assert_int_equal(b.run, 0);
	assert_int_equal(breaker_story_ended(&b, 1, 2, true), BREAKER_PAUSE);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_order_table),
	    cmocka_unit_test(test_cycle_named),
	    cmocka_unit_test(test_state),
	    cmocka_unit_test(test_check_cycles),
	    cmocka_unit_test(test_deps_state),
	    cmocka_unit_test(test_transient_zero),
	    cmocka_unit_test(test_breaker_sequence),
	    cmocka_unit_test(test_breaker_probe_recovers),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
