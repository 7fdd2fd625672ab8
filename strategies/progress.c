/*
 * progress.c - see progress.h; the rules are docs/stories.md.
 *
 * The story is parsed by cmark-gfm with its tasklist extension, the
 * parser GitHub renders markdown with, so a task is exactly what the
 * author sees as a checkbox on GitHub: code fences, HTML blocks, block
 * quotes, list nesting and indentation all follow CommonMark.  The
 * hand-written line scanner this replaces disagreed with GitHub on real
 * stories (ordered task lists, an unclosed fence inside a list item, a
 * task indented by one space: issue 13).
 *
 * cmark-gfm keeps its extensions in a process-wide registry, filled once
 * by cmark_gfm_core_extensions_ensure_registered(); nothing else here
 * has state.  Nothing trusts the bytes: cmark replaces NUL and invalid
 * UTF-8, and the stalled task's text is cleaned (text_clean) before it
 * can reach a prompt, the database or JSON.
 */
#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmark-gfm-core-extensions.h>
#include <cmark-gfm.h>

#include "strategies/progress.h"
#include "strategies/text.h"

/* normalised heading text: lower case, blanks folded, numbering and a
 * trailing colon dropped */
#define HEAD_MAX 128

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

static bool
is_task_item(cmark_node *n)
{
	return cmark_node_get_type(n) == CMARK_NODE_ITEM &&
	    strcmp(cmark_node_get_type_string(n), "tasklist") == 0;
}

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

