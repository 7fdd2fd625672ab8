/*
 * test_transcript.c - the transcript of an attempt (strategies/
 * transcript.h, controller/views/views_transcript.h): what the real
 * claude, codex and gemini CLIs printed (tests/fixtures/agents/real/,
 * INDEX.tsv) and the documented shapes of tests/fixtures/agentout/
 * render as the events asserted here (kinds in order, commands and
 * their exit status, file paths, retries, usage, the final message);
 * the reader that classifies an attempt yields the same events from the
 * same walk, with its verdict unchanged and the final message it
 * decided on; texts are bounded and redacted; a 300 MB log renders in
 * bounded memory.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cmocka.h>

#include "tests/unit/fixture_fs.h"

#include "controller/views/views_transcript.h"
#include "state/redact.h"
#include "strategies/reader.h"
#include "strategies/transcript.h"

/* ---- what a fixture renders to ---- */

struct tcase {
	const char *dir;
	const char *file;
	/* one letter per event, in order: m message, c tool_call,
	 * r tool_result, e error, u usage, f final */
	const char *kinds;
	const char *final; /* the final message starts so; NULL: none */
	long long in, out; /* the last usage; -2: no usage event */
	double cost; /* its cost; -1: none reported */
	const char *cmd; /* in the first command; NULL: none */
	int exit; /* the first exit status; -1: none */
	const char *path; /* the first path; NULL: none */
	int retries; /* errors that are retry notices */
	const char *err; /* in an error event; NULL: not checked */
};

#define R "agents/real"
#define A "agentout"
#define NOU (-2), (-2)
#define S1 "/home/dev/repo/docs/stories/s1.md"

