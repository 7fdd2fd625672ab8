/*
 * storymeta.c - see storymeta.h; the rules are docs/stories.md.
 *
 * Like progress.c, the story is parsed by cmark-gfm (no extension is
 * needed here: a status is a paragraph or a heading) and only the
 * document's top-level blocks are looked at, so a status quoted in a
 * code block, an HTML comment or a block quote never counts.
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include <cmark-gfm.h>

#include "strategies/storymeta.h"
#include "strategies/text.h"

/* room for one line of a block's text */
#define LINE_MAX_BYTES 512

/*
 * The plain text of line `want` (0-based) of n's inlines into buf: the
 * text of code spans, emphasis and links kept, their markup dropped
 * ("**Status:** Draft" reads "Status: Draft").  *line counts the breaks
 * seen so far.  Returns false once past the wanted line.
 */
static bool
line_text(char *buf, size_t cap, cmark_node *n, int want, int *line)
{
	cmark_node *c;
	const char *lit;
	size_t used;

	for (c = cmark_node_first_child(n); c != NULL; c = cmark_node_next(c)) {
		switch (cmark_node_get_type(c)) {
		case CMARK_NODE_SOFTBREAK:
		case CMARK_NODE_LINEBREAK:
			if (++*line > want)
				return false;
			break;
		case CMARK_NODE_TEXT:
		case CMARK_NODE_CODE:
			if (*line != want)
				break;
			lit = cmark_node_get_literal(c);
			used = strlen(buf);
			if (lit != NULL && used + 1 < cap)
				snprintf(buf + used, cap - used, "%s", lit);
			break;
		default:
			if (!line_text(buf, cap, c, want, line))
				return false;
		}
	}
	return true;
}

/* Line `want` of block n's text; false when n has no such line. */
static bool
block_line(char *buf, size_t cap, cmark_node *n, int want)
{
	int line = 0;

	buf[0] = '\0';
	line_text(buf, cap, n, want, &line);
	return line >= want;
}

static const char *
skip_blanks(const char *s)
{
	while (*s == ' ' || *s == '\t')
		s++;
	return s;
}

/* The value of a "Status: value" line, or NULL when s is not one. */
static const char *
status_value(const char *s)
{
	s = skip_blanks(s);
	if (strncasecmp(s, "status", 6) != 0)
		return NULL;
	s = skip_blanks(s + 6);
	if (*s != ':')
		return NULL;
	return skip_blanks(s + 1);
}

static void
set_status(struct storymeta *out, const char *value)
{
	text_clean(out->status, sizeof(out->status), value, strlen(value),
	    TEXT_COLLAPSE | TEXT_MARK_INVALID | TEXT_TRIM, NULL);
	out->draft = storymeta_is_draft(out->status);
}

/* A "Status: value" line among the lines of block n (a paragraph, or
 * the paragraphs of a list's items). */
static bool
find_in_block(struct storymeta *out, cmark_node *n)
{
	char line[LINE_MAX_BYTES];
	const char *v;
	cmark_node *item, *c;
	int i;

	if (cmark_node_get_type(n) == CMARK_NODE_LIST) {
		for (item = cmark_node_first_child(n); item != NULL;
		     item = cmark_node_next(item)) {
			c = cmark_node_first_child(item);
			if (c != NULL && find_in_block(out, c))
				return true;
		}
		return false;
	}
	if (cmark_node_get_type(n) != CMARK_NODE_PARAGRAPH)
		return false;
	for (i = 0; block_line(line, sizeof(line), n, i); i++) {
		v = status_value(line);
		if (v != NULL && *v != '\0') {
			set_status(out, v);
			return true;
		}
	}
	return false;
}

/* A heading "Status" (its value in the next block) or "Status: value". */
static bool
find_in_heading(struct storymeta *out, cmark_node *h)
{
	char text[LINE_MAX_BYTES];
	const char *v;
	cmark_node *next;
	size_t len;

	block_line(text, sizeof(text), h, 0);
	v = status_value(text);
	if (v != NULL && *v != '\0') {
		set_status(out, v);
		return true;
	}
	v = skip_blanks(text);
	len = strlen(v);
	while (len > 0 && (v[len - 1] == ' ' || v[len - 1] == ':'))
		len--;
	if (len != 6 || strncasecmp(v, "status", 6) != 0)
		return false;
	next = cmark_node_next(h);
	if (next == NULL)
		return false;
	if (cmark_node_get_type(next) == CMARK_NODE_LIST) {
		next = cmark_node_first_child(next); /* "- Draft" */
		next = next != NULL ? cmark_node_first_child(next) : NULL;
	}
	if (next == NULL || cmark_node_get_type(next) != CMARK_NODE_PARAGRAPH ||
	    !block_line(text, sizeof(text), next, 0))
		return false;
	/* "Status: Draft" under the heading reads the same */
	v = status_value(text);
	set_status(out, v != NULL ? v : text);
	return out->status[0] != '\0';
}

void
storymeta_parse(struct storymeta *out, const char *text, size_t len)
{
	cmark_parser *p = NULL;
	cmark_node *doc = NULL, *n;
	bool preamble = true;

	memset(out, 0, sizeof(*out));
	if (text == NULL)
		len = 0;
	if (len >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0) {
		text += 3;
		len -= 3;
	}
	p = cmark_parser_new(CMARK_OPT_DEFAULT);
	if (p == NULL)
		goto out;
	if (len > 0)
		cmark_parser_feed(p, text, len);
	doc = cmark_parser_finish(p);
	if (doc == NULL)
		goto out;
	for (n = cmark_node_first_child(doc); n != NULL;
	     n = cmark_node_next(n)) {
		if (cmark_node_get_type(n) == CMARK_NODE_HEADING) {
			if (find_in_heading(out, n))
				break;
			/* the title belongs to the preamble; the first
			 * section below it ends it */
			if (cmark_node_get_heading_level(n) > 1 ||
			    n != cmark_node_first_child(doc))
				preamble = false;
			continue;
		}
		if (preamble && find_in_block(out, n))
			break;
	}
out:
	if (doc != NULL)
		cmark_node_free(doc);
	if (p != NULL)
		cmark_parser_free(p);
}

bool
storymeta_is_draft(const char *status)
{
	size_t n = 0;

	if (status == NULL)
		return false;
	status = skip_blanks(status);
	while (text_is_alpha((unsigned char)status[n]))
		n++;
	return (n == 5 && strncasecmp(status, "draft", 5) == 0) ||
	    (n == 7 && strncasecmp(status, "drafted", 7) == 0);
}
