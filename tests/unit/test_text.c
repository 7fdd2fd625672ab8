/* test_text.c - text_clean(), the one cleaner of agent text
 * (strategies/text.c), as a table. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "strategies/text.h"

struct ccase {
	const char *name;
	const char *in;
	unsigned flags;
	size_t cap;
	const char *out;
	bool cut;
};

static const struct ccase cases[] = {
    {"plain", "hello world", 0, 64, "hello world", false},
    {"C0 dropped, tab kept",
	"a\x01"
	"b\tc\r\n",
	0, 64, "ab\tc", false},
    {"newline kept on request", "a\nb\r\n", TEXT_KEEP_NL, 64, "a\nb\n", false},
    {"DEL dropped",
	"a\x7f"
	"b",
	0, 64, "ab", false},
    {"C1 CSI dropped",
	"a\xc2\x9b"
	"31mb",
	0, 64, "a31mb", false},
    {"C1 NEL and U+0080 dropped", "\xc2\x85x\xc2\x80y\xc2\x9f", 0, 64, "xy",
	false},
    {"U+00A0 is not C1",
	"a\xc2\xa0"
	"b",
	0, 64,
	"a\xc2\xa0"
	"b",
	false},
    /* issue 33: what reorders or hides text in a terminal */
    {"bidi overrides and isolates dropped",
	"\xe2\x80\xae"
	"evil\xe2\x80\xac \xe2\x81\xa6x\xe2\x81\xa9 "
	"\xe2\x80\x8fy\xd8\x9c",
	TEXT_COLLAPSE, 64, "evil x y", false},
    {"invisible characters dropped, never a space",
	"in\xe2\x80\x8bvis\xef\xbb\xbfi\xc2\xad"
	"ble\xe2\x81\xa0!",
	TEXT_COLLAPSE, 64, "invisible!", false},
    {"joiners kept: emoji need them",
	"\xf0\x9f\x91\xa9\xe2\x80\x8d\xf0\x9f\x92\xbb", 0, 64,
	"\xf0\x9f\x91\xa9\xe2\x80\x8d\xf0\x9f\x92\xbb", false},
    {"ESC sequences dropped", "\x1b[31mred\x1b[0m \x1b]0;title\x07ok", 0, 64,
	"red ok", false},
    {"invalid bytes dropped", "a\xff\xc3(b", 0, 64, "a(b", false},
    {"invalid bytes marked",
	"a\xff"
	"b",
	TEXT_MARK_INVALID, 64, "a?b", false},
    {"raw 0x9b byte is invalid UTF-8",
	"a\x9b"
	"b",
	TEXT_MARK_INVALID, 64, "a?b", false},
    {"spaces for controls",
	"a\x01"
	"b\xc2\x85"
	"c",
	TEXT_SPACES, 64, "a b c", false},
    {"collapse", "  a \x1b[1m\x01  b\r\n c ", TEXT_COLLAPSE, 64, "a b c",
	false},
    {"trim", " \t a b \t", TEXT_TRIM, 64, "a b", false},
    {"whole characters only", "ab\xc3\xa9", 0, 4, "ab", true},
    {"cut reported", "abcdef", 0, 4, "abc", true},
    {"empty", "", 0, 1, "", false},
};

static void
test_clean_table(void **state)
{
	char buf[64];
	size_t i, n;
	bool cut;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		const struct ccase *c = &cases[i];
		memset(buf, 'Z', sizeof(buf));
		n = text_clean(
		    buf, c->cap, c->in, strlen(c->in), c->flags, &cut);
		if (strcmp(buf, c->out) != 0 || n != strlen(c->out) ||
		    cut != c->cut)
			fail_msg("%s: got \"%s\" (%zu, cut %d), want \"%s\"",
			    c->name, buf, n, cut, c->out);
	}
}

/* A fixed field never cuts silently (docs/state.md#text-fields): what
 * fits is copied whole, what does not ends with the mark, cut at a
 * character boundary. */
