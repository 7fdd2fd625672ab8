/*
 * faultshim.c - an LD_PRELOAD shim that makes writes to chosen files fail
 * the way a full or broken disk does, for the fault tests
 * (tests/e2e/test_faults.sh, docs/faults.md).
 *
 *   cc -shared -fPIC -O1 -o faultshim.so tests/fault/faultshim.c -ldl
 *   LD_PRELOAD=./faultshim.so FAULT_PATH=state.db FAULT_ERRNO=ENOSPC cmd
 *
 * It wraps write, pwrite, pwrite64, writev, pwritev, pwritev64, fsync and
 * fdatasync.  A call faults when the path of its descriptor (read back
 * from /proc/self/fd/N at each call, so no open wrapper is needed and a
 * reused descriptor number is never confused) contains FAULT_PATH and the
 * fault is armed.  Configuration, all from the environment:
 *
 *   FAULT_PATH   substring of the path; unset or empty: the shim is inert
 *   FAULT_ERRNO  ENOSPC (default), EIO, EDQUOT, EROFS or a number
 *   FAULT_AFTER  bytes that matching writes may still write, summed over
 *                every matching descriptor of the process, before the
 *                fault starts (default 0); the write that crosses the
 *                limit is cut short there, as on a filling disk
 *   FAULT_ARM    a file: the fault is armed only while it exists, so a
 *                test (or an agent) can fill the "disk" at a chosen moment
 *   FAULT_SYNCS  the fault is armed only after this many matching fsync
 *                or fdatasync calls succeeded: with SQLite in WAL mode
 *                and synchronous=FULL that is "after the Nth commit"
 *   FAULT_COMM   only in processes whose short program name is this
 *                (e.g. storyctl: agents and git children stay untouched)
 *   FAULT_OPS    "write", "sync" or "write,sync" (default): which calls
 *   FAULT_LOG    a file: one line "<pid> <call> <path> <errno>" per fault
 *   FAULT_REPORT a file: at exit, "<bytes> <syncs> <faults>" (matching
 *                bytes written, syncs done, faults injected), to size
 *                FAULT_AFTER and FAULT_SYNCS
 *
 * Reads, opens and renames are never touched: the point is the write
 * path.  stdio (fwrite) calls glibc's internal write and is not seen.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

#define OP_WRITE 1
#define OP_SYNC 2

static ssize_t (*real_write)(int, const void *, size_t);
static ssize_t (*real_pwrite)(int, const void *, size_t, off_t);
static ssize_t (*real_pwrite64)(int, const void *, size_t, off64_t);
static ssize_t (*real_writev)(int, const struct iovec *, int);
static ssize_t (*real_pwritev)(int, const struct iovec *, int, off_t);
static ssize_t (*real_pwritev64)(int, const struct iovec *, int, off64_t);
static int (*real_fsync)(int);
static int (*real_fdatasync)(int);

static const char *fault_path;
static const char *fault_arm;
static const char *fault_log;
static const char *fault_report;
static int fault_errno = ENOSPC;
static int fault_ops = OP_WRITE | OP_SYNC;
static long long fault_budget; /* bytes still allowed; shared by all fds */
static long long fault_bytes; /* matching bytes written */
static long long fault_count; /* faults injected */
static long long fault_syncs_wait; /* syncs to let through unarmed */
static long long fault_syncs; /* matching syncs done */
static int fault_on;

static void
shim_resolve(void)
{
	real_write = dlsym(RTLD_NEXT, "write");
	real_pwrite = dlsym(RTLD_NEXT, "pwrite");
	real_pwrite64 = dlsym(RTLD_NEXT, "pwrite64");
	real_writev = dlsym(RTLD_NEXT, "writev");
	real_pwritev = dlsym(RTLD_NEXT, "pwritev");
	real_pwritev64 = dlsym(RTLD_NEXT, "pwritev64");
	real_fsync = dlsym(RTLD_NEXT, "fsync");
	real_fdatasync = dlsym(RTLD_NEXT, "fdatasync");
}

static int
shim_errno_named(const char *s)
{
	if (s == NULL || *s == '\0' || strcmp(s, "ENOSPC") == 0)
		return ENOSPC;
	if (strcmp(s, "EIO") == 0)
		return EIO;
	if (strcmp(s, "EDQUOT") == 0)
		return EDQUOT;
	if (strcmp(s, "EROFS") == 0)
		return EROFS;
	return atoi(s) > 0 ? atoi(s) : ENOSPC;
}

