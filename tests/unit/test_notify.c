/*
 * test_notify.c - notifications (docs/notifications.md): the pure parts
 * (strategies/notifyev.c: names, the event JSON, the command to act, the
 * retry rules), the redaction of what a receiver gets (batch_notify.c),
 * the validation of "notify" (config_notify.c), and the real notifier
 * (notifier.c): a command gets the JSON on its stdin, a failing one is
 * reported after its tries, one that cannot run after one, a full queue
 * refuses, and stopping cuts a webhook that never answers short.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <arpa/inet.h>
#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "controller/engine/batch_notify.h"
#include "controller/config/config.h"
#include "controller/engine/notifier.h"
#include "common/model.h"
#include "strategies/notifyev.h"

/* ------------------------------------------------------------------ */
/* the pure parts */

static void
test_event_names(void **state)
{
	enum notify_event e;
	char names[200];
	int i;

	(void)state;
	for (i = 0; i < NOTIFY__COUNT; i++) {
		assert_int_equal(notify_event_parse(&e,
				     notify_event_name((enum notify_event)i)),
		    0);
		assert_int_equal(e, i);
	}
	assert_int_equal(notify_event_parse(&e, "batch_ned"), -1);
	assert_int_equal(notify_event_parse(&e, ""), -1);
	assert_string_equal(notify_event_name(NOTIFY__COUNT), "?");
	notify_event_names(names, sizeof(names));
	assert_string_equal(names,
	    "batch_end, escalated, deferred, stopped, "
	    "breaker_open, usage_limit");
	assert_true(notify_mask_has(1u << NOTIFY_STOPPED, NOTIFY_STOPPED));
	assert_false(notify_mask_has(1u << NOTIFY_STOPPED, NOTIFY_BATCH_END));
}

/* Which keys each event's JSON has, in order. */
struct jcase {
	enum notify_event e;
	const char *keys;
};

static const struct jcase jcases[] = {
    {NOTIFY_BATCH_END,
	"format_version event batch_id story_id time time_ms "
	"reason command root batch_status counts"},
    {NOTIFY_ESCALATED,
	"format_version event batch_id story_id time time_ms "
	"reason error command root"},
    {NOTIFY_DEFERRED,
	"format_version event batch_id story_id time time_ms "
	"reason error command root"},
    {NOTIFY_STOPPED,
	"format_version event batch_id story_id time time_ms "
	"reason command root"},
    {NOTIFY_BREAKER_OPEN,
	"format_version event batch_id story_id time "
	"time_ms reason command root"},
    {NOTIFY_USAGE_LIMIT,
	"format_version event batch_id story_id time "
	"time_ms reason command root agent"},
};

static json_t *
msg_load(const struct notify_msg *m)
{
	char *text = notify_msg_json(m);
	json_error_t jerr;
	json_t *j;

	assert_non_null(text);
	/* one line: a receiver may read lines */
	assert_null(strchr(text, '\n'));
	j = json_loads(text, JSON_REJECT_DUPLICATES, &jerr);
	free(text);
	if (j == NULL)
		fail_msg("not JSON: %s", jerr.text);
	return j;
}

