/*
 * stories.h - read the story files a config names and measure their
 * progress (docs/stories.md).
 *
 * Story files must stay inside the project root: the resolved path of
 * each (symlinks followed) must lie under cfg->root.  Files larger than
 * STORY_MAX_BYTES are refused.
 */
#ifndef STORYCTL_STORIES_H
#define STORYCTL_STORIES_H

#include <stddef.h>

#include "controller/config/config.h"
#include "common/err.h"
#include "common/model.h"
#include "strategies/progress.h"

#define STORY_MAX_BYTES (16 * 1024 * 1024)

/* One per configured story, for the whole run: kept small (a batch may
 * hold thousands). */
struct story {
	/* the config's own strings (cfg->stories[i]): valid while the
	 * config passed to stories_load() is */
	const char *id;
	const char *file; /* path relative to root, as configured */
	/* owned: the absolute path the file resolved to at load when that
	 * is not root/file (a symbolic link on the way), else NULL and
	 * story_abspath() joins them: every story's path, kept all night,
	 * was 48 bytes a story (docs/performance.md#per-story) */
	char *resolved;
	struct task_counts counts; /* the file's progress at load */
	/* STATUS_PENDING, or STATUS_INVALID when tasks_total == 0 */
	enum story_status load_status;
	/* owned: why invalid (progress_no_tasks_reason(), naming the
	 * heading); NULL when the story is valid */
	char *reason;
	/* the value of the story's "Status:" line as written (BMAD: Draft,
	 * Approved, Ready for Development, InProgress, Review, Done), cleaned
	 * and bounded (storymeta_parse()); when the file has none, its
	 * status in stories.sprint_status; "" when neither
	 * (docs/stories.md "Drafts") */
	char status_line[32];
	/* status_line reads Draft or drafted: the story is skipped (not
	 * run) unless drafts are included (story_skipped()); check warns */
	bool draft;
};

/*
 * Read every story of cfg, in config order, into a malloc'd array
 * (*out, *out_n; free with stories_free()).  Progress is counted under
 * cfg->tasks_heading; status_line and draft are filled.
 * Missing/unreadable file, not a regular file or too large -> SC_EDATA
 * naming it; a symlink or path resolving outside cfg->root -> SC_EDATA;
 * tasks_total == 0 is not an error: load_status STATUS_INVALID with
 * progress_no_tasks_reason() as its reason.  On error *out is NULL and
 * *out_n 0.  A config with no stories gives an empty array (*out NULL,
 * 0).
 */
int stories_load(struct story **out, size_t *out_n, const struct config *cfg,
    struct sc_err *err);

/* Free the array and its strings; no-op on NULL. */
void stories_free(struct story *s, size_t n);

/*
 * The bytes of one story file, read as story_read_progress() reads them
 * (the same checks; root likewise): *out malloc'd (free()), *out_len
 * bytes, not NUL-ended.  For `check` and `tasks`, which must see what
 * run sees.
 */
int story_read_text(char **out, size_t *out_len, const char *abspath,
    const char *root, struct sc_err *err);

/*
 * The one rule of which loaded stories a new batch leaves out
 * (docs/stories.md "Drafts"): a draft, unless cfg->include_drafts
 * (stories.include_drafts, or run --include-drafts).  The batch that
 * run starts, and the plan check prints, follow it; resume continues
 * the batch as it was started.
 */
bool story_skipped(const struct story *s, const struct config *cfg);

/* s's file in the project's work tree, as it resolved at load: a new
 * string (the caller frees it), or NULL when out of memory.  root:
 * cfg->root of the config s was loaded from. */
char *story_abspath(const struct story *s, const char *root);

/*
 * Re-read one story file's progress (after an attempt, or while one
 * runs), its tasks counted under tasks_heading (cfg->tasks_heading; NULL:
 * the default rule, progress_parse_heading()).  SC_EDATA naming the
 * file (relative to root when it lies there) when it cannot be read, is
 * not a regular file or is too large;
 * *out is zeroed then.  root (NULL: no check) is the tree the story must
 * stay in: the project root, or under -j N the story's own worktree
 * (<state dir>/worktrees/<id>, a checkout of the repository; not the
 * main tree, not another story's worktree).  The rule, checked every
 * time the story is read, not only at load: the file's real path, as
 * resolved before the open and as the kernel holds it for the open
 * descriptor, lies under the resolved root (details in stories.c,
 * story_open()).  An agent that swaps the story for a symlink to a file
 * elsewhere gets SC_EDATA, "a symlink was swapped in that leads out of
 * the repository, to <target>", and nothing of that file is read
 * (docs/reliability.md).
 */
int story_read_progress(struct progress *out, const char *abspath,
    const char *root, const char *tasks_heading, struct sc_err *err);

/*
 * A story file read once: its progress and every item the parser saw
 * (progress_items()), so that one read serves both the task count and
 * the evidence's boxes (docs/evidence.md#how-it-is-measured).
 */
struct story_look {
	struct progress pr;
	struct progress_item *items; /* owned: story_look_release() */
	size_t nitems;
};

/* story_read_progress(), the items too, from one read of the file;
 * *out zeroed on failure. */
int story_read_look(struct story_look *out, const char *abspath,
    const char *root, const char *tasks_heading, struct sc_err *err);

/* Free what l owns and zero it; NULL ok. */
void story_look_release(struct story_look *l);

/*
 * The story file's bytes as last parsed and what they parsed to.  A
 * slot keeps one, so that the story is read at each moment that needs
 * it (each poll of an attempt, its end, the next attempt's start: a
 * person or the agent may change it in between) but the same bytes are
 * parsed once (docs/design.md#what-is-read-twice).  Zeroed is empty.
 */
struct story_seen {
	char *path;
	char *text;
	size_t len;
	struct story_look look;
};

/* story_read_look() through seen: the file is read; when its bytes are
 * seen's (same path) *out is a copy of seen's look, otherwise they are
 * parsed and seen keeps them.  *out is the caller's either way
 * (story_look_release()); on error it is zeroed and seen empty. */
int story_read_seen(struct story_look *out, struct story_seen *seen,
    const char *abspath, const char *root, const char *tasks_heading,
    struct sc_err *err);
/* The same for the progress alone (story_read_progress()). */
int story_read_seen_progress(struct progress *out, struct story_seen *seen,
    const char *abspath, const char *root, const char *tasks_heading,
    struct sc_err *err);

/* Free what seen holds and zero it; NULL ok. */
void story_seen_release(struct story_seen *seen);

/* The run order of cfg's stories (indexes into cfg->stories, which
 * stories_load() keeps): a story after the stories it depends on,
 * otherwise config order.  *out malloc'd.  SC_EDATA naming a cycle. */
int stories_order(size_t **out, const struct config *cfg, struct sc_err *err);

#endif
