/*
 * progress.c - see progress.h.
 *
 * One pass over the lines.  Every unindented checkbox is counted twice:
 * into the whole-file tally and, while inside the first "tasks" heading,
 * into the scoped tally; at the end the scoped tally wins when such a
 * heading exists.  Nothing here trusts the bytes: lines end at '\n' (a
 * '\r' before it is dropped), NUL is an ordinary byte, and the stalled
 * task text is re-encoded as valid UTF-8 without control characters
 * before it can reach a prompt, the database or JSON.
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "strategies/progress.h"
#include "strategies/text.h"

struct tally {
	int total;
	int done;
	const char *stalled; /* text of the first unchecked task */
	size_t stalled_len;
	int stalled_index; /* its 1-based number; 0 = none yet */
};

enum scope { SCOPE_NONE = 0, SCOPE_IN, SCOPE_ENDED };

static bool
is_blank(char c)
{
	return c == ' ' || c == '\t';
}

static void
trim(const char **s, size_t *len)
{
	while (*len > 0 && (is_blank(**s) || **s == '\r')) {
		(*s)++;
		(*len)--;
	}
	while (*len > 0 && (is_blank((*s)[*len - 1]) || (*s)[*len - 1] == '\r'))
		(*len)--;
}

static char
lower(char c)
{
	if (c >= 'A' && c <= 'Z')
		return (char)(c - 'A' + 'a');
	return c;
}

/* Whether the len bytes at s contain "tasks" in any case. */
static bool
mentions_tasks(const char *s, size_t len)
{
	static const char word[] = "tasks";
	size_t wlen = sizeof(word) - 1;
	size_t i, j;

	for (i = 0; i + wlen <= len; i++) {
		for (j = 0; j < wlen; j++)
			if (lower(s[i + j]) != word[j])
				break;
		if (j == wlen)
			return true;
	}
	return false;
}

/*
 * A fence line is optional indentation then at least three '`' or '~'.
 * Returns the run length (0 when the line is no fence) and sets *ch and
 * *rest_blank (nothing but blanks after the run).
 */
static size_t
fence_run(const char *s, size_t len, char *ch, bool *rest_blank)
{
	size_t i = 0, run = 0, k;

	while (i < len && is_blank(s[i]))
		i++;
	if (i >= len || (s[i] != '`' && s[i] != '~'))
		return 0;
	*ch = s[i];
	while (i + run < len && s[i + run] == *ch)
		run++;
	if (run < 3)
		return 0;
	*rest_blank = true;
	for (k = i + run; k < len; k++) {
		if (!is_blank(s[k]))
			*rest_blank = false;
		/* CommonMark: a backtick fence's info has no backtick. */
		if (*ch == '`' && s[k] == '`')
			return 0;
	}
	return run;
}

/* ATX heading: up to 3 spaces, 1-6 '#', then a blank or the end.
 * Returns the level (0 = not a heading) and the text. */
static int
heading_level(const char *s, size_t len, const char **text, size_t *text_len)
{
	size_t i = 0;
	int level = 0;

	while (i < len && i < 3 && s[i] == ' ')
		i++;
	while (i < len && s[i] == '#' && level < 7) {
		level++;
		i++;
	}
	if (level == 0 || level > 6)
		return 0;
	if (i < len && !is_blank(s[i]))
		return 0;
	*text = s + i;
	*text_len = len - i;
	trim(text, text_len);
	return level;
}

/* "- [ ] text" with the bullet in column 0.  Returns whether the line is
 * a task and sets *checked and the (trimmed) text. */