static void
test_event_json_keys(void **state)
{
	static const int counts[STATUS__COUNT] = {1, 0, 3, 1, 2, 0, 0};
	struct notify_msg m = {0};
	char keys[300];
	const char *k;
	json_t *j, *v;
	size_t i;

	(void)state;
	m.batch_id = 7;
	m.story_id = "1-2";
	m.time_ms = 1700000000000LL;
	m.time = "2023-11-14T22:13:20Z";
	m.reason = "why";
	m.error = "Invalid API key";
	m.command = "storyctl requeue 1-2";
	m.root = "/p";
	m.agent = "claude";
	m.batch_status = "stopped";
	m.counts = counts;
	for (i = 0; i < sizeof(jcases) / sizeof(jcases[0]); i++) {
		m.event = jcases[i].e;
		j = msg_load(&m);
		keys[0] = '\0';
		json_object_foreach(j, k, v)
		{
			snprintf(keys + strlen(keys),
			    sizeof(keys) - strlen(keys), "%s%s",
			    keys[0] != '\0' ? " " : "", k);
		}
		assert_string_equal(keys, jcases[i].keys);
		assert_int_equal(
		    json_integer_value(json_object_get(j, "format_version")),
		    NOTIFY_FORMAT_VERSION);
		assert_string_equal(
		    json_string_value(json_object_get(j, "event")),
		    notify_event_name(jcases[i].e));
		assert_int_equal(
		    json_integer_value(json_object_get(j, "batch_id")), 7);
		json_decref(j);
	}
	m.event = NOTIFY_BATCH_END;
	j = msg_load(&m);
	v = json_object_get(j, "counts");
	assert_int_equal(json_object_size(v), STATUS__COUNT);
	assert_int_equal(json_integer_value(json_object_get(v, "done")), 3);
	assert_int_equal(
	    json_integer_value(json_object_get(v, "escalated")), 2);
	assert_int_equal(json_integer_value(json_object_get(v, "pending")), 1);
	assert_string_equal(
	    json_string_value(json_object_get(j, "batch_status")), "stopped");
	json_decref(j);
}

/* Absent strings are null, never missing or "(null)". */
static void
test_event_json_nulls(void **state)
{
	struct notify_msg m = {0};
	json_t *j;

	(void)state;
	m.event = NOTIFY_ESCALATED;
	j = msg_load(&m);
	assert_true(json_is_null(json_object_get(j, "story_id")));
	assert_true(json_is_null(json_object_get(j, "error")));
	assert_true(json_is_null(json_object_get(j, "command")));
	assert_string_equal(
	    json_string_value(json_object_get(j, "reason")), "");
	json_decref(j);
	m.event = NOTIFY_BATCH_END;
	j = msg_load(&m);
	assert_true(json_is_null(json_object_get(j, "counts")));
	json_decref(j);
}

static void
test_act_command(void **state)
{
	static const struct {
		enum notify_event e;
		const char *story, *want;
	} cases[] = {
	    {NOTIFY_ESCALATED, "1-2", "storyctl requeue 1-2"},
	    {NOTIFY_DEFERRED, "a.b", "storyctl requeue a.b"},
	    {NOTIFY_ESCALATED, NULL, ""},
	    {NOTIFY_STOPPED, NULL, "storyctl resume"},
	    {NOTIFY_BREAKER_OPEN, NULL, "storyctl log"},
	    {NOTIFY_BATCH_END, NULL, "storyctl status"},
	    {NOTIFY_USAGE_LIMIT, "1-2", ""},
	};
	char buf[64];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		notify_act_command(
		    buf, sizeof(buf), cases[i].e, cases[i].story);
		assert_string_equal(buf, cases[i].want);
	}
}

static void
test_retry_rules(void **state)
{
	static const struct {
		long status;
		bool retry;
	} cases[] = {{500, true}, {502, true}, {503, true}, {599, true},
	    {429, true}, {408, true}, {425, true}, {400, false}, {401, false},
	    {403, false}, {404, false}, {301, false}, {600, false}, {0, false}};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		if (notify_http_retryable(cases[i].status) != cases[i].retry)
			fail_msg("HTTP %ld", cases[i].status);
	assert_int_equal(notify_retry_delay_ms(1), 0);
	assert_int_equal(notify_retry_delay_ms(2), 1000);
	assert_int_equal(notify_retry_delay_ms(3), 2000);
}