static const struct tcase cases[] = {
    /* claude: success with a read and an edit; a command that fails */
    {R, "claude-success.txt", "crcrmuf", "All tasks of the story are done", 300,
	60, 0.003, NULL, -1, S1, 0, NULL},
    {R, "claude-shell.txt", "crcrcrmuf", "Ran the shell step", 400, 80, 0.004,
	"sh -c 'echo inside >ran-inside.txt", 2, S1, 0, NULL},
    {R, "claude-plain.txt", "muf", "I read the story", 100, 20, 0.001, NULL, -1,
	NULL, 0, NULL},
    /* claude: retried, then given up; the CLI's own words are errors */
    {R, "claude-ratelimit.txt", "eeuf", "API Error: Request rejected (429)", 0,
	0, 0, NULL, -1, NULL, 1, "rate_limit (status 429), next in 7000"},
    {R, "claude-overloaded.txt", "eeuf", "API Error: 529 Overloaded", 0, 0, 0,
	NULL, -1, NULL, 1, "overloaded (status 529)"},
    {R, "claude-server.txt", "eeuf", "API Error: 500 Internal", 0, 0, 0, NULL,
	-1, NULL, 1, "server_error (status 500)"},
    {R, "claude-auth.txt", "eeuf", "Invalid API key", 0, 0, 0, NULL, -1, NULL,
	1, "authentication_failed (status 401)"},
    {R, "claude-refused.txt", "eeuf", "API Error: Unable to connect", 0, 0, 0,
	NULL, -1, NULL, 1, "API retry 1 of 1: unknown, next in 505 ms"},
    /* claude: the usage limit (rate_limit_event rejected) */
    {R, "claude-limit.txt", "eeuf", "You've hit your session limit", 0, 0, 0,
	NULL, -1, NULL, 0,
	"rate limit rejected (five_hour), resets at "
	"1795487301"},
    {R, "claude-noreset.txt", "euf", "Credit balance is too low", 0, 0, 0, NULL,
	-1, NULL, 0, "Credit balance"},
    {R, "claude-model.txt", "euf", "There's an issue with the selected model",
	0, 0, 0, NULL, -1, NULL, 0, NULL},
    /* claude: a refusal; crashes (context, bad request) */
    {R, "claude-refusal.txt", "meeuf", "API Error: Claude Code is unable", 100,
	20, 0.001, NULL, -1, NULL, 0,
	"the model refused (model_refusal_no_fallback)"},
    {R, "claude-context.txt", "euf", "Prompt is too long", 0, 0, 0, NULL, -1,
	NULL, 0, NULL},
    {R, "claude-badrequest.txt", "euf", "API Error: 400", 0, 0, 0, NULL, -1,
	NULL, 0, NULL},
    /* claude: stalled after its init event: nothing to show */
    {R, "claude-hang.txt", "", NULL, NOU, -1, NULL, -1, NULL, 0, NULL},
    /* codex: commands with their exit status, tokens only */
    {R, "codex-success.txt", "mmecrmuf", "All tasks of the story are done", 200,
	40, -1, "sed -i", 0, NULL, 0, "Model metadata"},
    {R, "codex-shell.txt", "mecrcrmuf", "Ran the shell step", 300, 60, -1,
	"sh -c 'echo inside >ran-inside.txt", 2, NULL, 0, NULL},
    {R, "codex-plain.txt", "mmemuf", "I read the story", 100, 20, -1, NULL, -1,
	NULL, 0, NULL},
    /* codex: "Reconnecting..." retries, then the turn fails once */
    {R, "codex-ratelimit.txt", "mmeeef", "exceeded retry limit", NOU, -1, NULL,
	-1, NULL, 1, "429 Too Many Requests"},
    {R, "codex-overloaded.txt", "mmeeef", "unexpected status 503", NOU, -1,
	NULL, -1, NULL, 1, NULL},
    {R, "codex-server.txt", "mmeeef", "We’re currently experiencing", NOU, -1,
	NULL, -1, NULL, 1, NULL},
    {R, "codex-auth.txt", "mmeeef", "unexpected status 401", NOU, -1, NULL, -1,
	NULL, 1, "sk-stand***"},
    {R, "codex-limit.txt", "mmeef", "You’ve hit your usage limit", NOU, -1,
	NULL, -1, NULL, 0, "try again at 2:29 AM"},
    {R, "codex-later.txt", "meef", "You’ve hit your usage limit", NOU, -1, NULL,
	-1, NULL, 0, "try again later"},
    {R, "codex-minute.txt", "meef", "You’ve hit your usage limit", NOU, -1,
	NULL, -1, NULL, 0, NULL},
    {R, "codex-noreset.txt", "mmeef", "Quota exceeded", NOU, -1, NULL, -1, NULL,
	0, NULL},
    {R, "codex-model.txt", "mmeef", "The model `gpt-5-standin`", NOU, -1, NULL,
	-1, NULL, 0, NULL},
    {R, "codex-refusal.txt", "meef", "Invalid prompt", NOU, -1, NULL, -1, NULL,
	0, NULL},
    {R, "codex-context.txt", "meef", "Codex ran out of room", NOU, -1, NULL, -1,
	NULL, 0, NULL},
    {R, "codex-badrequest.txt", "meef", "{\"error\":{\"message\":\"Invalid",
	NOU, -1, NULL, -1, NULL, 0, NULL},
    /* codex: offline and stalled: no message, the last plain lines */
    {R, "codex-offline.txt", "meeef", "Reading additional input", NOU, -1, NULL,
	-1, NULL, 2, "waiting for network"},
    {R, "codex-refused.txt", "mmeeef", "WARNING: proceeding", NOU, -1, NULL, -1,
	NULL, 2, NULL},
    {R, "codex-hang.txt", "mmef", "WARNING: proceeding", NOU, -1, NULL, -1,
	NULL, 0, NULL},
    /* gemini: an edit and a command (gemini reports no exit status) */
    {R, "gemini-success.txt", "mmmcrmuf", "All tasks of the story are done",
	300, 60, -1, NULL, -1, S1, 0, NULL},
    {R, "gemini-shell.txt", "mmmmmcrcrmuf", "Ran the shell step", 400, 80, -1,
	"sh -c 'echo inside >ran-inside.txt", -1, S1, 0, NULL},
    {R, "gemini-plain.txt", "mmmmuf", "I read the story", 200, 40, -1, NULL, -1,
	NULL, 0, NULL},
    /* gemini: retry notices in plain text, their stack traces folded */
    {R, "gemini-ratelimit.txt", "mmmeeeef", "Warning: 256-color", NOU, -1, NULL,
	-1, NULL, 4, "Retrying after 14737ms"},
    {R, "gemini-longretry.txt", "mmmmmeef", "Warning: 256-color", NOU, -1, NULL,
	-1, NULL, 2, "Suggested retry after 60s"},
    {R, "gemini-overloaded.txt", "mmmeef", "Warning: 256-color", NOU, -1, NULL,
	-1, NULL, 2, "failed with status 503"},
    {R, "gemini-server.txt", "mmmeef", "Warning: 256-color", NOU, -1, NULL, -1,
	NULL, 2, "failed with status 500"},
    {R, "gemini-refused.txt", "mmmeef", "Warning: 256-color", NOU, -1, NULL, -1,
	NULL, 2, "fetch failed"},
    {R, "gemini-capacity.txt", "mmmmmef", "Warning: 256-color", NOU, -1, NULL,
	-1, NULL, 1, "reset after 1h44m7s"},
    /* gemini: usage limits and other failures: the error, its result */
    {R, "gemini-limit.txt", "mmmeeuef", "[API Error: Quota exceeded", 100, 20,
	-1, NULL, -1, NULL, 1, "TerminalQuotaError"},
    {R, "gemini-daily.txt", "mmmeuef", "[API Error: You have exhausted", 100,
	20, -1, NULL, -1, NULL, 0, "daily quota"},
    {R, "gemini-noreset.txt", "mmmeuef", "[API Error: Your prepayment", 100, 20,
	-1, NULL, -1, NULL, 0, NULL},
    {R, "gemini-auth.txt", "mmmeuef", "[API Error: {\"error\":{\"code\":401",
	100, 20, -1, NULL, -1, NULL, 0, "UNAUTHENTICATED"},
    {R, "gemini-model.txt", "mmmeuef", "[API Error: models/gemini-3.8-flash",
	100, 20, -1, NULL, -1, NULL, 0, "ModelNotFoundError"},
    {R, "gemini-refusal.txt", "mmmmmeuf", "Warning: 256-color", 300, 20, -1,
	NULL, -1, NULL, 0, "blocked due to safety settings"},
    {R, "gemini-context.txt", "mmmmmeuef",
	"[API Error: {\"error\":{\"code\":400", 100, 20, -1, NULL, -1, NULL, 0,
	"exceeds the maximum number"},
    {R, "gemini-badrequest.txt", "mmmmmeuef",
	"[API Error: {\"error\":{\"code\":400", 100, 20, -1, NULL, -1, NULL, 0,
	NULL},
    {R, "gemini-authtype.txt", "mf", "Invalid auth method selected.", NOU, -1,
	NULL, -1, NULL, 0, NULL},
    /* gemini: stalled */
    {R, "gemini-hang.txt", "mmmf", "Warning: 256-color", NOU, -1, NULL, -1,
	NULL, 0, NULL},
    {R, "gemini-timeout.txt", "mmmmmf", "Warning: 256-color", NOU, -1, NULL, -1,
	NULL, 0, NULL},
    /* the documented shapes: aider's edits and costs, claude's text
     * and tool blocks in one event, codex's file_change and reasoning,
     * gemini's pretty-printed json, chunks around a warning */
    {A, "aider.txt", "mmmmmmmmmmmmucmucf", "Aider v0.86.1", 12000, 1234, 0.31,
	NULL, -1, "src/parse.c", 0, NULL},
    {A, "claude-stream-json.txt", "mcrmuf", "Both tasks are done", 8320, 160,
	0.4213, NULL, -1, "/home/dev/repo/docs/stories/1-1.md", 0, NULL},
    {A, "codex-json.txt", "mcrmcrmuf", "Implemented the parser", 26549, 1590,
	-1, "bash -lc 'cat docs/stories/1-1.md'", 0, "src/parse.c", 0, NULL},
    {A, "gemini-json.txt", "mmuf", "Both tasks of story 1-1 are done.", 26439,
	1000, -1, NULL, -1, NULL, 0, NULL},
    {A, "gemini-stream-json.txt", "mmmcrmemuf",
	"Done: both boxes in 1-1 are checked.", 18210, 1132, -1, NULL, -1,
	"/home/dev/repo/docs/stories/1-1.md", 0, "Loop detection is slow"},
};

