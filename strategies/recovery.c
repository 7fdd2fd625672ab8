/* recovery.c - see recovery.h (docs/reliability.md#controller-deaths). */
#include <stdio.h>
#include <string.h>

#include "strategies/recovery.h"

/* "pid N", or "pid unknown" for a row that never recorded it. */
static void
pid_text(char *buf, size_t len, int64_t pid)
{
	if (pid > 0)
		snprintf(buf, len, "pid %lld", (long long)pid);
	else
		snprintf(buf, len, "pid unknown");
}

void
recovery_close(struct recovery_out *out, const struct recovery_in *in)
{
	char now[32], before[32];
	const char *why = in->stop_why != NULL ? in->stop_why : "";

	memset(out, 0, sizeof(*out));
	pid_text(now, sizeof(now), in->controller_pid);
	pid_text(before, sizeof(before), in->earlier_pid);
	if (in->earlier_deaths > 0) {
		/* the same number cut short again: count it, so that an
		 * agent that kills its controller cannot loop */
		out->outcome = OUTCOME_CRASH;
		out->code = ERRC_CRASH;
		snprintf(out->message, sizeof(out->message),
		    "the controller died during attempt %d for the second "
		    "time, %s then %s%s%.200s: counted as a crash",
		    in->attempt, before, now,
		    in->stopped ? ", which stopped on an error: " : "",
		    in->stopped ? why : "");
	} else if (in->stopped) {
		out->outcome = OUTCOME_INTERRUPTED;
		out->code = ERRC_INTERRUPTED;
		snprintf(out->message, sizeof(out->message),
		    "the controller (%s) stopped on an error during this "
		    "attempt and could not record its end: %.300s; not "
		    "counted, the attempt runs again",
		    now, why);
	} else {
		out->outcome = OUTCOME_INTERRUPTED;
		out->code = ERRC_INTERRUPTED;
		snprintf(out->message, sizeof(out->message),
		    "the controller (%s) died during this attempt; not "
		    "counted, the attempt runs again",
		    now);
	}
}
