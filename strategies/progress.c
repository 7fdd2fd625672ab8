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
#include <string.h>

#include <cmark-gfm-core-extensions.h>
#include <cmark-gfm.h>

#include "strategies/progress.h"
#include "strategies/text.h"

/* normalised heading text: lower case, blanks folded, numbering and a
 * trailing colon dropped */
#define HEAD_MAX 128

/* The headings that read like BMAD's "Tasks / Subtasks" section (and the
 * names other templates give it), normalised.  A heading that merely
 * mentions tasks ("Next Developer Tasks", "Story 1.2: Tasks API") is
 * used only when none of these exists. */
static const char *const task_headings[] = {
    "tasks / subtasks",
    "tasks/subtasks",
    "tasks and subtasks",
    "tasks & subtasks",
    "tasks",
    "task list",
    "implementation tasks",
    "implementation plan",
    "task breakdown",
    "development tasks",
    "dev tasks",
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
		out[o++] = (char)tolower(c);
	}
	while (o > 0 && (out[o - 1] == ':' || out[o - 1] == ' '))
		o--;
	out[o] = '\0';
}

static bool
heading_preferred(const char *norm, const char *want)
{
	size_t i;

	if (want != NULL)
		return strcmp(norm, want) == 0;
	for (i = 0; i < sizeof(task_headings) / sizeof(*task_headings); i++)
		if (strcmp(norm, task_headings[i]) == 0)
			return true;
	return false;
}

/* The heading whose section holds the tasks (progress.h), or NULL;
 * *any_heading tells whether the document has headings at all. */
static cmark_node *
choose_heading(cmark_node *doc, const char *want, bool *any_heading)
{
	cmark_node *n, *first = NULL, *mention = NULL;
	char norm[HEAD_MAX];

	*any_heading = false;
	for (n = cmark_node_first_child(doc); n != NULL;
	     n = cmark_node_next(n)) {
		if (cmark_node_get_type(n) != CMARK_NODE_HEADING)
			continue;
		heading_norm(norm, sizeof(norm), n);
		if (heading_preferred(norm, want))
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

/* Count the task items below item (its nested lists, any depth). */
static void
count_sub(struct progress *out, cmark_node *n)
{
	cmark_node *c;

	for (c = cmark_node_first_child(n); c != NULL; c = cmark_node_next(c)) {
		if (is_task_item(c)) {
			out->subtasks_total++;
			if (cmark_gfm_extensions_get_tasklist_item_checked(c))
				out->subtasks_completed++;
		}
		count_sub(out, c);
	}
}

/* The source the document was parsed from, for the stalled task. */
struct src {
	const char *text;
	size_t len;
};

/*
 * The stalled task as its author wrote it: the first source line of the
 * item's paragraph from where its text begins (after "[ ] "), so code
 * spans and emphasis keep their backticks and stars in the next prompt.
 */
static size_t
task_source(char *buf, size_t len, const struct src *sc, cmark_node *para)
{
	int line = cmark_node_get_start_line(para);
	int col = cmark_node_get_start_column(para);
	const char *p = sc->text, *end = sc->text + sc->len, *nl;
	size_t n;

	buf[0] = '\0';
	for (; line > 1 && p < end; line--) {
		nl = memchr(p, '\n', (size_t)(end - p));
		p = nl != NULL ? nl + 1 : end;
	}
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
	return n; /* NUL bytes included: text_clean() drops them */
}

/* A top-level list: its task items are tasks, the ones nested in its
 * items subtasks. */
static void
count_list(
    struct progress *out, const struct src *sc, cmark_node *list, bool *stalled)
{
	char text[PROGRESS_TASK_MAX * 2];
	cmark_node *item, *para;
	size_t tlen;

	for (item = cmark_node_first_child(list); item != NULL;
	     item = cmark_node_next(item)) {
		if (is_task_item(item)) {
			out->tasks_total++;
			if (cmark_gfm_extensions_get_tasklist_item_checked(
				item)) {
				out->tasks_completed++;
			} else if (!*stalled) {
				*stalled = true;
				text[0] = '\0';
				tlen = 0;
				para = cmark_node_first_child(item);
				if (para != NULL &&
				    cmark_node_get_type(para) ==
					CMARK_NODE_PARAGRAPH)
					tlen = task_source(
					    text, sizeof(text), sc, para);
				text_clean(out->stalled_task,
				    sizeof(out->stalled_task), text, tlen,
				    TEXT_COLLAPSE | TEXT_MARK_INVALID |
					TEXT_TRIM,
				    NULL);
				if (out->stalled_task[0] == '\0')
					snprintf(out->stalled_task,
					    sizeof(out->stalled_task),
					    "task %d", out->tasks_total);
			}
		}
		count_sub(out, item);
	}
}

/* Is heading h the end of the section that heading start opened? */
static bool
section_ends(cmark_node *start, cmark_node *h)
{
	char a[HEAD_MAX], b[HEAD_MAX];

	if (cmark_node_get_heading_level(h) >
	    cmark_node_get_heading_level(start))
		return false;
	/* "## Tasks / Subtasks" written twice: one section */
	heading_norm(a, sizeof(a), start);
	heading_norm(b, sizeof(b), h);
	return strcmp(a, b) != 0;
}

static void
count_doc(struct progress *out, const struct src *sc, cmark_node *doc,
    const char *want)
{
	cmark_node *start, *n;
	bool any = false, stalled = false;

	start = choose_heading(doc, want, &any);
	if (start == NULL && any)
		return; /* headings, none of them the tasks: no tasks */
	if (start != NULL)
		heading_norm(out->heading, sizeof(out->heading), start);
	else
		out->whole_file = true;
	n = start != NULL ? cmark_node_next(start)
			  : cmark_node_first_child(doc);
	for (; n != NULL; n = cmark_node_next(n)) {
		if (start != NULL &&
		    cmark_node_get_type(n) == CMARK_NODE_HEADING &&
		    section_ends(start, n))
			break;
		if (cmark_node_get_type(n) == CMARK_NODE_LIST)
			count_list(out, sc, n, &stalled);
	}
}

void
progress_parse_heading(struct progress *out, const char *text, size_t len,
    const char *tasks_heading)
{
	cmark_parser *p = NULL;
	cmark_node *doc = NULL;
	cmark_syntax_extension *tl;
	char want[HEAD_MAX];
	struct src sc;

	memset(out, 0, sizeof(*out));
	if (text == NULL)
		len = 0;
	/* a UTF-8 byte-order mark is not text (editors on Windows write
	 * one); only at the very start */
	if (len >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0) {
		text += 3;
		len -= 3;
	}
	cmark_gfm_core_extensions_ensure_registered();
	sc.text = text;
	sc.len = len;
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
		heading_norm(want, sizeof(want), h);
		cmark_node_free(h);
		count_doc(out, &sc, doc, want);
	} else {
		count_doc(out, &sc, doc, NULL);
	}
out:
	if (doc != NULL)
		cmark_node_free(doc);
	if (p != NULL)
		cmark_parser_free(p);
}

void
progress_parse(struct progress *out, const char *text, size_t len)
{
	progress_parse_heading(out, text, len, NULL);
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