/* What a walk saw, in brief. */
struct seen {
	char kinds[128];
	size_t n;
	char final[TRANSCRIPT_TEXT_MAX];
	bool has_final;
	long long in, out;
	double cost;
	bool has_cost, has_usage;
	char cmd[TRANSCRIPT_TEXT_MAX];
	int exit;
	char path[TRANSCRIPT_PATH_MAX];
	int retries;
	bool err_found;
	const char *err;
	size_t last_t;
	bool t_order; /* "t" never went back, final aside */
};

static void
seen_init(struct seen *s, const char *err)
{
	memset(s, 0, sizeof(*s));
	s->exit = -1;
	s->err = err;
	s->t_order = true;
}

static void
seen_tool(struct seen *s, const struct transcript_event *ev)
{
	if (ev->kind == TRANSCRIPT_TOOL_CALL && s->cmd[0] == '\0')
		snprintf(s->cmd, sizeof(s->cmd), "%s", ev->command);
	if (ev->kind == TRANSCRIPT_TOOL_CALL && s->path[0] == '\0')
		snprintf(s->path, sizeof(s->path), "%s", ev->path);
	if (ev->kind == TRANSCRIPT_TOOL_RESULT && ev->has_exit && s->exit < 0)
		s->exit = ev->exit_status;
}