static bool
task_item(const char *s, size_t len, bool *checked, const char **text,
    size_t *text_len)
{
	size_t i = 1;

	if (len < 5 || (s[0] != '-' && s[0] != '*' && s[0] != '+'))
		return false;
	if (!is_blank(s[1]))
		return false;
	while (i < len && is_blank(s[i]))
		i++;
	if (i + 3 > len || s[i] != '[' || s[i + 2] != ']')
		return false;
	if (s[i + 1] != ' ' && s[i + 1] != 'x' && s[i + 1] != 'X')
		return false;
	if (i + 3 < len && !is_blank(s[i + 3]))
		return false;
	*checked = s[i + 1] != ' ';
	*text = s + i + 3;
	*text_len = len - (i + 3);
	trim(text, text_len);
	return true;
}

static void
tally_add(struct tally *t, bool checked, const char *text, size_t text_len)
{
	t->total++;
	if (checked) {
		t->done++;
	} else if (t->stalled_index == 0) {
		t->stalled = text;
		t->stalled_len = text_len;
		t->stalled_index = t->total;
	}
}

/*
 * Copy text into dst (size cap) as valid UTF-8 (text_clean()): an
 * invalid byte becomes '?', a control character (C0, DEL, C1) or an
 * escape sequence a space; trailing blanks go.
 */
static void
copy_clean(char *dst, size_t cap, const char *text, size_t len)
{
	size_t o = text_clean(
	    dst, cap, text, len, TEXT_SPACES | TEXT_MARK_INVALID, NULL);

	while (o > 0 && dst[o - 1] == ' ')
		dst[--o] = '\0';
}

void
progress_parse(struct progress *out, const char *text, size_t len)
{
	struct tally all, scoped;
	const struct tally *use = NULL;
	enum scope scope = SCOPE_NONE;
	int scope_level = 0, level;
	const char *p = text, *end = text, *nl, *line, *t;
	size_t line_len, t_len, run;
	bool in_fence = false, checked, rest_blank;
	char fence_ch = 0, ch;
	size_t fence_len = 0;

	memset(out, 0, sizeof(*out));
	memset(&all, 0, sizeof(all));
	memset(&scoped, 0, sizeof(scoped));
	if (text != NULL)
		end = text + len;
	/* A UTF-8 byte-order mark (editors on Windows write one) is not
	 * text: left in place it would hide the first line's task or
	 * heading.  Only at the very start, as a BOM is nowhere else. */
	if (len >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0)
		p += 3;

	while (p != end) {
		line = p;
		nl = memchr(p, '\n', (size_t)(end - p));
		line_len = nl != NULL ? (size_t)(nl - p) : (size_t)(end - p);
		p = nl != NULL ? nl + 1 : end;
		if (line_len > 0 && line[line_len - 1] == '\r')
			line_len--;

		ch = 0;
		rest_blank = false;
		run = fence_run(line, line_len, &ch, &rest_blank);
		if (in_fence) {
			if (run >= fence_len && ch == fence_ch && rest_blank)
				in_fence = false;
			continue;
		}
		if (run > 0) {
			in_fence = true;
			fence_ch = ch;
			fence_len = run;
			continue;
		}

		level = heading_level(line, line_len, &t, &t_len);
		if (level > 0) {
			if (scope == SCOPE_IN && level <= scope_level)
				scope = SCOPE_ENDED;
			if (scope == SCOPE_NONE && mentions_tasks(t, t_len)) {
				scope = SCOPE_IN;
				scope_level = level;
			}
			continue;
		}

		if (!task_item(line, line_len, &checked, &t, &t_len))
			continue;
		tally_add(&all, checked, t, t_len);
		if (scope == SCOPE_IN)
			tally_add(&scoped, checked, t, t_len);
	}

	use = scope != SCOPE_NONE ? &scoped : &all;
	out->tasks_total = use->total;
	out->tasks_completed = use->done;
	if (use->stalled_index > 0) {
		copy_clean(out->stalled_task, sizeof(out->stalled_task),
		    use->stalled, use->stalled_len);
		/* An empty box still needs a name in the next prompt. */
		if (out->stalled_task[0] == '\0')
			snprintf(out->stalled_task, sizeof(out->stalled_task),
			    "task %d", use->stalled_index);
	}
}
