/*
 * sandbox_int.h - what sandbox.c and sandbox_seccomp.c share (not an
 * interface).
 */
#ifndef STORYCTL_SANDBOX_INT_H
#define STORYCTL_SANDBOX_INT_H

#include <stddef.h>

#include "common/err.h"

/* The seccomp program of docs/sandbox.md#the-system-calls as bytes,
 * *out malloc'd. */
int sandbox_bpf_build(unsigned char **out, size_t *len, struct sc_err *err);

/* A new descriptor holding those bytes, read from the start (one an
 * attempt: bubblewrap reads it to the end). */
int sandbox_bpf_fd(
    int *fd, const unsigned char *bpf, size_t len, struct sc_err *err);

#endif