static int
on_seen(const struct transcript_event *ev, void *arg)
{
	struct seen *s = arg;

	if (s->n + 1 < sizeof(s->kinds))
		s->kinds[s->n++] = "mcreuf"[ev->kind];
	if (ev->kind != TRANSCRIPT_FINAL) {
		s->t_order = s->t_order && ev->t >= s->last_t;
		s->last_t = ev->t;
	}
	seen_tool(s, ev);
	if (ev->kind == TRANSCRIPT_USAGE) {
		s->has_usage = true;
		s->in = ev->tokens_in;
		s->out = ev->tokens_out;
		s->has_cost = ev->has_cost;
		s->cost = ev->cost_usd;
	}
	if (ev->kind == TRANSCRIPT_ERROR) {
		s->retries += ev->retry;
		if (s->err != NULL && strstr(ev->text, s->err) != NULL)
			s->err_found = true;
	}
	if (ev->kind == TRANSCRIPT_FINAL) {
		s->has_final = true;
		snprintf(s->final, sizeof(s->final), "%s", ev->text);
	}
	assert_true(strlen(ev->text) < TRANSCRIPT_TEXT_MAX);
	return 0;
}

static void
fixture_file(char *buf, size_t len, const char *dir, const char *name)
{
	const char *src = getenv("STORYCTL_SRC");

	if (src == NULL || src[0] == '\0')
		src = ".";
	snprintf(buf, len, "%s/tests/fixtures/%s/%s", src, dir, name);
}

static void
check_case(const struct tcase *c, const struct seen *s)
{
	bool ok = strcmp(s->kinds, c->kinds) == 0 &&
	    (c->final == NULL
		    ? !s->has_final
		    : strncmp(s->final, c->final, strlen(c->final)) == 0) &&
	    (c->in == -2 ? !s->has_usage
			 : s->in == c->in && s->out == c->out) &&
	    (c->cost < 0 ? !s->has_cost
			 : s->has_cost && s->cost > c->cost - 1e-9 &&
			s->cost < c->cost + 1e-9) &&
	    (c->cmd == NULL ? s->cmd[0] == '\0'
			    : strstr(s->cmd, c->cmd) != NULL) &&
	    s->exit == c->exit &&
	    strcmp(s->path, c->path != NULL ? c->path : "") == 0 &&
	    s->retries == c->retries && (c->err == NULL || s->err_found) &&
	    s->t_order;

	if (!ok)
		fail_msg("%s: kinds \"%s\" final \"%.60s\" usage %lld/%lld "
			 "cost %d %.4f cmd \"%.40s\" exit %d path \"%s\" "
			 "retries %d err %d order %d",
		    c->file, s->kinds, s->final, s->in, s->out, s->has_cost,
		    s->cost, s->cmd, s->exit, s->path, s->retries, s->err_found,
		    s->t_order);
}

/* Each fixture, streamed from its file as `show --attempt` reads it. */
static void
test_fixtures(void **state)
{
	char path[4096];
	struct sc_err err;
	struct seen s;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		fixture_file(path, sizeof(path), cases[i].dir, cases[i].file);
		seen_init(&s, cases[i].err);
		assert_int_equal(
		    views_transcript_each(path, NULL, on_seen, &s, &err), 0);
		check_case(&cases[i], &s);
	}
}

/*
 * The reader that classifies an attempt is the one that normalizes it:
 * fed from its walk (its parse), the transcript is the file's; the
 * verdict and agent_output are what adapter_read() gives; the final
 * message shown is the one decided on (result_text).
 */
static void
test_one_walk(void **state)
{
	struct agent_report plain, with;
	struct classify_input in;
	struct transcript *tr;
	struct seen s;
	size_t i, len;
	char *buf;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		buf = fxfs_fixture_read(cases[i].dir, cases[i].file, &len);
		memset(&in, 0, sizeof(in));
		in.tail = buf;
		in.tail_len = len;
		in.exit_code = 1;
		memset(&plain, 0, sizeof(plain));
		memset(&with, 0, sizeof(with));
		adapter_read(&plain, &in);
		seen_init(&s, cases[i].err);
		tr = transcript_new(on_seen, &s);
		assert_non_null(tr);
		assert_int_equal(adapter_read_transcript(&with, &in, tr), 0);
		transcript_free(tr);
		assert_memory_equal(&plain, &with, sizeof(plain));
		check_case(&cases[i], &s);
		if (s.has_final || plain.output.result_text[0] != '\0')
			assert_string_equal(s.final, plain.output.result_text);
		free(buf);
	}
}

/* ---- bounds ---- */

