/*
 * console.c - see console.h.  The status line is redrawn in place
 * ("\r" and erase to the end of the line), so it is drawn only on a
 * terminal; elsewhere the printed lines are the whole output.  Its
 * text, cut to the terminal's width, is strategies/statusline.c's.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "controller/engine/attempt_run.h"
#include "controller/engine/console.h"
#include "strategies/statusline.h"

void
console_clear(struct batch *b)
{
	if (b->line_shown) {
		fputs("\r\033[K", b->o->out);
		b->line_shown = false;
	}
}

void
console_line(struct batch *b, const char *fmt, ...)
{
	va_list ap;

	console_clear(b);
	va_start(ap, fmt);
	vfprintf(b->o->out, fmt, ap);
	va_end(ap);
	fputc('\n', b->o->out);
	fflush(b->o->out);
}

/* The terminal's columns, read again at each redraw so that a resized
 * window (SIGWINCH) is followed: the output's own size, then COLUMNS,
 * then 80 (docs/commands.md#the-live-status-line). */
static int
console_width(FILE *out)
{
	struct winsize ws;
	const char *env;
	char *end;
	long n;

	if (ioctl(fileno(out), TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
		return ws.ws_col;
	env = getenv("COLUMNS");
	if (env != NULL && env[0] != '\0') {
		n = strtol(env, &end, 10);
		if (*end == '\0' && n > 0 && n < 100000)
			return (int)n;
	}
	return 80;
}

void
console_status(struct batch *b)
{
	struct statusline_slot *sl = NULL;
	struct statusline_in in = {0};
	char line[STATUSLINE_BUF];
	int64_t now;
	size_t i, n = 0;

	if (!b->o->tty)
		goto out;
	sl = calloc(b->nslots > 0 ? b->nslots : 1, sizeof(*sl));
	if (sl == NULL)
		goto out; /* no line this time; the next redraw tries again */
	now = b->o->clock.now_ms(b->o->clock.ctx);
	for (i = 0; i < b->nslots; i++) {
		const struct slot *s = &b->slots[i];
		struct statusline_slot *o = &sl[n];
		if (s->st == NULL || s->state == SLOT_FREE)
			continue;
		o->id = s->st->id;
		o->max_attempts = b->cfg->policy.max_attempts;
		if (s->state == SLOT_RUNNING) {
			const struct attempt_row *r = &s->run->r;
			o->attempt = r->attempt;
			o->role = role_name(r->role);
			o->agent = r->agent;
			o->tasks_completed = r->counts.tasks_completed;
			o->tasks_total = r->counts.tasks_total;
			o->ms = now - r->started_ms;
		} else if (s->state == SLOT_SETUP) {
			/* shown as waiting for its attempt, which the setup
			 * goes before */
			o->waiting = true;
			o->attempt = s->next_attempt;
			o->ms = 0;
		} else {
			o->waiting = true;
			o->attempt = s->next_attempt;
			o->ms = s->until_ms - now;
		}
		n++;
	}
	in.slots = sl;
	in.nslots = n;
	in.cooldown_ms = b->paused_until > now ? b->paused_until - now : 0;
	in.width = console_width(b->o->out);
	in.bold = b->o->color;
	statusline_build(line, sizeof(line), &in);
	fputs("\r\033[K", b->o->out);
	fputs(line, b->o->out);
	fflush(b->o->out);
	b->line_shown = true;
out:
	free(sl);
}
