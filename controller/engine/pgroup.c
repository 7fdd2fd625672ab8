/* pgroup.c - see pgroup.h and docs/runner.md#kill-sequence. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "controller/clock.h"
#include "controller/engine/pgroup.h"
#include "common/err.h"

/* Read one /proc/PID/stat: state, process group and start time. */
static int
pgroup_stat(int pid, char *state, int *pgrp, uint64_t *start)
{
	char path[64], buf[1024];
	char *p = NULL, *end = NULL;
	ssize_t n;
	int fd, i, rc = -1;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	do
		n = read(fd, buf, sizeof(buf) - 1);
	while (n < 0 && errno == EINTR);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	/* comm may hold spaces and ')': the last ')' ends it. */
	p = strrchr(buf, ')');
	if (p == NULL || p[1] != ' ' || p[2] == '\0')
		goto out;
	p += 2;
	if (state != NULL)
		*state = *p;
	/* Fields after comm: 3 state, 4 ppid, 5 pgrp, ... 22 starttime. */
	for (i = 3; i < 22 && p != NULL; i++) {
		if (i == 5 && pgrp != NULL)
			*pgrp = (int)strtol(p, NULL, 10);
		p = strchr(p, ' ');
		if (p != NULL)
			p++;
	}
	if (p == NULL)
		goto out;
	if (start != NULL) {
		*start = strtoull(p, &end, 10);
		if (end == p)
			goto out;
	}
	rc = 0;
out:
	return rc;
}

bool
pgroup_alive(int pgid)
{
	struct dirent *de = NULL;
	DIR *d = NULL;
	char state = 0;
	int pgrp = 0;
	bool alive = false;

	if (kill(-pgid, 0) < 0 && errno == ESRCH)
		return false;
	/* kill() also finds zombies, which no signal can end: look closer. */
	d = opendir("/proc");
	if (d == NULL)
		return true;
	while (!alive && (de = readdir(d)) != NULL) {
		if (de->d_name[0] < '1' || de->d_name[0] > '9')
			continue;
		if (pgroup_stat(atoi(de->d_name), &state, &pgrp, NULL) < 0)
			continue;
		if (pgrp == pgid && state != 'Z' && state != 'X')
			alive = true;
	}
	closedir(d);
	return alive;
}

void
pgroup_reap(int pgid)
{
	siginfo_t si;

	/* pgid 0 would be our own group: never reap that. */
	if (pgid <= 0)
		return;
	for (;;) {
		memset(&si, 0, sizeof(si));
		if (waitid(P_PGID, (id_t)pgid, &si, WEXITED | WNOHANG) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (si.si_pid == 0)
			break;
	}
}

/* Reap and look until group pgid has no live member (0) or the
 * CLOCK_MONOTONIC deadline (clock_mono_ms()) passes (-1). */
static int
pgroup_wait(int pgid, int64_t deadline_ms)
{
	int64_t left;
	int rc = 0;

	for (;;) {
		pgroup_reap(pgid);
		if (!pgroup_alive(pgid))
			break;
		left = deadline_ms - clock_mono_ms();
		if (left <= 0) {
			rc = -1;
			break;
		}
		clock_nap_ms(left < PGROUP_TICK_MS ? left : PGROUP_TICK_MS);
	}
	/* A member may have become a zombie after the reap above. */
	pgroup_reap(pgid);
	return rc;
}

int
pgroup_kill(int pgid, int64_t grace_ms)
{
	int rc = 0;

	if (pgid <= 1 || pgid == getpgrp()) {
		rc = SC_ESOFTWARE;
		goto out;
	}
	if (!pgroup_alive(pgid)) {
		pgroup_reap(pgid);
		goto out;
	}
	if (kill(-pgid, SIGTERM) < 0 && errno != ESRCH) {
		rc = SC_EOS;
		goto out;
	}
	if (pgroup_wait(
		pgid, clock_mono_ms() + (grace_ms > 0 ? grace_ms : 0)) == 0)
		goto out;
	if (kill(-pgid, SIGKILL) < 0 && errno != ESRCH) {
		rc = SC_EOS;
		goto out;
	}
	if (pgroup_wait(pgid, clock_mono_ms() + PGROUP_KILL_WAIT_MS) < 0)
		rc = SC_EOS;
out:
	return rc;
}

int
pgroup_starttime(uint64_t *out, int pid)
{
	if (pid <= 0 || pgroup_stat(pid, NULL, NULL, out) < 0)
		return SC_EOS;
	return 0;
}

int
pgroup_kill_stale(int pgid, uint64_t start_ticks, int64_t grace_ms)
{
	uint64_t now_start = 0;

	if (pgroup_starttime(&now_start, pgid) == 0 && now_start != start_ticks)
		return 0; /* that pid is another process now: not ours */
	return pgroup_kill(pgid, grace_ms);
}
