/*
 * gitlib.c - see gitlib.h and docs/performance.md#ssh-start.
 *
 * Why libssh2 is called here at all (a measured need): libgit2 1.5
 * starts libssh2 inside git_libgit2_init() with libssh2_init(0), and
 * libssh2 1.10 then registers OpenSSL's built-in engines
 * (ENGINE_load_builtin_engines()).  That made 1.5 MiB of every storyctl
 * process resident, ssh:// remote or not: a seventh of a 50-story
 * batch's peak.  Under OpenSSL 3 nothing else depends on it: OpenSSL
 * starts itself on the first call libssh2 makes, and engines are not
 * used.  tests/e2e/test_ssh.sh shows an ssh:// remote still completes
 * the SSH handshake against a real sshd.
 */
#include <pthread.h>

#include <git2.h>
#include <libssh2.h>

#include "state/gitlib.h"

static pthread_once_t gitlib_ssh_once = PTHREAD_ONCE_INIT;

/* libssh2 counts its starts and stops: this start is never stopped, so
 * the count never falls to 0 and libssh2 never runs an OpenSSL start
 * (or stop) of its own when libgit2 starts it again. */
static void
gitlib_ssh_start(void)
{
	(void)libssh2_init(LIBSSH2_INIT_NO_CRYPTO);
}

int
gitlib_init(void)
{
	(void)pthread_once(&gitlib_ssh_once, gitlib_ssh_start);
	return git_libgit2_init();
}
