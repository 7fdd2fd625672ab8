/*
 * gitlib.h - libgit2 started the one way storyctl starts it
 * (docs/performance.md#ssh-start).
 */
#ifndef STORYCTL_GITLIB_H
#define STORYCTL_GITLIB_H

/*
 * git_libgit2_init(), with libssh2 started first without its OpenSSL
 * start (once a process): libgit2's own libssh2_init() is then only
 * counted.  Returns git_libgit2_init()'s result (negative on failure,
 * libgit2's error set); balanced by git_libgit2_shutdown() as usual.
 */
int gitlib_init(void);

#endif
