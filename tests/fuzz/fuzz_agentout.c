/*
 * fuzz_agentout.c - libFuzzer target for agentout_parse(): the input is
 * the tail of an agent's combined output.  Checks agentout.h's promises
 * on result_text (valid UTF-8, no control characters but tab and
 * newline, bounded, trimmed), on the session id and on the counts.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "strategies/agentout.h"
#include "tests/fuzz/fuzz_utf8.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct agent_output *o;
	size_t len;

	o = malloc(sizeof(*o));
	if (o == NULL)
		return 0;
	memset(o, 0xa5, sizeof(*o));
	agentout_parse(o, (const char *)data, size);
	if (memchr(o->result_text, '\0', sizeof(o->result_text)) == NULL)
		abort();
	if (!fuzz_clean_utf8(o->result_text))
		abort();
	/* trimmed */
	len = strlen(o->result_text);
	if (len > 0 &&
	    (strchr(" \t\n", o->result_text[0]) != NULL ||
		strchr(" \t\n", o->result_text[len - 1]) != NULL))
		abort();
	if (o->input_tokens < -1 || o->output_tokens < -1)
		abort();
	if (o->has_cost && o->cost_usd != o->cost_usd)
		abort(); /* NaN */
	/* the session id: bounded, clean, one trimmed line */
	if (memchr(o->session_id, '\0', sizeof(o->session_id)) == NULL ||
	    !fuzz_clean_utf8(o->session_id) ||
	    strchr(o->session_id, '\n') != NULL)
		abort();
	len = strlen(o->session_id);
	if (len > 0 &&
	    (strchr(" \t", o->session_id[0]) != NULL ||
		strchr(" \t", o->session_id[len - 1]) != NULL))
		abort();
	free(o);
	return 0;
}