__attribute__((constructor)) static void
shim_init(void)
{
	const char *comm = getenv("FAULT_COMM");
	const char *ops = getenv("FAULT_OPS");
	const char *after = getenv("FAULT_AFTER");
	const char *syncs = getenv("FAULT_SYNCS");

	shim_resolve();
	fault_path = getenv("FAULT_PATH");
	if (fault_path == NULL || *fault_path == '\0')
		return;
	if (comm != NULL && *comm != '\0' &&
	    strcmp(comm, program_invocation_short_name) != 0)
		return;
	fault_arm = getenv("FAULT_ARM");
	fault_log = getenv("FAULT_LOG");
	fault_report = getenv("FAULT_REPORT");
	fault_errno = shim_errno_named(getenv("FAULT_ERRNO"));
	fault_budget = after != NULL ? atoll(after) : 0;
	fault_syncs_wait = syncs != NULL ? atoll(syncs) : 0;
	if (ops != NULL && *ops != '\0') {
		fault_ops = 0;
		if (strstr(ops, "write") != NULL)
			fault_ops |= OP_WRITE;
		if (strstr(ops, "sync") != NULL)
			fault_ops |= OP_SYNC;
	}
	fault_on = 1;
}

__attribute__((destructor)) static void
shim_fini(void)
{
	char line[64];
	int fd, n;

	if (!fault_on || fault_report == NULL || *fault_report == '\0')
		return;
	fd = open(fault_report, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return;
	n = snprintf(line, sizeof(line), "%lld %lld %lld\n", fault_bytes,
	    fault_syncs, fault_count);
	if (n > 0)
		(void)!real_write(fd, line, (size_t)n);
	close(fd);
}

/* The path of fd when it matches FAULT_PATH, else NULL.  buf holds it. */
static const char *
shim_match(int fd, char *buf, size_t size)
{
	char link[64];
	ssize_t n;
	int saved = errno;

	if (!fault_on)
		return NULL;
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, buf, size - 1);
	errno = saved;
	if (n <= 0)
		return NULL;
	buf[n] = '\0';
	return strstr(buf, fault_path) != NULL ? buf : NULL;
}

static int
shim_armed(void)
{
	int saved = errno, armed;

	armed = __atomic_load_n(&fault_syncs, __ATOMIC_SEQ_CST) >=
		fault_syncs_wait &&
	    (fault_arm == NULL || *fault_arm == '\0' ||
		access(fault_arm, F_OK) == 0);
	errno = saved;
	return armed;
}

