/*
 * progress_heading.c - which heading opens a story's Tasks section: the
 * names BMAD and other templates give it (in the languages found in
 * real stories), headings normalised for comparison, a note in
 * parentheses or a name before a colon, the same section named again
 * (docs/stories.md).  Pure.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmark-gfm.h>

#include "strategies/progress_int.h"
#include "strategies/text.h"

/* The headings that read like BMAD's "Tasks / Subtasks" section (and the
 * names other templates give it), normalised, blanks around "/"
 * dropped.  A heading that merely mentions tasks ("Next Developer
 * Tasks", "Story 1.2: Tasks API") is used only when none of these
 * exists.  BMAD writes its templates in the project's language, so the
 * translations found in real stories are here too (docs/stories.md). */
static const char *const task_headings[] = {
    "tasks/subtasks",
    "tasks and subtasks",
    "tasks & subtasks",
    "tasks",
    "task list",
    "implementation tasks",
    "implementation plan",
    "implementation steps",
    "task breakdown",
    "development tasks",
    "dev tasks",
    /* Spanish, Portuguese, French (tâches / sous-tâches), German */
    "tareas/subtareas",
    "tareas y subtareas",
    "tareas",
    "tarefas/subtarefas",
    "tarefas e subtarefas",
    "tarefas",
    "t\xC3\xA2"
    "ches/sous-t\xC3\xA2"
    "ches",
    "t\xC3\xA2"
    "ches et sous-t\xC3\xA2"
    "ches",
    "t\xC3\xA2"
    "ches",
    "aufgaben/teilaufgaben",
    "aufgaben",
    /* Russian: задачи/подзадачи, задачи */
    "\xD0\xB7\xD0\xB0\xD0\xB4\xD0\xB0\xD1\x87\xD0\xB8/"
    "\xD0\xBF\xD0\xBE\xD0\xB4\xD0\xB7\xD0\xB0\xD0\xB4\xD0\xB0\xD1\x87\xD0\xB8",
    "\xD0\xB7\xD0\xB0\xD0\xB4\xD0\xB0\xD1\x87\xD0\xB8",
    /* Chinese, simplified and traditional: 任务/子任务, 任务, 任務/子任務, 任務 */
    "\xE4\xBB\xBB\xE5\x8A\xA1/\xE5\xAD\x90\xE4\xBB\xBB\xE5\x8A\xA1",
    "\xE4\xBB\xBB\xE5\x8A\xA1",
    "\xE4\xBB\xBB\xE5\x8B\x99/\xE5\xAD\x90\xE4\xBB\xBB\xE5\x8B\x99",
    "\xE4\xBB\xBB\xE5\x8B\x99",
    /* Japanese: タスク/サブタスク, タスク */
    "\xE3\x82\xBF\xE3\x82\xB9\xE3\x82\xAF/"
    "\xE3\x82\xB5\xE3\x83\x96\xE3\x82\xBF\xE3\x82\xB9\xE3\x82\xAF",
    "\xE3\x82\xBF\xE3\x82\xB9\xE3\x82\xAF",
};

/* Append the plain text of n's inlines to buf (len bytes, NUL-ended). */
static void
inline_text(char *buf, size_t len, cmark_node *n)
{
	cmark_node *c;
	const char *lit;
	size_t used;

	for (c = cmark_node_first_child(n); c != NULL; c = cmark_node_next(c)) {
		used = strlen(buf);
		if (used + 1 >= len)
			return;
		switch (cmark_node_get_type(c)) {
		case CMARK_NODE_TEXT:
		case CMARK_NODE_CODE:
			lit = cmark_node_get_literal(c);
			snprintf(buf + used, len - used, "%s", lit ? lit : "");
			break;
		case CMARK_NODE_SOFTBREAK:
		case CMARK_NODE_LINEBREAK:
			snprintf(buf + used, len - used, " ");
			break;
		default:
			inline_text(buf, len, c);
		}
	}
}

/*
 * The two-byte UTF-8 letter c1 c2 in lower case, into out (2 bytes):
 * upper-case Latin-1 letters ("TÂCHES") and Cyrillic ones ("ЗАДАЧИ"),
 * the capitals the headings above are written in.  Returns 2.
 */
