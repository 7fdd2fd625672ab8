/* deadend.c - see deadend.h (docs/classification.md#dead-ends). */
#include <string.h>

#include "strategies/classify_int.h"
#include "strategies/deadend.h"
#include "strategies/text.h"

/* A line that says nothing of the state the CLI is in: blank, or a
 * frame of the stack trace node prints under each failed retry
 * ("    at async retryWithBackoff (file:///…)"). */
static bool
noise(const char *s, size_t n)
{
	size_t i = 0;

	while (i < n && text_is_space((unsigned char)s[i]))
		i++;
	if (i == n)
		return true;
	return n - i > 3 && memcmp(s + i, "at ", 3) == 0;
}

/* How many of the latest lines may follow a wait announcement: a CLI's
 * chatter on stderr ("[STARTUP] Cannot measure phase …", printed by
 * gemini on a timer while it sleeps) does not make the wait stale. */
#define ANNOUNCE_LINES 3

/* The latest line of t[0..len) that is not noise: *line, *n; false when
 * there is none. */
static bool
latest_line(const char **line, size_t *n, const char *t, size_t len)
{
	size_t end = len, start;

	while (end > 0) {
		start = end;
		while (start > 0 && t[start - 1] != '\n')
			start--;
		if (!noise(t + start, end - start)) {
			*line = t + start;
			*n = end - start;
			return true;
		}
		if (start == 0)
			break;
		end = start - 1;
	}
	return false;
}

void
deadend_look(struct deadend_out *out, struct deadend_state *st,
    const struct deadend_in *in)
{
	const char *line = NULL;
	size_t n = 0;
	enum kind k;

	memset(out, 0, sizeof(*out));
	if (in->tail == NULL || !latest_line(&line, &n, in->tail, in->len)) {
		st->offline = false;
		return;
	}
	/* a wait announced by one of the latest lines: the caller weighs
	 * it.  A structured event after it (a '{' line: the CLI went on
	 * with its work) makes it old news. */
	{
		const char *l = line;
		size_t ln = n, before = (size_t)(line - in->tail);
		int i;

		for (i = 0; i < ANNOUNCE_LINES; i++) {
			if (ln > 0 && l[0] == '{')
				break;
			if (waithint_parse(&out->hint, l, ln)) {
				out->kind = DEADEND_ANNOUNCED;
				break;
			}
			if (before == 0 ||
			    !latest_line(&l, &ln, in->tail, before - 1))
				break;
			before = (size_t)(l - in->tail);
		}
	}
	k = classify_builtin_kind(line, n);
	if (k != K_NETWORK && k != K_NETWORK_WAIT) {
		st->offline = false;
		return;
	}
	if (!st->offline) {
		st->offline = true;
		st->offline_since_ms = in->now_ms;
	}
	/* offline long enough decides, whatever short retry it announces */
	if (in->network_stall_ms > 0 &&
	    in->now_ms - st->offline_since_ms >= in->network_stall_ms)
		out->kind = DEADEND_NETWORK;
}
