/*
 * fixture_fs.h - file-system helpers the unit suites share for their
 * temporary trees (paths joined, parents made, files written and read,
 * a tree removed, a program run).  Each fails the running test (cmocka) when the file
 * system does not do what it is asked.
 */
#ifndef STORYCTL_FIXTURE_FS_H
#define STORYCTL_FIXTURE_FS_H

#include <stddef.h>

/* out = dir/name (out has PATH_MAX bytes). */
void fxfs_join(char *out, const char *dir, const char *name);
/* mkdir -p dirname(path). */
void fxfs_mkparents(const char *path);
/* rm -rf path, links not followed. */
void fxfs_rm_tree(const char *path);
/* dir/name holds exactly n bytes of data afterwards (its parents made,
 * an old file replaced). */
void fxfs_write_bytes(
    const char *dir, const char *name, const void *data, size_t n);
void fxfs_write_file(const char *dir, const char *name, const char *text);
/* dir/name's bytes (at most len - 1) into buf, NUL-terminated: their
 * number, or -1 (buf "") when it cannot be read. */
long fxfs_read_file(char *buf, size_t len, const char *dir, const char *name);

/* tests/fixtures/<subdir>/<name> under $STORYCTL_SRC, else the current
 * directory (scripts/run-tests runs the suites from the root), whole
 * and NUL-terminated (at most 1 MiB; *len its length); the caller
 * frees it. */
char *fxfs_fixture_read(const char *subdir, const char *name, size_t *len);

/* The environment of a test that runs git and libgit2: HOME at home, no
 * system or global config, a fixed author and committer. */
void fxfs_git_env(const char *home);

/* Run argv (argv[0] looked up in PATH) with stdin and stderr on
 * /dev/null; its stdout, trailing newlines cut, into out (outlen
 * bytes, may be NULL).  Returns its exit status (128 when it did not
 * exit). */
int fxfs_run(char *out, size_t outlen, const char *const *argv);

#endif
