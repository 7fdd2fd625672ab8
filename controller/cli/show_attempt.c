/*
 * show_attempt.c - `storyctl show STORY --attempt N [--json]`: one
 * attempt's transcript, normalized from its log by the read model
 * (controller/views/views_transcript.c, docs/agents.md#transcript,
 * docs/commands.md#show-attempt).  The log is streamed: each event is
 * printed as it comes, so a log of any size is shown in bounded memory,
 * --json too (an array written element by element).
 */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "controller/cli/cli.h"
#include "controller/cli/help.h"
#include "controller/cli/opts.h"
#include "controller/clock.h"
#include "controller/config/secrets.h"
#include "controller/views/views.h"
#include "controller/views/views_transcript.h"
#include "strategies/number.h"

/* What the command line asks: the story, --attempt N (0: absent),
 * --json. */
struct show_args {
	const char *id;
	int attempt;
	bool json;
};

static int
parse_args(struct show_args *a, bool *wanted, int argc, char **argv,
    struct sc_err *err)
{
	struct opts o;
	const char *val;
	int rc;

	memset(a, 0, sizeof(*a));
	*wanted = false;
	rc = opts_parse(&o, "show", help_show.options, argc, argv, err);
	if (rc < 0 || !opts_has(&o, "--attempt"))
		goto out;
	*wanted = true;
	val = opts_value(&o, "--attempt");
	rc = number_parse_int(
	    &a->attempt, val, "show: --attempt", 1, INT_MAX, err);
	if (rc < 0)
		goto out;
	a->json = opts_has(&o, "--json");
	if (o.nargs == 0)
		rc = err_set(err, SC_EUSAGE,
		    "show: which story? (storyctl show STORY --attempt N)");
	else if (o.nargs > 1)
		rc = err_set(err, SC_EUSAGE, "show: unexpected argument '%s'",
		    o.args[1]);
	else
		a->id = o.args[0];
out:
	opts_release(&o);
	return rc;
}

/* The printer's state: where, and whether an element was written. */
struct printer {
	FILE *out;
	bool first;
};

static int
print_text(const struct transcript_event *ev, void *arg)
{
	struct printer *p = arg;
	char line[TRANSCRIPT_TEXT_MAX + 256];

	views_transcript_text(line, sizeof(line), ev);
	fprintf(p->out, "  %s\n", line);
	return 0;
}

static int
print_json(const struct transcript_event *ev, void *arg)
{
	struct printer *p = arg;
	json_t *j = views_transcript_event_json(ev);
	char *s;

	if (j == NULL)
		return SC_EOS;
	s = json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER);
	json_decref(j);
	if (s == NULL)
		return SC_EOS;
	fprintf(p->out, "%s\n  %s", p->first ? "" : ",", s);
	p->first = false;
	free(s);
	return 0;
}

/* The attempt's line before its transcript, as show prints attempts. */
static void
print_head(FILE *out, const char *id, const struct attempt_row *a)
{
	char dur[32];

	clock_fmt_duration(dur, sizeof(dur),
	    a->ended_ms > a->started_ms ? a->ended_ms - a->started_ms : 0);
	fprintf(out, "%s attempt %d %s (%s): %s %d/%d tasks after %s\n", id,
	    a->attempt, role_name(a->role), a->agent,
	    a->outcome == OUTCOME_NONE ? "running" : outcome_name(a->outcome),
	    a->counts.tasks_completed, a->counts.tasks_total, dur);
	fprintf(out, "log: %s\n", a->log_path);
}

/* The transcript of a's log to cli->out, text or a JSON array. */
static int
print_transcript(struct cli *cli, const struct config *cfg, const char *id,
    const struct attempt_row *a, bool json, struct sc_err *err)
{
	struct redact_values *rv = NULL;
	struct printer p = {cli->out, true};
	int rc;

	rc = secrets_of_config(&rv, cfg, err);
	if (rc < 0)
		return rc;
	if (!json)
		print_head(cli->out, id, a);
	else
		fputs("[", cli->out);
	rc = views_transcript_each(
	    a->log_path, rv, json ? print_json : print_text, &p, err);
	if (rc == SC_EOS && err->msg[0] == '\0')
		rc = err_set(err, SC_EOS, "out of memory");
	if (json)
		fputs(p.first ? "]\n" : "\n]\n", cli->out);
	else if (rc == 0)
		fprintf(cli->out,
		    "what it changed: storyctl diff %s --attempt %d\n", id,
		    a->attempt);
	redact_values_free(rv);
	return rc;
}

int
show_attempt(
    bool *handled, struct cli *cli, int argc, char **argv, struct sc_err *err)
{
	struct show_args args;
	struct story_record sh;
	struct view v;
	const struct attempt_row *a;
	int rc;

	memset(&sh, 0, sizeof(sh));
	memset(&v, 0, sizeof(v));
	rc = parse_args(&args, handled, argc, argv, err);
	if (rc < 0 || !*handled)
		return rc;
	rc = view_open(&v, cli->config_path, cli->lender, false, err);
	if (rc < 0)
		goto out;
	rc = views_story_read(&sh, &v, args.id, err);
	if (rc < 0)
		goto out;
	if ((a = views_story_attempt(&sh, args.attempt)) == NULL) {
		rc = views_story_no_attempt(&sh, "show", args.attempt, err);
		goto out;
	}
	if (a->log_path[0] == '\0') {
		rc = err_set(err, SC_EDATA,
		    "show: attempt %d of %s has no log (its agent never "
		    "started)",
		    a->attempt, sh.st.id);
		goto out;
	}
	rc = print_transcript(cli, &v.cfg, sh.st.id, a, args.json, err);
out:
	views_story_release(&sh);
	view_close(&v);
	return rc;
}
