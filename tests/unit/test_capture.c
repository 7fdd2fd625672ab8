/* test_capture.c - the agent's output: the log file and the tail. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "controller/engine/capture.h"

static char dir[64];

static int
setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/test_capture.XXXXXX");
	return mkdtemp(dir) == NULL ? -1 : 0;
}

static int
teardown(void **state)
{
	char path[128];

	(void)state;
	snprintf(path, sizeof(path), "%s/log", dir);
	unlink(path);
	rmdir(dir);
	return 0;
}

/* Only the last cap bytes stay, in order, whatever the chunks. */
static void
test_tail_wraps(void **state)
{
	struct capture c;
	char *t;
	size_t len = 0;

	(void)state;
	assert_int_equal(capture_open(&c, NULL, 8, NULL), 0);
	capture_add(&c, "abc", 3);
	t = capture_tail(&c, &len);
	assert_string_equal(t, "abc");
	assert_int_equal(len, 3);
	free(t);
	capture_add(&c, "defgh", 5); /* exactly full */
	capture_add(&c, "ijk", 3); /* wraps */
	t = capture_tail(&c, &len);
	assert_string_equal(t, "defghijk");
	free(t);
	capture_add(&c, "0123456789XY", 12); /* one chunk over cap */
	t = capture_tail(&c, &len);
	assert_string_equal(t, "456789XY");
	assert_int_equal(len, 8);
	free(t);
	assert_int_equal(c.bytes, 23);
	capture_release(&c);
	capture_release(&c); /* twice: a no-op */
}

/* The log gets everything, is private even when it existed, and the
 * runner's own lines are in the log and tail but not counted. */
static void
test_log(void **state)
{
	struct capture c;
	struct stat st;
	char path[128], buf[64];
	char *t;
	size_t len;
	FILE *f;

	(void)state;
	snprintf(path, sizeof(path), "%s/log", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("old\n", f);
	fclose(f);
	assert_int_equal(chmod(path, 0644), 0);
	assert_int_equal(capture_open(&c, path, 4, NULL), 0);
	capture_add(&c, "hello ", 6);
	capture_note(&c, "note\n", 5);
	assert_int_equal(c.bytes, 6);
	t = capture_tail(&c, &len);
	assert_string_equal(t, "ote\n");
	free(t);
	capture_close_log(&c);
	capture_add(&c, "more", 4); /* the tail only, once closed */
	capture_release(&c);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	f = fopen(path, "r");
	assert_non_null(f);
	len = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[len] = '\0';
	assert_string_equal(buf, "old\nhello note\n");
}

/* A log that cannot be written keeps the output flowing to the tail and
 * reports the first error. */
static void
test_log_error(void **state)
{
	struct capture c;
	struct sc_err err = {0};
	char path[128];
	char *t;
	size_t len;

	(void)state;
	if (access("/dev/full", W_OK) != 0)
		skip();
	assert_int_equal(capture_open(&c, "/dev/full", 16, NULL), 0);
	capture_add(&c, "x", 1);
	capture_add(&c, "y", 1);
	assert_int_equal(c.log_errno, ENOSPC);
	t = capture_tail(&c, &len);
	assert_string_equal(t, "xy");
	free(t);
	capture_release(&c);
	/* a log that cannot be opened: SC_EIO naming it */
	snprintf(path, sizeof(path), "%s/missing/log", dir);
	assert_int_equal(capture_open(&c, path, 16, &err), SC_EIO);
	assert_non_null(strstr(err.msg, path));
	capture_release(&c);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_tail_wraps),
	    cmocka_unit_test(test_log),
	    cmocka_unit_test(test_log_error),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
