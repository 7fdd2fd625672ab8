/*
 * check_int.h - what cmd_check.c (the checks) and check_print.c (their
 * output) share; not an interface.
 */
#ifndef STORYCTL_CHECK_INT_H
#define STORYCTL_CHECK_INT_H

#include <stdbool.h>
#include <stdio.h>

#include <jansson.h>

#include "common/err.h"
#include "controller/cli/cli.h"
#include "controller/config/config.h"
#include "controller/engine/sandbox.h"
#include "strategies/progress.h"

/* One configured story as check sees it. */
struct cstory {
	const struct story_conf *sc;
	struct progress pr; /* read with the config's tasks heading */
	bool read_ok;
	bool draft;
	bool skipped; /* left out of a new batch: story_skipped() */
	char *status_line; /* NULL when not known (or "" when none) */
	json_t *warnings, *errors; /* messages, for its JSON object */
};

struct check {
	struct config cfg;
	struct cstory *st;
	size_t n;
	json_t *errors, *warnings; /* every problem: {story?, file?, message} */
	json_t *agents;
	size_t nerrors;
	/* the sandbox (docs/sandbox.md): probed once, which roles are
	 * confined */
	struct sandbox_host host;
	bool confined[2];
	/* the exit status: the first error that stops run (the order run
	 * checks in: stories, agents, git), else the first error */
	int run_code, any_code;
	struct sc_err first; /* the first error, for the message on stderr */
};

/* The findings for people, to f; order: the stories in run order. */
void check_print_text(FILE *f, struct check *c, const size_t *order);

/* The findings as JSON (docs/json.md); order may be NULL when the
 * config did not load. */
int check_print_json(const struct cli *cli, struct check *c,
    const size_t *order, struct sc_err *err);

#endif
