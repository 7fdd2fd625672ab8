/*
 * sandbox_seccomp.c - the seccomp program every confined agent runs
 * under (docs/sandbox.md#the-system-calls), built with libseccomp and
 * handed to bubblewrap as a descriptor.
 *
 * The mounts keep an agent's writes inside its tree; what they cannot
 * stop is a file in the tree made set-user-ID or set-group-ID, which
 * the user might run later outside the sandbox with the agent's
 * owner's rights (as root at 3 a.m., root's).  So: chmod and its
 * siblings fail with EPERM when the mode has S_ISUID or S_ISGID, and so
 * does creating a file with such a mode (open, openat, creat, mknod);
 * openat2 and fchmodat2, whose arguments a filter cannot read or that
 * libseccomp may not name, answer ENOSYS so that libc falls back to the
 * checked calls; io_uring (which could open files past the filter) is
 * refused likewise.  The kernel keyrings (the user's, shared across
 * namespaces) and TIOCSTI (typing into a terminal) are refused too.
 * Everything else is allowed: builds, tests, debuggers (ptrace of its
 * own children; its pid namespace shows it nothing else).
 */
#include <errno.h>
#include <fcntl.h>
#include <seccomp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "controller/engine/sandbox_int.h"

/* fchmodat2 (Linux 6.6) has the same number on every architecture;
 * libseccomp 2.5 does not know its name. */
#define NR_FCHMODAT2 452

#ifndef __O_TMPFILE
#define __O_TMPFILE (O_TMPFILE & ~O_DIRECTORY)
#endif

/* Refuse syscall nr when argument mode_arg has the bit; with flags_arg
 * >= 0, only when that argument also has flag (O_CREAT, O_TMPFILE). */
static int
deny_mode(scmp_filter_ctx ctx, int nr, unsigned mode_arg, int flags_arg,
    scmp_datum_t flag)
{
	static const scmp_datum_t bits[] = {S_ISUID, S_ISGID};
	size_t i;
	int rc = 0;

	for (i = 0; i < 2 && rc == 0; i++) {
		struct scmp_arg_cmp m = {
		    mode_arg, SCMP_CMP_MASKED_EQ, bits[i], bits[i]};

		if (flags_arg < 0) {
			rc = seccomp_rule_add(
			    ctx, SCMP_ACT_ERRNO(EPERM), nr, 1, m);
		} else {
			struct scmp_arg_cmp f = {(unsigned)flags_arg,
			    SCMP_CMP_MASKED_EQ, flag, flag};

			rc = seccomp_rule_add(
			    ctx, SCMP_ACT_ERRNO(EPERM), nr, 2, m, f);
		}
	}
	return rc;
}

static int
add_rules(scmp_filter_ctx ctx)
{
	static const int refused[] = {
	    SCMP_SYS(keyctl), SCMP_SYS(add_key), SCMP_SYS(request_key)};
	static const int nosys[] = {SCMP_SYS(openat2), SCMP_SYS(io_uring_setup),
	    SCMP_SYS(io_uring_enter), SCMP_SYS(io_uring_register)};
	size_t i;
	int rc;

	rc = deny_mode(ctx, SCMP_SYS(chmod), 1, -1, 0);
	if (rc == 0)
		rc = deny_mode(ctx, SCMP_SYS(fchmod), 1, -1, 0);
	if (rc == 0)
		rc = deny_mode(ctx, SCMP_SYS(fchmodat), 2, -1, 0);
	if (rc == 0)
		rc = deny_mode(ctx, SCMP_SYS(creat), 1, -1, 0);
	if (rc == 0)
		rc = deny_mode(ctx, SCMP_SYS(mknod), 1, -1, 0);
	if (rc == 0)
		rc = deny_mode(ctx, SCMP_SYS(mknodat), 2, -1, 0);
	if (rc == 0)
		rc = deny_mode(ctx, SCMP_SYS(open), 2, 1, O_CREAT);
	if (rc == 0)
		rc = deny_mode(ctx, SCMP_SYS(open), 2, 1, __O_TMPFILE);
	if (rc == 0)
		rc = deny_mode(ctx, SCMP_SYS(openat), 3, 2, O_CREAT);
	if (rc == 0)
		rc = deny_mode(ctx, SCMP_SYS(openat), 3, 2, __O_TMPFILE);
	for (i = 0; rc == 0 && i < sizeof(refused) / sizeof(refused[0]); i++)
		rc =
		    seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), refused[i], 0);
	for (i = 0; rc == 0 && i < sizeof(nosys) / sizeof(nosys[0]); i++)
		rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), nosys[i], 0);
	if (rc == 0)
		rc = seccomp_rule_add(
		    ctx, SCMP_ACT_ERRNO(ENOSYS), NR_FCHMODAT2, 0);
	if (rc == 0)
		rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM),
		    SCMP_SYS(ioctl), 1,
		    SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffu, TIOCSTI));
	return rc;
}

/* The program as bytes: libseccomp writes it to a descriptor, so a
 * memory file takes it and is read back. */
static int
export_bytes(unsigned char **out, size_t *len, scmp_filter_ctx ctx)
{
	unsigned char *buf = NULL;
	off_t size;
	ssize_t got;
	int fd, rc = -1;

	fd = memfd_create("storyctl-seccomp", MFD_CLOEXEC);
	if (fd < 0 || seccomp_export_bpf(ctx, fd) != 0)
		goto out;
	size = lseek(fd, 0, SEEK_END);
	if (size <= 0 || lseek(fd, 0, SEEK_SET) != 0)
		goto out;
	buf = malloc((size_t)size);
	if (buf == NULL)
		goto out;
	got = read(fd, buf, (size_t)size);
	if (got != size)
		goto out;
	*out = buf;
	*len = (size_t)size;
	buf = NULL;
	rc = 0;
out:
	free(buf);
	if (fd >= 0)
		close(fd);
	return rc;
}

int
sandbox_bpf_build(unsigned char **out, size_t *len, struct sc_err *err)
{
	scmp_filter_ctx ctx;
	int rc = 0;

	*out = NULL;
	*len = 0;
	ctx = seccomp_init(SCMP_ACT_ALLOW);
	if (ctx == NULL)
		return err_set(err, SC_EOS, "seccomp: cannot start a filter");
		/* 32-bit calls on a 64-bit kernel have numbers of their own: the
	 * same rules for them, not a way around the rules */
#if defined(__x86_64__)
	if (seccomp_arch_add(ctx, SCMP_ARCH_X86) != 0 ||
	    seccomp_arch_add(ctx, SCMP_ARCH_X32) != 0) {
		rc = err_set(err, SC_EOS, "seccomp: cannot add the x86 ABIs");
		goto out;
	}
#endif
	if (add_rules(ctx) != 0 || export_bytes(out, len, ctx) != 0)
		rc = err_set(err, SC_EOS, "seccomp: cannot build the program");
out:
	seccomp_release(ctx);
	return rc;
}

int
sandbox_bpf_fd(
    int *fd, const unsigned char *bpf, size_t len, struct sc_err *err)
{
	int f, rc = 0;

	*fd = -1;
	f = memfd_create("storyctl-seccomp", MFD_CLOEXEC);
	if (f < 0 || write(f, bpf, len) != (ssize_t)len ||
	    lseek(f, 0, SEEK_SET) != 0) {
		rc = err_set(err, SC_EOS,
		    "seccomp: cannot hand the program over: %s",
		    strerror(errno));
		if (f >= 0)
			close(f);
		goto out;
	}
	*fd = f;
out:
	return rc;
}