/* What a receiver gets passes the record's redaction, and is UTF-8. */
static void
test_json_redacted(void **state)
{
	struct notify_msg m = {0};
	char *text;
	json_t *j;

	(void)state;
	m.event = NOTIFY_ESCALATED;
	m.story_id = "s1";
	m.reason = "D2: key sk-ant-api03-Zq8xWv4Lr7Tn2Kp9Hs6Dm3Fb1Gc5Jy0Ae "
		   "refused";
	m.error = "login failed password=hunter2hunter2 \xff";
	m.root = "/home/u/ghp_abcdefghijklmnopqrstuvwxyz0123456789/p";
	m.command = "storyctl requeue s1";
	text = notify_json_redacted(&m, NULL);
	assert_non_null(text);
	assert_null(strstr(text, "Zq8xWv4Lr7Tn2Kp9"));
	assert_null(strstr(text, "hunter2hunter2"));
	assert_null(strstr(text, "abcdefghijklmnopqrstuvwxyz0123456789"));
	j = json_loads(text, 0, NULL);
	free(text);
	assert_non_null(j);
	assert_string_equal(json_string_value(json_object_get(j, "reason")),
	    "D2: key [REDACTED] refused");
	assert_non_null(strstr(
	    json_string_value(json_object_get(j, "error")), "[REDACTED]"));
	assert_string_equal(json_string_value(json_object_get(j, "command")),
	    "storyctl requeue s1");
	json_decref(j);
}

/* ------------------------------------------------------------------ */
/* a temp dir for configs and command output */

static char tmpdir[PATH_MAX];

static int
rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static int
setup_dir(void **state)
{
	const char *tmp = getenv("TMPDIR");

	(void)state;
	snprintf(tmpdir, sizeof(tmpdir), "%s/notifytest-XXXXXX",
	    tmp != NULL && *tmp != '\0' ? tmp : "/tmp");
	assert_non_null(mkdtemp(tmpdir));
	return 0;
}

