/*
 * progress_section.c - which section of a story counts when several
 * could: the candidates compared (an all-checked list never wins over an
 * open one) and a section pasted twice counted once
 * (docs/stories.md#the-tasks-section).  Pure.
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <cmark-gfm.h>

#include "strategies/progress.h"
#include "strategies/progress_int.h"

/*
 * The top-level task items of a section, one by one: from the heading
 * that opens a block of it to the next heading of its level or higher,
 * past a checklist subsection (progress_heading_checklist()), as the
 * walk counts them.
 */
struct block_iter {
	cmark_node *next; /* the next block to look in */
	cmark_node *item; /* the item last returned */
	int level;
	int skip; /* in a checklist subsection of this level (0: not) */
};

static void
block_open(struct block_iter *it, cmark_node *head)
{
	it->next = cmark_node_next(head);
	it->item = NULL;
	it->level = cmark_node_get_heading_level(head);
	it->skip = 0;
}

static cmark_node *
block_task(struct block_iter *it)
{
	cmark_node *n = it->item != NULL ? cmark_node_next(it->item) : NULL;

	for (;;) {
		for (; n != NULL; n = cmark_node_next(n))
			if (progress_is_task(n))
				return it->item = n;
		n = it->next;
		if (n == NULL ||
		    (cmark_node_get_type(n) == CMARK_NODE_HEADING &&
			cmark_node_get_heading_level(n) <= it->level))
			return it->item = NULL;
		it->next = cmark_node_next(n);
		if (cmark_node_get_type(n) == CMARK_NODE_HEADING) {
			if (it->skip > 0 &&
			    cmark_node_get_heading_level(n) <= it->skip)
				it->skip = 0;
			if (it->skip == 0 && progress_heading_checklist(n))
				it->skip = cmark_node_get_heading_level(n);
		}
		n = it->skip == 0 && cmark_node_get_type(n) == CMARK_NODE_LIST
		    ? cmark_node_first_child(n)
		    : NULL;
	}
}

/* The headings that open a block of start's section: start, then each
 * heading that continues it (progress_heading_ends), at most max, into
 * heads; how many. */
static size_t
section_blocks(
    cmark_node **heads, size_t max, cmark_node *start, const char *want)
{
	struct head_read r;
	cmark_node *n;
	size_t k = 0;

	progress_heading_read(&r, start, want);
	heads[k++] = start;
	for (n = cmark_node_next(start); n != NULL && k < max;
	     n = cmark_node_next(n))
		if (cmark_node_get_type(n) == CMARK_NODE_HEADING &&
		    !progress_heading_ends(&r, n, want))
			heads[k++] = n;
	return k;
}

/* The top-level tasks of start's section and how many are checked;
 * *inside[k] set for each candidate heading of c within it. */
static void
section_count(int *total, int *done, cmark_node *start, const char *want,
    const struct progress_cands *c, bool *inside)
{
	cmark_node *heads[PROGRESS_CANDS_MAX], *n, *stop;
	struct block_iter it;
	size_t nb, b, k;

	*total = *done = 0;
	nb = section_blocks(heads, PROGRESS_CANDS_MAX, start, want);
	for (b = 0; b < nb; b++) {
		block_open(&it, heads[b]);
		while ((n = block_task(&it)) != NULL) {
			(*total)++;
			if (progress_item_checked(n))
				(*done)++;
		}
		if (inside == NULL)
			continue;
		/* the candidates from this block's heading to its end */
		stop = it.next;
		for (n = heads[b]; n != NULL && n != stop;
		     n = cmark_node_next(n))
			for (k = 0; k < c->n; k++)
				if (c->node[k] == n)
					inside[k] = true;
	}
}

/*
 * The heading whose section holds the tasks: the first of the highest
 * rank; but when its section is all checked and another candidate's
 * has an open task, that one, so that the story is not called done
 * from the checked list (docs/stories.md#the-tasks-section).  The
 * section passed over is noted in *p.
 */
cmark_node *
progress_section_choose(
    struct progress *p, const struct progress_cands *c, const char *want)
{
	bool inside[PROGRESS_CANDS_MAX];
	size_t k, best = 0;
	int rank, total, done, t2, d2;

	if (c->n == 0)
		return NULL;
	for (k = 1; k < c->n; k++)
		if (c->rank[k] > c->rank[best])
			best = k;
	if (want != NULL)
		return c->node[best];
	memset(inside, 0, sizeof(inside));
	section_count(&total, &done, c->node[best], want, c, inside);
	if (total == 0 || done < total)
		return c->node[best];
	for (rank = HEAD_NAMED; rank > HEAD_NONE; rank--)
		for (k = 0; k < c->n; k++) {
			if (c->rank[k] != rank || k == best || inside[k])
				continue;
			section_count(&t2, &d2, c->node[k], want, c, NULL);
			if (d2 == t2)
				continue;
			progress_heading_written(p->passed_over,
			    sizeof(p->passed_over), c->node[best]);
			p->passed_over_line =
			    cmark_node_get_start_line(c->node[best]);
			p->passed_over_tasks = total;
			return c->node[k];
		}
	return c->node[best];
}

/* Do the two items read the same (their first paragraph's text)? */
static bool
same_text(cmark_node *a, cmark_node *b)
{
	char ta[PROGRESS_TASK_MAX] = "", tb[PROGRESS_TASK_MAX] = "";
	cmark_node *pa = cmark_node_first_child(a),
		   *pb = cmark_node_first_child(b);

	if (pa != NULL)
		progress_inline_text(ta, sizeof(ta), pa);
	if (pb != NULL)
		progress_inline_text(tb, sizeof(tb), pb);
	return strcmp(ta, tb) == 0;
}

/* Does block b repeat block a's tasks, the same texts in the same
 * order, at least one? */
static bool
block_repeats(cmark_node *a, cmark_node *b)
{
	struct block_iter ia, ib;
	cmark_node *x, *y;
	size_t n = 0;

	block_open(&ia, a);
	block_open(&ib, b);
	for (;;) {
		x = block_task(&ia);
		y = block_task(&ib);
		if (x == NULL || y == NULL)
			return x == NULL && y == NULL && n > 0;
		if (!same_text(x, y))
			return false;
		n++;
	}
}

/*
 * A story pasted twice has its Tasks section twice with the same tasks:
 * each copy is counted once (docs/stories.md#the-tasks-section).  A
 * block that repeats an earlier one gets that block's heading as its
 * user data (so the walk lists it and counts nothing); a task checked
 * only in the copy is checked in the original (user data mark), so the
 * agent may tick either.
 */
void
progress_section_copies(
    struct progress *p, cmark_node *start, const char *want, void *mark)
{
	cmark_node *heads[PROGRESS_CANDS_MAX], *x, *y;
	struct block_iter ia, ib;
	size_t nb, a, b;

	nb = section_blocks(heads, PROGRESS_CANDS_MAX, start, want);
	for (b = 1; b < nb; b++)
		for (a = 0; a < b; a++) {
			if (cmark_node_get_user_data(heads[a]) != NULL ||
			    !block_repeats(heads[a], heads[b]))
				continue;
			cmark_node_set_user_data(heads[b], heads[a]);
			if (p->copies++ == 0)
				p->copy_line =
				    cmark_node_get_start_line(heads[b]);
			block_open(&ia, heads[a]);
			block_open(&ib, heads[b]);
			while ((x = block_task(&ia)) != NULL &&
			    (y = block_task(&ib)) != NULL)
				if (progress_item_checked(y))
					cmark_node_set_user_data(x, mark);
			break;
		}
}