static void
test_copy_marks_a_cut(void **state)
{
	static const struct {
		const char *in;
		size_t cap;
		const char *out;
	} t[] = {
	    {"abc", 4, "abc"},
	    {"abcd", 4, "\xe2\x80\xa6"},
	    {"abcdefgh", 8, "abcd\xe2\x80\xa6"},
	    /* é is two bytes: never half of it */
	    {"ab\xc3\xa9\xc3\xa9xyz", 8, "ab\xc3\xa9\xe2\x80\xa6"},
	    {"a\xc3\xa9\xc3\xa9xyz", 8, "a\xc3\xa9\xe2\x80\xa6"},
	    {"", 4, ""},
	};
	char buf[16];
	size_t i, n;

	(void)state;
	for (i = 0; i < sizeof(t) / sizeof(*t); i++) {
		memset(buf, 'Z', sizeof(buf));
		n = text_copy(buf, t[i].cap, t[i].in);
		if (strcmp(buf, t[i].out) != 0 || n != strlen(t[i].out) ||
		    n >= t[i].cap)
			fail_msg("%zu: got \"%s\" (%zu)", i, buf, n);
	}
}

/* Whatever comes in, no control character and only valid UTF-8 comes
 * out. */
static void
test_clean_every_byte(void **state)
{
	unsigned char in[512];
	char out[1024];
	size_t i, n, k;

	(void)state;
	for (i = 0; i < 256; i++) {
		in[2 * i] = (unsigned char)i;
		in[2 * i + 1] = (unsigned char)(0x80 + (i % 64));
	}
	n = text_clean(out, sizeof(out), (const char *)in, sizeof(in),
	    TEXT_MARK_INVALID, NULL);
	for (i = 0; i < n; i += k) {
		const unsigned char *u = (const unsigned char *)out + i;
		k = text_utf8_len(u, n - i);
		assert_true(k > 0);
		assert_false(u[0] < 0x20 && u[0] != '\t');
		assert_false(u[0] == 0x7f);
		assert_false(k == 2 && u[0] == 0xc2 && u[1] < 0xa0);
	}
}

/* The ASCII classes ignore the locale and bytes >= 0x80; the case-
 * insensitive search honours word boundaries (classify's table). */
static void
test_ascii_and_search(void **state)
{
	const char *s = "  Rate_Limit: Quota exceeded\t\n";
	const char *p = s;
	size_t n = strlen(s);
	int c;

	(void)state;
	for (c = 0; c < 256; c++) {
		assert_int_equal(text_is_alpha(c),
		    (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'));
		assert_int_equal(text_is_digit(c), c >= '0' && c <= '9');
		assert_int_equal(
		    text_lower(c), c >= 'A' && c <= 'Z' ? c + 32 : c);
	}
	assert_false(text_is_space(0xa0));
	text_trim(&p, &n);
	assert_int_equal(n, strlen("Rate_Limit: Quota exceeded"));
	assert_memory_equal(p, "Rate_Limit", 10);
	assert_true(text_ci_has(p, n, "quota", true));
	/* "limit" touches '_': not a word there */
	assert_false(text_ci_has(p, n, "limit", true));
	assert_true(text_ci_has(p, n, "limit", false));
	assert_int_equal(text_ci_find(p, n, 0, "quota", false), 12);
	assert_int_equal(text_ci_find(p, n, 13, "quota", false), n);
	assert_true(text_ci_contains(p, n, "QUOTA Exceeded"));
	assert_false(text_ci_contains(p, n, ""));
	assert_false(text_ci_contains(p, n, NULL));
	assert_true(text_ci_eq("ABC", "abc", 3));
	assert_false(text_ci_eq("ABD", "abc", 3));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_clean_table),
	    cmocka_unit_test(test_clean_every_byte),
	    cmocka_unit_test(test_copy_marks_a_cut),
	    cmocka_unit_test(test_ascii_and_search),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
