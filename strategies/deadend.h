/*
 * deadend.h - an attempt that cannot succeed, seen in its output while
 * it runs (docs/classification.md#dead-ends).  Pure: the caller keeps
 * the state between looks and passes the clock in.
 *
 * Two dead ends cost a whole timeout_s before: a CLI that keeps
 * reconnecting to an API it cannot reach (codex prints "Reconnecting...
 * waiting for network" for ever), and a CLI that announces an internal
 * retry or wait far longer than any wait storyctl would take (gemini's
 * "Your quota will reset after 8h44m7s.. Retrying after 35606439ms...").
 * The first ends as `network` once the output has shown nothing but the
 * failure for network_stall_s; the second at once, classified by what it
 * announced.
 */
#ifndef STORYCTL_DEADEND_H
#define STORYCTL_DEADEND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "strategies/waithint.h"

/* What the caller keeps from one look to the next (zeroed at start). */
struct deadend_state {
	bool offline; /* the output's latest line is a network failure */
	int64_t offline_since_ms; /* ... and has been since then */
};

struct deadend_in {
	const char *tail; /* the output's last bytes, in order */
	size_t len;
	int64_t now_ms; /* any clock, the same at every look */
	int64_t network_stall_ms; /* 0: never ended for the network */
};

enum deadend_kind {
	DEADEND_NONE = 0,
	DEADEND_NETWORK, /* offline for network_stall_ms */
	DEADEND_ANNOUNCED /* the latest line announces a wait: the caller
			   * resolves it and compares it with max_wait_s */
};

struct deadend_out {
	enum deadend_kind kind;
	struct waithint hint; /* DEADEND_ANNOUNCED: the wait announced */
};

void deadend_look(struct deadend_out *out, struct deadend_state *st,
    const struct deadend_in *in);

#endif
