/*
 * console.c - see console.h.  The status line is redrawn in place
 * ("\r" and erase to the end of the line), so it is drawn only on a
 * terminal; elsewhere the printed lines are the whole output.
 */
#include <stdarg.h>
#include <stdio.h>

#include "controller/attempt_run.h"
#include "controller/clock.h"
#include "controller/console.h"

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

void
console_status(struct batch *b)
{
	char el[32], part[200];
	int64_t now;
	size_t i;
	int shown = 0;

	if (!b->o->tty)
		return;
	now = b->o->clock.now_ms(b->o->clock.ctx);
	fputs("\r\033[K", b->o->out);
	for (i = 0; i < b->nslots; i++) {
		const struct slot *sl = &b->slots[i];
		if (sl->st == NULL || sl->state == SLOT_FREE)
			continue;
		if (sl->state == SLOT_RUNNING) {
			const struct attempt_row *r = &sl->run->r;
			clock_fmt_duration(el, sizeof(el), now - r->started_ms);
			snprintf(part, sizeof(part),
			    "attempt %d/%d  %s (%s)  %d/%d tasks  %s",
			    r->attempt, b->cfg->policy.max_attempts,
			    role_name(r->role), r->agent, r->tasks_completed,
			    r->tasks_total, el);
		} else {
			clock_fmt_duration(el, sizeof(el), sl->until_ms - now);
			snprintf(part, sizeof(part), "next attempt %d in %s",
			    sl->next_attempt, el);
		}
		fprintf(b->o->out, "%s%s%s%s  %s", shown++ ? "  |  " : "",
		    b->o->color ? "\033[1m" : "", sl->st->id,
		    b->o->color ? "\033[0m" : "", part);
	}
	if (b->paused_until > now) {
		clock_fmt_duration(el, sizeof(el), b->paused_until - now);
		fprintf(b->o->out, "%sbreaker cooldown: %s",
		    shown++ ? "  |  " : "", el);
	}
	fflush(b->o->out);
	b->line_shown = true;
}
