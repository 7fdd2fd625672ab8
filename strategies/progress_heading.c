/*
 * progress_heading.c - which headings may open a story's Tasks section
 * and how strongly: a heading that names it in words of the table
 * (heading_words.c, in the languages story authors write), one that
 * begins with tasks and a conjunction, one that merely mentions tasks;
 * a title, a checklist of acceptance criteria, QA or done never
 * (docs/stories.md#the-tasks-section).  Pure.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmark-gfm.h>

#include "strategies/heading_words.h"
#include "strategies/progress_int.h"
#include "strategies/text.h"

/* Append the plain text of n's inlines to buf (len bytes, NUL-ended). */
void
progress_inline_text(char *buf, size_t len, cmark_node *n)
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
			progress_inline_text(buf, len, c);
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

	progress_inline_text(raw, sizeof(raw), h);
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

/* Where a heading's name ends: a colon, a parenthesis or a dash
 * between blanks ("Tasks: Backend", "Tasks / Subtasks (TDD order)",
 * "Tasks - Backend"); the length of the mark in *mlen. */
static const char *
name_end(const char *s, size_t *mlen)
{
	static const char *const marks[] = {":", "\xEF\xBC\x9A", "(",
	    "\xEF\xBC\x88", " - ", " \xE2\x80\x93 ", " \xE2\x80\x94 "};
	const char *best = NULL, *p;
	size_t i;

	for (i = 0; i < sizeof(marks) / sizeof(*marks); i++) {
		p = strstr(s, marks[i]);
		if (p != NULL && (best == NULL || p < best)) {
			best = p;
			*mlen = strlen(marks[i]);
		}
	}
	return best;
}

/* The text after the last dash between blanks, or NULL. */
static const char *
after_dash(const char *s)
{
	static const char *const marks[] = {
	    " - ", " \xE2\x80\x93 ", " \xE2\x80\x94 "};
	const char *best = NULL, *p, *q;
	size_t i;

	for (i = 0; i < sizeof(marks) / sizeof(*marks); i++)
		for (q = s; (p = strstr(q, marks[i])) != NULL; q = p + 1)
			if (best == NULL || p + strlen(marks[i]) > best)
				best = p + strlen(marks[i]);
	return best;
}

/* The text inside the first parenthesis, into out, or "". */
static void
paren_inside(char *out, size_t len, const char *s)
{
	const char *o1 = strchr(s, '('), *o2 = strstr(s, "\xEF\xBC\x88"), *o,
		   *c;
	size_t n;

	out[0] = '\0';
	if (o1 != NULL && (o2 == NULL || o1 < o2))
		o = o1 + 1;
	else if (o2 != NULL)
		o = o2 + 3;
	else
		return;
	c = strchr(o, ')');
	if (c == NULL)
		c = strstr(o, "\xEF\xBC\x89");
	n = c != NULL ? (size_t)(c - o) : strlen(o);
	if (n >= len)
		n = len - 1;
	memcpy(out, o, n);
	out[n] = '\0';
}

/* Does the part read as the Tasks section: the configured name (want,
 * as words), or a name of the table (heading_words.h)?  Its words into
 * key (PROGRESS_HEAD_MAX bytes) when so. */
static bool
part_names(char *key, const char *s, size_t n, const char *want, size_t min)
{
	char words[PROGRESS_HEAD_MAX];

	hwords_split(words, sizeof(words), s, n);
	if (words[0] == '\0' || hwords_count(words) < min)
		return false;
	if (want != NULL ? strcmp(hwords_after_numbers(words), want) != 0
			 : !hwords_name_tasks(words))
		return false;
	snprintf(key, PROGRESS_HEAD_MAX, "%s", words);
	return true;
}

/*
 * How heading h reads (docs/stories.md#the-tasks-section): its rank,
 * whether it heads a checklist (acceptance criteria, QA, definition of
 * done), and the words of the part that names the section (key).
 * The parts tried: the name before a colon, dash or parenthesis, the
 * whole text, the text in the parenthesis (a translation), and the
 * text after the last dash when it is two words or more (Kiro's "#
 * <feature> - Implementation Tasks").
 */
void
progress_heading_read(struct head_read *r, cmark_node *h, const char *want)
{
	char raw[PROGRESS_HEAD_MAX * 2] = "", in[PROGRESS_HEAD_MAX * 2],
				     words[PROGRESS_HEAD_MAX];
	const char *e, *tail;
	size_t mlen = 0;

	memset(r, 0, sizeof(*r));
	r->level = cmark_node_get_heading_level(h);
	progress_heading_norm(r->norm, sizeof(r->norm), h);
	progress_inline_text(raw, sizeof(raw), h);
	hwords_split(words, sizeof(words), raw, strlen(raw));
	r->checklist = hwords_checklist(words);
	e = name_end(raw, &mlen);
	paren_inside(in, sizeof(in), raw);
	tail = after_dash(raw);
	if (part_names(r->key, raw, e != NULL ? (size_t)(e - raw) : strlen(raw),
		want, 1) ||
	    part_names(r->key, raw, strlen(raw), want, 1) ||
	    (in[0] != '\0' && part_names(r->key, in, strlen(in), want, 1)) ||
	    (tail != NULL && part_names(r->key, tail, strlen(tail), want, 2))) {
		r->rank = HEAD_NAMED;
		r->checklist = false;
		return;
	}
	if (want != NULL)
		return;
	if (hwords_lead_tasks(words))
		r->rank = HEAD_LEADS;
	else if (hwords_has(words, HW_TASK))
		r->rank = HEAD_MENTION;
}

