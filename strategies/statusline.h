/*
 * statusline.h - the text of run's live status line
 * (docs/commands.md#the-live-status-line): every busy slot, compactly,
 * cut to the terminal's width so that it never wraps.  Pure: the slots'
 * data and a width in, the line out; controller/engine/console.c measures the
 * terminal and draws it.
 */
#ifndef STORYCTL_STATUSLINE_H
#define STORYCTL_STATUSLINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One busy slot. */
struct statusline_slot {
	const char *id; /* the story */
	bool waiting; /* waiting for its next attempt, not running */
	int attempt; /* running: its number; waiting: the next one's */
	int max_attempts;
	const char *role; /* running: "primary" or "fallback" */
	const char *agent; /* running: the agent's name */
	int tasks_completed, tasks_total;
	int64_t ms; /* running: elapsed; waiting: time left */
};

struct statusline_in {
	const struct statusline_slot *slots;
	size_t nslots;
	int64_t cooldown_ms; /* the batch breaker's cooldown left, or 0 */
	int width; /* the terminal's columns */
	bool bold; /* ids in bold (a terminal, NO_COLOR unset) */
};

/* Buffer size statusline_build() needs for any width. */
#define STATUSLINE_BUF 4096

/*
 * Write the status line to buf (size bytes, size > 0): at most
 * width - 1 display columns, so that the cursor never reaches the last
 * column and the line never wraps.  Richest form that fits first
 * ("[1 running] 1.1 attempt 2/5 primary (claude) 3/9 tasks 1m20s"), then
 * compact items ("1.1 a2 3/9"), then ids shortened with an ellipsis,
 * then as many items as fit and "+k more".  Ids and names are cleaned
 * of controls and escapes.
 */
void statusline_build(char *buf, size_t size, const struct statusline_in *in);

/* Display columns of the UTF-8 text s: escape sequences count 0, wide
 * (East Asian, emoji) characters 2, any other character or stray byte
 * 1.  Errs on the wide side, which only makes a line shorter. */
size_t statusline_width(const char *s);

#endif