static int
teardown_dir(void **state)
{
	(void)state;
	nftw(tmpdir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	return 0;
}

static void
file_put(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	assert_true(fputs(text, f) >= 0);
	assert_int_equal(fclose(f), 0);
}

/* The text of path ("" when absent), malloc'd. */
static char *
file_get(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf = calloc(1, 65536);
	size_t n;

	assert_non_null(buf);
	if (f == NULL)
		return buf;
	n = fread(buf, 1, 65535, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

/* ------------------------------------------------------------------ */
/* config validation */

struct ccase {
	const char *notify; /* the value of "notify" */
	const char *err; /* a part of the message, or NULL: it loads */
};

static const struct ccase ccases[] = {
    {"[]", NULL},
    {"[{\"on\": [\"batch_end\", \"escalated\"], \"webhook\": "
     "\"http://127.0.0.1:8080/hook?token=x\"}]",
	NULL},
    {"[{\"on\": [\"stopped\"], \"webhook\": \"https://hooks.example.org/"
     "services/T0/B0/X\"}, {\"on\": [\"deferred\"], \"command\": "
     "[\"notify-send\", \"storyctl\"]}]",
	NULL},
    {"{}", "notify: expected an array of"},
    {"[1]", "notify[0]: expected an object, got a number"},
    {"[{\"on\": [\"stopped\"]}]",
	"notify[0]: needs \"webhook\" (a URL) or \"command\""},
    {"[{\"on\": [\"stopped\"], \"webhook\": \"http://h/\", \"command\": "
     "[\"x\"]}]",
	"notify[0]: has both \"webhook\" and \"command\""},
    {"[{\"webhook\": \"http://h/\"}]",
	"notify[0].on: missing: the list of "
	"events it is for (batch_end, "},
    {"[{\"on\": [], \"webhook\": \"http://h/\"}]",
	"notify[0].on: must not be empty"},
    {"[{\"on\": \"stopped\", \"webhook\": \"http://h/\"}]",
	"notify[0].on: expected an array of event names, got a string"},
    {"[{\"on\": [\"stopped\", \"batch_ned\"], \"webhook\": \"http://h/\"}]",
	"notify[0].on[1]: unknown event batch_ned (did you mean "
	"batch_end?)"},
    {"[{\"on\": [\"everything\"], \"webhook\": \"http://h/\"}]",
	"notify[0].on[0]: unknown event everything (events: batch_end, "
	"escalated, deferred, stopped, breaker_open, usage_limit)"},
    {"[{\"on\": [3], \"webhook\": \"http://h/\"}]",
	"notify[0].on[0]: expected a string, got a number"},
    {"[{\"on\": [\"stopped\"], \"webhok\": \"http://h/\"}]",
	"unknown key notify[0].webhok (did you mean webhook?)"},
    {"[{\"on\": [\"stopped\"], \"webhook\": \"ftp://h/x\"}]",
	"notify[0].webhook: must be an http:// or https:// URL"},
    {"[{\"on\": [\"stopped\"], \"webhook\": \"no url\"}]",
	"notify[0].webhook: "},
    {"[{\"on\": [\"stopped\"], \"webhook\": \"\"}]",
	"notify[0].webhook: must not be empty"},
    {"[{\"on\": [\"stopped\"], \"webhook\": 5}]",
	"notify[0].webhook: expected a string, got a number"},
    {"[{\"on\": [\"stopped\"], \"command\": \"notify-send hi\"}]",
	"notify[0].command: expected an array of strings, got a string"},
    {"[{\"on\": [\"stopped\"], \"command\": []}]",
	"notify[0].command: must not be empty"},
    {"[{\"on\": [\"stopped\"], \"command\": [\"\"]}]",
	"notify[0].command[0]: the program name must not be empty"},
    {"[{\"on\": [\"stopped\"], \"command\": [\"x\"]}, {\"on\": "
     "[\"stopped\"], \"command\": [\"y\"], \"extra\": 1}]",
	"unknown key notify[1].extra"},
};

static void
test_config_notify(void **state)
{
	char path[PATH_MAX], text[1024];
	struct config c = {0};
	struct sc_err err = {0};
	size_t i;
	int rc;

	(void)state;
	snprintf(path, sizeof(path), "%s/storyctl.json", tmpdir);
	for (i = 0; i < sizeof(ccases) / sizeof(ccases[0]); i++) {
		snprintf(text, sizeof(text),
		    "{\"stories\": [], \"notify\": %s}\n", ccases[i].notify);
		file_put(path, text);
		memset(&err, 0, sizeof(err));
		rc = config_load(&c, path, &err);
		if (ccases[i].err == NULL && rc != 0)
			fail_msg("case %zu: %s", i, err.msg);
		if (ccases[i].err != NULL &&
		    (rc != SC_EDATA || strstr(err.msg, ccases[i].err) == NULL))
			fail_msg("case %zu: got \"%s\", want \"%s\"", i,
			    err.msg, ccases[i].err);
		config_release(&c);
	}
	/* what a valid list loads into */
	file_put(path,
	    "{\"notify\": [{\"on\": [\"stopped\", \"batch_end\"], "
	    "\"webhook\": \"http://127.0.0.1:1/h\"}, {\"on\": "
	    "[\"usage_limit\"], \"command\": [\"a\", \"b\"]}]}\n");
	assert_int_equal(config_load(&c, path, &err), 0);
	assert_int_equal(c.nnotify, 2);
	assert_int_equal(
	    c.notify[0].on, (1u << NOTIFY_STOPPED) | (1u << NOTIFY_BATCH_END));
	assert_string_equal(c.notify[0].webhook, "http://127.0.0.1:1/h");
	assert_int_equal(c.notify[0].command.n, 0);
	assert_int_equal(c.notify[1].on, 1u << NOTIFY_USAGE_LIMIT);
	assert_null(c.notify[1].webhook);
	assert_int_equal(c.notify[1].command.n, 2);
	assert_string_equal(c.notify[1].command.items[1], "b");
	config_release(&c);
	/* the URL is never in the message: it may hold a token */
	file_put(path,
	    "{\"notify\": [{\"on\": [\"stopped\"], \"webhook\": "
	    "\"gopher://h/tokenabcdefgh123\"}]}\n");
	assert_int_equal(config_load(&c, path, &err), SC_EDATA);
	assert_null(strstr(err.msg, "tokenabcdefgh123"));
}

static void
test_target_shown(void **state)
{
	static const struct {
		const char *url, *want;
	} cases[] = {
	    {"https://hooks.example.org/services/T0/B0/SECRET",
		"webhook https://hooks.example.org"},
	    {"http://127.0.0.1:8080?token=SECRET",
		"webhook http://127.0.0.1:8080"},
	    {"https://user:SECRET@example.org:8443/x#f",
		"webhook https://example.org:8443"},
	};
	struct notify_conf t = {0};
	char buf[160];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		t.webhook = (char *)cases[i].url;
		notifier_target_shown(buf, sizeof(buf), &t);
		assert_string_equal(buf, cases[i].want);
	}
	t.webhook = NULL;
	assert_int_equal(strlist_push(&t.command, "/usr/bin/page-me"), 0);
	assert_int_equal(strlist_push(&t.command, "--token=SECRET"), 0);
	notifier_target_shown(buf, sizeof(buf), &t);
	assert_string_equal(buf, "command /usr/bin/page-me");
	strlist_release(&t.command);
}

/* ------------------------------------------------------------------ */
/* the real notifier */

static struct notifier *
nf_start(const struct notify_conf *t, size_t n, struct notify_ops *ops)
{
	struct notifier *nf = NULL;
	struct sc_err err = {0};
	char log[PATH_MAX];

	snprintf(log, sizeof(log), "%s/notify.log", tmpdir);
	if (notifier_start(&nf, t, n, tmpdir, log, &err) != 0)
		fail_msg("notifier_start: %s", err.msg);
	notifier_ops(ops, nf);
	return nf;
}

static void
argv_set(struct strlist *l, const char *const *argv)
{
	for (; *argv != NULL; argv++)
		assert_int_equal(strlist_push(l, *argv), 0);
}

/* A command gets the JSON on stdin; in the order posted; no failure. */
static void
test_command_gets_stdin(void **state)
{
	struct notify_conf t = {0};
	struct notify_failure f[2];
	struct notify_ops ops;
	struct notifier *nf;
	char out[PATH_MAX], *got;
	const char *argv[] = {
	    "/bin/sh", "-c", "cat >>\"$0\"; echo >>\"$0\"", out, NULL};

	(void)state;
	snprintf(out, sizeof(out), "%s/got.jsonl", tmpdir);
	t.on = ~0u;
	argv_set(&t.command, argv);
	nf = nf_start(&t, 1, &ops);
	assert_int_equal(ops.post(ops.ctx, 0, NOTIFY_STOPPED, "{\"a\":1}"), 0);
	assert_int_equal(
	    ops.post(ops.ctx, 0, NOTIFY_BATCH_END, "{\"b\":2}"), 0);
	/* out of range: refused, not a crash */
	assert_int_equal(ops.post(ops.ctx, 1, NOTIFY_STOPPED, "{}"), -1);
	assert_int_equal(ops.drain(ops.ctx, 20000), 0);
	assert_int_equal(ops.take_failures(ops.ctx, f, 2), 0);
	notifier_stop(nf);
	got = file_get(out);
	assert_string_equal(got, "{\"a\":1}\n{\"b\":2}\n");
	free(got);
	strlist_release(&t.command);
}

/* A command that fails is tried 3 times, then reported; one that
 * cannot be executed once. */
static void
test_command_failures(void **state)
{
	struct notify_conf t[2] = {{0}, {0}};
	struct notify_failure f[4];
	struct notify_ops ops;
	struct notifier *nf;
	char out[PATH_MAX], *got;
	const char *fails[] = {
	    "/bin/sh", "-c", "echo x >>\"$0\"; exit 3", out, NULL};
	const char *missing[] = {"/nonexistent/notify-me", NULL};
	size_t n;

	(void)state;
	snprintf(out, sizeof(out), "%s/tries", tmpdir);
	argv_set(&t[0].command, fails);
	argv_set(&t[1].command, missing);
	nf = nf_start(t, 2, &ops);
	assert_int_equal(ops.post(ops.ctx, 0, NOTIFY_ESCALATED, "{}"), 0);
	assert_int_equal(ops.post(ops.ctx, 1, NOTIFY_DEFERRED, "{}"), 0);
	assert_int_equal(ops.drain(ops.ctx, 30000), 0);
	n = ops.take_failures(ops.ctx, f, 4);
	notifier_stop(nf);
	assert_int_equal(n, 2);
	/* the one that cannot run fails first: no retries */
	assert_int_equal(f[0].event, NOTIFY_DEFERRED);
	assert_string_equal(f[0].target, "command /nonexistent/notify-me");
	assert_string_equal(f[0].msg,
	    "cannot run /nonexistent/notify-me: No such file or directory "
	    "(1 try)");
	assert_int_equal(f[1].event, NOTIFY_ESCALATED);
	assert_string_equal(f[1].target, "command /bin/sh");
	assert_string_equal(f[1].msg, "exited 3 (3 tries)");
	got = file_get(out);
	assert_string_equal(got, "x\nx\nx\n");
	free(got);
	strlist_release(&t[0].command);
	strlist_release(&t[1].command);
}

/* A listening socket nobody accepts on: a receiver that never answers
 * (the kernel completes the connection); its port in *port. */
static int
silent_listener(int *port)
{
	struct sockaddr_in sa;
	socklen_t len = sizeof(sa);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	assert_true(fd >= 0);
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(listen(fd, 128), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&sa, &len), 0);
	*port = ntohs(sa.sin_port);
	return fd;
}

/*
 * A webhook that never answers: the queue fills (then refuses), the
 * drain gives up with everything still undelivered, and stopping cuts
 * the try in progress short (libcurl's progress callback) instead of
 * waiting out 3 tries of 5 s for each of 65 events.
 */
static void
test_hanging_webhook(void **state)
{
	struct notify_conf t = {0};
	struct notify_failure f[2];
	struct notify_ops ops;
	struct notifier *nf;
	char url[64];
	int fd, port, i, queued = 0;

	(void)state;
	fd = silent_listener(&port);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/hook", port);
	t.webhook = url;
	nf = nf_start(&t, 1, &ops);
	for (i = 0; i < NOTIFY_QUEUE_MAX + 2; i++)
		if (ops.post(ops.ctx, 0, NOTIFY_BATCH_END, "{}") == 0)
			queued++;
	/* 64 wait; one more may already be on its way */
	assert_in_range(queued, NOTIFY_QUEUE_MAX, NOTIFY_QUEUE_MAX + 1);
	assert_int_equal(ops.drain(ops.ctx, 300), (size_t)queued);
	assert_int_equal(ops.take_failures(ops.ctx, f, 2), 0);
	notifier_stop(nf);
	close(fd);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_event_names),
	    cmocka_unit_test(test_event_json_keys),
	    cmocka_unit_test(test_event_json_nulls),
	    cmocka_unit_test(test_act_command),
	    cmocka_unit_test(test_retry_rules),
	    cmocka_unit_test(test_json_redacted),
	    cmocka_unit_test(test_target_shown),
	    cmocka_unit_test(test_config_notify),
	    cmocka_unit_test(test_command_gets_stdin),
	    cmocka_unit_test(test_command_failures),
	    cmocka_unit_test(test_hanging_webhook),
	};

	return cmocka_run_group_tests(tests, setup_dir, teardown_dir);
}