static void
shim_note(const char *call, const char *path)
{
	char line[4200];
	int fd, n;

	__atomic_add_fetch(&fault_count, 1, __ATOMIC_SEQ_CST);
	if (fault_log == NULL || *fault_log == '\0')
		return;
	fd = open(fault_log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
	if (fd < 0)
		return;
	n = snprintf(line, sizeof(line), "%ld %s %s %d\n", (long)getpid(), call,
	    path, fault_errno);
	if (n > 0)
		(void)!real_write(fd, line,
		    (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1);
	close(fd);
}

/*
 * Decide a write of len bytes to fd: returns how many bytes may go
 * through (len when the call is not ours or the budget allows it all,
 * fewer for the write that fills the disk), or -1 after setting errno
 * for a fault.
 */
static ssize_t
shim_write_gate(const char *call, int fd, size_t len)
{
	char path[4096];
	long long left;

	if (!(fault_ops & OP_WRITE) ||
	    shim_match(fd, path, sizeof(path)) == NULL)
		return (ssize_t)len;
	if (!shim_armed()) {
		__atomic_add_fetch(
		    &fault_bytes, (long long)len, __ATOMIC_SEQ_CST);
		return (ssize_t)len;
	}
	left = __atomic_load_n(&fault_budget, __ATOMIC_SEQ_CST);
	if (len == 0 || left >= (long long)len) {
		__atomic_sub_fetch(
		    &fault_budget, (long long)len, __ATOMIC_SEQ_CST);
		__atomic_add_fetch(
		    &fault_bytes, (long long)len, __ATOMIC_SEQ_CST);
		return (ssize_t)len;
	}
	if (left > 0) {
		__atomic_store_n(&fault_budget, 0, __ATOMIC_SEQ_CST);
		__atomic_add_fetch(&fault_bytes, left, __ATOMIC_SEQ_CST);
		return (ssize_t)left;
	}
	shim_note(call, path);
	errno = fault_errno;
	return -1;
}

/* fsync and fdatasync fail once the budget is spent (and armed).
 * Returns 1 for a matching call let through, 0 for another, -1 for a
 * fault. */
static int
shim_sync_gate(const char *call, int fd)
{
	char path[4096];

	if (shim_match(fd, path, sizeof(path)) == NULL)
		return 0;
	if (!(fault_ops & OP_SYNC) || !shim_armed() ||
	    __atomic_load_n(&fault_budget, __ATOMIC_SEQ_CST) > 0)
		return 1;
	shim_note(call, path);
	errno = fault_errno;
	return -1;
}

/* Count a matching sync that succeeded (FAULT_SYNCS). */
static int
shim_sync_done(int gate, int ret)
{
	if (gate == 1 && ret == 0)
		__atomic_add_fetch(&fault_syncs, 1, __ATOMIC_SEQ_CST);
	return ret;
}

/* Cut an iovec array to at most n bytes, into out (at most 64 entries;
 * a longer array is cut at 64 entries, a short write all the same). */
static int
shim_cut_iov(struct iovec *out, const struct iovec *iov, int cnt, size_t n)
{
	int i, k = 0;

	for (i = 0; i < cnt && k < 64 && n > 0; i++) {
		out[k] = iov[i];
		if (out[k].iov_len > n)
			out[k].iov_len = n;
		n -= out[k].iov_len;
		k++;
	}
	return k;
}

static size_t
shim_iov_len(const struct iovec *iov, int cnt)
{
	size_t n = 0;
	int i;

	for (i = 0; i < cnt; i++)
		n += iov[i].iov_len;
	return n;
}

ssize_t
write(int fd, const void *buf, size_t len)
{
	ssize_t ok;

	if (real_write == NULL)
		shim_resolve();
	ok = shim_write_gate("write", fd, len);
	if (ok < 0)
		return -1;
	return real_write(fd, buf, (size_t)ok);
}

ssize_t
pwrite(int fd, const void *buf, size_t len, off_t off)
{
	ssize_t ok;

	if (real_pwrite == NULL)
		shim_resolve();
	ok = shim_write_gate("pwrite", fd, len);
	if (ok < 0)
		return -1;
	return real_pwrite(fd, buf, (size_t)ok, off);
}

ssize_t
pwrite64(int fd, const void *buf, size_t len, off64_t off)
{
	ssize_t ok;

	if (real_pwrite64 == NULL)
		shim_resolve();
	ok = shim_write_gate("pwrite64", fd, len);
	if (ok < 0)
		return -1;
	return real_pwrite64(fd, buf, (size_t)ok, off);
}

ssize_t
writev(int fd, const struct iovec *iov, int cnt)
{
	struct iovec cut[64];
	size_t len;
	ssize_t ok;

	if (real_writev == NULL)
		shim_resolve();
	len = shim_iov_len(iov, cnt);
	ok = shim_write_gate("writev", fd, len);
	if (ok < 0)
		return -1;
	if ((size_t)ok == len)
		return real_writev(fd, iov, cnt);
	return real_writev(fd, cut, shim_cut_iov(cut, iov, cnt, (size_t)ok));
}

ssize_t
pwritev(int fd, const struct iovec *iov, int cnt, off_t off)
{
	struct iovec cut[64];
	size_t len;
	ssize_t ok;

	if (real_pwritev == NULL)
		shim_resolve();
	len = shim_iov_len(iov, cnt);
	ok = shim_write_gate("pwritev", fd, len);
	if (ok < 0)
		return -1;
	if ((size_t)ok == len)
		return real_pwritev(fd, iov, cnt, off);
	return real_pwritev(
	    fd, cut, shim_cut_iov(cut, iov, cnt, (size_t)ok), off);
}

ssize_t
pwritev64(int fd, const struct iovec *iov, int cnt, off64_t off)
{
	struct iovec cut[64];
	size_t len;
	ssize_t ok;

	if (real_pwritev64 == NULL)
		shim_resolve();
	len = shim_iov_len(iov, cnt);
	ok = shim_write_gate("pwritev64", fd, len);
	if (ok < 0)
		return -1;
	if ((size_t)ok == len)
		return real_pwritev64(fd, iov, cnt, off);
	return real_pwritev64(
	    fd, cut, shim_cut_iov(cut, iov, cnt, (size_t)ok), off);
}

int
fsync(int fd)
{
	int gate;

	if (real_fsync == NULL)
		shim_resolve();
	gate = shim_sync_gate("fsync", fd);
	if (gate < 0)
		return -1;
	return shim_sync_done(gate, real_fsync(fd));
}

int
fdatasync(int fd)
{
	int gate;

	if (real_fdatasync == NULL)
		shim_resolve();
	gate = shim_sync_gate("fdatasync", fd);
	if (gate < 0)
		return -1;
	return shim_sync_done(gate, real_fdatasync(fd));
}
