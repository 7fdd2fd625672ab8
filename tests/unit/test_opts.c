/* test_opts.c - a command line parsed by its help table
 * (controller/cli/opts.c), as a table of command lines. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "controller/cli/opts.h"

/* As help.c writes them: a flag, a value, two names for one option. */
static const struct help_item table[] = {
    {"-j N, --jobs N", "jobs", NULL},
    {"--json", "json", NULL},
    {"-f, --follow", "follow", NULL},
    {"--status S", "status", NULL},
    {NULL, NULL, NULL},
};

struct ocase {
	const char *line; /* words split on spaces, argv[0] "cmd" */
	int rc;
	const char *msg; /* a part of the message, for an error */
	const char *jobs, *status; /* NULL: not given */
	bool json, follow;
	const char *args; /* the arguments joined by '|' */
};

static const struct ocase cases[] = {
    {"", 0, NULL, NULL, NULL, false, false, ""},
    {"--json", 0, NULL, NULL, NULL, true, false, ""},
    {"-j 4", 0, NULL, "4", NULL, false, false, ""},
    {"--jobs 4", 0, NULL, "4", NULL, false, false, ""},
    {"--jobs=5", 0, NULL, "5", NULL, false, false, ""},
    {"-j6", 0, NULL, "6", NULL, false, false, ""},
    {"-j 1 -j 2", 0, NULL, "2", NULL, false, false, ""},
    {"-f a --status done b", 0, NULL, NULL, "done", false, true, "a|b"},
    {"a -- --json -j", 0, NULL, NULL, NULL, false, false, "a|--json|-j"},
    {"-", 0, NULL, NULL, NULL, false, false, "-"},
    {"--status", SC_EUSAGE, "option --status needs a value", NULL, NULL, false,
	false, NULL},
    {"-j", SC_EUSAGE, "option -j needs a value", NULL, NULL, false, false,
	NULL},
    {"--json=1", SC_EUSAGE, "option --json takes no value", NULL, NULL, false,
	false, NULL},
    {"--nope", SC_EUSAGE, "cmd: unknown option '--nope'", NULL, NULL, false,
	false, NULL},
    {"-fx", SC_EUSAGE, "cmd: unknown option '-fx'", NULL, NULL, false, false,
	NULL},
    {"--jsonx", SC_EUSAGE, "cmd: unknown option '--jsonx'", NULL, NULL, false,
	false, NULL},
    /* a prefix of a name is not the name */
    {"--jo 3", SC_EUSAGE, "cmd: unknown option '--jo'", NULL, NULL, false,
	false, NULL},
};

static void
check_case(const struct ocase *c)
{
	char buf[256], *argv[32], joined[256] = "";
	struct sc_err err = {0};
	struct opts o;
	int argc = 0, rc, i;

	snprintf(buf, sizeof(buf), "%s", c->line);
	argv[argc++] = "cmd";
	for (char *w = strtok(buf, " "); w != NULL; w = strtok(NULL, " "))
		argv[argc++] = w;
	argv[argc] = NULL;
	rc = opts_parse(&o, "cmd", table, argc, argv, &err);
	assert_int_equal(rc, c->rc);
	if (rc < 0) {
		assert_non_null(strstr(err.msg, c->msg));
		opts_release(&o);
		return;
	}
	if (c->jobs == NULL)
		assert_null(opts_value(&o, "--jobs"));
	else
		assert_string_equal(opts_value(&o, "-j"), c->jobs);
	if (c->status == NULL)
		assert_null(opts_value(&o, "--status"));
	else
		assert_string_equal(opts_value(&o, "--status"), c->status);
	assert_int_equal(opts_has(&o, "--json"), c->json);
	assert_int_equal(opts_has(&o, "-f"), c->follow);
	assert_int_equal(opts_has(&o, "--follow"), c->follow);
	for (i = 0; i < o.nargs; i++) {
		if (i > 0)
			strcat(joined, "|");
		strcat(joined, o.args[i]);
	}
	assert_string_equal(joined, c->args);
	opts_release(&o);
}

static void
test_table(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		print_message("case %zu: '%s'\n", i, cases[i].line);
		check_case(&cases[i]);
	}
}

/* "--" splits the arguments: job's agent argv is what follows it. */
static void
test_dashdash_counts(void **state)
{
	char *argv[] = {"job", "x", "--", "a", "-b", NULL};
	struct sc_err err = {0};
	struct opts o;

	(void)state;
	assert_int_equal(opts_parse(&o, "job", table, 5, argv, &err), 0);
	assert_true(o.dashdash);
	assert_int_equal(o.nargs, 3);
	assert_int_equal(o.nbefore, 1);
	opts_release(&o);
	opts_release(NULL);
}

static void
test_term_has(void **state)
{
	(void)state;
	assert_true(opts_term_has("-j N, --jobs N", "-j"));
	assert_true(opts_term_has("-j N, --jobs N", "--jobs"));
	assert_false(opts_term_has("-j N, --jobs N", "N"));
	assert_false(opts_term_has("-j N, --jobs N", "--job"));
	assert_true(opts_term_has("-f, --follow", "--follow"));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_table),
	    cmocka_unit_test(test_dashdash_counts),
	    cmocka_unit_test(test_term_has),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
