/*
 * fuzz_classify.c - libFuzzer target for classify_attempt().
 *
 * Input: 4 header bytes, then the output tail.
 *   byte 0: exit status: 0, 1, 2, 127, 137 or -1 (killed by a signal)
 *   byte 1: flags: timed_out, stalled, interrupted, gate_failed, and
 *           whether the policy pattern lists are given
 *   byte 2: tasks_total (0..15) and tasks_completed (0..15, clamped)
 *   byte 3: the signal when killed
 * Checks classify.h's promises: a known outcome, a bounded message, and
 * a clean exit with every box checked and no failed gate is a success
 * whatever the output says.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "strategies/classify.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define HDR 4

static struct strlist network_on, permanent_on, retry_on;

static void
patterns_init(void)
{
	static int done;

	if (done)
		return;
	done = 1;
	/* static lists, alive for the whole run: not leaks */
	if (strlist_push(&network_on, "proxy unreachable") < 0 ||
	    strlist_push(&network_on, "vpn down") < 0 ||
	    strlist_push(&permanent_on, "license expired") < 0 ||
	    strlist_push(&permanent_on, "Forbidden") < 0 ||
	    strlist_push(&retry_on, "overloaded") < 0 ||
	    strlist_push(&retry_on, "try again") < 0)
		abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const int exits[] = {0, 1, 2, 127, 137, -1, 0, 1};
	struct classify_input in;
	struct classification out;
	char *tail = NULL;
	size_t tlen;

	if (size < HDR)
		return 0;
	patterns_init();
	memset(&in, 0, sizeof(in));
	in.exit_code = exits[data[0] & 7];
	in.term_signal = in.exit_code == -1 ? 1 + data[3] % 31 : 0;
	in.timed_out = (data[1] & 1) != 0;
	in.stalled = (data[1] & 2) != 0;
	in.interrupted = (data[1] & 4) != 0;
	in.gate_failed = (data[1] & 8) != 0;
	if (data[1] & 16) {
		in.network_on = &network_on;
		in.permanent_on = &permanent_on;
		in.retry_on = &retry_on;
	}
	in.tasks_total = data[2] & 15;
	in.tasks_completed = data[2] >> 4;
	if (in.tasks_completed > in.tasks_total)
		in.tasks_completed = in.tasks_total;
	/* an exactly sized copy so that ASan sees any overread */
	tlen = size - HDR;
	if (tlen > 0) {
		tail = malloc(tlen);
		if (tail == NULL)
			return 0;
		memcpy(tail, data + HDR, tlen);
	}
	in.tail = tail;
	in.tail_len = tlen;

	memset(&out, 0xa5, sizeof(out));
	classify_attempt(&out, &in);
	if ((int)out.outcome <= (int)OUTCOME_NONE ||
	    (int)out.outcome >= (int)OUTCOME__COUNT)
		abort();
	if ((int)out.code < (int)ERRC_NONE || (int)out.code >= (int)ERRC__COUNT)
		abort();
	if (out.code != ERRC_NONE && errcode_outcome(out.code) != out.outcome)
		abort();
	if ((out.outcome == OUTCOME_SUCCESS) != (out.code == ERRC_NONE))
		abort();
	if (memchr(out.message, '\0', sizeof(out.message)) == NULL)
		abort();
	if (in.exit_code == 0 && !in.timed_out && !in.stalled &&
	    !in.interrupted && !in.gate_failed && in.tasks_total > 0 &&
	    in.tasks_completed == in.tasks_total &&
	    out.outcome != OUTCOME_SUCCESS)
		abort();
	if (in.interrupted && out.outcome != OUTCOME_INTERRUPTED)
		abort();
	free(tail);
	return 0;
}