/* A temporary directory for one test's files. */
static void
temp_dir(char *dir, size_t len)
{
	const char *tmp = getenv("TMPDIR");

	snprintf(dir, len, "%s/sc-transcript-XXXXXX",
	    tmp != NULL && tmp[0] != '\0' ? tmp : "/tmp");
	assert_non_null(mkdtemp(dir));
}

/* dir/name: n bytes of c, then the text tail (written in chunks). */
static void
write_long_line(const char *path, size_t n, char c, const char *tail)
{
	static char chunk[1 << 16];
	FILE *f = fopen(path, "w");
	size_t k;

	assert_non_null(f);
	memset(chunk, c, sizeof(chunk));
	for (; n > 0; n -= k) {
		k = n < sizeof(chunk) ? n : sizeof(chunk);
		assert_int_equal(fwrite(chunk, 1, k, f), k);
	}
	assert_int_equal(fputs(tail, f) >= 0, 1);
	assert_int_equal(fclose(f), 0);
}

struct kept {
	int n;
	struct transcript_event ev[8];
};

static int
on_keep(const struct transcript_event *ev, void *arg)
{
	struct kept *k = arg;

	if (k->n < 8)
		k->ev[k->n] = *ev;
	k->n++;
	return 0;
}

static bool
ends_cut(const char *s)
{
	size_t n = strlen(s), m = strlen(TRANSCRIPT_CUT);

	return n >= m && strcmp(s + n - m, TRANSCRIPT_CUT) == 0;
}

/* A 50 MB line costs no more than a short one: cut in the file reader,
 * shown as its beginning, and the next line is read as ever. */
static void
test_long_line(void **state)
{
	static const char next[] =
	    "\n{\"type\":\"item.completed\",\"item\":{\"id\":\"i\","
	    "\"type\":\"agent_message\",\"text\":\"after\"}}\n";
	char dir[4096], path[4200];
	struct sc_err err;
	struct kept k;

	(void)state;
	temp_dir(dir, sizeof(dir));
	snprintf(path, sizeof(path), "%s/a.log", dir);
	write_long_line(path, (size_t)50 << 20, 'x', next);
	memset(&k, 0, sizeof(k));
	assert_int_equal(
	    views_transcript_each(path, NULL, on_keep, &k, &err), 0);
	unlink(path); /* first: a failed check leaves no 50 MB behind */
	rmdir(dir);
	assert_int_equal(k.n, 3);
	assert_int_equal(k.ev[0].kind, TRANSCRIPT_MESSAGE);
	assert_true(k.ev[0].cut && ends_cut(k.ev[0].text));
	assert_int_equal(strncmp(k.ev[0].text, "xxxxxxxx", 8), 0);
	assert_int_equal(k.ev[1].kind, TRANSCRIPT_MESSAGE);
	assert_string_equal(k.ev[1].text, "after");
	assert_int_equal(k.ev[1].t, 1);
	assert_int_equal(k.ev[2].kind, TRANSCRIPT_FINAL);
	assert_string_equal(k.ev[2].text, "after");
}

/* A JSON line over TRANSCRIPT_LINE_MAX is not parsed; a long text in a
 * line that is, is cut with the marker. */
static void
test_long_fields(void **state)
{
	static const char head[] =
	    "{\"type\":\"assistant\",\"message\":{\"content\":"
	    "[{\"type\":\"text\",\"text\":\"";
	size_t big = TRANSCRIPT_LINE_MAX + 10, mid = 900 * 1024, n;
	char *line = malloc(big + sizeof(head) + 16);
	struct transcript_line l;
	struct transcript *tr;
	struct kept k;

	(void)state;
	assert_non_null(line);
	memcpy(line, head, sizeof(head) - 1);
	memset(line + sizeof(head) - 1, 'y', big);
	for (n = 0; n < 2; n++) {
		size_t body = n == 0 ? mid : big;
		size_t len = sizeof(head) - 1 + body;

		memcpy(line + len, "\"}]}}", 6);
		memset(&k, 0, sizeof(k));
		tr = transcript_new(on_keep, &k);
		memset(&l, 0, sizeof(l));
		l.s = line;
		l.n = len + 5;
		assert_int_equal(transcript_push(tr, &l), 0);
		assert_int_equal(transcript_end(tr), 0);
		transcript_free(tr);
		assert_int_equal(k.ev[0].kind, TRANSCRIPT_MESSAGE);
		assert_true(k.ev[0].cut && ends_cut(k.ev[0].text));
		assert_true(strlen(k.ev[0].text) < TRANSCRIPT_TEXT_MAX);
		/* parsed: the text; too big: the line's beginning */
		assert_string_equal(
		    k.ev[0].role, n == 0 ? "assistant" : "text");
		assert_int_equal(k.ev[0].text[0], n == 0 ? 'y' : '{');
		memset(line + len, 'y', 6);
	}
	free(line);
}

