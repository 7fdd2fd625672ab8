/*
 * fuzz_progress.c - libFuzzer target for progress_parse() (docs/stories.md):
 * the input is a story file's bytes.  Beyond crashes it checks the header's
 * promises: 0 <= completed <= total, and a stalled task is named exactly
 * when a task is unchecked.  progress_items() must agree with it: as
 * many task items as tasks, as many skipped items as skipped_items, each
 * text and why NUL-ended.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "strategies/progress.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct progress p, q;
	struct progress_item *it = NULL;
	struct sc_err err;
	size_t n = 0, i;
	int tasks = 0, skipped = 0;

	memset(&p, 0xa5, sizeof(p));
	progress_parse(&p, (const char *)data, size);
	if (p.counts.tasks_completed < 0 ||
	    p.counts.tasks_completed > p.counts.tasks_total)
		abort();
	if (memchr(p.stalled_task, '\0', sizeof(p.stalled_task)) == NULL)
		abort();
	if ((p.counts.tasks_completed < p.counts.tasks_total) !=
	    (p.stalled_task[0] != '\0'))
		abort();
	if (progress_items(&it, &n, &q, (const char *)data, size, NULL, &err) !=
	    0)
		return 0; /* out of memory */
	for (i = 0; i < n; i++) {
		tasks += it[i].kind == PROGRESS_ITEM_TASK;
		skipped += it[i].kind == PROGRESS_ITEM_SKIPPED;
		if (memchr(it[i].text, '\0', sizeof(it[i].text)) == NULL ||
		    memchr(it[i].why, '\0', sizeof(it[i].why)) == NULL)
			abort();
	}
	free(it);
	if (q.counts.tasks_total != p.counts.tasks_total ||
	    q.skipped_items != p.skipped_items ||
	    (n < PROGRESS_ITEMS_MAX &&
		(tasks != p.counts.tasks_total || skipped != p.skipped_items)))
		abort();
	return 0;
}
