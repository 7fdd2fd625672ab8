/*
 * console.h - what a running batch prints (docs/design.md#life): a
 * line per event, and on a terminal a live status line of every busy
 * slot, which each line clears first.  The only writer of the batch's
 * output stream.
 */
#ifndef STORYCTL_CONSOLE_H
#define STORYCTL_CONSOLE_H

struct batch; /* controller/engine/batch_int.h */

/* Print a line (clearing the live status line first). */
void console_line(struct batch *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Redraw the live status line (terminal only): every busy slot. */
void console_status(struct batch *b);
/* Clear the live status line if it is on screen. */
void console_clear(struct batch *b);

#endif