/* Push the NUL-terminated lines of text, one by one, as a file reader
 * does (no value parsed for them). */
static void
push_text(struct kept *k, const char *text)
{
	struct transcript *tr = transcript_new(on_keep, k);
	struct transcript_line l;
	const char *p = text, *nl;
	size_t i = 0;

	assert_non_null(tr);
	memset(k, 0, sizeof(*k));
	while (*p != '\0') {
		nl = strchr(p, '\n');
		memset(&l, 0, sizeof(l));
		l.s = p;
		l.n = nl != NULL ? (size_t)(nl - p) : strlen(p);
		l.index = i++;
		assert_int_equal(transcript_push(tr, &l), 0);
		p += l.n + (nl != NULL);
	}
	assert_int_equal(transcript_end(tr), 0);
	transcript_free(tr);
}

/* A line "{" opens a pretty-printed object only when a key follows
 * (C code does not); one over TRANSCRIPT_LINE_MAX is one message, and
 * the lines after it are read as ever. */
static void
test_pretty(void **state)
{
	size_t big = TRANSCRIPT_LINE_MAX + 100;
	char *text = malloc(big + 256);
	struct kept k;

	(void)state;
	push_text(&k, "int main(void)\n{\n\treturn 0;\n}\n");
	assert_int_equal(k.n, 5); /* four lines, the final */
	assert_string_equal(k.ev[1].text, "{");
	assert_string_equal(k.ev[2].text, "return 0;");
	push_text(
	    &k, "{\n  \"response\": \"done\",\n  \"stats\": {}\n}\nbye\n");
	assert_int_equal(k.n, 2); /* bye, the final */
	assert_string_equal(k.ev[0].text, "bye");
	assert_string_equal(k.ev[1].text, "done");
	assert_int_equal(k.ev[1].t, 0);
	assert_non_null(text);
	strcpy(text, "{\n  \"response\": \"");
	memset(text + 17, 'z', big);
	strcpy(text + 17 + big, "\"\n}\nafter\n");
	push_text(&k, text);
	assert_int_equal(k.ev[0].kind, TRANSCRIPT_MESSAGE);
	assert_true(k.ev[0].cut);
	assert_non_null(strstr(k.ev[0].text, "not shown"));
	assert_string_equal(k.ev[k.n - 2].text, "after");
	free(text);
}

/* ---- redaction, JSON, text, stopping ---- */

static void
test_redaction(void **state)
{
	static const char log[] =
	    "{\"type\":\"assistant\",\"message\":{\"content\":[{\"type\":"
	    "\"tool_use\",\"id\":\"t1\",\"name\":\"Bash\",\"input\":{"
	    "\"command\":\"OPENAI_API_KEY=sk-proj-abcdefghijklmnop0123456789 "
	    "make\"}}]}}\n"
	    "{\"type\":\"user\",\"message\":{\"content\":[{\"type\":"
	    "\"tool_result\",\"tool_use_id\":\"t1\",\"content\":"
	    "\"connected with hunter2hunter2 ok\"}]}}\n";
	struct redact_values *rv = redact_values_new();
	char dir[4096], path[4200];
	struct sc_err err;
	struct kept k;

	(void)state;
	assert_non_null(rv);
	assert_int_equal(
	    redact_values_add(rv, "DB_PASSWORD", "hunter2hunter2", &err), 0);
	temp_dir(dir, sizeof(dir));
	fxfs_write_file(dir, "a.log", log);
	snprintf(path, sizeof(path), "%s/a.log", dir);
	memset(&k, 0, sizeof(k));
	assert_int_equal(views_transcript_each(path, rv, on_keep, &k, &err), 0);
	assert_int_equal(k.n, 2); /* a call, its result; no final */
	assert_null(strstr(k.ev[0].command, "sk-proj-"));
	assert_non_null(strstr(k.ev[0].command, REDACT_MARK));
	assert_null(strstr(k.ev[1].text, "hunter2"));
	assert_non_null(strstr(k.ev[1].text, "[REDACTED DB_PASSWORD]"));
	assert_int_equal(k.ev[1].has_exit && k.ev[1].exit_status == 0, 1);
	redact_values_free(rv);
	unlink(path);
	rmdir(dir);
}

static json_t *
at(json_t *a, size_t i, const char *key)
{
	return json_object_get(json_array_get(a, i), key);
}

