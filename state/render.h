/*
 * render.h - the record as people and scripts read it: the JSON of
 * `show --json` and of stories/<id>.json on the state branch (one
 * function, so the two never drift apart), and progress.md.
 */
#ifndef STORYCTL_RENDER_H
#define STORYCTL_RENDER_H

#include <jansson.h>

#include "state/db.h"

/* {"id", "file", "status", "reason", "tasks_completed", "tasks_total",
 *  "attempts": [...]} plus "cost_usd", "branch", "subtasks_completed" and
 *  "subtasks_total", and "retry_policy_override" when override (the
 *  stored JSON of the story's override, docs/api.md#retry-policy) is not
 *  NULL.  New reference. */
json_t *render_story_json(const struct story_row *s,
    const struct attempt_row *a, size_t n, const char *override);

/* The failures reported from outside storyctl (docs/json.md#show):
 * [{"id", "error_code", "error_message", "agent_id", "attempt_number",
 * "http_status", "exit_code", "signal", "retry_scheduled_at",
 * "reported_at", "reported_by", "resolved_at"}], null where unknown.
 * show --json and stories/<id>.json carry it as "external_failures"
 * while there is one.  New reference, or NULL on OOM. */
json_t *render_failures_json(const struct failure_row *f, size_t n);

/* progress.md: a markdown table of the batch's stories (story, status,
 * attempts, tasks, last agent, last outcome, reason, subtasks).  *out malloc'd;
 * 0 or SC_EOS. */
int render_progress_md(
    char **out, const struct story_line *rows, size_t n, int64_t batch_id);
/* The table line of a full row (pointers into r). */
void render_line_of(struct story_line *out, const struct story_row *r);

/* Batches of up to this many stories keep the flat layout: progress.md
 * is the whole table, stories/<id>.json (docs/state-branch.md#layout). */
#define RENDER_FLAT_MAX 200
/* Larger batches have progress.md as a summary and the table in pages
 * progress/NNNN.md, so that a decision rewrites one page, not the whole
 * batch.  A page has RENDER_PAGE_MIN stories, doubled while there would
 * be more than four times as many pages as stories on one (so 50 up to
 * 10000 stories, 100 up to 40000, 200 up to 160000).  Every decision
 * writes its page and the page's stories/NNNN/ directory, about 130
 * bytes a story on the page, and the two directories that list the
 * pages, about 65 bytes a page: the total is least near a page of
 * 0.7 * sqrt(stories), and doubling past four pages a story keeps it
 * there (docs/state-branch.md#layout, docs/performance.md). */
#define RENDER_PAGE_MIN 50

/* Stories per page in a batch of total stories: RENDER_FLAT_MAX for a
 * flat batch (total <= RENDER_FLAT_MAX, one "page": progress.md),
 * otherwise as above. */
int render_page_size(int total);

/* progress.md of a large batch: counts per status, the page size and
 * the page list. */
int render_progress_index(
    char **out, const int counts[STATUS__COUNT], int total, int64_t batch_id);

/* One page of the table: rows are the stories of page `page` (0-based)
 * of a batch whose pages hold per stories (render_page_size()). */
int render_progress_page(char **out, const struct story_line *rows, size_t n,
    int page, int per, int64_t batch_id);

/* Where a story's JSON lives on the state branch: "stories/<id>.json",
 * or in a batch of more than RENDER_FLAT_MAX stories
 * "stories/NNNN/<id>.json", NNNN the page of progress/NNNN.md that
 * lists it (position 0-based, pages of render_page_size(total)).  malloc'd, NULL on OOM. */
char *render_story_path(const char *id, int position, int total);

/* ISO 8601 UTC for epoch ms, or JSON null for 0. */
json_t *render_time_json(int64_t ms);

#endif