bool
progress_heading_checklist(cmark_node *h)
{
	char raw[PROGRESS_HEAD_MAX * 2] = "", words[PROGRESS_HEAD_MAX];

	progress_inline_text(raw, sizeof(raw), h);
	hwords_split(words, sizeof(words), raw, strlen(raw));
	return hwords_checklist(words) && !hwords_name_tasks(words);
}

/* Add heading h of rank to c, in document order; when c is full a
 * higher rank takes the place of the last of the lowest. */
static void
cand_add(struct progress_cands *c, cmark_node *h, int rank)
{
	size_t i, low = 0;

	if (c->n == PROGRESS_CANDS_MAX) {
		for (i = 1; i < c->n; i++)
			if (c->rank[i] <= c->rank[low])
				low = i;
		if (c->rank[low] >= rank)
			return;
		memmove(&c->node[low], &c->node[low + 1],
		    (c->n - low - 1) * sizeof(*c->node));
		memmove(&c->rank[low], &c->rank[low + 1],
		    (c->n - low - 1) * sizeof(*c->rank));
		c->n--;
	}
	c->node[c->n] = h;
	c->rank[c->n++] = rank;
}

/* Heading n, read as *r, into c as a candidate, as the rejected one, or
 * not at all.  title: n is the document's title (its first heading, at
 * level 1); region: the level of the checklist n is in, or 0. */
static void
cand_consider(struct progress_cands *c, cmark_node *n,
    const struct head_read *r, bool title, int region)
{
	if (r->rank == HEAD_NAMED) {
		cand_add(c, n, r->rank);
	} else if (r->rank > HEAD_NONE && title) {
		/* a title names the story, not its task list, even when
		 * it says "tasks" */
	} else if (r->rank > HEAD_NONE &&
	    ((r->checklist && r->rank == HEAD_MENTION) || region > 0)) {
		/* a checklist of acceptance criteria, QA or done
		 * never wins over a task list (docs/stories.md) */
		if (c->rejected == NULL)
			c->rejected = n;
	} else if (r->rank > HEAD_NONE) {
		cand_add(c, n, r->rank);
	}
}

void
progress_heading_scan(
    struct progress_cands *c, cmark_node *doc, const char *want)
{
	struct head_read r;
	cmark_node *n, *first = NULL;
	int level, region = 0;

	memset(c, 0, sizeof(*c));
	for (n = cmark_node_first_child(doc); n != NULL;
	     n = cmark_node_next(n)) {
		if (cmark_node_get_type(n) != CMARK_NODE_HEADING)
			continue;
		level = cmark_node_get_heading_level(n);
		progress_heading_read(&r, n, want);
		if (region > 0 && level <= region)
			region = 0;
		cand_consider(c, n, &r, first == NULL && level == 1, region);
		if (r.checklist && r.rank < HEAD_LEADS && region == 0)
			region = level;
		/* the title alone does not divide the story into sections:
		 * "# Story 1.2" over a bare checklist is one section */
		if (first != NULL || level != 1)
			c->any_heading = true;
		if (first == NULL)
			first = n;
	}
}

/* Is heading h the end of the section that the heading read as *start
 * opened?  Not when it is the same heading again ("## Tasks / Subtasks"
 * written twice) or names the same section ("## Tasks: Backend", "##
 * Tasks: Frontend"; docs/stories.md).  *start is read once by the
 * caller: a story may have hundreds of headings. */
bool
progress_heading_ends(
    const struct head_read *start, cmark_node *h, const char *want)
{
	char b[PROGRESS_HEAD_MAX];
	struct head_read rb;

	if (cmark_node_get_heading_level(h) > start->level)
		return false;
	progress_heading_norm(b, sizeof(b), h);
	if (strcmp(start->norm, b) == 0)
		return false;
	if (start->rank != HEAD_NAMED)
		return true;
	progress_heading_read(&rb, h, want);
	return !(rb.rank == HEAD_NAMED && strcmp(start->key, rb.key) == 0);
}

void
progress_heading_want(char *want, size_t len, const char *configured)
{
	char words[PROGRESS_HEAD_MAX];

	hwords_split(words, sizeof(words), configured, strlen(configured));
	snprintf(want, len, "%s", hwords_after_numbers(words));
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
	progress_inline_text(raw, sizeof(raw), h);
	memcpy(out, marks, (size_t)level + 1);
	text_clean(out + level + 1, len - (size_t)level - 1, raw, strlen(raw),
	    TEXT_COLLAPSE | TEXT_MARK_INVALID | TEXT_TRIM, NULL);
}
