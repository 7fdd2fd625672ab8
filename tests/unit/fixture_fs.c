/* fixture_fs.c - see fixture_fs.h. */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "tests/unit/fixture_fs.h"

void
fxfs_join(char *out, const char *dir, const char *name)
{
	int n = snprintf(out, PATH_MAX, "%s/%s", dir, name);

	assert_true(n > 0 && n < PATH_MAX);
}

void
fxfs_mkparents(const char *path)
{
	char buf[PATH_MAX];
	char *p;

	snprintf(buf, sizeof(buf), "%s", path);
	for (p = buf + 1; *p != '\0'; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		assert_true(mkdir(buf, 0755) == 0 || errno == EEXIST);
		*p = '/';
	}
}

static int
rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

void
fxfs_rm_tree(const char *path)
{
	nftw(path, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

void
fxfs_write_bytes(const char *dir, const char *name, const void *data, size_t n)
{
	char path[PATH_MAX];
	FILE *f;

	fxfs_join(path, dir, name);
	fxfs_mkparents(path);
	(void)unlink(path);
	f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(fwrite(data, 1, n, f), n);
	assert_int_equal(fclose(f), 0);
}

void
fxfs_write_file(const char *dir, const char *name, const char *text)
{
	fxfs_write_bytes(dir, name, text, strlen(text));
}

long
fxfs_read_file(char *buf, size_t len, const char *dir, const char *name)
{
	char path[PATH_MAX];
	size_t n;
	FILE *f;

	buf[0] = '\0';
	fxfs_join(path, dir, name);
	if ((f = fopen(path, "r")) == NULL)
		return -1;
	n = fread(buf, 1, len - 1, f);
	buf[n] = '\0';
	fclose(f);
	return (long)n;
}

int
fxfs_run(char *out, size_t outlen, const char *const *argv)
{
	char buf[8192];
	size_t n = 0;
	ssize_t r;
	int fds[2], status = 0, devnull;
	pid_t pid;

	assert_int_equal(pipe(fds), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		devnull = open("/dev/null", O_RDWR);
		dup2(fds[1], 1);
		if (devnull >= 0) {
			dup2(devnull, 0);
			dup2(devnull, 2);
		}
		close(fds[0]);
		close(fds[1]);
		execvp(argv[0], (char *const *)argv);
		_exit(127);
	}
	close(fds[1]);
	while ((r = read(fds[0], buf + n, sizeof(buf) - 1 - n)) > 0)
		n += (size_t)r;
	close(fds[0]);
	buf[n] = '\0';
	while (n > 0 && buf[n - 1] == '\n')
		buf[--n] = '\0';
	assert_int_equal(waitpid(pid, &status, 0), pid);
	if (out != NULL)
		snprintf(out, outlen, "%s", buf);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

char *
fxfs_fixture_read(const char *subdir, const char *name, size_t *len)
{
	const char *src = getenv("STORYCTL_SRC");
	char path[PATH_MAX], *buf;
	FILE *f;
	long n;

	snprintf(path, sizeof(path), "%s/tests/fixtures/%s/%s",
	    src != NULL && src[0] != '\0' ? src : ".", subdir, name);
	f = fopen(path, "rb");
	if (f == NULL)
		fail_msg("cannot open %s", path);
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	n = ftell(f);
	assert_true(n > 0 && n <= 1024 * 1024);
	rewind(f);
	buf = malloc((size_t)n + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
	buf[n] = '\0';
	fclose(f);
	*len = (size_t)n;
	return buf;
}

void
fxfs_git_env(const char *home)
{
	assert_int_equal(setenv("HOME", home, 1), 0);
	assert_int_equal(setenv("GIT_CONFIG_NOSYSTEM", "1", 1), 0);
	assert_int_equal(setenv("GIT_CONFIG_GLOBAL", "/dev/null", 1), 0);
	assert_int_equal(setenv("GIT_AUTHOR_NAME", "T", 1), 0);
	assert_int_equal(setenv("GIT_AUTHOR_EMAIL", "t@example.org", 1), 0);
	assert_int_equal(setenv("GIT_COMMITTER_NAME", "T", 1), 0);
	assert_int_equal(setenv("GIT_COMMITTER_EMAIL", "t@example.org", 1), 0);
}
