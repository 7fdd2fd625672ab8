/*
 * fuzz_waithint.c - libFuzzer target for waithint_parse(): the input is
 * the tail of an agent's output.  Checks that what comes back is in the
 * ranges waithint.h states.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "strategies/waithint.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct waithint h;
	int found;

	memset(&h, 0xa5, sizeof(h));
	found = waithint_parse(&h, (const char *)data, size);
	if (found != (h.kind != WAITHINT_NONE))
		abort();
	if (memchr(h.zone, 0, sizeof(h.zone)) == NULL)
		abort();
	switch (h.kind) {
	case WAITHINT_NONE:
		break;
	case WAITHINT_DELAY:
		if (h.delay_ms < 0)
			abort();
		break;
	case WAITHINT_EPOCH:
		break;
	case WAITHINT_CLOCK:
		if (h.hour < 0 || h.hour > 23 || h.minute < 0 || h.minute > 59)
			abort();
		if ((h.month == 0) != (h.day == 0) || h.month < 0 ||
		    h.month > 12 || h.day < 0 || h.day > 31)
			abort();
		break;
	default:
		abort();
	}
	return 0;
}