/* show --attempt --json: {"t", "kind", ...} with the fields each has */
static void
test_json(void **state)
{
	char path[4096];
	struct sc_err err;
	json_t *a;

	(void)state;
	fixture_file(path, sizeof(path), R, "claude-shell.txt");
	assert_int_equal(views_transcript_json(&a, path, NULL, &err), 0);
	assert_int_equal(json_array_size(a), 9);
	assert_string_equal(json_string_value(at(a, 0, "kind")), "tool_call");
	assert_int_equal(json_integer_value(at(a, 0, "t")), 1);
	assert_string_equal(json_string_value(at(a, 0, "tool")), "Bash");
	assert_non_null(
	    strstr(json_string_value(at(a, 0, "command")), "echo inside"));
	assert_int_equal(json_integer_value(at(a, 1, "exit")), 2);
	assert_true(json_is_true(at(a, 1, "is_error")));
	assert_string_equal(
	    json_string_value(at(a, 1, "ts")), "2026-11-28T11:30:49.851Z");
	assert_string_equal(json_string_value(at(a, 4, "path")), S1);
	assert_string_equal(json_string_value(at(a, 7, "kind")), "usage");
	assert_int_equal(json_integer_value(at(a, 7, "tokens_in")), 400);
	assert_true(json_real_value(at(a, 7, "cost_usd")) > 0.0039);
	assert_string_equal(json_string_value(at(a, 8, "kind")), "final");
	assert_null(at(a, 8, "exit"));
	json_decref(a);
	fixture_file(path, sizeof(path), R, "gemini-success.txt");
	assert_int_equal(views_transcript_json(&a, path, NULL, &err), 0);
	assert_string_equal(
	    json_string_value(at(a, 3, "ts")), "2026-11-24T00:29:12.308Z");
	assert_string_equal(json_string_value(at(a, 3, "tool")), "replace");
	assert_string_equal(json_string_value(at(a, 4, "status")), "success");
	json_decref(a);
	assert_int_equal(
	    views_transcript_json(&a, "/nonexistent/x.log", NULL, &err),
	    SC_EIO);
	assert_null(a);
}

static int
on_text(const struct transcript_event *ev, void *arg)
{
	char buf[256];

	if (ev->kind == TRANSCRIPT_TOOL_RESULT && ((int *)arg)[0]++ == 0) {
		views_transcript_text(buf, sizeof(buf), ev);
		assert_int_equal(strncmp(buf,
				     "[5] command_execution exit 2: sh: 1: "
				     "cannot create /etc/storyctl-shell-escape"
				     ": Read-only file system\n  sh: 1:",
				     95),
		    0);
	}
	return 0;
}

static int
on_stop(const struct transcript_event *ev, void *arg)
{
	(void)ev;
	return ++*(int *)arg == 2 ? -5 : 0;
}

static void
test_text_and_stop(void **state)
{
	char path[4096];
	struct sc_err err;
	int n = 0;

	(void)state;
	fixture_file(path, sizeof(path), R, "codex-shell.txt");
	assert_int_equal(
	    views_transcript_each(path, NULL, on_text, &n, &err), 0);
	assert_int_equal(n, 2);
	n = 0;
	assert_int_equal(
	    views_transcript_each(path, NULL, on_stop, &n, &err), -5);
	assert_int_equal(n, 2);
}

/* ---- a 300 MB log ---- */

/* AddressSanitizer keeps freed memory a while (its quarantine) and
 * valgrind runs the suite in its own process: the peak then says
 * nothing of the transcript's memory. */
#if defined(__SANITIZE_ADDRESS__)
#define RSS_MEANINGFUL 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define RSS_MEANINGFUL 0
#endif
#endif
#ifndef RSS_MEANINGFUL
#define RSS_MEANINGFUL 1
#endif

struct counted {
	size_t events, calls, results;
};

static int
on_count(const struct transcript_event *ev, void *arg)
{
	struct counted *c = arg;

	c->events++;
	c->calls += ev->kind == TRANSCRIPT_TOOL_CALL;
	c->results += ev->kind == TRANSCRIPT_TOOL_RESULT;
	return 0;
}

static long
maxrss_kb(void)
{
	struct rusage ru;

	assert_int_equal(getrusage(RUSAGE_SELF, &ru), 0);
	return ru.ru_maxrss;
}

/* One turn of a claude run, about 3 KB: a command, its result (the
 * output in tool_use_result, as claude prints it beside the short
 * content), a line of text. */
