/* agentmark.c - see agentmark.h (docs/runner.md#the-mark). */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "controller/engine/agentmark.h"
#include "controller/clock.h"
#include "controller/engine/pgroup.h"

/* The processes found in one look; more than this many marked processes
 * are ended over several looks. */
#define MARKED_MAX 1024
/* How long after SIGKILL it keeps looking before it gives up. */
#define MARK_KILL_WAIT_MS 2000

int
agentmark_prefix(
    char *buf, size_t len, const char *state_dir, struct sc_err *err)
{
	struct stat sb;

	if (stat(state_dir, &sb) < 0)
		return err_set(err, SC_EIO,
		    "cannot look at the state dir %s: %s", state_dir,
		    strerror(errno));
	snprintf(buf, len, "%s=%llu.%llu.", AGENTMARK_NAME,
	    (unsigned long long)sb.st_dev, (unsigned long long)sb.st_ino);
	return 0;
}

void
agentmark_format(char *buf, size_t len, const char *prefix, int64_t id)
{
	snprintf(buf, len, "%s%lld", prefix, (long long)id);
}

/*
 * Whether the environment of process pid holds an entry that starts with
 * prefix.  Read in pieces and matched byte by byte from the start of
 * each entry (after each NUL), so an entry cut between two reads needs
 * nothing kept.  A process we may not read, or a zombie (its environment
 * reads empty), is not marked.
 */
static bool
env_marked(int pid, const char *prefix)
{
	char path[64], buf[16384];
	size_t plen = strlen(prefix), i;
	ssize_t n;
	/* how much of prefix the current entry has matched so far; -1 once
	 * it differs */
	long at = 0;
	bool found = false;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/environ", pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return false;
	while (!found) {
		n = read(fd, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		for (i = 0; i < (size_t)n && !found; i++) {
			if (buf[i] == '\0')
				at = 0;
			else if (at >= 0 && buf[i] == prefix[at])
				found = (size_t)++at == plen;
			else
				at = -1;
		}
	}
	close(fd);
	return found;
}

/* The marked processes now, ours excepted, into pids (at most max). */
static size_t
marked_look(int *pids, size_t max, const char *prefix)
{
	struct dirent *de;
	DIR *d;
	size_t n = 0;
	int self = (int)getpid();

	if ((d = opendir("/proc")) == NULL)
		return 0;
	while (n < max && (de = readdir(d)) != NULL) {
		char *end = NULL;
		long v;

		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		v = strtol(de->d_name, &end, 10);
		if (*end != '\0' || v <= 1 || v == self)
			continue;
		if (env_marked((int)v, prefix))
			pids[n++] = (int)v;
	}
	closedir(d);
	return n;
}

/* sig to each process, and to the group of each that leads one (never
 * our own group). */
static void
marked_signal(const int *pids, size_t n, int sig)
{
	pid_t ours = getpgrp();
	size_t i;

	for (i = 0; i < n; i++) {
		pid_t g = getpgid(pids[i]);

		if (g == pids[i] && g > 1 && g != ours)
			kill(-g, sig);
		kill(pids[i], sig);
	}
}

void
agentmark_end_all(int *ended, int *left, const char *prefix, int64_t grace_ms)
{
	int pids[MARKED_MAX];
	int64_t t0, now;
	size_t n;
	bool killed = false, confirmed = false;
	int found = 0;

	*ended = 0;
	*left = 0;
	if (prefix == NULL || prefix[0] == '\0')
		return;
	t0 = clock_mono_ms();
	if (grace_ms < 0)
		grace_ms = 0;
	for (;;) {
		n = marked_look(pids, MARKED_MAX, prefix);
		/* a process caught inside an exec reads with no environment
		 * for an instant: once something was found, nothing counts
		 * as gone until a second look, a tick later, agrees */
		if (n == 0 && found > 0 && !confirmed) {
			confirmed = true;
			clock_nap_ms(PGROUP_TICK_MS);
			continue;
		}
		confirmed = false;
		if ((int)n > found)
			found = (int)n;
		if (n == 0)
			break;
		now = clock_mono_ms();
		if (now - t0 >= grace_ms + MARK_KILL_WAIT_MS) {
			*left = (int)n;
			break;
		}
		/* SIGTERM to what is new, SIGKILL once the grace is over */
		killed = killed || now - t0 >= grace_ms;
		marked_signal(pids, n, killed ? SIGKILL : SIGTERM);
		clock_nap_ms(PGROUP_TICK_MS);
	}
	*ended = found;
}
