/*
 * evidence.c - checked boxes against the change that backs them
 * (docs/evidence.md).  See evidence.h.
 */
#include <stdlib.h>
#include <string.h>

#include "strategies/evidence.h"

static bool
is_box(const struct progress_item *it)
{
	return it->kind == PROGRESS_ITEM_TASK ||
	    it->kind == PROGRESS_ITEM_SUBTASK;
}

/*
 * The before box that after box a is, or -1: the first unused one with
 * the same text.  The box at the same position is tried first, so the
 * usual case (the list unchanged but for its ticks) is one comparison.
 */
static long
find_match(const struct progress_item *before, size_t nb, const bool *used,
    size_t pos, const struct progress_item *a)
{
	size_t i;

	if (pos < nb && !used[pos] && is_box(&before[pos]) &&
	    strcmp(before[pos].text, a->text) == 0)
		return (long)pos;
	for (i = 0; i < nb; i++)
		if (!used[i] && is_box(&before[i]) &&
		    strcmp(before[i].text, a->text) == 0)
			return (long)i;
	return -1;
}

static void
note_ticked(struct evidence_boxes *out, const struct progress_item *a)
{
	out->ticked++;
	if (out->nlines < EVIDENCE_LINES_MAX)
		out->lines[out->nlines++] = a->line;
}

/* An unused before box still checked: it is gone or reworded, not
 * unticked; an unused open one says nothing either. */
int
evidence_compare(struct evidence_boxes *out, const struct progress_item *before,
    size_t nb, const struct progress_item *after, size_t na, struct sc_err *err)
{
	bool *used = calloc(nb + 1, sizeof(*used));
	size_t i;
	long m;

	memset(out, 0, sizeof(*out));
	if (used == NULL)
		return err_set(err, SC_EOS, "out of memory");
	for (i = 0; i < na; i++) {
		const struct progress_item *a = &after[i];
		if (!is_box(a))
			continue;
		m = find_match(before, nb, used, i, a);
		if (m < 0) {
			/* a box the attempt added (or reworded) checked */
			if (a->checked)
				note_ticked(out, a);
			continue;
		}
		used[m] = true;
		if (a->checked && !before[m].checked) {
			note_ticked(out, a);
		} else if (!a->checked && before[m].checked) {
			if (out->unticked++ == 0)
				memcpy(out->first_unticked, a->text,
				    sizeof(out->first_unticked));
		}
	}
	free(used);
	return 0;
}

void
evidence_judge(struct evidence_verdict *out, const struct evidence_boxes *b,
    int files_changed, bool require_diff)
{
	memset(out, 0, sizeof(*out));
	out->ticked_without_change = b->ticked > 0 && files_changed == 0;
	out->unticked = b->unticked > 0;
	out->no_evidence = require_diff && out->ticked_without_change;
}

/* Open the first "[x]" of the line starting at p (end: the text's end). */
static int
untick_line(char *p, const char *end)
{
	for (; p + 2 < end && *p != '\n'; p++)
		if (p[0] == '[' && (p[1] == 'x' || p[1] == 'X') &&
		    p[2] == ']') {
			p[1] = ' ';
			return 1;
		}
	return 0;
}

int
evidence_untick(char **out, size_t *outlen, int *nchanged, const char *text,
    size_t len, const int *lines, size_t n, struct sc_err *err)
{
	char *buf = malloc(len + 1);
	char *p;
	int line = 1;
	size_t k;

	*out = NULL;
	*outlen = 0;
	*nchanged = 0;
	if (buf == NULL)
		return err_set(err, SC_EOS, "out of memory");
	memcpy(buf, text, len);
	buf[len] = '\0';
	for (p = buf; p < buf + len; line++) {
		for (k = 0; k < n; k++)
			if (lines[k] == line) {
				*nchanged += untick_line(p, buf + len);
				break;
			}
		p = memchr(p, '\n', (size_t)(buf + len - p));
		if (p == NULL)
			break;
		p++;
	}
	*out = buf;
	*outlen = len;
	return 0;
}