static void
heading_norm(char *out, size_t len, cmark_node *h)
{
	char raw[HEAD_MAX * 2] = "";
	const char *s = raw;
	size_t o = 0;
	bool gap = false;

	inline_text(raw, sizeof(raw), h);
	/* "4. Tasks", "3) Tasks", "Step 2 - Tasks" keep their words only */
	while (*s != '\0' &&
	    (isdigit((unsigned char)*s) || *s == '.' || *s == ')' ||
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
		out[o++] = (char)tolower(c);
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
 * (HEAD_MAX bytes). */
static bool
name_is_tasks(char *key, const char *s, size_t n, const char *want)
{
	size_t i;

	name_squeeze(key, HEAD_MAX, s, n);
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
 * built-in names.  The name it reads as into key (HEAD_MAX bytes).
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
static cmark_node *
choose_heading(cmark_node *doc, const char *want, bool *any_heading)
{
	cmark_node *n, *first = NULL, *mention = NULL;
	char norm[HEAD_MAX], key[HEAD_MAX];

	*any_heading = false;
	for (n = cmark_node_first_child(doc); n != NULL;
	     n = cmark_node_next(n)) {
		if (cmark_node_get_type(n) != CMARK_NODE_HEADING)
			continue;
		heading_norm(norm, sizeof(norm), n);
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
static bool
section_ends(cmark_node *start, cmark_node *h, const char *want)
{
	char a[HEAD_MAX], b[HEAD_MAX], ka[HEAD_MAX], kb[HEAD_MAX];

	if (cmark_node_get_heading_level(h) >
	    cmark_node_get_heading_level(start))
		return false;
	heading_norm(a, sizeof(a), start);
	heading_norm(b, sizeof(b), h);
	if (strcmp(a, b) == 0)
		return false;
	return !(heading_preferred(ka, a, want) &&
	    heading_preferred(kb, b, want) && strcmp(ka, kb) == 0);
}

/*
 * One walk of the document counts the tasks and, for progress_items(),
 * lists every item it saw: the counts and the listing can never
 * disagree.  The source is read again for an item's text; the walk goes
 * through the document in order, so a cursor that only moves forward
 * finds each line without rescanning the file.
 */
struct walk {
	struct progress *p;
	const char *text;
	size_t len;
	const char *cur; /* start of line cur_line */
	int cur_line;
	bool stalled;
	bool want; /* list the items */
	bool oom;
	struct progress_item *items;
	size_t n, cap;
	/* the section's heading as written ("## Tasks / Subtasks"); ""
	 * when the whole file is the section */
	char where[72];
};

/* Start of 1-based source line `line` (the end when there is none). */
static const char *
line_at(struct walk *w, int line)
{
	const char *end = w->text + w->len, *nl;

	if (w->cur == NULL || line < w->cur_line) {
		w->cur = w->text;
		w->cur_line = 1;
	}
	while (w->cur_line < line && w->cur < end) {
		nl = memchr(w->cur, '\n', (size_t)(end - w->cur));
		w->cur = nl != NULL ? nl + 1 : end;
		w->cur_line++;
	}
	return w->cur;
}

/*
 * The source of line `line` from column col (1-based, in bytes) to its
 * end, without the line end, into buf (NUL bytes included: text_clean()
 * drops them).  So a task's text keeps its backticks and stars.
 */
static size_t
src_line(char *buf, size_t len, struct walk *w, int line, int col)
{
	const char *p = line_at(w, line), *end = w->text + w->len, *nl;
	size_t n;

	buf[0] = '\0';
	if (p == NULL)
		return 0;
	nl = memchr(p, '\n', (size_t)(end - p));
	n = (size_t)((nl != NULL ? nl : end) - p);
	if (col < 1 || (size_t)col > n + 1)
		return 0;
	p += col - 1;
	n -= (size_t)(col - 1);
	if (n > 0 && p[n - 1] == '\r')
		n--;
	if (n >= len)
		n = len - 1;
	memcpy(buf, p, n);
	buf[n] = '\0';
	return n;
}

/* The first source line of an item's text: after the box of a task
 * item (cmark-gfm starts its paragraph there), the whole text of
 * another item. */
static size_t
item_source(char *buf, size_t len, struct walk *w, cmark_node *item)
{
	cmark_node *para = cmark_node_first_child(item);

	buf[0] = '\0';
	if (para == NULL || cmark_node_get_type(para) != CMARK_NODE_PARAGRAPH)
		return 0;
	return src_line(buf, len, w, cmark_node_get_start_line(para),
	    cmark_node_get_start_column(para));
}

static void
item_add(struct walk *w, int line, enum progress_item_kind kind, bool checked,
    const char *text, size_t tlen, const char *why)
{
	struct progress_item *it, *grown;
	size_t cap;

	if (!w->want || w->oom || w->n >= PROGRESS_ITEMS_MAX)
		return;
	if (w->n == w->cap) {
		cap = w->cap > 0 ? w->cap * 2 : 32;
		if (cap > PROGRESS_ITEMS_MAX)
			cap = PROGRESS_ITEMS_MAX;
		grown = realloc(w->items, cap * sizeof(*grown));
		if (grown == NULL) {
			w->oom = true;
			return;
		}
		w->items = grown;
		w->cap = cap;
	}
	it = &w->items[w->n++];
	memset(it, 0, sizeof(*it));
	it->line = line;
	it->kind = kind;
	it->checked = checked;
	text_clean(it->text, sizeof(it->text), text, tlen,
	    TEXT_COLLAPSE | TEXT_MARK_INVALID | TEXT_TRIM, NULL);
	text_clean(it->why, sizeof(it->why), why, strlen(why),
	    TEXT_COLLAPSE | TEXT_MARK_INVALID | TEXT_TRIM, NULL);
}

/* Check marks and boxes written as emoji instead of "[ ]"/"[x]". */
static const struct {
	const char *mark;
	bool checked;
} emoji_boxes[] = {
    {"\xE2\x9C\x85", true}, /* U+2705 white heavy check mark */
    {"\xE2\x9C\x94", true}, /* U+2714 heavy check mark */
    {"\xE2\x9C\x93", true}, /* U+2713 check mark */
    {"\xE2\x98\x91", true}, /* U+2611 ballot box with check */
    {"\xE2\x98\x92", true}, /* U+2612 ballot box with x */
    {"\xE2\x98\x90", false}, /* U+2610 ballot box */
    {"\xE2\xAC\x9C", false}, /* U+2B1C white large square */
    {"\xF0\x9F\x94\xB2", false}, /* U+1F532 black square button */
    {"\xF0\x9F\x94\xB3", false}, /* U+1F533 white square button */
};

/*
 * Whether an item whose text begins with s[0..n) looks like a task to
 * its author though GitHub shows no checkbox (docs/stories.md): another
 * mark in the box ("[-]", "[~]", "[/]"), a check-mark emoji, Kiro's
 * optional "[ ]*", a box with no text or no space after it, "[]".
 * Fills why and *checked when so.
 */
static bool
box_like(char *why, size_t wlen, bool *checked, const char *s, size_t n)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t i, k;

	*checked = false;
	for (i = 0; i < sizeof(emoji_boxes) / sizeof(*emoji_boxes); i++) {
		k = strlen(emoji_boxes[i].mark);
		if (n >= k && memcmp(s, emoji_boxes[i].mark, k) == 0) {
			*checked = emoji_boxes[i].checked;
			snprintf(why, wlen, "not counted: %s is not a checkbox",
			    emoji_boxes[i].mark);
			return true;
		}
	}
	if (n < 2 || s[0] != '[')
		return false;
	if (s[1] == ']') {
		snprintf(why, wlen,
		    "not counted: [] is not a checkbox (write [ ] or [x])");
		return true;
	}
	if (s[1] == ' ' || s[1] == 'x' || s[1] == 'X') {
		if (n < 3 || s[2] != ']')
			return false;
		*checked = s[1] != ' ';
		for (i = 3; i < n && (s[i] == ' ' || s[i] == '\t'); i++)
			;
		if (i == n) {
			snprintf(why, wlen,
			    "not counted: a box with no text is not a "
			    "checkbox");
			return true;
		}
		if (s[3] == '*') {
			snprintf(why, wlen,
			    "not counted: an optional task ([%c]*) is not a "
			    "checkbox",
			    s[1]);
			return true;
		}
		/* "[x](url)" and "[x][ref]" are links */
		if (i == 3 && s[3] != '(' && s[3] != '[') {
			snprintf(
			    why, wlen, "not counted: no space after the box");
			return true;
		}
		return false;
	}
	/* one other character in the box; digits and letters are a
	 * reference ("[1]"), except an "o" */
	k = text_utf8_len(u + 1, n - 1);
	if (k == 0 || s[1] == '[' || s[1] == '\t' ||
	    (k == 1 && isalnum(u[1]) && s[1] != 'o' && s[1] != 'O'))
		return false;
	if (n < k + 2 || s[k + 1] != ']' ||
	    (n > k + 2 && s[k + 2] != ' ' && s[k + 2] != '\t'))
		return false;
	snprintf(
	    why, wlen, "not counted: [%.*s] is not a checkbox", (int)k, s + 1);
	return true;
}

/* An item of the Tasks section that is not a task item: count it as
 * skipped when it looks like one. */
static void
note_skipped(struct walk *w, cmark_node *item)
{
	char src[PROGRESS_TASK_MAX * 2], why[PROGRESS_WHY_MAX];
	size_t n;
	bool checked;

	n = item_source(src, sizeof(src), w, item);
	if (!box_like(why, sizeof(why), &checked, src, n))
		return;
	if (w->p->skipped_items++ == 0) {
		w->p->skipped_first_line = cmark_node_get_start_line(item);
		text_clean(w->p->skipped_first, sizeof(w->p->skipped_first),
		    src, n, TEXT_COLLAPSE | TEXT_MARK_INVALID | TEXT_TRIM,
		    NULL);
	}
	item_add(w, cmark_node_get_start_line(item), PROGRESS_ITEM_SKIPPED,
	    checked, src, n, why);
}

/* Boxes written in a code or HTML block: listed, never counted. */
static void
scan_literal(struct walk *w, cmark_node *n, const char *why)
{
	const char *lit = cmark_node_get_literal(n), *p, *e, *nl;
	int line = cmark_node_get_start_line(n), d, flen, foff;
	char fch;

	if (!w->want || lit == NULL)
		return;
	if (cmark_node_get_type(n) == CMARK_NODE_CODE_BLOCK &&
	    cmark_node_get_fenced(n, &flen, &foff, &fch))
		line++; /* the opening fence */
	for (p = lit; *p != '\0'; p = nl != NULL ? nl + 1 : e, line++) {
		nl = strchr(p, '\n');
		e = nl != NULL ? nl : p + strlen(p);
		while (p < e && (*p == ' ' || *p == '\t'))
			p++;
		for (d = 0; p + d < e && isdigit((unsigned char)p[d]) && d < 9;
		     d++)
			;
		if (d > 0 && p + d < e && (p[d] == '.' || p[d] == ')'))
			p += d + 1;
		else if (p < e && (*p == '-' || *p == '*' || *p == '+'))
			p++;
		else
			continue;
		if (p == e || (*p != ' ' && *p != '\t'))
			continue;
		while (p < e && (*p == ' ' || *p == '\t'))
			p++;
		if (e - p < 3 || p[0] != '[' || p[2] != ']' ||
		    (p[1] != ' ' && p[1] != 'x' && p[1] != 'X') ||
		    (e - p > 3 && p[3] != ' ' && p[3] != '\t'))
			continue;
		item_add(w, line, PROGRESS_ITEM_IGNORED, p[1] != ' ', p + 3,
		    (size_t)(e - p - 3), why);
	}
}

static bool
item_checked(cmark_node *n)
{
	return cmark_gfm_extensions_get_tasklist_item_checked(n);
}

/* The line of the item that holds n. */
static int
parent_item_line(cmark_node *n)
{
	for (n = cmark_node_parent(n); n != NULL; n = cmark_node_parent(n))
		if (cmark_node_get_type(n) == CMARK_NODE_ITEM)
			return cmark_node_get_start_line(n);
	return 0;
}

/* Everything below an item of a top-level list of the section: task
 * items at any depth are subtasks. */
static void
walk_sub(struct walk *w, cmark_node *top)
{
	char src[PROGRESS_TASK_MAX * 2], why[PROGRESS_WHY_MAX];
	cmark_iter *it = cmark_iter_new(top);
	cmark_event_type ev;
	cmark_node *n;
	size_t len;
	bool checked;

	if (it == NULL)
		return;
	while ((ev = cmark_iter_next(it)) != CMARK_EVENT_DONE) {
		n = cmark_iter_get_node(it);
		if (ev != CMARK_EVENT_ENTER || n == top)
			continue;
		switch (cmark_node_get_type(n)) {
		case CMARK_NODE_ITEM:
			if (!is_task_item(n)) {
				note_skipped(w, n);
				break;
			}
			checked = item_checked(n);
			w->p->subtasks_total++;
			if (checked)
				w->p->subtasks_completed++;
			if (!w->want)
				break;
			len = item_source(src, sizeof(src), w, n);
			snprintf(why, sizeof(why), "subtask of line %d",
			    parent_item_line(n));
			item_add(w, cmark_node_get_start_line(n),
			    PROGRESS_ITEM_SUBTASK, checked, src, len, why);
			break;
		case CMARK_NODE_CODE_BLOCK:
			scan_literal(w, n, "in a code block: not counted");
			break;
		case CMARK_NODE_HTML_BLOCK:
			scan_literal(w, n, "in an HTML block: not counted");
			break;
		default:
			break;
		}
	}
	cmark_iter_free(it);
}

/* Is n inside a block quote? */
static bool
in_quote(cmark_node *n)
{
	for (n = cmark_node_parent(n); n != NULL; n = cmark_node_parent(n))
		if (cmark_node_get_type(n) == CMARK_NODE_BLOCK_QUOTE)
			return true;
	return false;
}

/* A part of the document that counts nothing: its task items are
 * listed as kind, with why. */
static void
walk_other(struct walk *w, cmark_node *top, enum progress_item_kind kind,
    const char *why)
{
	char src[PROGRESS_TASK_MAX * 2];
	cmark_iter *it;
	cmark_event_type ev;
	cmark_node *n;
	size_t len;

	if (!w->want || (it = cmark_iter_new(top)) == NULL)
		return;
	while ((ev = cmark_iter_next(it)) != CMARK_EVENT_DONE) {
		n = cmark_iter_get_node(it);
		if (ev != CMARK_EVENT_ENTER)
			continue;
		switch (cmark_node_get_type(n)) {
		case CMARK_NODE_ITEM:
			len = item_source(src, sizeof(src), w, n);
			if (is_task_item(n)) {
				item_add(w, cmark_node_get_start_line(n), kind,
				    item_checked(n), src, len, why);
			} else if (len >= 3 && src[0] == '[' &&
			    (src[1] == ' ' || src[1] == 'x' || src[1] == 'X') &&
			    src[2] == ']' &&
			    (len == 3 || src[3] == ' ' || src[3] == '\t')) {
				/* cmark-gfm makes no task item of a box in a
				 * block quote, nor of a box with no text: it
				 * looks like one, GitHub shows no checkbox */
				item_add(w, cmark_node_get_start_line(n),
				    PROGRESS_ITEM_IGNORED, src[1] != ' ',
				    src + 3, len - 3,
				    in_quote(n)
					? "in a block quote: not counted"
					: "a box with no text: not "
					  "counted");
			}
			break;
		case CMARK_NODE_CODE_BLOCK:
			scan_literal(w, n, "in a code block: not counted");
			break;
		case CMARK_NODE_HTML_BLOCK:
			scan_literal(w, n, "in an HTML block: not counted");
			break;
		default:
			break;
		}
	}
	cmark_iter_free(it);
}

/* A top-level list of the section: its task items are tasks, the ones
 * nested in its items subtasks. */
static void
walk_list(struct walk *w, cmark_node *list)
{
	char text[PROGRESS_TASK_MAX * 2], why[PROGRESS_WHY_MAX];
	cmark_node *item;
	size_t tlen;
	bool checked;

	for (item = cmark_node_first_child(list); item != NULL;
	     item = cmark_node_next(item)) {
		if (!is_task_item(item)) {
			note_skipped(w, item);
			walk_sub(w, item);
			continue;
		}
		checked = item_checked(item);
		w->p->tasks_total++;
		tlen = 0;
		text[0] = '\0';
		if (w->want || (!checked && !w->stalled))
			tlen = item_source(text, sizeof(text), w, item);
		if (checked) {
			w->p->tasks_completed++;
		} else if (!w->stalled) {
			w->stalled = true;
			text_clean(w->p->stalled_task,
			    sizeof(w->p->stalled_task), text, tlen,
			    TEXT_COLLAPSE | TEXT_MARK_INVALID | TEXT_TRIM,
			    NULL);
			if (w->p->stalled_task[0] == '\0')
				snprintf(w->p->stalled_task,
				    sizeof(w->p->stalled_task), "task %d",
				    w->p->tasks_total);
		}
		if (w->want) {
			if (w->where[0] != '\0')
				snprintf(why, sizeof(why), "task under %s",
				    w->where);
			else
				snprintf(why, sizeof(why),
				    "task (whole file: no headings)");
			item_add(w, cmark_node_get_start_line(item),
			    PROGRESS_ITEM_TASK, checked, text, tlen, why);
		}
		walk_sub(w, item);
	}
}

/* A top-level block of the Tasks section. */
static void
walk_section(struct walk *w, cmark_node *n)
{
	switch (cmark_node_get_type(n)) {
	case CMARK_NODE_LIST:
		walk_list(w, n);
		break;
	case CMARK_NODE_BLOCK_QUOTE:
		walk_other(w, n, PROGRESS_ITEM_IGNORED,
		    "in a block quote: not counted");
		break;
	default:
		/* code and HTML blocks; a footnote holding a list */
		walk_other(w, n, PROGRESS_ITEM_IGNORED,
		    "not in a list of the Tasks section: not counted");
		break;
	}
}

/* A heading as its author sees it: "## Tasks / Subtasks". */
static void
heading_written(char *out, size_t len, cmark_node *h)
{
	char raw[HEAD_MAX * 2] = "", marks[8];
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

static void
walk_heading(struct walk *w, cmark_node *h, const char *why)
{
	char shown[sizeof(w->where)];

	if (!w->want)
		return;
	heading_written(shown, sizeof(shown), h);
	item_add(w, cmark_node_get_start_line(h), PROGRESS_ITEM_HEADING, false,
	    shown, strlen(shown), why);
}

static void
walk_doc(struct walk *w, cmark_node *doc, const char *want)
{
	cmark_node *start, *n;
	bool any = false, in = false;
	const char *outside = "outside the Tasks section";

	start = choose_heading(doc, want, &any);
	if (start != NULL) {
		heading_norm(w->p->heading, sizeof(w->p->heading), start);
		heading_written(w->where, sizeof(w->where), start);
	} else if (!any) {
		w->p->whole_file = true;
		in = true;
	} else {
		/* headings, none of them the tasks: no tasks */
		outside = "outside any Tasks section: the story has none";
	}
	for (n = cmark_node_first_child(doc); n != NULL;
	     n = cmark_node_next(n)) {
		if (n == start) {
			in = true;
			walk_heading(w, n, "the Tasks section starts here");
			continue;
		}
		if (start != NULL &&
		    cmark_node_get_type(n) == CMARK_NODE_HEADING &&
		    cmark_node_get_heading_level(n) <=
			cmark_node_get_heading_level(start)) {
			/* the same heading written again, right after the
			 * section or further down (a template's empty
			 * "## Tasks / Subtasks" above the real one): the
			 * section goes on there (docs/stories.md) */
			bool was = in;

			in = !section_ends(start, n, want);
			if (in || was)
				walk_heading(w, n,
				    in ? "the same heading again: the "
					 "section goes on"
				       : "ends the Tasks section");
			else
				walk_other(
				    w, n, PROGRESS_ITEM_OUTSIDE, outside);
			continue;
		}
		if (in)
			walk_section(w, n);
		else
			walk_other(w, n, PROGRESS_ITEM_OUTSIDE, outside);
	}
}

/* Parse text and walk it into *w (w->p zeroed here). */
static int
parse_walk(
    struct walk *w, const char *text, size_t len, const char *tasks_heading)
{
	cmark_parser *p = NULL;
	cmark_node *doc = NULL;
	cmark_syntax_extension *tl;
	char want[HEAD_MAX], norm[HEAD_MAX];
	int rc = SC_EOS;

	memset(w->p, 0, sizeof(*w->p));
	if (text == NULL)
		len = 0;
	/* a UTF-8 byte-order mark is not text (editors on Windows write
	 * one); only at the very start */
	if (len >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0) {
		text += 3;
		len -= 3;
	}
	cmark_gfm_core_extensions_ensure_registered();
	w->text = len > 0 ? text : "";
	w->len = len;
	p = cmark_parser_new(CMARK_OPT_DEFAULT);
	tl = cmark_find_syntax_extension("tasklist");
	if (p == NULL || tl == NULL)
		goto out;
	cmark_parser_attach_syntax_extension(p, tl);
	if (len > 0)
		cmark_parser_feed(p, text, len);
	doc = cmark_parser_finish(p);
	if (doc == NULL)
		goto out;
	if (tasks_heading != NULL && tasks_heading[0] != '\0') {
		/* the configured heading, normalised like the document's */
		cmark_node *h = cmark_node_new(CMARK_NODE_HEADING);
		cmark_node *t = cmark_node_new(CMARK_NODE_TEXT);
		cmark_node_set_literal(t, tasks_heading);
		cmark_node_append_child(h, t);
		heading_norm(norm, sizeof(norm), h);
		cmark_node_free(h);
		name_squeeze(want, sizeof(want), norm, strlen(norm));
		walk_doc(w, doc, want);
	} else {
		walk_doc(w, doc, NULL);
	}
	rc = w->oom ? SC_EOS : 0;
out:
	if (doc != NULL)
		cmark_node_free(doc);
	if (p != NULL)
		cmark_parser_free(p);
	return rc;
}

void
progress_parse_heading(struct progress *out, const char *text, size_t len,
    const char *tasks_heading)
{
	struct walk w;

	memset(&w, 0, sizeof(w));
	w.p = out;
	(void)parse_walk(&w, text, len, tasks_heading);
}

void
progress_parse(struct progress *out, const char *text, size_t len)
{
	progress_parse_heading(out, text, len, NULL);
}

int
progress_items(struct progress_item **out, size_t *n, struct progress *prog,
    const char *text, size_t len, const char *tasks_heading, struct sc_err *err)
{
	struct progress scratch;
	struct walk w;
	int rc;

	*out = NULL;
	*n = 0;
	memset(&w, 0, sizeof(w));
	w.p = prog != NULL ? prog : &scratch;
	w.want = true;
	rc = parse_walk(&w, text, len, tasks_heading);
	if (rc < 0) {
		free(w.items);
		return err_set(err, rc, "out of memory listing the tasks");
	}
	*out = w.items;
	*n = w.n;
	return 0;
}

const char *
progress_item_kind_name(enum progress_item_kind k)
{
	switch (k) {
	case PROGRESS_ITEM_TASK:
		return "task";
	case PROGRESS_ITEM_SUBTASK:
		return "subtask";
	case PROGRESS_ITEM_SKIPPED:
		return "skipped";
	case PROGRESS_ITEM_OUTSIDE:
		return "outside";
	case PROGRESS_ITEM_IGNORED:
		return "ignored";
	case PROGRESS_ITEM_HEADING:
		return "heading";
	}
	return "?";
}

const char *
progress_no_tasks_reason(const struct progress *p)
{
	if (!p->whole_file && p->heading[0] == '\0')
		return "no tasks: the story has headings but no Tasks section "
		       "(a heading such as \"## Tasks / Subtasks\")";
	return "no tasks: no task-list item (\"- [ ] ...\") in its Tasks "
	       "section";
}
