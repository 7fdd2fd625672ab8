/* test_fsutil.c - joining paths, mkdir -p, rm -rf (state/fsutil.c). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "state/fsutil.h"

static bool
is_dir(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static void
test_path_join(void **state)
{
	char *s;

	(void)state;
	s = fsutil_path_join("/a/b", "c.md");
	assert_string_equal(s, "/a/b/c.md");
	free(s);
	s = fsutil_path_join("/a/b/", "c.md");
	assert_string_equal(s, "/a/b/c.md");
	free(s);
	s = fsutil_path_join("/", "c.md");
	assert_string_equal(s, "/c.md");
	free(s);
}

/* mkdir -p makes every parent but not the leaf; rm -rf takes a tree
 * with files in it and does not follow a link out of it. */
static void
test_mkdir_rm(void **state)
{
	char root[] = "/tmp/test_fsutil.XXXXXX", path[256], out[256];
	struct sc_err err = {0};
	FILE *f;

	(void)state;
	assert_non_null(mkdtemp(root));
	snprintf(out, sizeof(out), "%s.keep", root);
	assert_int_equal(mkdir(out, 0700), 0);
	snprintf(path, sizeof(path), "%s/a/b/c/leaf", root);
	assert_int_equal(fsutil_mkdir_parents(path, 0777, &err), 0);
	snprintf(path, sizeof(path), "%s/a/b/c", root);
	assert_true(is_dir(path));
	snprintf(path, sizeof(path), "%s/a/b/c/leaf", root);
	assert_false(is_dir(path));
	/* again: what exists is fine */
	assert_int_equal(fsutil_mkdir_parents(path, 0777, &err), 0);
	assert_non_null(f = fopen(path, "w"));
	fclose(f);
	snprintf(path, sizeof(path), "%s/a/link", root);
	assert_int_equal(symlink(out, path), 0);
	/* a file outside, linked to from inside: it stays */
	snprintf(path, sizeof(path), "%s/kept", out);
	assert_non_null(f = fopen(path, "w"));
	fclose(f);
	snprintf(path, sizeof(path), "%s/a/b/filelink", root);
	snprintf(out + strlen(out), sizeof(out) - strlen(out), "/kept");
	assert_int_equal(symlink(out, path), 0);
	out[strlen(out) - strlen("/kept")] = '\0';
	fsutil_rm_tree(root);
	assert_false(is_dir(root));
	assert_true(is_dir(out));
	snprintf(path, sizeof(path), "%s/kept", out);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(rmdir(out), 0);
	/* a plain file, and a path that is not there */
	assert_non_null(f = fopen(root, "w"));
	fclose(f);
	fsutil_rm_tree(root);
	assert_int_equal(access(root, F_OK), -1);
	fsutil_rm_tree(root);
	/* a file in the way of a parent */
	assert_non_null(f = fopen(root, "w"));
	fclose(f);
	snprintf(path, sizeof(path), "%s/x/y", root);
	assert_int_equal(fsutil_mkdir_parents(path, 0777, &err), SC_EIO);
	assert_non_null(strstr(err.msg, "cannot create"));
	assert_int_equal(unlink(root), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_path_join),
	    cmocka_unit_test(test_mkdir_rm),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