static size_t
turn(char *buf, size_t cap, size_t i)
{
	static char pad[3000];
	int n;

	if (pad[0] == '\0')
		memset(pad, 'o', sizeof(pad) - 1);
	n = snprintf(buf, cap,
	    "{\"type\":\"assistant\",\"message\":{\"content\":[{\"type\":"
	    "\"tool_use\",\"id\":\"t%zu\",\"name\":\"Bash\",\"input\":"
	    "{\"command\":\"make test %zu\"}}]}}\n"
	    "{\"type\":\"user\",\"message\":{\"content\":[{\"type\":"
	    "\"tool_result\",\"tool_use_id\":\"t%zu\",\"content\":\"ok\"}]},"
	    "\"tool_use_result\":{\"stdout\":\"%s\"}}\n"
	    "progress line %zu of a build\n",
	    i, i, i, pad, i);
	return (size_t)n;
}

/* A log of 300 MB (32 MB in the quick tier) renders event by event in
 * bounded memory: the peak grows by far less than the log. */
static void
test_big_log(void **state)
{
	const char *tier = getenv("STORYCTL_TIER");
	size_t want = tier != NULL && strcmp(tier, "quick") == 0
	    ? (size_t)32 << 20
	    : (size_t)300 << 20;
	size_t size = 0, turns = 0;
	char dir[4096], path[4200], buf[8192];
	struct counted c = {0, 0, 0};
	struct sc_err err;
	long before;
	FILE *f;

	(void)state;
	temp_dir(dir, sizeof(dir));
	snprintf(path, sizeof(path), "%s/big.log", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	while (size < want) {
		size_t n = turn(buf, sizeof(buf), turns++);

		assert_int_equal(fwrite(buf, 1, n, f), n);
		size += n;
	}
	assert_int_equal(fclose(f), 0);
	before = maxrss_kb();
	assert_int_equal(
	    views_transcript_each(path, NULL, on_count, &c, &err), 0);
	unlink(path); /* first: a failed check leaves no 300 MB behind */
	rmdir(dir);
	/* a call, its result and a text line each turn, then the final */
	assert_int_equal(c.events, 3 * turns + 1);
	assert_int_equal(c.calls, turns);
	assert_int_equal(c.results, turns);
	if (RSS_MEANINGFUL && getenv("VALGRIND") == NULL)
		assert_true(maxrss_kb() - before < 64 * 1024);
}

/* The first event seen and how many (views_transcript_each_tail()). */
struct first_seen {
	size_t n, t;
	char text[64];
};

static int
on_first(const struct transcript_event *ev, void *arg)
{
	struct first_seen *f = arg;

	if (f->n++ == 0) {
		f->t = ev->t;
		snprintf(f->text, sizeof(f->text), "%s", ev->text);
	}
	return 0;
}

/* Only the log's last bytes are read, and "t" stays the log's line:
 * the first line read is whole, the one cut by the tail's start is
 * skipped (docs/api.md#attempts). */
static void
test_tail(void **state)
{
	char dir[4096], path[4200], want[64];
	struct first_seen f = {0, 0, ""};
	struct sc_err err;
	size_t first = 0, i;
	FILE *fp;

	(void)state;
	temp_dir(dir, sizeof(dir));
	snprintf(path, sizeof(path), "%s/tail.log", dir);
	fp = fopen(path, "w");
	assert_non_null(fp);
	for (i = 0; i < 20000; i++)
		fprintf(fp, "working on line %06zu\n", i); /* 23 bytes */
	assert_int_equal(fclose(fp), 0);
	assert_int_equal(views_transcript_each_tail(path, NULL, 23 * 100 + 5,
			     &first, on_first, &f, &err),
	    0);
	/* the tail starts 5 bytes into line 19899: it is skipped */
	assert_int_equal(first, 19900);
	assert_int_equal(f.t, 19900);
	snprintf(want, sizeof(want), "working on line %06d", 19900);
	assert_string_equal(f.text, want);
	/* 100 lines, then the final message */
	assert_int_equal(f.n, 100 + 1);
	/* a tail bigger than the log reads it all */
	memset(&f, 0, sizeof(f));
	assert_int_equal(views_transcript_each_tail(path, NULL, (size_t)1 << 30,
			     &first, on_first, &f, &err),
	    0);
	assert_int_equal(first, 0);
	assert_int_equal(f.n, 20000 + 1);
	unlink(path);
	rmdir(dir);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    /* first: the peak it measures is its own */
	    cmocka_unit_test(test_big_log),
	    cmocka_unit_test(test_fixtures),
	    cmocka_unit_test(test_one_walk),
	    cmocka_unit_test(test_long_line),
	    cmocka_unit_test(test_long_fields),
	    cmocka_unit_test(test_pretty),
	    cmocka_unit_test(test_redaction),
	    cmocka_unit_test(test_json),
	    cmocka_unit_test(test_text_and_stop),
	    cmocka_unit_test(test_tail),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
