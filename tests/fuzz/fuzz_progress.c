/*
 * fuzz_progress.c - libFuzzer target for progress_parse() (SPEC 2): the
 * input is a story file's bytes.  Beyond crashes it checks the header's
 * promises: 0 <= completed <= total, and a stalled task is named exactly
 * when a task is unchecked.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "strategies/progress.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct progress p;

	memset(&p, 0xa5, sizeof(p));
	progress_parse(&p, (const char *)data, size);
	if (p.tasks_completed < 0 || p.tasks_completed > p.tasks_total)
		abort();
	if (memchr(p.stalled_task, '\0', sizeof(p.stalled_task)) == NULL)
		abort();
	if ((p.tasks_completed < p.tasks_total) != (p.stalled_task[0] != '\0'))
		abort();
	return 0;
}