static size_t
fold2(char *out, unsigned char c1, unsigned char c2)
{
	if (c1 == 0xC3 && c2 >= 0x80 && c2 <= 0x9E && c2 != 0x97) {
		c2 += 0x20; /* U+00C0-U+00DE, not the multiplication sign */
	} else if (c1 == 0xD0 && c2 >= 0x90 && c2 <= 0x9F) {
		c2 += 0x20; /* U+0410-U+041F */
	} else if (c1 == 0xD0 && c2 >= 0xA0 && c2 <= 0xAF) {
		c1 = 0xD1; /* U+0420-U+042F */
		c2 -= 0x20;
	} else if (c1 == 0xD0 && c2 >= 0x80 && c2 <= 0x8F) {
		c1 = 0xD1; /* U+0400-U+040F */
		c2 += 0x10;
	}
	out[0] = (char)c1;
	out[1] = (char)c2;
	return 2;
}

void
progress_heading_norm(char *out, size_t len, cmark_node *h)
{
	char raw[PROGRESS_HEAD_MAX * 2] = "";
	const char *s = raw;
	size_t o = 0;
	bool gap = false;

	inline_text(raw, sizeof(raw), h);
	/* "4. Tasks", "3) Tasks", "Step 2 - Tasks" keep their words only */
	while (*s != '\0' &&
	    (text_is_digit((unsigned char)*s) || *s == '.' || *s == ')' ||
		*s == ' ' || *s == '\t'))
		s++;
	for (; *s != '\0' && o + 1 < len; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == ' ' || c == '\t') {
			gap = o > 0;
			continue;
		}
		if (gap && o + 2 < len)
			out[o++] = ' ';
		gap = false;
		if (c >= 0xC3 && c <= 0xD0 && s[1] != '\0' && o + 2 < len) {
			o += fold2(out + o, c, (unsigned char)s[1]);
			s++;
			continue;
		}
		out[o++] = (char)text_lower(c);
	}
	while (o > 0 && (out[o - 1] == ':' || out[o - 1] == ' '))
		o--;
	out[o] = '\0';
}

/* s[0..n) without blanks at its ends and around "/", into out:
 * "tasks / subtasks" and "tasks/subtasks" are one name. */
static void
name_squeeze(char *out, size_t len, const char *s, size_t n)
{
	size_t o = 0, i;

	while (n > 0 && s[0] == ' ') {
		s++;
		n--;
	}
	while (n > 0 && s[n - 1] == ' ')
		n--;
	for (i = 0; i < n && o + 1 < len; i++) {
		if (s[i] == ' ' &&
		    ((i + 1 < n && s[i + 1] == '/') ||
			(o > 0 && out[o - 1] == '/')))
			continue;
		out[o++] = s[i];
	}
	out[o] = '\0';
}

/* Does s[0..n) name the Tasks section: the configured name (want,
 * squeezed), or one of task_headings?  The name, squeezed, into key
 * (PROGRESS_HEAD_MAX bytes). */
static bool
name_is_tasks(char *key, const char *s, size_t n, const char *want)
{
	size_t i;

	name_squeeze(key, PROGRESS_HEAD_MAX, s, n);
	if (key[0] == '\0')
		return false;
	if (want != NULL)
		return strcmp(key, want) == 0;
	for (i = 0; i < sizeof(task_headings) / sizeof(*task_headings); i++)
		if (strcmp(key, task_headings[i]) == 0)
			return true;
	return false;
}

/* The first "(" or full-width "（" in s[0..n), or NULL. */
static const char *
paren_open(const char *s, size_t n, size_t *olen)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (s[i] == '(') {
			*olen = 1;
			return s + i;
		}
		if (i + 3 <= n && memcmp(s + i, "\xEF\xBC\x88", 3) == 0) {
			*olen = 3;
			return s + i;
		}
	}
	return NULL;
}

/* Does s[0..n) name the Tasks section by itself, before a parenthesis
 * or inside one ("Задачи / Подзадачи (Tasks / Subtasks)", "Tasks /
 * Subtasks (TDD order)")? */
static bool
part_is_tasks(char *key, const char *s, size_t n, const char *want)
{
	const char *o, *in, *end = s + n;
	size_t olen = 0;

	if (name_is_tasks(key, s, n, want))
		return true;
	o = paren_open(s, n, &olen);
	if (o == NULL)
		return false;
	if (name_is_tasks(key, s, (size_t)(o - s), want))
		return true;
	in = o + olen;
	if (end > in && end[-1] == ')')
		end--;
	else if (end - in >= 3 && memcmp(end - 3, "\xEF\xBC\x89", 3) == 0)
		end -= 3;
	else
		return false;
	return name_is_tasks(key, in, (size_t)(end - in), want);
}

