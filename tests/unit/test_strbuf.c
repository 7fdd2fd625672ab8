/* test_strbuf.c - the growable string (common/strbuf.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "common/strbuf.h"

static void
test_empty_is_a_string(void **state)
{
	struct strbuf sb = STRBUF_INIT;
	char *s;
	size_t len = 9;

	(void)state;
	assert_string_equal(sb.buf, "");
	assert_int_equal(sb.len, 0);
	s = strbuf_detach(&sb, &len);
	assert_non_null(s);
	assert_string_equal(s, "");
	assert_int_equal(len, 0);
	free(s);
	strbuf_release(&sb);
	strbuf_release(NULL);
}

static void
test_adds_grow_without_cutting(void **state)
{
	struct strbuf sb = STRBUF_INIT;
	size_t i;

	(void)state;
	/* far past any fixed field: nothing is cut */
	for (i = 0; i < 1000; i++)
		assert_int_equal(strbuf_addstr(&sb, "0123456789"), 0);
	assert_int_equal(sb.len, 10000);
	assert_int_equal(strlen(sb.buf), 10000);
	assert_int_equal(strbuf_addf(&sb, "-%d-%s", 42, "x"), 0);
	assert_string_equal(sb.buf + 10000, "-42-x");
	assert_int_equal(strbuf_addch(&sb, '!'), 0);
	assert_int_equal(strbuf_add(&sb, "ab\0c", 4), 0);
	assert_int_equal(sb.len, 10010);
	assert_memory_equal(sb.buf + 10005, "!ab\0c", 5);
	strbuf_setlen(&sb, 3);
	assert_string_equal(sb.buf, "012");
	strbuf_release(&sb);
	assert_string_equal(sb.buf, "");
}

static void
test_out_of_memory_is_sticky(void **state)
{
	struct strbuf sb = STRBUF_INIT;
	size_t len = 1;

	(void)state;
	assert_int_equal(strbuf_addstr(&sb, "kept"), 0);
	/* a size no object may have (over PTRDIFF_MAX): refused before
	 * the allocator is asked */
	assert_int_equal(strbuf_grow(&sb, (size_t)PTRDIFF_MAX), -1);
	assert_true(sb.oom);
	assert_int_equal(strbuf_addstr(&sb, "more"), -1);
	assert_string_equal(sb.buf, "kept");
	assert_null(strbuf_detach(&sb, &len));
	assert_int_equal(len, 0);
	assert_false(sb.oom);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_empty_is_a_string),
	    cmocka_unit_test(test_adds_grow_without_cutting),
	    cmocka_unit_test(test_out_of_memory_is_sticky),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
