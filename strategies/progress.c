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
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmark-gfm-core-extensions.h>
#include <cmark-gfm.h>

#include "strategies/progress.h"
#include "strategies/progress_int.h"
#include "strategies/text.h"

bool
progress_is_task(cmark_node *n)
{
	return cmark_node_get_type(n) == CMARK_NODE_ITEM &&
	    strcmp(cmark_node_get_type_string(n), "tasklist") == 0;
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

/* An item of the Tasks section that is not a task item: count it as
 * skipped when it looks like one. */
static void
note_skipped(struct walk *w, cmark_node *item)
{
	char src[PROGRESS_TASK_MAX * 2], why[PROGRESS_WHY_MAX];
	size_t n;
	bool checked;

	n = item_source(src, sizeof(src), w, item);
	if (!progress_box_like(why, sizeof(why), &checked, src, n))
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

static const char *
skip_blanks(const char *p, const char *e)
{
	while (p < e && (*p == ' ' || *p == '\t'))
		p++;
	return p;
}

/* Past the list marker ("-", "*", "+", "1.", "1)") that starts the line
 * p..e and the blanks after it, or NULL when there is none. */
static const char *
skip_list_marker(const char *p, const char *e)
{
	int d;

	p = skip_blanks(p, e);
	for (d = 0; p + d < e && text_is_digit((unsigned char)p[d]) && d < 9;
	     d++)
		;
	if (d > 0 && p + d < e && (p[d] == '.' || p[d] == ')'))
		p += d + 1;
	else if (p < e && (*p == '-' || *p == '*' || *p == '+'))
		p++;
	else
		return NULL;
	if (p == e || (*p != ' ' && *p != '\t'))
		return NULL;
	return skip_blanks(p, e);
}

/* The "[ ]" or "[x]" of a list item "- [ ] ..." or "1. [x] ..." written
 * in the line p..e of a literal block, or NULL (docs/stories.md). */
static const char *
literal_box(const char *p, const char *e)
{
	p = skip_list_marker(p, e);
	if (p == NULL || e - p < 3 || p[0] != '[' || p[2] != ']' ||
	    (p[1] != ' ' && p[1] != 'x' && p[1] != 'X') ||
	    (e - p > 3 && p[3] != ' ' && p[3] != '\t'))
		return NULL;
	return p;
}

/* Boxes written in a code or HTML block: listed, never counted. */
static void
scan_literal(struct walk *w, cmark_node *n, const char *why)
{
	const char *lit = cmark_node_get_literal(n), *p, *e, *nl, *box;
	int line = cmark_node_get_start_line(n), flen, foff;
	char fch;

	if (!w->want || lit == NULL)
		return;
	if (cmark_node_get_type(n) == CMARK_NODE_CODE_BLOCK &&
	    cmark_node_get_fenced(n, &flen, &foff, &fch))
		line++; /* the opening fence */
	for (p = lit; *p != '\0'; p = nl != NULL ? nl + 1 : e, line++) {
		nl = strchr(p, '\n');
		e = nl != NULL ? nl : p + strlen(p);
		box = literal_box(p, e);
		if (box != NULL)
			item_add(w, line, PROGRESS_ITEM_IGNORED, box[1] != ' ',
			    box + 3, (size_t)(e - box - 3), why);
	}
}

bool
progress_item_checked(cmark_node *n)
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
			if (!progress_is_task(n)) {
				note_skipped(w, n);
				break;
			}
			checked = progress_item_checked(n);
			w->p->counts.subtasks_total++;
			if (checked)
				w->p->counts.subtasks_completed++;
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
			if (progress_is_task(n)) {
				item_add(w, cmark_node_get_start_line(n), kind,
				    progress_item_checked(n), src, len, why);
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
		if (!progress_is_task(item)) {
			note_skipped(w, item);
			walk_sub(w, item);
			continue;
		}
		/* checked here or in a copy of the section (copies_mark) */
		checked = progress_item_checked(item) ||
		    cmark_node_get_user_data(item) == (void *)w;
		w->p->counts.tasks_total++;
		tlen = 0;
		text[0] = '\0';
		if (w->want || (!checked && !w->stalled))
			tlen = item_source(text, sizeof(text), w, item);
		if (checked) {
			w->p->counts.tasks_completed++;
		} else if (!w->stalled) {
			w->stalled = true;
			text_clean(w->p->stalled_task,
			    sizeof(w->p->stalled_task), text, tlen,
			    TEXT_COLLAPSE | TEXT_MARK_INVALID | TEXT_TRIM,
			    NULL);
			if (w->p->stalled_task[0] == '\0')
				snprintf(w->p->stalled_task,
				    sizeof(w->p->stalled_task), "task %d",
				    w->p->counts.tasks_total);
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

static void
walk_heading(struct walk *w, cmark_node *h, const char *why)
{
	char shown[sizeof(w->where)];

	if (!w->want)
		return;
	progress_heading_written(shown, sizeof(shown), h);
	item_add(w, cmark_node_get_start_line(h), PROGRESS_ITEM_HEADING, false,
	    shown, strlen(shown), why);
}

/* An indented code block whose first line reads like a heading: the
 * author's heading that GitHub shows as code. */
static void
note_code_heading(struct walk *w, cmark_node *n)
{
	const char *lit;
	int flen, foff;
	char fch;

	if (w->p->code_heading_line != 0 ||
	    cmark_node_get_type(n) != CMARK_NODE_CODE_BLOCK ||
	    cmark_node_get_fenced(n, &flen, &foff, &fch))
		return;
	lit = cmark_node_get_literal(n);
	if (lit == NULL)
		return;
	while (*lit == ' ' || *lit == '\t')
		lit++;
	if (lit[0] == '#' && (lit[1] == ' ' || lit[1] == '#'))
		w->p->code_heading_line = cmark_node_get_start_line(n);
}

/* Where walk_doc() is in the document. */
struct doc_walk {
	const char *want;
	cmark_node *start; /* the Tasks section's heading, or NULL */
	struct head_read start_read; /* start as read, when not NULL */
	/* the heading of the section's copy being walked, or NULL */
	cmark_node *copy_of;
	int skip; /* in a checklist subsection of this level */
	bool in; /* in the Tasks section */
	const char *outside; /* why a block out of it is not counted */
};

/* Choose the document's Tasks section (noting the heading passed over)
 * and say where the walk starts: at its heading, in the whole file when
 * there are no headings, or outside of it all. */
static void
doc_start(struct walk *w, struct doc_walk *d, cmark_node *doc)
{
	struct progress_cands c;

	progress_heading_scan(&c, doc, d->want);
	if (c.rejected != NULL) {
		progress_heading_written(
		    w->p->rejected, sizeof(w->p->rejected), c.rejected);
		w->p->rejected_line = cmark_node_get_start_line(c.rejected);
	}
	d->start = progress_section_choose(w->p, &c, d->want);
	if (d->start != NULL) {
		progress_heading_norm(
		    w->p->heading, sizeof(w->p->heading), d->start);
		progress_heading_written(w->where, sizeof(w->where), d->start);
		progress_heading_written(w->p->heading_written,
		    sizeof(w->p->heading_written), d->start);
		w->p->heading_line = cmark_node_get_start_line(d->start);
		progress_heading_read(&d->start_read, d->start, d->want);
		progress_section_copies(w->p, d->start, d->want, w);
	} else if (!c.any_heading) {
		w->p->whole_file = true;
		d->in = true;
	} else {
		/* headings, none of them the tasks: no tasks */
		d->outside = "outside any Tasks section: the story has none";
	}
}

/* Is n a heading at the level of the section's own or above it? */
static bool
doc_at_start_level(const struct doc_walk *d, cmark_node *n)
{
	return d->start != NULL &&
	    cmark_node_get_type(n) == CMARK_NODE_HEADING &&
	    cmark_node_get_heading_level(n) <=
	    cmark_node_get_heading_level(d->start);
}

/* A heading at the section's level: it ends the section, or is the same
 * heading written again, right after the section or further down (a
 * template's empty "## Tasks / Subtasks" above the real one), and the
 * section goes on there (docs/stories.md). */
static void
doc_heading_again(struct walk *w, struct doc_walk *d, cmark_node *n)
{
	char why[PROGRESS_WHY_MAX];
	bool was = d->in;

	d->skip = 0;
	d->in = !progress_heading_ends(&d->start_read, n, d->want);
	d->copy_of = d->in ? cmark_node_get_user_data(n) : NULL;
	if (d->copy_of != NULL) {
		snprintf(why, sizeof(why),
		    "the same heading again with the same "
		    "tasks as line %d: counted once",
		    cmark_node_get_start_line(d->copy_of));
		walk_heading(w, n, why);
	} else if (d->in || was) {
		walk_heading(w, n,
		    d->in ? "the same heading again: the "
			    "section goes on"
			  : "ends the Tasks section");
	} else {
		walk_other(w, n, PROGRESS_ITEM_OUTSIDE, d->outside);
	}
}

/* A heading inside the section that opens a checklist: a checklist
 * inside the section is no task list either
 * (docs/stories.md#the-tasks-section).  Whether n was one. */
static bool
doc_checklist(struct walk *w, struct doc_walk *d, cmark_node *n)
{
	if (!d->in || d->copy_of != NULL || d->start == NULL ||
	    cmark_node_get_type(n) != CMARK_NODE_HEADING)
		return false;
	if (d->skip > 0 && cmark_node_get_heading_level(n) <= d->skip)
		d->skip = 0;
	if (d->skip != 0 || !progress_heading_checklist(n))
		return false;
	d->skip = cmark_node_get_heading_level(n);
	walk_heading(w, n,
	    "a checklist of acceptance criteria, QA "
	    "or done: not counted");
	return true;
}

/* Any other top-level block: counted when in the section proper. */
static void
doc_block(struct walk *w, const struct doc_walk *d, cmark_node *n)
{
	if (d->in && d->copy_of != NULL)
		walk_other(w, n, PROGRESS_ITEM_IGNORED,
		    "in a copy of the Tasks section: counted once");
	else if (d->in && d->skip > 0)
		walk_other(w, n, PROGRESS_ITEM_OUTSIDE,
		    "in a checklist inside the Tasks section: not "
		    "counted");
	else if (d->in)
		walk_section(w, n);
	else
		walk_other(w, n, PROGRESS_ITEM_OUTSIDE, d->outside);
}

static void
walk_doc(struct walk *w, cmark_node *doc, const char *want)
{
	struct doc_walk d;
	cmark_node *n;

	memset(&d, 0, sizeof(d));
	d.want = want;
	d.outside = "outside the Tasks section";
	doc_start(w, &d, doc);
	for (n = cmark_node_first_child(doc); n != NULL;
	     n = cmark_node_next(n)) {
		note_code_heading(w, n);
		if (n == d.start) {
			d.in = true;
			walk_heading(w, n, "the Tasks section starts here");
		} else if (doc_at_start_level(&d, n)) {
			doc_heading_again(w, &d, n);
		} else if (!doc_checklist(w, &d, n)) {
			doc_block(w, &d, n);
		}
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
	char want[PROGRESS_HEAD_MAX];
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
		progress_heading_want(want, sizeof(want), tasks_heading);
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
progress_no_tasks_reason(char *buf, size_t len, const struct progress *p)
{
	char code[128] = "", rejected[PROGRESS_WRITTEN_MAX + 96] = "";

	if (p->code_heading_line > 0)
		snprintf(code, sizeof(code),
		    "; line %d looks like a heading but is indented 4 "
		    "spaces or more, so GitHub shows it as code",
		    p->code_heading_line);
	if (p->rejected_line > 0)
		snprintf(rejected, sizeof(rejected),
		    "; %s (line %d) is a checklist of acceptance criteria, "
		    "QA or done, not a task list",
		    p->rejected, p->rejected_line);
	if (p->whole_file)
		snprintf(buf, len,
		    "no tasks: no task-list item (\"- [ ] ...\") in the "
		    "file, which has no headings%s",
		    code);
	else if (p->heading[0] == '\0')
		snprintf(buf, len,
		    "no tasks: the story has headings but no Tasks section "
		    "(a heading such as \"## Tasks / Subtasks\")%s%s",
		    rejected, code);
	else
		snprintf(buf, len,
		    "no tasks: no task-list item (\"- [ ] ...\") under %s "
		    "(line %d), its Tasks section",
		    p->heading_written, p->heading_line);
	return buf;
}