/*
 * Does the normalised heading norm read like the Tasks section
 * (docs/stories.md)?  Its whole text, or its part before a colon
 * (spec-kit's title "Tasks: <feature>"), each also read around a
 * parenthesis.  want: the configured heading, squeezed; NULL: the
 * built-in names.  The name it reads as into key (PROGRESS_HEAD_MAX bytes).
 */
static bool
heading_preferred(char *key, const char *norm, const char *want)
{
	const char *colon = strchr(norm, ':');

	if (part_is_tasks(key, norm, strlen(norm), want))
		return true;
	return colon != NULL &&
	    part_is_tasks(key, norm, (size_t)(colon - norm), want);
}

/* The heading whose section holds the tasks (progress.h), or NULL;
 * *any_heading tells whether the document has headings at all. */
cmark_node *
progress_heading_choose(cmark_node *doc, const char *want, bool *any_heading)
{
	cmark_node *n, *first = NULL, *mention = NULL;
	char norm[PROGRESS_HEAD_MAX], key[PROGRESS_HEAD_MAX];

	*any_heading = false;
	for (n = cmark_node_first_child(doc); n != NULL;
	     n = cmark_node_next(n)) {
		if (cmark_node_get_type(n) != CMARK_NODE_HEADING)
			continue;
		progress_heading_norm(norm, sizeof(norm), n);
		if (heading_preferred(key, norm, want))
			return n;
		/* a title (the first heading, at level 1) names the story,
		 * not its task list, even when it says "tasks" */
		if (want == NULL && mention == NULL && strstr(norm, "task") &&
		    !(first == NULL && cmark_node_get_heading_level(n) == 1))
			mention = n;
		/* the title alone does not divide the story into sections:
		 * "# Story 1.2" over a bare checklist is one section */
		if (first != NULL || cmark_node_get_heading_level(n) != 1)
			*any_heading = true;
		if (first == NULL)
			first = n;
	}
	return mention;
}

/* Is heading h the end of the section that heading start opened?
 * Not when it is the same heading again ("## Tasks / Subtasks" written
 * twice) or names the same section ("## Tasks: Backend", "## Tasks:
 * Frontend"; docs/stories.md). */
bool
progress_heading_ends(cmark_node *start, cmark_node *h, const char *want)
{
	char a[PROGRESS_HEAD_MAX], b[PROGRESS_HEAD_MAX], ka[PROGRESS_HEAD_MAX],
	    kb[PROGRESS_HEAD_MAX];

	if (cmark_node_get_heading_level(h) >
	    cmark_node_get_heading_level(start))
		return false;
	progress_heading_norm(a, sizeof(a), start);
	progress_heading_norm(b, sizeof(b), h);
	if (strcmp(a, b) == 0)
		return false;
	return !(heading_preferred(ka, a, want) &&
	    heading_preferred(kb, b, want) && strcmp(ka, kb) == 0);
}

void
progress_heading_want(char *want, size_t len, const char *configured)
{
	cmark_node *h = cmark_node_new(CMARK_NODE_HEADING);
	cmark_node *t = cmark_node_new(CMARK_NODE_TEXT);
	char norm[PROGRESS_HEAD_MAX];

	cmark_node_set_literal(t, configured);
	cmark_node_append_child(h, t);
	progress_heading_norm(norm, sizeof(norm), h);
	cmark_node_free(h);
	name_squeeze(want, len, norm, strlen(norm));
}

/* A heading as its author sees it: "## Tasks / Subtasks". */
void
progress_heading_written(char *out, size_t len, cmark_node *h)
{
	char raw[PROGRESS_HEAD_MAX * 2] = "", marks[8];
	int level = cmark_node_get_heading_level(h);

	if (level < 1 || level > 6)
		level = 1;
	memset(marks, '#', (size_t)level);
	marks[level] = ' ';
	inline_text(raw, sizeof(raw), h);
	memcpy(out, marks, (size_t)level + 1);
	text_clean(out + level + 1, len - (size_t)level - 1, raw, strlen(raw),
	    TEXT_COLLAPSE | TEXT_MARK_INVALID | TEXT_TRIM, NULL);
}
